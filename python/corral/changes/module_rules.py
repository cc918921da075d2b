"""Change-set rules for Python start-up: a new module where a Python looks first (PYTHONPATH,
the workspace's top, where git hooks start Python) would be imported in place of the real one;
a `.pth` or sitecustomize in an activated venv's site-packages runs at every start.
"""

from __future__ import annotations

import os
import stat

from corral.changes.ruleset import RuleSet
from corral.changes.scan import same_bytes, will_be_file
from corral.imports import STARTUP_MODULES
from corral.paths import is_within, read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry


_SHADOWABLE: list[frozenset[str]] = []


def _python_dirs() -> list[str]:
    """The standard-library and site directories of the Pythons a user runs, found on disk
    (none is started): corral's own, the system's, the user site, pyenv's, conda's, uv's and
    mise's, and those beside each PATH directory (a venv's or an installation's `bin`). A
    module named like one of their modules or packages is imported from the workspace's top
    in its place by `python -m`, a script there or the REPL (review r37b SHADOWUSER:
    pytest_benchmark, only in the user's pyenv Python; r38b SHADOW313: `_pyrepl`, which
    only Python 3.13's REPL imports)."""
    import glob
    import sys

    home = os.path.expanduser("~")
    pyenv = os.environ.get("PYENV_ROOT") or os.path.join(home, ".pyenv")
    prefixes = [
        sys.base_prefix, sys.prefix, "/usr", "/usr/local", "/opt/conda",
        os.path.join(home, ".local"),
        *glob.glob(os.path.join(pyenv, "versions", "*")),
        *glob.glob(os.path.join(home, "*conda*")), *glob.glob(os.path.join(home, "miniforge*")),
        *glob.glob(os.path.join(home, ".local", "share", "uv", "python", "*")),
        *glob.glob(os.path.join(home, ".local", "share", "mise", "installs", "python", "*")),
        *glob.glob(os.path.join(home, ".asdf", "installs", "python", "*")),
        # any installation one level down in the home or /opt, and its environments
        # (micromamba, mambaforge, miniconda, pixi's, rye's, hatch's, pdm's: r40b PYFIND)
        *glob.glob(os.path.join(home, "*")), *glob.glob(os.path.join(home, ".*")),
        *glob.glob(os.path.join(home, "*", "envs", "*")),
        *glob.glob(os.path.join(home, ".*", "envs", "*")),
        *glob.glob(os.path.join(home, ".local", "share", "*", "envs", "*")),
        *glob.glob(os.path.join(home, ".local", "share", "*", "python", "*")),
        *glob.glob(os.path.join(home, ".local", "share", "*", "env", "*", "*")),
        *glob.glob(os.path.join(home, ".rye", "py", "*")),
        *glob.glob("/opt/*"), *glob.glob("/opt/*/envs/*"),
        *(os.path.dirname(d) for d in os.environ.get("PATH", "").split(os.pathsep)
          if os.path.isabs(d)),
    ]  # fmt: skip
    found = [d for d in sys.path if os.path.isabs(d)]
    for prefix in dict.fromkeys(prefixes):
        escaped = glob.escape(prefix)
        libs = [
            *glob.glob(os.path.join(escaped, "lib", "python*")),  # (2.7 and 3.x)
            *glob.glob(os.path.join(escaped, "lib", "pypy*")),
            *glob.glob(os.path.join(escaped, "lib_pypy")),
        ]
        for lib in libs:
            found += [lib, os.path.join(lib, "lib-dynload")]
            found += [os.path.join(lib, kind) for kind in ("site-packages", "dist-packages")]
    return list(dict.fromkeys(found))


MAX_PTH = 200  # .pth files read per site directory
# the standard library's names of Pythons newer than corral's own, which may be installed
# where none of the places above finds them (r39b SHADOWASDF); and every private name
# (`_pyrepl`, `_colorize`): see _shadowing_module
LATER_STDLIB = frozenset({"annotationlib", "compression", "_pyrepl", "_colorize"})


