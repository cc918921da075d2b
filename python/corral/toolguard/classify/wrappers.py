"""Commands that run another command: the inner one is classified as well, so `sudo` is
found after `env`, `nice`, `timeout`, `xargs`... and `timeout 5 rm x` writes.
"""

from __future__ import annotations

from corral.toolguard.classify.envvars import assignments_env, is_risky, split_assignment
from corral.toolguard.classify.options import parse
from corral.toolguard.classify.result import DYNAMIC, PRIVILEGED, REMOVERS, WRITES
from corral.toolguard.classify.simple_command import Word, names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from corral.toolguard.classify.options import Parsed
    from corral.toolguard.classify.result import Risk
    from corral.toolguard.classify.simple_command import Command


def wrapper(
    short_flags: str = "",
    short_values: str = "",
    long_flags: Sequence[str] = (),
    long_values: Sequence[str] = (),
    skip: int = 0,
    reason: str = "",
    kind: Risk = DYNAMIC,
    targets: str = "",
) -> Callable[[Command], None]:
    """A rule for `NAME [options] [skip positionals] COMMAND...`; `reason` flags `kind`.

    Options are an allowlist: one the rule does not know may change directory, read a
    configuration or run something, so it is dynamic. `targets` are short options that act on
    another running process (`taskset -p`, `ionice -p`): that changes it."""

    def rule(cmd: Command) -> None:
        parsed = parse(cmd.args, short_values, long_values, stop_at_positional=True)
        if reason:
            cmd.found.flag(kind, reason.format(name=cmd.name))
        if parsed.opaque:
            cmd.found.flag(DYNAMIC, f"{cmd.name}: {parsed.opaque[0].raw} may expand to an option")
        unknown_options(cmd, parsed, short_flags + short_values, (*long_flags, *long_values))
        if any(parsed.has(short=letter) for letter in targets):
            cmd.found.flag(WRITES, f"{cmd.name} changes a running process")
        cmd.inner(parsed.rest[skip:])

    return rule


def unknown_options(
    cmd: Command, parsed: Parsed, shorts: str, longs: Sequence[str], what: str = "options"
) -> bool:
    """Flag every option outside the allowlist (`--help` and `--version` are always known);
    True when there was one."""
    for opt in parsed.opts:
        if opt.long:
            known = bool(opt.name) and any(
                name.startswith(opt.name) for name in (*longs, "help", "version")
            )
        else:
            known = opt.name in shorts
        if not known:
            shown = f"{'--' if opt.long else '-'}{opt.name}"
            cmd.found.flag(DYNAMIC, f"{cmd.name} {shown}: not one of the {what} corral knows")
            return True
    return False


_ENV_LONG_FLAGS = (
    "ignore-environment", "null", "debug", "block-signal", "default-signal", "ignore-signal",
    "list-signal-handling",
)  # fmt: skip


def env(cmd: Command) -> None:
    parsed = parse(cmd.args, "uCSP", ("unset", "chdir", "split-string"), stop_at_positional=True)
    if parsed.opaque:
        cmd.found.flag(DYNAMIC, f"env: {parsed.opaque[0].raw} may expand to an option")
    unknown_options(cmd, parsed, "i0vuCSP", (*_ENV_LONG_FLAGS, "unset", "chdir", "split-string"))
    if parsed.has("chdir", "C"):
        # git and other tools obey the configuration of the directory they start in
        cmd.found.flag(DYNAMIC, "env -C runs the command in another directory")
    if parsed.has(short="P"):
        cmd.found.flag(DYNAMIC, "env -P looks the program up in another path")  # BSD env
    for name in parsed.values("unset", "u"):
        if is_risky(name):
            cmd.found.flag(DYNAMIC, f"env -u {name} changes what runs")
    for text in parsed.values("split-string", "S"):
        cmd.found.flag(DYNAMIC, "env -S splits a string into a command")
        cmd.script(Word(text), "env -S")
    rest = parsed.rest
    if rest and rest[0].text == "-" and rest[0].static:
        rest = rest[1:]  # `env - CMD` is `env -i CMD`
    assignments: list[str] = []
    while rest and rest[0].static and split_assignment(rest[0].text) is not None:
        assignments.append(rest[0].text)
        rest = rest[1:]
    if rest and not rest[0].static and "=" in rest[0].raw:
        cmd.found.flag(DYNAMIC, f"env: {rest[0].raw} may set a variable that changes what runs")
    env_vars = assignments_env(assignments, cmd.found, "for the command")
    cmd.inner(rest, env_vars)


_XARGS_VALUES = (
    "arg-file",
    "delimiter",
    "max-lines",
    "max-args",
    "max-procs",
    "max-chars",
    "process-slot-var",
    "replace",
    "eof",
)


