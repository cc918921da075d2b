"""The change-set check on its own: a staging area's upper directory built by hand (what an
overlay would have recorded), scanned and judged against a plan, one rule at a time.

The real-sandbox tests (tests/sandbox/test_change_sets*.py) show the same rules end to end;
these pin each rule's edges quickly and without bwrap.
"""

from __future__ import annotations

import os
import stat
import time
from typing import TYPE_CHECKING

import pytest

from corral.changes.rules import Checker, verdicts
from corral.changes.scan import scan

if TYPE_CHECKING:
    from pathlib import Path


class Layout:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "ws"  # the host's workspace: the lower layer
        self.upper = tmp_path / "upper"  # what the command wrote
        self.hidden = tmp_path / "home"
        for d in (self.root, self.upper, self.hidden):
            d.mkdir()
        (self.root / ".git" / "hooks").mkdir(parents=True)
        for name in ("HEAD", "config"):
            (self.root / ".git" / name).write_text("x\n")
        for name in ("objects", "refs"):
            (self.root / ".git" / name).mkdir()
        self.plan = {
            "roots": [str(self.root)],
            "hidden": [str(self.hidden), "/tmp"],
            "visible": [],
            "protected": [str(self.root / ".git" / "hooks"), str(self.root / ".config" / "x.yml")],
            "protected_names": [".nvim.lua", ".git/hooks"],
            "chat_patterns": ["*.chat"],
            "max_file_bytes": 1000,
            "created_ns": time.time_ns(),
        }

    def write(self, rel: str, text: str = "x\n") -> None:
        path = self.upper / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def link(self, rel: str, target: str) -> None:
        path = self.upper / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)

    def verdicts(self) -> dict[str, str | None]:
        entries, problems = scan(str(self.root), str(self.upper))
        assert problems == []
        checker = Checker(self.plan, "corral apply ID")
        return {e.rel: (r.code if r is not None else None) for e, r in verdicts(checker, entries)}


@pytest.fixture
def lay(tmp_path: Path) -> Layout:
    return Layout(tmp_path)


def test_plain_files_pass(lay: Layout) -> None:
    lay.write("src/main.py")
    assert lay.verdicts() == {"src": None, "src/main.py": None}


@pytest.mark.parametrize(
    ("rel", "code"),
    [
        (".git/hooks/pre-commit", "protected"),  # a protected path
        ("sub/.nvim.lua", "protected"),  # a protected name at any depth
        ("vendor/.git/hooks/x", "new-repository"),  # below a new .git: all of it refused
        (".git/config", "protected"),  # a git control file
        ("talk.chat", "chat-file"),
    ],
)
def test_protected_paths_names_and_chat_files_are_refused(lay: Layout, rel: str, code: str) -> None:
    lay.write(rel)
    assert lay.verdicts()[rel] == code


def test_a_refused_directory_takes_what_is_below_it(lay: Layout) -> None:
    lay.write("nested/.git/HEAD")
    lay.write("nested/.git/config")
    found = lay.verdicts()
    assert found["nested/.git"] == "new-repository"
    assert found["nested/.git/config"] == "new-repository"


def test_a_directory_made_a_repository_by_links_is_refused(lay: Layout) -> None:
    lay.write("src/HEAD", "ref: refs/heads/main\n")
    lay.link("src/objects", "../.git/objects")
    lay.link("src/refs", "../.git/refs")
    lay.write("src/config")
    found = lay.verdicts()
    assert found["src"] == "new-repository"  # a new directory that is a repository


def test_a_repository_completed_in_an_existing_directory_is_refused(lay: Layout) -> None:
    (lay.root / "lib" / "refs").mkdir(parents=True)  # from an earlier run
    lay.write("lib/HEAD", "ref: refs/heads/main\n")
    lay.write("lib/objects/keep")
    found = lay.verdicts()
    assert found["lib/HEAD"] == "new-repository"
    assert found["lib/objects"] == "new-repository"


