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
- in a git directory, anything but objects (each what its name says), refs and reflogs,
  HEAD and its kin, packed-refs and the index; and those when a commit they make reachable
  or an entry adds a protected name or path (git_history.py): host git writes them at the
  next checkout, reset or stash pop;
- chat files (`chat.patterns`): their frontmatter carries corral settings;
- new modules where Python or Lua looks first (module_rules.py), and a change to the host
  tools' settings in pyproject.toml, setup.cfg or tox.ini (tool_settings_rules.py: read as
  TOML or INI, as the tools read them);
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

from corral.changes import words
from corral.changes.git_history import GitHistoryRules
from corral.changes.ignored_rules import IgnoredRules
from corral.changes.journal import index_kept
from corral.changes.link_rules import LinkRules
from corral.changes.loaded_rules import LoadedRules
from corral.changes.module_rules import LuaRules, ModuleRules
from corral.changes.project_top_rules import ProjectTopRules
from corral.changes.tool_settings_rules import ToolSettingsRules
from corral.paths import read_regular, self_or_parent_in
from corral.toolguard.ops.refusal import BUILTIN, PROTECTED, Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.changes.scan import Entry

GIT_CONTROL = frozenset({"config", "config.worktree", "commondir", "gitdir"})
# (a stopped rebase's or cherry-pick's state: its todo's `exec` lines run at the user's
# `git rebase --continue`, review r31b)
GIT_CONTROL_DIRS = frozenset({"hooks", "rebase-merge", "rebase-apply", "sequencer"})
GIT_ESSENTIAL = frozenset({"HEAD", "objects", "refs"})  # what makes a directory a repository
# Entries that, beside a HEAD, make a directory one git uses as its repository (a commondir
# file stands for objects and refs); any kind counts, links included, as git follows them.
GIT_MAKERS = frozenset({"HEAD", "objects", "refs", "commondir"})
CHAT = "chat.patterns"
HOME_DOT = "home directory dot entries"
MODULES = "PYTHONPATH"
LUA_MODULES = "Lua's ./?.lua"
TOOL_SETTINGS = "host tools' settings"
PROJECT_DOT = "dot entries of host tools' configs"
PROJECT_CONFIG = "configs at a project's top"
# Dot entries, at any depth, that no host tool takes code, programs or paths from: caches,
# ignore lists, CI definitions (run elsewhere), an editor's indentation. Any other new or
# changed one is held: it is where host tools look for their configuration, from the top
# and from every directory up from a file they look at, and no list of those is ever whole
# (each review round found another: .rubocop.yml, .golangci.yml, .pnpmfile.cjs, .yarnrc.yml,
# .sdkmanrc, docs/.markdownlint.cjs, ...). Not .config (cosmiconfig's `.config/<name>rc`),
# .terraform (its backend's address gets its password) or .idea (watcher tasks), r42b; nor
# .secrets.baseline (detect-secrets imports the plugins it names), .releaserc (plugins) or
# .dart_tool (its package_config points the analyzer's plugins), r44b; nor .editorconfig:
# Neovim obeys it, and a chat saved with `end_of_line = cr` read back as one line, its
# frontmatter gone (r51c ECCHATCR); nor .vscode: its extensions read their own configs
# there (cspell.json's imported modules, r59b CSPELL).
# Protected names (below the inert ones too: .github/hooks, .vscode/mcp.json) and git's and
# Mercurial's directories have rules of their own. What tools own below node_modules,
# target, a venv or a cache is not looked at.
INERT_DOT = frozenset({
    ".git", ".hg", ".gitignore", ".gitkeep", ".keep", ".dockerignore", ".npmignore",
    ".prettierignore", ".eslintignore", ".stylelintignore", ".env.example",
    ".env.sample", ".env.template", ".github", ".gitlab", ".gitlab-ci.yml", ".circleci",
    ".travis.yml", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".cache",
    ".venv", ".tox", ".nox", ".coverage", ".eggs", ".ipynb_checkpoints", ".next", ".nuxt",
    ".turbo", ".parcel-cache", ".svelte-kit", ".angular", ".gradle", ".DS_Store", ".benchmarks",
    ".sass-cache", ".eslintcache", ".stylelintcache", ".yarn", ".husky",
    ".pnpm-store", ".npm", ".direnv", ".mvn", ".devcontainer",
    ".cargo", ".mise", ".nvim", ".vim", ".lazy.lua", ".mailmap",
    ".git-blame-ignore-revs", ".readthedocs.yaml", ".readthedocs.yml", ".clang-format",
    ".clang-tidy", ".ctags.d", ".ctags", ".codecov.yml", ".mergify.yml",
    ".renovaterc", ".renovaterc.json", ".pre-commit-hooks.yaml", ".changeset",
})  # fmt: skip


