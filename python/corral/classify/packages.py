"""Package managers, build tools, compilers, test runners and formatters.

They write (build output, caches, formatted files) and run the project's own code (a Makefile,
`setup.py`, `conftest.py`, npm scripts): "writes" at least, which the sandbox confines to the
workspace. Installing or fetching dependencies reaches the network. A few questions (`pip
list`, `npm ls`, `go version`) only read.
"""

from __future__ import annotations

from corral.classify.command import names
from corral.classify.result import DYNAMIC, NETWORK, WRITES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.classify.command import Command

_VERSION = names("--version -V -v version --help -h help")
# manager -> (subcommands that only read, subcommands that reach the network; None: all do)
MANAGERS: dict[str, tuple[frozenset[str], frozenset[str] | None]] = {
    "pip": (
        names("list show freeze check debug inspect help"),
        names("install download wheel index search"),
    ),
    "npm": (
        names("ls list ll la root prefix bin help"),
        names(
            """install i ci add update up upgrade publish view info show search outdated audit
            exec x create init login whoami dist-tag fund doctor install-test it"""
        ),
    ),
    "pnpm": (
        names("ls list root bin help"),
        names("install i add update up dlx exec publish outdated audit create fetch"),
    ),
    "yarn": (
        names("list info why bin help"),
        names("install add upgrade up dlx publish outdated audit create") | {""},
    ),
    "cargo": (
        names("help locate-project metadata pkgid read-manifest verify-project"),
        names(
            """build b run r test t check c bench fetch update install add publish search doc d
            clippy generate-lockfile vendor login owner yank tree new init"""
        ),
    ),
    "go": (
        names("version help"),
        names("build run test get install mod generate list work tool vet doc"),
    ),
    "uv": (names("help version"), None),
    "gem": (names("list help which contents environment env"), None),
    "bundle": (names("list help show info"), None),
    "composer": (names("show help list validate"), None),
    "poetry": (names("show help list check env"), None),
    "conda": (names("list info help env"), None),
    "mamba": (names("list info help env"), None),
    "pdm": (names("list show info help"), None),
    "hatch": (names("version help status"), None),
    "apt": (names("list show policy depends rdepends help"), None),
    "apt-get": (names("check help"), None),
    "apt-cache": (
        names("search show policy depends rdepends pkgnames showpkg stats madison dump"),
        frozenset(),
    ),
    "dpkg": (
        names("-l --list -L --listfiles -s --status -S --search --print-architecture -p"),
        frozenset(),
    ),
    "dnf": (names("list info help repolist search"), None),
    "yum": (names("list info help repolist search"), None),
    "pacman": (names("-Q -Qi -Ql -Qs -Qq -Qe"), None),
    "apk": (names("info list search policy"), None),
    "zypper": (names("search se info if list-updates lu"), None),
    "brew": (
        names("list ls info search config doctor deps leaves --prefix --cellar help"),
        None,
    ),
    "snap": (names("list info find version help"), None),
    "flatpak": (names("list info search help"), None),
    "nix": (names("--version help"), None),
    "nix-env": (names("-q --query"), None),
    "mvn": (names("--version -v"), None),
    "gradle": (names("--version -v help"), None),
    "bazel": (names("version help info"), None),
    "tox": (names("--version -l --listenvs list"), None),
    "nox": (names("--version -l --list"), None),
}
ALIASES = {
    "pip3": "pip",
    "pipenv": "poetry",
    "rye": "pdm",
    "micromamba": "mamba",
    "gradlew": "gradle",
    "mvnw": "mvn",
    "cnpm": "npm",
}
BUILDERS = names(
    """
    make gmake cmake ctest ninja meson scons waf just task pytest py.test ruff black isort
    flake8 pylint mypy pyright coverage eslint prettier tsc jest vitest mocha rustfmt gofmt
    goimports clang-format gcc g++ cc c++ clang clang++ rustc javac zig ld as ar strip objcopy
    autoconf automake autoreconf libtool pre-commit stylua luacheck selene biome nvcc swiftc
    ghc dotnet msbuild sphinx-build mkdocs hugo jekyll latexmk pdflatex
    """
)


_APT = frozenset({"apt", "apt-get", "apt-cache"})


def _apt_configured(cmd: Command) -> bool:
    """apt's -o/--option and -c/--config-file set any configuration item, and some name
    programs apt runs (`-oDir::Bin::dpkg=PROG`, `APT::Update::Pre-Invoke`): dynamic. So is an
    argument that may expand into one."""
    for word in cmd.args:
        text = word.text
        if word.may_be_option:
            cmd.found.flag(DYNAMIC, f"{cmd.name}: {word.raw} may expand to an option")
            return True
        if text.startswith("--"):
            name = text[2:].partition("=")[0]
            configures = bool(name) and any(o.startswith(name) for o in ("option", "config-file"))
        else:
            configures = text.startswith("-") and any(c in "oc" for c in text[1:])
        if configures:
            cmd.found.flag(DYNAMIC, f"{cmd.name} {text}: apt configuration can run programs")
            return True
    return False


def manager(cmd: Command) -> None:
    name = ALIASES.get(cmd.name, cmd.name)
    reads, network = MANAGERS[name]
    if name in _APT and _apt_configured(cmd):
        return
    words = [w for w in cmd.args if w.static]
    first = next((w.text for w in words if not w.text.startswith("-")), "")
    if name in ("dpkg", "pacman"):
        first = words[0].text if words else ""
    if len(cmd.args) == 1 and cmd.args[0].text in _VERSION:
        return
    outdated = name == "pip" and any(w.text in ("-o", "--outdated") for w in words)
    if first in reads and all(w.static for w in cmd.args) and not outdated:
        return
    shown = f"{cmd.name} {first}".strip()
    if network is None or first in network or outdated:
        cmd.found.flag(NETWORK, f"{shown} may download packages")
    else:
        cmd.found.flag(WRITES, f"{shown} writes files and runs project code")


def builder(cmd: Command) -> None:
    if len(cmd.args) == 1 and cmd.args[0].text in _VERSION:
        return
    cmd.found.flag(WRITES, f"{cmd.name} writes files and runs project code")


RULES: dict[str, Callable[[Command], None]] = {name: manager for name in MANAGERS}
RULES.update({name: manager for name in ALIASES})
RULES.update({name: builder for name in BUILDERS})
