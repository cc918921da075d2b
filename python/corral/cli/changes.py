"""`corral changes`, `corral apply`, `corral discard` and `corral undo`: held change sets and
the undo journal, from a terminal (the same as :Sandbox changes / undo)."""

from __future__ import annotations

import os
import sys

from corral.changes import finish
from corral.changes import journal as journals
from corral.changes import stage as stages
from corral.cli.options import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _stage(change_id: str) -> str:
    stage = os.path.join(stages.root_dir(), os.path.basename(change_id))
    if not os.path.isfile(os.path.join(stage, stages.REPORT)):
        raise UsageError(f"no held change set {change_id!r}; see corral changes")
    return stage


def _paths(stage: str, given: list[str]) -> frozenset[str]:
    """PATH arguments as host paths: absolute, or relative to the command's workspace."""
    cwd = stages.read_plan(stage)["cwd"]
    return frozenset(os.path.normpath(os.path.join(cwd, p)) for p in given)


def _now(stage: str) -> dict[str, list[str]]:
    """What is protected now in the change set's writable roots (see finish.read): your
    configuration as a run from its workspace would resolve it. A configuration that no longer
    resolves there keeps the change set held."""
    from corral.cli import layers

    plan = stages.read_plan(stage)
    opts = {"allow_write": list(plan["roots"]), "deny_read": [], "cwd": plan["cwd"]}
    _, policy = layers.resolve(opts)
    return {
        "protected": stages.protected_paths(policy),
        "protected_names": list(policy.protected_names),
        "chat_patterns": list(policy.chat_patterns),
    }


def _held_lines(report: dict[str, Any]) -> list[str]:
    lines = [
        f"{report['id']}: {report['status']}" + (f" ({report['why']})" if report.get("why") else "")
    ]
    for item in report["held"]:
        lines.append(f"  {item['path']}: {item.get('message') or item['code']}")
    for problem in report.get("problems", []):
        lines.append(f"  unread: {problem}")
    return [finish.shown(line) for line in lines]


def changes(args: list[str]) -> int:
    """List held change sets (newest last), or show one with what each path holds."""
    with finish.Locked():
        stages.collect_garbage(stages.root_dir())
    if args:
        stage = _stage(args[0])
        plan, checked, problems = finish.read(stage, _now(stage))
        print(f"{plan['id']} (workspace {plan['cwd']})")
        for entry, refusal in checked:
            if entry.kind == "dir" and refusal is None:
                continue
            verdict = f"refused: {refusal.message}" if refusal else "passes the check"
            change = "delete" if entry.kind == "whiteout" else entry.kind
            print(finish.shown(f"  {change:7} {entry.path}: {verdict}"))
        for problem in problems:
            print(finish.shown(f"  unread: {problem}"))
        return 0
    found = list(stages.held())
    if not found:
        print("no held change sets")
    for stage in found:
        print("\n".join(_held_lines(stages.read_json(os.path.join(stage, stages.REPORT)))))
    return 0


def apply(args: list[str]) -> int:
    """Apply a held change set: what passes the check, and the PATHs named (also refused
    ones: naming them is the user's decision)."""
    if not args:
        raise UsageError("corral apply ID [PATH...]: which change set (see corral changes)")
    with finish.Locked():
        stage = _stage(args[0])
        plan, checked, problems = finish.read(stage, _now(stage))
        report = finish.settle(stage, plan, checked, problems, force=_paths(stage, args[1:]))
    counts = report["counts"]
    print(
        f"applied {counts.get('added', 0)} added, {counts.get('modified', 0)} modified, "
        f"{counts.get('deleted', 0)} deleted (undo: corral undo)"
    )
    for line in finish.describe(report):
        sys.stderr.write(f"corral: {line}\n")
    return 0


def discard(args: list[str]) -> int:
    """Drop a held change set, or only the PATHs named from it."""
    if not args:
        raise UsageError("corral discard ID [PATH...]: which change set (see corral changes)")
    from corral.changes.apply import discard as drop
    from corral.paths import is_within

    with finish.Locked():
        stage = _stage(args[0])
        if len(args) == 1:
            stages.remove(stage)
            print(f"discarded {args[0]}")
            return 0
        wanted = _paths(stage, args[1:])
        _, checked, _ = finish.read(stage)
        for entry, _ in checked:
            if any(is_within(entry.path, w) for w in wanted):
                drop(entry)
        if stages.is_empty(stage):
            stages.remove(stage)
        print(f"discarded {len(wanted)} path(s) from {args[0]}")
    return 0


def undo(args: list[str]) -> int:
    """Undo the newest applied change set (or the one named, when it is the newest)."""
    with finish.Locked():
        names = journals.entries()
        if not names:
            print("nothing to undo")
            return 0
        newest = names[-1]
        if args and not newest.endswith(os.path.basename(args[0])):
            raise UsageError(f"only the newest change set can be undone first: {newest}")
        conflicts = journals.conflicts(newest)
        if conflicts:
            for line in conflicts:
                sys.stderr.write(f"corral: {line}\n")
            sys.stderr.write(f"corral: {newest} not undone: nothing was changed\n")
            return 1
        for line in journals.undo(newest):
            print(line)
    print(f"undid {newest}")
    return 0
