"""What a hook, a hook manager's config or a git config command names in the work tree,
read off its words (corral never runs them): the scripts it runs, directories whose every
script runs (run-parts, globs), and where a Python it starts looks for modules first.
Kept read-only (or watched) through the Protection the caller gives.
"""

from __future__ import annotations

import os

from corral.paths import read_regular
from corral.sandbox.protect import hookmanagers, pathdirs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.sandbox.protect.gitguard import Protection


def is_python_script(path: str) -> bool:
    """A regular file Python runs: named `.py`, or with a shebang naming Python (`python3`,
    `/usr/bin/env python`, `uv run --script`)."""
    if path.endswith((".py", ".pyw")):
        return os.path.isfile(path)
    try:
        first = read_regular(path, 256).split(b"\n", 1)[0]
    except OSError:
        return False
    return first.startswith(b"#!") and any(w in first for w in (b"python", b"pypy", b"uv run"))


def keep_named(
    tree: str,
    commands: list[str],
    texts: list[tuple[str, str, bool]],
    hooks: list[tuple[str, str, str | None]],
    result: Protection,
) -> None:
    """Keep what the config's commands, the hooks and the hook managers' files name."""
    from corral.sandbox.protect.direnv import (
        path_words,  # only here: it imports shlex, which imports re
    )

    for _, _, link in hooks:
        if link is not None:
            result.file(link)
    # (word, the directory it may be relative to, directories the script cd's into, whether
    # only an existing file counts: a config's words are not all paths)
    python_scripts: set[str] = set()  # words a Python runs as its script
    named: list[tuple[str, str | None, tuple[str, ...], bool]] = [
        (w, None, (), False) for command in commands for w in path_words(command.split())
    ]
    texts = [*texts, *_reached(tree, texts, result)]
    for base, text, is_config in [*((None, c, False) for c in commands), *texts]:
        if base is not None:
            # a config (YAML, TOML): every word may name a file, in any of its syntaxes
            # (flow mappings, folded scalars); a script: the words path_words finds
            # (a script's own simple assignments put in first: `D=checks.d; run-parts "$D"`)
            text = text if is_config else _substituted(text)
            words = _config_words(text) if is_config else path_words(text.split())
            entered = tuple(_cd_targets(text))  # `(cd tools && ./lint.sh)`
            named += [(w, base, entered, is_config) for w in words]
            # a directory whose every script runs (`run-parts tools/pre-commit.d`, after a
            # `cd tools` too), and, in a config, a glob of scripts (`bash -c 'for f in
            # ci/checks/*.sh ...'`)
            for word in _run_parts(text):
                for path, sure in _placed(tree, word, base, entered):
                    if sure or os.path.isdir(path):
                        result.file(path)
            if is_config:
                for word in text.replace("'", " ").replace('"', " ").split():
                    if "/" in word and "*" in word and not word.startswith(("^", "(")):
                        path = os.path.normpath(os.path.join(tree, word))
                        if path.startswith(tree + os.sep):
                            _globbed(tree, path, result)
        # (a filter's `python3 -m nbstripout` runs at a plain `git status` too)
        for module in hookmanagers.run_modules(text):
            # `python -m pre_commit` from the top of the work tree: a package there by that
            # name is imported first; `-m tools.checker`: tools/ and checker in it; and
            # every module that program imports (pre-commit's cfgv) is looked for there first
            for name in _module_files(module):
                result.file(os.path.join(tree, name))
            result.module_dirs.append(tree)
        scripts, from_top = _python_starts(text)
        python_scripts.update(scripts)
        if from_top:  # `python3 -c '...'`, `python3 - <<EOF`: the top is looked in first
            result.module_dirs.append(tree)
    for word, base, entered, files_only in named:
        # (quotes anywhere: `"${0%/*}"/../scripts/a.sh`, `"$ROOT"/x`, r73a SPELLQUOTE)
        word = word.replace('"', "").replace("'", "")
        for path, sure in _placed(tree, word, base, entered):
            if word in python_scripts and os.path.isfile(path):
                # `python3 tools/check`, no shebang: Python looks in tools/ first
                result.module_dirs.append(os.path.dirname(os.path.realpath(path)))
            if files_only:
                # (a config's words are not all paths: one names a file when it is there,
                # or, missing, when it may name a script: the optional per-developer hook,
                # `test -x scripts/local && scripts/local`, git-ignored, r72a CFGOPTIONAL;
                # in every reading, a job's `root: api/` reads it from there, r73a
                # CFGOPTSUFFIX)
                keep = os.path.isfile(path) or (
                    not os.path.lexists(path) and hookmanagers.script_like(word)
                )
            elif any(c in path for c in "*?["):
                _globbed(tree, path, result)
                keep = False
            else:
                # a script named with a `/` is kept even before it exists (an optional
                # hook's `[ -x scripts/local.sh ] && ./scripts/local.sh`); a bare name, or
                # one found only by another reading of the word, when it is there
                keep = (sure and "/" in word) or os.path.isfile(path)
            if keep and _tree_or_above(path, tree):
                keep = False  # (`cd "./"`: never the whole work tree, r79a GRUMPHPCD)
            if keep:
                result.file(path)
                venv = _venv_of(path)
                if venv is not None:
                    # a venv's program (pre-commit's INSTALL_PYTHON=.venv/bin/python3, a
                    # lefthook job's `.venv/bin/python3 -m x`): it reads the venv's .pth
                    # files and modules at every start, so the venv is kept whole, as one
                    # on PATH is (r72a HOOKVENV, r73a LHVENV)
                    result.file(venv)
                inside = path.startswith(tree + os.sep)
                parts = path[len(tree) + 1 :].split(os.sep) if inside else []
                for tree_name in DEPENDENCY_TREES:
                    if tree_name in parts:
                        # a package's script (yorkie's `node_modules/yorkie/src/runner.js`,
                        # husky v4's run.js, CaptainHook's `vendor/bin/captainhook`): it loads
                        # its dependencies from there (r78a YORKIE: execa; r79a CAPTAINHOOK:
                        # vendor/composer/autoload_real.php)
                        result.file(os.path.join(tree, *parts[: parts.index(tree_name) + 1]))
    walked: dict[str, tuple[list[str], bool]] = {}  # (each walk of the tree, once)

    def walk_once(what: str, past: str, walk: Callable[[str], tuple[list[str], bool]]) -> list[str]:
        """The directories `walk` finds below the tree, looked for once however many texts
        ask; past its budget, unknown (never cut quietly: a command can make the directories
        that push one past the walk, r76a WALKFLOOD)."""
        if what not in walked:
            walked[what] = walk(tree)
            if not walked[what][1]:
                result.unknown.append((
                    tree, f"a git hook runs {what}",
                    [f"the {past} past the first {VENV_LOOKED} directories"],
                ))  # fmt: skip
        return walked[what][0]

    def keep_below(path: str) -> None:
        """Keep `path`, but never the work tree or a directory above it (a hook's
        `UV_PROJECT_ENVIRONMENT=.`, `toxworkdir = {toxinidir}`)."""
        path = os.path.normpath(path)
        if not _tree_or_above(path, tree):
            result.file(path)

    for base, text, _ in texts:
        programs = _programs(text)
        # (the top, and where the text changes into: where the programs it runs look)
        here = [tree, *(os.path.normpath(os.path.join(tree, c)) for c in _cd_targets(text))]
        # the directories a hook or a hook manager's job puts on PATH (`export
        # PATH="$PWD/tools/bin:$PATH"`, lefthook's `env: PATH: $PATH:tools/bin`): whole
        # (r73a HOOKPATHDIR)
        for directory in _path_dirs(text):
            for place in {os.path.normpath(os.path.join(b, directory)) for b in (tree, base)}:
                result.file(place)
                # and what putting it on PATH brings: a venv's bin, the venv whole (its
                # Python reads the venv's .pth files at every start, r77a PATHVENV), as for
                # a PATH entry of corral's own environment
                for path in pathdirs.brought(place, tree, project=tree):
                    result.file(path)
        if programs & ENV_RUNNERS:
            # tox and nox run a command in their own venvs, reused from run to run: those of
            # the top, and of where the hook changes into (r77a TOXVENV); and every venv the
            # walk below finds
            for place in here:
                for envs in (".tox", ".nox", *_tox_work_dirs(place)):
                    keep_below(os.path.join(place, envs))
        for env in _uv_project_environments(text):
            # (UV_PROJECT_ENVIRONMENT: the venv uv runs, anywhere, r79a UVPROJENV; relative
            # to the project uv finds)
            for place in here:
                keep_below(os.path.join(place, env))
        if programs & NODE_RUNNERS or hookmanagers.runs_staged(text):
            # npx, npm, pnpm, yarn, bunx, node: what they run is found in node_modules, the
            # directory's own and each one above it (r79a SGHNPX, HUSKY8NPX: `npx
            # lint-staged` from simple-git-hooks or husky v8; NODEHOOKDEP: `node
            # scripts/x.mjs` and what it imports; LSNESTBIN: lint-staged runs a nested
            # config's task with that package's node_modules/.bin first)
            places = [*here, *(b for b, _, c in texts if c and b and b.startswith(tree + os.sep))]
            if _names_workspaces(text):
                # (`npm -w web exec`, `pnpm --filter web`, `yarn workspace web`: a package
                # named, not a path, r80a NPMWORKSPACE: every package's node_modules)
                places += walk_once(
                    "a Node program in a workspace's packages", "packages", _packages
                )
            for place in places:
                for path in pathdirs.node_modules_of(os.path.normpath(place), tree):
                    result.file(path)
            # ... and above the work tree too: node looks up to / (r84a HOOKNPXABOVE: a
            # folder workspace's node_modules/.bin/lint-staged above its repository; the
            # resolution keeps what of these lies in a writable root)
            above = os.path.dirname(tree)
            while True:
                result.file(os.path.join(above, "node_modules"))
                if above == os.path.dirname(above):
                    break
                above = os.path.dirname(above)
                for pnp in PNP_FILES:
                    # (Yarn Plug'n'Play: the packages are zips in .yarn/cache, r80a YARNPNP)
                    if os.path.lexists(os.path.join(place, pnp)):
                        result.file(os.path.normpath(os.path.join(place, pnp)))
        for runner, trees in RUNNER_TREES.items():
            # (r80a COMPOSEREXEC, BUNDLEVENDOR, GOVENDOR, DENONM: what their runners load)
            if runner in programs:
                for place in here:
                    for name in trees:
                        result.file(os.path.normpath(os.path.join(place, name)))
        if _runs_venv(text) or programs & ENV_RUNNERS or _path_unread(text):
            # `uv run`, `poetry run`: the project's venv, found by the tool (r73a VENVRUNNER)
            what = "a project venv's Python (uv run, poetry run)"
            for venv in walk_once(what, "venvs", _top_venvs):
                result.file(venv)


