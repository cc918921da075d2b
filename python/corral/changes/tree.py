"""Whole-tree operations on what a sandboxed command made: sizes, copies, removal.

Iterative, never following links: shutil's and os.walk's recursion (Python 3.11) ends in
RecursionError on a tree 1000 levels deep, which any command can make in a second.
"""

from __future__ import annotations

import os
import stat


def _entries(path: str) -> list[os.DirEntry[str]]:
    with os.scandir(path) as it:
        return list(it)


def size(path: str) -> int:
    """Bytes below `path` (itself included) as they take space on disk, by lstat: a sparse
    file counts what it holds, not its length (8 GiB of holes are free to keep)."""
    total = 0
    stack = [path]
    while stack:
        current = stack.pop()
        try:
            st = os.lstat(current)
        except OSError:
            continue
        total += st.st_blocks * 512
        if stat.S_ISDIR(st.st_mode):
            try:
                stack.extend(e.path for e in _entries(current))
            except OSError:
                pass
    return total


def remove(path: str) -> None:
    """Delete `path` and everything below it; directories without write or search permission
    (an overlay's work directory, mode 000) are opened up first. Walked by directory
    descriptors, not by path names: a command can nest directories past PATH_MAX, and a
    change set it leaves must still go."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        return
    parent, name = os.path.split(path.rstrip("/"))
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    top = os.open(parent or "/", flags)
    # (the directory holding it, its name, its own descriptor once listed)
    stack: list[tuple[int, str, int | None]] = [(top, name, None)]
    try:
        while stack:
            holder, name, fd = stack.pop()
            if fd is not None:  # everything below it is gone
                os.close(fd)
                os.rmdir(name, dir_fd=holder)
                continue
            os.chmod(name, 0o700, dir_fd=holder)
            fd = os.open(name, flags, dir_fd=holder)
            stack.append((holder, name, fd))
            with os.scandir(fd) as it:
                for entry in list(it):
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((fd, entry.name, None))
                    else:
                        os.unlink(entry.name, dir_fd=fd)
    finally:
        for _, _, fd in stack:
            if fd is not None:
                os.close(fd)
        os.close(top)


def copy(source: str, destination: str) -> None:
    """Copy a file, link or directory tree (links as links, modes kept)."""
    stack = [(source, destination)]
    while stack:
        src, dst = stack.pop()
        st = os.lstat(src)
        if stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(src), dst)
        elif stat.S_ISDIR(st.st_mode):
            os.mkdir(dst, 0o700)
            for entry in _entries(src):
                stack.append((entry.path, os.path.join(dst, entry.name)))
            os.chmod(dst, stat.S_IMODE(st.st_mode))
        else:
            import shutil  # only here: ~8 ms to import, and most runs never copy

            shutil.copy2(src, dst, follow_symlinks=False)


def chmod_dir(path: str, mode: int) -> None:
    """chmod the directory at `path` itself, never through a link put in its place, whatever
    its own mode (0000 included: opened as a path, not for reading)."""
    fd = os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.chmod(f"/proc/self/fd/{fd}", mode)
    finally:
        os.close(fd)
