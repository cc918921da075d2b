"""Read an overlay's upper directory as a list of changes.

Everything in it was written by the sandboxed command, so it is read as hostile input: lstat
only (no link is ever followed), an explicit stack instead of recursion (a 1500-level tree is
just a long list), a bound on the number of entries, and every error kept as a value for the
report instead of raised. Parents come before their children.

What overlayfs leaves in the upper directory (userxattr mode, as in a user namespace):
- a whiteout, a character device 0:0, where the command deleted a file or directory;
- an opaque directory (xattr `user.overlay.opaque` = "y"): it replaced a directory, whose old
  contents are gone;
- copied-up files carry `user.overlay.origin`; renaming a directory that exists below fails
  with EXDEV (no redirect_dir without privilege), so tools copy it instead (mv does).
"""

from __future__ import annotations

import os
import stat

from corral.frozen import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_ENTRIES = 1_000_000
OPAQUE = "user.overlay.opaque"


class Entry(Frozen):
    """One path of a change set. `rel` is relative to its writable root; `kind` is one of
    dir, file, link, whiteout, special."""

    __slots__ = (
        "ino", "kind", "mode", "mtime_ns", "nlink", "opaque", "path", "rel", "root", "size",
        "source", "target",
    )  # fmt: skip
    root: str  # the writable root (host path)
    rel: str
    source: str  # the path in the upper directory
    kind: str
    mode: int
    size: int
    nlink: int
    opaque: bool  # a directory that replaced the one below
    target: str  # a symlink's target
    ino: int  # in the staging area; a rename keeps it, and the size and mtime
    mtime_ns: int

    path: str  # where it goes on the host: root/rel, joined once (the check reads it often)

    def __init__(self, **values: Any) -> None:
        self._set(**values, path=os.path.join(values["root"], values["rel"]))

    def upper_root(self) -> str:
        """The staging area's copy of the entry's writable root (source less rel)."""
        return self.source[: len(self.source) - len(self.rel)].rstrip("/")

    def staged(self, path: str) -> str:
        """Where the staging area would hold `path`, a host path in the entry's root."""
        return os.path.join(self.upper_root(), os.path.relpath(path, self.root))


def _kind(st: os.stat_result) -> str:
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISLNK(st.st_mode):
        return "link"
    if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
        return "whiteout"
    return "special"


def same_bytes(staged: str, host: str) -> bool:
    """Whether a staged file holds exactly what the host's does (both regular files)."""
    import filecmp

    try:
        if not (stat.S_ISREG(os.lstat(staged).st_mode) and stat.S_ISREG(os.lstat(host).st_mode)):
            return False
        return filecmp.cmp(staged, host, shallow=False)
    except OSError:
        return False


def will_be_file(entry: Entry, path: str) -> bool:
    """Whether `path`, a host path in `entry`'s root, is a regular file once the change set
    is applied: the staging area's copy when it has one (a whiteout is none), else the
    host's, unless a directory above it is replaced (opaque) or made something else there
    (r53b VENVOPAQUE: `rm -rf psutil; mkdir psutil` left the host's pyvenv.cfg counted)."""
    staged = entry.staged(path)
    try:
        st = os.lstat(staged)
        return stat.S_ISREG(st.st_mode)
    except OSError:
        pass
    upper = entry.upper_root()
    above = os.path.dirname(staged)
    while len(above) > len(upper):
        try:
            st = os.lstat(above)
        except OSError:
            above = os.path.dirname(above)
            continue
        if not stat.S_ISDIR(st.st_mode) or _opaque(above):
            return False
        above = os.path.dirname(above)
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _opaque(path: str) -> bool:
    try:
        return os.getxattr(path, OPAQUE, follow_symlinks=False) == b"y"
    except OSError:
        return False