# Inert dot directories that hold host tools' configs too: only what is below these names
# is inert there (and a Markdown file at their top). GitHub Copilot CLI starts the programs
# `.github/mcp.json` and `.github/lsp.json` name at a plain `copilot` (r65b GHCOPILOT);
# GitLab Duo reads `.gitlab/duo/mcp.json` (DUOMCP). What GitHub and GitLab run, in CI, stays.
PARTLY_INERT = {
    ".github": frozenset({
        "workflows", "ISSUE_TEMPLATE", "PULL_REQUEST_TEMPLATE", "DISCUSSION_TEMPLATE",
        "actions", "CODEOWNERS", "dependabot.yml", "dependabot.yaml", "FUNDING.yml",
        "release.yml", "release.yaml", "labeler.yml", "pull_request_template.md",
    }),
    ".gitlab": frozenset({
        "issue_templates", "merge_request_templates", "ci", "CODEOWNERS",
    }),
    # Changesets' own entries are Markdown; its config.json names the modules `changeset
    # add` and `changeset version` load (r77b CHANGESETCFG)
    ".changeset": frozenset(),
}  # fmt: skip


def _inert_at(parts: list[str], i: int) -> bool:
    """Whether the i-th part of a path is an inert dot entry for what is below it."""
    part = parts[i]
    if part not in INERT_DOT:
        return False
    below = PARTLY_INERT.get(part)
    if below is None or i + 1 >= len(parts):
        return True
    name = parts[i + 1]
    return name in below or (i + 2 == len(parts) and name.endswith(".md"))


SIZE = "sandbox.limits.file_size_mb"
LINKED_COPY_BYTES = 1 << 30


CONFLICT_SCAN_LIMIT = 20_000  # host entries looked at below one deleted directory


def changed_below(top: str, since_ns: int) -> str | None:
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


# what runs or obeys the usual protected names, said when one is held (r46c: "runs or obeys it
# by itself, or it is hidden or corral's own" named no reason)
WHY_KEPT = {
    ".envrc": "direnv runs it when your shell enters the directory",
    ".env": "direnv and tools load it when your shell or they start here",
    ".nvim.lua": "Neovim runs it at start in this directory ('exrc')",
    ".nvimrc": "Neovim runs it at start in this directory ('exrc')",
    ".exrc": "Vim and Neovim run it at start in this directory ('exrc')",
    ".git": "git runs or obeys it (hooks, config) at your next git command",
    ".pdbrc": "pdb runs it when a debugger starts here",
    ".pre-commit-config.yaml": "pre-commit runs what it names at git commit",
    ".tool-versions": "mise and asdf obey it when your shell enters the directory",
    "mise.toml": "mise runs what it names when your shell enters the directory",
    ".mise.toml": "mise runs what it names when your shell enters the directory",
    ".bashrc": "your shell runs it at start",
    ".zshrc": "your shell runs it at start",
    ".profile": "your shell runs it at start",
}


def _why_kept(path: str) -> str | None:
    return next((WHY_KEPT[p] for p in reversed(path.split("/")) if p in WHY_KEPT), None)


