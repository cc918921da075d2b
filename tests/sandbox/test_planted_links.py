"""A link a sandboxed command made must never decide what a later run mounts or what the host
deletes (second outside review, C5 and H2).

C5: a writable path that did not exist yet (named by an untrusted chat's frontmatter, which
counts as narrowing, or by --allow-write) was made a link to a host directory by one command;
the next command got the link's target as a writable root.
H2: a protected path under a missing directory: the command made the directory a link to a
host directory holding a file of that name, and the post-run sweep deleted the host's file.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest

from corral.paths import planted_link

from .sandbox_support import q

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Host

pytestmark = pytest.mark.sandbox


@pytest.mark.parametrize("writes", ["apply", "direct"])
def test_a_writable_path_made_a_link_is_refused_not_followed(host: Host, writes: str) -> None:
    later = host.ws / "later"
    target = host.outside
    # The first command makes the missing writable path a link to a host directory (direct
    # writes, so the link is there whatever the change-set check thinks of it).
    first = host.corral(
        "run", "--writes", "direct", "--allow-write", str(later), "--",
        "ln", "-s", str(target), str(later),
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert later.is_symlink()
    second = host.corral(
        "run", "--writes", writes, "--allow-write", str(later), "--",
        "sh", "-c", f"echo planted > {q(later / 'canary.txt')}",
    )  # fmt: skip
    assert not (target / "canary.txt").exists(), "the link's target was writable"
    assert second.returncode != 0
    assert f"is the symlink {later}" in second.stderr, second.stderr


def test_the_sweep_deletes_nothing_through_a_link_made_inside(host: Host) -> None:
    # $HOME as the workspace, no ~/.m2 yet: ~/.m2/settings.xml (a credential file) is watched
    # and removed if a command creates it. The command makes ~/.m2 a link to a host directory
    # that holds a settings.xml of its own.
    home = host.home
    shutil.rmtree(home / ".m2", ignore_errors=True)
    victim = host.outside / "m2"
    victim.mkdir()
    (victim / "settings.xml").write_text("the host's own\n")
    done = host.corral(
        "run", "--writes", "direct", "--cwd", str(home), "--",
        "ln", "-s", str(victim), str(home / ".m2"),
        cwd=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (victim / "settings.xml").read_text() == "the host's own\n"
    assert "nothing removed" in done.stderr, done.stderr


def test_planted_link_finds_only_links_inside_the_areas(tmp_path: Path) -> None:
    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    (elsewhere / "real").mkdir(parents=True)
    ws.mkdir()
    (ws / "link").symlink_to(elsewhere)
    (tmp_path / "users-link").symlink_to(ws)
    assert planted_link(str(ws / "link" / "real"), [str(ws)]) == str(ws / "link")
    assert planted_link(str(ws / "link"), [str(ws)]) == str(ws / "link")
    assert planted_link(str(ws / "missing" / "x"), [str(ws)]) is None
    # a link of the user's own, outside the areas, is followed and the rest checked there
    assert planted_link(str(tmp_path / "users-link" / "link"), [str(ws)]) == str(ws / "link")
    assert planted_link(str(elsewhere / "real"), [str(ws)]) is None
