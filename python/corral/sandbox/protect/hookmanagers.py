"""Hook managers: the work-tree files their installed hooks run or read.

A hook in `.git/hooks` (or the `core.hooksPath` directory) is protected, but the hook managers
install hooks that hand over to files in the work tree, which a sandboxed command can write:
- husky v9: core.hooksPath = .husky/_, whose hooks run `.husky/<hook>`;
- pre-commit: the hook runs what `.pre-commit-config.yaml` lists, `repo: local` scripts too;
  prek, its rewrite, also reads `prek.toml` and runs every nested project's config below;
- lefthook: the hook runs what `lefthook.yml` (and its local and dot-directory variants) lists;
- overcommit: `.overcommit.yml` and the `.git-hooks` directory of repository hooks.
The manager is recognised by its installed hooks' text, not by the presence of its config (a
config without installed hooks runs nothing). Managers that read files corral cannot keep
read-only for everyday work (husky v4 reads package.json and runs node_modules) are named in a
note instead.
"""

from __future__ import annotations

import os

from corral.paths import read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_HOOKS = 64
MAX_HOOK_BYTES = 64 * 1024
MAX_CONFIG_BYTES = 256 * 1024

# every config lefthook reads: its main and local config, plain or dotted, at the top or in
# .config/, in each format it takes (a list of known names fell behind lefthook's own)
LEFTHOOK_FILES = (
    *(
        f"{place}{stem}.{ext}"
        for place in ("", ".config/")
        for stem in ("lefthook", ".lefthook", "lefthook-local", ".lefthook-local")
        for ext in ("yml", "yaml", "toml", "json", "jsonc")
    ),
    ".lefthook",
    ".lefthook-local",
)
OVERCOMMIT_FILES = (".overcommit.yml", ".git-hooks")
HK_FILES = ("hk.pkl", "hk.local.pkl", ".config/hk.pkl", ".hk.pkl")
# hook managers named in their hooks' text, and the configs whose commands they run (read
# by their words)
WORD_CONFIGS = {
    "rusty-hook": (".rusty-hook.toml", "rusty-hook.toml"),
    "captainhook": ("captainhook.json",),
    "grumphp": ("grumphp.yml", "grumphp.yaml", "grumphp.yml.dist", "grumphp.dist.yml"),
}
PRE_COMMIT_DEFAULT = ".pre-commit-config.yaml"
STAGED_EXTENSIONS = ("", ".json", ".yaml", ".yml", ".mjs", ".cjs", ".js", ".ts", ".mts", ".cts")


class Found:
    __slots__ = ("files", "notes", "unknown")

    def __init__(self) -> None:
        self.files: list[str] = []
        self.notes: list[str] = []
        # (config, what runs it, what cannot be known of it): the workspace's change sets are
        # held for review then (Resolution._unreadable)
        self.unknown: list[tuple[str, str, list[str]]] = []


def hook_files(directories: Iterable[str]) -> list[tuple[str, str, str | None]]:
    """(directory, text, the resolved target when the hook is a symlink) of every hook, the
    links included (a hook linked into the work tree runs what the work tree holds)."""
    found: list[tuple[str, str, str | None]] = []
    for directory in directories:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if len(found) >= MAX_HOOKS:
                return found
            if entry.name.endswith(".sample"):
                continue
            link = os.path.realpath(entry.path) if entry.is_symlink() else None
            try:
                raw = read_regular(entry.path, MAX_HOOK_BYTES)
                text = raw.decode("utf-8", errors="replace")
            except OSError:
                text = ""
            found.append((directory, text, link))
    return found


def _pre_commit_configs(text: str) -> list[str]:
    """The --config of pre-commit's installed hook (`--config=X` or `--config X`)."""
    names = []
    words = text.replace("=", " ").replace("(", " ").replace(")", " ").split()
    for i, word in enumerate(words[:-1]):
        if word == "--config":
            names.append(words[i + 1].strip("\"'"))
    return names or [PRE_COMMIT_DEFAULT]


