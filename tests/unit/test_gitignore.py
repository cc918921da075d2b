"""corral's reading of ignore files (changes/gitignore.py) against git's own answer
(`git check-ignore --no-index`), pattern by pattern."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from corral.changes.gitignore import Ignores, parse, read_ignore_file

TOP = (
    "node_modules/\n*.log\n!keep.log\n/build\ndocs/**/gen\n**/tmp/\na/**\n!a/b\n"
    "foo[0-9].txt\nbar[!a-c].txt\n\\#hash\nspace\\ \ntrailing   \n\\!bang\n"
    "x/*/y\n*.[oa]\nbaz?\n[[:digit:]]*.n\n# a comment\n\nq[\nbs\\\\  \nesc\\ \\ \n"
    "\ufeffnot-first\ncut\0off\ncr\r\n"
    "gs1**/x\n**\\/gy\ngab**cd\ngq/**z\ngm/**\\/n\ngc**\\/d\n"
    "u??\nv[!x][!x]\nw\u00e9[a-z]\n"
)
SUB = "*.o\n!x.o\n/local\ndeep/\n"
CASES = [
    ("node_modules", True), ("node_modules/x/y.js", False), ("x/node_modules/a", False),
    ("node_modules", False), ("a.log", False), ("keep.log", False), ("d/keep.log", False),
    ("build", True), ("build", False), ("sub/build", True), ("docs/gen", True),
    ("docs/x/y/gen", False), ("tmp/z", False), ("q/tmp/z", False), ("q/tmp", False),
    ("a/b", False), ("a/c", False), ("a/b/c", False), ("foo1.txt", False),
    ("fooa.txt", False), ("bard.txt", False), ("bara.txt", False), ("#hash", False),
    ("space ", False), ("space", False), ("trailing", False), ("!bang", False),
    ("x/m/y", False), ("x/m/n/y", False), ("lib.o", False), ("lib.a", False),
    ("lib.c", False), ("baz1", False), ("baz12", False), ("7.n", False), ("a7.n", False),
    ("q[", False), ("sub/y.o", False), ("sub/x.o", False), ("sub/local", False),
    ("sub/q/local", False), ("sub/d/z.o", False), ("sub/deep", True), ("sub/deep", False),
    ("sub/e/deep/f", False), ("plain.txt", False), ("bs\\", False), ("bs", False),
    ("esc  ", False), ("esc", False), ("\ufeffnot-first", False), ("cut", False),
    ("cutoff", False), ("cr", False), ("gs1/x", False), ("gs1A/b/x", False), ("gs1x", False),
    ("gy", False), ("k/gy", False), ("k/l/gy", False), ("gab/cd", False), ("gabcd", False),
    ("gq/a/z", False), ("gq/z", False), ("gm/n", False), ("gm/a/n", False), ("gc/d", False),
    ("gcc/e/d", False), ("gcd", False), ("u\u00e9", False), ("u\u00e9\u00e9", False),
    ("v\u00e9", False), ("w\u00e9b", False), ("w\u00c9b", False),
]  # fmt: skip


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("ignores")
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    (top / ".gitignore").write_text(TOP)
    (top / "sub").mkdir()
    (top / "sub" / ".gitignore").write_text(SUB)
    return top


@pytest.mark.parametrize(("rel", "is_dir"), CASES)
def test_corral_ignores_what_git_ignores(repository: Path, rel: str, is_dir: bool) -> None:
    ignores = Ignores(str(repository), [], read_ignore_file)
    asked = subprocess.run(
        ["git", "-C", str(repository), "check-ignore", "-q", "--no-index",
         rel + ("/" if is_dir else "")],
        check=False,
    )  # fmt: skip
    assert asked.returncode in (0, 1)
    assert ignores.ignored(rel, is_dir) == (asked.returncode == 0)


def test_nothing_below_an_ignored_directory_is_taken_back(repository: Path) -> None:
    ignores = Ignores(
        str(repository),
        [],
        lambda p: (
            "out/\n!out/keep\n"
            if p.endswith("/.gitignore") and p == str(repository / ".gitignore")
            else None
        ),
    )
    assert ignores.ignored("out/keep", False)
    assert ignores.ignored("out/a/b", False)
    assert not ignores.ignored("outside", False)


def test_a_symlinked_gitignore_is_not_read_and_an_oversized_one_ignores_all(
    tmp_path: Path,
) -> None:
    (tmp_path / "real").write_text("*.x\n")
    (tmp_path / ".gitignore").symlink_to(tmp_path / "real")
    assert read_ignore_file(str(tmp_path / ".gitignore")) is None
    (tmp_path / "big").write_text("a\n" * (1 << 20))
    assert parse(read_ignore_file(str(tmp_path / "big")) or "", "")[0][1].fullmatch("any")
