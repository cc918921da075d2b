"""`corral run` and `corral wrap`."""

from __future__ import annotations

import os
import sys

from corral.cli import wants_help, warn
from corral.cli.layers import resolve
from corral.cli.options import UsageError, parse
from corral.paths import which
from corral.sandbox.backends import default_registry
from corral.sandbox.protect.sweep import sweep
from corral.sandbox.runner import launch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from corral.sandbox.backends.base import Wrapped
    from corral.sandbox.policy import Policy

NOT_FOUND = 127


def _prepare(
    command: str, args: list[str], launcher_fds: bool
) -> tuple[Wrapped, list[str], dict[str, Any], Policy, Mapping[str, str]] | None:
    """(wrapped command, the command's words, options, policy, where each setting came from),
    or None when help was printed."""
    opts, words = parse(command, args)
    if wants_help(opts):
        return None
    if not words:
        raise UsageError(f"corral {command}: no command given (corral {command} -- COMMAND ...)")
    config, policy = resolve(opts)
    wrapped = default_registry().wrap(policy, words, launcher_fds=launcher_fds)
    if not policy.enabled:
        # Asked for, but still said every time: it should never go unnoticed.
        if policy.mode == "off":
            why = f'sandbox.mode is "off" ({config.origins["sandbox.mode"]})'
        else:
            why = f"sandbox.enabled is false ({config.origins['sandbox.enabled']})"
        warn(f"running UNSANDBOXED: {why}")
    elif not wrapped.sandboxed:
        warn("running UNSANDBOXED: " + "; ".join(wrapped.notes))
    elif wrapped.sandboxed:
        for note in wrapped.notes:
            warn(note)
    for note in policy.notes:
        warn(note)
    return wrapped, words, opts, policy, config.origins


def _findable(name: str, path: str, cwd: str) -> bool:
    """Whether `name` resolves on the sandbox's PATH, or as a path from `cwd` (checked on
    the host: what the sandbox sees at its start is the host's, less what it hides).

    bwrap reports a missing command as exit status 1, indistinguishable from the command's own
    failure; a shell says 127, and so does corral (for a path, not prlimit's "failed to
    execute", naming a program the user never ran, r51c PRLIMITMSG)."""
    if "/" in name:
        return os.path.lexists(os.path.join(cwd, name))
    return which(name, path) is not None


def run(args: list[str]) -> int:
    prepared = _prepare("run", args, launcher_fds=True)
    if prepared is None:
        return 0
    wrapped, words, opts, policy, origins = prepared
    if wrapped.sandboxed and not _findable(words[0], dict(wrapped.env).get("PATH", ""), policy.cwd):
        for fd in (*wrapped.fds, wrapped.status_fd, *(wrapped.bridge or ())):
            if fd is not None:
                os.close(fd)
        sys.stderr.write(f"corral: {words[0]}: command not found\n")
        _held_earlier(policy.cwd, "")  # (a held .venv's bin/python, r51c HELDNOTSHOWN)
        return NOT_FOUND
    sys.stdout.flush()
    # (--timeout 0: none, even where sandbox.limits.timeout sets one, r64c TIMEOUTZERO)
    timeout = opts.get("timeout", policy.timeout) or None
    tail = bytearray()  # the end of the command's stderr: what the sandbox refused, told after
    refused: list[str] = []  # what corral's proxy refused
    code: int | None = None
    if wrapped.stage is None:
        try:
            code, stopped = launch(wrapped, timeout, tail, refused)
            _timed_out(code, stopped, timeout)
            return code
        finally:
            _plain_terminal(tail, wrapped)
            _refused(refused)
            for repair in sweep(policy.watch, policy.links):
                warn(repair)
            _explain(tail, policy, origins, words, code, wrapped.sandboxed)
            _held_earlier(policy.cwd, "")
    from corral.changes import finish, stage

    stage.mark_owner(wrapped.stage)
    stopped = True
    unchecked = False
    try:
        code, stopped = launch(wrapped, timeout, tail, refused)
        _timed_out(code, stopped, timeout)
    finally:
        # Also when launching failed: the change set is held or removed, never left unchecked.
        _plain_terminal(tail, wrapped)
        _refused(refused)
        _explain(tail, policy, origins, words, code, wrapped.sandboxed)
        try:
            report = finish.finish(wrapped.stage, interrupted=stopped)
        except Exception as e:  # as the launcher's finish.main: said, held, never a traceback
            unchecked = True
            sys.stderr.write(
                f"corral: the changes could not be checked or applied ({e}); "
                f"they are kept in {wrapped.stage}\n"
            )
        else:
            for line in [*finish.applied(report), *finish.describe(report)]:
                sys.stderr.write(f"corral: {line}\n")
        _held_earlier(policy.cwd, os.path.basename(wrapped.stage))
    return finish.FAILED if unchecked else code