class Checker(
    LinkRules, ModuleRules, LuaRules, LoadedRules, ToolSettingsRules, ProjectTopRules,
    GitHistoryRules, IgnoredRules,
):  # fmt: skip
    """Verdicts for the entries of one change set, against its plan (see stage.create)."""

    # -- the rules, first match wins ----------------------------------------------------------
    def check(self, entry: Entry) -> Refusal | None:
        if self.incomplete:
            return self.refusal(
                "unchecked", entry.path, PROTECTED,
                f"not checked: {self.incomplete} (apply it by name if you mean to)",
            )  # fmt: skip
        return (
            self._protected(entry)
            or self._git(entry)
            or self._mercurial(entry)
            or self._chat(entry)
            or self._kind(entry)
            or self._symlink(entry)
            or self._conflict(entry)
            or self._ignored(entry)
        )

    def _protected(self, entry: Entry) -> Refusal | None:
        path = entry.path
        hit = self_or_parent_in(path, self.protected_set)
        if hit is not None:
            what = "inside protected " + hit if hit != path else "protected"
            why = self.protected_why.get(hit) or _why_kept(hit)
            name = self.protected_name_in(entry.rel.split("/")) if not why else None
            if name is not None and hit == path:
                # (a name the host has already, kept read-only: said as a new one is, r64c
                # PROTECTWHY: `.prettierrc` was "... or it is hidden or corral's own")
                what, why = f"protected name {name}", "the host runs or obeys it by itself"
            why = why or "the host runs or obeys it by itself, or it is hidden or corral's own"
            return self.refusal("protected", path, PROTECTED, f"{what}: {why}")
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
        hit_name = self.protected_name_in(parts)
        if hit_name is not None:
            return self.refusal(
                "protected", path, PROTECTED,
                f"protected name {hit_name}: the host runs or obeys it by itself",
            )  # fmt: skip
        session = _session(entry)
        if session is not None:
            return self.refusal(
                "protected", path, PROTECTED,
                f"{session}: `nvim -S` sources it as Vim script",
            )  # fmt: skip
        dot = _config_dot(parts, lambda i: self._tool_tree(entry, parts, i))
        if (
            dot is not None
            and entry.kind != "whiteout"
            and not (self.home_dot and entry.root == self.home_dot)
        ):
            return self.refusal(
                "protected", path, PROJECT_DOT,
                f"{dot}: host tools (linters, formatters, language servers, package "
                "managers) take their configuration from dot files like it, here or in a "
                "directory above what they look at; apply it if you meant it",
            )  # fmt: skip
        if (
            entry.kind in ("file", "link")
            and (_config_module(parts[-1]) or _loads_plugins(entry))
            and not self._in_tool_tree(entry, parts)
        ):
            return self.refusal(
                "protected", path, PROJECT_DOT,
                "a JavaScript or TypeScript module named as a tool's config, or a stylesheet "
                "naming a plugin or config module: editors' language servers and extensions "
                "load it when you open the project (tailwind, vitest, cspell), no prompt; "
                "apply it if you meant it",
            )  # fmt: skip
        top = self._project_top(entry) if self.project_configs == "hold" else None
        if (
            top is not None
            and not any(_inert_at(parts, i) for i in range(len(parts) - 1))
            and not self._in_tool_tree(entry, parts)
        ):
            where = "the workspace's top" if top == entry.root else f"{top}, a project's top"
            # (shorter, and what it is: a file in a config format, r68c CONFIGWORD)
            return self.refusal(
                "project-config", path, PROJECT_CONFIG,
                f"a config-format file at {where}: editors' tools find their configs there by "
                "name, and some run a program one names (sandbox.project_configs)",
            )  # fmt: skip
        config = self._makes_top(entry) if self.project_configs == "hold" else None
        if config is not None and not self._in_tool_tree(entry, parts):
            return self.refusal(
                "project-config", path, PROJECT_CONFIG,
                f"a project's manifest beside {config}: it would make that file a config "
                "at a project's top, which editors' language servers, linters and agents read "
                "by name (and it was never held as one); apply both if you meant them",
            )  # fmt: skip
        if self._beam_at_top(entry):
            return self.refusal(
                "protected", path, PROTECTED,
                "an Erlang module at a project's top: Erlang looks in the current directory "
                "before OTP's own applications, so rebar3 and mix there would load it in "
                "place of one (httpc, cover) and run its on_load; apply it if you meant it",
            )  # fmt: skip
        loaded = self._loaded_unread(entry, parts)
        if loaded is not None:
            return self.refusal(
                "protected", path, PROTECTED, f"{loaded}; apply it if your command built it"
            )
        if entry.kind == "whiteout" and parts[-1] in BUILD_MARK_NAMES:
            # (a build tree known by its mark: deleting it, then planting in the next run,
            # undid the rule in two runs, r79b MARKDELETE)
            return self.refusal(
                "protected", path, PROTECTED,
                f"deleting {parts[-1]}, which marks a build tree: what a build reuses there "
                "would no longer be held; apply it if you meant to clean the build",
            )  # fmt: skip
        tree = self._build_tree(entry, parts) if entry.kind != "whiteout" else None
        if tree is not None:
            return self.refusal(
                "protected", path, PROTECTED,
                f"{words.IN_BUILD_TREE}{tree} (cargo's, CMake's, Maven's or Gradle's): a build "
                "reuses what is there without building it again from sources you can read "
                "(rust-analyzer's `cargo check` when you open the project, cmake, mvn); apply "
                "the tree if your command built it",
            )  # fmt: skip
        if entry.kind == "link" and parts[-1] in PARTLY_INERT:
            # (r68b GITLABLINK: `.gitlab -> docs/gl` made docs/gl/duo/mcp.json Duo's config)
            return self.refusal(
                "protected", path, PROJECT_DOT,
                f"a symlink named {parts[-1]}: what it leads to would be read as that "
                "directory, whose tools' configs (Copilot's, GitLab Duo's) are held",
            )  # fmt: skip
        shadowed = self._system_program(entry, parts) if entry.kind in ("file", "link") else None
        if shadowed is not None:
            return self.refusal(
                "protected", path, PROTECTED,
                f"a program in node_modules/.bin named as your {shadowed}: husky's git hooks "
                "and npm scripts put node_modules/.bin first on PATH, so your next `git "
                f"commit` would run it in place of {shadowed}; apply it if you meant it",
            )  # fmt: skip
        if entry.kind == "link":
            # `crate/.cargo -> ../cfg`: cfg/config.toml becomes crate/.cargo/config.toml
            hit_name = self.protected_name_above(parts)
            if hit_name is not None:
                return self.refusal(
                    "protected", path, PROTECTED,
                    f"a symlink where the directory of protected name {hit_name} goes: what it "
                    "leads to would be read as that name",
                )  # fmt: skip
        if self._site_start_up(entry):
            return self.refusal(
                "protected", path, MODULES,
                "a start-up file of a Python installation (.pth, sitecustomize): it runs at "
                "every start of that Python",
            )  # fmt: skip
        if self._venv_python(entry):
            return self.refusal(
                "protected", path, MODULES,
                "a venv's python that is a script or leads into the workspace: uv, Poetry and "
                "PDM run a project venv's python by themselves (`uv pip list`); make the venv "
                "with `python -m venv`",
            )  # fmt: skip
        for rule, why in (
            (self._namespace_made_regular, "an __init__ that makes the namespace package {}/ "
             "a regular one: it would run at every import of what is below it, which ran "
             "nothing before"),
            (self._venv_unmarked, "it makes the venv {}/ a directory of modules Python "
             "imports by its name (a venv claims no module name; without its pyvenv.cfg it "
             "would)"),
            (self._over_a_namespace, "a module Python would import in place of {}/, a "
             "directory of modules without an __init__ that stays as you see it (`git diff` "
             "shows nothing)"),
        ):  # fmt: skip
            found = rule(entry)
            if found is not None:
                return self.refusal("protected", path, MODULES, why.format(found))
        over = self._over_a_module(entry)
        if over is not None and self._stand_in(entry) is None:
            return self.refusal(
                "protected", path, MODULES,
                f"a compiled module or package Python would load in place of {over}, a source "
                "that stays as you see it (`git diff` shows nothing)",
            )  # fmt: skip
        source = self._stand_in(entry)
        if source is not None:
            return self.refusal(
                "protected", path, MODULES,
                f"bytecode or a compiled module Python would load in place of protected "
                f"{source}: {self.protected_why.get(source) or 'the host runs it'}",
            )  # fmt: skip
        shadowing = self._shadowing_module(entry)
        if shadowing is not None:
            name, real = shadowing
            # (a new name's words name no module: held side by side, several read as one
            # line, `held a.py, b.py: ...`, not the same long reason again for each)
            what = (
                f"a new module {name} where Python looks first (PYTHONPATH, the workspace): it "
                "would be imported in place of the real one, by corral's own process too"
                if real
                else "a new module name where Python looks first (PYTHONPATH, the workspace): "
                "`python -m`, `-c`, the REPL and IPython there import it before anything "
                "installed, so a library's optional import of that name would run it; apply "
                "it if it is the project's"
            )
            return self.refusal("protected" if real else "new-module", path, MODULES, what)
        unread = self._unreadable_code(entry)
        if unread is not None:
            return self.refusal(
                "protected", path, MODULES,
                f"{unread}: Python and its tools load it from the workspace (Jedi imports a "
                "compiled module to complete its names; pytest, flake8 and pylsp load the "
                "plugins entry points name) and there is no source of it to review; apply it "
                "if your command built or installed it",
            )  # fmt: skip
        lua = self._lua_at_top(entry)
        if lua is not None and lua.endswith("/"):
            return self.refusal(
                "protected", path, LUA_MODULES,
                f"a Lua file in {lua}, a top-level directory that holds no Lua file yet: Lua "
                f"and Neovim look in the current directory first (`require(\"{lua[:-1]}...\")` "
                "would load it); a new plugin's own files: apply them",
            )  # fmt: skip
        if lua is not None:
            return self.refusal(
                "protected", path, LUA_MODULES,
                f"a new Lua module {lua} at the top of the workspace: Lua and Neovim look in "
                "the current directory before what is installed (`require` would load it)",
            )  # fmt: skip
        # (not an installed package's own package.json: npm install was held, r68c NMPKGJSON)
        setting = self._tool_settings(entry)
        if setting is not None and self._in_tool_tree(entry, parts):
            setting = None
        if setting is not None:
            what = (
                f"a change to host tools' settings ({setting})"
                if setting
                else "a change to host tools' settings that corral cannot read (a [tool.*] "
                "table of pyproject.toml, another tool's section of setup.cfg or tox.ini, a "
                "tool's key of package.json)"
            )
            return self.refusal(
                "protected", path, TOOL_SETTINGS,
                f"{what}: type checkers, linters, formatters and language servers on the "
                "host obey them, and some run programs or write files they name",
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

    def _system_program(self, entry: Entry, parts: list[str]) -> str | None:
        """The program (a path) a new `node_modules/.bin/<name>` would stand in for on a PATH
        that puts node_modules/.bin first (r66b HUSKYPATH: husky v9's `.husky/_/h` then ran a
        planted `sh` at the user's `git commit`): one of that name in a system directory, on
        the PATH the command was started with, or in a toolchain's usual home (r67b
        HUSKYUSERPATH: cargo in ~/.cargo/bin, node from nvm). Only where husky v9's hooks
        are installed (its `.husky/_` at the top, or beside that node_modules): elsewhere a
        package's `tsc` beside your global one was held for nothing (r68c NMBINGLOBAL)."""
        if len(parts) < 3 or parts[-2] != ".bin" or parts[-3] != "node_modules":
            return None
        beside = os.path.join(entry.root, *parts[:-3])
        if not any(os.path.isdir(os.path.join(d, ".husky", "_")) for d in (entry.root, beside)):
            return None
        for directory in self._program_dirs():
            path = os.path.join(directory, parts[-1])
            if os.path.lexists(path):
                return path
        return None

    def _program_dirs(self) -> list[str]:
        """Where programs a hook names are found: system directories, the PATH the command
        was started with (but node_modules' own), the toolchains' homes."""
        if self._programs is None:
            import glob
            import pwd

            from corral.sandbox.hostbin import SYSTEM_BIN_DIRS

            homes = {str(self.plan.get("host_home") or "")}
            try:
                homes.add(pwd.getpwuid(os.getuid()).pw_dir)
            except KeyError:
                pass
            path = str(self.plan.get("host_path") or "").split(":")
            found = [*SYSTEM_BIN_DIRS, "/usr/local/bin", *(p for p in path if p.startswith("/"))]
            for home in sorted(h for h in homes if h.startswith("/") and h != "/"):
                for pattern in TOOLCHAIN_HOMES:
                    found += glob.glob(os.path.join(home, pattern))
            self._programs = [d for d in dict.fromkeys(found) if "node_modules" not in d.split("/")]
        return self._programs

    def _build_tree(self, entry: Entry, parts: list[str]) -> str | None:
        """The build tree (a host path) an entry is in, or None: a directory holding what a
        build tool leaves in its own, whatever its name (cargo's `.rustc_info.json` or a
        profile's `.fingerprint`, CMake's CMakeCache.txt, Ninja's build.ninja, Meson's
        meson-private: r70b CARGOTARGETDIR, `target-dir = "build"`; CMAKENAMES,
        `cmake-build-debug`, `build/debug`; NINJAEDGE), and by name beside its project's
        files (a `target` with CACHEDIR.TAG or beside Cargo.toml, pom.xml or build.sbt;
        Gradle's `build`; zig-cache). Each fix that listed one more of cargo's files a build
        loads missed another (r68b RSTARGETMACRO: a proc macro; r69b RSBUILDOUTPUT: a build
        script's `output`, CMAKECACHE, MVNPROC): what a build reuses there is held whole, as
        a venv is. A link named as such a tree is one too (r70b TARGETLINK: `target ->
        node_modules/x`, the build behind it in a tool's tree)."""
        if entry.kind == "link" and parts[-1] in BUILD_MARKS:
            return entry.path
        tops = (entry.root, entry.upper_root())
        if parts[0] in IN_SOURCE_OUTPUTS and any(
            os.path.lexists(os.path.join(t, m)) for t in tops for m in IN_SOURCE_MARKS
        ):
            # an in-source build (`cmake .`): the root is the build tree, and what the tool
            # writes at its top is held as a tree of its own (r78b CMAKEINSOURCE: flags.make
            # in CMakeFiles/, the top build.ninja, ran at `make -n`, `ninja`)
            return os.path.join(entry.root, parts[0])
        for i, part in enumerate(parts[:-1] if entry.kind != "dir" else parts):
            rel = "/".join(parts[: i + 1])
            key = os.path.join(entry.root, rel)
            if key not in self._build_trees:
                marks_inside, marks_beside = BUILD_MARKS.get(part, ((), ()))
                parent = "/".join(parts[:i])
                inside = (
                    os.path.join(t, rel, m) for t in tops for m in (*BUILD_CONTENTS, *marks_inside)
                )
                beside = (os.path.join(t, parent, m) for t in tops for m in marks_beside)
                self._build_trees[key] = any(map(os.path.lexists, (*inside, *beside)))
            if self._build_trees[key]:
                return key
        return None

    def _in_tool_tree(self, entry: Entry, parts: list[str]) -> bool:
        """Whether a directory above the entry is a tree a tool owns (see _tool_tree)."""
        return any(
            p in TOOL_TREES and self._tool_tree(entry, parts, i) for i, p in enumerate(parts[:-1])
        )

    def _tool_tree(self, entry: Entry, parts: list[str], i: int) -> bool:
        """Whether the i-th directory of an entry's path is the tree its name says: the host
        has it already, or it (or, for site-packages, a directory above it) holds the mark
        its tool leaves, on the host or in this change set."""
        rel = "/".join(parts[: i + 1])
        name = parts[i]
        if name == "node_modules" or os.path.isdir(os.path.join(entry.root, rel)):
            return True
        upper_root = entry.upper_root()
        marker = TOOL_TREES[name]
        if name in ("site-packages", "dist-packages"):  # (lib/pythonX.Y/ below a venv)
            rel, marker = "/".join(parts[: max(i - 2, 0)]), "pyvenv.cfg"
        return bool(rel) and any(
            os.path.lexists(os.path.join(top, rel, marker)) for top in (entry.root, upper_root)
        )

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
        upper_root = entry.upper_root()
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
            worktree = len(parts) > 2 and parts[-2] == "worktrees"
            return self.refusal(
                "new-repository", path, "git",
                "a new linked worktree (`git worktree add`): git on the host would take its "
                "config and hooks from where it points; add worktrees yourself"
                if worktree and self._is_git_dir(entry.root, "/".join(parts[:-2]), upper_root)
                else "a new bare repository: git on the host would obey its config and hooks",
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
                    "a git control file (config, hooks, a rebase's todo): git on the host "
                    "would obey it",
                )  # fmt: skip
            history = self._git_history(entry, "/".join(parts[:i]), inside)
            if history is not None:
                return history
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

    def _conflict(self, entry: Entry) -> Refusal | None:
        """The host changed this path after the command started: keep the host's version.
        Deleting or replacing a directory takes what is below it: anything changed there
        counts (an edit two levels down does not touch the directory's own times)."""
        try:
            st = os.lstat(entry.path)
        except OSError:
            return None
        if entry.kind == "dir" and not entry.opaque:
            if not stat.S_ISDIR(st.st_mode):
                # the command made a directory where it saw nothing: the host put a file
                # there since (review r31b: the file went to the journal, counted nowhere)
                return self.refusal(
                    "conflict", entry.path, BUILTIN,
                    "made on the host while the command ran: the host's version is kept",
                )  # fmt: skip
            return None  # its contents are checked one by one
        changed = entry.path if st.st_ctime_ns > self.created_ns else None
        if changed and stat.S_ISREG(st.st_mode) and index_kept(entry.path, self.plan):
            changed = None  # (a `git status` rewrote it with the same entries)
        if changed is None and stat.S_ISDIR(st.st_mode):
            changed = changed_below(entry.path, self.created_ns)
        if changed is None:
            return None
        where = "" if changed == entry.path else f" ({changed} below it)"
        return self.refusal(
            "conflict", entry.path, BUILTIN,
            f"changed on the host while the command ran{where}: the host's version is kept",
        )  # fmt: skip


# build trees (see Checker._build_tree): (what marks one inside it, what marks one beside it)
BUILD_MARKS = {
    # (sbt's meta-build `project/target` has project/build.properties beside it, and
    # sbt's task `streams` or compiled `config-classes` in it, r72b SBTMETA)
    "target": (
        ("CACHEDIR.TAG", "streams", "config-classes"),
        ("pom.xml", "Cargo.toml", "build.sbt", "build.properties"),
    ),
    # (and setuptools', whose build/lib a later install copies only what is newer of: a
    # planted newer file was installed, r76b SETUPBUILD)
    "build": ((), ("build.gradle", "build.gradle.kts", "settings.gradle",
                   "settings.gradle.kts", "gleam.toml", "setup.py", "pyproject.toml",
                   "wscript")),
    # Mix's and rebar3's (a rebuilt .beam Mix reuses ran at ElixirLS's compile, r75b
    # MIXBUILD); .NET's obj/, whose project.assets.json names the analyzers a C# language
    # server loads (OBJASSETS)
    "_build": ((), ("mix.exs", "rebar.config")),
    "obj": (("project.assets.json",), ()),
    # JavaScript build caches a tool restores and runs from (r76b TURBOCACHE: a planted
    # turbo cache archive ran at `turbo run start`, with `git status` clean), Gradle's
    # configuration cache, erlang.mk's ebin/ (reused by its times)
    ".turbo": ((), ("package.json", "turbo.json")),
    ".next": ((), ("package.json",)),
    ".nuxt": ((), ("package.json",)),
    ".svelte-kit": ((), ("package.json",)),
    ".angular": ((), ("package.json", "angular.json")),
    ".parcel-cache": ((), ("package.json",)),
    ".gradle": ((), ("build.gradle", "build.gradle.kts", "settings.gradle",
                     "settings.gradle.kts")),
    "ebin": ((), ("erlang.mk",)),
    # Rush's local build cache (r79b RUSHCACHE, the Turborepo twin); Gatsby's .cache, whose
    # page-ssr bundle `gatsby serve` runs (GATSBYCACHE)
    "temp": (("build-cache",), ("rush.json",)),
    ".cache": ((), ("gatsby-config.js", "gatsby-config.ts", "gatsby-config.mjs",
                    "gatsby-node.js")),
    "zig-cache": ((), ("build.zig",)),
    # cabal's build tree, where HLS's compiler could be planted (r74b CABALLOCAL)
    "dist-newstyle": (("cache", "packagedb"), ("cabal.project",)),
}  # fmt: skip
# what a build tool leaves in its own tree, whatever the tree's name
# (and Sphinx's: its pickled build environment, loaded at the next build before anything
# is checked, r77b SPHINXPICKLE: a pickle runs what it says)
BUILD_CONTENTS = (
    ".rustc_info.json", ".fingerprint", "CMakeCache.txt", "build.ninja", "meson-private",
    "doctrees", "environment.pickle", ".buildinfo",
    "c4che",  # (waf's: `_cache.py` evaluated line by line at every build, r79b WAFCACHE)
    "config.status",  # (an out-of-tree `../configure` build, r80b AUTOTOOLSVPATH)
)  # fmt: skip


# every name that marks a build tree from inside it (see MARKDELETE above)
BUILD_MARK_NAMES = frozenset({
    *BUILD_CONTENTS, "CACHEDIR.TAG", "project.assets.json", "streams", "config-classes",
    "build-cache", "config.status",
})  # fmt: skip


# an in-source build's marks at a root's top, and what its tool writes there
IN_SOURCE_MARKS = ("CMakeCache.txt",)  # (a hand-written build.ninja at the top is a source)
IN_SOURCE_OUTPUTS = frozenset({
    "CMakeFiles", "CMakeCache.txt", "cmake_install.cmake", "CTestTestfile.cmake", "Makefile",
    "build.ninja", "rules.ninja", ".ninja_deps", ".ninja_log", "CPackConfig.cmake",
    "CPackSourceConfig.cmake", "_deps", "Testing",
})  # fmt: skip


# where toolchains put the programs a hook runs, below $HOME (see Checker._system_program)
TOOLCHAIN_HOMES = (
    ".cargo/bin", ".local/bin", "bin", ".volta/bin", ".bun/bin", ".deno/bin", "go/bin",
    ".pyenv/shims", ".local/share/mise/shims", ".asdf/shims", ".local/share/pnpm",
    ".nvm/versions/node/*/bin", ".local/share/fnm/node-versions/*/installation/bin",
    ".fnm/node-versions/*/installation/bin", ".local/share/nvim/mason/bin",
)  # fmt: skip


# trees a tool writes and owns, each known by what its tool leaves in it (a name alone is
# the command's to choose: `docs/vendor/.markdownlint.cjs`, a `venv/` that is no venv,
# r43a TREEDOT): below one the host has, or one holding its marker, dot entries are the
# tool's own. node_modules by its name: running what it installs is running the project's
# dependencies (the threat model says so).
TOOL_TREES = {
    "node_modules": "", "target": "CACHEDIR.TAG", "venv": "pyvenv.cfg", ".venv": "pyvenv.cfg",
    "site-packages": "", "dist-packages": "",
}  # fmt: skip


# A module named `<tool>.config.<js kind>`: the convention of JavaScript tools whose editor
# integrations import it at a project's opening (tailwind's language server, vitest's and
# jest's extensions, cspell's, r59b CSPELL); by name, as no list of the tools is whole. Any
# `.config.` in the name (r60b TWNAME: tailwind.config.v2.js), `.conf.` too (karma.conf.js,
# wdio.conf.ts: r65b WDIOCONF), and the bare names tools look for by their own patterns
# (tailwind.js, vitest.workspace.ts)
JS_KINDS = frozenset({"js", "cjs", "mjs", "ts", "cts", "mts", "jsx", "tsx"})
BARE_CONFIG_MODULES = frozenset({"tailwind", "vitest.workspace", "vitest.projects"})
STYLESHEETS = (".css", ".scss", ".sass", ".less", ".pcss", ".postcss")
# (Tailwind 4's: modules its server loads; and what brings in another file, whose own
# `@plugin` it reads whatever that file's name, r63a CSSIMPORT)
PLUGIN_DIRECTIVES = (b"@plugin", b"@config", b"@import", b"@reference")


def _config_module(name: str) -> bool:
    base, dot, kind = name.rpartition(".")
    return (
        bool(dot)
        and kind in JS_KINDS
        and (
            any(w in name for w in (".config.", ".conf."))
            or base.endswith((".config", ".conf"))
            or base in BARE_CONFIG_MODULES
        )
    )


def _loads_plugins(entry: Entry) -> bool:
    """A stylesheet that names a plugin or config module its host copy did not (r60b TWCSS:
    `@plugin "../tools/x.cjs"`, loaded by Tailwind's language server at the file's
    opening)."""
    if not entry.path.endswith(STYLESHEETS) or entry.kind not in ("file", "link"):
        return False
    if entry.kind == "link":
        return True  # (what it leads to is read as the stylesheet, r62b TWLINK)

    def directives(path: str) -> set[bytes] | None:
        try:
            data = read_regular(path, STYLESHEET_READ + 1)
        except FileNotFoundError:
            return set()
        except OSError:
            return None
        if len(data) > STYLESHEET_READ:
            return None
        # (any line naming one, not only one starting with it: a minified stylesheet's
        # single line, r62b TWONELINE)
        return {ln.strip() for ln in data.splitlines() if any(d in ln for d in PLUGIN_DIRECTIVES)}

    staged, host = directives(entry.source), directives(entry.path)
    return staged is None or host is None or bool(staged - host)


STYLESHEET_READ = 1 << 20  # what is read of a stylesheet (larger: held)
SESSION_MARK = b"let SessionLoad = 1"  # the first line of every file :mksession writes


def _session_file(path: str) -> bool:
    """Whether `path` is a regular file starting as a session does (never blocking on a
    FIFO, never through a link)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, len(SESSION_MARK)) == (
            SESSION_MARK
        )
    except OSError:
        return False
    finally:
        os.close(fd)


SESSION_WALK = 2000  # entries looked through below a deleted directory for a session


def _session_below(directory: str) -> str | None:
    """A Vim session file below a host directory (not below a tree a tool owns or a git
    directory, where no one keeps one), as a path relative to it; looked through up to
    SESSION_WALK entries."""
    seen = 0
    for top, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if d not in TOOL_TREES and d != ".git"]
        for name in files:
            seen += 1
            if seen > SESSION_WALK:
                return None
            if _session_file(os.path.join(top, name)):
                return os.path.relpath(os.path.join(top, name), directory)
        seen += len(dirs)
    return None


def _session(entry: Entry) -> str | None:
    """Why a file is a Vim session's, or None: a session file of any name the host has (one
    you made with `:mksession work.vim`), or a new one, and the `<name>x.vim` a session file
    sources beside itself at `nvim -S`. (Session.vim and Sessionx.vim are protected names.)"""
    if entry.kind == "whiteout" or entry.opaque:
        # A session deleted (or a directory holding one): a later run writes other script
        # in its place, which no first line marks (r58b SESSMARK: moved aside with a line
        # before it, and back in the next run)
        if entry.kind == "whiteout" and _session_file(entry.path):
            return "deleting a Vim session file (a later run could put other script there)"
        found = _session_below(entry.path) if os.path.isdir(entry.path) else None
        if found is not None and not os.path.islink(entry.path):
            return (
                f"deleting a directory holding the Vim session file {found} (a later run "
                "could put other script there)"
            )
        return None
    if entry.kind == "dir":
        return None
    # (any name: `:mksession work.session` is one too, r53b SESSNAME; and one this change
    # set writes: the user's moved aside in one run and written back in the next had no
    # host copy to be judged by, r57b SESSREMAKE)
    if _session_file(entry.path) or (entry.kind == "file" and _session_file(entry.source)):
        return "a Vim session file"
    if entry.path.endswith("x.vim"):
        # a session sources `<its name less its extension>x.vim` beside itself
        directory, name = os.path.split(entry.path)
        root = name[: -len("x.vim")]
        for where in (directory, entry.staged(directory)):
            try:
                names = [n for n in os.listdir(where)[:5000] if os.path.splitext(n)[0] == root]
            except OSError:
                continue
            for other in names:
                if other != name and _session_file(os.path.join(where, other)):
                    return f"the script the session {other} sources beside itself"
    return None


def _config_dot(parts: list[str], owned: Callable[[int], bool]) -> str | None:
    """The first dot entry of a path that is not inert (INERT_DOT), as a path, down to a
    tree a tool owns (TOOL_TREES, where `owned(i)` says the i-th part is one). Dot entries
    below an inert dot directory are judged too (`.github/.markdownlint.cjs`, r43a)."""
    for i, part in enumerate(parts[:-1] if len(parts) > 1 else parts):
        if part in TOOL_TREES and owned(i):
            return None
        if part.startswith(".") and not _inert_at(parts, i):
            return "/".join(parts[: i + 1])
    last = parts[-1]
    if len(parts) > 1 and last.startswith(".") and last not in INERT_DOT:
        return "/".join(parts)
    return None


def verdicts(checker: Checker, entries: list[Entry]) -> list[tuple[Entry, Refusal | None]]:
    """Each entry with its refusal or None; a refused directory refuses what is below it."""
    refused_dirs: dict[str, Refusal] = {}
    out: list[tuple[Entry, Refusal | None]] = []
    for entry in entries:
        above = (
            self_or_parent_in(os.path.dirname(entry.path), refused_dirs) if refused_dirs else None
        )
        parent = refused_dirs[above] if above is not None else None
        verdict = parent or checker.check(entry)
        if verdict is not None and entry.kind == "dir" and parent is None:
            refused_dirs[entry.path] = verdict
        out.append((entry, verdict))
    return _hold_venvs_whole(checker, checker.hold_git_state_together(out))


def _hold_along(
    verdicts: list[tuple[Entry, Refusal | None]],
    group_of: Callable[[Entry], str | None],
    held: set[str],
    refusal: Callable[[Entry, str], Refusal],
) -> list[tuple[Entry, Refusal | None]]:
    """Each entry not refused whose group (`group_of`) is `held`, refused with it."""
    if not held:
        return verdicts
    out: list[tuple[Entry, Refusal | None]] = []
    for entry, verdict in verdicts:
        group = group_of(entry) if verdict is None else None
        if group is not None and group in held:
            verdict = refusal(entry, group)
        out.append((entry, verdict))
    return out


def _hold_venvs_whole(
    checker: Checker, verdicts: list[tuple[Entry, Refusal | None]]
) -> list[tuple[Entry, Refusal | None]]:
    """A venv (a directory with a pyvenv.cfg, the host's or the command's) with a path held
    is held whole: as root `python3 -m venv .venv` had its interpreter links held and the
    rest applied, and the next `.venv/bin/pip` failed with "required file not found"
    (review r46c); half a package install is as broken."""
    memo: dict[str, str | None] = {}

    def venv_of(entry: Entry) -> str | None:
        parts = entry.rel.split("/")
        upper = entry.upper_root()
        for k in range(len(parts) if entry.kind == "dir" else len(parts) - 1, 0, -1):
            rel = "/".join(parts[:k])
            where = os.path.join(entry.root, rel)
            if where not in memo:
                memo[where] = where if any(
                    os.path.lexists(os.path.join(top, rel, "pyvenv.cfg"))
                    for top in (upper, entry.root)
                ) else None  # fmt: skip
            if memo[where] is not None:
                return where
        return None

    held = {venv for e, v in verdicts if v is not None and (venv := venv_of(e)) is not None}
    return _hold_along(verdicts, venv_of, held, lambda entry, venv: checker.refusal(
        "protected", entry.path, BUILTIN,
        f"{words.HELD_WITH_VENV}{venv} (a path in it is held: see there; a venv "
        "applied in part does not run)",
    ))  # fmt: skip
