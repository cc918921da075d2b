"""The chat's file tools (write, edit, delete) and change sets.

The tools already write guarded and atomically (ops/files.py); this gives them the rest of
what commands' writes get:
- with `sandbox.writes = "apply"` (and "direct") each call is journaled: the file it replaced
  or deleted is kept (a hard link when the journal is on the same file system, else a copy),
  so `corral undo` / `:Sandbox undo` puts it back like a command's change set;
- with "review" the call changes nothing: its new content (or deletion, as an overlay
  whiteout) goes into a held change set of its own, shown and applied with `:Sandbox changes`
  and `:Sandbox apply` like a command's, through the same check.
"""

from __future__ import annotations

import os
import stat

from corral.changes import journal as journals
from corral.changes import stage as stages
from corral.paths import is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from corral.policy import Policy

WHITEOUT = os.makedev(0, 0)  # what overlayfs writes for a deletion; unprivileged since 5.8


class ToolChanges:
    """One tool call's change: journaled (apply) or held (review)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.holding = policy.writes == "review" and bool(policy.rw_roots)
        self.journal: journals.Journal | None = None
        self.changed: list[dict[str, str]] = []

    # -- apply: journal what is replaced -----------------------------------------------------
    def _journal(self) -> journals.Journal:
        if self.journal is None:
            self.journal = journals.Journal(f"{os.urandom(4).hex()}-tool")
        return self.journal

    def keep_old(self, dir_fd: int, name: str, real: str) -> str:
        """Before `name` in `dir_fd` (the file at `real`) is replaced or deleted: keep it in
        the journal; returns its name there."""
        journal = self._journal()
        saved = journal.reserve()
        target = os.path.join(journal.path, journals.FILES, saved)
        mode = os.lstat(name, dir_fd=dir_fd).st_mode
        if stat.S_ISLNK(mode):
            os.symlink(os.readlink(name, dir_fd=dir_fd), target)
            return saved
        if stat.S_ISDIR(mode):  # the delete tool removes only empty directories
            os.mkdir(target, stat.S_IMODE(mode))
            return saved
        try:
            os.link(name, target, src_dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            try:
                out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                try:
                    while chunk := os.read(fd, 1 << 20):
                        os.write(out, chunk)
                    os.fchmod(out, stat.S_IMODE(os.fstat(fd).st_mode))
                finally:
                    os.close(out)
            finally:
                os.close(fd)
        journal.saved_bytes += os.lstat(target).st_size
        return saved

    def put(self, dir_fd: int, name: str, real: str, saved: str | None) -> None:
        """After the file at `real` was written."""
        st = os.lstat(name, dir_fd=dir_fd)
        self._journal().record(
            op="put", path=real, saved=saved, stat=[st.st_ino, st.st_size, st.st_mtime_ns]
        )
        self.changed.append({"path": real, "change": "modified" if saved else "added"})

    def removed(self, real: str, saved: str) -> None:
        self._journal().record(op="remove", path=real, saved=saved)
        self.changed.append({"path": real, "change": "deleted"})

    # -- review: hold instead ----------------------------------------------------------------
    def hold(self, real: str, data: bytes | None) -> dict[str, Any]:
        """Put the new content of `real` (None: its deletion) into a held change set."""
        roots = self.policy.rw_roots
        index = next((i for i, r in enumerate(roots) if is_within(real, r)), None)
        if index is None:
            raise ValueError(f"{real} is in no writable root")
        stage = stages.create(self.policy)
        rel = os.path.relpath(real, self.policy.rw_roots[index])
        target = os.path.join(stages.upper(stage, index), rel)
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        if data is None:
            os.mknod(target, stat.S_IFCHR | 0o600, WHITEOUT)
        else:
            mode = stat.S_IMODE(os.stat(real).st_mode) if os.path.exists(real) else 0o644
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        report = {
            "id": os.path.basename(stage),
            "status": "held",
            "why": 'sandbox.writes is "review": held until you apply it',
            "applied": [],
            "held": [{"path": real, "code": "review", "message": "held for review"}],
        }
        stages.write_report(stage, report)
        return {"id": report["id"], "status": "held", "held": [real]}

    def finish(self) -> dict[str, Any] | None:
        """Close the journal; what the call changed, for its result (None: nothing)."""
        if self.journal is None:
            return None
        self.journal.close()
        if not self.changed:  # refused or failed after keeping the original: nothing to undo
            from corral.changes import tree

            tree.remove(self.journal.path)
            return None
        counts = {"added": 0, "modified": 0, "deleted": 0}
        for c in self.changed:
            counts[c["change"]] += 1
        report = {
            "id": os.path.basename(self.journal.path).split("-", 1)[1],
            "status": "applied",
            "applied": self.changed,
            "counts": counts,
            "held": [],
            "why": "",
        }
        stages.write_report(self.journal.path, report)
        journals.prune(self.policy.undo_bytes)
        return {"id": report["id"], "status": "applied", "counts": counts}