# a PATH assignment: its value is the rest of the line
PATH_VALUE = r"""(?:^|[\s;{"'(])(?:export\s+|declare\s+-x\s+)?PATH\+?["']?\s*[:=]\s*(.*)$"""


def _path_dirs(text: str) -> list[str]:
    """The directories a text puts on PATH: relative ones, and those after what names the
    top or the current directory (`$PWD/x`, `$(git rev-parse --show-toplevel)/x`,
    `$(cd "$(dirname "$0")/../.." && pwd)/x`, `${ROOT}/x`: whatever a substitution is,
    what follows its closing `)/` or `}/`; r75a HOOKPATHSPELL, r76a HOOKPATHDIRNAME)."""
    import re

    found = []
    for value in re.findall(PATH_VALUE, text, re.M):
        value = value.replace('"', "").replace("'", "")
        # (an expansion that ends no directory, `${PATH:+:$PATH}`, holds no entry)
        value = re.sub(r"\$\{[^}]*\}(?!/)", "", value)
        for part in value.split(":"):
            part = re.split(r"[)}]/", part)[-1]  # (after the last substitution)
            part = re.sub(r"^\$\w+/", "", part.strip())
            part = re.split(r"[\s;&|]", part, maxsplit=1)[0]
            # (not the top itself, `.`: kept read-only, it would be the whole workspace)
            if re.fullmatch(r"[\w./][\w./@+-]*", part) and os.path.normpath(part) != ".":
                found.append(part)
    return found


