"""Keep corral's own imports out of a sandbox's reach.

corral imports much of what it needs lazily (the change-set check, the runner), after a
sandboxed command has run. Python looks for a module along sys.path, where the current
directory (`python -m`, '') and PYTHONPATH (a project's `src`, set by an .envrc) come before
the standard library: a `json.py` or `fcntl.py` a sandboxed command wrote there would run in
corral's own process, on the host. Every sys.path entry a sandbox could write is dropped; what
corral runs from itself (its package, its environment) is read-only in every sandbox and stays.
"""

from __future__ import annotations

import os
import sys

from corral.paths import is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# What a Python process (corral's, the editor's Python host) imports from its path before
# corral's own code runs and can drop the writable entries: kept as they are where they would
# be found first (see resolution._on_pythonpath).
STARTUP_MODULES = (
    "sitecustomize", "usercustomize", "corral", "encodings", "__future__", "pynvim",
    "msgpack", "greenlet", "bashlex", "platformdirs",
)  # fmt: skip

_done: set[tuple[str, ...]] = set()


def drop_writable(roots: Sequence[str], kept: Sequence[str] = (), early: bool = False) -> None:
    """Remove from sys.path the empty entry (the current directory) and every entry inside
    `roots` (the writable roots), except what no sandbox can write: corral's own files, the
    Python it runs on, and `kept` (what the policy keeps read-only inside the roots). `early`:
    before the policy is known, with the current directory as `roots`; installed libraries
    (site-packages) are then left for the policy to judge."""
    key = (*roots, "\0", *kept, str(early))
    if key in _done:
        return
    from corral.sandbox.resolution import own_paths

    safe = [os.path.realpath(p) for p in (*own_paths(), sys.base_prefix, sys.base_exec_prefix)]
    safe += [os.path.realpath(p) for p in kept]
    cwd = os.getcwd()
    for entry in list(sys.path):
        real = os.path.realpath(entry or cwd)
        if entry and any(is_within(real, p) for p in safe):
            continue  # read-only in every sandbox
        if early and os.path.basename(real) in ("site-packages", "dist-packages"):
            continue
        if not entry or any(is_within(real, r) for r in roots):
            sys.path.remove(entry)
    _done.add(key)
