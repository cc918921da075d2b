"""Apply the accepted entries of a change set to the host, one file at a time, journaled.

Parents come before children (see scan), so a directory exists, or was put in place of what
was there, before anything goes into it; what is replaced or deleted is moved into the journal,
never destroyed. Each file lands by rename(2): atomic, and free when the staging area is on the
workspace's file system; elsewhere it is copied to a temporary name beside its target first.
No host path is followed through a link: the targets' parents were all checked or created as
real directories earlier in the same pass, and a link found where a directory should be is
moved aside, not entered.

Set-user-ID and set-group-ID bits, write for group and others beyond what the host's file had
(or the umask gives), file capabilities and overlayfs's own extended attributes are dropped.
"""

from __future__ import annotations

import os
import stat

from corral.changes.journal import Journal, move

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry

PRIVILEGE_BITS = stat.S_ISUID | stat.S_ISGID
OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
# overlayfs's own attributes, and file capabilities (a setuid bit by another name)
DROPPED_XATTRS = ("user.overlay.", "trusted.overlay.", "security.capability")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def safe_mode(mode: int, old: int | None) -> int:
    """The permissions an entry lands with: no set-user or set-group ID, and no write for
    group or others that the host's own file did not grant (for a new one: that the user's
    umask would not have given): `chmod 777 .git` inside must not open the repository's hooks
    to every local user."""
    allowed = old & OTHERS_WRITE if old is not None else OTHERS_WRITE & ~_umask()
    return (mode & ~PRIVILEGE_BITS & ~OTHERS_WRITE) | (mode & allowed)


def _clean(entry: Entry, old: int | None) -> None:
    """Drop what must not reach the host with the file: privilege bits and write for others
    (see safe_mode), overlay attributes and file capabilities."""
    if entry.kind != "file":
        return
    mode = safe_mode(entry.mode, old)
    if mode != entry.mode:
        os.chmod(entry.source, mode)
    try:
        names = os.listxattr(entry.source, follow_symlinks=False)
    except OSError:
        return
    for name in names:
        if name.startswith(DROPPED_XATTRS):
            try:
                os.removexattr(entry.source, name, follow_symlinks=False)
            except OSError:
                pass


def _copy_beside(entry: Entry, target: str, serial: int, mode: int) -> None:
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
                os.fchmod(dst, mode)
            finally:
                os.close(dst)
        finally:
            os.close(src)
    os.rename(tmp, target)


def _put(entry: Entry, target: str, serial: int, old: int | None) -> None:
    _clean(entry, old)
    mode = safe_mode(entry.mode, old)
    if entry.kind == "file" and entry.nlink > 1:
        # Hard links inside the change set: each applied file gets its own inode.
        _copy_beside(entry, target, serial, mode)
        return
    try:
        os.rename(entry.source, target)
    except OSError as e:
        if e.errno != 18:  # EXDEV: another file system
            raise
        _copy_beside(entry, target, serial, mode)


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
        old = stat.S_IMODE(st.st_mode) if st is not None else None
        if entry.kind == "dir":
            mode = safe_mode(entry.mode, old)
            if st is not None and stat.S_ISDIR(st.st_mode) and not entry.opaque:
                if old != mode:
                    os.chmod(target, mode)
                    journal.record(op="chmod", path=target, old=old)
                continue
            saved = journal.save(target) if st is not None else None
            os.mkdir(target, mode)
            os.chmod(target, mode)  # past the umask
            journal.record(op="mkdir", path=target, saved=saved)
            if st is None:
                changed.append({"path": target, "change": "added"})
            continue
        saved = journal.save(target) if st is not None else None
        _put(entry, target, serial, old if entry.kind == "file" else None)
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
