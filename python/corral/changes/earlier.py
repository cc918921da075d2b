"""Held change sets that later commands in the same workspace do not see.

What a run wrote and corral held for review is in no later run's workspace until the user
applies it; a command that needs it fails with the tool's own words (a script importing a
held module: `ModuleNotFoundError`, and nothing said why, r48c). After each run, corral names
the held change sets of the writable root the command ran in, for the user and the model.
"""

from __future__ import annotations

import os

from corral.changes import stage as stages
from corral.changes import words
from corral.shown import shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

SETS = 3  # held change sets named after a run (the rest: counted)
PATHS = 3  # held paths named for each


def held_in(cwd: str, but: str = "") -> list[dict[str, Any]]:
    """The held change sets (oldest first) with a writable root holding `cwd`, other than
    `but`: {"id", "paths": the first PATHS held paths (relative to `cwd` below it), "count":
    how many are held}."""
    from corral.paths import is_within

    found = []
    for change_id, items in _held_items(cwd, but):
        # (its commits, held for review: a later run's commit starts beside them, and the
        # two then do not apply one after the other, r58c DIVERGE)
        history = [i for i in items if str(i.get("message", "")).startswith(words.HISTORY_WAITS)]
        git = [str(i.get("path", "")) for i in items if history and "/.git/" in i.get("path", "")]
        paths = [str(i.get("path", "")) for i in items if str(i.get("path", "")) not in git]
        paths = [os.path.relpath(p, cwd) if is_within(p, cwd) else p for p in paths]
        found.append({
            "id": change_id, "paths": paths[:PATHS], "count": len(paths),
            **({"commits": True} if history else {}),
        })  # fmt: skip
    return found


def _held_items(cwd: str, but: str = "") -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(id, held items of its report) of each held change set, oldest first, with a writable
    root holding `cwd`, other than `but`."""
    from corral.paths import is_within

    for stage in stages.held():
        change_id = os.path.basename(stage)
        if change_id == but:
            continue
        try:
            roots = stages.read_plan(stage)["roots"]
            if not any(is_within(cwd, str(root)) for root in roots):
                continue  # (another workspace's: its report is not read)
            held = stages.read_json(os.path.join(stage, stages.REPORT)).get("held") or []
        except (OSError, ValueError, KeyError, AttributeError, EOFError, TypeError):
            continue  # (another corral version's, or one being written: `corral changes`)
        yield change_id, [item for item in held if isinstance(item, dict)]


def holding(path: str) -> str | None:
    """The newest held change set that holds `path` (or a directory above it), or None: a
    file tool's "No such file" for it means "held for review" (r64c EDITHELD)."""
    from corral.paths import is_within

    found = None
    for change_id, items in _held_items(path):
        if any(is_within(path, str(i.get("path", ""))) for i in items if i.get("path")):
            found = change_id
    return found


def lines(found: list[dict[str, Any]], frontend: str | None = None) -> list[str]:
    """A line for each of the newest SETS of `found`, for the user."""
    out = []
    for item in found[-SETS:]:
        names = ", ".join(item["paths"]) or ("" if item.get("commits") else "its changes")
        more = item["count"] - len(item["paths"])
        names += f" and {more} more" if more > 0 else ""
        if item.get("commits"):
            commits = "its git commits (a commit now starts beside them, not on them)"
            names = f"{commits}{', ' if names else ''}{names}"
        out.append(
            f"not in the workspace, held from an earlier run: {names} "
            f"({words.command('changes', item['id'], frontend_name=frontend)})"
        )
    if len(found) > SETS:
        out.append(
            f"... and {len(found) - SETS} older held change sets: "
            f"{words.command('changes', frontend_name=frontend)}"
        )
    return [shown(line) for line in out]