def script_like(word: str) -> bool:
    """Whether a word of a config may name a script by a path (`scripts/local-pre-commit`,
    `scripts/local.sh`), whether or not it is there yet: a `/` in it, and neither a
    directory (`docs/_build/`), a pattern (`^src/`, `*.py`), a variable nor a URL. A
    missing one is kept as a script would be: the optional per-developer hook,
    `test -x scripts/local && scripts/local`, git-ignored (r72a CFGOPTIONAL; r73a
    CFGOPTSUFFIX: one without a suffix)."""
    word = word.strip("\"'")
    return (
        "/" in word
        and not word.endswith("/")
        and not word.startswith(("^", "("))
        and not any(c in word for c in "*?[]${}|\\")
        and "://" not in word
    )


def _local_entries(config: str, tree: str, base: str) -> list[str]:
    """Scripts in the work tree that a pre-commit config's hooks run (`entry: ./x.sh`),
    relative to `base`, where its hooks run."""
    try:
        text = read_regular(config, MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return []
    scripts = []
    for line in text.splitlines():
        key, _, value = line.strip().lstrip("- ").partition(":")
        if key.strip() not in ("entry", "args"):
            continue
        # Every word that names a file of the work tree: `./x.sh`, and what an interpreter
        # runs (`bash scripts/lint.sh`, `python3 check.py`), args: `[scripts/x.py]` too.
        words = [w.strip("\"'") for w in value.strip().strip("[]").replace(",", " ").split()]
        for word in words:
            if not word or word.startswith("-") or os.path.isabs(word) or "://" in word:
                continue
            path = os.path.normpath(os.path.join(base, word))
            # (missing, when it may name a script: r72a CFGOPTIONAL, r73a CFGOPTSUFFIX; the
            # first word of an entry always, `language: script` runs it from `base`)
            missing = not os.path.lexists(path) and (script_like(word) or word == words[0])
            if path.startswith(tree + os.sep) and (os.path.isfile(path) or missing):
                scripts.append(path)
    return scripts


PREK_CONFIGS = ("prek.toml", ".pre-commit-config.yaml", ".pre-commit-config.yml")
MAX_WALK = 50_000  # entries looked at for prek's nested projects
NOT_PROJECTS = frozenset({
    ".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", "target", ".mypy_cache",
    ".pytest_cache", ".ruff_cache",
})  # fmt: skip


def _prek_configs(tree: str) -> tuple[list[tuple[str, str]], bool]:
    """((config, the directory its hooks run in) of every project prek runs without
    --config: the top's and, in its workspace mode, each directory below with a config of
    its own (prek.toml preferred); whether that is all of them: past MAX_WALK entries it is
    not, and that is said, never quietly cut (r68a PREKWALK: 4,100 files a command added hid
    a nested project's `entry:` script, rewritten in the next run). The names are protected
    at any depth as well: a config a command adds below is held whether or not this walk
    reaches it."""
    found: list[tuple[str, str]] = []
    level, seen = [tree], 0
    while level and seen < MAX_WALK:
        below = []
        for directory in level:
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            names = {e.name for e in entries}
            found += [(os.path.join(directory, n), directory) for n in PREK_CONFIGS if n in names]
            for entry in entries:
                if entry.name not in NOT_PROJECTS and entry.is_dir(follow_symlinks=False):
                    below.append(entry.path)
            seen += len(entries)
        level = below
    return found, not level


def _runs_hk(text: str) -> bool:
    """Whether a hook runs hk (`hk run pre-commit`, `"$HOME/.local/bin/hk" run ...`)."""
    import itertools

    words = [w.strip("\"'") for w in text.split()]
    return any(
        os.path.basename(w) == "hk" and after == "run" for w, after in itertools.pairwise(words)
    )


MISE_DEPTH = 3  # levels below a work tree looked in for mise configs
MISE_LOOKED = 500  # directories looked at
NOT_PROJECTS_BELOW = frozenset({".git", "node_modules", ".venv", "target", "__pycache__"})


def runs_mise(text: str) -> bool:
    """Whether a hook or a hook manager's config runs mise at all (`exec mise run
    pre-commit`, `mise -q run lint`, `mise lint`: an unknown word is a task to mise)."""
    import itertools

    words = [w.strip("\"'") for w in text.split()]
    return any(
        os.path.basename(w) == "mise" and bool(after) and after[0] not in "#=:"
        for w, after in itertools.pairwise(words)
    )


def mise_tasks(tree: str, found: Found) -> None:
    """What mise's tasks run, from every config mise reads for the work tree (its own, and
    each directory's above it: r73a MISEPARENT), where a hook or hook manager runs mise
    (r72a MISEHOOK: `mise generate git-pre-commit`'s hook; r73a MISEMGR: lefthook's `run:
    mise run lint`, husky's script, `mise -q run`)."""
    from corral.sandbox.protect.toolconfigs import mise_task_files

    unknown: list[str] = []
    directory = tree
    while True:
        found.files.extend(mise_task_files(directory, unknown))
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    # ... and below it: a hook runs mise in a subproject (`cd backend && mise run lint`,
    # `mise -C backend`, lefthook's `root: backend/`), which reads backend/mise.toml (r75a
    # MISESUB)
    from corral.sandbox.protect.dirwalk import directories

    below, complete = directories(tree, MISE_DEPTH, MISE_LOOKED, NOT_PROJECTS_BELOW)
    for directory in below:
        found.files.extend(mise_task_files(directory, unknown))
    if not complete:  # (never cut quietly: r76a WALKFLOOD, 2,600 new directories pushed
        # backend/ past the walk)
        unknown.append(f"the subprojects past the first {MISE_LOOKED} directories")
    if unknown:
        found.unknown.append((tree, "a git hook runs mise's tasks at `git commit`", unknown))


# lint-staged's and nano-staged's configs: the commands they run on the staged files, from
# the config nearest each one (a monorepo's packages have their own), or package.json's key
STAGED_FILES = (
    *(f".lintstagedrc{ext}" for ext in STAGED_EXTENSIONS),
    *(f"lint-staged.config.{ext}" for ext in ("js", "mjs", "cjs", "ts", "mts", "cts")),
    *(f"{dot}nano-staged.{ext}" for dot in ("", ".") for ext in ("json", "js", "cjs", "mjs")),
    ".nanostagedrc",
)
STAGED_KEYS = ("lint-staged", "nano-staged")
STAGED_DEPTH = 4  # levels below a work tree looked in for nested configs
STAGED_LOOKED = 2000  # directories looked at


def runs_staged(text: str) -> bool:
    """Whether a hook's text runs lint-staged or nano-staged (husky's `npx lint-staged`)."""
    return "lint-staged" in text or "nano-staged" in text


def staged_texts(tree: str, texts: Iterable[str], found: Found) -> list[tuple[str, str, bool]]:
    """(directory, text, True) of every lint-staged or nano-staged config of the work tree,
    package.json's and package.yaml's key as its own text, and a config a hook names
    (`--config x`), read as a hook manager's config: the scripts their commands name are
    kept (r77a LINTSTAGED: a script `.lintstagedrc.json` ran was rewritten, and ran at the
    next commit). Found where lint-staged finds them, at any depth among the files git
    tracks (r78a LSDEEP: one five levels down), and to STAGED_DEPTH levels among the rest;
    past the walk's budget, found.unknown says so. A JS config is read by its words; one
    that builds a path in code (`path.join`, `${...}`) names none: unknown (r78a LSJSCODE)."""
    import re

    from corral.sandbox.protect.dirwalk import directories

    names = (*STAGED_FILES, *PACKAGE_FILES)
    below, complete = directories(tree, STAGED_DEPTH, STAGED_LOOKED, NOT_PROJECTS_BELOW)
    configs = [os.path.join(d, n) for d in (tree, *below) for n in names]
    listed = tracked(tree)
    if listed is None:
        complete = False  # (the index unread: configs past the walk may be tracked there)
    configs += [os.path.join(tree, p) for p in listed or [] if os.path.basename(p) in names]
    for text in texts:
        words = text.replace("=", " ").split()
        configs += [
            os.path.normpath(os.path.join(tree, words[i + 1].strip("\"'")))
            for i, w in enumerate(words[:-1])
            if w in ("--config", "-c") and runs_staged(text)
        ]
    out: list[tuple[str, str, bool]] = []
    for config in dict.fromkeys(configs):
        if not os.path.isfile(config):
            continue
        text = read(config)
        name = os.path.basename(config)
        if name in PACKAGE_FILES:
            text = _package_keys(text, STAGED_KEYS, yaml=not name.endswith(".json"))
            if not text:
                continue
        elif name.endswith(CODE_CONFIGS) and re.search(COMPUTED, text):
            found.unknown.append((
                config, "a git hook runs lint-staged, which runs the commands this config "
                "builds in code", ["the scripts they name"],
            ))  # fmt: skip
        found.files.append(config)
        out.append((os.path.dirname(config), text, True))
    if not complete:  # (never cut quietly: r76a WALKFLOOD)
        found.unknown.append((
            tree, "a git hook runs lint-staged, which runs the config nearest each staged file",
            [f"the configs past the first {STAGED_LOOKED} directories, or that an index "
             "corral cannot read (a split index) lists"],
        ))  # fmt: skip
    return out


# the package manifests lint-staged reads its key from (lint-staged 16: package.yaml too)
PACKAGE_FILES = ("package.json", "package.yaml", "package.yml")
CODE_CONFIGS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")
# what a JS config builds a path with (read as words, it names none); not a command built
# from the staged files (`eslint ${files.join(" ")}`), which names its program
COMPUTED = (
    r"""path\.\w+\(|__dirname|__filename|import\.meta|require\(|process\.(?:env|cwd)"""
    r"""|\}/|\+\s*['"`]/|/['"`]\s*\+"""
)


def _config_files_named(text: str, tree: str) -> list[str]:
    """The config files of the work tree a config's words name (`.json`, `.yml`, `.yaml`)."""
    import re

    found = []
    for word in re.findall(r"""[\w./-]+\.(?:json|ya?ml)""", text):
        path = os.path.normpath(os.path.join(tree, word))
        if path.startswith(tree + os.sep) and os.path.isfile(path):
            found.append(path)
    return list(dict.fromkeys(found))


_TRACKED: dict[str, tuple[tuple[int, int, int, int], list[str] | None]] = {}


def tracked(tree: str) -> list[str] | None:
    """The paths git's index lists for the work tree at `tree` ([] where there is none; None
    where it cannot be read: a split index, r79a SPLITINDEX)."""
    from corral.changes.git_objects import GitUnreadable, read_index
    from corral.sandbox.protect.gitguard import _read_pointer  # (here: gitguard imports this)

    dot_git = os.path.join(tree, ".git")
    if os.path.isfile(dot_git):
        target = _read_pointer(dot_git, "gitdir:")
        if target is None:
            return []
        dot_git = os.path.normpath(os.path.join(tree, target))
    index = os.path.join(dot_git, "index")
    try:
        info = os.stat(index)
    except OSError:
        return []
    # (remembered while the index is as it was: the editor's engine resolves at every call,
    # and a monorepo's index of 50,000 entries took 0.2 s to read)
    state = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    memo = _TRACKED.get(index)
    if memo is not None and memo[0] == state:
        return memo[1]
    try:
        listed: list[str] | None = list(read_index(index).entries)
    except (GitUnreadable, OSError, ValueError):
        listed = None
    _TRACKED.clear()  # (one repository at a time)
    _TRACKED[index] = (state, listed)
    return listed


def _package_keys(text: str, keys: tuple[str, ...], yaml: bool = False) -> str:
    """The values of a package manifest's `keys`, as text ("" when it has none; all of it
    when it does not read: every word is read then). package.yaml's by indentation: the
    lines below `key:` indented deeper (r78a LSPKGYAML)."""
    if yaml:
        lines = text.splitlines()
        out: list[str] = []
        for i, line in enumerate(lines):
            key = line.split(":", 1)[0].strip().strip("\"'")
            if key not in keys or ":" not in line:
                continue
            depth = len(line) - len(line.lstrip())
            out.append(line.split(":", 1)[1])
            for below in lines[i + 1 :]:
                if below.strip() and len(below) - len(below.lstrip()) <= depth:
                    break
                out.append(below)
        return "\n".join(out)
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict):
        return ""
    return "\n".join(json.dumps(data[k]) for k in keys if k in data)


