"""Change-set rule for what git on the host would write into the work tree later: a ref, HEAD,
ORIG_HEAD or the index a command moved names files that host git writes unchecked at the
user's next checkout, reset, restore or stash pop. A commit on another branch holding
`.pdbrc`, `.envrc` and a pre-commit config passed as plain objects and refs, and
`git checkout master` then wrote them (review r31b). So the paths such a change adds or
changes, against what the host's HEAD has now, are put through the protected names and paths;
what cannot be read (an object format or a pack corral does not read, too many trees) is held.
"""

from __future__ import annotations

import os

from corral.changes.git_objects import GitUnreadable, ObjectStore, changed_paths, index_paths
from corral.changes.git_objects import tree_of as _tree_of
from corral.changes.ruleset import RuleSet
from corral.paths import self_or_parent_in
from corral.toolguard.ops.refusal import PROTECTED, Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry

TREE_BUDGET = 20_000  # trees read for one change
REF_BYTES = 4096


def _text(path: str) -> str | None:
    """A small file of a git directory (a ref), not through a link; None where there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        return os.read(fd, REF_BYTES).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _packed(git_dir: str) -> dict[str, str]:
    """ref name -> object of a packed-refs file."""
    text = _text(os.path.join(git_dir, "packed-refs")) if git_dir else None
    found = {}
    for line in (text or "").splitlines():
        sha, _, name = line.partition(" ")
        if len(sha) == 40 and name:
            found[name.strip()] = sha
    return found


def _resolve(git_dirs: list[str], text: str | None, depth: int = 0) -> str | None:
    """The object a ref's text names, following `ref: NAME` through `git_dirs` in order."""
    if text is None or depth > 5:
        return None
    text = text.strip()
    if not text.startswith("ref: "):
        return text.split()[0] if text else None
    name = text[5:].strip()
    if ".." in name.split("/"):
        return None
    for git_dir in git_dirs:
        value = _text(os.path.join(git_dir, name))
        if value is not None:
            return _resolve(git_dirs, value, depth + 1)
        packed = _packed(git_dir).get(name)
        if packed is not None:
            return packed
    return None


class GitHistoryRules(RuleSet):
    def _git_history(self, entry: Entry, git_rel: str, inside: list[str]) -> Refusal | None:
        """For an entry `inside` the git directory at `git_rel` (relative to its root)."""
        if entry.kind != "file":
            return None
        name = "/".join(inside)
        is_index = name == "index"
        if not (is_index or name in ("HEAD", "ORIG_HEAD", "packed-refs") or inside[0] == "refs"):
            return None
        host_git = os.path.join(entry.root, git_rel)
        upper_root = entry.source[: len(entry.source) - len(entry.rel)].rstrip("/")
        upper_git = os.path.join(upper_root, git_rel)
        store = ObjectStore([os.path.join(upper_git, "objects"), os.path.join(host_git, "objects")])
        try:
            if is_index:
                before = index_paths(os.path.join(host_git, "index"))
                after = index_paths(entry.source)
                paths = [p for p, v in after.items() if before.get(p) != v]
                what = "the index"
            else:
                head = _resolve([host_git], _text(os.path.join(host_git, "HEAD")))
                base = _tree_of(store, head) if head else None
                news: list[str | None]
                if name == "packed-refs":
                    host = _packed(host_git)
                    news = [sha for ref, sha in _packed(upper_git).items() if host.get(ref) != sha]
                else:
                    news = [_resolve([upper_git, host_git], _text(entry.source))]
                paths = []
                for new in news:
                    if new is None:
                        raise GitUnreadable(f"{name} names nothing corral can read")
                    paths += changed_paths(store, base, _tree_of(store, new), TREE_BUDGET)
                what = f"the commit {name} names"
        except GitUnreadable as e:
            return self.refusal(
                "protected", entry.path, PROTECTED,
                f"git history corral cannot read ({e}): what host git would write into the "
                "work tree from it is not known",
            )  # fmt: skip
        work_tree = os.path.dirname(host_git) if os.path.basename(host_git) == ".git" else ""
        for path in paths:
            hit = self.protected_name_in(path.split("/"))
            if hit is None and work_tree:
                kept = self_or_parent_in(os.path.join(work_tree, path), self.protected_set)
                hit = os.path.relpath(kept, work_tree) if kept else None
            if hit is not None:
                return self.refusal(
                    "protected", entry.path, PROTECTED,
                    f"{what} holds {path} (protected {hit}): host git would write it into "
                    "the work tree unchecked at your next checkout, reset, restore or stash pop",
                )  # fmt: skip
        return None