SCRIPT_SUFFIXES = (".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")
SCRIPT_INTERPRETERS = (b"sh", b"bash", b"zsh", b"dash", b"node", b"deno", b"bun", b"tsx", b"zx")
NODE_SCRIPT = (b"node", b"deno", b"bun", b"tsx", b"zx")
MAX_REACHED = 64  # scripts read as part of the hooks


def _script_kind(path: str) -> str:
    """ "node" for a JavaScript program (by its suffix or shebang), "sh" for a shell script,
    "" for anything else."""
    try:
        first = read_regular(path, 256).split(b"\n", 1)[0]
    except OSError:
        return ""
    program = _interpreter(first)
    if path.endswith(SCRIPT_SUFFIXES[2:]) or program in NODE_SCRIPT:
        return "node"
    if path.endswith(SCRIPT_SUFFIXES[:2]) or program in SCRIPT_INTERPRETERS:
        return "sh"
    return ""


def _interpreter(first: bytes) -> bytes:
    """The program a shebang line starts, by its name: `#!/bin/bash -e` bash, `#!/usr/bin/env
    -S bash -eu` bash (not a substring: `/opt/ubuntu/bin/sh` is sh)."""
    if not first.startswith(b"#!"):
        return b""
    words = first[2:].split()
    if words and os.path.basename(words[0]) == b"env":
        words = [w for w in words[1:] if not w.startswith(b"-") and b"=" not in w]
    return os.path.basename(words[0]) if words else b""


