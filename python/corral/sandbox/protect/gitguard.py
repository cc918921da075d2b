"""Keep a sandboxed command from planting code that git on the host would run.

`.git` inside a writable root must stay writable (objects, refs, the index, lock files), so
protection is by name:
- `.git` itself is pinned (a mount point cannot be renamed or replaced);
- existing control files (hooks, config, commondir, config.worktree), also those of existing
  submodules under `.git/modules`, are kept read-only;
- a missing hooks directory is created empty before the run (as `git init` does; it is inside
  `.git`, so `git status` never shows it) and kept read-only;
- control files that cannot be pre-created (an empty `commondir` breaks git) are watched: one
  the sandbox created is removed after the run (sweep.py).
A worktree's `.git` is a file naming its git dir: the file is kept read-only, and the control
files of that git dir and of the common dir it names are handled as above.
"""

from __future__ import annotations

import os

from corral.paths import read_regular
from corral.sandbox.protect import gitconfig, hookmanagers, hookwords

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

HOOKS = "hooks"
MAX_MODULE_DEPTH = 6  # submodule names may contain "/", and submodules nest


class Protection:
    """What to do for one writable root: plain lists, merged into the Policy."""

    __slots__ = (
        "create_dirs", "incomplete", "links", "module_dirs", "notes", "pinned", "read_only",
        "unknown", "watch",
    )  # fmt: skip

    def __init__(self) -> None:
        self.incomplete = False  # too many directories to find every repository: refuse
        self.notes: list[str] = []  # what the user should know: hooks that cannot be protected
        self.pinned: list[str] = []
        self.read_only: list[str] = []
        self.create_dirs: list[str] = []
        self.watch: list[str] = []
        self.links: list[tuple[str, str]] = []  # symlinks that must still point there after
        # where a Python the hooks start looks first: the work-tree top for `python -m`, a
        # script's own directory for `python3 scripts/x.py` (no new module is taken there)
        self.module_dirs: list[str] = []
        # what a hook manager runs that cannot all be found (see hookmanagers.Found.unknown)
        self.unknown: list[tuple[str, str, list[str]]] = []

    def control_files(self, git_dir: str, names: Iterable[str]) -> None:
        for name in names:
            path = os.path.join(git_dir, name)
            if os.path.lexists(path):
                self.read_only.append(path)
            elif name == HOOKS:
                self.create_dirs.append(path)
            else:
                self.watch.append(path)

    def file(self, path: str) -> None:
        """Read-only where it exists, watched where it does not."""
        (self.read_only if os.path.lexists(path) else self.watch).append(path)


def _read_pointer(path: str, prefix: str = "") -> str | None:
    try:
        first = read_regular(path, 8192).split(b"\n", 1)[0]
        line = first.decode("utf-8", errors="replace").strip()
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


def hooks_path(config_files: Iterable[str]) -> str | None:
    """The last `core.hooksPath` set in these git config files or the files they include."""
    found = gitconfig.read(config_files, os.path.expanduser("~")).hooks_paths
    return found[-1] if found else None


LIMIT = 20000  # directories looked at for a folder of repositories
DEPTH = 4  # how far down: ghq and GOPATH keep clones at host/owner/repo
# where repositories (or files worth hiding) are not looked for: tools' own trees
BULKY = frozenset({
    ".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", "target", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", "dist", "build", ".direnv",
})  # fmt: skip


