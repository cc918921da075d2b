"""Shells, language interpreters, editors and pagers: they run code we do not see.

Always dynamic, except for `--version`-style questions. A shell's inline script (`bash -c`)
and a here-document fed to a shell are parsed as well, so `bash -c 'sudo x'` is privileged.
"""

from __future__ import annotations

from corral.toolguard.classify.options import parse
from corral.toolguard.classify.result import DYNAMIC
from corral.toolguard.classify.simple_command import Word, names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.toolguard.classify.simple_command import Command

SHELLS = names("sh bash zsh dash ksh mksh ash yash posh fish csh tcsh rbash")
# Interpreter -> the options that take inline code.
INTERPRETERS: dict[str, tuple[str, ...]] = {
    "python": ("-c",), "pypy": ("-c",), "perl": ("-e", "-E"), "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"), "nodejs": ("-e", "--eval", "-p", "--print"),
    "deno": ("eval",), "bun": ("-e", "--eval"), "php": ("-r",), "lua": ("-e",),
    "luajit": ("-e",), "Rscript": ("-e",), "R": ("-e",), "julia": ("-e",), "tclsh": (),
    "wish": (), "osascript": ("-e",), "pwsh": ("-c", "-Command"),
    "powershell": ("-c", "-Command"), "guile": ("-c",), "racket": ("-e",), "java": (),
    "jshell": (), "groovy": ("-e",), "scala": ("-e",), "kotlin": (), "elixir": ("-e",),
    "erl": ("-eval",), "swift": ("-e",), "ghci": ("-e",), "runghc": (), "gdb": ("-ex",),
    "npx": (), "bunx": (), "pnpx": (), "uvx": (), "pipx": (),
}  # fmt: skip
VERSION_ONLY = names("--version -V -version --help -h")
# `-v` alone prints the version for these (for python it means verbose, then a REPL).
_DASH_V_VERSION = frozenset({"node", "nodejs", "perl", "php"})
# Programs that can run commands of their own (`!cmd` in an editor or pager, a terminal
# multiplexer) or run programs given to them.
LAUNCHERS = names(
    """
    vi vim nvim view vimdiff ex ed red emacs emacsclient nano pico micro joe more most pg man
    info screen tmux script expect strace ltrace valgrind parallel at batch systemd-run nsenter
    unshare chroot firejail bwrap flatpak-spawn xdg-open open sg newgrp eval source . trap
    alias enable let fc coproc compgen complete bind mapfile readarray getopts
    """
)


def shell(cmd: Command) -> None:
    args = cmd.args
    if len(args) == 1 and args[0].text in VERSION_ONLY:
        return
    parsed = parse(args, "oO", ("rcfile", "init-file"), stop_at_positional=True)
    inline = parsed.has(short="c")
    if inline and parsed.rest:
        cmd.found.flag(DYNAMIC, f"{cmd.name} -c runs inline code")
        cmd.script(parsed.rest[0], f"{cmd.name} -c")
    elif parsed.rest and not parsed.has(short="s"):
        cmd.found.flag(DYNAMIC, f"{cmd.name} runs the script {parsed.rest[0].raw}")
    else:
        cmd.found.flag(DYNAMIC, f"{cmd.name} reads commands from its input")
        if cmd.stdin is not None:
            cmd.found.script(cmd.stdin)


def interpreter(cmd: Command) -> None:
    args = cmd.args
    family = _family(cmd.name)
    if len(args) == 1 and (
        args[0].text in VERSION_ONLY or (args[0].text == "-v" and family in _DASH_V_VERSION)
    ):
        return
    inline = INTERPRETERS.get(family, ())
    for word in args:
        option = next((o for o in inline if word.text == o or _attached(word.text, o)), None)
        if option is not None:
            cmd.found.flag(DYNAMIC, f"{cmd.name} {option} runs inline code")
            return
    if any(not w.text.startswith("-") for w in args):
        cmd.found.flag(DYNAMIC, f"{cmd.name} runs a program (a script or module)")
    else:
        cmd.found.flag(DYNAMIC, f"{cmd.name} reads a program from its input")


def launcher(cmd: Command) -> None:
    if cmd.name in ("eval", "trap"):
        _eval_or_trap(cmd)
    elif cmd.name in ("source", "."):
        target = cmd.args[0].raw if cmd.args else "a file"
        cmd.found.flag(DYNAMIC, f"{cmd.name} runs the script {target} in this shell")
    elif cmd.name == "alias" and not any("=" in w.raw for w in cmd.args):
        return  # listing aliases
    else:
        cmd.found.flag(DYNAMIC, f"{cmd.name} can run commands of its own")


def _eval_or_trap(cmd: Command) -> None:
    args = cmd.args
    if cmd.name == "trap":
        if not args or args[0].text in ("-l", "-p"):
            return
        cmd.found.flag(DYNAMIC, "trap runs code when a signal arrives")
        cmd.script(args[0], "trap")
        return
    cmd.found.flag(DYNAMIC, "eval runs its arguments as shell code")
    if args:
        cmd.script(Word(" ".join(w.text for w in args), " ".join(w.raw for w in args)), "eval")


def _attached(text: str, option: str) -> bool:
    """`-cprint(1)`: a short option with its value attached."""
    return len(option) == 2 and option.startswith("-") and text.startswith(option)


def _family(name: str) -> str:
    """`python3.12` -> `python`, `pypy3` -> `pypy`, `perl5.36` -> `perl`."""
    return name.rstrip("0123456789.") or name


def versioned(name: str) -> Callable[[Command], None] | None:
    """The rule for a versioned interpreter name such as `python3.11`, if it is one."""
    family = _family(name)
    if family != name and family in INTERPRETERS:
        return interpreter
    if family != name and family in SHELLS:
        return shell
    return None


RULES: dict[str, Callable[[Command], None]] = {name: shell for name in SHELLS}
RULES.update({name: interpreter for name in INTERPRETERS})
RULES.update({name: launcher for name in LAUNCHERS})