def _shell_word(text: str, i: int) -> str:
    """The shell word that starts at `text[i]`, its quotes and `$(...)` nesting kept whole
    (`"$(dirname "$0")/../env.sh"`: one word, r80a SOURCESPELL)."""
    stack: list[str] = []
    start = i
    while i < len(text):
        c, top = text[i], stack[-1] if stack else ""
        if top == "'":
            if c == "'":
                stack.pop()
        elif c == "$" and text[i + 1 : i + 2] == "(":
            stack.append("(")
            i += 1
        elif top == '"' and c == '"':
            stack.pop()
        elif top != '"' and c in "\"'":
            stack.append(c)
        elif top == "(" and c == ")":
            stack.pop()
        elif not stack and (c.isspace() or c in ";&|)"):
            break
        i += 1
    return text[start:i]


def _reached(
    tree: str, texts: list[tuple[str, str, bool]], result: Protection
) -> list[tuple[str, str, bool]]:
    """The files of the work tree the hooks source (`. ./env.sh`, `source "$(dirname
    "$0")/env.sh"`, `eval "$(cat x)"`) or run (`sh scripts/pre-commit.sh`, `./scripts/check`
    with a node shebang), read as part of the hook, and what those reach in turn: what they
    put on PATH, the venv they activate, the Node programs they run (r78a PATHVENVVAR; r80a
    SOURCESPELL, HOOKSCRIPTNODE, NODESHEBANG). A JavaScript program's text is read with a
    `node` before it: node_modules is then kept."""
    from corral.sandbox.protect.direnv import path_words

    found: list[tuple[str, str, bool]] = []
    seen: set[str] = set()
    queue = [(b, t) for b, t, c in texts if not c]
    while queue and len(seen) < MAX_REACHED:
        base, text = queue.pop(0)
        if "/" not in text and "source" not in text and "." not in text:
            continue
        import re  # (here: a run with no hook text imports none, see test_import_weight)

        text = _substituted(text)
        sourced = r"(?m)(?:^|[;&|({`]\s*|\bthen\s+|\bdo\s+|\belse\s+)(?:\.|source)\s+"
        said = [_shell_word(text, m.end()) for m in re.finditer(sourced, text)]
        said += re.findall(r"\bcat\s+([^\s;&|)\"']+)", text)
        # (what a substitution before the path left: `"$(dirname "$0")/../env.sh"` is
        # `../env.sh` from the hook's own directory, as for PATH entries)
        said = [re.split(r"[)}]/", w.replace('"', "").replace("'", ""))[-1] for w in said]
        words = [*said, *path_words(text.split())]
        for word in words[:MAX_GLOB_MATCHES]:
            word = word.replace('"', "").replace("'", "")
            for path, sure in _placed(tree, word, base):
                if not path.startswith(tree + os.sep) or path in seen:
                    continue
                if not os.path.isfile(path):
                    if sure and word in said:
                        result.file(path)  # (sourced, not there yet)
                    continue
                kind = _script_kind(path)
                if not kind:
                    continue
                seen.add(path)
                result.file(path)
                body = hookmanagers.read(path)
                if kind == "node":
                    body = f"node {path}\n{body}"
                found.append((os.path.dirname(path), body, False))
                queue.append((os.path.dirname(path), body))
    return found


