"""What a directory the host runs programs from brings with it: one answer for a directory a
host-run config puts on PATH (direnv, mise) and one on the PATH corral itself runs with.

The programs in such a directory load much more than themselves (review rounds 24 to 27), so
what is kept is the installation they belong to, whole, not a list of its parts:
- X of `X/bin` when X is an installation: a Python prefix (a pyvenv.cfg, a conda-meta, or a
  `lib*/p*` with a site-packages or an os.py: a venv, a conda or pixi environment, a
  standalone or PyPy build), another runtime's prefix (lib/node_modules of a nodeenv,
  lib/ruby, lib/perl5, lib/lua), anything under a dot-directory (.venv, .nenv,
  .direnv/python-3.12, .tox/py312: made by a tool), Composer's vendor/, or a directory that
  does not exist yet (a venv to be made: watched whole). Its programs read their standard
  library, every `.pth`, pip.conf, `etc/` and `share/`. Installing into it is yours to do.
- the workspace itself as a prefix (`python -m venv .`): its pyvenv.cfg, lib, include, etc,
  share, bin and pip.conf, not the project files beside them.
- a directory inside a node_modules (`node_modules/.bin`, `node_modules/typescript/bin`):
  the outermost node_modules it is in, and every node_modules above it up to the root, where
  node also looks (hoisted dependencies, pnpm's store).
- every symlink in the directory: the link itself (so the check keeps each link of its chain,
  `bin/tool -> ../tools/current/tool` with `tools/current -> v1`), the directory its target
  lies in as if it were on PATH itself (`bin/tool -> ../.venv/bin/tool`: the venv), and a
  target that does not exist yet (watched: made later, it would run in the link's name).
Programs a project keeps for itself (`tools/bin/lint` reading `tools/lib`, a script that
imports the project's modules) load the project's code, which you review as its code.
"""

from __future__ import annotations

import os

MAX_LINKS = 4096  # links of one directory followed
PYTHON_MARKS = ("pyvenv.cfg", "conda-meta")
# what marks an installation's prefix (X of X/bin) besides Python's: its runtime's libraries
PREFIX_MARKS = ("lib/node_modules", "lib/ruby", "lib/perl5", "lib/lua", "conda-meta")
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


def _installation(prefix: str, root: str) -> bool:
    """Whether `prefix` (holding a bin on PATH) is an installation rather than a project's
    directory: marked as a runtime's prefix, made by a tool under a dot-directory
    (.venv, .nenv, .direnv/python-3.12, .tox/py312), or not there yet (a venv to be made)."""
    if not os.path.lexists(prefix) or os.path.basename(prefix) == "vendor":
        return True
    below = os.path.relpath(prefix, root).split(os.sep)
    if any(part.startswith(".") for part in below):
        return True
    if any(os.path.lexists(os.path.join(prefix, mark)) for mark in PREFIX_MARKS):
        return True
    return _python_prefix(prefix)


def _inside(path: str, root: str) -> bool:
    return path.startswith(root + os.sep)


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


def brought(directory: str, root: str, links: bool = True) -> list[str]:
    """The paths to keep (read-only where they exist, watched where not) that putting
    `directory` on PATH brings: those inside the writable root `root`. With `links`, what
    each link in it leads to brings its own (once: not the links found there)."""
    keep: list[str] = []
    parent, name = os.path.split(directory)
    if name in ("bin", "Scripts", "sbin"):
        if _inside(parent, root) and _installation(parent, root):
            keep.append(parent)
        elif parent == root and _python_prefix(root):
            # the workspace is the venv: its parts, not the project files beside them
            keep += [os.path.join(root, part) for part in ROOT_PREFIX_PARTS]
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
