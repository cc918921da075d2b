"""The walk for system files only the user may read (r77c SHADOWBACKUP), on a real tree:
what it hides, what it looks through, and that it never cuts quietly."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from corral.sandbox import system_private
from corral.sandbox.resolution import _of

if TYPE_CHECKING:
    from pathlib import Path


def _tree(tmp_path: Path) -> Path:
    top = tmp_path / "etc"
    (top / "ssl" / "private").mkdir(parents=True)
    (top / "ssl" / "private" / "key.pem").write_text("k")
    (top / "ssl" / "private").chmod(0o700)
    (top / "ssl" / "certs.pem").write_text("c")
    (top / "shadow-").write_text("h")
    (top / "shadow-").chmod(0o600)
    (top / "group-only").write_text("g")
    (top / "group-only").chmod(0o640)
    (top / "hostname").write_text("h")
    (top / "hostname").chmod(0o644)
    os.symlink("/etc/shadow", top / "link")
    return top


def test_what_only_the_user_may_read_is_found_by_mode_not_by_name(tmp_path: Path) -> None:
    top = _tree(tmp_path)
    seen, found, whole = system_private.walk(str(top), system_private.Who(), _of)
    assert whole
    assert sorted(found) == sorted([
        (str(top / "ssl" / "private"), True),  # (hidden whole, not looked in)
        (str(top / "shadow-"), False),
        (str(top / "group-only"), False),
    ]), found  # fmt: skip
    assert str(top / "ssl" / "private") not in [p for p, _ in seen]
    assert {str(top), str(top / "ssl")} <= {p for p, _ in seen}


def test_a_writable_root_is_not_looked_in_and_a_private_directory_above_it_is_looked_through(
    tmp_path: Path,
) -> None:
    top = _tree(tmp_path)
    work = top / "ssl" / "private" / "work"
    work.mkdir()
    (work / "own-secret").write_text("mine")
    (work / "own-secret").chmod(0o600)
    _seen, found, _whole = system_private.walk(str(top), system_private.Who(), _of, (str(work),))
    paths = [p for p, _ in found]
    # (key.pem is readable by everyone: only its directory kept it private)
    assert str(top / "ssl" / "private" / "key.pem") in paths, found
    assert str(top / "ssl" / "private") not in paths, found
    assert not any(p.startswith(str(work)) for p in paths), found


def test_past_the_budget_what_was_not_looked_at_is_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = tmp_path / "var"
    for i in range(300):
        (top / f"d{i:03}" / "sub").mkdir(parents=True)
    monkeypatch.setattr(system_private, "MAX_ENTRIES", 350)
    monkeypatch.setattr(system_private, "MAX_HIDDEN", 10)
    _seen, found, whole = system_private.walk(str(top), system_private.Who(), _of)
    assert not whole
    hidden = [p for p, d in found if d]
    assert 0 < len(hidden) <= 10, hidden
    # every directory is looked at or below a hidden one
    for i in range(300):
        sub = str(top / f"d{i:03}" / "sub")
        assert any(sub == h or sub.startswith(h + "/") for h in hidden) or len(hidden) == 1, sub


def test_the_cache_is_trusted_only_while_its_directories_are_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = _tree(tmp_path)
    monkeypatch.setattr(system_private, "system_tops", lambda: [str(top)])
    monkeypatch.setitem(system_private.TOP_DEPTHS, str(top), 8)
    monkeypatch.setattr(system_private, "_top_files", lambda who, state: ([], [], True))
    cache: dict = {}  # type: ignore[type-arg]
    first, _cut, changed = system_private.private_paths(cache, _of, [])
    assert changed and (str(top / "shadow-"), False) in first
    again, _cut, changed = system_private.private_paths(cache, _of, [])
    assert not changed and again == first
    (top / "ssl" / "new.key").write_text("n")
    (top / "ssl" / "new.key").chmod(0o600)
    after, _cut, changed = system_private.private_paths(cache, _of, [])
    assert changed and (str(top / "ssl" / "new.key"), False) in after


def test_a_directory_the_user_may_enter_but_not_list_is_hidden_whole(tmp_path: Path) -> None:
    """r78c SYSPRIVXDIR: /etc/ssl/private, 0710 in the user's group (or 0711): its files
    opened by name were neither looked at nor hidden."""
    top = tmp_path / "etc"
    (top / "private").mkdir(parents=True)
    (top / "private" / "key.pem").write_text("k")
    who = system_private.Who()
    info = os.lstat(top / "private")
    # (as the user's group: x only, as others: nothing; and the same with others' x)
    who.uid, who.gids = info.st_uid + 1, frozenset({info.st_gid})
    (top / "private").chmod(0o710)
    assert system_private.walk(str(top), who, _of)[1] == [(str(top / "private"), True)]
    (top / "private").chmod(0o711)
    who.gids = frozenset()
    assert system_private.walk(str(top), who, _of)[1] == [(str(top / "private"), True)]


def test_a_file_an_acl_may_open_to_someone_is_hidden(tmp_path: Path) -> None:
    """r78c SYSPRIVACL: mode bits keeping a file to its owner, and an ACL naming a user
    who read it."""
    import struct

    top = tmp_path / "etc"
    top.mkdir()
    (top / "token").write_text("t")
    (top / "token").chmod(0o600)
    # (what `setfacl -m u:65534:r` writes: the owner rw, user 65534 r, the mask r, no one
    # else; the kernel's xattr form, version 2, entries of tag, permissions and id)
    everyone = 0xFFFFFFFF
    acl = struct.pack("<I", 2) + b"".join(
        struct.pack("<HHI", tag, perm, uid)
        for tag, perm, uid in ((1, 6, everyone), (2, 4, 65534), (4, 0, everyone),
                               (0x10, 4, everyone), (0x20, 0, everyone))
    )  # fmt: skip
    try:
        os.setxattr(top / "token", "system.posix_acl_access", acl)
    except OSError:
        pytest.skip("no ACLs on this file system")
    who = system_private.Who()
    # (someone neither the owner nor in its group: the bits say "no", the ACL "may")
    who.uid, who.gids = os.lstat(top / "token").st_uid + 1, frozenset({12345})
    assert (str(top / "token"), False) in system_private.walk(str(top), who, _of)[1]


def test_a_directory_crowded_with_private_files_is_hidden_whole() -> None:
    """r78c SYSPRIVARGS: each private file was a bwrap argument; 15,000 of them were more
    than a command line takes, and every run was refused."""
    many = [(f"/var/lib/app/keys/k{i}", False) for i in range(system_private.MAX_BESIDE + 1)]
    few = [("/etc/shadow-", False), ("/etc/gshadow-", False)]
    kept = system_private._fewer([*few, *many])
    assert kept == [*few, ("/var/lib/app/keys", True)], kept
    # (never a top: /etc itself stays, its files one by one)
    crowded_top = [(f"/etc/k{i}", False) for i in range(system_private.MAX_BESIDE + 1)]
    assert system_private._fewer(crowded_top) == crowded_top


def test_a_directory_holding_the_workspace_is_never_hidden_whole() -> None:
    """r79c CROWDWS: a workspace in a directory crowded with private files, or one cut off
    by the walk's budget, was hidden with it, and every run failed."""
    many = [(f"/srv/team/k{i}", False) for i in range(system_private.MAX_BESIDE + 1)]
    kept = system_private._fewer(many, ("/srv/team/app",))
    assert ("/srv/team", True) not in kept and len(kept) == len(many), kept


