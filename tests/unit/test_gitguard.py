"""gitguard: what is pinned, kept read-only, created, watched and swept around a run."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

from corral.sandbox.protect import gitguard, sweep

if TYPE_CHECKING:
    from pathlib import Path

NAMES = ("hooks", "config", "commondir", "config.worktree")


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_repository_at_the_root(tmp_path: Path) -> None:
    git("init", "-q", str(tmp_path / "r"), cwd=tmp_path)
    found = gitguard.protect(str(tmp_path / "r"), NAMES)
    dot = str(tmp_path / "r" / ".git")
    assert found.pinned == [dot]
    assert f"{dot}/hooks" in found.read_only and f"{dot}/config" in found.read_only
    inside = [w for w in found.watch if w.startswith(dot)]  # (git's global files: elsewhere)
    assert inside == [f"{dot}/commondir", f"{dot}/config.worktree"]


def test_missing_hooks_directory_is_to_be_created(tmp_path: Path) -> None:
    git("init", "-q", "--template=", str(tmp_path / "r"), cwd=tmp_path)
    found = gitguard.protect(str(tmp_path / "r"), NAMES)
    assert found.create_dirs == [str(tmp_path / "r" / ".git" / "hooks")]
    assert not (tmp_path / "r" / ".git" / "hooks").exists()  # resolving changes nothing


def test_folder_of_repositories_protects_each(tmp_path: Path) -> None:
    for name in ("a", "b", "group/c"):
        git("init", "-q", str(tmp_path / name), cwd=tmp_path)
    (tmp_path / "plain").mkdir()
    trees, complete = gitguard.repositories(str(tmp_path))
    assert complete
    assert sorted(trees) == sorted(str(tmp_path / n) for n in ("a", "b", "group/c"))
    found = gitguard.protect(str(tmp_path), NAMES)
    assert sorted(found.pinned) == sorted(str(tmp_path / n / ".git") for n in ("a", "b", "group/c"))


def test_the_scan_is_bounded(tmp_path: Path) -> None:
    for i in range(20):
        (tmp_path / f"d{i}").mkdir()
    git("init", "-q", str(tmp_path / "d19" / "deep" / "er" / "dir" / "repo"), cwd=tmp_path)
    assert gitguard.repositories(str(tmp_path)) == ([], True)  # deeper than four levels
    # (fifth review: clones at host/owner/repo, three levels down, were not found at two)
    git("init", "-q", str(tmp_path / "d18" / "github.com" / "owner" / "repo"), cwd=tmp_path)
    found = [str(tmp_path / "d18" / "github.com" / "owner" / "repo")]
    assert gitguard.repositories(str(tmp_path)) == (found, True)
    # Past the limit the answer says it is incomplete, never quietly cut (fourth review,
    # F12: 3000 directories made by one run pushed a repository out of the scan).
    assert gitguard.repositories(str(tmp_path), limit=5) == ([], False)
    assert gitguard.protect(str(tmp_path), NAMES).incomplete is False


def test_workspace_inside_a_work_tree_watches_for_a_new_git(tmp_path: Path) -> None:
    git("init", "-q", str(tmp_path / "mono"), cwd=tmp_path)
    pkg = tmp_path / "mono" / "pkg"
    pkg.mkdir()
    assert gitguard.enclosing_work_trees(str(pkg)) == [str(tmp_path / "mono")]
    assert str(pkg / ".git") in gitguard.protect(str(pkg), NAMES).watch
    assert gitguard.protect(str(tmp_path / "mono"), NAMES).watch != [str(pkg / ".git")]


def test_hooks_path_is_protected(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git("init", "-q", str(repo), cwd=tmp_path)
    git("config", "core.hooksPath", ".husky", cwd=repo)
    assert gitguard.hooks_path([str(repo / ".git" / "config")]) == ".husky"
    assert gitguard.protect(str(repo), NAMES).watch[-1] == str(repo / ".husky")
    (repo / ".husky").mkdir()
    assert str(repo / ".husky") in gitguard.protect(str(repo), NAMES).read_only


def test_hooks_path_last_setting_wins_and_other_sections_do_not_count(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.write_text('[core]\n\thooksPath = "a"\n[alias]\n\thookspath = nope\n')
    two.write_text("[Core]\n  HooksPath=b\n")
    assert gitguard.hooks_path([str(one), str(two), str(tmp_path / "missing")]) == "b"
    assert gitguard.hooks_path([str(tmp_path / "missing")]) is None


def test_symlinked_git_dir_is_protected_and_its_link_recorded(tmp_path: Path) -> None:
    git("init", "-q", "--bare", str(tmp_path / "r.git"), cwd=tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").symlink_to(tmp_path / "r.git")
    found = gitguard.protect(str(ws), NAMES)
    assert found.links == [(str(ws / ".git"), str(tmp_path / "r.git"))]
    assert found.pinned == [str(tmp_path / "r.git")]


def test_separate_git_dir_is_pinned(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    git("init", "-q", f"--separate-git-dir={ws / '.gitdata'}", str(ws), cwd=tmp_path)
    found = gitguard.protect(str(ws), NAMES)
    assert str(ws / ".gitdata") in found.pinned
    assert str(ws / ".git") in found.read_only  # the pointer file


def test_sweep_removes_what_appeared_and_restores_links(tmp_path: Path) -> None:
    absent = tmp_path / "commondir"
    tree = tmp_path / "hooks-created"
    link = tmp_path / "hooks"
    link.symlink_to("/shared/hooks")
    assert sweep.sweep([str(absent), str(tree)], [(str(link), "/shared/hooks")]) == []
    absent.write_text("../evil\n")
    (tree / "sub").mkdir(parents=True)
    link.unlink()
    link.mkdir()
    (link / "pre-commit").write_text("evil")
    repairs = sweep.sweep([str(absent), str(tree)], [(str(link), "/shared/hooks")])
    assert len(repairs) == 3
    assert not absent.exists() and not tree.exists()
    assert os.readlink(link) == "/shared/hooks"