MAX_PKL = 50  # Pkl files followed from hk's config


def _pkl_imports(config: str, tree: str) -> list[str]:
    """The work tree's Pkl files an hk config imports, amends or extends (to MAX_PKL):
    `import "steps/extra.pkl"`, not a `package://` or an `https:` one."""
    import re

    found: list[str] = []
    queue = [config]
    while queue and len(found) < MAX_PKL:
        text = read(queue.pop(0))
        for value in re.findall(r"""\b(?:import\*?|amends|extends)\s+["']([^"']+)["']""", text):
            if ":" in value:
                continue  # (package://, https://, pkl:, modulepath:)
            path = os.path.normpath(os.path.join(os.path.dirname(config), value))
            if path.startswith(tree + os.sep) and path not in found:
                found.append(path)
                queue.append(path)
    return found


def _runs_prek(text: str) -> bool:
    """prek, a rewrite of pre-commit, installs hooks that run `prek` with the same config."""
    import re

    return re.search(r"(^|[\s/\"'])prek(\s|$|[\"'])", text) is not None


def detect(tree: str, hook_dirs: Iterable[str]) -> Found:
    found = Found()
    for directory, text, _ in hook_files(hook_dirs):
        if (
            "pre-commit" in text
            and ("pre_commit" in text or "File generated by pre-commit" in text)
        ) or _runs_prek(text):
            named = _pre_commit_configs(text)
            if _runs_prek(text) and named == [PRE_COMMIT_DEFAULT]:
                top = [(os.path.join(tree, n), tree) for n in PREK_CONFIGS]
                nested, complete = _prek_configs(tree)
                configs = list(dict.fromkeys([*top, *nested]))
                if not complete:
                    found.unknown.append((
                        os.path.join(tree, PREK_CONFIGS[0]),
                        "prek runs the hooks of every project below the top at `git commit`",
                        [f"the projects below its first {MAX_WALK} entries"],
                    ))  # fmt: skip
            else:
                configs = [(os.path.normpath(os.path.join(tree, n)), tree) for n in named]
            for config, base in configs:
                found.files.append(config)
                found.files.extend(_local_entries(config, tree, base))
        if _runs_hk(text):
            # (hk's hooks run the steps its Pkl config names, r69a HKPKL; and the Pkl files
            # it imports or amends, whose steps' words are read as a config's, r72a HKSCRIPT)
            for name in HK_FILES:
                found.files.append(os.path.join(tree, name))
                found.files.extend(_pkl_imports(os.path.join(tree, name), tree))
        if "lefthook" in text:
            found.files.extend(os.path.join(tree, name) for name in LEFTHOOK_FILES)
            found.files.extend(lefthook_sources(tree))
        if "overcommit" in text.lower():
            found.files.extend(os.path.join(tree, name) for name in OVERCOMMIT_FILES)
        if os.path.basename(directory) == "_" and (
            os.path.basename(os.path.dirname(directory)) == ".husky"
            or os.path.isfile(os.path.join(directory, "h"))  # `husky .config/husky`
            or "husky" in text
        ):
            found.files.append(os.path.dirname(directory))  # husky v9: <dir>/<hook> runs
        for word, names in WORD_CONFIGS.items():
            # (rusty-hook's hook runs what .rusty-hook.toml says, r79a RUSTYHOOK;
            # CaptainHook's and GrumPHP's, what their configs name, CAPTAINHOOK)
            if word in text.lower():
                found.files.extend(os.path.join(tree, name) for name in names)
        if "yorkie" in text:
            # (r78a YORKIE: its hook runs node_modules/yorkie's runner, which loads execa)
            found.notes.append(
                f"{tree}: yorkie's hooks run commands from package.json and node_modules, "
                "which a sandboxed command can change; move to husky v9 (protected)"
            )
        if "husky-run" in text or ("husky.sh" in text and "node_modules" in text):
            found.notes.append(
                f"{tree}: husky v4 hooks run commands from package.json and node_modules, "
                "which a sandboxed command can change; upgrade husky (v9 is protected)"
            )
    # one entry per path, in order
    found.files = list(dict.fromkeys(found.files))
    return found


