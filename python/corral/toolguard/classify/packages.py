"""Package managers, build tools, compilers, test runners and formatters.

They write (build output, caches, formatted files) and run the project's own code (a Makefile,
`setup.py`, `conftest.py`, npm scripts): "writes" at least, which the sandbox confines to the
workspace. Installing or fetching dependencies reaches the network.

Only a few exact questions read, and only for tools that load no project file or configuration
that can name a program or an address: `apt-cache policy NAME`, `dpkg -L NAME`. Any option
makes them at least "writes". pip is never read-only: any pip command may ask its index for a
newer pip (an index a workspace venv's pip.conf may name), `pip --python=./x list` runs ./x and
`pip list --log F` writes F. Tools that read the project's configuration
or code even to answer a question (mvn reads `.mvn/jvm.config`, gradle evaluates build.gradle,
bazel runs `tools/bazel`, yarn runs `yarnPath`, npm reads `.npmrc`, poetry and pdm run the
project's interpreter, cargo, rustc and go switch to the toolchain the project names, tox and
nox import `toxfile.py`/`noxfile.py`) are never read-only, not even for `--version`.
"""

from __future__ import annotations

from corral.toolguard.classify.result import DYNAMIC, NETWORK, WRITES
from corral.toolguard.classify.simple_command import names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.toolguard.classify.simple_command import Command, Word

_VERSION = names("--version -V -v version --help -h help")


def _vectors(text: str) -> frozenset[str]:
    """Argument vectors written as one comma-separated string."""
    return frozenset(" ".join(v.split()) for v in text.split(","))


# manager -> (exact argument vectors that only read, subcommands that reach the network; None:
# all may). A vector ending in ` *` takes one or more operands that are not options
# (`pip show NAME...`). Managers with no read vector read project files that can run code.
MANAGERS: dict[str, tuple[frozenset[str], frozenset[str] | None]] = {
    "pip": (
        # none: pip checks the index for a newer pip (weekly, any command, an index that a
        # workspace venv's pip.conf may name)
        frozenset(),
        None,
    ),
    "npm": (
        # none: every command loads the project's .npmrc, runs the update notifier (a registry
        # request) and writes a debug log where `logs-dir` says
        frozenset(),
        None,
    ),
    "pnpm": (
        frozenset(),
        names("install i add update up dlx exec publish outdated audit create fetch"),
    ),
    "yarn": (frozenset(), None),
    "cargo": (
        frozenset(),
        names(
            """build b run r test t check c bench fetch update install add publish search doc d
            clippy generate-lockfile vendor login owner yank tree new init metadata"""
        ),
    ),
    "go": (frozenset(), None),  # go.mod's toolchain line downloads and runs another go
    "uv": (frozenset(), None),
    "gem": (
        frozenset({"list", "list *", "which *", "contents *", "environment", "env", "help"}),
        None,
    ),
    "bundle": (frozenset(), None),
    "composer": (frozenset(), None),
    "poetry": (frozenset(), None),
    "conda": (frozenset({"list", "list *", "info", "env list"}), None),
    "mamba": (frozenset({"list", "list *", "info", "env list"}), None),
    "pdm": (frozenset(), None),
    "hatch": (frozenset(), None),
    "apt": (
        frozenset({"list", "list *", "show *", "policy", "policy *", "depends *", "rdepends *"}),
        None,
    ),
    "apt-get": (frozenset({"check"}), None),
    "apt-cache": (
        _vectors(
            """search *, show *, policy, policy *, depends *, rdepends *, pkgnames, pkgnames *,
            showpkg *, stats, madison *, dump"""
        ),
        frozenset(),
    ),
    "dpkg": (
        _vectors(
            """-l, -l *, --list, --list *, -L *, --listfiles *, -s *, --status *, -S *,
            --search *, --print-architecture, -p *"""
        ),
        frozenset(),
    ),
    "dnf": (frozenset(), None),  # every query may refresh the repository metadata
    "yum": (frozenset(), None),
    "pacman": (frozenset({"-Q", "-Q *", "-Qi *", "-Ql *", "-Qs *", "-Qq", "-Qe"}), None),
    "apk": (frozenset({"info", "info *", "list", "list *", "search *", "policy *"}), None),
    "zypper": (frozenset(), None),
    "brew": (
        frozenset({"list", "ls", "list *", "--prefix", "--cellar", "config", "deps *", "leaves"}),
        None,
    ),
    "snap": (frozenset({"list", "list *", "version"}), None),
    "flatpak": (frozenset({"list", "info *"}), None),
    "nix": (frozenset(), None),
    "nix-env": (frozenset({"-q", "--query"}), None),
    "mvn": (frozenset(), None),
    "gradle": (frozenset(), None),
    "bazel": (frozenset(), None),
    "tox": (frozenset(), None),
    "nox": (frozenset(), None),
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
# Builders whose `--version` reads no project file: pytest imports conftest.py first, latexmk
# runs latexmkrc, dotnet follows global.json, rustc and rustfmt (rustup) rust-toolchain.toml.
_PLAIN_VERSION = names(
    """
    make gmake cmake ctest ninja gcc g++ cc c++ clang clang++ zig ld as ar strip objcopy
    autoconf automake autoreconf libtool nvcc clang-format gofmt ruff stylua biome hugo
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


def _exact_read(reads: frozenset[str], args: list[Word]) -> bool:
    """Is `args` one of the read vectors, word for word (operands for a trailing `*`)?"""
    if not all(w.static for w in args):
        return False
    texts = [w.text for w in args]
    if " ".join(texts) in reads:
        return True
    for n in range(1, len(texts)):
        head, operands = texts[:n], texts[n:]
        if " ".join(head) + " *" in reads and not any(t.startswith("-") for t in operands):
            return True
    return False


def manager(cmd: Command) -> None:
    name = ALIASES.get(cmd.name, cmd.name)
    reads, network = MANAGERS[name]
    if name in _APT and _apt_configured(cmd):
        return
    args = cmd.args
    if reads and len(args) == 1 and args[0].text in _VERSION:
        return  # `pip --version`; a manager with no read vector may load project code first
    if _exact_read(reads, args):
        return
    words = [w for w in args if w.static]
    first = next((w.text for w in words if not w.text.startswith("-")), "")
    if name in ("dpkg", "pacman"):
        first = words[0].text if words else ""
    shown = f"{cmd.name} {first}".strip()
    options = any(w.text.startswith("-") or not w.static for w in args)
    if network is None or first in network or (name == "pip" and options):
        # pip's options: --outdated (-o, --outd, -lo), --index-url... reach the network,
        # --python runs another interpreter, --log writes
        cmd.found.flag(NETWORK, f"{shown} may reach its registry or download packages")
    elif reads:
        cmd.found.flag(WRITES, f"{shown}: only exact option-free questions are known to read")
    else:
        cmd.found.flag(WRITES, f"{shown} reads project files that can run code, and writes")


def builder(cmd: Command) -> None:
    if cmd.name in _PLAIN_VERSION and len(cmd.args) == 1 and cmd.args[0].text in _VERSION:
        return
    cmd.found.flag(WRITES, f"{cmd.name} writes files and runs project code")


RULES: dict[str, Callable[[Command], None]] = {name: manager for name in MANAGERS}
RULES.update({name: manager for name in ALIASES})
RULES.update({name: builder for name in BUILDERS})
