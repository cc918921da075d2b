"""Host-run configs around a writable root: below its top (`app/.envrc`, `svc/mise.toml`) and
in the directories above it (the project's `.envrc` when the workspace is its `tools/`).

direnv runs the nearest `.envrc` up from whatever directory your shell is in, mise reads the
configs of every directory up from it, cargo the `.cargo` of a crate and of every directory
above, Mercurial a nested repository's hgrc. A change set cannot create or change one inside a
root (their names are refused at any depth), but those the user has name files a command can
write. They are read when a change set is checked, not when the sandbox starts: finding them
means walking the tree, which only a change set with something in it pays for. What they name
inside the root is then held like a protected path, and what they do that cannot be read ahead
holds the change set for review, as at the top (see Resolution._unreadable).

Where: every directory above the root; the walk below it, at any depth, looking at the top
of tools' own trees (node_modules, build, .venv, ...) without going into them, and at no more
than `gitguard.LIMIT` directories (past that, the configs cannot all be known, and that is
said: unknown); every `.envrc` (or `.env`) direnv has been allowed to load and every config
mise has trusted or seen (their own records), also inside tools' trees; and your own mise
config (it applies in every directory: `{{cwd}}` there is unknown).
"""

from __future__ import annotations

import os

from corral.paths import name_matches, read_regular
from corral.sandbox.protect import gitguard, toolconfigs

# names at a directory's top that mean one of the configs is there
MARKERS = frozenset({
    ".envrc", ".cargo", ".hg", ".tool-versions", *toolconfigs.RUSTUP_FILES,
    *(name.split("/")[0] for name in toolconfigs.MISE_FILES),
    *(name.split("/")[0] for name in toolconfigs.MISE_CONF_DIRS),
})  # fmt: skip


# tools' own trees, looked at only at their top: what a package manager or a cache holds
# (build/ and dist/ are gone through: `build/xtask` may be a crate of the project's)
NOT_INTO = gitguard.BULKY - {"build", "dist"}


def _has_config(names: set[str]) -> bool:
    return bool(names & MARKERS) or any(
        name_matches(n, p)
        for n in names
        if n.endswith(".toml") and "mise." in n  # (cheap first: a walk looks at every name)
        for p in toolconfigs.MISE_PATTERNS
    )


def config_dirs(root: str) -> tuple[list[str], bool]:
    """(directories below `root` whose top holds a host-run config, whether that is all)."""
    found: list[str] = []
    level = [root]
    seen = 0
    while level:  # every depth: cargo and Mercurial need no record of a config to obey it
        below = []
        for directory in level:
            try:
                with os.scandir(directory) as it:
                    entries = list(it)
            except OSError:
                continue
            if directory != root and _has_config({e.name for e in entries}):
                found.append(directory)
            for entry in entries:
                if not entry.is_dir(follow_symlinks=False):
                    continue
                seen += 1
                if seen > gitguard.LIMIT:
                    return found, False
                if entry.name in NOT_INTO:  # a tool's own tree: its top only
                    try:
                        if _has_config(set(os.listdir(entry.path))):
                            found.append(entry.path)
                    except OSError:
                        pass
                else:
                    below.append(entry.path)
        level = below
    return found, True


MAX_RECORDS = 10000  # direnv's and mise's records looked at


def _records(directory: str) -> list[str]:
    try:
        with os.scandir(directory) as it:
            return [e.path for _, e in zip(range(MAX_RECORDS), it, strict=False)]
    except OSError:
        return []


def _mise_project(config: str) -> str:
    """The project directory of a mise config file (`app/.config/mise/config.toml` -> app)."""
    for name in (*toolconfigs.MISE_FILES, *toolconfigs.MISE_CONF_DIRS):
        if config.endswith("/" + name):
            return config[: -len(name) - 1]
        if os.path.dirname(config).endswith("/" + name):  # conf.d/x.toml
            return os.path.dirname(config)[: -len(name) - 1]
    for directory, _ in sorted(toolconfigs.MISE_NESTED_PATTERNS, key=lambda d: -len(d[0])):
        if os.path.dirname(config).endswith("/" + directory):  # .config/mise.local.toml
            return os.path.dirname(config)[: -len(directory) - 1]
    return os.path.dirname(config)


