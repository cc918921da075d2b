"""Keep a sandboxed command from planting code that git on the host would run.

`.git` inside a writable root must stay writable (objects, refs, the index, lock files), so
protection is by name:
- `.git` itself is pinned (a mount point cannot be renamed or replaced);
- existing control files (hooks, config, commondir, config.worktree), also those of existing
  submodules under `.git/modules`, are kept read-only;
- a missing hooks directory is created empty before the run (as `git init` does; it is inside
  `.git`, so `git status` never shows it) and kept read-only;
- control files that cannot be pre-created (an empty `commondir` breaks git) are watched: one
  the sandbox created is removed after the run by `sweep`.
A worktree's `.git` is a file naming its git dir: the file is kept read-only, and the control
files of that git dir and of the common dir it names are handled as above.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

HOOKS = "hooks"
MAX_MODULE_DEPTH = 6  # submodule names may contain "/", and submodules nest


class Protection:
    """What to do for one writable root: plain lists, merged into the Policy."""

    __slots__ = ("create_dirs", "links", "pinned", "read_only", "watch")

    def __init__(self) -> None:
        self.pinned: list[str] = []
        self.read_only: list[str] = []
        self.create_dirs: list[str] = []
        self.watch: list[str] = []
        self.links: list[tuple[str, str]] = []  # symlinks that must still point there after

    def control_files(self, git_dir: str, names: Iterable[str]) -> None:
        for name in names:
            path = os.path.join(git_dir, name)
            if os.path.lexists(path):
                self.read_only.append(path)
            elif name == HOOKS:
                self.create_dirs.append(path)
            else:
                self.watch.append(path)


def _read_pointer(path: str, prefix: str = "") -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            line = f.readline().strip()
    except OSError:
        return None
    if not line.startswith(prefix):
        return None
    return line[len(prefix) :].strip() or None


def _submodule_git_dirs(git_dir: str) -> list[str]:
    """Git dirs of existing submodules: .git/modules/<name>[/modules/<name>...]."""
    found: list[str] = []
    stack = [(os.path.join(git_dir, "modules"), 0)]
    while stack:
        directory, depth = stack.pop()
        try:
            entries = [e for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for entry in entries:
            if os.path.isfile(os.path.join(entry.path, "HEAD")):
                found.append(entry.path)
                if depth < MAX_MODULE_DEPTH:
                    stack.append((os.path.join(entry.path, "modules"), depth + 1))
            elif depth < MAX_MODULE_DEPTH:
                stack.append((entry.path, depth + 1))  # a name with "/" in it
    return found


def protect(root: str, names: Iterable[str]) -> Protection:
    """Protection for the repository or worktree at `root`; `names` are the `.git/…` entries
    of `sandbox.policy.protected`, without the `.git/` prefix."""
    names = tuple(names)
    result = Protection()
    dot_git = os.path.join(root, ".git")
    if os.path.islink(dot_git):
        # (the layout of Android's repo tool) the link itself can be swapped for a directory
        # of the sandbox's making: put back after the run; the real git dir is protected.
        result.links.append((dot_git, os.readlink(dot_git)))
        dot_git = os.path.realpath(dot_git)
    if os.path.isdir(dot_git):
        for git_dir in (dot_git, *_submodule_git_dirs(dot_git)):
            result.pinned.append(git_dir)
            result.control_files(git_dir, names)
        return result
    if not os.path.isfile(dot_git):
        return result
    result.read_only.append(dot_git)  # the pointer must not be re-pointed
    target = _read_pointer(dot_git, "gitdir:")
    if target is None:
        return result
    git_dir = os.path.realpath(os.path.join(root, target))
    common = _read_pointer(os.path.join(git_dir, "commondir"))
    common_dir = os.path.realpath(os.path.join(git_dir, common)) if common else git_dir
    result.pinned.append(git_dir)  # a separate git dir or a worktree's: not to be swapped
    result.control_files(git_dir, (n for n in names if n != HOOKS))  # hooks live in common
    if common_dir != git_dir:
        result.pinned.append(common_dir)
        result.control_files(common_dir, names)
    return result


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        import shutil

        shutil.rmtree(path)
    else:
        os.unlink(path)


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
            repaired.append(f"could not remove {path}, created inside the sandbox: {e.strerror}")
    for path, target in links:
        if os.path.islink(path) and os.readlink(path) == target:
            continue
        try:
            if os.path.lexists(path):
                _remove(path)
            os.symlink(target, path)
            repaired.append(f"restored the symlink {path} -> {target}: changed inside the sandbox")
        except OSError as e:
            repaired.append(f"could not restore the symlink {path} -> {target}: {e.strerror}")
    return repaired
