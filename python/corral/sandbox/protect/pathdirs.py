"""What a directory a host-run config puts first on PATH brings with it.

Keeping the directory itself is not enough (review rounds 24, 25):
- a venv's `bin` (`export VIRTUAL_ENV=$PWD/.venv`, mise's `_.python.venv`; a conda env's):
  its Python runs every `.pth` of its site-packages at start, and what those import, by any
  spelling (`__import__('_distutils_hack')`), compiled (`__pycache__`, an extension module
  beside the source): its whole site-packages is kept, as for a venv corral itself runs in
  (installing into it is yours to do);
- `node_modules/.bin` (`layout node`): its programs are links (npm) or scripts (pnpm) leading
  into packages whose code they load, through more links (a workspace package): the whole
  `node_modules` is kept (installing is yours to do), and the files the links of any other
  such directory lead to.
"""

from __future__ import annotations

import os

MAX_LINKS = 4096  # links of one directory followed


def brought(directory: str, root: str) -> list[str]:
    """The paths to keep that putting `directory` first on PATH brings: those inside the
    writable root `root` (the links' targets are looked for there)."""
    keep: list[str] = []
    parent = os.path.dirname(directory)
    name = os.path.basename(directory)
    if name == "bin" and (
        os.path.isfile(os.path.join(parent, "pyvenv.cfg"))
        or os.path.isdir(os.path.join(parent, "conda-meta"))
    ):
        import glob

        keep.append(os.path.join(parent, "pyvenv.cfg"))
        keep += glob.glob(os.path.join(glob.escape(parent), "lib*", "python*", "site-packages"))
    if name == ".bin" and os.path.basename(parent) == "node_modules":
        keep.append(parent)
    try:
        with os.scandir(directory) as it:
            links = [e.path for e, _ in zip(it, range(MAX_LINKS), strict=False) if e.is_symlink()]
    except OSError:
        links = []
    for link in links:
        target = os.path.realpath(link)
        if target != root and target.startswith(root + os.sep) and os.path.isfile(target):
            keep.append(target)
    return keep
