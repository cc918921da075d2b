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
import re
import stat

from corral.changes import words
from corral.changes.gitignore import Ignores, read_ignore_file
from corral.changes.ruleset import RuleSet
from corral.changes.scan import will_be_file
from corral.paths import is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.changes.scan import Entry
    from corral.toolguard.ops.refusal import Refusal

# data caches of test runners and linters: read as data, never run (see _inert_cache)
INERT_CACHES = frozenset({
    ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".benchmarks",
})  # fmt: skip
CACHE_FILES = frozenset({".eslintcache", ".stylelintcache", ".DS_Store"})
# the caches that write a .gitignore of `*` and CACHEDIR.TAG at their top
WRITES_TOP_FILES = frozenset({".pytest_cache", ".mypy_cache", ".ruff_cache"})
# an index entry's flags that make git show none of its changes (see git_objects.read_index)
UNSHOWN = 0x8000 | 0x4000  # assume-unchanged, skip-worktree
SKIP_WORKTREE = 0x4000
IGNORED = "sandbox.ignored_files"
HIDDEN_SUBMODULE = "a submodule whose changes its superproject's settings hide"
UNREAD_INDEX = "corral cannot read git's index here"


# `git status` hides what a submodule holds with these (submodule.<name>.ignore,
# diff.ignoreSubmodules), and untracked files with status.showUntrackedFiles = no
HIDING_SUBMODULES = frozenset({"dirty", "all", "untracked"})
NO_UNTRACKED = frozenset({"no", "false", "off", "0"})