@pytest.mark.parametrize(
    "target",
    ["{hidden}/.ssh", "//{hidden}", "/proc/self/root{hidden}", "ua/..{hidden}/.ssh"],
    ids=["hidden", "double-slash", "proc", "through-a-link"],
)
def test_links_into_hidden_areas_are_refused_however_spelled(lay: Layout, target: str) -> None:
    lay.link("ua", "/usr")  # every sandbox sees /usr; root can write below it (r9c)
    lay.link("key", target.format(hidden=lay.hidden))
    found = lay.verdicts()
    assert found["ua"] == ("symlink-outside" if os.geteuid() == 0 else None)
    assert found["key"] in ("symlink-outside", "protected"), found


def test_a_link_where_a_protected_paths_directory_would_be_is_refused(lay: Layout) -> None:
    lay.write("cfg/x.yml")
    lay.link(".config", "cfg")
    found = lay.verdicts()
    assert found[".config"] == "protected"
    assert found["cfg/x.yml"] is None


def test_special_and_oversized_files_are_refused(lay: Layout) -> None:
    os.mkfifo(lay.upper / "pipe")
    lay.write("big.bin", "x" * 2000)
    found = lay.verdicts()
    assert found["pipe"] == "special-file"
    assert found["big.bin"] == "too-large"


def test_a_file_the_host_changed_meanwhile_is_a_conflict(lay: Layout) -> None:
    (lay.root / "notes.txt").write_text("host\n")
    lay.plan["created_ns"] = 0  # the command started before the host's edit
    lay.write("notes.txt", "sandbox\n")
    assert lay.verdicts()["notes.txt"] == "conflict"


def test_scan_reads_whiteouts_and_never_follows_links(lay: Layout) -> None:
    (lay.root / "gone.txt").write_text("x\n")
    os.mknod(lay.upper / "gone.txt", stat.S_IFCHR | 0o600, os.makedev(0, 0))
    lay.link("out", str(lay.hidden))
    (lay.hidden / "secret").write_text("s\n")
    entries, _ = scan(str(lay.root), str(lay.upper))
    kinds = {e.rel: e.kind for e in entries}
    assert kinds == {"gone.txt": "whiteout", "out": "link"}


def test_deleting_a_repositorys_head_is_refused(lay: Layout) -> None:
    (lay.upper / ".git").mkdir()
    os.mknod(lay.upper / ".git" / "HEAD", stat.S_IFCHR | 0o600, os.makedev(0, 0))
    assert lay.verdicts()[".git/HEAD"] == "protected"


def test_a_deleted_directory_with_a_host_edit_below_it_is_a_conflict(lay: Layout) -> None:
    """Seventh review r7c F6: only the deleted directory's own times were compared; an edit
    two levels down during the run was taken out of the workspace unasked."""
    (lay.root / "docs" / "sub").mkdir(parents=True)
    (lay.root / "docs" / "sub" / "notes.txt").write_text("mine\n")
    (lay.root / "old" / "deep").mkdir(parents=True)
    (lay.root / "old" / "deep" / "x.txt").write_text("x\n")
    lay.plan["created_ns"] = time.time_ns()
    time.sleep(0.01)
    with open(lay.root / "docs" / "sub" / "notes.txt", "a") as f:
        f.write("edited during the run\n")
    os.mknod(lay.upper / "docs", stat.S_IFCHR | 0o600, os.makedev(0, 0))
    os.mknod(lay.upper / "old", stat.S_IFCHR | 0o600, os.makedev(0, 0))
    found = lay.verdicts()
    assert found["docs"] == "conflict"
    assert found["old"] is None  # nothing below it changed


