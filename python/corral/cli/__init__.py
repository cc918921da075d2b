"""`corral`: run commands in the sandbox from a terminal.

Exit status of `run`: the command's own; 124 when --timeout killed it; 125 when corral itself
failed (invalid configuration or usage, or the sandbox could not be set up), with a one-line
`corral: ...` reason on stderr; 127 when the command is not found in the sandbox.
"""

from __future__ import annotations

import os
import sys

from corral.errors import CorralError

USAGE = """\
usage: corral run    [OPTIONS] [--timeout SECONDS] -- COMMAND [ARG...]
       corral wrap   [OPTIONS] -- COMMAND [ARG...]
       corral status [OPTIONS] [--json]
       corral explain [OPTIONS] [--approval PRESET] [--json] -- 'COMMAND STRING'
       corral changes [ID [--diff]]     held change sets, or what one holds (and diffs)
       corral apply ID [--overwrite] [PATH...]
                                        apply a held change set (PATHs: also refused ones)
       corral discard ID [PATH...]      drop a held change set, or PATHs from it
       corral undo [ID]                 undo this workspace's newest applied change set
       corral undo --list               what undo can take back here, newest first
       corral --version

Runs COMMAND confined by the sandbox: the workspace (--cwd, default: the current
directory) writable, the rest of the system read-only, credentials hidden, no network.

options:
  --mode MODE          read-only | workspace-write | workspace-write-network | off
  --cwd DIR            the workspace root (default: the current directory)
  --allow-write PATH   also make PATH writable (repeatable)
  --deny-read PATH     also hide PATH (repeatable)
  --network            allow network access
  --no-network         refuse network access
  --allow-host HOST    with network off, let commands reach HOST through corral's proxy
                       (repeatable; pypi.org, *.example.com, host:port, @python...)
  --backend NAME       auto | required | a backend name (bwrap)
  --writes WRITES      apply | review | direct: what happens to writes to the workspace
                       (default apply: checked when the command ends, then applied)
  --config FILE        read settings from FILE instead of {config}
  --timeout SECONDS    kill COMMAND and everything it started after SECONDS (exit 124;
                       default: sandbox.limits.timeout, 0 = none)
  --approval PRESET    (explain) ask | read-only | auto | full
  --json               (status, explain) print one JSON object

environment: CORRAL_MODE sets the mode (below flags, above the config file).
exit status (run): COMMAND's own; 124 timeout; 125 corral or sandbox set-up failed;
127 COMMAND not found in the sandbox.
"""

USAGE_FAILED = 125


def _usage() -> str:
    from corral.cli.layers import default_config_path

    return USAGE.format(config=default_config_path())


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(_usage())
        return 0 if args else USAGE_FAILED
    if args[0] == "--version":
        from corral import __version__

        print(f"corral {__version__}")
        return 0
    command, rest = args[0], args[1:]
    from corral.imports import drop_writable

    drop_writable([os.getcwd()], early=True)  # before any lazy import; the roots once known
    try:
        status = _dispatch(command, rest)
        sys.stdout.flush()  # (here: a reader gone is then a BrokenPipeError caught below)
        return status
    except BrokenPipeError:
        # (`corral wrap ... | head`: the reader is gone; said by the status, as other CLIs do,
        # not by a traceback, r77d CLIPIPE; stdout goes nowhere so the exit's flush is quiet)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
        return 128 + 13  # SIGPIPE


def _dispatch(command: str, rest: list[str]) -> int:
    try:
        if command in ("run", "wrap"):
            from corral.cli.run import run, wrap

            return (run if command == "run" else wrap)(rest)
        if command == "status":
            from corral.cli.status import status

            return status(rest)
        if command in ("changes", "apply", "discard", "undo"):
            from corral.cli import changes

            if "-h" in rest or "--help" in rest:  # (was "no held change set '--help'", r47b)
                sys.stdout.write(_usage())
                return 0
            return int(getattr(changes, command)(rest))
        if command == "explain":
            from corral.cli.explain import explain

            return explain(rest)
        sys.stderr.write(f"corral: unknown command {command!r}; see corral --help\n")
        return USAGE_FAILED
    except CorralError as e:
        sys.stderr.write(f"corral: {e}\n")
        return USAGE_FAILED
    except KeyboardInterrupt:
        return 130


def warn(message: str) -> None:
    sys.stderr.write(f"corral: warning: {message}\n")


def wants_help(opts: dict[str, object]) -> bool:
    if opts.get("help"):
        sys.stdout.write(_usage())
        return True
    return False
