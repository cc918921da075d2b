"""Shell builtins that set variables: harmless, unless they set a variable that changes what
runs (`export PATH=...`) or name an array element, whose subscript bash evaluates as
arithmetic, running any `$(...)` in it (`read 'a[$(id)]'`, `declare "a[$x]"`)."""

from __future__ import annotations

from corral.classify.envvars import assignments_env, is_risky
from corral.classify.result import DYNAMIC

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.classify.command import Command

# builtin -> short options that take a value
_NAMING = {
    "export": "", "declare": "", "typeset": "", "local": "", "readonly": "", "unset": "",
    "read": "adinNptu",
}  # fmt: skip


def naming(cmd: Command) -> None:
    values = _NAMING[cmd.name]
    targets: list[str] = []  # NAME or NAME=value
    skip = False
    for word in cmd.args:
        if skip:
            skip = False
            continue
        if not word.static:
            cmd.found.flag(DYNAMIC, f"{cmd.name}: {word.raw} is built at run time")
            return
        text = word.text
        if text.startswith(("-", "+")) and len(text) > 1:
            if cmd.name != "read" and ("i" in text or "n" in text):
                # integer variables evaluate every later assignment as arithmetic, and a
                # nameref's subscript is evaluated when used: either can run `a[$(id)]`
                cmd.found.flag(DYNAMIC, f"{cmd.name} {text} makes values evaluate as code")
                return
            skip = text[-1] in values
            continue
        if "[" in text.partition("=")[0]:
            cmd.found.flag(DYNAMIC, f"{cmd.name} {text}: the subscript is evaluated as code")
            return
        targets.append(text)
    if cmd.name == "read":
        for name in targets:
            if is_risky(name):
                cmd.found.flag(DYNAMIC, f"read {name} changes what runs")
    else:
        assignments_env(targets, cmd.found)


def hash_(cmd: Command) -> None:
    if any(w.text.startswith("-") and "p" in w.text for w in cmd.args):
        cmd.found.flag(DYNAMIC, "hash -p changes which program a name runs")


RULES: dict[str, Callable[[Command], None]] = {name: naming for name in _NAMING}
RULES["hash"] = hash_