def test_a_directory_not_looked_in_is_remembered_and_one_past_the_budget_is_an_area(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """r80c STALEDIRENTER: a directory the user could not enter was not remembered, so a
    chmod opening it left its private file shown from the cache; COLLAPSEWS: past the
    walk's budget, the directories holding the workspace were dropped, not hidden."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give a directory to another user")
    top = tmp_path / "srv"
    (top / "d").mkdir(parents=True)
    (top / "d" / "key").write_text("k")
    (top / "d" / "key").chmod(0o600)
    os.chown(top / "d", 4242, 4242)
    (top / "d").chmod(0o700)
    monkeypatch.setattr(system_private, "system_tops", lambda: [str(top)])
    monkeypatch.setitem(system_private.TOP_DEPTHS, str(top), 8)
    monkeypatch.setattr(system_private, "_top_files", lambda who, state: ([], [], True))
    cache: dict = {}  # type: ignore[type-arg]
    first, _cut, _changed = system_private.private_paths(cache, _of, [])
    assert (str(top / "d" / "key"), False) not in first  # (not to be entered: not looked at)
    (top / "d").chmod(0o755)
    after, _cut, changed = system_private.private_paths(cache, _of, [])
    assert changed and (str(top / "d" / "key"), False) in after, after
    # past the budget, a directory holding the workspace is an area to hide around it
    for i in range(30):
        (top / f"e{i:02}" / "ws").mkdir(parents=True)
    monkeypatch.setattr(system_private, "MAX_ENTRIES", 10)
    workspace = str(top / "e29" / "ws")
    _seen, found, whole = system_private.walk(str(top), system_private.Who(), _of, (workspace,))
    assert not whole
    masks, areas = system_private.around(found, [workspace])
    assert any(workspace.startswith(a + "/") for a in areas), (found, areas)
    assert not any(workspace.startswith(m + "/") or m == workspace for m in masks), masks


def test_a_read_only_workspace_in_a_system_directory_is_looked_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Session 29 review: the workspace was skipped like a writable root, so a read-only
    workspace at /etc left /etc/shadow- shown; and hides() named your home's deny entries
    "system files only you may read"."""
    top = _tree(tmp_path)
    monkeypatch.setattr(system_private, "system_tops", lambda: [str(top)])
    monkeypatch.setitem(system_private.TOP_DEPTHS, str(top), 8)
    monkeypatch.setattr(system_private, "_top_files", lambda who, state: ([], [], True))
    found, _cut, _changed = system_private.private_paths({}, _of, [], [str(top)])
    assert (str(top / "shadow-"), False) in found, found
    assert system_private.around(found, [str(top)])[1] == []  # (no area: the top is shown)
    # (a deny entry below your home or a writable root is the deny list's, not the walk's)
    assert not system_private.hides("/root/.ssh/id_rsa", ("/root",))


def test_a_read_only_workspace_is_looked_in_only_in_the_systems_own_directories() -> None:
    """r82c ROPRIVMODE: a project under /srv or /opt made with umask 077 had every file
    hidden in read-only mode; /etc/ssh as a workspace still hides the host keys."""
    for path in ("/", "/etc", "/etc/ssh", "/var/lib/x", "/run/x", "/boot", "/root/x"):
        assert system_private.system_state(path), path
    for path in ("/srv/app", "/opt/x", "/home/u/p", "/var/tmp/x", "/etcetera", "/mnt/w"):
        assert not system_private.system_state(path), path