def test_copies_of_hard_linked_files_are_bounded(lay: Layout) -> None:
    """Seventh review r7c F3: each name of a hard-linked file is applied as a copy: many
    names of a large (sparse, so free) file filled the host's disk."""
    lay.plan["max_file_bytes"] = 0
    (lay.upper / "big").mkdir()
    for i in range(3):
        path = lay.upper / "big" / f"f{i}"
        with open(path, "wb") as f:
            f.truncate(600 << 20)  # sparse: no space taken
        os.link(path, lay.upper / "big" / f"g{i}")
    found = lay.verdicts()
    refused = [rel for rel, code in found.items() if code == "too-large"]
    assert found["big/f0"] is None
    assert sorted(refused) == ["big/f1", "big/f2", "big/g0", "big/g1", "big/g2"], found


def test_packages_of_any_suffix_shadow_as_their_source_would(lay: Layout) -> None:
    """Seventh review r7a A1: `argparse/__init__.pyc` (no source) or an extension module was
    a package Python imports first, and only `__init__.py` was judged."""
    lay.plan["module_dirs"] = [str(lay.root)]
    (lay.root / "mypkg").mkdir()
    (lay.root / "mypkg" / "core.py").write_text("x = 1\n")  # (the project's own package)
    lay.write("argparse/__init__.pyc")
    lay.write("_distutils_hack/__init__.cpython-311-x86_64-linux-gnu.so")
    lay.write("json.abi3.so")
    lay.write("mypkg/__init__.pyc")
    lay.write("newpkg/__init__.pyc")
    found = lay.verdicts()
    assert found["argparse/__init__.pyc"] == "protected"
    assert found["json.abi3.so"] == "protected"
    # (the project's own namespace package made a regular one: it runs at every import
    # below, r53b NSREG)
    assert found["mypkg/__init__.pyc"] == "protected"
    assert found["newpkg/__init__.pyc"] == "new-module"  # (a new name: r46a OPTIMPORT)


def test_a_relative_pythonpath_makes_every_directory_one_python_looks_in(lay: Layout) -> None:
    """Seventh review r7a A13: `PYTHONPATH=.` was read once against the workspace; a Python
    started in tests/ imported tests/sitecustomize.py."""
    (lay.root / "lib").mkdir()
    (lay.root / "lib" / "sitecustomize.py").write_text("# the project's\n")
    lay.plan["module_dirs"] = [str(lay.root) + "/**"]
    lay.write("tests/sitecustomize.py")
    lay.write("lib/sitecustomize.py", "changed\n")
    lay.write("tests/json.py")
    lay.write("tests/helpers.py")
    found = lay.verdicts()
    assert found["tests/sitecustomize.py"] == "protected"
    assert found["lib/sitecustomize.py"] == "protected"  # a start-up module, changed
    assert found["tests/json.py"] == "protected"
    assert found["tests/helpers.py"] is None


def test_start_up_files_of_a_venv_in_the_workspace_are_held(lay: Layout) -> None:
    """Seventh review r7a A5: an activated venv's bin/ was kept, but a `.pth` in its
    site-packages ran at every start of its Python. Installed packages are no shadowing: the
    venv's site-packages comes after the standard library."""
    site = ".venv/lib/python3.11/site-packages"
    lay.plan["module_dirs"] = [str(lay.root / site)]  # a venv on the host's PATH
    lay.write(f"{site}/zz.pth", "import os\n")
    lay.write(f"{site}/sitecustomize.py")
    lay.write(f"{site}/requests/__init__.py")
    lay.write(f"{site}/json.py")
    found = lay.verdicts()
    assert found[f"{site}/zz.pth"] == "protected"
    assert found[f"{site}/sitecustomize.py"] == "protected"
    assert found[f"{site}/requests/__init__.py"] is None
    assert found[f"{site}/json.py"] is None


