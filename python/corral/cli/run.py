"""`corral run` and `corral wrap`."""

from __future__ import annotations

import os
import sys

from corral.backends import default_registry
from corral.cli import USAGE_FAILED, wants_help, warn
from corral.cli.layers import resolve
from corral.cli.options import UsageError, parse
from corral.runner import launch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.backends.base import Wrapped


def _wrapped(command: str, args: list[str], launcher_fds: bool) -> tuple[Wrapped, float | None]:
    opts, words = parse(command, args)
    if wants_help(opts):
        raise SystemExit(0)
    if not words:
        raise UsageError(f"corral {command}: no command given (corral {command} -- COMMAND ...)")
    _, policy = resolve(opts)
    wrapped = default_registry().wrap(policy, words, launcher_fds=launcher_fds)
    if policy.enabled and not wrapped.sandboxed:
        warn("running UNSANDBOXED: " + "; ".join(wrapped.notes))
    for note in policy.notes:
        warn(note)
    return wrapped, opts.get("timeout")


def run(args: list[str]) -> int:
    wrapped, timeout = _wrapped("run", args, launcher_fds=True)
    sys.stdout.flush()
    return launch(wrapped, timeout)


def wrap(args: list[str]) -> int:
    import json

    wrapped, _ = _wrapped("wrap", args, launcher_fds=False)
    # A self-contained argv: `env -i` gives bwrap (and so the sandbox) only the scrubbed
    # environment, whoever starts it.
    env_bin = next(
        (p for d in os.get_exec_path() if os.access(p := os.path.join(d, "env"), os.X_OK)),
        None,
    )
    if env_bin is None:
        sys.stderr.write("corral: env(1) not found on PATH; cannot print a self-contained argv\n")
        return USAGE_FAILED
    argv = [env_bin, "-i", *(f"{k}={v}" for k, v in wrapped.env), *wrapped.argv]
    print(json.dumps(argv))
    return 0