def _editable_names(site: str, listed: list[str]) -> set[str]:
    """The names an editable install brings into a site directory: what is in each
    directory a `.pth` file names, and the packages a setuptools editable finder maps
    (`__editable___x_finder.py`'s MAPPING) (r38b SHADOWEDIT)."""
    import ast

    names: set[str] = set()
    for entry in [n for n in listed if n.endswith(".pth")][:MAX_PTH]:
        try:
            raw = read_regular(os.path.join(site, entry), 65536)
            lines = raw.decode("utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.strip()
            if line and not line.startswith(("#", "import ", "import\t")):
                try:
                    names.update(os.listdir(os.path.join(site, line)))
                except OSError:
                    pass
    for entry in [n for n in listed if n.startswith("__editable__") and n.endswith(".py")]:
        try:
            raw = read_regular(os.path.join(site, entry), 1 << 20)
            tree = ast.parse(raw.decode("utf-8", errors="replace"))
        except (OSError, SyntaxError, ValueError, RecursionError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                names.update(k.value for k in node.keys if isinstance(k, ast.Constant)
                             and isinstance(k.value, str))  # fmt: skip
    return names


def _a_package(path: str) -> bool:
    """Whether a name without a dot in a standard library's directory is a module there: a
    package, not `config` (Python 2.7's build files: `config.py` was held as "in place of
    the real one", r48c U4), `lib-dynload` or `__pycache__`. In a site directory every name
    counts: a namespace package merges with one in the workspace."""
    return any(os.path.exists(os.path.join(path, f"__init__.{s}")) for s in ("py", "pyc"))


def _shadowable() -> frozenset[str]:
    """The standard library's module names and those installed in the Pythons a user runs
    (_python_dirs, editable installs too; once)."""
    import sys

    if _SHADOWABLE:
        return _SHADOWABLE[0]
    names = set(sys.stdlib_module_names) | LATER_STDLIB
    for directory in _python_dirs():
        try:
            listed = os.listdir(directory)
        except OSError:
            continue
        site = directory.endswith(("site-packages", "dist-packages"))
        names.update(
            n.partition(".")[0] for n in listed
            if "-" not in n and (site or "." in n or _a_package(os.path.join(directory, n)))
        )  # fmt: skip
        if site:
            names.update(n.partition(".")[0] for n in _editable_names(directory, listed))
    names.discard("")
    _SHADOWABLE.append(frozenset(names))
    return _SHADOWABLE[0]


# what Python imports from a path entry (importlib.machinery.all_suffixes(), ABI tags aside)


MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")
# what makes a directory a regular package where corral runs: not `.pyd` off Windows (r54b
# NSPYD: an `__init__.pyd` made a namespace package look regular)
INIT_SUFFIXES = (".py", ".pyc", ".so") if os.name != "nt" else MODULE_SUFFIXES


# usual directories of a project that Python could import as namespace packages, and usual
# top-level scripts: names no library imports (held where a real module has the name)
LAYOUT_DIRS = frozenset({
    "tests", "scripts", "docs", "doc", "examples", "benchmarks", "bench", "tools",
    "notebooks", "src", "bin", "data", "assets", "demo", "demos", "node_modules", "target",
    "build", "dist", "vendor", "third_party", "lib",
})  # fmt: skip
SCRIPT_NAMES = frozenset({"setup", "conftest", "manage", "main", "wsgi", "asgi", "tests"})
# (not noxfile, tasks, fabfile, dodo: `nox --list`, `invoke --list` import them, r47b)


VENV_DIRS = frozenset({"bin", "lib", "lib64", "include", "share", "Scripts", "Lib"})


def _module(entry: os.DirEntry[str]) -> bool:
    """What Python imports: a regular file named `identifier.suffix` (r48b NONIDENT: a
    `x-notes.py` or a directory `brotlicffi.py/` claimed the name)."""
    stem, dot, _ = entry.name.partition(".")
    return (
        bool(dot)
        and stem.isidentifier()
        and entry.name.endswith(MODULE_SUFFIXES)
        and entry.is_file(follow_symlinks=False)
    )


LISTED = 100_000  # entries of a directory looked through for a module (see _holds_modules)


def _holds_modules(path: str, depth: int, past: bool = False) -> bool:
    """Whether a directory holds a module, or a directory named as one does, within `depth`
    levels below it; `past`, when it has more than LISTED entries to look through (r56b
    CAP1000: 4,000 data files put the modules past the first 1,000 looked at): True where
    that holds a change, False where it would claim a name."""
    try:
        with os.scandir(path) as listing:
            for n, e in enumerate(listing):
                if n >= LISTED:
                    return past
                if _module(e) or (
                    depth
                    and e.name.isidentifier()
                    and e.is_dir(follow_symlinks=False)
                    and _holds_modules(e.path, depth - 1, past)
                ):
                    return True
    except OSError:
        return False
    return False


def _has_init(directory: str) -> bool:
    """Whether Python imports `directory` as a regular package: an `__init__` FILE of a
    suffix it imports here (not an `__init__.txt`, r53b NSINITTXT; not a directory named
    `__init__.py`, r55b INITDIR)."""
    return any(
        os.path.isfile(os.path.join(directory, f"__init__{suffix}"))
        for suffix in (*INIT_SUFFIXES, *_extension_suffixes())
    )  # (looked up by name: not the first 1,000 entries of a listing, r56b CAP1000)


def _extension_suffixes() -> list[str]:
    """`.cpython-311-x86_64-linux-gnu.so` and the like: what Python imports here."""
    from importlib.machinery import EXTENSION_SUFFIXES

    return [s for s in EXTENSION_SUFFIXES if s != ".so"]


def _names_at(directory: str) -> frozenset[str]:
    """The modules the host has at the top of a directory: module files (up to the first
    dot) and directories holding one within three levels (a package, a namespace package),
    but a venv.
    Not any name (r47b TWOSTEP: `re2.txt` applied in one run made `re2.py` the project's in
    the next; so did a pyproject.toml's project name, which a run may change)."""
    module, holds_modules = _module, _holds_modules
    names = set()
    try:
        with os.scandir(directory) as listing:
            for entry in listing:
                if module(entry):
                    names.add(entry.name.partition(".")[0])
                elif (
                    entry.name.isidentifier()
                    and entry.is_dir(follow_symlinks=False)
                    # (a venv's modules are its own, not a package of that name: a new
                    # `psutil/` venv claimed `psutil` for a `psutil/__init__.py` in the next
                    # run, r51b VENVCLAIM)
                    and not os.path.lexists(os.path.join(entry.path, "pyvenv.cfg"))
                    and holds_modules(entry.path, 2)
                ):
                    names.add(entry.name)
    except OSError:
        pass
    return frozenset(names)


# where an installation keeps what is installed (the threat model: a project venv's packages)
SITE_DIRS = frozenset({"site-packages", "dist-packages", "lib-dynload"})
METADATA_SUFFIXES = (".egg-info", ".dist-info")


def _compiled_beside(directory: str, stem: str) -> str | None:
    """The host's compiled module `stem.<tag>.so` (`.pyd`, `.pyc`) in `directory`, if any."""
    try:
        with os.scandir(directory) as listing:
            for n, e in enumerate(listing):
                if n >= LISTED:
                    return os.path.join(directory, stem)  # (past what is looked at: held)
                if (
                    e.name.partition(".")[0] == stem
                    and e.name.endswith(MODULE_SUFFIXES[1:])
                    and e.is_file(follow_symlinks=False)
                ):
                    return e.path
    except OSError:
        return None
    return None


def _shared_library(name: str) -> bool:
    """`libx.so`, `libx.so.1.2`, `x.so.3`, `x.dylib`: a library a program or an extension
    module loads."""
    import re

    return bool(re.fullmatch(r"lib[^/]*\.so(\.\d+)*|[^/]+\.so\.\d+(\.\d+)*|[^/]+\.dylib", name))


def _is_site_dir(directory: str) -> bool:
    return os.path.basename(directory) in ("site-packages", "dist-packages")


def _regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


class ModuleRules(RuleSet):
    if TYPE_CHECKING:

        def _resolved(self, entry: Entry) -> str | None: ...  # (LinkRules')

    def _in_module_dir(self, directory: str) -> bool:
        return directory in self.module_dirs or any(
            is_within(directory, t) for t in self.module_trees
        )

    def _shadowing_module(self, entry: Entry) -> tuple[str, bool] | None:
        """(the module name, whether it is named like a real one) of a new entry put
        directly in a directory Python searches before the standard library: `json.py` or
        `json/`. Existing module files are the project's own and are not judged; a new one
        named like a standard or an installed module is held, also one put where something
        else was (a directory `json.py` made by an earlier run, a link); a start-up module
        (sitecustomize) new or changed. A package is its `__init__` with any suffix Python
        loads (`__init__.pyc` with no source, an extension module). Where Python looks
        first (not a relative PYTHONPATH's every directory), any other new name is held too
        (_claimed), and a new directory Python would import as a namespace package: a
        library's optional import (`try: import re2`, the standard library's own `from
        org.python.core import ...` in copy.py) finds what is installed nowhere, so no list
        of names can say which is safe (review r46a OPTIMPORT)."""
        if not (self.module_dirs or self.module_trees) or entry.kind not in ("file", "link"):
            return None
        directory, name = os.path.split(entry.path)
        if os.path.basename(directory) == "__pycache__" and name.endswith(".pyc"):
            # the bytecode Python runs in place of a source it matches (timestamp and size
            # are in its header): a start-up module's, new or changed, is held
            name = name.partition(".")[0]
            if self._in_module_dir(os.path.dirname(directory)) and name in STARTUP_MODULES:
                return name, True
            return None
        if entry.kind == "link" and "." not in name:
            pass  # `json -> elsewhere`: a directory link imports as the package it leads to
        elif not name.endswith(MODULE_SUFFIXES):
            return None
        name = name.partition(".")[0]
        if name == "__init__":  # a regular package (a bare directory never shadows one)
            directory, name = os.path.split(directory)
        if not self._in_module_dir(directory) or _is_site_dir(directory):
            if self.new_modules != "hold":
                return None
            return self._namespace_package(entry)  # (a site-packages comes after the stdlib)
        if name in STARTUP_MODULES:
            return name, True
        if _regular_file(entry.path):
            return None  # the project's own module, changed
        if (
            name in _shadowable()
            or (name.startswith("_") and name != "__main__")  # (a standard library's own)
            or directory in self.strict_module_dirs
        ):
            return name, True
        if (
            self.new_modules == "hold"
            and directory in self.module_dirs
            and not self._claimed(directory, name)
            # (a link wherever it leads now: a file it leads to may become a directory with
            # an `__init__.py` in a later run, r49b LINKFILE)
        ):
            return name, False
        return None

    def _over_a_module(self, entry: Entry) -> str | None:
        """The module file (`app.py`) a new or changed entry would be loaded in place of, in
        any directory: an extension module or a sourceless `.pyc` beside it (Python loads
        an extension before a source: r49b SOBESIDE, a binary ran instead of the unchanged,
        reviewed app.py, `git status` clean), or a package of its name (r49b PKGOVER)."""
        if entry.kind not in ("file", "link"):
            return None
        directory, name = os.path.split(entry.path)
        if name.startswith("__init__.") and name.endswith(MODULE_SUFFIXES[1:]):
            # (a package's own `__init__` extension beside its `__init__.py`: Python loads
            # it first, r52b INITSO)
            own = os.path.join(directory, "__init__.py")
            if any(_regular_file(t) for t in (own, entry.staged(own))):
                return own
        if name.startswith("__init__.") and name.endswith(MODULE_SUFFIXES):
            directory, stem = os.path.split(directory)  # (a package over a module)
        elif name.endswith(MODULE_SUFFIXES[1:]) and os.path.basename(directory) != "__pycache__":
            stem = name.partition(".")[0]
        elif entry.kind == "link" and "." not in name:
            stem = name  # (`app -> docs/impl`, a package by a link, r50a LINKOVER)
        else:
            return None
        source = os.path.join(directory, stem + ".py")
        # (the host's source, or one this change set adds with it: r50a NEWSO, a new
        # util.py and its util.cpython-311-x86_64-linux-gnu.so in one run)
        staged = entry.staged(source)
        for there in (source, staged):
            if os.path.isfile(there) and not os.path.islink(there):
                return source
        if entry.kind == "link" and "." not in name:
            # a package by a link over the host's compiled module of its name (r73b
            # PKGLINK: `pkg/_fast -> ../pkg.egg-info/impl` over the built `_fast.*.so`, the
            # package's files judged where no import reaches)
            return _compiled_beside(directory, stem)
        return None

    def _unreadable_code(self, entry: Entry) -> str | None:
        """What a new or changed file is when Python or its tools load it from the
        workspace and nothing of it can be read in review, wherever it is (but in an
        installation's site directory, see the threat model): an extension module or a
        sourceless `.pyc` (r72b EXTSTANDIN: a rebuilt `_fast.*.so` of an unchanged `_fast.c`
        ran at Jedi's completion, which imports compiled modules; EGGINFOEP: `pkg/_zz.pyc`),
        or a distribution's entry points, which pytest, flake8 and pylsp load plugins from
        in every directory on Python's path (EGGINFOEP: `src/x.egg-info/entry_points.txt`
        with an editable install; DISTINFOTOP: `x.dist-info` at the top for `python -m`).
        A rewrite with the same bytes (a `pip install -e .` in the sandbox) is none."""
        if entry.kind not in ("file", "link"):
            return None
        parts = entry.rel.split("/")
        if any(p in SITE_DIRS for p in parts[:-1]):
            return None
        name, directory = parts[-1], parts[-2] if len(parts) > 1 else ""
        # (importlib.metadata matches a metadata directory's name in lower case: r73b
        # EGGCASE, `Zzz.EGG-INFO` was one)
        if name == "entry_points.txt" and (
            directory.lower().endswith(METADATA_SUFFIXES) or directory.lower() == "egg-info"
        ):
            what = "a distribution's entry points"
        elif entry.kind == "link" and name.lower().endswith(METADATA_SUFFIXES):
            # (r73b LINKMETA: `x.egg-info -> ../build/zzmeta`, whose entry_points.txt was
            # judged at a path of no metadata)
            what = "a link named as a distribution's metadata"
        elif _shared_library(name):
            # (r73b EXTDEPLIB: the project's `libfastcore.so.1`, which its unchanged
            # extension loads by RPATH from wherever it is: not only where imports reach)
            what = "a shared library"
        elif (
            not name.partition(".")[0].isidentifier()
            or directory == "__pycache__"
            or not self._importable_below(entry, parts)
        ):
            return None
        elif name.endswith(".pyc"):
            what = "bytecode with no source"
        elif name.endswith((".so", ".pyd")):
            what = "an extension module"
        else:
            return None
        return None if same_bytes(entry.source, entry.path) else what

    def _importable_below(self, entry: Entry, parts: list[str]) -> bool:
        """Whether an import names the entry's directory from the top of its root or of a
        directory where Python looks first: each directory between is an identifier (not
        `build/lib.linux-x86_64-3.11/`, `out-cache/`, `.venv/`: r42c, a build's or a
        cache's compiled files no import reaches)."""
        if all(p.isidentifier() for p in parts[:-1]):
            return True
        return any(
            entry.path.startswith(d + "/")
            and all(p.isidentifier() for p in entry.path[len(d) + 1 :].split("/")[:-1])
            for d in self.module_dirs
        )

    def _namespace_made_regular(self, entry: Entry) -> str | None:
        """The namespace package at the top of a directory where Python looks first (a
        directory of packages without an `__init__`, the host's) that a new `__init__` makes
        a regular package: it runs at every import of what is below, which ran nothing
        before (r53b NSREG: `acme/__init__.py` ran at `python -m acme.billing`)."""
        directory, name = os.path.split(entry.path)
        if (
            entry.kind not in ("file", "link")
            or not name.startswith("__init__.")
            or not name.endswith(INIT_SUFFIXES)
        ):
            return None
        # (at any depth below where Python looks first, along names Python imports: a
        # nested namespace `acme/plugins/` too, r54b NSNESTREG)
        top = next((d for d in self.module_dirs if directory.startswith(d + "/")), None)
        if top is None or not all(
            p.isidentifier() for p in directory[len(top) + 1 :].split("/")
        ):  # fmt: skip
            return None
        if not os.path.isdir(directory):
            return None  # (new here: the new-name rules judge it)
        if _has_init(directory):
            return None
        return directory if _holds_modules(directory, 2, past=True) else None

    def _venv_unmarked(self, entry: Entry) -> str | None:
        """The venv at the top of a directory where Python looks first whose `pyvenv.cfg`
        this entry deletes or replaces: its modules were applied as a venv's, which claims
        no name (r51b VENVCLAIM); unmarked, the directory would claim its own name for a
        later `NAME/__init__.py` (r52b VENVCLAIM3: three runs)."""
        directory, name = os.path.split(entry.path)
        if name != "pyvenv.cfg" or entry.kind == "file":
            return None
        top = os.path.dirname(directory)
        if top not in self.module_dirs or not os.path.basename(directory).isidentifier():
            return None
        return directory if _holds_modules(directory, 3, past=True) else None

    def _over_a_namespace(self, entry: Entry) -> str | None:
        """The directory of modules without an `__init__` (a namespace package, the host's
        or this change set's) a new module file beside it would be imported in place of:
        Python takes a module before a namespace portion (r51b NSOVER: a new helpers.py
        beside helpers/ ran where a hook imported helpers, `git diff` empty)."""
        directory, name = os.path.split(entry.path)
        stem = name.partition(".")[0]
        if (
            entry.kind not in ("file", "link")
            or not name.endswith(MODULE_SUFFIXES)
            or not stem.isidentifier()
            or os.path.basename(directory) == "__pycache__"
        ):
            return None
        package = os.path.join(directory, stem)
        staged = entry.staged(package)
        layers = [t for t in (package, staged) if os.path.isdir(t) and not os.path.islink(t)]
        if package in layers and _has_init(package):
            return None  # (a regular package comes before a module; an `__init__.txt` makes
            # none, r53b NSINITTXT; nor one this change set adds, which may be held itself,
            # r54b NSHELD: only the host's counts)
        # (modules at any of three levels: `acme/billing/__init__.py` with nothing in acme/
        # is the usual namespace layout, r52b NSNEST)
        return package if any(_holds_modules(t, 2, past=True) for t in layers) else None

    def _namespace_package(self, entry: Entry) -> tuple[str, bool] | None:
        """`org/python/core.py` below a directory where Python looks first: with no `org`
        there on the host, Python imports the directory as the namespace package `org`
        (r46a OPTIMPORT). Not the usual project directories (`tests/`, `src/`, `docs/`)."""
        for top in self.module_dirs:
            if not entry.path.startswith(top + "/") or _is_site_dir(top):
                continue
            parts = entry.path[len(top) + 1 :].split("/")
            names = [*parts[:-1], parts[-1].partition(".")[0]]
            if len(parts) < 2 or not all(n.isidentifier() for n in names):
                continue
            if parts[1] in VENV_DIRS and will_be_file(
                entry, os.path.join(top, parts[0], "pyvenv.cfg")
            ):
                continue  # (a venv's `bin/activate_this.py`, `lib64 -> lib`: only what a venv
                # holds, not `zz/python/core.py` beside a pyvenv.cfg of the same run, r47b)
            module = parts[-1].endswith(MODULE_SUFFIXES)
            link = entry.kind == "link" and "." not in parts[-1]
            if not (module or link):
                continue  # (`org/python -> ../x` is one too, wherever it leads, r47b, r49b)
            if not self._claimed(top, parts[0]):
                return parts[0], False
        return None

    def _claimed(self, directory: str, name: str) -> bool:
        """Whether a name at the top of a directory is the project's own, or no name a library
        would import: the host has a module or package of that name there (_names_at), it is
        a test's, a usual script's or a usual project directory's, or Python could not import
        it at all."""
        import keyword

        if not name.isidentifier() or keyword.iskeyword(name):
            return True
        if name in SCRIPT_NAMES or name in LAYOUT_DIRS:
            return True
        if name.startswith("test_") or name.endswith(("_test", "_tests")):
            return True
        if directory not in self._top_names:
            self._top_names[directory] = _names_at(directory)
        return name in self._top_names[directory]

    def _stand_in(self, entry: Entry) -> str | None:
        """The protected Python source a new or changed file would be loaded in place of
        (review r31a: a git hook's `python3 -m tools.check` kept tools/check.py, and a forged
        tools/__pycache__/check.cpython-311.pyc ran instead): its bytecode in __pycache__,
        which Python runs without reading the source when the header's time and size match
        (an unchecked-hash one always), a sourceless `x.pyc` or an extension module beside
        it."""
        if entry.kind not in ("file", "link"):
            return None
        directory, name = os.path.split(entry.path)
        if os.path.basename(directory) == "__pycache__" and name.endswith(".pyc"):
            directory = os.path.dirname(directory)
        elif not name.endswith(MODULE_SUFFIXES[1:]):
            return None
        source = os.path.join(directory, name.partition(".")[0] + ".py")
        return source if source in self.protected_set else None

    def _venv_python(self, entry: Entry) -> bool:
        """A venv's interpreter (`bin/python*` beside a `pyvenv.cfg`) that is no program: a
        script, or a link into the writable roots. uv, Poetry and PDM find a project's
        `.venv` by themselves and run its python at `uv pip list`, `poetry show` (r40b
        VENVPY); `python -m venv` makes links out of the roots or copies of the binary."""
        if entry.kind not in ("file", "link"):
            return False
        directory, name = os.path.split(entry.path)
        if os.path.basename(directory) != "bin" or not name.startswith(("python", "pypy")):
            return False
        venv = os.path.dirname(directory)
        upper_root = entry.upper_root()
        staged_venv = os.path.join(upper_root, os.path.relpath(venv, entry.root))
        if not any(os.path.lexists(os.path.join(d, "pyvenv.cfg")) for d in (venv, staged_venv)):
            return False
        if entry.kind == "link":
            resolved = self._resolved(entry)
            return resolved is None or any(is_within(resolved, r) for r in self.roots)
        try:
            return read_regular(entry.source, 4, follow=False) != b"\x7fELF"
        except OSError:
            return True

    def _site_start_up(self, entry: Entry) -> bool:
        """A `.pth` file or sitecustomize in the site-packages of a venv on the host's PATH
        (see resolution._on_path): its Python runs them at every start, new or changed."""
        if entry.kind not in ("file", "link"):
            return False
        directory, name = os.path.split(entry.path)
        if directory not in self.module_dirs or not _is_site_dir(directory):
            return False
        return name.endswith(".pth") or name.partition(".")[0] in STARTUP_MODULES


LUA_SUFFIXES = (".lua", ".so")


class LuaRules(RuleSet):
    if TYPE_CHECKING:

        def _resolved(self, entry: Entry) -> str | None: ...  # (LinkRules')

    def _lua_at_top(self, entry: Entry) -> str | None:
        # (the module name; ending in "/" for a Lua file below a top-level directory)
        """A new Lua module at the top of a writable root: Lua 5.1, LuaJIT and Neovim look in
        the current directory first (`./?.lua`, `./?/init.lua`, `./?.so`), before what is
        installed, so a program or an init.lua's `pcall(require, "x")` run there would load
        it (review r29a). Held: a new `x.lua` or `x.so` there; a new link there named like a
        module leading to a directory of Lua inside the roots (`x -> lua/y`, spelled
        relative or absolute, r31a); and a Lua file
        below a top-level directory, or below where a top-level link leads, that holds no
        Lua file on the host yet (the project's own Lua trees take new files; a directory a
        held file left empty does not, r30a). Only the top: a tool run in a subdirectory
        looks there instead (documented)."""
        if entry.kind not in ("file", "link"):
            return None
        for root in self.roots:
            if not entry.path.startswith(root + "/"):
                continue
            parts = entry.path[len(root) + 1 :].split("/")
            if len(parts) == 1:
                if entry.kind == "link" and "." not in parts[0]:
                    # require("x.main") follows it; one leading out is the link rules'
                    resolved = self._resolved(entry)
                    inside = resolved is not None and any(
                        is_within(resolved, r) for r in self.roots
                    )
                    staged = (
                        os.path.join(entry.upper_root(), resolved[len(root) + 1 :])
                        if resolved is not None and resolved.startswith(root + "/")
                        else ""
                    )
                    # (Lua there, on the host or in this change set; Lua put there later is
                    # judged by that directory: see _top_links)
                    if inside and (self._holds_lua(resolved or "") or _holds_lua(staged)):
                        return parts[0]
                    return None
                if not entry.path.endswith(LUA_SUFFIXES) or _regular_file(entry.path):
                    return None
                if parts[0].endswith(".so") and "." in parts[0][:-3]:
                    return None  # (`x.cpython-312-x86_64-linux-gnu.so`: no Lua module name)
                return parts[0]
            if not entry.path.endswith(LUA_SUFFIXES):
                return None
            if entry.path.endswith(".so") and (
                any("." in p for p in parts[:-1])
                or "." in parts[-1][:-3]
                or any(
                    os.path.lexists(os.path.join(top, parts[0], "CACHEDIR.TAG"))
                    for top in ((root, entry.upper_root()) if parts[0] == "target" else (root,))
                )
            ):
                # (`require("a.b.c")` reaches a/b/c.so at any depth, r45a LUASO3; but no
                # module name has a dot in a directory or a stem, a venv's, and a tree that
                # says it is a cache (cargo's target/) is its tool's: r42c, 244 of a pip
                # install held. A marker the command wrote counts only in cargo's own
                # `target/`: any other name it would free for `require`, r51b LUACACHE)
                return None
            if not self._holds_lua(os.path.join(root, parts[0])):
                return parts[0] + "/"
            for name, real in self._top_links(root):
                if is_within(entry.path, real) and not self._holds_lua(real):
                    return name + "/"  # (`luacheck -> lua/.x` on the host, lua/.x/main.lua new)
        return None

    def _holds_lua(self, directory: str) -> bool:
        """_holds_lua, once per check (review r31b: a tree of 40,000 empty directories was
        walked again for each new Lua file below it, the user's lock held for hours)."""
        found = self._lua_dirs.get(directory)
        if found is None:
            found = self._lua_dirs[directory] = _holds_lua(directory)
        return found

    def _top_links(self, root: str) -> list[tuple[str, str]]:
        """The links at the top of a root on the host named like a Lua module, and the
        directory inside the roots each leads to (looked up once per check)."""
        cache = self._lua_links
        if root not in cache:
            found = []
            try:
                with os.scandir(root) as it:
                    links = [e for e in it if "." not in e.name and e.is_symlink()]
            except OSError:
                links = []
            for link in links:
                real = os.path.realpath(link.path)
                if any(is_within(real, r) for r in self.roots) and os.path.isdir(real):
                    found.append((link.name, real))
            cache[root] = found
        return cache[root]


LUA_LOOK = 2_000  # directories looked through for a Lua file, below one top-level directory


def _holds_lua(directory: str) -> bool:
    """Whether `directory` holds a Lua file on the host, three levels down at most, looking
    through LUA_LOOK directories at most: past that, no (a new Lua file there is held)."""
    level, looked = [directory], 0
    for _ in range(3):
        below = []
        for current in level:
            looked += 1
            if looked > LUA_LOOK:
                return False
            try:
                with os.scandir(current) as it:
                    entries = list(it)
            except OSError:
                continue
            for entry in entries:
                if entry.name.endswith(".lua") and entry.is_file(follow_symlinks=False):
                    return True
                if entry.is_dir(follow_symlinks=False):
                    below.append(entry.path)
        level = below
    return False