def run_modules(text: str) -> list[str]:
    """Module names a hook runs with `python -m NAME` (pre-commit's `-mpre_commit`)."""
    words = text.replace("(", " ").replace(")", " ").split()
    found = []
    for i, word in enumerate(words):
        word = word.strip("\"'")
        name = words[i + 1].strip("\"'") if word == "-m" and i + 1 < len(words) else ""
        if word.startswith("-m") and len(word) > 2 and word[2:3] not in ("-", "="):
            name = word[2:]
        if name and all(p.isidentifier() for p in name.split(".")):
            found.append(name)
    return list(dict.fromkeys(found))


def read(path: str) -> str:
    """A config or script's text, "" where it is not a regular file (see read_regular)."""
    try:
        return read_regular(path, MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _lefthook_places(text: str) -> tuple[list[str], list[str]]:
    """(each job's `root:`, each `source_dir:` and `source_dir_local:`) of a lefthook config,
    in any of its syntaxes: lefthook runs a job's command from its root, and the scripts of
    `<source_dir>/<hook>/` (r68a LEFTHOOKDIR: `root: api/` and `source_dir: tools/lefthook/`
    moved the scripts it ran away from what corral kept)."""
    import re

    roots: list[str] = []
    sources: list[str] = []
    pattern = (
        r"""(?:^|[\s{,"'])(root|source_dir_local|source_dir)["']?\s*[:=]\s*["']?"""
        r"""([^"'\s,}]+)"""
    )
    for key, value in re.findall(pattern, text, re.M):
        (roots if key == "root" else sources).append(value)
    return roots, sources


def _lefthook_extends(text: str) -> list[str]:
    """The files a lefthook config's `extends` merges in, in any of its formats (r78a
    LHEXTFMT: TOML's `extends = [...]` and JSON's indented `"extends": [...]` were never
    read): a YAML block list, or a flow list or a single value after the key."""
    import re

    found: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        key, _, value = line.partition(":")
        if key.strip() != "extends" or line[:1].isspace() or value.split("#")[0].strip():
            continue
        for item in lines[i + 1 :]:  # (YAML: `extends:` and its items below)
            if not item.strip() or item.lstrip().startswith("#"):
                continue
            if not item[:1].isspace() and not item.lstrip().startswith("-"):
                break
            found.append(item.strip().lstrip("-").strip().strip("\"'"))
    flow = r"""["']?\bextends["']?\s*[:=]\s*(\[[^\]]*\]|"[^"]*"|'[^']*')"""
    for value in re.findall(flow, text):
        found += re.findall(r"""["']([^"']+)["']""", value)
    for value in re.findall(r"(?m)^extends\s*:\s*\[([^\]]*)\]", text):  # (YAML flow, bare)
        found += [v.strip().strip("\"'") for v in value.split(",")]
    return list(dict.fromkeys(f for f in found if f))


def manager_texts(
    tree: str, hook_dirs: Iterable[str], found_files: Iterable[str]
) -> list[tuple[str, str, bool]]:
    """(directory, text, whether it is a config) of what the hook managers run besides the
    installed hooks: husky's own hook scripts (`.husky/pre-commit`, beside its `_`
    directory), pre-commit's config, lefthook's configs with the files they extend. Their
    words are read as a hook's (a config's: every word, in any of its syntaxes)."""
    texts: list[tuple[str, str, bool]] = []
    files = set(found_files)
    tops = {os.path.join(tree, name) for name in LEFTHOOK_FILES}
    for directory in hook_dirs:
        parent = os.path.dirname(directory)
        if os.path.basename(directory) == "_" and parent in files:  # husky v9
            texts += [(parent, text, False) for _, text, _ in hook_files([parent])]
    for config in files:
        name = os.path.basename(config)
        if name == "prek.toml" or (
            name.endswith((".yaml", ".yml")) and name.startswith((".pre-commit", "pre-commit"))
        ):
            texts.append((os.path.dirname(config), read(config), True))
        elif any(name in names for names in WORD_CONFIGS.values()) and os.path.isfile(config):
            text = read(config)
            texts.append((tree, text, True))
            # (and the configs it includes or imports: CaptainHook's `includes`, GrumPHP's
            # `imports`, read the same way, r80a PHPINCLUDES)
            for word in _config_files_named(text, tree)[:MAX_HOOKS]:
                texts.append((tree, read(word), True))
        elif name.endswith(".pkl") and os.path.isfile(config):
            # (hk's steps: `check = "scripts/lint.sh {{files}}"` runs from the top, r72a
            # HKSCRIPT)
            texts.append((tree, read(config), True))
    parts = [
        text for config, text in lefthook_configs(tree) if config in files or config not in tops
    ] if any(os.path.join(tree, n) in files for n in LEFTHOOK_FILES) else []  # fmt: skip
    for part in _templated(parts):
        roots = _lefthook_places(part)[0][:MAX_HOOKS]
        # (a job's words, read from the top and from each root a job names)
        for base in (tree, *(os.path.normpath(os.path.join(tree, r)) for r in roots)):
            if base == tree or base.startswith(tree + os.sep):
                texts.append((base, part, True))
    return texts


def lefthook_configs(tree: str) -> list[tuple[str, str]]:
    """(path, text) of every lefthook config at `tree` and of each file they extend: an
    `extends:` entry is a glob (`lefthook/*.yml`, r77a LHEXTGLOB), every match merged in."""
    import glob
    import itertools

    found: list[tuple[str, str]] = []
    queue = [os.path.join(tree, name) for name in LEFTHOOK_FILES]
    seen: set[str] = set()
    while queue and len(seen) < MAX_HOOKS:
        config = queue.pop(0)
        if config in seen or not os.path.isfile(config):
            continue
        seen.add(config)
        text = read(config)
        found.append((config, text))
        for entry in _lefthook_extends(text)[:MAX_HOOKS]:
            pattern = os.path.normpath(os.path.join(tree, entry))
            if not pattern.startswith(tree + os.sep):
                continue  # (outside the work tree: no command writes it, and no walk of /)
            if any(c in entry for c in "*?["):
                queue += sorted(itertools.islice(glob.iglob(pattern), MAX_HOOKS))
            else:
                queue.append(pattern)
    return found


# lefthook's own `{...}` in a command, filled in at run time (not a template of the config)
LEFTHOOK_PLACEHOLDERS = frozenset({
    "staged_files", "push_files", "all_files", "files", "cmd", "lefthook_job_name",
})  # fmt: skip


def _templated(parts: list[str]) -> list[str]:
    """The config texts with lefthook's `templates:` put in: `templates: {bin: tools/bin}`
    makes `run: "{bin}/lint.sh"` run tools/bin/lint.sh (r77a LHTEMPLATE). Every value any
    config or extended file gives the name, in any syntax, is tried (a text is added with it
    put in): which one lefthook takes depends on the order of the merge."""
    import re

    names = {
        n for part in parts for n in re.findall(r"\{(\w+)\}", part)
        if n not in LEFTHOOK_PLACEHOLDERS and not n.isdigit()
    }  # fmt: skip
    out = list(parts)
    joined = "\n".join(parts)
    for name in sorted(names)[:MAX_HOOKS]:
        pattern = rf"""(?:^|[\s{{,"']){re.escape(name)}["']?\s*[:=]\s*["']?([^"'\s,}}]+)"""
        values = list(dict.fromkeys(re.findall(pattern, joined, re.M)))[:MAX_HOOKS]
        mark = "{" + name + "}"
        # (on the texts other names were put into too: `{root}/{bin}/x`)
        out += [t.replace(mark, v) for t in out if mark in t for v in values]
        del out[MAX_HOOKS * 4 :]
    return out


def lefthook_sources(tree: str) -> list[str]:
    """The script directories lefthook configs at `tree` name (`source_dir:`), kept as the
    default `.lefthook` is: also where a file they extend names it (r77a LHEXTSRC)."""
    found = []
    for _, text in lefthook_configs(tree):
        for source in _lefthook_places(text)[1]:
            path = os.path.normpath(os.path.join(tree, source))
            if path.startswith(tree + os.sep):
                found.append(path)
    return found
