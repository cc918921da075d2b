"""corral.changes.tree: what corral does to its own staging trees, whatever a command left."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from corral.changes import tree

if TYPE_CHECKING:
    from pathlib import Path


def test_a_tree_deeper_than_path_max_is_removed(tmp_path: Path) -> None:
    """Sixth review, R10: a command nested directories past PATH_MAX; `corral discard` died
    with "File name too long" and left the staging tree on disk for good."""
    top = tmp_path / "stage"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(24):  # 24 x 201 bytes: past PATH_MAX (4096)
            os.mkdir("d" * 200, dir_fd=fd)
            below = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = below
        os.close(os.open("f", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))
        os.mkdir("locked", 0o000, dir_fd=fd)  # an overlay work directory's mode
    finally:
        os.close(fd)
    tree.remove(str(top))
    assert not top.exists()
    assert list(tmp_path.iterdir()) == []
