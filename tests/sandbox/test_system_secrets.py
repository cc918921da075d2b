"""System files only the user corral runs as may read stay hidden, whatever their names
(r77c SHADOWBACKUP: run as root, a sandboxed command read /etc/shadow-, the password hashes
as they were before the last change, while the deny list hid /etc/shadow by name)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import NOBODY, user_prefix

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.sandbox

SECRET = "corral-test-hash:$6$not-a-real-one"
ETC = "/etc"  # (where shadow-utils keeps its backups)


@pytest.fixture
def system_file() -> Iterator[Path]:
    """A file in /etc for the test's corral user, removed after."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make a file in /etc")
    path = Path(ETC) / f"corral-test-{uuid.uuid4().hex}-"
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def _make(path: Path, mode: int) -> None:
    path.write_text(SECRET + "\n")
    if user_prefix():
        os.chown(path, NOBODY, NOBODY)
    os.chmod(path, mode)


def test_a_system_file_only_the_user_may_read_is_hidden(host, system_file: Path) -> None:  # type: ignore[no-untyped-def]
    # what everyone may read is shown (and the walk of the system's directories is cached)
    _make(system_file, 0o644)
    shown = host.corral("run", "--", "cat", str(system_file))
    assert SECRET in shown.stdout, shown.stdout + shown.stderr
    # made again only the user's (as shadow-utils does: a new file renamed over it): the cache
    # is not trusted past its directory's change
    new = system_file.with_name(system_file.name + "new")
    _make(new, 0o600)
    new.rename(system_file)
    done = host.corral("run", "--", "cat", str(system_file))
    assert SECRET not in done.stdout, done.stdout
    assert done.returncode != 0, done.stdout
    assert "system file only you may read" in done.stderr, done.stderr
    assert "only the user can read it, outside the sandbox" in done.stderr, done.stderr
    # the file tool (on the host) is refused with the same words
    explained = host.corral("explain", "read", str(system_file))
    assert "is hidden by the sandbox" in explained.stdout, explained.stdout + explained.stderr


def test_shadow_utils_backups_are_hidden_as_root(host) -> None:  # type: ignore[no-untyped-def]
    """The finding itself, where the host has the file (Debian does, after any useradd)."""
    if user_prefix() or os.geteuid() != 0 or not os.path.exists("/etc/shadow-"):
        pytest.skip("root's view of /etc/shadow-")
    done = host.corral("run", "--", "sh", "-c", "cat /etc/shadow- /etc/gshadow- | wc -c")
    assert done.stdout.strip() == "0", done.stdout + done.stderr


@pytest.mark.parametrize("where", ["/opt", "/var/log", "/run"])
def test_private_files_outside_etc_are_hidden_too(host, where: str) -> None:  # type: ignore[no-untyped-def]
    """r78c SYSPRIVTOPS: /opt, /var/log, /run (and /mnt, /media, ...) were not looked at."""
    if os.geteuid() != 0 or not os.path.isdir(where):
        pytest.skip(f"needs root to make a file in {where}")
    path = Path(where) / f"corral-test-{uuid.uuid4().hex}"
    try:
        _make(path, 0o600)
        done = host.corral("run", "--", "cat", str(path))
        assert SECRET not in done.stdout, (where, done.stdout)
    finally:
        path.unlink(missing_ok=True)


def test_the_file_tools_read_no_more_than_the_sandboxs_root(host) -> None:  # type: ignore[no-untyped-def]
    """r79c ROOTTOOLCAPS: as root, the file tools run on the host with root's capabilities:
    they read another user's 0600 file and a root file of mode 0000 (Fedora's /etc/shadow-),
    which the sandbox's root, without them, cannot."""
    if user_prefix() or os.geteuid() != 0:
        pytest.skip("root's file tools")
    where = host.outside / "srv"
    where.mkdir(parents=True)
    other, zero = where / "other.txt", where / "shadow-"
    for path, mode in ((other, 0o600), (zero, 0o000)):
        path.write_text(SECRET + "\n")
        os.chmod(path, mode)
    os.chown(other, 4242, 4242)
    for path in (other, zero):
        said = host.corral("explain", "read", str(path))
        assert "could not read it" in said.stdout, (path, said.stdout, said.stderr)
    shown = host.corral("explain", "read", str(host.outside / "victim.txt"))
    assert "could not read it" not in shown.stdout, shown.stdout


def test_private_files_in_home_sys_and_linked_homes_are_hidden(host) -> None:  # type: ignore[no-untyped-def]
    """r79c SYSPRIVHOMEFILE (a root-only file directly in /home), OTHERHOMELINK (a /home
    entry linking to a home elsewhere), SYSFSROOTONLY (the firmware's tables in /sys)."""
    if os.geteuid() != 0 or not os.path.isdir("/home"):
        pytest.skip("needs root to make files in /home")
    name = f"corral-test-{uuid.uuid4().hex}"
    secret, link = Path("/home") / name, Path("/home") / (name + "-link")
    elsewhere = host.outside / "ldap-home"
    elsewhere.mkdir()
    (elsewhere / "deploy_key").write_text(SECRET + "\n")
    try:
        _make(secret, 0o600)
        link.symlink_to(elsewhere)
        for path in (secret, elsewhere / "deploy_key"):
            done = host.corral("run", "--", "cat", str(path))
            assert SECRET not in done.stdout, (path, done.stdout)
    finally:
        secret.unlink(missing_ok=True)
        link.unlink(missing_ok=True)
    if os.path.isdir("/sys/firmware"):
        done = host.corral("run", "--", "sh", "-c", "ls -A /sys/firmware | wc -l")
        assert done.stdout.strip() == "0", done.stdout + done.stderr
