"""Apply the accepted entries of a change set to the host, one file at a time, journaled.

Parents come before children (see scan), so a directory exists, or was put in place of what
was there, before anything goes into it; what is replaced or deleted is moved into the journal,
never destroyed. Each file lands by rename(2): atomic, and free when the staging area is on the
workspace's file system; elsewhere it is copied to a temporary name beside its target first.
No host path is followed through a link: the targets' parents were all checked or created as
real directories earlier in the same pass, and a link found where a directory should be is
moved aside, not entered.

Set-user-ID and set-group-ID bits are dropped, and overlayfs's own extended attributes removed.
"""

from __future__ import annotations

import os
import stat

from corral.changes.journal import Journal, move

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry

PRIVILEGE_BITS = stat.S_ISUID | stat.S_ISGID
OVERLAY_XATTRS = "user.overlay."


def _clean(entry: Entry) -> None:
    """Drop what must not reach the host with the file: privilege bits, overlay xattrs."""
    if entry.kind != "file":
        return
    if entry.mode & PRIVILEGE_BITS:
        os.chmod(entry.source, entry.mode & ~PRIVILEGE_BITS)
    try:
        names = os.listxattr(entry.source, follow_symlinks=False)
    except OSError:
        return
    for name in names:
        if name.startswith(OVERLAY_XATTRS):
            try:
                os.removexattr(entry.source, name, follow_symlinks=False)
            except OSError:
                pass


def _copy_beside(entry: Entry, target: str, serial: int) -> None:
    """Copy to a temporary name in the target's directory, then rename over the target."""
    tmp = os.path.join(os.path.dirname(target), f".corral-apply-{os.getpid()}-{serial}.tmp")
    if entry.kind == "link":
        os.symlink(entry.target, tmp)
    else:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        src = os.open(entry.source, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            dst = os.open(tmp, flags, 0o600)
            try:
                while chunk := os.read(src, 1 << 20):
                    os.write(dst, chunk)
                os.fchmod(dst, entry.mode & ~PRIVILEGE_BITS)
            finally:
                os.close(dst)
        finally:
            os.close(src)
    os.rename(tmp, target)


def _put(entry: Entry, target: str, serial: int) -> None:
    _clean(entry)
    if entry.kind == "file" and entry.nlink > 1:
        # Hard links inside the change set: each applied file gets its own inode.
        _copy_beside(entry, target, serial)
        return
    try:
        os.rename(entry.source, target)
    except OSError as e:
        if e.errno != 18:  # EXDEV: another file system
            raise
        _copy_beside(entry, target, serial)


def _stat(path: str) -> list[int]:
    st = os.lstat(path)
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def apply(entries: list[Entry], journal: Journal) -> list[dict[str, str]]:
    """Apply `entries` (accepted, parents first); returns what changed, one dict a path:
    {"path", "change": added | modified | deleted}. Raises OSError on the first failure: what
    was applied before it is in the journal."""
    changed: list[dict[str, str]] = []
    for serial, entry in enumerate(entries):
        target = entry.path
        try:
            st: os.stat_result | None = os.lstat(target)
        except FileNotFoundError:
            st = None
        if entry.kind == "whiteout":
            if st is not None:
                journal.record(op="remove", path=target, saved=journal.save(target))
                changed.append({"path": target, "change": "deleted"})
            continue
        if entry.kind == "dir":
            if st is not None and stat.S_ISDIR(st.st_mode) and not entry.opaque:
                if stat.S_IMODE(st.st_mode) != entry.mode:
                    os.chmod(target, entry.mode)
                    journal.record(op="chmod", path=target, old=stat.S_IMODE(st.st_mode))
                continue
            saved = journal.save(target) if st is not None else None
            os.mkdir(target, entry.mode)
            os.chmod(target, entry.mode)  # past the umask
            journal.record(op="mkdir", path=target, saved=saved)
            if st is None:
                changed.append({"path": target, "change": "added"})
            continue
        saved = journal.save(target) if st is not None else None
        _put(entry, target, serial)
        journal.record(op="put", path=target, saved=saved, stat=_stat(target))
        changed.append({"path": target, "change": "modified" if st is not None else "added"})
    return changed


def clear(entries: list[Entry]) -> None:
    """After `apply`: remove from the staging area what was applied and is still there (the
    whiteouts, directories, copies), deepest first, so only held entries remain."""
    for entry in reversed(entries):
        try:
            if entry.kind == "dir":
                os.rmdir(entry.source)
            else:
                os.unlink(entry.source)
        except FileNotFoundError:
            pass
        except OSError as e:
            if e.errno != 39:  # ENOTEMPTY: a held entry is still below it
                raise


def discard(entry: Entry) -> None:
    """Remove one entry from its staging area (a directory with what is below it)."""
    from corral.changes import tree

    tree.remove(entry.source)


__all__ = ["apply", "clear", "discard", "move"]
