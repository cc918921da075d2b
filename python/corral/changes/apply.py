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


_UMASK: list[int] = []


def process_umask() -> int:
    """The process's umask, read once (reading it means setting it: two system calls)."""
    if not _UMASK:
        mask = os.umask(0o022)
        os.umask(mask)
        _UMASK.append(mask)
    return _UMASK[0]


def safe_mode(mode: int, old: int | None) -> int:
    """The permissions an entry lands with: no set-user or set-group ID, and no write for
    group or others that the host's own file did not grant (for a new one: that the user's
    umask would not have given): `chmod 777 .git` inside must not open the repository's hooks
    to every local user."""
    allowed = old & OTHERS_WRITE if old is not None else OTHERS_WRITE & ~process_umask()
    return (mode & ~PRIVILEGE_BITS & ~OTHERS_WRITE) | (mode & allowed)


def _clean(entry: Entry, mode: int) -> None:
    """Drop what must not reach the host with the file: privilege bits and write for others
    (`mode`, from safe_mode), overlay attributes and file capabilities."""
    if entry.kind != "file":
        return
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


def _put(entry: Entry, target: str, serial: int, old: int | None) -> bool:
    """Put one file or link in place; True when it was copied (its source is still there)."""
    mode = safe_mode(entry.mode, old)
    _clean(entry, mode)
    if entry.kind == "file" and entry.nlink > 1:
        # Hard links inside the change set: each applied file gets its own inode.
        _copy_beside(entry, target, serial, mode)
        return True
    try:
        os.rename(entry.source, target)
    except OSError as e:
        if e.errno != 18:  # EXDEV: another file system
            raise
        _copy_beside(entry, target, serial, mode)
        return True
    return False


def _stat(path: str) -> list[int]:
    st = os.lstat(path)
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def _prepare_whole(entries: list[Entry], start: int) -> int:
    """Clean, in the staging area, the directory at `start` and everything below it (they
    follow it: parents first, sorted by path); returns the index after its last entry."""
    top = entries[start]
    prefix = top.path + "/"
    end = start + 1
    while end < len(entries) and entries[end].path.startswith(prefix):
        end += 1
    for entry in entries[start:end]:
        if entry.kind == "dir":
            mode = safe_mode(entry.mode, None)
            if mode != entry.mode:
                os.chmod(entry.source, mode)
        else:
            _clean(entry, safe_mode(entry.mode, None))
    return end


def apply(
    entries: list[Entry], journal: Journal, whole: frozenset[str] = frozenset()
) -> tuple[list[dict[str, str]], list[Entry]]:
    """Apply `entries` (accepted, parents first); returns what changed, one dict a path:
    {"path", "change": added | modified | deleted}, and the entries whose source is still in
    the staging area (for `clear`). Raises OSError on the first failure: what was applied
    before it is in the journal.

    `whole`: new directories whose every entry below was accepted (see finish.settle). One
    that does not exist on the host is cleaned in place and moved by one rename, its entries
    journaled one by one as if each had been put (an `npm install` is mostly such trees)."""
    changed: list[dict[str, str]] = []
    left: list[Entry] = []
    moved_until = 0  # entries before this index went with a directory moved whole
    for serial, entry in enumerate(entries):
        target = entry.path
        if serial < moved_until:
            if entry.kind == "dir":
                journal.record(op="mkdir", path=target, saved=None)
            else:
                stamp = [entry.ino, entry.size, entry.mtime_ns]
                journal.record(op="put", path=target, saved=None, stat=stamp)
            changed.append({"path": target, "change": "added"})
            continue
        try:
            st: os.stat_result | None = os.lstat(target)
        except FileNotFoundError:
            st = None
        if st is None and entry.kind == "dir" and target in whole and not entry.opaque:
            moved_until = _prepare_whole(entries, serial)
            os.rename(entry.source, target)
            journal.record(op="mkdir", path=target, saved=None)
            changed.append({"path": target, "change": "added"})
            continue
        if entry.kind in ("whiteout", "dir"):
            left.append(entry)
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
        if _put(entry, target, serial, old if entry.kind == "file" else None):
            left.append(entry)
        journal.record(op="put", path=target, saved=saved, stat=_stat(target))
        changed.append({"path": target, "change": "modified" if st is not None else "added"})
    return changed, left


def clear(entries: list[Entry]) -> None:
    """After `apply`: remove from the staging area what was applied and is still there (the
    whiteouts, directories, copies: what `apply` returned), deepest first, so only held
    entries remain."""
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
