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
    monkeypatch.setattr(system_private, "SYSTEM_TOPS", (str(top),))
    cache: dict = {}  # type: ignore[type-arg]
    first, _cut, changed = system_private.private_paths(cache, _of, [])
    assert changed and (str(top / "shadow-"), False) in first
    again, _cut, changed = system_private.private_paths(cache, _of, [])
    assert not changed and again == first
    (top / "ssl" / "new.key").write_text("n")
    (top / "ssl" / "new.key").chmod(0o600)
    after, _cut, changed = system_private.private_paths(cache, _of, [])
    assert changed and (str(top / "ssl" / "new.key"), False) in after