def _path_unread(text: str) -> bool:
    """Whether a text puts on PATH what its words do not say: an entry through a variable
    or a substitution (`$VIRTUAL_ENV/bin`, `$PWD/$V/bin`, `$(realpath .venv)/bin`), a venv's
    activate script or VIRTUAL_ENV (r78a PATHVENVVAR: each kept the top's `bin`, not the
    venv whose Python then ran its .pth). The work tree's venvs are then kept, as for `uv
    run`. (A file of the work tree a hook sources is read as part of it: see _reached.)"""
    import re

    if "VIRTUAL_ENV" in text or re.search(r"\bactivate\b", text):
        return True
    for value in re.findall(PATH_VALUE, text, re.M):
        value = value.replace('"', "").replace("'", "")
        value = re.sub(r"\$\{?PATH\}?|\$\{PATH:[+-][^}]*\}", "", value)
        if "$" in value or "`" in value:
            return True
    return False


VENV_RUNNERS = ("uv", "poetry", "pdm", "hatch", "pipenv", "rye")
DEPENDENCY_TREES = ("node_modules", "vendor")  # (npm's, Composer's: a package's code beside)
# (their venvs, not the project's: .tox/<env>, .nox/<session>)
ENV_RUNNERS = frozenset({"tox", "nox"})


TOX_CONFIGS = ("tox.ini", "tox.toml", "setup.cfg", "pyproject.toml")


def _tox_work_dirs(directory: str) -> list[str]:
    """Where tox's configs in `directory` put its envs (`toxworkdir`, tox 4's `work_dir`),
    relative to it (r78a TOXWORKDIR: `toxworkdir = {toxinidir}/build/tox`)."""
    import re

    found = []
    for name in TOX_CONFIGS:
        text = hookmanagers.read(os.path.join(directory, name))
        for value in re.findall(r"""(?m)^\s*(?:toxworkdir|work_dir)\s*=\s*["']?([^"'\s]+)""", text):
            value = value.replace("{toxinidir}", ".").replace("{tox_root}", ".")
            found.append(os.path.expanduser(value))
    return found


NODE_RUNNERS = frozenset({
    "npx", "npm", "pnpm", "pnpx", "yarn", "bun", "bunx", "node", "nodejs", "tsx", "ts-node",
})  # fmt: skip


PNP_FILES = (".yarn/cache", ".yarn/unplugged", ".pnp.cjs", ".pnp.loader.mjs")
# programs that load what a project's dependency tree holds, and those trees
RUNNER_TREES = {
    "composer": ("vendor",), "php": ("vendor",), "bundle": ("vendor/bundle", ".bundle"),
    "go": ("vendor",), "deno": ("node_modules", "vendor"), "zx": ("node_modules",),
    "volta": ("node_modules",),
}  # fmt: skip
WORKSPACE_WORDS = frozenset({
    "-w", "--workspace", "--workspaces", "--filter", "-F", "-r", "--recursive", "workspace",
    "workspaces", "lerna", "nx", "turbo",
})  # fmt: skip


def _programs(text: str) -> set[str]:
    """The names of the programs a text's words may start (each word's basename, quotes and
    shell punctuation around it dropped): `npx lint-staged`, `python -m tox`."""
    return {os.path.basename(w.strip("\"'();&|`")) for w in text.split()}


def _names_workspaces(text: str) -> bool:
    words = {w.split("=", 1)[0].strip("\"'();&|`") for w in text.split()}
    return bool(words & WORKSPACE_WORDS)


def _packages(tree: str) -> tuple[list[str], bool]:
    """(the directories holding a package.json to VENV_DEPTH + 1 levels down, whether that is
    all of them)."""
    from corral.sandbox.protect.dirwalk import directories

    below, complete = directories(
        tree, VENV_DEPTH + 1, VENV_LOOKED, hookmanagers.NOT_PROJECTS_BELOW
    )
    return [d for d in below if os.path.isfile(os.path.join(d, "package.json"))], complete


def _tree_or_above(path: str, tree: str) -> bool:
    """Whether `path` is the work tree or a directory above it: never kept read-only (a
    hook's `cd "./"`, `UV_PROJECT_ENVIRONMENT=.`, `toxworkdir = {toxinidir}`)."""
    path = os.path.normpath(path)
    return path == tree or tree.startswith(path.rstrip("/") + "/")


