"""Which paths of a change set may reach the workspace: one verdict per entry.

The check looks at what would land on the host, by path and kind, never by following a link
the sandbox made. It refuses:
- protected paths: what direct writes kept read-only or watched (git hooks and config, every
  file git reads as config, hook-manager files, editor and shell start-up files, credential
  stores, corral's own code, config and state), and deleting or replacing a directory above one;
- protected names at any depth (`sandbox.policy.protected`: `.git/hooks`, `.nvim.lua`, ...);
- control files inside any git directory (hooks, config, commondir, gitdir), and new
  repositories: a new `.git` directory or file, and whatever would make a directory a bare
  repository (HEAD beside objects and refs or a commondir) in the tree as it would be after
  applying, links counted, over one run or several;
- symlinks that point at a protected path, into /proc (another spelling of any path), or
  outside the writable roots where the sandbox cannot see (a hidden area: the private home,
  /tmp), and symlinks put where a protected path's directory is or would be; a link to what
  every sandboxed command reads anyway (a venv's python in /usr or ~/.pyenv) passes;
- deleting a git directory's HEAD, objects or refs (no git command does; `mv .git x`, which
  overlayfs turns into a copy and a delete, would);
- chat files (`chat.patterns`): their frontmatter carries corral settings;
- device files, fifos and sockets, files over the size limit, and hard-linked files past
  1 GiB of copies in all;
- paths the host changed while the command ran, also below a directory the command deleted
  or replaced (conflicts: never overwritten silently).
A refused directory takes everything below it along.
"""

from __future__ import annotations

import fnmatch
import os
import stat

from corral.imports import STARTUP_MODULES
from corral.paths import is_within, name_matches
from corral.toolguard.ops.refusal import BUILTIN, PROTECTED, Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container
    from typing import Any

    from corral.changes.scan import Entry

GIT_CONTROL = frozenset({"config", "config.worktree", "commondir", "gitdir"})
GIT_CONTROL_DIRS = frozenset({"hooks"})
GIT_ESSENTIAL = frozenset({"HEAD", "objects", "refs"})  # what makes a directory a repository
# Entries that, beside a HEAD, make a directory one git uses as its repository (a commondir
# file stands for objects and refs); any kind counts, links included, as git follows them.
GIT_MAKERS = frozenset({"HEAD", "objects", "refs", "commondir"})
MAGIC_LINK_AREAS = ("/proc", "/dev/fd")  # other spellings of any path: /proc/self/root/...
CHAT = "chat.patterns"
HOME_DOT = "home directory dot entries"
MODULES = "PYTHONPATH"


_SHADOWABLE: list[frozenset[str]] = []


def _shadowable() -> frozenset[str]:
    """The standard library's module names and those installed beside corral (once)."""
    import sys

    if _SHADOWABLE:
        return _SHADOWABLE[0]
    names = set(sys.stdlib_module_names)
    for directory in sys.path:
        if directory.endswith(("site-packages", "dist-packages")) and os.path.isdir(directory):
            names.update(n.partition(".")[0] for n in os.listdir(directory) if "-" not in n)
    _SHADOWABLE.append(frozenset(names))
    return _SHADOWABLE[0]


# what Python imports from a path entry (importlib.machinery.all_suffixes(), ABI tags aside)
MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")
SIZE = "sandbox.limits.file_size_mb"
LINKED_COPY_BYTES = 1 << 30


def _self_or_parent_in(path: str, paths: Container[str]) -> str | None:
    """The first of `path` and the directories above it that is in `paths`: a few set lookups
    instead of a comparison with every protected path."""
    while True:
        if path in paths:
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


CONFLICT_SCAN_LIMIT = 20_000  # host entries looked at below one deleted directory


def _changed_below(top: str, since_ns: int) -> str | None:
    """The first path below the host directory `top` changed after `since_ns`, by lstat,
    links not followed; None past the limit too (`rm -rf node_modules` must not be held for
    its size: what it deletes goes into the undo journal, not away)."""
    stack, seen = [top], 0
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                for e in it:
                    seen += 1
                    if seen > CONFLICT_SCAN_LIMIT:
                        return None
                    st = e.stat(follow_symlinks=False)
                    if st.st_ctime_ns > since_ns:
                        return e.path
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(e.path)
        except OSError:
            continue
    return None


