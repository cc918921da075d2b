"""Change-set rule for what git ignores: a new or changed path that git ignores, in a
repository in or around a writable root, is held for review (sandbox.ignored_files).

`git status` never shows such a change, and it is where host programs find what they run
without anyone reading it: a build's outputs and its generated makefiles and headers, the
node_modules a git hook's npx runs, a venv a hook puts on PATH, a package manager's vendor
tree, a per-developer script a hook runs when it is there. Each review round found another
way a hook or a build reaches one (r75a to r80b: lefthook's and lint-staged's scripts'
dependencies, Yarn's cache, a Makefile's `-include` through a variable, an in-source
configure's config.h); held by what git says of it, no list of those ways has to be whole.

Read as git would read it, from the host's ignore files and from the change set's (a new
`.gitignore` that hides a command's file hides it from `git status` too). What passes: a
path git tracks (its change shows; not one the index marks assume-unchanged or
skip-worktree, whose changes git does not show, and which is held), deleting (it goes to the
undo journal), a directory that was there already, and the caches no tool runs anything from
(pytest's, mypy's, ruff's, coverage's data). Python's bytecode never reaches the rules (see
scan._bytecode).
"""

from __future__ import annotations

import os
import stat

from corral.changes import words
from corral.changes.gitignore import Ignores, read_ignore_file
from corral.changes.ruleset import RuleSet
from corral.changes.scan import will_be_file
from corral.paths import is_within, read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry
    from corral.toolguard.ops.refusal import Refusal

# data caches of test runners and linters: read as data, never run
INERT_CACHES = frozenset({
    ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".coverage",
    ".eslintcache", ".stylelintcache", ".DS_Store", ".benchmarks",
})  # fmt: skip
# an index entry's flags that make git show none of its changes (see git_objects.read_index)
UNSHOWN = 0x8000 | 0x4000  # assume-unchanged, skip-worktree
IGNORED = "sandbox.ignored_files"