def test_a_link_that_climbs_back_out_of_a_directory_is_refused(lay: Layout) -> None:
    """Ninth review r9c H1: `p/sub/../var/...` was judged through p/sub as it was (missing:
    inside the root); a later run made p/sub a link to /usr, and the link led out of the
    roots to a file the user's editor then saved."""
    lay.link("notes.txt", "p/sub/../var/tmp/x.txt")
    lay.write("real.dat")  # (not .so or .lua: new at the top, Lua would load those)
    lay.link("lib.dat", "../ws/real.dat")
    lay.link("abs", "/usr/lib/../bin/env")
    found = lay.verdicts()
    assert found["notes.txt"] == "symlink-outside"
    assert found["abs"] == "symlink-outside"
    assert found["lib.dat"] is None


def test_a_link_to_a_directory_above_a_protected_path_is_refused(lay: Layout) -> None:
    """Ninth review r9b F3: `memories -> .git` was applied; a host tool writing
    memories/config then wrote .git/config."""
    lay.link("memories", ".git")
    assert lay.verdicts()["memories"] == "protected"


def test_a_link_in_the_roots_must_lead_to_what_is_there_and_replace_no_directory(
    lay: Layout,
) -> None:
    """Twelfth review r12c F5: links are judged once, when made. `notes.txt -> q/python3`
    before q existed, then `q -> .venv/bin` (or q, a directory, replaced by that link): the
    file the editor held led to the venv's interpreter outside the roots."""
    (lay.root / "q").mkdir()
    (lay.root / "q" / "python3").write_text("x\n")
    lay.link("notes.txt", "later/python3")
    lay.link("q", ".venv/bin")  # q is a directory on the host
    lay.write("made/here.txt")
    lay.link("fine", "made/here.txt")  # made by the same command: there once applied
    found = lay.verdicts()
    assert found["notes.txt"] == "symlink-dangling"
    assert found["q"] == "symlink-replaces-directory"
    assert found["fine"] is None


def test_what_is_protected_now_joins_a_plan_keeping_each_kind() -> None:
    """A held change set applied later is checked against what is protected now too: its
    home_dot (a string) was joined as a set of its characters."""
    from corral.changes.finish import with_now

    plan = {"protected": ["/w/a"], "home_dot": "", "protected_why": {"/w/a": "x"}}
    now = {"protected": ["/w/b"], "home_dot": "/home/me", "protected_why": {"/w/b": "y"}}
    checked = with_now(plan, now)
    assert checked["protected"] == ["/w/a", "/w/b"]
    assert checked["home_dot"] == "/home/me"
    assert checked["protected_why"] == {"/w/a": "x", "/w/b": "y"}


def test_commands_named_to_the_user_keep_a_path_whole() -> None:
    """r20b F2: a held path with a space or a shell character, typed back as corral printed
    it, named another path (or ran a command)."""
    from corral.changes.words import command

    assert command("apply", "ID", "a b|c", frontend_name="nvim") == ":Sandbox apply ID a\\ b|c"
    assert command("apply", "ID", "a b;c", frontend_name="cli") == "corral apply ID 'a b;c'"
    assert command("apply", "ID", "[PATH...]", frontend_name="cli") == "corral apply ID [PATH...]"