def activated(root: str) -> list[str]:
    """What direnv and mise have been told of in `root`, at any depth, from their records in
    your data and state directories: the files direnv may load (an `.envrc`, or a `.env`
    with `load_dotenv`) and the directories of the configs mise trusts or has seen."""
    home = os.path.expanduser("~")
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state")
    found: list[str] = []
    for allow in (
        os.path.join(data, "direnv", "allow"),
        os.path.join(home, ".config/direnv/allow"),
    ):
        for record in _records(allow):  # each holds the path of the .envrc it allows
            try:
                first = read_regular(record, 4096).split(b"\n", 1)[0]
                envrc = first.decode("utf-8", errors="replace").strip()
            except OSError:
                continue
            found.append(envrc)
    for kind in ("trusted-configs", "tracked-configs"):
        for record in _records(os.path.join(state, "mise", kind)):  # links to the configs
            try:
                target = os.readlink(record)
            except OSError:
                continue
            found.append(target if os.path.isdir(target) else _mise_project(target))
    return [d for d in dict.fromkeys(found) if d.startswith(root + os.sep)]


def _direnv_files(entries: list[str]) -> tuple[list[str], list[str]]:
    """(directories, `.env` files direnv loads by itself: `load_dotenv`) of direnv's records,
    and the directories of mise's."""
    dirs = [e for e in entries if os.path.basename(e) not in (".envrc", ".env")]
    dirs += [os.path.dirname(e) for e in entries if os.path.basename(e) == ".envrc"]
    return dirs, [e for e in entries if os.path.basename(e) == ".env"]


def referenced(root: str) -> tuple[list[str], list[str], list[str], str, list[str]]:
    """(paths the configs around `root` name, inside `root`; directories they put on
    PYTHONPATH; what cannot be read ahead, each saying where; why the configs below cannot
    all be found, or ""; names held at any depth, as `use flake` implies). A command can
    make directories to push a config past the walk's limit: then no change is checked
    against them, whatever sandbox.unreadable_configs says (see finish)."""
    from corral.sandbox.protect import direnv

    dirs, complete = config_dirs(root)
    above, current = [], root
    while (parent := os.path.dirname(current)) != current:
        above.append(parent)
        current = parent
    recorded, dotenvs = _direnv_files(activated(root))
    dirs = list(dict.fromkeys([*dirs, *recorded, *above]))
    paths: list[str] = []
    module_dirs: list[str] = []
    unknown: list[str] = []
    names: list[str] = []
    projects: dict[str, str] = {}  # what a config names -> its directory (see pathdirs)
    for env_file in dotenvs:
        found_env = direnv.Referenced(root)
        direnv.read_dotenv(env_file, os.path.dirname(env_file), found_env)
        paths += [env_file, *found_env.paths]
        module_dirs += found_env.module_dirs
        unknown += [f"{env_file}: {u}" for u in found_env.unknown]
    named, modules, odd = toolconfigs.own_mise(root)
    paths += named
    module_dirs += modules
    unknown += odd
    for directory in dirs:
        envrc = os.path.join(directory, direnv.NAME)
        if os.path.lexists(envrc):
            found = direnv.referenced(envrc, bound=root)
            names += found.names
            paths += [envrc, *found.paths]
            projects.update(dict.fromkeys(found.paths, directory))
            module_dirs += found.module_dirs
            unknown += [f"{envrc}: {u}" for u in found.unknown]
        named, modules, odd = toolconfigs.referenced(directory, bound=root)
        paths += named
        projects.update((p, directory) for p in named if p not in projects)
        module_dirs += modules
        unknown += [f"{directory}: {u}" for u in odd]
    from corral.sandbox.protect import pathdirs

    for path in list(paths):
        if path == root:
            unknown.append(f"{path} (the whole workspace)")
        elif path.startswith(root + os.sep) and (os.path.isdir(path) or not os.path.lexists(path)):
            paths += pathdirs.brought(path, root, project=projects.get(path))
    inside = [p for p in dict.fromkeys(paths) if p.startswith(root + os.sep)]
    cut = "" if complete else (
        f"{root} holds more than {gitguard.LIMIT} directories (past tools' own trees): the "
        "host-run configs below its top cannot all be found"
    )  # fmt: skip
    return (
        inside, list(dict.fromkeys(module_dirs)), list(dict.fromkeys(unknown)), cut,
        list(dict.fromkeys(names)),
    )  # fmt: skip
