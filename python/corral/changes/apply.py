"""Apply the accepted entries of a change set to the host, one file at a time, journaled.

Parents come before children (see scan), so a directory exists, or was put in place of what
was there, before anything goes into it; what is replaced or deleted is moved into the journal,
never destroyed. Each file lands by rename(2): atomic, and free when the staging area is on the
workspace's file system; elsewhere it is copied to a temporary name beside its target first.
No host path is followed through a link: the targets' parents were all checked or created as
real directories earlier in the same pass, and a link found where a directory should be is
moved aside, not entered.

Set-user-ID and set-group-ID bits, access for group and others beyond what the host's file
had (or the umask gives), file capabilities, default ACLs of directories and overlayfs's own
extended attributes are dropped; an existing directory keeps its owner's permissions.

All or nothing: when a step fails (a full disk, a file the command made unreadable), every step
before it is reversed, the staging area gets back what was moved out of it, and ApplyFailed
says where and why; the change set stays held, whole. A new directory the command made without
write permission for its owner (mode 555) gets that mode once everything below it is in.
"""

from __future__ import annotations

import os
import stat

from corral.changes.journal import Journal, index_entries, move
from corral.changes.scan import replaced
from corral.changes.tree import chmod_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from corral.changes.scan import Entry

PRIVILEGE_BITS = stat.S_ISUID | stat.S_ISGID
GROUP_OTHERS = stat.S_IRWXG | stat.S_IRWXO
# overlayfs's own attributes, and file capabilities (a setuid bit by another name)
# (an access ACL: the mode safe_mode chose is the whole of who may use it; a sandbox cannot
# name other users in one now, review r31b, but nothing else it sets is taken on trust)
# Every `user.` attribute too: a command's own names are no one's to trust on the host
# (review r37c: `user.r37c` reached the host file; a tool that reads one, a desktop's
# `user.xdg.origin.url`, would take the sandbox's word)
DROPPED_XATTRS = (
    "user.", "trusted.overlay.", "security.capability", "system.posix_acl_access",
)  # fmt: skip
# a directory's default ACL is the mode of everything created in it later, by anyone: the
# umask and safe_mode would not hold for the user's own files there
DROPPED_DIR_XATTRS = (*DROPPED_XATTRS, "system.posix_acl_default")
OWNER = stat.S_IRWXU


class ApplyFailed(OSError):
    """A change set could not be applied; nothing of it was (or, with `partly`, what the
    journal names is still in: corral undo takes it out)."""

    def __init__(self, message: str, partly: bool = False) -> None:
        super().__init__(message)
        self.partly = partly


_UMASK: list[int] = []


def process_umask() -> int:
    """The process's umask, read once (reading it means setting it: two system calls)."""
    if not _UMASK:
        mask = os.umask(0o022)
        os.umask(mask)
        _UMASK.append(mask)
    return _UMASK[0]


def safe_mode(mode: int, old: int | None) -> int:
    """The permissions an entry lands with: no set-user or set-group ID, and nothing for
    group or others that the host's own file did not grant (for a new one: that the user's
    umask would not have given): `chmod 777 .git` inside must not open the repository's hooks
    to every local user, nor `chmod 644` a private key to reading."""
    allowed = old & GROUP_OTHERS if old is not None else GROUP_OTHERS & ~process_umask()
    return (mode & ~PRIVILEGE_BITS & ~GROUP_OTHERS) | (mode & allowed)


def _clean(entry: Entry, mode: int) -> None:
    """Drop what must not reach the host with a file or directory: privilege bits and write
    for others (`mode`, from safe_mode; a directory's mode is set where it lands), overlay
    attributes, file capabilities and default ACLs."""
    if entry.kind not in ("file", "dir"):
        return
    if entry.kind == "file" and mode != entry.mode:
        os.chmod(entry.source, mode)
    try:
        names = os.listxattr(entry.source, follow_symlinks=False)
    except OSError:
        return
    dropped = DROPPED_DIR_XATTRS if entry.kind == "dir" else DROPPED_XATTRS
    for name in names:
        if name.startswith(dropped):
            try:
                os.removexattr(entry.source, name, follow_symlinks=False)
            except OSError:
                pass