def test_the_host_tools_settings_in_any_spelling() -> None:
    """tool_settings_rules.tool_settings reads the files as the tools do (r32a LINTSYNTAX: an
    inline table, a dotted key, a unicode escape in a quoted key and setup.cfg's `:` passed a
    line reader); every tool's table or section is a setting (r37b MYPYEXE: mypy's
    python_executable; r38b PYLSPMYPY: pylsp-mypy's overrides, RUFFCACHE: ruff's cache-dir),
    only the project's own are not."""
    from corral.changes.tool_settings_rules import tool_settings

    plain = tool_settings("pyproject.toml", '[tool.mypy]\nplugins = ["a"]\n')
    assert plain == [("tool.mypy", "{'plugins': ['a']}")]
    for spelling in (
        '[tool]\nmypy = {plugins = ["a"]}\n',
        'tool . mypy . plugins = ["a"]\n',
        '[tool.mypy]\n"plug\\u0069ns" = [\n  "a",\n]\n',
        '[project]\nname = "x"\n[tool.mypy]\nplugins = ["a"]\n[dependency-groups]\nt = []\n',
    ):
        assert tool_settings("pyproject.toml", spelling) == plain, spelling
    assert tool_settings("pyproject.toml", '[tool.pylsp-mypy]\noverrides = ["x"]\n') == [
        ("tool.pylsp-mypy", "{'overrides': ['x']}")
    ]
    assert tool_settings("pyproject.toml", '[tool.ruff]\ncache-dir = "/x"\n') == [
        ("tool.ruff", "{'cache-dir': '/x'}")
    ]
    assert tool_settings("pyproject.toml", "other = 1\n") == [("other", "1")]
    assert tool_settings("setup.cfg", "[mypy]\nplugins: a,\n  b\n") == [("mypy.plugins", "a,\nb")]
    cfg = "[pytest]\naddopts = -q\n[flake8]\nmax-line-length = 99\n[tox]\nrequires = x\n"
    assert tool_settings("tox.ini", cfg) == [  # r40b TOXREQUIRES: [tox] counts
        ("flake8.max-line-length", "99"), ("tox.requires", "x")
    ]  # fmt: skip
    # r41b TOXTESTENV, UVTREE, POETRYSOURCE: each counts
    assert tool_settings("tox.ini", "[testenv]\nbase_python = t/py\n") != []
    assert tool_settings("pyproject.toml", "[build-system]\nbackend-path = ['.']\n") != []
    plain = "[build-system]\nrequires = ['hatchling>=1.2']\nbuild-backend = 'hatchling.build'\n"
    assert tool_settings("pyproject.toml", plain) == []  # (r42c: a version bump passes)
    assert tool_settings("pyproject.toml", "[build-system]\nrequires = ['x @ file:///t']\n") != []
    assert tool_settings("pyproject.toml", "[project]\ndynamic = ['version']\n") != []
    assert tool_settings("pyproject.toml", "[[tool.poetry.source]]\nname = 'c'\n") != []
    # r44b PATHDEP: a requirement by path or URL is built by resolvers at `uv tree`
    by_path = "[project]\ndependencies = ['t @ file:///w/tools/t', 'requests>=2']\n"
    assert tool_settings("pyproject.toml", by_path) != []
    assert tool_settings("pyproject.toml", "[project]\ndependencies = ['requests>=2']\n") == []
    poetry = "[tool.poetry.dependencies]\nt = {path = 'tools/t'}\nrequests = '^2'\n"
    assert tool_settings("pyproject.toml", poetry) != []
    for table in ("pdm.scripts", "tox", "hatch.version"):  # r40b PDMINVOKE: each counts
        assert tool_settings("pyproject.toml", f"[tool.{table}]\nx = 1\n") != [], table
    own = "[metadata]\nname = x\n[options.extras_require]\nt = y\n[isort]\nprofile = black\n"
    assert tool_settings("setup.cfg", own) == [("isort.profile", "black")]
    assert tool_settings("pyproject.toml", '[project]\nname = "x"\n') == []
    assert tool_settings("pyproject.toml", "[project\n") is None
    # r39c: tools that read their table only to build, install or test pass, but for the
    # keys that have them load plugins whenever they run
    build = (
        '[tool.poetry.dependencies]\npython = "^3.11"\n[tool.pytest.ini_options]\n'
        'addopts = "-q"\n[tool.setuptools]\npy-modules = ["a"]\n[tool.flit.module]\nx = 1\n'
    )
    assert tool_settings("pyproject.toml", build) == []
    assert tool_settings("pyproject.toml", '[tool.poetry]\nrequires-plugins = {a = "1"}\n') == [
        ("tool.poetry.requires-plugins", "{'a': '1'}")
    ]
    assert tool_settings("pyproject.toml", "[tool.uv.pip]\npython = 't/py'\n") == [
        ("tool.uv", "{'pip': {'python': 't/py'}}")
    ]
    assert tool_settings("setup.cfg", "[bdist_wheel]\nuniversal = 1\n[egg_info]\ntag = x\n") == []
    # r40b PRETTIERPKG: package.json's keys but the package's own
    package = '{"name": "x", "dependencies": {"a": "1"}, "prettier": {"plugins": ["./p.cjs"]}}'
    assert tool_settings("package.json", package) == [("prettier", "{'plugins': ['./p.cjs']}")]
    assert tool_settings("package.json", '{"name": "x", "scripts": {"t": "x"}}') == []
    assert tool_settings("package.json", "[1]") is None
    # r40a CRCFG: a lone CR ends a line for the tools (universal newlines)
    assert tool_settings("setup.cfg", "[metadata]\rname = x\r[mypy]\rplugins = p\r") == [
        ("mypy.plugins", "p")
    ]


