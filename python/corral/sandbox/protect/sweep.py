"""After a run with direct writes: remove what the sandbox created at watched paths, and put
back protected symlinks it changed, never following a link it may have planted on the way.
"""

from __future__ import annotations

import errno
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


def _open_parent(path: str) -> int:
    """A descriptor of `path`'s directory, opened one component at a time without following
    any symlink: the sweep runs after a sandboxed command that may have turned a directory on
    the way into a link to anywhere (a missing `sub/` of a protected `sub/.envrc` made a link
    to the user's other project would have the sweep delete that project's .envrc)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open("/", flags)
    try:
        for part in os.path.dirname(path).split("/"):
            if part:
                next_fd = os.open(part, flags, dir_fd=fd)
                os.close(fd)
                fd = next_fd
    except OSError:
        os.close(fd)
        raise
    return fd


def _remove(path: str) -> None:
    import stat

    parent = _open_parent(path)
    name = os.path.basename(path)
    try:
        if stat.S_ISDIR(os.lstat(name, dir_fd=parent).st_mode):
            import shutil

            shutil.rmtree(name, dir_fd=parent)
        else:
            os.unlink(name, dir_fd=parent)
    finally:
        os.close(parent)


def sweep(watch: Iterable[str], links: Iterable[tuple[str, str]] = ()) -> list[str]:
    """After a run: remove watched paths that appeared, put back protected symlinks that were
    changed. Returns one line per repair, for the user to see."""
    repaired = []
    for path in watch:
        if not os.path.lexists(path):
            continue
        try:
            _remove(path)
            repaired.append(f"removed {path}: created inside the sandbox")
        except OSError as e:
            why = e.strerror
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                why = "a directory on the way was replaced by a symlink; check it, nothing removed"
            repaired.append(f"could not remove {path}, created inside the sandbox: {why}")
    for path, target in links:
        if os.path.islink(path) and os.readlink(path) == target:
            continue
        try:
            if os.path.lexists(path):
                _remove(path)
            parent = _open_parent(path)
            try:
                os.symlink(target, os.path.basename(path), dir_fd=parent)
            finally:
                os.close(parent)
            repaired.append(f"restored the symlink {path} -> {target}: changed inside the sandbox")
        except OSError as e:
            repaired.append(f"could not restore the symlink {path} -> {target}: {e.strerror}")
    return repaired
