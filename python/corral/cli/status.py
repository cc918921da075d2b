"""`corral status`."""

from __future__ import annotations

import sys

from corral.cli import wants_help
from corral.cli.layers import resolve
from corral.cli.options import UsageError, parse
from corral.sandbox.backends import default_registry
from corral.status_report import render, report


def status(args: list[str]) -> int:
    opts, words = parse("status", args)
    if wants_help(opts):
        return 0
    if words:
        raise UsageError(f"corral status: unexpected argument {words[0]!r}")
    config, policy = resolve(opts)
    data = report(config, policy, default_registry())
    if opts.get("json"):
        import json

        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(render(data))
    return 0
