"""Which repository a git command started in a directory works on, and whether corral keeps its
config out of a sandboxed command's reach.

git obeys the config of the repository it finds (core.fsmonitor, core.pager, diff textconv and
external drivers run programs), so `git log -p` is only as read-only as that config is safe. It
looks in each directory from the start upwards for a `.git` (directory or pointer file), then
whether the directory itself is a bare repository; the first hit wins.
"""

from __future__ import annotations

import os

from corral.sandbox.protect.gitguard import _read_pointer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.sandbox.policy import Policy


def _is_bare(directory: str) -> bool:
    return (
        os.path.isfile(os.path.join(directory, "HEAD"))
        and os.path.isdir(os.path.join(directory, "objects"))
        and os.path.isdir(os.path.join(directory, "refs"))
    )


def config_files(start: str) -> tuple[str, list[str]] | None:
    """(how git finds it: "none", "dot-git" or "bare"; the config files it reads), or None
    when it would find a repository that cannot be reasoned about here."""
    directory = os.path.realpath(start)
    while True:
        dot_git = os.path.join(directory, ".git")
        if os.path.isdir(dot_git):
            how, git_dir = "dot-git", dot_git
            break
        if os.path.lexists(dot_git):
            target = _read_pointer(dot_git, "gitdir:")
            if target is None:
                return None
            how, git_dir = "dot-git", os.path.normpath(os.path.join(directory, target))
            break
        if _is_bare(directory):
            how, git_dir = "bare", directory
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            return "none", []
        directory = parent
    files = [os.path.join(git_dir, "config"), os.path.join(git_dir, "config.worktree")]
    common = _read_pointer(os.path.join(git_dir, "commondir"))
    if common is not None:
        files.append(os.path.join(os.path.normpath(os.path.join(git_dir, common)), "config"))
    return how, files


def config_is_safe(start: str, policy: Policy) -> bool:
    """Whether no sandboxed command can have written the config of the repository git would
    use when started in `start` (true when there is none). A `.git` repository's config is
    read-only in every sandboxed run; a bare repository found by its layout (HEAD, objects,
    refs: a directory of plain files a command could have written) is safe only outside every
    place a sandboxed command could write."""
    found = config_files(start)
    if found is None:
        return False
    how, files = found
    # A missing one that a command could create is watched and removed after the run.
    if any(policy.is_writable(f) and f not in policy.watch for f in files):
        return False
    return how != "bare" or not any(policy.could_have_written(f) for f in files)
