"""A resolved policy reused while nothing it was read from has changed (Neovim's Python host
only: a `corral run` resolves once and exits).

A resolution reads a few thousand paths: the workspace's entries (a repository, a `.envrc`,
a `.env` made by the last command must be protected or hidden in the next), your home's
tool directories, the system's private files. Each path it looks up is traced while it
runs, and before the lookup every directory on the path's way, and what it names, gets an
inotify watch. The answer is reused for the same request until any watch reports a change
or any mount comes or goes; then it is resolved afresh. It is not reused where that could
miss a change: a lookup through a descriptor, a program started, a filesystem whose changes
may come from elsewhere (network, FUSE), a watch the kernel refuses, users looked up
elsewhere than in files.

Tracing covers the lookups Python's own functions make: `os.stat`, `os.lstat`,
`os.readlink` and `os.access` (which `os.path` calls) while a resolution runs, and the audit
events of every open, listing and program start (`sys.addaudithook`). Two lookups happen in
C and are made visible: a listing's symlink entries (os.scandir gives them as entries that
ask os.stat, for DirEntry.is_dir and glob alike) and user names (pwd: the files
nsswitch.conf names are watched). A symlink on a path's way is followed, and the way to its
target watched too."""

from __future__ import annotations

import errno
import os
import stat
import sys
import threading

from corral.sandbox.fswatch import KERNEL_TYPES, LOCAL_TYPES, NOTHING_TO_WATCH, Watcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

# what a request's policy depends on (besides the file system): see service._layers
REQUEST_KEYS = ("layers", "sources", "buffer_trusted", "chat_files", "cwd", "buffer_path")
KEEP = 16  # policies kept (a few chats, a few directories)
MAX_LINKS = 40  # symlinks followed on one path's way (the kernel's own limit)
MOUNT_TABLES = frozenset({"/proc/self/mountinfo", "/proc/self/mounts", "/proc/mounts"})
LOOKUPS = ("stat", "lstat", "readlink", "access")
_REAL = {name: getattr(os, name) for name in LOOKUPS}
# events whose path is looked up (open: builtins.open, io.open, os.open; listings)
PATH_EVENTS = frozenset({"open", "os.listdir", "os.scandir"})
# events after which what was read cannot be known
UNSURE_EVENTS = frozenset({
    "subprocess.Popen", "os.posix_spawn", "os.exec", "os.system", "os.fork", "os.forkpty",
    "os.spawn", "os.chdir", "os.fchdir", "os.chroot",
})  # fmt: skip

# The trace running, if any: one name read once by every hook, never a list indexed after a
# test (the host's other threads call os.stat too, and a list emptied between the test and
# the index raised IndexError in them, r91c AUDITHOOKRACE).
_current: Trace | None = None
_hooked = False
# the databases a user name is looked up in (pwd): followed only where they are files here
# (not "systemd": nss-systemd also reads userdb records and asks systemd-homed, r92a)
NSS_FILES = frozenset({"files", "compat"})


def _spelled(name: str) -> str:
    """One spelling of an absolute path for the same lookup (`a//b`, `a/b/`: `a/b`): the
    watcher's memory is keyed by spelling (see fswatch)."""
    while "//" in name:
        name = name.replace("//", "/")
    return name.rstrip("/") or "/"