@pytest.mark.parametrize(
    "rel",
    [".git/rebase-merge/git-rebase-todo", ".git/rebase-apply/patch", ".git/sequencer/todo"],
)
def test_a_stopped_rebases_todo_is_a_git_control_file(lay: Layout, rel: str) -> None:
    """r31b REBASETODO: .git/rebase-merge/ with an `exec` line was applied; `git status`
    told the user to `git rebase --continue`, which ran it on the host."""
    lay.write(rel, "exec touch /tmp/x\n")
    assert lay.verdicts()[rel] == "protected"


def test_the_host_tree_below_a_top_directory_is_looked_through_once_per_check(
    lay: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """r31b LUAWALK: each new Lua file below node_modules/ walked its 40,000 directories
    again (0.18 s a file, the user's lock held for hours with many files)."""
    for i in range(40):
        for j in range(40):
            (lay.root / "node_modules" / f"p{i}" / f"d{j}").mkdir(parents=True)
    for k in range(30):
        lay.write(f"node_modules/p{k}/new{k}.lua")
    real = os.scandir
    looked: list[str] = []

    def counted(path: str) -> object:
        looked.append(str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counted)
    found = lay.verdicts()
    assert all(found[f"node_modules/p{k}/new{k}.lua"] == "protected" for k in range(30))
    below = [p for p in looked if "/ws/node_modules/" in p]
    assert len(below) == len(set(below)) and len(below) <= 2_000, len(below)


def test_a_file_the_host_made_where_the_command_made_a_directory_is_a_conflict(
    lay: Layout,
) -> None:
    """r31b DIRCONFLICT: the user's file, made while the command ran at the path where the
    command made a directory, was replaced by it, counted nowhere."""
    lay.write("notes/todo.txt")
    (lay.root / "notes").write_text("my notes\n")  # after the plan's created_ns
    found = lay.verdicts()
    assert found["notes"] == "conflict"
    assert found["notes/todo.txt"] == "conflict"


def test_a_held_protected_name_says_what_runs_it() -> None:
    """r46c: `.envrc` and `.nvim.lua` were held as "the host runs or obeys it by itself, or it
    is hidden or corral's own", naming no reason."""
    from corral.changes import rules

    assert "direnv" in (rules._why_kept("/w/.envrc") or "")
    assert "Neovim" in (rules._why_kept("/w/sub/.nvim.lua") or "")
    assert "git" in (rules._why_kept("/w/.git/hooks/pre-commit") or "")
    assert rules._why_kept("/w/notes.txt") is None


def test_a_standard_librarys_directory_counts_as_a_module_only_as_a_package(
    tmp_path: Path,
) -> None:
    """r48c U4: Python 2.7's build directory `config` in its standard library made a new
    `config.py` "a module in place of the real one"; a package there is one."""
    from corral.changes import module_rules

    (tmp_path / "config").mkdir()
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "__init__.py").write_text("")
    assert not module_rules._a_package(str(tmp_path / "config"))
    assert module_rules._a_package(str(tmp_path / "json"))
