"""git config as git reads it: the syntax forms a planted file could use to hide an include or a
core.hooksPath from a small INI reader (issue 7, items 8 and 9)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from corral.sandbox.protect import gitconfig

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    "text",
    [
        "[core]\n\thooksPath = .x\n",
        "[core]hooksPath=.x\n",
        "[Core]\nHOOKSPATH = .x\n",
        '[core]\n\thooksPath = ".x"\n',
        '[core]\n\thooksPath = "."x # comment\n',
        "[core]\n\thooksPath = \\\n.x\n",
        "[core] hooksPath = .x ; trailing comment\n",
        "# comment\n[user]\nname = a\n[core]\n  bare = false\n  hooksPath=.x\n",
    ],
)
def test_hooks_path_in_every_spelling(text: str) -> None:
    entries = list(gitconfig.entries(text))
    assert ("core", "hookspath", ".x") in entries, entries


def test_values_keys_and_subsections() -> None:
    text = '[includeIf "gitdir:~/Work/"]\n\tpath = a\\"b\n[remote "Origin"]\nurl=x\nflag\n'
    assert list(gitconfig.entries(text)) == [
        ("includeif.gitdir:~/Work/", "path", 'a"b'),
        ("remote.Origin", "url", "x"),
        ("remote.Origin", "flag", "true"),
    ]


def test_includes_are_followed_whatever_their_condition(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    local = tmp_path / "repo" / ".git" / "config"
    local.write_text(
        '[include]\n\tpath = ../one.cfg\n[includeIf "onbranch:nope"]\n\tpath = ~/two.cfg\n'
    )
    (tmp_path / "repo" / "one.cfg").write_text("[include]\npath = sub/three.cfg\n")
    (tmp_path / "repo" / "sub").mkdir()
    (tmp_path / "repo" / "sub" / "three.cfg").write_text("[core]hooksPath = .h\n")
    reading = gitconfig.read([str(local)], str(tmp_path / "home"))
    assert reading.files == [
        str(local),
        str(tmp_path / "repo" / "one.cfg"),
        str(tmp_path / "repo" / "sub" / "three.cfg"),
        str(tmp_path / "home" / "two.cfg"),  # missing: named all the same
    ]
    assert reading.hooks_paths == [".h"]


def test_include_loops_and_depth_are_bounded(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"c{i}").write_text(f"[include]\npath = c{i + 1}\n[include]\npath = c0\n")
    reading = gitconfig.read([str(tmp_path / "c0")], str(tmp_path))
    assert len(reading.files) == gitconfig.MAX_INCLUDE_DEPTH + 1  # git stops there too


def test_an_optional_path_is_the_path(tmp_path: Path) -> None:
    """r86a OPTIONALPATH: git 2.52 reads `:(optional)` before a path setting as "only where
    it exists"; corral read it as part of the name."""
    config = tmp_path / "config"
    config.write_text(
        "[core]\n\thooksPath = :(optional)tools/hooks\n"
        "[init]\n\ttemplateDir = :(optional)~/tpl\n"
        "[include]\n\tpath = :(optional)more.cfg\n"
    )
    (tmp_path / "more.cfg").write_text("")
    reading = gitconfig.read([str(config)], str(tmp_path / "home"))
    assert reading.hooks_paths == ["tools/hooks"]
    assert reading.template_dirs == ["~/tpl"]
    assert reading.files == [str(config), str(tmp_path / "more.cfg")]
