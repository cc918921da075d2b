"""Host-run configs below the top of a writable root: `app/.envrc`, `svc/mise.toml`.

direnv runs the `.envrc` of whatever directory your shell is in, mise reads the configs of
every directory up from it, cargo the `.cargo` of a crate in a workspace, Mercurial a nested
repository's hgrc. A change set cannot create or change one (their names are refused at any
depth), but those the user has there name files a command can write. They are read when a
change set is checked, not when the sandbox starts: finding them means walking the tree, which
only a change set with something in it pays for. What they name is then held like a protected
path, and what they do that cannot be read ahead holds the change set for review, as at the top
(see Resolution._unreadable).

The walk goes `gitguard.DEPTH` levels down, past tools' own trees (node_modules, .venv, ...),
and looks at no more than `gitguard.LIMIT` directories: past that, the configs cannot all be
known, and that is said (unknown), never cut quietly.
"""

from __future__ import annotations

import os

from corral.paths import name_matches
from corral.sandbox.protect import gitguard, toolconfigs

# names at a directory's top that mean one of the configs is there
MARKERS = frozenset({
    ".envrc", ".cargo", ".hg", ".tool-versions", *toolconfigs.RUSTUP_FILES,
    *(name.split("/")[0] for name in toolconfigs.MISE_FILES),
    *(name.split("/")[0] for name in toolconfigs.MISE_CONF_DIRS),
})  # fmt: skip


def _has_config(names: set[str]) -> bool:
    return bool(names & MARKERS) or any(
        name_matches(n, p) for n in names for p in toolconfigs.MISE_PATTERNS
    )


def config_dirs(root: str) -> tuple[list[str], bool]:
    """(directories below `root` whose top holds a host-run config, whether that is all)."""
    found: list[str] = []
    level = [root]
    seen = 0
    for _ in range(gitguard.DEPTH):
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
                if not entry.is_dir(follow_symlinks=False) or entry.name in gitguard.BULKY:
                    continue
                seen += 1
                if seen > gitguard.LIMIT:
                    return found, False
                below.append(entry.path)
        level = below
    for directory in level:  # the last level's own tops
        try:
            names = set(os.listdir(directory))
        except OSError:
            continue
        if _has_config(names):
            found.append(directory)
    return found, True


def referenced(root: str) -> tuple[list[str], list[str], list[str]]:
    """(paths the configs below `root`'s top name, inside `root`; directories they put on
    PYTHONPATH; what cannot be read ahead, each saying where)."""
    from corral.sandbox.protect import direnv

    dirs, complete = config_dirs(root)
    paths: list[str] = []
    module_dirs: list[str] = []
    unknown: list[str] = []
    if not complete:
        unknown.append(
            f"{root} holds more than {gitguard.LIMIT} directories in its top {gitguard.DEPTH} "
            "levels: the host-run configs below its top cannot all be found"
        )
    for directory in dirs:
        envrc = os.path.join(directory, direnv.NAME)
        if os.path.lexists(envrc):
            found = direnv.referenced(envrc, bound=root)
            paths += [envrc, *found.paths]
            module_dirs += found.module_dirs
            unknown += [f"{envrc}: {u}" for u in found.unknown]
        named, modules, odd = toolconfigs.referenced(directory, bound=root)
        paths += named
        module_dirs += modules
        unknown += [f"{directory}: {u}" for u in odd]
    for path in paths:
        if path == root:
            unknown.append(f"{path} (the whole workspace)")
    inside = [p for p in dict.fromkeys(paths) if p.startswith(root + os.sep)]
    return inside, list(dict.fromkeys(module_dirs)), list(dict.fromkeys(unknown))
