"""From a command name to its rule; names nobody knows are dynamic."""

from __future__ import annotations

from corral.toolguard.classify import (
    archives,
    awk,
    builtins,
    git,
    interpreters,
    network,
    packages,
    readers,
    sed,
    wrappers,
    writers,
)
from corral.toolguard.classify.result import DYNAMIC

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.toolguard.classify.simple_command import Command

# `/usr/bin/ls` is ls; `./ls` or `/tmp/ls` is some other program.
SYSTEM_BIN_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"})

RULES: dict[str, Callable[[Command], None]] = {}
for _module in (readers, writers, archives, packages, network, interpreters, builtins, wrappers):
    RULES.update(_module.RULES)
RULES.update(
    {
        "git": git.git,
        "sed": sed.sed,
        "gsed": sed.sed,
        **{name: awk.awk for name in ("awk", "gawk", "mawk", "nawk", "busybox-awk")},
    }
)


def program_name(text: str) -> str | None:
    """The name a rule is filed under, or None for a program run by an unknown path.

    `..` is not resolved (with /bin a symlink, `/bin/../usr/bin/x` is not `/usr/bin/x`), but a
    privilege tool is one wherever it lives: `/tmp/sudo` is refused like `sudo`."""
    if "/" not in text:
        return text
    directory, _, base = text.rpartition("/")
    directory = "/" + "/".join(p for p in directory.split("/") if p and p != ".")
    if directory in SYSTEM_BIN_DIRS or base in wrappers.PRIVILEGED_NAMES:
        return base or None
    return None


def run(cmd: Command) -> None:
    found = cmd.found
    first = cmd.words[0]
    if not first.static:
        found.seen(first.raw)  # bashlex's text of `$'\x72m'` is `$x72m`: show what was written
        found.flag(DYNAMIC, f"command name is not static: {first.raw}")
        return
    name = program_name(first.text)
    if name is None:
        found.seen(first.text)
        found.flag(
            DYNAMIC,
            f"runs {first.text}, a program by path (what it does is unknown)",
            unknown_program=True,
        )
        return
    cmd.name = name
    found.seen(name)
    rule = RULES.get(name) or interpreters.versioned(name)
    if rule is None:
        found.flag(DYNAMIC, f"unknown command: {name or repr(first.text)}", unknown_program=True)
    else:
        rule(cmd)