def _uv_project_environments(text: str) -> list[str]:
    """The venvs a text points uv at (`UV_PROJECT_ENVIRONMENT=.cache/venvs/app`)."""
    import re

    if "UV_PROJECT_ENVIRONMENT" not in text:
        return []
    found = re.findall(r"""UV_PROJECT_ENVIRONMENT\s*[=:]\s*["']?([^\s"';&|]+)""", text)
    return [os.path.expanduser(f) for f in found if "$" not in f]


def _runs_venv(text: str) -> bool:
    """Whether a text runs a program in a project venv its tool finds (`uv run pytest`,
    `uv -q run`, `uv --directory backend --offline --quiet run`: `run` anywhere after the
    runner on its line, r75a VENVRUNNEROPT, r76a VENVOPTWINDOW)."""
    for line in text.splitlines():
        words = [os.path.basename(w.strip("\"'")) for w in line.split()]
        if "uvx" in words or any(
            w in VENV_RUNNERS and "run" in words[i + 1 :] for i, w in enumerate(words)
        ):
            return True
    return False


VENV_DEPTH = 3  # levels below a work tree's top looked in for venvs
VENV_LOOKED = 2000  # directories looked at


def _top_venvs(tree: str) -> tuple[list[str], bool]:
    """(the venvs of a work tree, to VENV_DEPTH levels down (a directory with a
    pyvenv.cfg), whether that is all of them): `cd backend && uv run`, a job's `root:
    backend/` find backend/.venv (r75a VENVRUNNERSUB)."""
    from corral.sandbox.protect.dirwalk import directories

    def venv(path: str) -> bool:
        return os.path.isfile(os.path.join(path, "pyvenv.cfg"))

    skip = frozenset({"node_modules", ".git", "target", "__pycache__"})
    below, complete = directories(tree, VENV_DEPTH, VENV_LOOKED, skip, lambda p: not venv(p))
    return [d for d in below if venv(d)], complete


def _venv_of(program: str) -> str | None:
    """The venv a program is in (`X/bin/python3` beside `X/pyvenv.cfg`), or None."""
    directory = os.path.dirname(program)
    venv = os.path.dirname(directory)
    if os.path.basename(directory) in ("bin", "Scripts") and os.path.isfile(
        os.path.join(venv, "pyvenv.cfg")
    ):
        return venv
    return None


# Python options whose value is the next word (`-W error`, `-X dev`)
PYTHON_VALUE_OPTIONS = frozenset({"-W", "-X", "--check-hash-based-pycs"})


def _python_word(word: str) -> bool:
    """`python3`, `/usr/bin/python3.11`, `pypy3`: a word that starts Python."""
    name = os.path.basename(word)
    for stem in ("python", "pypy"):
        if name.startswith(stem):
            return name[len(stem) :].replace(".", "").isdigit() or name == stem
    return False


def _python_starts(text: str) -> tuple[list[str], bool]:
    """How a text starts Python: the script words it runs (`python3 tools/check`), and
    whether a Python of it looks in the directory it starts in first (`-c`, `-` or `-m`)."""
    for c in "();&|`\"'":
        text = text.replace(c, " ")
    words = text.split()
    scripts: list[str] = []
    from_top = False
    for i, word in enumerate(words):
        if not _python_word(word):
            continue
        rest = iter(words[i + 1 :])
        for option in rest:
            if option in PYTHON_VALUE_OPTIONS:
                next(rest, None)
            elif option == "-" or (
                option.startswith("-")
                and not option.startswith("--")
                and any(c in option[1:] for c in "cm")
            ):
                from_top = True
                break
            elif not option.startswith("-"):
                scripts.append(option)
                break
    return scripts, from_top


def _config_words(text: str) -> list[str]:
    """The words of a hook manager's config, its punctuation dropped: each is checked for a
    file of the work tree by that name."""
    for c in "{}[],:\"'=":
        text = text.replace(c, " ")
    return [w for w in text.split() if not w.startswith("-") and "://" not in w]


def _substituted(text: str) -> str:
    """A hook script with its own simple assignments put in (`D=tools/hooks` then `"$D/x"`,
    `${D}/x`): the paths it runs through a variable it sets itself."""
    import re

    values: dict[str, str] = {}
    for m in re.finditer(r"(?m)^\s*(?:export\s+|local\s+|readonly\s+)?([A-Za-z_]\w*)=(\S*)", text):
        value = m.group(2).strip("\"'")
        if "$" not in value and "`" not in value and "(" not in value:
            values[m.group(1)] = value
    if not values:
        return text
    return re.sub(r"\$\{?([A-Za-z_]\w*)\}?", lambda m: values.get(m.group(1), m.group(0)), text)


