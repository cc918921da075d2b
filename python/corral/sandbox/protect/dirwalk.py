"""Bounded walks of the directories below a root, that say when they stopped early.

A sandboxed command can make thousands of directories to push a repository, a venv or a
subproject past any limit (r68a PREKWALK, r76a WALKFLOOD): a walk that stops says so, and
its caller holds what it could not look at, never cuts it quietly.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def directories(
    root: str,
    depth: int,
    limit: int,
    skip: frozenset[str] = frozenset(),
    descend: Callable[[str], bool] | None = None,
) -> tuple[list[str], bool]:
    """(the directories below `root`, breadth first, to `depth` levels, no link followed;
    whether that is all of them: past `limit` looked at, it is not). Names in `skip` are
    neither listed nor entered; `descend(path)` says whether to look below one listed."""
    found: list[str] = []
    level = [root]
    for _ in range(depth):
        below = []
        for directory in level:
            try:
                with os.scandir(directory) as listing:
                    entries = [e for e in listing if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for entry in entries:
                if entry.name in skip:
                    continue
                if len(found) >= limit:
                    return found, False
                found.append(entry.path)
                if descend is None or descend(entry.path):
                    below.append(entry.path)
        level = below
    return found, True
