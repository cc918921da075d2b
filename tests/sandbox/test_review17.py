"""Review round 17 (r17b): the change-set writer as a user who is not root. Run as root and,
in scripts/test's second pass, as nobody (CORRAL_TEST_USER), where these failed before."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from .conftest import give_to_test_user, user_prefix
from .test_change_sets import held_ids, stage_root
from .test_change_sets_review2 import run

if TYPE_CHECKING:
    from .conftest import Host


def test_a_directory_the_command_left_unwritable_does_not_block_its_change_set(
    host: Host,
) -> None:
    """L1: `chmod 555 zz` after writing zz/new.txt (Go's module cache does it): as a user,
    the rename out of the staged zz failed, and the whole change set could never be applied,
    its other writes held with it."""
    (host.ws / "zz").mkdir()
    run(host, "echo new > zz/new.txt; chmod 555 zz; echo b > b.txt\n")
    assert (host.ws / "zz" / "new.txt").read_text() == "new\n"
    assert (host.ws / "b.txt").read_text() == "b\n"
    assert held_ids(host) == []


TOOL_WRITE = """
import json, sys
from corral.service import Service
request = {"layers": {"global": {}}, "cwd": sys.argv[1], "tool": "write",
           "input": {"path": "ro/new.txt", "content": "x\\n"}}
print(json.dumps(Service().call("op", request)))
"""


def test_a_tool_write_that_fails_leaves_no_staging_area(host: Host) -> None:
    """L2: a file tool's write into a directory its user cannot write (0555) failed after
    the staging area was made, and left it: an hour later it was listed as a held change
    set "the command did not finish", which no command made."""
    (host.ws / "ro").mkdir()
    give_to_test_user(host.base)
    (host.ws / "ro").chmod(0o555)
    done = subprocess.run(
        [*user_prefix(), sys.executable, "-c", TOOL_WRITE, str(host.ws)],
        env=host.env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    result = json.loads(done.stdout)
    # root writes anyway; a user is refused, as on the host
    assert result["ok"] == (not user_prefix()), result
    left = list(stage_root(host).iterdir()) if stage_root(host).exists() else []
    assert [p.name for p in left if p.is_dir()] == [], left
