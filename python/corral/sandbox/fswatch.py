"""Change notification for a long-lived process (Neovim's Python host): inotify watches on
directories, and the mount table's own change signal. Used to know that nothing a resolved
policy read has changed since (see policy_reuse); Linux only, through the C library already
loaded into this process (nothing is looked up on disk)."""

from __future__ import annotations

import errno
import os
import select

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# What changes a directory's entries or a file: an entry made, removed, renamed, written,
# or its mode, owner, times or link count changed; the file or directory itself removed or
# moved. (No IN_ACCESS or IN_OPEN: reading is no change. No IN_ONLYDIR: a file is watched
# itself, as a change made through another hard link to it reaches only the watches on
# the file and on that other link's directory.)
IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_UNMOUNT, IN_Q_OVERFLOW, IN_IGNORED = 0x2000, 0x4000, 0x8000  # (sent whatever the mask)
MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
    | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
)  # fmt: skip
# a watch that cannot be placed because nothing is there (or a file is where a directory
# was looked for): nothing below it can be looked up either, and the watch on the directory
# above sees it appear
NOTHING_TO_WATCH = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.ENAMETOOLONG})
# at most this many watches before the instance is closed and begun again (each costs the
# kernel about 1 KiB; the user's limit is shared with every other program)
MAX_WATCHES = 20_000

# Filesystems whose changes all pass through this kernel's VFS, where inotify sees every
# change: a network or FUSE filesystem can change on another machine unseen.
LOCAL_TYPES = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "f2fs", "zfs", "bcachefs",
    "jfs", "reiserfs", "nilfs2", "vfat", "exfat", "ntfs3", "hfsplus", "ramfs", "squashfs",
    "iso9660", "erofs", "devtmpfs",
})  # fmt: skip
# The kernel's own filesystems: what they hold changes with the kernel's state (a device, a
# module), not by a write a command could make; a new mount there is seen as a mount.
KERNEL_TYPES = frozenset({
    "sysfs", "securityfs", "debugfs", "tracefs", "pstore", "efivarfs", "configfs", "bpf",
    "cgroup", "cgroup2", "fusectl", "binfmt_misc", "hugetlbfs", "mqueue",
})  # fmt: skip


class Watcher:
    """One inotify instance and the mount table's poll. `changed()` says whether anything
    watched changed, or any mount came or went, since the last call. What each path names is
    remembered (watched, or nothing there) until an event says it may name something else
    (a name made, removed or renamed on its way), so a resolution after a change watches
    only what changed again."""

    def __init__(self) -> None:
        import ctypes

        self._libc: Any = ctypes.CDLL(None, use_errno=True)
        self._ctypes = ctypes
        self._fd = -1
        self._mounts: Any = None
        self._poll: Any = None
        self._types: dict[int, str] = {}
        # path -> (watch descriptor or -1, errno or 0, filesystem type)
        self._known: dict[str, tuple[int, int, str]] = {}
        self._spellings: dict[int, set[str]] = {}  # descriptor -> the paths that named it
        self._below: dict[str, set[str]] = {}  # path -> the known paths one level below
        # paths whose watch, and every watch on their way, stands as it was placed (a
        # caller's to fill: what it found needs nothing more)
        self.settled: set[str] = set()
        self._open()

    def _open(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(self._ctypes.get_errno(), "inotify_init1")
        self._fd = fd
        self._known, self._spellings, self._below = {}, {}, {}
        self.settled = set()
        if self._mounts is None:
            self._mounts = open("/proc/self/mountinfo", "rb")  # noqa: SIM115 (kept open)
            self._poll = select.poll()
            self._poll.register(self._mounts, select.POLLPRI | select.POLLERR)
            self._read_mounts()

    def _read_mounts(self) -> None:
        """Read the mount table (which also resets its change signal): device -> type."""
        self._mounts.seek(0)
        types: dict[int, str] = {}
        for line in self._mounts.read().split(b"\n"):
            fields = line.split(b" ")
            if b"-" not in fields or len(fields) < 5:
                continue
            major, _, minor = fields[2].partition(b":")
            kind = fields[fields.index(b"-") + 1].decode("ascii", "replace")
            types[os.makedev(int(major), int(minor))] = kind
        self._types = types

    def watch(self, path: str, stat: Callable[[str], os.stat_result]) -> tuple[int, str]:
        """Watch what `path` names, a directory or a file (symlinks on the way followed, as
        a lookup follows them): (0 or the errno, its filesystem's type). NOTHING_TO_WATCH:
        nothing there. `stat`: os.stat as it is while a resolution is traced."""
        known = self._known.get(path)
        if known is not None:
            return known[1], known[2]
        if len(self._spellings) >= MAX_WATCHES:
            return errno.ENOSPC, ""
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), MASK)
        err, kind = 0, ""
        if wd < 0:
            err = int(self._ctypes.get_errno()) or errno.EINVAL
            if err not in NOTHING_TO_WATCH:
                return err, ""  # (not remembered: tried again next time)
        else:
            try:
                kind = self._types.get(stat(path).st_dev, "")
            except OSError:
                err = errno.ENOENT  # (gone since: the watch on its directory saw that)
            self._spellings.setdefault(wd, set()).add(path)
        self._known[path] = (wd, err, kind)
        parent = path.rsplit("/", 1)[0] or "/"
        if parent != path:
            self._below.setdefault(parent, set()).add(path)
        return err, kind

    def depends(self, on: str, path: str) -> None:
        """`path` (a symlink) names what `on` (its target) names: forgotten with it."""
        self._below.setdefault(on, set()).add(path)

    def _forget(self, path: str) -> None:
        """Forget what `path` and every known path below it name."""
        todo = [path]
        while todo:
            path = todo.pop()
            known = self._known.pop(path, None)
            self.settled.discard(path)
            if known is not None and known[0] in self._spellings:
                self._spellings[known[0]].discard(path)
            todo.extend(self._below.pop(path, ()))

    def _forget_all(self) -> None:
        self._known, self._below, self.settled = {}, {}, set()
        self._spellings = {wd: set() for wd in self._spellings}

    def _events(self, data: bytes) -> None:
        """Forget what the names these events are about name."""
        import struct

        at = 0
        while at + 16 <= len(data):
            wd, mask, _, size = struct.unpack_from("iIII", data, at)
            name = os.fsdecode(data[at + 16 : at + 16 + size].rstrip(b"\0"))
            at += 16 + size
            if mask & (IN_Q_OVERFLOW | IN_UNMOUNT):
                self._forget_all()
            elif mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED):
                for path in list(self._spellings.get(wd, ())):
                    self._forget(path)
                if mask & IN_IGNORED:
                    self._spellings.pop(wd, None)
            elif mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO) and name:
                for path in list(self._spellings.get(wd, ())):
                    self._forget(f"{path.rstrip('/')}/{name}")

    def changed(self) -> bool:
        """Whether anything changed since the last call (events are drained)."""
        changed = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            if not data:
                break
            changed = True
            self._events(data)
        if self._poll.poll(0):
            self._read_mounts()
            self._forget_all()  # (a mount on a path's way changes what it names)
            changed = True
        return changed

    def restart(self) -> None:
        """Drop every watch (too many gathered): the next resolutions watch anew."""
        self._open()
