"""What a directory the host runs programs from brings with it: one answer for a directory a
host-run config puts on PATH (direnv, mise) and one on the PATH corral itself runs with.

The programs in such a directory load much more than themselves (review rounds 24 to 28), and
markers of what is an installation kept missing some (a luarocks tree of pure-Lua rocks, an
unpacked JDK), so what is kept is decided by where the directory lies:
- X of `X/bin` (or Scripts, sbin) inside a writable root, whole: a venv, a conda
  environment, a nodeenv, a JDK, a luarocks tree, Composer's vendor/, a tool's tree under
  tools/; watched whole when it does not exist yet (a venv to be made). Installing into it,
  or changing it, is yours to do. Not when X is the writable root itself or the directory of
  the config that put it on PATH (`PATH_add bin`: the project's own scripts): then the
  dependency trees its scripts load (vendor/, Carton's local/lib/perl5), and if it is a
  Python prefix (`python -m venv .`) its pyvenv.cfg, lib, include, etc, share, bin and
  pip.conf, not the project files beside them.
- a directory inside a node_modules (`node_modules/.bin`, `node_modules/typescript/bin`):
  the outermost node_modules it is in, and every node_modules above it up to the root, where
  node also looks (hoisted dependencies, pnpm's store).
- every symlink in the directory: the link itself (so the check keeps each link of its chain,
  `bin/tool -> ../tools/current/tool` with `tools/current -> v1`), the directory its target
  lies in as if it were on PATH itself (`bin/tool -> ../.venv/bin/tool`: the venv), and a
  target that does not exist yet (watched: made later, it would run in the link's name).
Programs a project keeps for itself (its bin/ reading its lib/, a script that imports the
project's modules) load the project's code, which you review as its code.
"""

from __future__ import annotations

import os

MAX_LINKS = 4096  # links of one directory followed
BIN_NAMES = ("bin", "Scripts", "sbin")
DEPENDENCY_TREES = ("vendor", "local/lib/perl5")
PYTHON_MARKS = ("pyvenv.cfg", "conda-meta")
# what of a workspace that is itself a Python prefix (`python -m venv .`) its Python reads
ROOT_PREFIX_PARTS = ("pyvenv.cfg", "conda-meta", "lib", "lib64", "include", "etc", "share",
                     "pip.conf", "bin", "Scripts")  # fmt: skip


def _python_prefix(prefix: str) -> bool:
    if any(os.path.lexists(os.path.join(prefix, mark)) for mark in PYTHON_MARKS):
        return True
    import glob

    base = os.path.join(glob.escape(prefix), "lib*", "p*")
    return bool(
        glob.glob(os.path.join(base, "site-packages")) or glob.glob(os.path.join(base, "os.py"))
    )


def _inside(path: str, root: str) -> bool:
    return path.startswith(root + os.sep)


def node_modules_of(place: str, root: str) -> list[str]:
    """The node_modules a Node program run in `place` finds its packages in: `place`'s own
    (kept even before it exists: an install there would give a hook its programs) and each
    one above it up to `root`."""
    return (
        _node_modules(os.path.join(place, "node_modules"), root)
        if _inside(place, root) or place == root
        else []
    )


def _node_modules(directory: str, root: str) -> list[str]:
    """Every node_modules from the outermost one `directory` lies in (or its own) up to the
    root: where node finds what a program there loads."""
    parts = directory[len(root) + 1 :].split(os.sep) if _inside(directory, root) else []
    if "node_modules" not in parts:
        return []
    outer = os.path.join(root, *parts[: parts.index("node_modules") + 1])
    found = [outer]
    above = os.path.dirname(outer)
    while _inside(above, root) or above == root:
        modules = os.path.join(above, "node_modules")
        if modules != outer and os.path.isdir(modules):
            found.append(modules)
        if above == root:
            break
        above = os.path.dirname(above)
    return found


def brought(directory: str, root: str, links: bool = True, project: str | None = None) -> list[str]:
    """The paths to keep (read-only where they exist, watched where not) that putting
    `directory` on PATH brings: those inside the writable root `root`. `project`: the
    directory of the config that put it there (its own `bin` is the project's). With
    `links`, what each link in it leads to brings its own (once: not the links found
    there)."""
    keep: list[str] = []
    parent, name = os.path.split(directory)
    if name in BIN_NAMES and _inside(parent, root) and parent != project:
        keep.append(parent)  # an installation, whatever marks it or does not (r28a)
    elif name in BIN_NAMES and parent in (root, project):
        if _python_prefix(parent):
            # the workspace (or the config's project) is the venv: its parts, not the
            # project files beside them
            keep += [os.path.join(parent, part) for part in ROOT_PREFIX_PARTS]
        # what the project's own programs load that is no project code: bundler's binstubs
        # load vendor/bundle, Composer's proxies vendor/, Carton's scripts local/ (r29a)
        # (watched where missing: made later, they would be loaded all the same, r30a)
        keep += [os.path.join(parent, tree) for tree in DEPENDENCY_TREES]
    keep += _node_modules(directory, root)
    if not links:
        return keep
    try:
        with os.scandir(directory) as it:
            found = [e.path for e, _ in zip(it, range(MAX_LINKS), strict=False) if e.is_symlink()]
    except OSError:
        found = []
    seen = {directory}
    for link in found:
        keep.append(link)
        target = os.path.realpath(link)
        if not _inside(target, root):
            continue
        if not os.path.exists(target):
            keep.append(target)
        elif os.path.dirname(target) not in seen:
            seen.add(os.path.dirname(target))
            # `bin/tool -> ../.venv/bin/tool`: the venv's whole prefix, as if on PATH
            keep += brought(os.path.dirname(target), root, links=False)
    return keep