def repositories(root: str, depth: int = DEPTH, limit: int = LIMIT) -> tuple[list[str], bool]:
    """(work trees at or below `root`, whether that is all of them): `root` itself when it
    has a `.git`, else the directories below it (to `depth` levels, past tools' own trees)
    that have one: a workspace that is a folder of repositories. Their linked worktrees and
    submodules are added by _all_trees. Past `limit` directories
    looked at, the answer is incomplete, never quietly cut: a sandboxed command can make
    thousands of directories to push a repository past any limit, and one not found gets no
    protection."""
    if os.path.lexists(os.path.join(root, ".git")) or is_bare(root):
        return [root], True
    from corral.sandbox.protect.dirwalk import directories

    repos: dict[str, bool] = {}

    def repository(path: str) -> bool:
        if path not in repos:  # (a bare one too: a push runs its hooks)
            repos[path] = os.path.lexists(os.path.join(path, ".git")) or is_bare(path)
        return repos[path]

    def descend(path: str) -> bool:  # (dot directories too: .worktrees/x, .repos/y)
        return not repository(path) and os.path.basename(path) not in BULKY

    below, complete = directories(root, depth, limit, descend=descend)
    return [d for d in below if repository(d)], complete


def is_bare(directory: str) -> bool:
    """Whether git takes a directory for a bare repository (a HEAD, objects and refs): a
    local remote beside its clone, whose hooks a `git push` runs (r72a BAREHOOK)."""
    return (
        os.path.isfile(os.path.join(directory, "HEAD"))
        and os.path.isdir(os.path.join(directory, "objects"))
        and os.path.isdir(os.path.join(directory, "refs"))
    )


MAX_TREES = 500  # work trees of one writable root (worktrees, submodules) looked at


def _submodule_paths(tree: str) -> list[str]:
    """The work trees of the submodules `tree`'s `.gitmodules` names that are there (a `.git`
    file or directory in them), inside `tree`."""
    text = gitconfig.read_text(os.path.join(tree, ".gitmodules"))
    found: list[str] = []
    for section, key, value in gitconfig.entries(text or ""):
        if not section.lower().startswith("submodule.") or key != "path" or not value:
            continue
        path = os.path.normpath(os.path.join(tree, value))
        dot_git = os.path.join(path, ".git")
        if path.startswith(tree + "/") and os.path.lexists(dot_git):
            found.append(path)
    return found


def _all_trees(trees: list[str], within: str) -> tuple[list[str], bool]:
    """(each work tree, its linked worktrees inside it and its submodules' work trees, at
    every depth, whatever their `.git` is, as far as they lie in `within`; whether that is
    all of them). A submodule's hooks run the scripts of its own work tree: r67a SUBINPLACE
    (its `.git` a directory in its work tree), r68a WTSUB (a linked worktree's submodules,
    their git dirs in the worktree's), NESTINPLACE (one inside another), FOLDERINPLACE (in
    a folder of repositories). An enclosing monorepo's trees outside `within` are read-only
    in the sandbox, so they are not looked at."""
    found: list[str] = []
    queue = list(trees)
    while queue:
        tree = queue.pop(0)
        if tree in found:
            continue
        if len(found) >= MAX_TREES:
            return found, False
        found.append(tree)
        queue += [
            t
            for t in _linked_worktrees(tree) + _submodule_paths(tree)
            if t != tree and (t == within or t.startswith(within + os.sep))
        ]
    return found, True


MAX_WORKTREE_ENTRIES = 4096


def _linked_worktrees(root: str) -> list[str]:
    """The linked worktrees of the repository at `root` (a work tree, or a bare repository)
    wherever they are (the caller keeps those in the workspace: `git -C lib worktree add
    ../lib-feat` puts a submodule's beside it, r72a SUBWT): each is a work tree of its own,
    where a relative core.hooksPath and the files the config names are found from its own
    top."""
    found = []
    git_dir = os.path.join(root, ".git")
    if not os.path.lexists(git_dir) and is_bare(root):
        git_dir = root
    elif os.path.isfile(git_dir):  # (`gitdir: ./.bare`, the bare repository's worktrees
        # beside it, r69a BAREWT; a submodule's, in the superproject's modules)
        target = _read_pointer(git_dir, "gitdir:")
        git_dir = os.path.realpath(os.path.join(root, target)) if target else git_dir
        common = _read_pointer(os.path.join(git_dir, "commondir"))
        git_dir = os.path.realpath(os.path.join(git_dir, common)) if common else git_dir
    try:
        names = os.listdir(os.path.join(git_dir, "worktrees"))
    except OSError:
        return []
    # Only entries with a gitdir count: a command cannot add one (gitdir is a control file,
    # and a new entry is held), so empty directories cannot push a real worktree out.
    for name in sorted(names)[:MAX_WORKTREE_ENTRIES]:
        admin = os.path.join(git_dir, "worktrees", name)
        pointer = _read_pointer(os.path.join(admin, "gitdir"))
        if pointer is None:
            continue
        # (relative to its own directory, as git 2.48's worktree.useRelativePaths writes
        # it; read from corral's, the worktree was lost: r75a RELWORKTREE)
        found.append(os.path.dirname(os.path.realpath(os.path.join(admin, pointer))))
    return found


