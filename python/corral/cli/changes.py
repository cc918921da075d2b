"""`corral changes`, `corral apply`, `corral discard` and `corral undo`: held change sets and
the undo journal, from a terminal (the same as :Sandbox changes / apply / discard / undo; both
print what corral.changes.commands returns)."""

from __future__ import annotations

import os
import sys

from corral.changes import commands
from corral.changes import stage as stages
from corral.cli.options import UsageError


def _now(stage: str) -> dict[str, list[str]]:
    """What is protected now in the change set's writable roots (see finish.read): your
    configuration as a run from its workspace would resolve it. A configuration that no longer
    resolves there keeps the change set held."""
    from corral.cli import layers

    plan = stages.read_plan(stage)
    opts = {"allow_write": list(plan["roots"]), "deny_read": [], "cwd": plan["cwd"]}
    return stages.protection(layers.resolve(opts)[1])


def _print(outcome: commands.Outcome) -> int:
    """Every line with its control characters escaped (tabs kept): paths and diffs are what a
    sandboxed command named and wrote (a name with "\n undid everything" or a terminal
    escape in it)."""
    shown = outcome.as_dict()
    for line in shown["out"]:
        print(line)
    for line in shown["err"]:
        sys.stderr.write(f"corral: {line}\n")
    return outcome.code


def changes(args: list[str]) -> int:
    """List held change sets (newest last), or show one with what each path holds
    (`--diff`: and a unified diff of each file)."""
    diffs = "--diff" in args
    args = [a for a in args if a != "--diff"]
    if args:
        return _print(commands.show(args[0], _now, diffs=diffs))
    return _print(commands.listing(os.getcwd()))


def apply(args: list[str]) -> int:
    if not args:
        raise UsageError("corral apply ID [PATH...]: which change set (see corral changes)")
    return _print(commands.apply(args[0], args[1:], _now))


def discard(args: list[str]) -> int:
    if not args:
        raise UsageError("corral discard ID [PATH...]: which change set (see corral changes)")
    return _print(commands.discard(args[0], args[1:]))


def undo(args: list[str]) -> int:
    import os

    if args[:1] in (["--list"], ["list"]):  # (Neovim's spelling too, r61c UNDOLIST)
        return _print(commands.undo_list(os.getcwd()))
    return _print(commands.undo(args[0] if args else None, os.getcwd()))