def scan(root: str, upper: str, limit: int = MAX_ENTRIES) -> tuple[list[Entry], list[str]]:
    """(entries, problems): problems name what could not be read; its changes stay held."""
    entries: list[Entry] = []
    problems: list[str] = []
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        directory = os.path.join(upper, rel_dir) if rel_dir else upper
        try:
            with os.scandir(directory) as it:
                listed = list(it)
        except OSError as e:
            problems.append(f"{os.path.join(root, rel_dir)}: cannot be read ({e.strerror})")
            continue
        for item in listed:
            if len(entries) >= limit:
                problems.append(f"more than {limit} changed paths: the rest is held unread")
                return entries, problems
            rel = os.path.join(rel_dir, item.name) if rel_dir else item.name
            try:
                st = item.stat(follow_symlinks=False)
                kind = _kind(st)
                if kind in ("file", "link") and _bytecode(rel_dir, item.name, kind):
                    os.unlink(item.path)  # (dropped, never applied: see _bytecode)
                    continue
                target = os.readlink(item.path) if kind == "link" else ""
            except OSError as e:
                problems.append(f"{os.path.join(root, rel)}: cannot be read ({e.strerror})")
                continue
            entries.append(
                Entry(
                    root=root,
                    rel=rel,
                    source=item.path,
                    kind=kind,
                    mode=stat.S_IMODE(st.st_mode),
                    size=st.st_size,
                    nlink=st.st_nlink,
                    opaque=kind == "dir" and _opaque(item.path),
                    target=target,
                    ino=st.st_ino,
                    mtime_ns=st.st_mtime_ns,
                )
            )
            if kind == "dir":
                stack.append(rel)
    return _parents_first(entries), problems


BOOTSNAP_CACHES = ("compile-cache", "load-path-cache")


def _bytecode(rel_dir: str, name: str, kind: str = "file") -> bool:
    """Python's bytecode cache (`__pycache__/`: its files and links, and a link or file by
    that name) is never taken from a change set: an unchecked-hash .pyc runs in place of its
    source without being compared with it, so one forged for your unchanged app.py ran at
    pytest with `git diff` empty, and one beside a reviewed stub ran once you applied the
    stub (review r48b PYCOWN, PYCLINK). Python writes them again; a sourceless `x.pyc`
    outside `__pycache__` is a module, judged as one."""
    # (anything in a __pycache__: a link named like a .pyc to a forged one beside it ran,
    # r49b PYCSYMLINK; a `__pycache__` that is a link itself, to a directory of forged ones
    # elsewhere in the workspace, r51b PYCDIRLINK)
    if os.path.basename(rel_dir) == "__pycache__" or name == "__pycache__":
        return True
    # Ruby's twin: bootsnap's compile cache (`tmp/cache/bootsnap/compile-cache-iseq/`, in
    # every Rails app), keyed by a source's path, size and time, loaded in place of it
    # (r77b BOOTSNAPCACHE); bootsnap writes it again
    parts = [*rel_dir.split("/"), name]
    if "bootsnap" in parts[:-1]:
        below = parts[parts.index("bootsnap") + 1 :]
        return below[0].startswith(BOOTSNAP_CACHES)
    return kind == "link" and name == "bootsnap"  # (a link to a forged cache elsewhere)


def _parents_first(entries: list[Entry]) -> list[Entry]:
    # Sorting by path components keeps every directory before its contents.
    return sorted(entries, key=lambda e: e.rel.split("/"))


MAX_REPLACED = 10_000


def replaced(entry: Entry) -> tuple[list[str], frozenset[str]]:
    """What an entry does to a host directory at its path, when it replaces it (`rm -rf d;
    mkdir d`, an opaque directory; or a file put where the directory was): (the host paths
    below it that go, a directory counting for all below it; the host paths the change set
    puts back). Applying moves the host's directory whole into the undo journal, so these are
    deletions to show and count. The change set's side is read without following its links:
    a link where the host has a directory puts nothing back below it."""
    if not os.path.isdir(entry.path) or os.path.islink(entry.path):
        return [], frozenset()
    if entry.kind == "dir" and not entry.opaque:
        return [], frozenset()  # merged with the host's, entry by entry
    if entry.kind == "whiteout":
        return [], frozenset()  # counted as the deletion of the directory itself
    gone: list[str] = []
    back: set[str] = set()
    stack = [""] if entry.kind == "dir" else []
    if entry.kind != "dir":
        gone = [os.path.join(entry.path, n) for n in sorted(os.listdir(entry.path))]
    while stack and len(gone) < MAX_REPLACED:  # (what comes back is not counted)
        rel = stack.pop()
        try:
            items = list(os.scandir(os.path.join(entry.path, rel)))
        except OSError:
            continue
        for item in items:
            below = os.path.join(rel, item.name)
            try:
                staged = os.lstat(os.path.join(entry.source, below))
            except OSError:
                gone.append(os.path.join(entry.path, below))
                continue
            host_dir = item.is_dir(follow_symlinks=False)
            if host_dir and not stat.S_ISDIR(staged.st_mode):
                gone.append(os.path.join(entry.path, below))  # a file or link in its place
                continue
            back.add(os.path.join(entry.path, below))
            if host_dir:
                stack.append(below)
    return sorted(gone), frozenset(back)