def global_configs(home: str, env: Mapping[str, str]) -> list[str]:
    """The config files git reads for every repository, as git finds them: the system file
    ($GIT_CONFIG_SYSTEM, else /etc/gitconfig, unless GIT_CONFIG_NOSYSTEM), then the global
    one ($GIT_CONFIG_GLOBAL, else $XDG_CONFIG_HOME/git/config or ~/.config/git/config, and
    ~/.gitconfig). A core.hooksPath set in any of them applies to every repository."""
    found = []
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        found.append(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    if env.get("GIT_CONFIG_GLOBAL"):
        found.append(env["GIT_CONFIG_GLOBAL"])
    else:
        xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        found += [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    return [os.path.expanduser(p) for p in found]


def _worktree_of(git_dir: str) -> str | None:
    """A submodule's work tree: `core.worktree` of its config, relative to its git dir."""
    text = gitconfig.read_text(os.path.join(git_dir, "config"))
    if text is None:
        return None
    value = None
    for section, key, found in gitconfig.entries(text):
        if section == "core" and key == "worktree" and found:
            value = found
    return os.path.realpath(os.path.join(git_dir, value)) if value else None


def enclosing_work_trees(root: str) -> list[str]:
    """The directories above `root` that hold a `.git`, nearest first."""
    found = []
    parent = os.path.dirname(root)
    while parent != os.path.dirname(parent):
        if os.path.lexists(os.path.join(parent, ".git")):
            found.append(parent)
        parent = os.path.dirname(parent)
    return found


def protect(
    root: str, names: Iterable[str], home: str = "", env: Mapping[str, str] | None = None
) -> Protection:
    """Protection for the work trees at or below `root`; `names` are the `.git/…` entries
    of `sandbox.policy.protected`, without the `.git/` prefix; `env` tells where git finds
    its global config."""
    names = tuple(names)
    trees, complete = repositories(root)
    result = Protection()
    # (whatever is found below: a submodule inside a monorepo's package dropped the
    # monorepo's own protection, r69a ENCLNESTED; and whatever the root is: a workspace
    # that is a submodule, its own `.git` a file, dropped the superproject's, r72a ENCLSUB)
    enclosing = enclosing_work_trees(root)
    if enclosing and not os.path.lexists(os.path.join(root, ".git")):
        result.watch.append(os.path.join(root, ".git"))
    # The workspace is part of larger repositories (a monorepo package opened alone, a
    # submodule): their configs may name files in the workspace (husky's `frontend/.husky`,
    # a core.hooksPath into the shared hooks' submodule); what lies outside is read-only
    # anyway. Their submodules and worktrees in the workspace are looked for as anyone's:
    # one deeper than the folder scan goes was missed when they were added after.
    trees, every = _all_trees([*enclosing, *trees], root)
    result.incomplete = not (complete and every)
    env = env if env is not None else {"HOME": home}
    configs = global_configs(home, env)
    for path in (p for p in configs if os.path.isabs(p)):
        # git reads these for every repository: one inside a writable root ($GIT_CONFIG_GLOBAL
        # pointing into the workspace) is kept as it is (resolution drops what is outside)
        result.file(path)
    # (and the config the environment gives git, `GIT_CONFIG_COUNT`'s: read with the files
    # for every repository, r74a ENVHOOKSPATH)
    configs = [*gitconfig.environment(env), *(p for p in configs if os.path.isabs(p))]
    # ... and what they name for every repository, this folder's or any other: an absolute
    # core.hooksPath inside a writable root runs at any repository's next commit
    reading = gitconfig.read(configs, home)
    for path in reading.files:
        if os.path.isabs(path):
            result.file(path)
    hook_dirs = []
    for configured, below in (
        *((c, "") for c in reading.hooks_paths),
        # (a template's hooks are copied into every repository `git clone` makes, and its
        # post-checkout runs at once: r72a GLOBALTEMPLATE)
        *((c, HOOKS) for c in reading.template_dirs),
    ):
        expanded = os.path.join(home, configured[2:]) if configured.startswith("~/") else configured
        if os.path.isabs(expanded):
            result.file(os.path.normpath(expanded))
            hook_dirs.append(os.path.normpath(os.path.join(expanded, below)))
    # ... and the scripts their commands and hooks name by an absolute path (`core.pager =
    # ~/scripts/pager.sh`, a global hook's `"$(dirname "$0")/../lint.sh"`), for a workspace
    # with no repository too (r70a GLOBALCMD, r72a GLOBALHOOKRUN)
    hooks = hookmanagers.hook_files(hook_dirs)
    if reading.commands or hooks:
        texts = [(directory, text, False) for directory, text, _ in hooks]
        hookwords.keep_named(root, reading.commands, texts, hooks, result)
    for tree in trees:
        if is_bare(tree) and not os.path.lexists(os.path.join(tree, ".git")):
            _protect_bare(tree, names, home, configs, result)
        else:
            _protect_tree(tree, names, home, configs, result)
    return result


def _protect_bare(
    git_dir: str, names: tuple[str, ...], home: str, globals_: list[str], result: Protection
) -> None:
    """A bare repository in the workspace: its control files kept, and what its config and
    hooks name (a post-receive's `exec ../site/scripts/publish.sh`) as for any repository;
    its hooks run in it (r72a BAREHOOK: the script ran at the user's `git push`; with direct
    writes its hooks themselves were writable)."""
    result.pinned.append(git_dir)
    result.control_files(git_dir, names)
    own = [*globals_, os.path.join(git_dir, "config")]
    _protect_config(git_dir, git_dir, own, home, result)


def _protect_tree(
    root: str, names: tuple[str, ...], home: str, globals_: list[str], result: Protection
) -> None:
    dot_git = os.path.join(root, ".git")
    configs = list(globals_)
    if os.path.islink(dot_git):
        # (the layout of Android's repo tool) the link itself can be swapped for a directory
        # of the sandbox's making: put back after the run; the real git dir is protected.
        result.links.append((dot_git, os.readlink(dot_git)))
        dot_git = os.path.realpath(dot_git)
    if os.path.isdir(dot_git):
        for git_dir in (dot_git, *_submodule_git_dirs(dot_git)):
            result.pinned.append(git_dir)
            result.control_files(git_dir, names)
            if git_dir == dot_git:
                continue
            # A submodule's own config: its core.hooksPath, includes and hook managers, with
            # its work tree as the place they are relative to.
            tree = _worktree_of(git_dir)
            own = [*globals_, *(os.path.join(git_dir, n) for n in ("config", "config.worktree"))]
            if tree is not None:
                _protect_config(tree, git_dir, own, home, result)
            else:
                result.notes.append(
                    f"{git_dir}: a submodule git dir without core.worktree: its hooksPath, if "
                    "any, is not protected"
                )
        configs += [os.path.join(dot_git, "config"), os.path.join(dot_git, "config.worktree")]
        _protect_config(root, dot_git, configs, home, result)
        return
    if not os.path.isfile(dot_git):
        return
    result.read_only.append(dot_git)  # the pointer must not be re-pointed
    target = _read_pointer(dot_git, "gitdir:")
    if target is None:
        return
    git_dir = os.path.realpath(os.path.join(root, target))
    common = _read_pointer(os.path.join(git_dir, "commondir"))
    common_dir = os.path.realpath(os.path.join(git_dir, common)) if common else git_dir
    result.pinned.append(git_dir)  # a separate git dir or a worktree's: not to be swapped
    if common_dir != git_dir:
        result.control_files(git_dir, (n for n in names if n != HOOKS))  # hooks: in common
        result.pinned.append(common_dir)
        result.control_files(common_dir, names)
    else:  # a separate git dir (`git init --separate-git-dir`): its own hooks too
        result.control_files(git_dir, names)
    configs.append(os.path.join(common_dir, "config"))
    if git_dir != common_dir:
        configs.append(os.path.join(git_dir, "config.worktree"))
    _protect_config(root, common_dir, configs, home, result)


def _protect_config(
    tree: str, common_dir: str, config_files: list[str], home: str, result: Protection
) -> None:
    """Every file git reads as config for this repository (includes too: a work-tree file
    named by include.path is config), every core.hooksPath (husky's .husky, say: hooks as
    surely as .git/hooks), and the files the hook managers installed there run or read."""
    reading = gitconfig.read(config_files, home)
    kept_before = len(result.read_only)
    for path in reading.files:
        if path not in config_files:
            result.file(path)
    for template in reading.template_dirs:
        result.file(os.path.normpath(os.path.join(tree, os.path.expanduser(template))))
    hook_dirs = [os.path.join(common_dir, HOOKS)]
    for configured in reading.hooks_paths:
        path = os.path.normpath(os.path.join(tree, os.path.expanduser(configured)))
        result.file(path)
        hook_dirs.append(path)
    found = hookmanagers.detect(tree, hook_dirs)
    for path in found.files:
        result.file(path)
    result.notes.extend(found.notes)
    result.unknown.extend(found.unknown)
    # What git runs from the work tree without being a hook: `core.fsmonitor =
    # tools/fsmon.sh`, a filter's `./tools/clean.sh`, an alias `!scripts/x`; and what the
    # installed hooks run there (a hook that is a link into the work tree, or one that runs
    # `./scripts/pre-commit.sh`), and the hook managers' own hook scripts and configs (husky's
    # `.husky/pre-commit`, lefthook's `run:` lines and the files it `extends:`).
    hooks = hookmanagers.hook_files(hook_dirs)
    texts = [(directory, text, False) for directory, text, _ in hooks]
    texts += hookmanagers.manager_texts(tree, hook_dirs, found.files)
    if any(hookmanagers.runs_mise(text) for _, text, _ in texts):
        tasks = hookmanagers.Found()
        hookmanagers.mise_tasks(tree, tasks)
        for path in tasks.files:
            result.file(path)
        result.unknown.extend(tasks.unknown)
    if any(hookmanagers.runs_staged(text) for _, text, _ in texts):
        staged = hookmanagers.Found()
        texts += hookmanagers.staged_texts(tree, [t for _, t, _ in texts], staged)
        for path in staged.files:
            result.file(path)
        result.unknown.extend(staged.unknown)
    if reading.commands or texts:
        hookwords.keep_named(tree, reading.commands, texts, hooks, result)
    # A Python script among what is kept (`python3 scripts/check.py`, by its shebang `exec
    # scripts/check`, a hook that is a link to tools/hooks/pre-commit) looks first in its
    # own directory, the link target's, for every module it imports: no new module is taken
    # there.
    for path in result.read_only[kept_before:]:
        if hookwords.is_python_script(path):
            real = os.path.dirname(os.path.realpath(path))
            if real.startswith(tree + os.sep):
                result.module_dirs.append(real)