def _climbs_back(target: str) -> bool:
    """Whether a link target has `..` after a named directory (`a/../b`); leading `..`s
    (`../lib/x`) climb from the link's own place, which is checked."""
    seen_name = False
    for part in target.split("/"):
        if part == "..":
            if seen_name:
                return True
        elif part not in ("", "."):
            seen_name = True
    return False


def _is_site_dir(directory: str) -> bool:
    return os.path.basename(directory) in ("site-packages", "dist-packages")


def _regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _interpreter_name(name: str) -> bool:
    """What a venv's bin links to its base interpreter: python, python3, python3.12, pypy3,
    python3.13t."""
    for stem in ("python", "pypy"):
        if name.startswith(stem):
            version = name[len(stem) :].removesuffix("t")
            return version == "" or version.replace(".", "", 1).isdigit()
    return False


def _interpreter(path: str) -> bool:
    """An executable regular file named like a Python interpreter."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (
        stat.S_ISREG(st.st_mode)
        and st.st_mode & 0o111 != 0
        and _interpreter_name(os.path.basename(path))
    )


def _components_match(parts: list[str], name: list[str]) -> bool:
    """Whether `parts` holds `name`'s components in a row, `*` in them matching any run."""
    return any(
        all(name_matches(parts[i + k], c) for k, c in enumerate(name))
        for i in range(len(parts) - len(name) + 1)
    )


def _components_contain(parts: list[str], name: list[str]) -> bool:
    n = len(name)
    return any(parts[i : i + n] == name for i in range(len(parts) - n + 1))


