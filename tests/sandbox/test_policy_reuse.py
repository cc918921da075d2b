"""The editor host's policy reuse with real bwrap: a policy is reused while nothing changed,
and a secret a sandboxed command writes is hidden from the very next command (a reused
policy from before the write would show it). Run as the test user too: the host runs as
its user, whose watches reach only what it may read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .conftest import give_to_test_user, user_prefix

if TYPE_CHECKING:
    from .conftest import Host

DRIVER = Path(__file__).with_name("policy_reuse_driver.py")


def test_a_secret_a_command_wrote_is_hidden_from_the_next_one(host: Host) -> None:
    give_to_test_user(host.base)
    done = subprocess.run(
        [*user_prefix(), sys.executable, str(DRIVER), str(host.ws), "direct", "apply"],
        cwd=str(host.ws), env=host.env, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    for writes in ("direct", "apply"):
        assert host.SECRET_WORD not in found[writes]["seen"], found
    # direct writes reach the workspace: the secret is there, and hidden
    assert "Permission denied" in found["direct"]["seen"], found
    assert (host.ws / "direct" / ".env").read_text() == host.SECRET_WORD
    # nothing changed between the first commands: their policy was reused, with change
    # sets too (a staging area is no change to what a resolution reads; other processes'
    # writes in /var/tmp, on the workspace's way, may make one of them fresh)
    assert found["direct"]["kept"] >= 1 and found["apply"]["kept"] >= 2, found
