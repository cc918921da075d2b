"""Shell builtins that set, unset or declare variables, and those that change how the shell
parses and runs the words that follow (`set`, `shopt`).

A variable is harmless to set only when it cannot change what runs (`export PATH=...`,
`unset PATH`, `read -a PATH`: with PATH unset bash looks commands up in the current directory;
`export GREP=...` makes zgrep run a program), and not when it names an
array element, whose subscript bash evaluates as arithmetic, running any `$(...)` in it
(`read 'a[$(id)]'`, `declare "a[$x]"`). Every name a builtin assigns or unsets goes through the
same test as a `NAME=value cmd` prefix (`envvars.is_risky`).
"""

from __future__ import annotations

from corral.toolguard.classify.envvars import is_risky, split_assignment
from corral.toolguard.classify.result import DYNAMIC, WRITES
from corral.toolguard.classify.simple_command import names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.toolguard.classify.simple_command import Command, Word

# builtin -> short options that take a value
_NAMING = {
    "export": "", "declare": "", "typeset": "", "local": "", "readonly": "", "unset": "",
    "read": "adinNptu",
}  # fmt: skip


def naming(cmd: Command) -> None:
    values = _NAMING[cmd.name]
    targets: list[str] = []  # NAME or NAME=value
    prints = False  # `declare -p NAME` shows NAME and changes nothing
    exported = cmd.name == "export"  # `declare -x`: into the environment of later commands
    args = cmd.args
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if not word.static:
            cmd.found.flag(DYNAMIC, f"{cmd.name}: {word.raw} is built at run time")
            return
        text = word.text
        if text.startswith(("-", "+")) and len(text) > 1 and text != "--":
            if cmd.name != "read" and ("i" in text or "n" in text):
                # integer variables evaluate every later assignment as arithmetic, and a
                # nameref's subscript is evaluated when used: either can run `a[$(id)]`
                cmd.found.flag(DYNAMIC, f"{cmd.name} {text} makes values evaluate as code")
                return
            prints = prints or (cmd.name in _PRINTS and "p" in text)
            exported = exported or (cmd.name in _PRINTS and "x" in text)
            letter, value, i = _option_value(text, values, args, i)
            if letter == "a":
                targets.append(value)  # `read -a NAME`: the value is the array it fills
            continue
        targets.append(text)
    for target in targets:
        _check_target(cmd, target, prints and "=" not in target, exported)


_PRINTS = frozenset({"declare", "typeset", "local"})


def _option_value(text: str, values: str, args: list[Word], i: int) -> tuple[str, str, int]:
    """(letter, value, next index) for the first letter in `text` that takes a value (attached,
    or the next word); ("", "", i) when none does."""
    for j, letter in enumerate(text[1:], start=2):
        if letter in values:
            if j < len(text):
                return letter, text[j:], i
            if i < len(args):
                return letter, args[i].text, i + 1
            return letter, "", i
    return "", "", i


def _check_target(
    cmd: Command, target: str, shown_only: bool = False, exported: bool = False
) -> None:
    """A name a builtin assigns, declares or unsets (`NAME`, `NAME=value`, `NAME+=value`);
    `shown_only`: the builtin only prints it (its subscript is still evaluated); `exported`:
    it goes into the environment (`export`, `declare -x`)."""
    pair = split_assignment(target)
    name = pair[0] if pair is not None else target
    if "[" in target.partition("=")[0]:
        cmd.found.flag(DYNAMIC, f"{cmd.name} {target}: the subscript is evaluated as code")
    elif is_risky(name, exported) and not shown_only:
        cmd.found.flag(DYNAMIC, f"{cmd.name} {name} may change what runs")


def hash_(cmd: Command) -> None:
    if any(w.text.startswith("-") and "p" in w.text for w in cmd.args):
        cmd.found.flag(DYNAMIC, "hash -p changes which program a name runs")


# Shell options that change neither how later words are parsed nor what they run. Anything
# else (`set -k`: NAME=value anywhere becomes an environment assignment; `-o posix`, `-B`,
# `-f`, `-a`, `-T`; shopt's expand_aliases, extdebug, extglob, sourcepath...) changes what the
# rest of the script means, which the classifier read the ordinary way.
_SET_LETTERS = frozenset("euxvC")
_SET_NAMES = names("errexit nounset xtrace verbose pipefail noclobber")
_SHOPT_NAMES = names("nullglob failglob dotglob globstar nocaseglob")


def set_(cmd: Command) -> None:
    args = cmd.args
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if not word.static:
            if word.may_be_option:
                cmd.found.flag(DYNAMIC, f"set: {word.raw} may expand to an option")
            return
        text = word.text
        if text in ("-", "--") or text[:1] not in ("-", "+"):
            return  # the positional parameters follow: plain values
        for letter in text[1:]:
            if letter == "o":
                if i < len(args):  # `set -o` alone lists the options
                    name = args[i]
                    i += 1
                    if not (name.static and name.text in _SET_NAMES):
                        cmd.found.flag(DYNAMIC, f"set {text} {name.raw} changes how the shell runs")
                        return
            elif letter not in _SET_LETTERS:
                cmd.found.flag(DYNAMIC, f"set {text} changes how later commands are parsed or run")
                return


def shopt(cmd: Command) -> None:
    letters = ""
    wanted: list[str] = []
    for word in cmd.args:
        if not word.static:
            cmd.found.flag(DYNAMIC, f"shopt: {word.raw} is built at run time")
            return
        if word.text.startswith("-") and not wanted:
            letters += word.text[1:]
        else:
            wanted.append(word.text)
    if "s" not in letters and "u" not in letters:
        return  # prints or queries (-p, -q)
    allowed = _SET_NAMES if "o" in letters else _SHOPT_NAMES
    for name in wanted:
        if name not in allowed:
            cmd.found.flag(DYNAMIC, f"shopt {name} changes how later commands are parsed or run")
            return


def limits(cmd: Command) -> None:
    """`umask`, `ulimit`: read-only as queries (options only, `umask -S`, `ulimit -a`); a value
    changes how every later command creates files or dumps core."""
    for word in cmd.args:
        if not (word.static and word.text.startswith("-") and word.text != "-"):
            cmd.found.flag(WRITES, f"{cmd.name} {word.raw} changes what later commands write")
            return


RULES: dict[str, Callable[[Command], None]] = {name: naming for name in _NAMING}
RULES["umask"] = limits
RULES["ulimit"] = limits
RULES["hash"] = hash_
RULES["set"] = set_
RULES["shopt"] = shopt