class _Repository:
    """One work tree's ignore rules (the host's, and as the change set leaves them), what
    its index tracks, and what its settings hide from `git status`."""

    __slots__ = (
        "folded", "gitlinks", "hidden", "hiding", "nested", "outer", "settings", "sparse",
        "top", "tracked", "tracked_dirs", "unshown", "views",
    )  # fmt: skip

    def __init__(self, top: str, git_dir: str, rules: IgnoredRules) -> None:
        from corral.changes.git_objects import GitUnreadable, Index, read_index

        self.top = top
        common = git_dir
        from corral.sandbox.protect.gitguard import _read_pointer

        pointer = _read_pointer(os.path.join(git_dir, "commondir"))
        if pointer:
            common = os.path.normpath(os.path.join(git_dir, pointer))
        self.settings = rules.git_settings(common, git_dir)
        from corral.sandbox.protect import gitconfig

        # Every core.excludesFile a config names, in any include (one whose condition corral
        # does not weigh too), and the default: each read as git would if it were the one,
        # and a path held where any of them ignores it (r82a EXCLINC; a relative one is
        # the work tree's, EXCLREL). Each with info/exclude after it, whose patterns win
        # (r82b EXCLUDEPREC).
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        named = [
            os.path.join(top, os.path.expanduser(gitconfig.path_value(v)))
            for v in self.settings.get("core.excludesfile", ())
            if gitconfig.path_value(v)
        ]
        case = any(_true(v) for v in self.settings.get("core.ignorecase", ()))
        exclude = os.path.join(common, "info", "exclude")
        self.sparse: frozenset[str] = frozenset()  # (skip-worktree ignore files: see below)
        self.hiding: dict[str, bool] = {}  # (hides_submodule's answers: asked per entry)
        self.views = [
            Ignores(top, [candidate, exclude], self._from_index_too(reader), case)
            for candidate in dict.fromkeys([*named, os.path.join(xdg, "git", "ignore")])
            for reader in (read_ignore_file, rules.after_text)
        ]
        self.tracked: frozenset[str] = frozenset()
        self.tracked_dirs: frozenset[str] = frozenset()
        self.unshown: frozenset[str] = frozenset()
        self.gitlinks: frozenset[str] = frozenset()
        # (why every change here is out of `git status`'s sight, and the path held as one)
        self.hidden: tuple[str, str] | None = None
        self.outer: _Repository | None = None  # (the repository around this one's top)
        # (why every change here is out of sight from the repository around it: see
        # IgnoredRules._hidden_by_enclosing)
        self.nested: tuple[str, str] | None = None
        # (with core.ignoreCase, what git tracks by its folded name: git takes `style.sh`
        # for a tracked `Style.sh`, and shows no change, r83a ICASETRACK)
        self.folded: dict[str, str] | None = {} if case else None
        # The host's index and the one the change set leaves (its own `git rm --cached`
        # lands with it): tracked is what both track, not shown what either marks (r86a
        # UNTRACKHIDE: a tracked build/gen.mk untracked and rewritten in one run passed as
        # tracked, and `git status` showed its deletion from the index, not its text).
        host_index = os.path.join(git_dir, "index")
        after = rules.after_file(host_index)
        try:
            indexes = [read_index(host_index)]
            if after is None:
                indexes.append(Index())  # (deleted: nothing tracked)
            elif after != host_index:
                indexes.append(read_index(after))
        except (GitUnreadable, OSError, ValueError) as e:
            # (a split index, core.splitIndex: which paths are tracked, or marked
            # assume-unchanged, cannot be told, r82b SPLITUNSHOWN)
            self.hidden = (top, f"{UNREAD_INDEX} ({e})")
            return
        entries = {
            p: mode_sha
            for p, mode_sha in indexes[0].entries.items()
            if all(p in other.entries for other in indexes[1:])
        }
        self.tracked = frozenset(entries)
        # (a submodule either index has: one the command staged too, whose folder git lists
        # nothing in, r88a STAGEDGITLINK)
        self.gitlinks = frozenset(
            p for i in indexes for p, (mode, _) in i.entries.items() if mode == 0o160000
        )  # fmt: skip
        dirs = set()
        for path in entries:
            parent = os.path.dirname(path)
            while parent and parent not in dirs:
                dirs.add(parent)
                parent = os.path.dirname(parent)
        self.tracked_dirs = frozenset(dirs)
        self.unshown = frozenset(p for i in indexes for p, f in i.flags.items() if f & UNSHOWN)
        self.sparse = frozenset(
            p for i in indexes for p, f in i.flags.items()
            if f & SKIP_WORKTREE and p.rsplit("/", 1)[-1] == ".gitignore"
        )  # fmt: skip
        if self.folded is not None:
            self.folded = {p.lower(): p for p in (*entries, *dirs)}

    def _from_index_too(self, reader: Callable[[str], str | None]) -> Callable[[str], str | None]:
        """`reader`, but for a `.gitignore` missing from the work tree whose index entry is
        skip-worktree (every one outside a sparse checkout's cone): git reads that one from
        the index (r87a SPARSEIGNORE); corral does not read blobs, and takes it as ignoring
        everything there."""

        def read(path: str) -> str | None:
            text = reader(path)
            if text is None and os.path.relpath(path, self.top) in self.sparse:
                return "*\n"
            return text

        return read

    def shows(self, rel: str) -> bool:
        """Whether git tracks `rel` (or a directory of tracked files): a change to it shows
        in `git status`."""
        return rel in self.tracked or rel in self.tracked_dirs

    def twin(self, rel: str) -> str | None:
        """The tracked path git takes `rel` for, under core.ignoreCase, when it is not
        `rel` itself."""
        if self.folded is None or self.shows(rel):
            return None
        return self.folded.get(rel.lower())

    def hides(self, rel: str, is_dir: bool) -> bool:
        """Whether `git status` here shows nothing of `rel`, which it does not track: it
        is ignored, or no untracked file is listed, or it lies in a submodule whose
        changes this repository hides."""
        return self.ignored(rel, is_dir) or self.untracked_unshown()

    def ignored(self, rel: str, is_dir: bool) -> bool:
        return any(view.ignored(rel, is_dir) for view in self.views)

    def untracked_unshown(self) -> bool:
        """Whether `git status` lists no untracked file here (status.showUntrackedFiles =
        no: a file git neither tracks nor ignores never shows either, r82b
        NOSHOWUNTRACKED)."""
        return any(
            v.lower() in NO_UNTRACKED for v in self.settings.get("status.showuntrackedfiles", ())
        )

    def _modules(self) -> tuple[dict[str, str], dict[str, str]]:
        """What .gitmodules says: each submodule's path -> its section, section -> ignore."""
        from corral.sandbox.protect import gitconfig

        names, ignores = {}, {}
        text = gitconfig.read_text(os.path.join(self.top, ".gitmodules")) or ""
        for section, key, value in gitconfig.entries(text):
            if section.startswith("submodule.") and key == "path":
                names[value.strip("/")] = section
            elif section.startswith("submodule.") and key == "ignore":
                ignores[section] = value.lower()
        return names, ignores

    def submodule(self, rel: str) -> bool:
        """Whether `rel` may be a submodule of this repository: a gitlink of its index, or,
        where the index cannot be read, any repository inside (r87a SPLITSUPER: a
        superproject with a split index was not looked at; r88a SPLITSUPER2: nor one whose
        submodule .gitmodules does not name)."""
        return rel in self.gitlinks or self.hidden is not None

    def hides_submodule(self, rel: str) -> bool:
        """Whether the submodule at `rel` has its changes hidden from this repository's
        `git status` (`ignore = dirty` in .gitmodules or the config, r82b SUBMODDIRTY)."""
        if not self.submodule(rel):
            return False
        known = self.hiding.get(rel)
        if known is None:
            settings = self.settings.get("diff.ignoresubmodules", ())
            if any(v.lower() in HIDING_SUBMODULES for v in settings):
                known = True
            else:
                names, ignores = self._modules()
                section = names.get(rel, f"submodule.{rel}")
                values = [*self.settings.get(f"{section}.ignore", ()), ignores.get(section, "")]
                known = any(v.lower() in HIDING_SUBMODULES for v in values)
            self.hiding[rel] = known
        return known

    def unit(self, rel: str) -> str:
        """The highest directory (or the path itself) git ignores, up from `rel`: what is
        held as one."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            above = "/".join(parts[:i])
            if any(view.dir_ignored(above) for view in self.views):
                return above
        return rel


class IgnoredRules(RuleSet):
    """The rule for paths git ignores (see the module's note)."""

    def _ignored(self, entry: Entry) -> Refusal | None:
        if self.plan.get("ignored_files", "hold") != "hold" or entry.kind == "whiteout":
            return None
        parts = entry.rel.split("/")
        if (
            ".git" in parts
            or (entry.kind == "dir" and parts[-1] == "__pycache__")
            or _inert_cache(parts, entry)
        ):
            # (a git directory has rules of its own; what Python's bytecode cache holds never
            # reaches the rules, and its directory carries nothing)
            return None
        self._ignore_roots.setdefault(entry.root, entry)
        repository = self._repository(os.path.dirname(entry.path))
        if repository is None:
            return None
        if repository.hidden is not None:
            return self.refusal(
                "protected", entry.path, IGNORED,
                f"{repository.hidden[1]}: which files git tracks, and which of their changes "
                "`git status` shows, cannot be told (a split index reads again after `git "
                "update-index --no-split-index`); apply it if you meant it",
            )  # fmt: skip
        # (the repository that holds the whole workspace is the one the user looks at: one
        # around it, a dotfiles repository at ~ ignoring `*`, or the main work tree that
        # ignores `.worktrees/`, says nothing of it, r84a HOMEREPO, WTIGNORED)
        holds_workspace = is_within(entry.root, repository.top)
        if repository.nested is not None and not holds_workspace:
            unit, why = repository.nested
            return self._held_in(entry, unit, f"{why}; ")
        rel = os.path.relpath(entry.path, repository.top)
        if rel in repository.unshown:
            return self.refusal(
                "protected", entry.path, IGNORED,
                "its index entry is marked assume-unchanged or skip-worktree, so `git "
                "status` and `git diff` never show a change to it; apply it if you meant it",
            )  # fmt: skip
        parts_rel = rel.split("/")
        gitlink = next(
            (g for i in range(1, len(parts_rel) + 1)
             if (g := "/".join(parts_rel[:i])) in repository.gitlinks),
            None,
        )  # fmt: skip
        if gitlink is not None and not os.path.lexists(
            os.path.join(repository.top, gitlink, ".git")
        ):
            # (a submodule never checked out, or deinitialized: its folder holds no .git, and
            # git lists nothing in it, untracked or not, r84b UNINITSUB)
            unit = os.path.join(repository.top, gitlink)
            return self._held_in(entry, unit, "the folder of a submodule not checked out: ")
        twin = repository.twin(rel)
        if twin is not None:
            return self.refusal(
                "protected", entry.path, IGNORED,
                f"with core.ignoreCase, git takes it for the tracked {twin}, and `git status` "
                "shows no change; apply it if you meant it",
            )  # fmt: skip
        if entry.kind == "dir" and not entry.opaque and _host_dir(entry.path):
            return None  # (what changed below it is judged by itself)
        return self._hidden_around(entry, repository, rel)

    def _hidden_around(self, entry: Entry, repository: _Repository, rel: str) -> Refusal | None:
        """Held where `git status` shows nothing of `entry` (`rel` in `repository`), there or
        in a repository around that one: a nested clone's new file the outer one ignores,
        or in an outer one that lists no untracked file, shows nowhere the user looks (r83a
        NESTTR, NESTSU). A superproject is looked at whether or not the submodule holds
        the workspace: it is where the user commits the submodule's changes (r85 SUBWS)."""
        path, is_dir = entry.path, entry.kind == "dir"
        untracked = not repository.shows(rel)
        current = repository
        while True:
            here = os.path.relpath(path, current.top)
            if not current.shows(here) and current.hides(here, is_dir):
                return self._held_in(entry, os.path.join(current.top, current.unit(here)))
            outer = current.outer
            if outer is None:
                return None
            gitlink = os.path.relpath(current.top, outer.top)
            if not outer.submodule(gitlink):
                if outer.hidden is not None:
                    return None  # (see repository.nested)
                if is_within(entry.root, current.top):
                    return None  # (see holds_workspace above)
                current = outer
                continue
            # (a submodule: its superproject shows it by the submodule's own rules, but none
            # of its changes where its settings hide them, and no untracked file in it where
            # it lists none of its own, r84a SUBNOSHOW)
            unit = current.top if is_within(current.top, entry.root) else entry.root
            if outer.hides_submodule(gitlink):
                return self._held_in(entry, unit, f"{HIDDEN_SUBMODULE}; ")
            if outer.untracked_unshown() and untracked:
                return self._held_in(entry, os.path.join(repository.top, repository.unit(rel)))
            # (and the superproject, which tracks it, by the repositories around it)
            current, path, is_dir = outer, current.top, True

    def _held_in(self, entry: Entry, unit: str, why: str = "") -> Refusal:
        """Held as part of `unit`, the directory (or path) out of `git status`'s sight that
        finish names as one path to apply."""
        return self.refusal(
            "protected", entry.path, IGNORED, f"{words.IN_IGNORED}{unit} ({why}{words.IGNORED_WHY})"
        )

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
                    found.outer = self._repository(os.path.dirname(current))
                    found.nested = self._hidden_by_enclosing(current)
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for path in walked:
            memo[path] = found
        return found

    def _hidden_by_enclosing(self, top: str) -> tuple[str, str] | None:
        """Why a repository's changes are out of `git status`'s sight from the repository
        around it: its top is ignored there (a clone in `vendor/`, pip's `.venv/src/pkg`),
        or it is a submodule whose changes that one hides (r82b NESTEDIGNORED,
        SUBMODDIRTY)."""
        outer: _Repository | None = self._ignore_tops[top].outer
        if outer is None:
            return None
        if outer.hidden is not None or outer.nested is not None:
            return outer.nested or (
                outer.top,
                "a repository inside one whose index corral cannot read",
            )
        rel = os.path.relpath(top, outer.top)
        if outer.ignored(rel, True):
            return os.path.join(outer.top, outer.unit(rel)), "a repository inside what git ignores"
        if outer.hides_submodule(rel):
            return top, HIDDEN_SUBMODULE
        return None

    def git_settings(self, common_dir: str, git_dir: str) -> dict[str, list[str]]:
        """The settings that change what `git status` shows: every value each config file
        corral finds gives them (the global ones, the repository's, what they include),
        by `section.key` (the key lowercased, a subsection as written)."""
        from corral.sandbox.protect import gitconfig
        from corral.sandbox.protect.gitguard import global_configs

        home = os.path.expanduser("~")
        # (and a work tree's own config.worktree, `git config --worktree`, r83a WTCFG)
        # (and what the environment gives git, GIT_CONFIG_COUNT's and `git -c`'s, r87a
        # ENVIGNORE: a core.excludesFile exported so hid from review what it ignores)
        configs = [
            *global_configs(home, os.environ), os.path.join(common_dir, "config"),
            *(os.path.join(d, "config.worktree") for d in dict.fromkeys((common_dir, git_dir))),
            *gitconfig.environment(os.environ),
        ]  # fmt: skip
        found: dict[str, list[str]] = {}
        for path in gitconfig.read(configs, home).files:
            text = gitconfig.text_of(path) or ""
            for section, key, value in gitconfig.entries(text):
                low = section.split(".", 1)[0].lower()
                if (low, key) in SETTINGS or (low == "submodule" and key == "ignore"):
                    found.setdefault(f"{section}.{key}", []).append(value)
        return found

    def after_text(self, path: str) -> str | None:
        """An ignore file's text as the change set would leave it."""
        where = self.after_file(path)
        return None if where is None else read_ignore_file(where)

    def after_file(self, path: str) -> str | None:
        """Where a host file is as the change set would leave it: the staged copy, the
        host's, or None where it would not be a file."""
        entry = next((e for r, e in self._ignore_roots.items() if is_within(path, r)), None)
        if entry is None:
            return path
        if not will_be_file(entry, path):
            return None
        staged = entry.staged(path)
        return staged if os.path.lexists(staged) else path


# (section, key) of what git_settings reads
SETTINGS = frozenset({
    ("core", "excludesfile"), ("core", "ignorecase"), ("status", "showuntrackedfiles"),
    ("diff", "ignoresubmodules"),
})  # fmt: skip


def _true(value: str) -> bool:
    return value.lower() in ("true", "yes", "on", "1")


def _coverage_data(name: str) -> bool:
    """coverage.py's parallel data files (`.coverage.host.123.x`), never a `.pth` (r82b
    COVPTH: `.coverage.pth` in site-packages runs at every start of that Python)."""
    return name == ".coverage" or (name.startswith(".coverage.") and not name.endswith(".pth"))


def _inert_cache(parts: list[str], entry: Entry) -> bool:
    """A test runner's or linter's data: a file named as one (`.eslintcache`, coverage's
    data), or one of the files each cache directory holds, where its tool writes it, not
    executable; and the cache directory itself. Anything else in one is judged as any
    other (r83a CACHEGLOB: `src/.pytest_cache/r.c`, compiled in by a build's recursive
    glob; r84b CACHEMD: a MyST notebook `docs/.hypothesis/examples.md`, run by Sphinx)."""
    name, kind = parts[-1], entry.kind
    if kind == "file" and (name in CACHE_FILES or _coverage_data(name)):
        return True
    at = next((i for i, p in enumerate(parts[:-1]) if p in INERT_CACHES), None)
    if at is None:
        return kind == "dir" and name in INERT_CACHES
    cache, below = parts[at], parts[at + 1 :]
    if kind == "dir":
        return True  # (a directory carries nothing: each file in it is judged)
    return kind == "file" and not entry.mode & 0o111 and _cache_file(cache, below, entry)


def _cache_file(cache: str, below: list[str], entry: Entry) -> bool:
    """Whether `below` (the path inside the cache directory `cache`) is a file its tool
    writes there: pytest's `v/cache/*`, mypy's `<version>/**/*.json`, ruff's
    `<version>/<number>`, hypothesis's `examples/*/*`, pytest-benchmark's `*/*.json`, and
    the `.gitignore`, CACHEDIR.TAG, README.md and missing_stubs pytest, mypy and ruff write
    at the top, with the text they write (see _top_file_text)."""
    name = below[-1]
    if len(below) == 1 and cache in WRITES_TOP_FILES:
        return _top_file_text(cache, name, entry)
    if cache == ".pytest_cache":
        return below[:2] == ["v", "cache"] and "." not in name
    if cache == ".mypy_cache":
        return len(below) >= 2 and name.endswith(".json")
    if cache == ".ruff_cache":
        return len(below) == 2 and name.isdigit()
    if cache == ".hypothesis":
        return (len(below) == 3 and below[0] == "examples" and "." not in name) or (
            below[0] == "unicode_data" and name.endswith(".json.gz")
        )
    return cache == ".benchmarks" and len(below) == 2 and name.endswith(".json")


# What pytest, mypy and ruff write at a cache's top, line by line: a file of the same name
# with other lines is judged as any other (r85a CACHEREADME: a `docs/.pytest_cache/README.md`
# of any text passed, and Sphinx with MyST reads a page there; a `.gitignore` there of `!*`
# lines unignores what git would not show; r85b STUBLIST: `missing_stubs` is what `mypy
# --install-types` hands to pip as package names, a line `-e /tmp/x` or `./pkg` among them)
_CACHE_LINES: dict[str, tuple[str, ...]] = {
    ".gitignore": (r"#.*", r"\*", r""),
    "CACHEDIR.TAG": (r"Signature: 8a477f597d28d172789f06886806bc55", r"#.*", r""),
    "missing_stubs": (r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?",),  # (a name, no more)
    "README.md": (
        r"# pytest cache directory #", r"",
        r"This directory contains data from the pytest's cache plugin,",
        r"which provides the `--lf` and `--ff` options, as well as the `cache` fixture.",
        r"\*\*Do not\*\* commit this to version control.",
        r"See \[the docs\]\(https://docs\.pytest\.org/[a-z0-9/._-]*\) for more information\.",
    ),
}  # fmt: skip
_CACHE_FILE_BYTES = 64 << 10
_TOP_FILES = {".pytest_cache": ("README.md",), ".mypy_cache": ("missing_stubs",)}


def _top_file_text(cache: str, name: str, entry: Entry) -> bool:
    """Whether `name` at the top of `cache` is one its tool writes there, every line as the
    tool writes it (the first line of CACHEDIR.TAG its signature)."""
    if name not in (".gitignore", "CACHEDIR.TAG", *_TOP_FILES.get(cache, ())):
        return False
    from corral.paths import read_regular

    try:
        data = read_regular(entry.source, _CACHE_FILE_BYTES + 1, follow=False)
        text = data.decode("ascii")
    except (OSError, UnicodeDecodeError):
        return False
    lines = text.removesuffix("\n").split("\n")
    allowed = _CACHE_LINES[name]
    if len(data) > _CACHE_FILE_BYTES or "\r" in text:
        return False
    if name == "CACHEDIR.TAG" and (not lines or lines[0] != allowed[0]):
        return False
    return all(any(re.fullmatch(p, line) for p in allowed) for line in lines)


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
    from corral.sandbox.protect.gitguard import _read_pointer  # (git's pointer files)

    target = _read_pointer(dot_git, "gitdir:")
    if target is None:
        return None
    return os.path.normpath(os.path.join(os.path.dirname(dot_git), target))


def _host_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
