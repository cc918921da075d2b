"""Applying a change set on its own: an upper directory built by hand, scanned, applied to a
host directory with a journal; what the host and the staging area hold afterwards.

The real-sandbox tests show the same end to end (tests/sandbox/test_change_sets.py); these pin
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


def test_a_path_applied_alone_never_goes_through_a_host_link(
    layout: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Seventh review r7c F13: `corral apply ID d/x.txt` applies the path without its refused
    directory; the host had made `d` a link meanwhile, and the rename wrote through it."""
    root, upper, journals = layout
    outside = tmp_path / "outside"
    outside.mkdir()
    (upper / "d").mkdir()
    (upper / "d" / "x.txt").write_text("forced\n")
    os.symlink(outside, root / "d")
    entries, _ = scan(str(root), str(upper))
    forced = [e for e in entries if e.rel == "d/x.txt"]
    journal = Journal("cs3", base=str(journals))
    with pytest.raises(ApplyFailed, match="not a directory on the host"):
        apply(forced, journal)
    journal.close()
    assert os.listdir(outside) == []
    assert (upper / "d" / "x.txt").read_text() == "forced\n"


def test_the_journal_is_the_users_alone_and_keeps_the_newest_entry(
    layout: tuple[Path, Path, Path],
) -> None:
    """Seventh review r7c F14: journal entries (workspace paths, replaced files) were
    readable by every local user; F8: one sparse file counted at its length pushed the
    journal over its limit, and pruning dropped the entry just written with all older ones."""
    from corral.changes.journal import entries, prune

    root, upper, journals = layout
    with open(root / "big.bin", "wb") as f:
        f.truncate(64 << 20)  # a hole: nothing on disk
    (root / "precious.txt").write_text("mine\n")
    for name in ("big.bin", "precious.txt"):
        os.mknod(upper / name, 0o020600, os.makedev(0, 0))  # deleted by the command
    found, _ = scan(str(root), str(upper))
    journal = Journal("cs4", base=str(journals))
    apply(found, journal)
    journal.close()
    assert journal.saved_bytes < 1 << 20
    (entry,) = entries(str(journals))
    for path in (journals, journals / entry, journals / entry / "log.jsonl"):
        assert os.stat(path).st_mode & 0o077 == 0, path
    prune(1, base=str(journals))  # a limit the newest entry alone is over
    assert entries(str(journals)) == [entry]


def test_a_new_directory_lands_on_another_file_system_too(
    layout: tuple[Path, Path, Path],
) -> None:
    """Seventh review r7c F9: a new directory moved whole by one rename failed with EXDEV
    when the workspace is on another file system than corral's state (a data disk)."""
    import shutil
    import tempfile

    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm to stand for another file system")
    root, _, journals = layout
    upper = tempfile.mkdtemp(prefix="corral-upper-", dir="/dev/shm")
    try:
        if os.stat(upper).st_dev == os.stat(root).st_dev:
            pytest.skip("/dev/shm is on the workspace's file system here")
        os.makedirs(os.path.join(upper, "newdir", "sub"))
        with open(os.path.join(upper, "newdir", "sub", "x"), "w") as f:
            f.write("x\n")
        found, _ = scan(str(root), upper)
        journal = Journal("cs5", base=str(journals))
        apply(found, journal, whole=frozenset({str(root / "newdir")}))
        journal.close()
        assert (root / "newdir" / "sub" / "x").read_text() == "x\n"
    finally:
        shutil.rmtree(upper)


def test_an_owner_file_being_written_is_not_taken_for_a_dead_run(tmp_path: Path) -> None:
    """r48c U5: three first runs at once failed now and then with exit 125: one's clean-up
    read another's owner file just created and still empty, took that run for dead and
    removed its staging area under it. The owner is written whole (renamed into place), and
    an empty owner file in a young staging area counts as alive."""
    import os

    from corral.changes import stage as stages

    stage = tmp_path / "s"
    stage.mkdir()
    (stage / stages.OWNER).write_text("")
    assert stages.alive(str(stage))
    stages.mark_owner(str(stage))
    assert (stage / stages.OWNER).read_text().split()[0] == str(os.getpid())
    assert sorted(p.name for p in stage.iterdir()) == [stages.OWNER]