class Trace:
    """The lookups of one resolution, each watched before it is made."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher
        self.thread = threading.get_ident()
        self.seen = watcher.settled  # (what needs no look: see fswatch.Watcher)
        self.unsure = ""  # why this resolution cannot be reused ("" when it can)
        self.full = False  # (no watch left: begin again)

    def path(self, path: Any, dir_fd: Any = None) -> None:
        if threading.get_ident() != self.thread or self.unsure:
            return  # (another thread's lookup; or already not reusable)
        if isinstance(path, int) or dir_fd is not None:
            self.unsure = "a lookup through a file descriptor"
            return
        try:
            name = os.fsdecode(path)
        except TypeError:
            self.unsure = f"a lookup of {path!r}"
            return
        if name.startswith("/proc/self/fd/") and name[14:].isdigit():
            return  # (a descriptor's name: what it was opened on was looked up then; not a
            # lookup below it, which goes through that directory, r91c PROCFDPREFIX)
        if name in MOUNT_TABLES:
            return  # (the watcher reads it too: a mount made or removed since is seen)
        if not name.startswith("/"):
            if name and name != ".":
                self.unsure = f"a lookup of the relative path {name!r}"
                return
            name = os.getcwd()
        self._watch(_spelled(name))

    def _watch(self, name: str, links: int = 0) -> None:
        """Watch `name` and every directory on its way, outermost first (a change below
        one that is watched is seen from the moment the watch stands); a symlink on the way
        is followed, its target's way watched too (`links`: how many were followed)."""
        todo = []
        while name not in self.seen:
            todo.append(name)
            parent = name.rsplit("/", 1)[0] or "/"
            if parent == name:
                break
            name = parent
        for name in reversed(todo):
            if self._follow(name, links):
                return
            err, kind = self.watcher.watch(name, _REAL["stat"])
            if err in NOTHING_TO_WATCH or kind in KERNEL_TYPES:
                self.seen.add(name)
                return
            if err == errno.EACCES and (name is todo[0] or not _REAL["access"](name, os.X_OK)):
                # What was looked up itself, not below it (another user's home); or one
                # this user cannot pass through (0700), so nothing below it can be looked
                # up: the watch on its directory sees it made, removed, renamed or its mode
                # changed. (One that can be passed through but not read, 0711: unsure.)
                return
            if err:
                self.full = err == errno.ENOSPC
                self.unsure = f"{name} cannot be watched ({os.strerror(err)})"
                return
            if kind not in LOCAL_TYPES:
                self.unsure = f"{name} is on a filesystem that can change unseen ({kind})"
                return
            self.seen.add(name)

    def _follow(self, name: str, links: int) -> bool:
        """Watch the way to a symlink's target (a watch on the link follows it to where it
        leads now, but a link on the target's way re-pointed, or a target made later, is
        seen only there: r90a). True when this resolution is no longer reusable."""
        try:
            if not stat.S_ISLNK(_REAL["lstat"](name).st_mode):
                return False
            target = _REAL["readlink"](name)
        except OSError:
            return False  # (gone: its directory's watch has seen that)
        if links >= MAX_LINKS:
            self.unsure = f"{name}: more than {MAX_LINKS} symlinks on its way"
            return True
        if not target.startswith("/"):
            target = f"{name.rsplit('/', 1)[0]}/{target}"
        target = _spelled(target)
        self._watch(target, links + 1)
        # (what the link names changes when its target's does: forgotten with it)
        self.watcher.depends(target, name)
        return bool(self.unsure)

    def users(self) -> None:
        """A user's entry was asked (pwd: `~name`, a uid's home): it is read from the files
        /etc/nsswitch.conf names, by C code the trace does not see; those files are watched
        where they are files, and elsewhere (LDAP, sssd) nothing is kept (r91c)."""
        if threading.get_ident() != self.thread or self.unsure:
            return
        self._watch("/etc/nsswitch.conf")
        try:
            with open("/etc/nsswitch.conf", encoding="utf-8", errors="replace") as f:
                text = f.read()
        except FileNotFoundError:
            text = ""  # (glibc's default then: files)
        except OSError as e:
            self.unsure = f"/etc/nsswitch.conf cannot be read ({e.strerror})"
            return
        sources = passwd_sources(text)
        if not set(sources) <= NSS_FILES:
            self.unsure = f"user names are looked up in {' '.join(sources)} (nsswitch.conf)"
            return
        self._watch("/etc/passwd")


def passwd_sources(nsswitch: str) -> list[str]:
    """The sources nsswitch.conf's text names for user names: every `passwd` line, however
    spaced (`passwd:sss`, `passwd :sss`), each word but the [STATUS=action] ones; glibc's
    default (files) without one (r92a NSSPARSEFAILOPEN: the first line's words alone)."""
    sources: list[str] = []
    for line in nsswitch.splitlines():
        name, colon, rest = line.split("#", 1)[0].partition(":")
        if colon and name.strip() == "passwd":
            sources += [w for w in rest.split() if not w.startswith("[")]
    return sources or ["files"]


def _traced(name: str) -> Callable[..., Any]:
    real = _REAL[name]

    def lookup(path: Any, *args: Any, **kwargs: Any) -> Any:
        trace = _current
        # (most lookups are of a path looked up before: answered here)
        if trace is not None and (
            path.__class__ is not str or path not in trace.seen or "dir_fd" in kwargs
        ):
            trace.path(path, kwargs.get("dir_fd"))
        return real(path, *args, **kwargs)

    return lookup