def _readable(entry: Entry) -> None:
    """The staged copy is corral's own: readable to copy it, whatever mode the command gave
    it (the copy gets that mode)."""
    if not os.access(entry.source, os.R_OK, follow_symlinks=False):
        os.chmod(entry.source, stat.S_IMODE(os.lstat(entry.source).st_mode) | stat.S_IRUSR)


def _copy_data(src: int, dst: int) -> None:
    """Copy a file's data, holes kept holes: a sparse 8 GiB file written in no space by a
    command must not take 8 GiB on the host."""
    size = os.fstat(src).st_size
    pos = 0
    while pos < size:
        try:
            start = os.lseek(src, pos, os.SEEK_DATA)
        except OSError as e:
            if e.errno == 6:  # ENXIO: only a hole is left
                break
            raise
        end = os.lseek(src, start, os.SEEK_HOLE)
        os.lseek(src, start, os.SEEK_SET)
        os.lseek(dst, start, os.SEEK_SET)
        left = end - start
        while left > 0:
            chunk = os.read(src, min(left, 1 << 20))
            if not chunk:
                break
            os.write(dst, chunk)
            left -= len(chunk)
        pos = end
    os.ftruncate(dst, size)


def _copy_beside(entry: Entry, target: str, serial: int, mode: int) -> None:
    """Copy to a temporary name in the target's directory, then rename over the target; the
    temporary file is gone whatever fails."""
    tmp = os.path.join(os.path.dirname(target), f".corral-apply-{os.getpid()}-{serial}.tmp")
    try:
        if entry.kind == "link":
            os.symlink(entry.target, tmp)
        else:
            _readable(entry)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            src = os.open(entry.source, os.O_RDONLY | os.O_NOFOLLOW)
            try:
                dst = os.open(tmp, flags, 0o600)
                try:
                    _copy_data(src, dst)
                    os.fchmod(dst, mode)
                finally:
                    os.close(dst)
            finally:
                os.close(src)
        os.rename(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _open_to_owner(directory: str) -> None:
    """A staged directory is corral's own: open to its owner for a rename out of it, or an
    unlink in it, whatever mode the command left it with (`chmod 555 zz`, as Go's module
    cache does); the mode the command gave it was read by the scan, and is what applies."""
    st = os.lstat(directory)
    if stat.S_ISDIR(st.st_mode) and st.st_mode & OWNER != OWNER:
        os.chmod(directory, stat.S_IMODE(st.st_mode) | OWNER)


def _put(entry: Entry, target: str, serial: int, old: int | None) -> bool:
    """Put one file or link in place; True when it was copied (its source is still there)."""
    mode = safe_mode(entry.mode, old)
    _clean(entry, mode)
    _open_to_owner(os.path.dirname(entry.source))
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


def _prepare_whole(entries: list[Entry], start: int, later: list[tuple[str, int]]) -> int:
    """Clean, in the staging area, the directory at `start` and everything below it (they
    follow it: parents first, sorted by path); returns the index after its last entry. Its
    directories are opened to their owner for the move (a directory changes parent only with
    write permission on it); their own modes go to `later`, by host path."""
    top = entries[start]
    prefix = top.path + "/"
    end = start + 1
    while end < len(entries) and entries[end].path.startswith(prefix):
        end += 1
    for entry in entries[start:end]:
        mode = safe_mode(entry.mode, None)
        _clean(entry, mode)
        if entry.kind == "dir":
            os.chmod(entry.source, mode | OWNER)
            if mode & OWNER != OWNER:
                later.append((entry.path, mode))
    return end


class _Steps:
    """What was done so far, to reverse it all when a later step fails."""

    def __init__(self) -> None:
        self.undo: list[tuple[str, Any]] = []
        self.current = ""  # the path being applied

    def add(self, what: str, fn: Any) -> None:
        self.undo.append((what, fn))

    def reverse(self) -> list[str]:
        """Reverse every step, newest first; what could not be reversed."""
        failed = []
        for what, fn in reversed(self.undo):
            try:
                fn()
            except OSError as e:
                failed.append(f"{what}: {e}")
        self.undo.clear()
        return failed


def _restore(journal: Journal, name: str, target: str) -> Any:
    return lambda: move(os.path.join(journal.path, "files", name), target)


def _unput(entry: Entry, target: str, copied: bool) -> Any:
    if copied:  # the staged source is still there
        return lambda: os.unlink(target)
    return lambda: os.rename(target, entry.source)


def _parents_are_directories(entry: Entry, real: set[str]) -> None:
    """Every directory between the entry's root and it is a real directory on the host now:
    never a link, through which rename would write elsewhere (a path applied on its own with
    `corral apply ID PATH`, whose directory the host replaced by a link meanwhile). `real`
    caches the directories found or made so far."""
    parent = os.path.dirname(entry.path)
    missing = []
    while parent not in real and parent != entry.root and len(parent) > len(entry.root):
        missing.append(parent)
        parent = os.path.dirname(parent)
    for directory in reversed(missing):
        st = os.lstat(directory)
        if not stat.S_ISDIR(st.st_mode):
            raise OSError(20, f"{directory} is not a directory on the host (a symlink?)")
        real.add(directory)


def _same_file_system(source: str, target: str) -> bool:
    """Whether a rename can move `source` to `target` (elsewhere the entries are copied one
    by one: a workspace on another disk than corral's state)."""
    return os.lstat(os.path.dirname(source)).st_dev == os.lstat(os.path.dirname(target)).st_dev


def apply(
    entries: list[Entry], journal: Journal, whole: frozenset[str] = frozenset()
) -> tuple[list[dict[str, str]], list[Entry]]:
    """Apply `entries` (accepted, parents first); returns what changed, one dict a path:
    {"path", "change": added | modified | deleted}, and the entries whose source is still in
    the staging area (for `clear`). All or nothing: raises ApplyFailed when a step fails,
    with every earlier step reversed and the journal entry gone.

    `whole`: new directories whose every entry below was accepted (see finish.settle). One
    that does not exist on the host is cleaned in place and moved by one rename, its entries
    journaled one by one as if each had been put (an `npm install` is mostly such trees)."""
    steps = _Steps()
    try:
        return _apply(entries, journal, whole, steps)
    except Exception as e:
        where = f" at {steps.current}" if steps.current else ""
        failed = steps.reverse()
        if failed:
            raise ApplyFailed(
                f"applying stopped{where} ({e}), and {len(failed)} step(s) could not be "
                f"reversed ({failed[0]}): corral undo takes out what is in",
                partly=True,
            ) from e
        journal.discard()
        raise ApplyFailed(f"applying stopped{where} ({e}); nothing was changed") from e


def _apply(
    entries: list[Entry], journal: Journal, whole: frozenset[str], steps: _Steps
) -> tuple[list[dict[str, str]], list[Entry]]:
    changed: list[dict[str, str]] = []
    left: list[Entry] = []
    later: list[tuple[str, int]] = []  # (path, mode) of directories, set last, deepest first
    moved_until = 0  # entries before this index went with a directory moved whole
    real: set[str] = set()  # host directories known to be real ones (see _parents_...)
    put_back: set[str] = set()  # host paths below a replaced directory the change set has
    for serial, entry in enumerate(entries):
        target = entry.path
        steps.current = target
        if serial >= moved_until:
            _parents_are_directories(entry, real)
        if serial < moved_until:
            if entry.kind == "dir":
                journal.record(op="mkdir", path=target, saved=None)
            else:
                stamp = [entry.ino, entry.size, entry.mtime_ns]
                journal.record(
                    op="put", path=target, saved=None, stat=stamp, index=index_entries(target)
                )
            changed.append({"path": target, "change": "added"})
            continue
        try:
            st: os.stat_result | None = os.lstat(target)
        except FileNotFoundError:
            st = None
        if (
            st is None
            and entry.kind == "dir"
            and target in whole
            and not entry.opaque
            and _same_file_system(entry.source, target)
        ):
            moved_until = _prepare_whole(entries, serial, later)
            os.rename(entry.source, target)
            steps.add(target, lambda t=target, s=entry.source: os.rename(t, s))
            journal.record(op="mkdir", path=target, saved=None)
            changed.append({"path": target, "change": "added"})
            continue
        if entry.kind in ("whiteout", "dir"):
            left.append(entry)
        if entry.kind == "whiteout":
            if st is not None:
                gone = journal.save(target)
                steps.add(target, _restore(journal, gone, target))
                journal.record(op="remove", path=target, saved=gone)
                changed.append({"path": target, "change": "deleted"})
            continue
        old = stat.S_IMODE(st.st_mode) if st is not None else None
        if entry.kind == "dir":
            mode = safe_mode(entry.mode, old)
            if st is not None and stat.S_ISDIR(st.st_mode) and not entry.opaque:
                mode |= old & OWNER if old is not None else 0  # never the owner's own access
                if old != mode:
                    chmod_dir(target, mode)
                    steps.add(target, lambda t=target, m=old: chmod_dir(t, m))
                    journal.record(op="chmod", path=target, old=old)
                continue
            if st is not None and stat.S_ISDIR(st.st_mode):
                # a directory replacing the host's: what it had goes (to the journal)
                taken, back = replaced(entry)
                changed += [{"path": p, "change": "deleted"} for p in taken]
                put_back |= back
            saved = journal.save(target) if st is not None else None
            if saved is not None:
                steps.add(target, _restore(journal, saved, target))
            os.mkdir(target, mode | OWNER)
            steps.add(target, lambda t=target: os.rmdir(t))
            os.chmod(target, mode | OWNER)  # past the umask
            journal.record(op="mkdir", path=target, saved=saved)
            if mode & OWNER != OWNER:
                later.append((target, mode))
            if st is None or not stat.S_ISDIR(st.st_mode):
                # (a directory in a file's place: the file is gone, to the journal)
                changed.append({"path": target, "change": "added" if st is None else "modified"})
            continue
        if st is not None and stat.S_ISDIR(st.st_mode):
            # a file where the host has a directory: all of the directory goes (to the journal)
            changed += [{"path": p, "change": "deleted"} for p in replaced(entry)[0]]
        saved = journal.save(target) if st is not None else None
        if saved is not None:
            steps.add(target, _restore(journal, saved, target))
        copied = _put(entry, target, serial, old if entry.kind == "file" else None)
        steps.add(target, _unput(entry, target, copied))
        if copied:
            left.append(entry)
        journal.record(
            op="put", path=target, saved=saved, stat=_stat(target), index=index_entries(target)
        )
        was_there = st is not None or target in put_back
        changed.append({"path": target, "change": "modified" if was_there else "added"})
    # Modes without the owner's write or search, now that nothing more goes below them:
    # deepest first; undo puts the owner's access back before it takes anything out.
    for target, mode in sorted(later, key=lambda item: item[0].count("/"), reverse=True):
        steps.current = target
        opened = stat.S_IMODE(os.lstat(target).st_mode)
        chmod_dir(target, mode)
        steps.add(target, lambda t=target, m=opened: chmod_dir(t, m))
        journal.record(op="chmod", path=target, old=opened)
    steps.current = ""
    return changed, left


def clear(entries: list[Entry]) -> None:
    """After `apply`: remove from the staging area what was applied and is still there (the
    whiteouts, directories, copies: what `apply` returned), deepest first, so only held
    entries remain."""
    for entry in reversed(entries):
        try:
            _open_to_owner(os.path.dirname(entry.source))
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


__all__ = ["ApplyFailed", "apply", "clear", "discard", "move"]