def _held_earlier(cwd: str, this: str) -> None:
    """Name what earlier runs here left held: no command sees it (see changes.earlier)."""
    from corral.changes import earlier

    for line in earlier.lines(earlier.held_in(cwd, but=this)):
        sys.stderr.write(f"corral: {line}\n")


def _timed_out(code: int, stopped: bool, timeout: float | None) -> None:
    """Say that corral killed the command (a silent exit 124 read as the command's, r46c)."""
    from corral.sandbox.runner import TIMED_OUT

    if stopped and code == TIMED_OUT and timeout:
        sys.stderr.write(
            f"corral: killed after {timeout:g} s (--timeout or sandbox.limits.timeout)\n"
        )


def _plain_terminal(tail: bytearray, wrapped: Wrapped) -> None:
    """Before corral's own lines after a run, on a terminal: attributes reset (a command's
    concealed or invisible text would hide "held ..."), on a line of their own; and a warning
    given before the run, which the command's output may have scrolled or erased, again."""
    if not sys.stderr.isatty():
        return
    # (and the colours a command's OSC 4, 10 and 11 redefined: a foreground the same as the
    # background hides all that follows, r64b; the line-drawing character set, a scroll
    # region that scrolls corral's lines away, the alternate screen, mouse reporting and a
    # hidden cursor, r66c ESCRESET)
    reset = (
        "\033[0m\033]104\007\033]110\007\033]111\007\033(B\033)B\017\033[r\033[?1049l"
        "\033[?1000l\033[?1002l\033[?1003l\033[?1006l\033[?25h"
    )
    sys.stderr.write(reset + ("\n" if tail and not tail.endswith(b"\n") else ""))
    if not wrapped.sandboxed:
        warn("this ran UNSANDBOXED (see the warning before it)")


def _refused(lines: list[str]) -> None:
    for line in lines:
        sys.stderr.write(f"corral: {line}\n")


def _explain(
    tail: bytearray,
    policy: Policy,
    origins: Mapping[str, str],
    words: list[str],
    code: int | None,
    sandboxed: bool,
) -> None:
    """What the sandbox visibly refused, in corral's words, after the command's own output:
    never leave a user to guess from `Read-only file system` or `Could not resolve host`;
    nor from nothing, when a quiet `pip install -q` failed without network."""
    import shlex

    from corral.toolguard.ops.bash_report import discarded, explain, quiet_network, report

    text = tail.decode("utf-8", errors="replace")
    found = report(text, policy, origins) if tail else []
    found += quiet_network(words, code, policy, found, text)
    if sandboxed:  # (unsandboxed, /tmp is the host's: nothing is discarded, r91c)
        found += discarded(shlex.join(words), policy)
    for line in explain(found):
        sys.stderr.write(line + "\n")


def wrap(args: list[str]) -> int:
    import json

    prepared = _prepare("wrap", args, launcher_fds=False)
    if prepared is None:
        return 0
    argv = prepared[0].self_contained()
    print(json.dumps(argv))
    return 0
