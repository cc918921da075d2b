"""Applying a change set on its own: an upper directory built by hand, scanned, applied to a
host directory with a journal; what the host and the staging area hold afterwards.

The real-sandbox tests show the same end to end (tests/sandbox/test_review7.py); these pin
the all-or-nothing contract and the copy path quickly.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from corral.changes.apply import ApplyFailed, apply
from corral.changes.journal import Journal
from corral.changes.scan import scan

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    root, upper, journals = tmp_path / "ws", tmp_path / "upper", tmp_path / "journal"
    for d in (root, upper, journals):
        d.mkdir()
    return root, upper, journals


def test_a_failure_midway_reverses_every_step_and_loses_nothing(
    layout: tuple[Path, Path, Path],
) -> None:
    """Seventh review r7c F1, F2, F5: a step that failed after others (a full disk, a file
    the command made unreadable, a directory it made unwritable) left the workspace half
    applied, and an original moved into the journal with no record of it: `corral undo` then
    deleted the only copy."""
    root, upper, journals = layout
    (root / "a.txt").write_text("original\n")
    (root / "gone.txt").write_text("kept\n")
    (upper / "a.txt").write_text("new\n")
    (upper / "b").mkdir()
    (upper / "b" / "c.txt").write_text("new\n")
    (upper / "d").mkdir()
    (upper / "d" / "e.txt").write_text("new\n")
    os.mknod(upper / "gone.txt", 0o020600, os.makedev(0, 0))  # a whiteout: deleted
    (upper / "z.txt").write_text("new\n")
    entries, problems = scan(str(root), str(upper))
    assert problems == []
    os.unlink(upper / "z.txt")  # its step fails: the staged source is gone
    journal = Journal("cs1", base=str(journals))
    with pytest.raises(ApplyFailed, match=r"at .*z\.txt.*nothing was changed"):
        apply(entries, journal, whole=frozenset({str(root / "b")}))
    journal.close()
    assert (root / "a.txt").read_text() == "original\n"
    assert (root / "gone.txt").read_text() == "kept\n"
    assert sorted(os.listdir(root)) == ["a.txt", "gone.txt"]
    # the staging area holds all of it again, for the change set to be applied later
    assert (upper / "a.txt").read_text() == "new\n"
    assert (upper / "b" / "c.txt").read_text() == "new\n"
    assert (upper / "d" / "e.txt").read_text() == "new\n"
    assert os.listdir(journals) == []  # no journal entry: nothing to undo


def test_copies_keep_holes(layout: tuple[Path, Path, Path]) -> None:
    """Seventh review r7c F3: hard-linked files are applied as copies, and the copy wrote a
    sparse file out densely (64 MiB written in no space became 64 MiB on the host)."""
    root, upper, journals = layout
    with open(upper / "f", "wb") as f:
        f.truncate(64 << 20)
        f.seek(32 << 20)
        f.write(b"middle")
    os.link(upper / "f", upper / "g")
    entries, _ = scan(str(root), str(upper))
    journal = Journal("cs2", base=str(journals))
    apply(entries, journal)
    journal.close()
    for name in ("f", "g"):
        st = os.stat(root / name)
        assert st.st_size == 64 << 20 and st.st_blocks * 512 < 1 << 20, (name, st)
        with open(root / name, "rb") as f:
            f.seek(32 << 20)
            assert f.read(6) == b"middle"
    assert os.stat(root / "f").st_ino != os.stat(root / "g").st_ino