def xargs(cmd: Command) -> None:
    parsed = parse(cmd.args, "adEILnPs", _XARGS_VALUES, "eil", stop_at_positional=True)
    cmd.found.flag(DYNAMIC, "xargs runs a command with arguments read from its input")
    if parsed.rest and parsed.rest[0].text in REMOVERS:  # (r90a FINDEXECRM)
        cmd.found.destroy(f"xargs {parsed.rest[0].text} removes every file its input names")
    cmd.inner(parsed.rest)


def watch(cmd: Command) -> None:
    parsed = parse(cmd.args, "dnq", ("differences", "interval", "equexit"), stop_at_positional=True)
    cmd.found.flag(DYNAMIC, "watch runs its command repeatedly through a shell")
    if parsed.has("exec", "x"):
        cmd.inner(parsed.rest)
    elif parsed.rest and all(w.static for w in parsed.rest):
        cmd.found.script(" ".join(w.text for w in parsed.rest))


def privileged(cmd: Command) -> None:
    """sudo, su, doas...: always refused by the callers; the inner command is still read so
    that `commands` tells the whole story."""
    cmd.found.flag(PRIVILEGED, f"{cmd.name} runs a command with elevated privileges")
    if cmd.name in ("sudo", "doas", "run0", "pkexec"):
        values = {"sudo": "CDghpRrTtUu", "doas": "Cu", "run0": "uDg", "pkexec": ""}[cmd.name]
        parsed = parse(
            cmd.args, values, ("user", "group", "chdir", "prompt"), stop_at_positional=True
        )
        rest = parsed.rest
        while rest and rest[0].static and split_assignment(rest[0].text) is not None:
            rest = rest[1:]
        cmd.inner(rest)


def kill(cmd: Command) -> None:
    if any(w.text in ("-l", "-L", "--list", "--table") for w in cmd.args[:1]):
        return
    cmd.found.flag(WRITES, f"{cmd.name} sends signals to processes")


_NOHUP = wrapper()


def nohup(cmd: Command) -> None:
    cmd.found.write("nohup.out", "nohup writes nohup.out (or ~/nohup.out) when output is a tty")
    _NOHUP(cmd)


PRIVILEGED_NAMES = names("sudo sudoedit su doas pkexec run0 runuser ksu pfexec dzdo calife")

RULES: dict[str, Callable[[Command], None]] = {name: privileged for name in PRIVILEGED_NAMES}
RULES.update(
    {
        "env": env,
        "xargs": xargs,
        "watch": watch,
        "nice": wrapper("0123456789", "n", (), ("adjustment",)),
        "nohup": nohup,
        "setsid": wrapper("cfw", "", ("ctty", "fork", "wait")),
        "timeout": wrapper(
            "v",
            "sk",
            ("preserve-status", "foreground", "verbose"),
            ("signal", "kill-after"),
            skip=1,
        ),
        "stdbuf": wrapper("", "ioe", (), ("input", "output", "error")),
        "ionice": wrapper(
            "tpPu", "cn", ("ignore", "pid", "pgid", "uid"), ("class", "classdata"), targets="pPu"
        ),
        "chrt": wrapper(
            "abdefimoprRv",
            "TPD",
            (
                "all-tasks",
                "batch",
                "deadline",
                "ext",
                "fifo",
                "idle",
                "max",
                "other",
                "pid",
                "rr",
                "reset-on-fork",
                "verbose",
            ),
            ("sched-runtime", "sched-period", "sched-deadline"),
            skip=1,
            targets="p",
        ),
        "taskset": wrapper("acp", "", ("all-tasks", "cpu-list", "pid"), skip=1, targets="p"),
        "time": lambda cmd: _time(cmd),
        "busybox": wrapper("", "", ("list", "list-full")),
        "command": lambda cmd: _command(cmd),
        "builtin": wrapper(reason="builtin runs a shell builtin named at run time"),
        "exec": lambda cmd: _exec(cmd),
        "kill": kill,
        "pkill": kill,
        "killall": kill,
    }
)


def _time(cmd: Command) -> None:
    """/usr/bin/time (the keyword `time` is not parsed by bashlex, hence dynamic)."""
    parsed = parse(cmd.args, "fo", ("format", "output"), stop_at_positional=True)
    unknown_options(cmd, parsed, "fopqva", ("format", "output", "portability", "quiet",
                                             "verbose", "append"))  # fmt: skip
    for path in parsed.values("output", "o"):
        cmd.found.write(path, f"time -o writes {path}")
    cmd.inner(parsed.rest)


def _command(cmd: Command) -> None:
    parsed = parse(cmd.args, stop_at_positional=True)
    if parsed.has(short="v") or parsed.has(short="V"):
        return  # a lookup: prints where a name comes from
    cmd.found.flag(DYNAMIC, "command runs a command bypassing shell functions")
    cmd.inner(parsed.rest)


def _exec(cmd: Command) -> None:
    parsed = parse(cmd.args, "a", stop_at_positional=True)
    if parsed.rest:
        cmd.found.flag(DYNAMIC, "exec replaces the shell with another program")
        cmd.inner(parsed.rest)