class _Repository:
    """One work tree's ignore rules (the host's, and as the change set leaves them) and
    what its index tracks."""

    __slots__ = ("after", "host", "top", "tracked", "tracked_dirs", "unshown")

    def __init__(self, top: str, git_dir: str, rules: IgnoredRules) -> None:
        from corral.changes.git_objects import GitUnreadable, read_index

        self.top = top
        common = git_dir
        pointer = _first_line(os.path.join(git_dir, "commondir"))
        if pointer:
            common = os.path.normpath(os.path.join(git_dir, pointer))
        extra = [os.path.join(common, "info", "exclude"), *rules.excludes_files(common)]
        self.host = Ignores(top, extra, read_ignore_file)
        self.after = Ignores(top, extra, rules.after_text)
        self.tracked: frozenset[str] | None
        self.tracked_dirs: frozenset[str] = frozenset()
        self.unshown: frozenset[str] = frozenset()
        try:
            index = read_index(os.path.join(git_dir, "index"))
        except (GitUnreadable, OSError, ValueError):
            self.tracked = None  # (unread: every path is judged by the ignore files alone)
            return
        self.tracked = frozenset(index.entries)
        dirs = set()
        for path in index.entries:
            parent = os.path.dirname(path)
            while parent and parent not in dirs:
                dirs.add(parent)
                parent = os.path.dirname(parent)
        self.tracked_dirs = frozenset(dirs)
        self.unshown = frozenset(p for p, f in index.flags.items() if f & UNSHOWN)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        return self.host.ignored(rel, is_dir) or self.after.ignored(rel, is_dir)

    def unit(self, rel: str) -> str:
        """The highest directory (or the path itself) git ignores, up from `rel`: what is
        held as one."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            above = "/".join(parts[:i])
            if self.host.dir_ignored(above) or self.after.dir_ignored(above):
                return above
        return rel


def _first_line(path: str) -> str:
    try:
        return read_regular(path, 4096).split(b"\n", 1)[0].decode(errors="replace").strip()
    except OSError:
        return ""


class IgnoredRules(RuleSet):
    """The rule for paths git ignores (see the module's note)."""

    def _ignored(self, entry: Entry) -> Refusal | None:
        if self.plan.get("ignored_files", "hold") != "hold" or entry.kind == "whiteout":
            return None
        parts = entry.rel.split("/")
        if (
            ".git" in parts
            or (entry.kind == "dir" and parts[-1] == "__pycache__")
            or any(p in INERT_CACHES or p.startswith(".coverage.") for p in parts)
        ):
            # (a git directory has rules of its own; what Python's bytecode cache holds never
            # reaches the rules, and its directory carries nothing)
            return None
        self._ignore_roots.setdefault(entry.root, entry)
        repository = self._repository(os.path.dirname(entry.path))
        if repository is None:
            return None
        rel = os.path.relpath(entry.path, repository.top)
        if rel in repository.unshown:
            return self.refusal(
                "protected", entry.path, IGNORED,
                "its index entry is marked assume-unchanged or skip-worktree, so `git "
                "status` and `git diff` never show a change to it; apply it if you meant it",
            )  # fmt: skip
        tracked = repository.tracked
        if tracked is not None and (rel in tracked or rel in repository.tracked_dirs):
            return None
        if entry.kind == "dir" and not entry.opaque and _host_dir(entry.path):
            return None  # (what changed below it is judged by itself)
        if not repository.ignored(rel, entry.kind == "dir"):
            return None
        unit = os.path.join(repository.top, repository.unit(rel))
        return self.refusal(
            "protected", entry.path, IGNORED,
            f"{words.IN_IGNORED}{unit} ({words.IGNORED_WHY})",
        )  # fmt: skip

    def _repository(self, directory: str) -> _Repository | None:
        """The innermost work tree holding `directory` (on the host), or None."""
        memo = self._ignore_repos
        walked = []
        found: _Repository | None = None
        current = directory
        while True:
            if current in memo:
                found = memo[current]
                break
            walked.append(current)
            dot_git = os.path.join(current, ".git")
            git_dir = _git_dir(dot_git)
            if git_dir is not None:
                found = self._ignore_tops.get(current)
                if found is None:
                    found = _Repository(current, git_dir, self)
                    self._ignore_tops[current] = found
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for path in walked:
            memo[path] = found
        return found

    def excludes_files(self, common_dir: str) -> list[str]:
        """core.excludesFile as git finds it (the repository's config over the global
        ones), else $XDG_CONFIG_HOME/git/ignore."""
        from corral.sandbox.protect import gitconfig
        from corral.sandbox.protect.gitguard import global_configs

        home = os.path.expanduser("~")
        configs = [*global_configs(home, os.environ), os.path.join(common_dir, "config")]
        named = ""
        for path in gitconfig.read(configs, home).files:
            text = gitconfig.read_text(path) or ""
            for section, key, value in gitconfig.entries(text):
                if section == "core" and key == "excludesfile":
                    named = value
        if named:
            return [os.path.expanduser(named)]
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        return [os.path.join(xdg, "git", "ignore")]

    def after_text(self, path: str) -> str | None:
        """An ignore file's text as the change set would leave it."""
        entry = next((e for r, e in self._ignore_roots.items() if is_within(path, r)), None)
        if entry is None:
            return read_ignore_file(path)
        staged = entry.staged(path)
        if not will_be_file(entry, path):
            return None
        return read_ignore_file(staged if os.path.lexists(staged) else path)


def _git_dir(dot_git: str) -> str | None:
    """The git directory a work tree's `.git` (a directory, or a file naming one) is."""
    try:
        st = os.lstat(dot_git)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return dot_git
    if stat.S_ISLNK(st.st_mode):  # (the layout of Android's repo tool)
        real = os.path.realpath(dot_git)
        return real if os.path.isdir(real) else None
    if not stat.S_ISREG(st.st_mode):
        return None
    line = _first_line(dot_git)
    if not line.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(os.path.dirname(dot_git), line[7:].strip()))


def _host_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