# run-parts' options that take a value as the next word (`--regex RE dir`)
RUN_PARTS_VALUES = frozenset({"--regex", "--arg", "-a", "--umask", "-u"})


def _run_parts(text: str) -> list[str]:
    """Directories given to run-parts (every executable in them runs): its first word that
    is neither an option nor an option's value."""
    found: list[str] = []
    waiting = skip = False
    for c in "{}[],'\";":
        text = text.replace(c, " ")
    for word in text.split():
        if word.endswith("run-parts"):
            waiting, skip = True, False
        elif not waiting:
            continue
        elif skip:
            skip = False
        elif word in RUN_PARTS_VALUES:
            skip = True
        elif not word.startswith("-"):
            found.append(word)
            waiting = False
    return found[:MAX_GLOB_MATCHES]


def _cd_targets(text: str) -> list[str]:
    """Directories a hook script changes into (`cd tools`): its later words may be relative
    to them."""
    words = text.replace("(", " ").replace(")", " ").replace(";", " ").replace("&&", " ").split()
    return [
        words[i + 1].strip("\"'")
        for i, w in enumerate(words[:-1])
        if w == "cd" and not words[i + 1].startswith("-")
    ]


def _module_files(module: str) -> list[str]:
    """What `python -m module` imports from the directory it starts in."""
    parts = module.split(".")
    if len(parts) == 1:
        return [module, module + ".py", module + ".pyc"]
    found = []
    for i in range(1, len(parts)):
        found.append("/".join(parts[:i]) + "/__init__.py")
    # (and the package's __main__.py, what `-m` runs of one: r75a PYMODMAIN)
    found += ["/".join(parts) + ".py", "/".join(parts) + "/__init__.py"]
    return [*found, "/".join(parts) + "/__main__.py"]


def _globbed(tree: str, pattern: str, result: Protection) -> None:
    """A hook's glob (`for f in .githooks/pre-commit.d/*.sh`): its directory is kept as it is,
    so neither what matches now nor what would match later can be written."""
    import glob

    directory = pattern
    while any(c in directory for c in "*?["):
        directory = os.path.dirname(directory)
    if directory.startswith(tree + os.sep):
        result.file(directory)
    for match in glob.glob(pattern)[:MAX_GLOB_MATCHES]:
        result.file(match)


MAX_GLOB_MATCHES = 256


def _placed(
    tree: str, word: str, directory: str | None, entered: tuple[str, ...] = ()
) -> list[tuple[str, bool]]:
    """Where a path word of a hook or config may lead, and whether it is
    the plain reading: from the top (`scripts/x`); with a substitution or variable before it
    (`"$(git rev-parse --show-toplevel)/x"`, `$ROOT/x`, `$(dirname "$0")/../x`), from the hook's
    own directory and from the top once what stands before is dropped; and from a directory
    the script changed into (`cd tools && ./lint.sh`)."""
    import re

    places: list[tuple[str, bool]] = []

    def add(base: str, rest: str, sure: bool) -> None:
        # (anywhere, not only in the work tree: a shared hooks directory's `../lint.sh`, a
        # global config's script in a folder workspace, r70a SHAREDHOOKS, GLOBALCMD; what is
        # outside the writable roots is read-only anyway, and dropped by the caller)
        places.append((os.path.normpath(os.path.join(base, os.path.expanduser(rest))), sure))

    plain = word
    if word.startswith("/") and not os.path.exists(word):
        plain = word.lstrip("/")  # what a substitution before it left: from the top
    add(tree, plain, True)
    # `$ROOT/x`, `${DIR}/x`, `$0/...`, and any parameter expansion: `${0%/*}/../x`, the
    # hook's own directory (r72a HOOKDIRSPELL)
    rest = re.sub(r"^(?:\$\{[^}]*\}|\$\w+)/", "", word)
    if directory is not None:
        add(directory, rest.lstrip("/"), False)
    stripped = re.sub(r"^(?:/|\./|\.\./)+", "", rest)
    add(tree, stripped, False)
    for place in entered:
        add(os.path.join(tree, place), rest.lstrip("/"), False)
    return places
