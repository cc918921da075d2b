"""What a directory a host-run config puts first on PATH brings with it.

Keeping the directory itself is not enough (review round 24):
- a venv's `bin` (`export VIRTUAL_ENV=$PWD/.venv`, mise's `_.python.venv`): its Python runs
  every `.pth` of its site-packages at start, and the modules those import
  (`distutils-precedence.pth` imports `_distutils_hack`, an editable install's finder);
- `node_modules/.bin` (`layout node`): its programs are links to the packages' own files
  (`prettier -> ../prettier/bin/prettier.cjs`), which run when you type the name.
So a venv's site-packages becomes a directory where no new start-up module or `.pth` is
taken (changes.rules), the modules its `.pth` files import are kept, and the files the links
of such a directory lead to inside the writable root are kept.
"""

from __future__ import annotations

import os

MAX_LINKS = 4096  # links of one directory followed
MAX_PTH = 64  # .pth files of one site-packages read


def pth_imports(site: str) -> list[str]:
    """The modules the `.pth` files in `site` import at every start, as paths to keep."""
    try:
        with os.scandir(site) as it:
            pths = [e.path for e in it if e.name.endswith(".pth") and e.is_file()][:MAX_PTH]
    except OSError:
        return []
    found: list[str] = []
    for pth in pths:
        try:
            with open(pth, encoding="utf-8", errors="replace") as f:
                lines = f.read(64 * 1024).splitlines()
        except OSError:
            continue
        for line in lines:
            if not line.startswith(("import ", "import\t")):
                continue
            for statement in line.split(";"):
                words = statement.replace(",", " ").split()
                if words[:1] == ["import"]:
                    for name in words[1:]:
                        if name == "as":
                            break
                        top = name.split(".")[0]
                        found += [os.path.join(site, top + ".py"), os.path.join(site, top)]
    return found


def brought(directory: str, root: str) -> tuple[list[str], list[str]]:
    """(paths to keep, directories where Python takes no new start-up module) that putting
    `directory` first on PATH brings, inside the writable root `root`."""
    keep: list[str] = []
    module_dirs: list[str] = []
    venv = os.path.dirname(directory)
    if os.path.basename(directory) == "bin" and os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        import glob

        keep.append(os.path.join(venv, "pyvenv.cfg"))
        for site in glob.glob(os.path.join(glob.escape(venv), "lib*", "python*", "site-packages")):
            module_dirs.append(site)
            keep += pth_imports(site)
    try:
        with os.scandir(directory) as it:
            links = [e.path for e, _ in zip(it, range(MAX_LINKS), strict=False) if e.is_symlink()]
    except OSError:
        links = []
    for link in links:
        target = os.path.realpath(link)
        if target != root and target.startswith(root + os.sep) and os.path.isfile(target):
            keep.append(target)
    return keep, module_dirs
