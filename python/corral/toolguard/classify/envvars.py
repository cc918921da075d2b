"""Environment variables that may change which code a command runs.

`PAGER=sh git log`, `LD_PRELOAD=x.so ls`, `HOME=/tmp/evil git log` (a `.gitconfig` with
`core.pager`) or `GREP=sh zgrep` turn a read-only tool into a launcher. Setting any name not
known to be harmless, as a prefix, an export or a plain assignment, makes the command dynamic.
"""

from __future__ import annotations

from corral.toolguard.classify.result import DYNAMIC

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from corral.toolguard.classify.result import Findings

# Names known to change nothing a read-only tool runs: locale, time zone, terminal size and
# colour switches. Every other name set for a command (`GREP=` makes zgrep run a program,
# `PYENV_HOOK_PATH=` makes a pyenv shim source code, `DOCKER_HOST=` picks the daemon,
# `TMPDIR=` where sort writes) is dynamic: a denylist of risky names can never be complete,
# so the list names what is harmless and everything else fails closed.
HARMLESS_NAMES = frozenset(
    {
        "LANG", "LANGUAGE", "TZ", "COLUMNS", "LINES", "TERM", "NO_COLOR", "CLICOLOR",
        "CLICOLOR_FORCE", "FORCE_COLOR", "GREP_COLOR", "GREP_COLORS", "LS_COLORS",
        "TIME_STYLE", "QUOTING_STYLE",
        "LESSSECURE",  # only takes features away from less (not LESSSECURE_ALLOW)
    }
)  # fmt: skip
HARMLESS_PREFIXES = ("LC_",)
# Lowercase names that programs read from the environment all the same.
_LOWERCASE_ENVIRONMENT = ("npm_config_", "yarn_", "http_proxy", "https_proxy", "ftp_proxy",
                          "all_proxy", "no_proxy")  # fmt: skip


def is_risky(name: str, exported: bool = True) -> bool:
    """Does setting (or unsetting) `name` possibly change what a command runs?

    `exported`: the value reaches programs' environment (`NAME=v cmd`, `export`, `env NAME=v`,
    `declare -x`). A shell-only assignment (`x=1`, `for f in`, `read line`) is let pass for a
    name with no uppercase letter outside the few lowercase names programs read
    (`npm_config_*`, `*_proxy`): by convention the environment's names are uppercase, and a
    lowercase one exported in the same command (`export x`, `declare -x x`) is caught there.
    Everything not known harmless is risky: the classifier fails closed."""
    if name in HARMLESS_NAMES or name.startswith(HARMLESS_PREFIXES):
        return False
    if exported:
        return True
    return (
        not name
        or name != name.lower()
        or name.lower().startswith(_LOWERCASE_ENVIRONMENT)
        or name.lower().endswith("_proxy")
    )


def split_assignment(text: str) -> tuple[str, str] | None:
    """(`NAME`, value) for `NAME=value` or `NAME+=value`; None for anything else."""
    name, eq, value = text.partition("=")
    if not eq:
        return None
    name = name.removesuffix("+")
    if not name or name[0].isdigit() or not all(c.isalnum() or c == "_" for c in name):
        return None
    return name, value


def assignments_env(
    texts: Iterable[str], found: Findings, how: str = "", exported: bool = True
) -> dict[str, str]:
    """{NAME: value} for NAME=value words; a name that may change what runs is dynamic.
    `exported`: the words are a command's environment, not shell-only assignments."""
    env: dict[str, str] = {}
    for text in texts:
        pair = split_assignment(text)
        if pair is None:
            continue
        name, value = pair
        env[name] = value
        if is_risky(name, exported):
            found.flag(DYNAMIC, f"setting {name} {how or 'in the shell'} may change what runs")
    return env