class _LinkEntry:
    """A directory entry that is a symlink, as os.scandir gives it while a resolution is
    traced: what it leads to is asked through os.stat, which is traced, where DirEntry asks
    by a stat in C that is not (a link whose target appeared later went unseen, r90a; glob's
    listing of a pattern's directories asks so, r91c POLICYREUSEGLOB)."""

    __slots__ = ("_entry", "name", "path")

    def __init__(self, entry: os.DirEntry[str]) -> None:
        self._entry, self.name, self.path = entry, entry.name, entry.path

    def is_symlink(self) -> bool:
        return True

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return follow_symlinks and os.path.isdir(self.path)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return follow_symlinks and os.path.isfile(self.path)

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        return os.stat(self.path) if follow_symlinks else self._entry.stat(follow_symlinks=False)

    def inode(self) -> int:
        return self._entry.inode()

    def __fspath__(self) -> str:
        return self.path


class _Listing:
    """os.scandir's iterator, its symlinks given as _LinkEntry."""

    def __init__(self, listing: Any) -> None:
        self._listing = listing

    def __iter__(self) -> _Listing:
        return self

    def __next__(self) -> Any:
        entry = next(self._listing)
        return _LinkEntry(entry) if entry.is_symlink() else entry

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        self._listing.close()

    def close(self) -> None:
        self._listing.close()


_REAL_SCANDIR = os.scandir


def _scandir(path: Any = ".") -> Any:
    listing = _REAL_SCANDIR(path)  # (its path is traced by the audit hook)
    if _current is None or isinstance(path, int):
        # (a listing by descriptor names its entries relative to it: os.stat of their
        # names would ask another file, r92a FDSCANDIRLINK; such a trace is unsure anyway)
        return listing
    return _Listing(listing)


def _users(real: Callable[..., Any]) -> Callable[..., Any]:
    def lookup(*args: Any) -> Any:
        trace = _current  # (read once: see _current)
        if trace is not None:
            trace.users()
        return real(*args)

    return lookup


_TRACED: dict[str, Any] = {name: _traced(name) for name in LOOKUPS}
_TRACED["scandir"] = _scandir


def _audit(event: str, args: tuple[Any, ...]) -> None:
    trace = _current
    if trace is None:
        return
    if event in PATH_EVENTS:
        trace.path(args[0] if args and args[0] is not None else ".")
    elif event in UNSURE_EVENTS and threading.get_ident() == trace.thread:
        trace.unsure = f"it ran {event}"


class PolicyReuse:
    """Resolved (config, policy) pairs by request, reused while nothing they were read from
    changed. `hits`, `fresh` and `unsure` (why the last resolution was not kept) say how it
    goes, for :checkhealth."""

    def __init__(self) -> None:
        global _hooked
        self.watcher = Watcher()
        if not _hooked:
            sys.addaudithook(_audit)  # (for the process's life: it does nothing untraced)
            _hooked = True
        self.kept: dict[str, Any] = {}
        self.hits = self.fresh = 0
        self.unsure = ""

    def get(self, request: Mapping[str, Any], resolve: Callable[[], Any]) -> Any:
        """`resolve()`'s answer for `request`, reused while nothing it read changed."""
        import json

        key = json.dumps([request.get(k) for k in REQUEST_KEYS], sort_keys=True, default=repr)
        key += "\0" + (os.getcwd() if not request.get("cwd") else "")
        if self.watcher.changed():
            self.kept.clear()  # (a change during a resolution is seen here, at the next call)
        if key in self.kept:
            self.hits += 1
            return self.kept[key]
        self.fresh += 1
        global _current
        trace = _current = Trace(self.watcher)
        import pwd

        users = {name: getattr(pwd, name) for name in ("getpwnam", "getpwuid", "getpwall")}
        for name, real in users.items():
            setattr(pwd, name, _users(real))
        for name in (*LOOKUPS, "scandir"):
            setattr(os, name, _TRACED[name])
        try:
            answer = resolve()
        finally:
            for name in LOOKUPS:
                setattr(os, name, _REAL[name])
            os.scandir = _REAL_SCANDIR
            for name, real in users.items():
                setattr(pwd, name, real)
            _current = None
        self.unsure = trace.unsure
        if trace.unsure:
            if trace.full:
                # Every watch goes, with no event to say so: no kept answer can be trusted
                # any more (r89a RESTARTSTALE: a command that made its own resolution fill
                # the watches froze every other chat's kept policy).
                self.watcher.restart()
                self.kept.clear()
            return answer
        # (a change during the resolution is in the queue: the next get() sees it)
        self.kept[key] = answer
        while len(self.kept) > KEEP:
            del self.kept[next(iter(self.kept))]
        return answer
