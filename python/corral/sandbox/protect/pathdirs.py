"""What a directory the host runs programs from brings with it: one answer for a directory a
host-run config puts on PATH (direnv, mise) and one on the PATH corral itself runs with.

The programs in such a directory load much more than themselves (review rounds 24 to 26), so
what is kept is the installation they belong to, whole, not a list of its parts:
- a Python prefix (`X/bin` where X has a pyvenv.cfg, a conda-meta, or a `lib*/p*` with a
  site-packages or an os.py: a venv, a conda or pixi environment, a standalone or PyPy
  build): all of X. Its Python reads its standard library, every `.pth` of its
  site-packages and what they import by any spelling, compiled or not, its pip.conf, and its
  tools their `etc/` and `share/` configs (IPython, Jupyter). Installing into it is yours to
  do.
- `X/vendor/bin` (Composer): all of vendor/, whose packages its proxy scripts include.
- `node_modules/.bin`: its node_modules, and every node_modules above it up to the root, where
  node also looks (dependencies hoisted to a workspace's root, pnpm's store).
- a `bin` a config names in a directory that does not exist yet (a venv to be made): that
  directory, watched whole (anything made there is held).
- every symlink in the directory: the link itself (so the check keeps each link of its chain,
  `bin/tool -> ../tools/current/tool` with `tools/current -> v1`) and, where its target does
  not exist yet, that target (watched: made later, it would run in the link's name).
Programs a project keeps for itself (`tools/bin/lint` reading `tools/lib`) load the project's
code, which you review as its code; see |corral-host-programs|.
"""

from __future__ import annotations

import os

MAX_LINKS = 4096  # links of one directory followed
PYTHON_MARKS = ("pyvenv.cfg", "conda-meta")


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


def brought(directory: str, root: str) -> list[str]:
    """The paths to keep (read-only where they exist, watched where not) that putting
    `directory` on PATH brings: those inside the writable root `root`."""
    keep: list[str] = []
    parent, name = os.path.split(directory)
    if (
        name in ("bin", "Scripts")
        and _inside(parent, root)
        and (
            not os.path.lexists(parent)  # a venv to be made: watched whole
            or _python_prefix(parent)
            or os.path.basename(parent) == "vendor"
        )
    ):
        keep.append(parent)
    if name == ".bin" and os.path.basename(parent) == "node_modules":
        keep.append(parent)
        above = os.path.dirname(parent)
        while _inside(above, root) or above == root:
            modules = os.path.join(above, "node_modules")
            if modules != parent and os.path.isdir(modules):
                keep.append(modules)
            if above == root:
                break
            above = os.path.dirname(above)
    try:
        with os.scandir(directory) as it:
            links = [e.path for e, _ in zip(it, range(MAX_LINKS), strict=False) if e.is_symlink()]
    except OSError:
        links = []
    for link in links:
        keep.append(link)
        target = os.path.realpath(link)
        if _inside(target, root) and not os.path.exists(target):
            keep.append(target)
    return keep
