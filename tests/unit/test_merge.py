"""The three-way merge a held file's apply uses when the host changed it since its command
ran (r68c HELDSTACK): changes that do not meet are both taken, changes that do are named."""

from __future__ import annotations

import pytest

from corral.changes.merge import merge3

BASE = b"a\nb\nc\nd\ne\nf\n"


@pytest.mark.parametrize(
    ("ours", "theirs", "merged"),
    [
        # apart: both taken
        (b"A\nb\nc\nd\ne\nf\n", b"a\nb\nc\nd\ne\nF\n", b"A\nb\nc\nd\ne\nF\n"),
        # one side only
        (BASE, b"a\nb\nX\nd\ne\nf\n", b"a\nb\nX\nd\ne\nf\n"),
        (b"a\nb\nX\nd\ne\nf\n", BASE, b"a\nb\nX\nd\ne\nf\n"),
        # the same change on both sides
        (b"a\nb\nX\nd\ne\nf\n", b"a\nb\nX\nd\ne\nf\n", b"a\nb\nX\nd\ne\nf\n"),
        # a deletion and an addition elsewhere
        (b"a\nc\nd\ne\nf\n", b"a\nb\nc\nd\ne\nf\ng\n", b"a\nc\nd\ne\nf\ng\n"),
        # additions at both ends
        (b"0\n" + BASE, BASE + b"g\n", b"0\n" + BASE + b"g\n"),
        # line ends kept as they are, a last line without one too
        (b"a\r\nb\nc\nd\ne\nf\n", b"a\nb\nc\nd\ne\nf", b"a\r\nb\nc\nd\ne\nf"),
    ],
)
def test_changes_that_do_not_meet_are_both_taken(ours: bytes, theirs: bytes, merged: bytes) -> None:
    assert merge3(BASE, ours, theirs) == (merged, [])


@pytest.mark.parametrize(
    ("ours", "theirs", "spans"),
    [
        # the same line, two ways
        (b"a\nb\nX\nd\ne\nf\n", b"a\nb\nY\nd\ne\nf\n", [(3, 3)]),
        # adjacent lines, as git merge-file counts them
        (b"a\nb\nX\nd\ne\nf\n", b"a\nb\nc\nY\ne\nf\n", [(3, 4)]),
        # two insertions at one place
        (b"a\nb\nc\n1\nd\ne\nf\n", b"a\nb\nc\n2\nd\ne\nf\n", [(4, 4)]),
        # one side deletes what the other changes
        (b"a\nb\nd\ne\nf\n", b"a\nb\nZ\nd\ne\nf\n", [(3, 3)]),
        # two places
        (b"X\nb\nc\nd\ne\nX\n", b"Y\nb\nc\nd\ne\nY\n", [(1, 1), (6, 6)]),
    ],
)
def test_changes_that_meet_are_named_by_the_hosts_lines(
    ours: bytes, theirs: bytes, spans: list[tuple[int, int]]
) -> None:
    assert merge3(BASE, ours, theirs)[1] == spans


def test_a_file_emptied_on_one_side_and_changed_on_the_other_conflicts() -> None:
    assert merge3(BASE, b"", b"a\nb\nX\nd\ne\nf\n")[1]
    assert merge3(b"", b"x\n", b"y\n")[1] == [(1, 1)]
    assert merge3(b"", b"", b"y\n") == (b"y\n", [])