class Checker:
    """Verdicts for the entries of one change set, against its plan (see stage.create)."""

    def __init__(self, plan: dict[str, Any], apply_hint: str) -> None:
        self.roots: list[str] = plan["roots"]
        self.hidden: list[str] = plan.get("hidden", [])
        self.visible: list[str] = [*plan.get("visible", []), *self.roots]
        self.protected: list[str] = plan["protected"]
        self.protected_set = frozenset(self.protected)
        # each directory above a protected path -> one protected path below it
        self.above_protected: dict[str, str] = {}
        for p in self.protected:
            parent = os.path.dirname(p)
            while parent not in self.above_protected and parent != os.path.dirname(parent):
                self.above_protected[parent] = p
                parent = os.path.dirname(parent)
        names = [n.strip("/").split("/") for n in plan["protected_names"] if n.strip("/")]
        plain = [n for n in names if not any("*" in c for c in n)]
        self.single_names = frozenset(n[0] for n in plain if len(n) == 1)
        self.longer_names = [n for n in plain if len(n) > 1]
        self.wild_names = [n for n in names if any("*" in c for c in n)]  # `mise.*.toml`
        self.chat_patterns: list[str] = plan["chat_patterns"]
        self.home_dot: str = plan.get("home_dot", "")  # $HOME, where it is writable
        dirs = plan.get("module_dirs", ())
        # PYTHONPATH and the workspace; "<root>/**": every directory below the root (a
        # relative PYTHONPATH entry, which each Python reads against its own directory)
        self.module_dirs = frozenset(
            d[:-2] if d.endswith("/*") else d for d in dirs if not d.endswith("/**")
        )
        self.module_trees = tuple(d[:-3] for d in dirs if d.endswith("/**"))
        # "<dir>/*": a Python a hook starts looks there first for every module it imports,
        # its own dependencies included, which corral cannot list: no new module is taken
        self.strict_module_dirs = frozenset(d[:-2] for d in dirs if d.endswith("/*"))
        self.max_bytes = int(plan.get("max_file_bytes") or 0)
        self.created_ns = int(plan["created_ns"])
        self.apply_hint = apply_hint  # "corral apply ID PATH": how to apply one anyway
        self._git_dirs: dict[str, bool] = {}
        self.linked_bytes = 0  # copies of hard-linked files so far (see _kind)
        self._journaled: frozenset[str] | None = None  # see _recently_applied

    def refusal(
        self, code: str, path: str, rule: str, message: str, layer: str = BUILTIN
    ) -> Refusal:
        return Refusal(code, path, rule, layer, f"{self.apply_hint} {path}", message)

    # -- the rules, first match wins ----------------------------------------------------------
    def check(self, entry: Entry) -> Refusal | None:
        return (
            self._protected(entry)
            or self._git(entry)
            or self._mercurial(entry)
            or self._chat(entry)
            or self._kind(entry)
            or self._symlink(entry)
            or self._conflict(entry)
        )

    def _protected(self, entry: Entry) -> Refusal | None:
        path = entry.path
        hit = _self_or_parent_in(path, self.protected_set)
        if hit is not None:
            what = "inside protected " + hit if hit != path else "protected"
            return self.refusal(
                "protected", path, PROTECTED,
                f"{what}: the host runs or obeys it by itself, or it is hidden or corral's own",
            )  # fmt: skip
        if entry.kind in ("whiteout", "file", "link", "special") or entry.opaque:
            # Deleting or replacing a directory takes what is below it along; a link put where
            # a protected path's directory is (or would be) sends that path somewhere else.
            below = self.above_protected.get(path)
            if below is not None and entry.kind == "link":
                return self.refusal(
                    "protected", path, PROTECTED,
                    f"a symlink here would put protected {below} somewhere else",
                )  # fmt: skip
            if below is not None and os.path.isdir(path) and not os.path.islink(path):
                return self.refusal(
                    "protected", path, PROTECTED,
                    f"deleting or replacing this directory would change protected {below}",
                )  # fmt: skip
        parts = entry.rel.split("/")
        hit_name = next((p for p in parts if p in self.single_names), None)
        if hit_name is None:
            hit_name = next(
                (
                    "/".join(n)
                    for n in self.longer_names
                    if n[0] in parts and _components_contain(parts, n)
                ),
                None,
            )
        if hit_name is None:
            hit_name = next(
                ("/".join(n) for n in self.wild_names if _components_match(parts, n)), None
            )
        if hit_name is not None:
            return self.refusal(
                "protected", path, PROTECTED,
                f"protected name {hit_name}: the host runs or obeys it by itself",
            )  # fmt: skip
        if self._site_start_up(entry):
            return self.refusal(
                "protected", path, MODULES,
                "a start-up file of a Python installation (.pth, sitecustomize): it runs at "
                "every start of that Python",
            )  # fmt: skip
        module = self._shadowing_module(entry)
        if module is not None:
            return self.refusal(
                "protected", path, MODULES,
                f"a new module {module} where Python looks first (PYTHONPATH, the workspace): "
                "it would be imported in place of the real one, by corral's own process too",
            )  # fmt: skip
        home = self.home_dot
        if home and path.startswith(home + "/.") and path != home:
            # No list of start-up files is ever whole (~/.bash_aliases, a user-site .pth,
            # ~/.config/environment.d, ~/.tmux.conf, ...): with $HOME writable, every entry of
            # it whose name starts with a dot is held, and all below it.
            first = path[len(home) + 1 :].split("/", 1)[0]
            return self.refusal(
                "protected", path, HOME_DOT,
                f"in ~/{first}: your programs read their configuration and start-up files from "
                "your home directory's dot entries",
            )  # fmt: skip
        return None

    def _in_module_dir(self, directory: str) -> bool:
        return directory in self.module_dirs or any(
            is_within(directory, t) for t in self.module_trees
        )

    def _shadowing_module(self, entry: Entry) -> str | None:
        """The module name a new entry would shadow: `json.py` or `json/` put directly in a
        directory Python searches before the standard library. Existing module files are the
        project's own and are not judged; a new one named like a standard or an installed
        module is held, also one put where something else was (a directory `json.py` made by
        an earlier run, a link); a start-up module (sitecustomize) new or changed. A package
        is its `__init__` with any suffix Python loads (`__init__.pyc` with no source, an
        extension module)."""
        if not (self.module_dirs or self.module_trees) or entry.kind not in ("file", "link"):
            return None
        directory, name = os.path.split(entry.path)
        if os.path.basename(directory) == "__pycache__" and name.endswith(".pyc"):
            # the bytecode Python runs in place of a source it matches (timestamp and size
            # are in its header): a start-up module's, new or changed, is held
            name = name.partition(".")[0]
            if self._in_module_dir(os.path.dirname(directory)) and name in STARTUP_MODULES:
                return name
            return None
        if entry.kind == "link" and "." not in name:
            pass  # `json -> elsewhere`: a directory link imports as the package it leads to
        elif not name.endswith(MODULE_SUFFIXES):
            return None
        name = name.partition(".")[0]
        if name == "__init__":  # a regular package (a bare directory never shadows one)
            directory, name = os.path.split(directory)
        if not self._in_module_dir(directory) or _is_site_dir(directory):
            return None  # (a venv's site-packages comes after the standard library)
        if name in STARTUP_MODULES:
            return name
        if _regular_file(entry.path):
            return None  # the project's own module, changed
        if name in _shadowable() or directory in self.strict_module_dirs:
            return name
        return None

    def _site_start_up(self, entry: Entry) -> bool:
        """A `.pth` file or sitecustomize in the site-packages of a venv on the host's PATH
        (see resolution._on_path): its Python runs them at every start, new or changed."""
        if entry.kind not in ("file", "link"):
            return False
        directory, name = os.path.split(entry.path)
        if directory not in self.module_dirs or not _is_site_dir(directory):
            return False
        return name.endswith(".pth") or name.partition(".")[0] in STARTUP_MODULES

    @staticmethod
    def _repository_in(has: Callable[[str], bool]) -> bool:
        """Whether git would take a directory with these entries for a repository: a HEAD,
        and objects and refs or a commondir that stands for them."""
        return has("HEAD") and ((has("objects") and has("refs")) or has("commondir"))

    def _is_git_dir(self, root: str, rel: str, upper_root: str) -> bool:
        """A directory git would use as a repository once the change set is applied: named
        .git, or holding what makes one (see GIT_MAKERS) in the merged view, the sandbox's
        upper layer over the host, each entry of any kind (a link to ../.git/objects is an
        objects directory to git)."""
        key = os.path.join(root, rel)
        if key not in self._git_dirs:
            self._git_dirs[key] = os.path.basename(rel) == ".git" or self._repository_in(
                lambda name: any(
                    os.path.lexists(os.path.join(base, rel, name)) for base in (upper_root, root)
                )
            )
        return self._git_dirs[key]

    def _was_git_dir(self, root: str, rel: str) -> bool:
        """A repository on the host already, before this change set."""
        return os.path.basename(rel) == ".git" or self._repository_in(
            lambda name: os.path.lexists(os.path.join(root, rel, name))
        )

    def _git(self, entry: Entry) -> Refusal | None:
        parts = entry.rel.split("/")
        path = entry.path
        upper_root = entry.source[: len(entry.source) - len(entry.rel)].rstrip("/")
        if parts[-1] == ".git" and entry.kind != "whiteout" and not os.path.lexists(path):
            return self.refusal(
                "new-repository", path, "git",
                "a new repository: git on the host would obey its config and hooks",
            )  # fmt: skip
        if parts[-1] == ".git" and entry.kind in ("file", "link"):
            return self.refusal(
                "protected", path, "git",
                "a .git file or link names the repository git uses here",
            )  # fmt: skip
        parent = "/".join(parts[:-1])
        if (
            parts[-1] in GIT_MAKERS
            and entry.kind != "whiteout"
            and self._is_git_dir(entry.root, parent, upper_root)
            and not self._was_git_dir(entry.root, parent)
        ):
            return self.refusal(
                "new-repository", path, "git",
                f"{parts[-1]} would make {os.path.dirname(path)} a repository: git on the host "
                "would obey its config and hooks",
            )  # fmt: skip
        if (
            entry.kind == "dir"
            and not os.path.lexists(path)
            and self._is_git_dir(entry.root, entry.rel, upper_root)
        ):
            return self.refusal(
                "new-repository", path, "git",
                "a new bare repository: git on the host would obey its config and hooks",
            )  # fmt: skip
        for i in range(len(parts) - 1, -1, -1):  # down to the root: it may be a bare repository
            if not self._is_git_dir(entry.root, "/".join(parts[:i]), upper_root):
                continue
            inside = parts[i:]
            if len(inside) == 1 and inside[0] in GIT_ESSENTIAL and entry.kind == "whiteout":
                return self.refusal(
                    "protected", path, "git", f"deleting {inside[0]} would break the repository"
                )
            if len(inside) == 2 and inside[0] == "worktrees" and not os.path.lexists(path):
                return self.refusal(
                    "protected", path, "git",
                    "a new linked-worktree entry: only `git worktree add` makes one, and git "
                    "on the host would take its config and hooks from where it points",
                )  # fmt: skip
            if inside[-1] in GIT_CONTROL or any(p in GIT_CONTROL_DIRS for p in inside):
                return self.refusal(
                    "protected", path, "git",
                    "a git control file (config or hooks): git on the host would obey it",
                )  # fmt: skip
            if entry.kind == "link":
                # git makes no symlinks in its directory, and writes through any it finds:
                # COMMIT_EDITMSG, logs/HEAD, FETCH_HEAD, on every commit or fetch
                return self.refusal(
                    "protected", path, "git",
                    f"a symlink in a git directory (to {entry.target}): git on the host would "
                    "write through it to wherever it leads",
                )  # fmt: skip
            break
        return None

    def _mercurial(self, entry: Entry) -> Refusal | None:
        """A `.hg` the host does not have as a directory (new, or a link in its place, `sub/.hg
        -> ../x`): Mercurial on the host would obey the hgrc and extensions of that repository
        (a subrepository's at `hg commit`). An existing repository's store stays writable."""
        if entry.kind == "whiteout" or ".hg" not in entry.rel.split("/"):
            return None
        parts = entry.rel.split("/")
        hg = os.path.join(entry.root, *parts[: parts.index(".hg") + 1])
        if (
            os.path.isdir(hg)
            and not os.path.islink(hg)
            and not (hg == entry.path and entry.kind != "dir")
        ):
            return None
        return self.refusal(
            "new-repository", entry.path, "mercurial",
            f"a new Mercurial repository ({hg}): hg on the host would obey its hgrc and "
            "extensions",
        )  # fmt: skip

    def _chat(self, entry: Entry) -> Refusal | None:
        name = os.path.basename(entry.rel)
        for pattern in self.chat_patterns:
            if fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(entry.path, pattern):
                return self.refusal(
                    "chat-file", entry.path, CHAT,
                    "a chat file: its frontmatter carries corral settings, for you to change",
                )  # fmt: skip
        return None

    def _kind(self, entry: Entry) -> Refusal | None:
        if entry.kind == "special":
            return self.refusal(
                "special-file", entry.path, BUILTIN, "a device file, fifo or socket"
            )
        if entry.kind == "file" and self.max_bytes and entry.size > self.max_bytes:
            return self.refusal(
                "too-large", entry.path, SIZE,
                f"{entry.size} bytes, over the limit of {self.max_bytes}",
            )  # fmt: skip
        if entry.kind == "file" and entry.nlink > 1:
            # each name of a hard-linked file lands as a copy of its own: a thousand names of
            # one large file would be a thousand copies on the host
            self.linked_bytes += entry.size
            if self.linked_bytes > LINKED_COPY_BYTES:
                return self.refusal(
                    "too-large", entry.path, BUILTIN,
                    f"a hard-linked file: the copies of this change set's hard-linked files "
                    f"would pass {LINKED_COPY_BYTES >> 20} MiB",
                )  # fmt: skip
        return None

    def _link_at(self, path: str, entry: Entry) -> str | None:
        """The target of a symlink at `path` as the host will see it after applying: the
        change set's own entry where it has one (a file or directory there hides the host's
        link), else the host's; None when `path` is no link."""
        if is_within(path, entry.root):
            upper_root = entry.source[: len(entry.source) - len(entry.rel)].rstrip("/")
            shadow = os.path.join(upper_root, os.path.relpath(path, entry.root))
            if os.path.lexists(shadow):
                return os.readlink(shadow) if os.path.islink(shadow) else None
        return os.readlink(path) if os.path.islink(path) else None

    def _resolved(self, entry: Entry) -> str | None:
        """Where the link `entry` leads once applied, resolved component by component as the
        kernel will (a target `ua/../home/x` goes through `ua`, which may be a link to /usr:
        normpath would fold it away); None after too many links. Stops at /proc."""
        parts = os.path.join(os.path.dirname(entry.path), entry.target).split("/")
        current, hops, i = "/", 40, 0
        while i < len(parts):
            part = parts[i]
            i += 1
            if part in ("", "."):
                continue
            if part == "..":
                current = os.path.dirname(current)
                continue
            candidate = os.path.join(current, part)
            if any(is_within(candidate, m) for m in MAGIC_LINK_AREAS):
                return candidate
            link = self._link_at(candidate, entry) if candidate != entry.path else entry.target
            if link is None:
                current = candidate
                continue
            hops -= 1
            if hops < 0:
                return None
            parts = [*os.path.join(current, link).split("/"), *parts[i:]]
            current, i = "/", 0
        return current

    def _symlink(self, entry: Entry) -> Refusal | None:
        if entry.kind != "link":
            return None
        base = os.path.dirname(entry.path)
        # normpath keeps a leading "//" (POSIX leaves its meaning open; Linux reads "/")
        lexical = "/" + os.path.normpath(os.path.join(base, entry.target)).lstrip("/")
        resolved = self._resolved(entry)
        if resolved is None:
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN, "a symlink through too many links"
            )
        if _climbs_back(entry.target):
            # `p/sub/../x`: where `..` leads depends on what p/sub is when the link is used,
            # and a later run can make p/sub a link elsewhere: judged now, it means nothing
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN,
                f"a symlink to {entry.target}, which goes into a directory and back out "
                "of it: where it leads changes when that directory becomes a link",
            )  # fmt: skip
        for target in dict.fromkeys((lexical, resolved)):
            refusal = self._link_target(entry, target)
            if refusal is not None:
                return refusal
        if any(is_within(resolved, r) for r in self.roots):
            return None
        host = os.path.lexists(entry.path) and not os.path.islink(entry.path)
        if host or entry.path in self._recently_applied():
            # A file (perhaps open in your editor) turned into a link out of the writable
            # roots: the next save of it would write there. Also when an earlier change set
            # deleted or wrote it (the file gone in one run, the link made in the next).
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN,
                f"{entry.path} replaced by a symlink to {entry.target}, outside the writable "
                "roots: saving the file would write there",
            )  # fmt: skip
        if self._venv_interpreter(entry, resolved):
            if os.access(resolved, os.W_OK):
                # Links in the workspace made while they dangled (`notes.txt -> p/python3`,
                # later `p -> .venv/bin`) can come to lead here: a save through them would
                # rewrite an interpreter you run. Passes only where no save can.
                return self.refusal(
                    "symlink-outside", entry.path, BUILTIN,
                    f"a venv's link to {resolved}, an interpreter you can write (as root, "
                    "every file): a file that comes to lead here would rewrite it when saved; "
                    "if you made this venv, apply it",
                )  # fmt: skip
            return None
        # A link out of the writable roots: a file of that name open in your editor, or a
        # program writing to it, would write there at its next save, however the link came
        # to be (a file deleted in one run and a link made in the next, a directory on its
        # way made a link later), and wherever it leads (a toolchain of yours, or /usr for
        # root, where a .pth runs code). Only a venv's interpreter passes.
        return self.refusal(
            "symlink-outside", entry.path, BUILTIN,
            f"a symlink to {entry.target}, outside the writable roots: saving or writing "
            "through it would change what is there",
        )  # fmt: skip

    def _venv_interpreter(self, entry: Entry, resolved: str) -> bool:
        """`.venv/bin/python -> /usr/bin/python3.11`: a link named like an interpreter in a
        venv's bin directory (its pyvenv.cfg beside bin, in the change set or on the host) to
        an executable file named like one. Any other name or target would let a file the
        editor holds (`src/app.py`, reached through `src -> w/bin`) write out of the roots."""
        directory = os.path.dirname(entry.path)
        if os.path.basename(directory) != "bin" or not _interpreter(resolved):
            return False
        if not _interpreter_name(os.path.basename(entry.path)):
            return False
        venv = os.path.dirname(directory)
        cfg_rel = os.path.join(os.path.dirname(os.path.dirname(entry.rel)), "pyvenv.cfg")
        upper_root = entry.source[: len(entry.source) - len(entry.rel)].rstrip("/")
        staged = os.path.join(upper_root, cfg_rel)
        return os.path.isfile(staged) or os.path.isfile(os.path.join(venv, "pyvenv.cfg"))

    def _recently_applied(self) -> frozenset[str]:
        """Paths the undo journal's change sets deleted or wrote (read once, when a link out
        of the writable roots is judged where the host has nothing now)."""
        if self._journaled is None:
            from corral.changes import journal

            found: set[str] = set()
            for name in journal.entries():
                try:
                    found.update(r["path"] for r in journal.records(name) if r["op"] != "chmod")
                except (OSError, ValueError, KeyError):
                    continue
            self._journaled = frozenset(found)
        return self._journaled

    def _link_target(self, entry: Entry, target: str) -> Refusal | None:
        magic = next((m for m in MAGIC_LINK_AREAS if is_within(target, m)), None)
        if magic is not None:
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN,
                f"a symlink into {magic}, where a path names any other path "
                "(/proc/self/root/...): where it leads cannot be checked",
            )  # fmt: skip
        hit = _self_or_parent_in(target, self.protected_set)
        if hit is not None:
            return self.refusal("protected", entry.path, PROTECTED, f"a symlink to protected {hit}")
        if any(is_within(target, h) for h in self.hidden) and not any(
            is_within(target, v) for v in self.visible
        ):
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN,
                f"a symlink to {entry.target}, outside the writable roots and hidden from "
                "the sandbox",
            )  # fmt: skip
        above = next((h for h in self.hidden if is_within(h, target) and h != target), None)
        if above is not None:  # `ln -s / root`: root/home/me/.ssh is a path in the workspace
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN,
                f"a symlink to {entry.target}, above {above}, which is hidden from the sandbox",
            )  # fmt: skip
        below = self.above_protected.get(target)
        if below is not None:
            # `memories -> .git`: a tool that writes memories/config writes .git/config
            return self.refusal(
                "protected", entry.path, PROTECTED, f"a symlink above protected {below}"
            )
        return None

    def _conflict(self, entry: Entry) -> Refusal | None:
        """The host changed this path after the command started: keep the host's version.
        Deleting or replacing a directory takes what is below it: anything changed there
        counts (an edit two levels down does not touch the directory's own times)."""
        try:
            st = os.lstat(entry.path)
        except OSError:
            return None
        if entry.kind == "dir" and not entry.opaque:
            return None  # its contents are checked one by one
        changed = entry.path if st.st_ctime_ns > self.created_ns else None
        if changed is None and stat.S_ISDIR(st.st_mode):
            changed = _changed_below(entry.path, self.created_ns)
        if changed is None:
            return None
        where = "" if changed == entry.path else f" ({changed} below it)"
        return self.refusal(
            "conflict", entry.path, BUILTIN,
            f"changed on the host while the command ran{where}: the host's version is kept",
        )  # fmt: skip


def verdicts(checker: Checker, entries: list[Entry]) -> list[tuple[Entry, Refusal | None]]:
    """Each entry with its refusal or None; a refused directory refuses what is below it."""
    refused_dirs: dict[str, Refusal] = {}
    out: list[tuple[Entry, Refusal | None]] = []
    for entry in entries:
        above = (
            _self_or_parent_in(os.path.dirname(entry.path), refused_dirs) if refused_dirs else None
        )
        parent = refused_dirs[above] if above is not None else None
        verdict = parent or checker.check(entry)
        if verdict is not None and entry.kind == "dir" and parent is None:
            refused_dirs[entry.path] = verdict
        out.append((entry, verdict))
    return out
