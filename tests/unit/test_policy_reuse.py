"""The editor host's reuse of a resolved policy (corral.sandbox.policy_reuse): reused while
nothing it read has changed, resolved afresh the moment anything did. Real inotify, real
files: each test changes what a resolution read in one way and checks the next policy sees
it (a stale policy would leave a new secret shown, a new repository writable)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from corral.sandbox import fswatch, policy_reuse
from corral.service import Service

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


def _hidden(service: Service, ws: Path) -> list[str]:
    answer = service.call("policy", {"cwd": str(ws)})
    assert "error" not in answer, answer
    return [str(p) for p in answer["deny_read"]]


# Other processes write in /var/tmp, a directory on the way to every test workspace and so
# watched: an answer may be resolved afresh for their sake. Tests ask until one is reused.
TRIES = 20


def _reused(ws: Path) -> Service:
    """A persistent service whose policy for `ws` is resolved and kept."""
    service = Service(persistent=True)
    assert service.reuse is not None
    for _ in range(TRIES):
        _hidden(service, ws)
        if service.reuse.hits:
            return service
    raise AssertionError(f"never reused: {service.reuse.unsure}")


def _kept(reuse: policy_reuse.PolicyReuse, ws: Path, resolve: Any, expected: Any) -> None:
    """Ask until `resolve`'s answer for `ws` is reused; each answer is `expected`."""
    for _ in range(TRIES):
        hits = reuse.hits
        assert reuse.get({"cwd": str(ws)}, resolve) == expected
        if reuse.hits > hits:
            return
    raise AssertionError(f"never reused: {reuse.unsure}")


def test_the_same_request_is_answered_again_while_nothing_changed(ws: Path) -> None:
    service = _reused(ws)
    first = _hidden(service, ws)
    assert _hidden(service, ws) == first
    # another request (another cwd) is its own: never answered from this one's
    (ws / "sub").mkdir()
    hits = service.reuse.hits
    _hidden(service, ws / "sub")
    assert service.reuse.hits == hits


@pytest.mark.parametrize("where", [".env", "deep/er/.env", "new/.env"])
def test_a_secret_made_anywhere_in_the_workspace_is_hidden_at_the_next_call(
    ws: Path, where: str
) -> None:
    (ws / "deep" / "er").mkdir(parents=True)
    service = _reused(ws)
    secret = ws / where
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("TOKEN=1\n")
    assert str(secret) in _hidden(service, ws)


def test_a_directory_made_is_watched_from_the_next_call(ws: Path) -> None:
    """What a path names is remembered between calls (so a fresh resolution does not watch
    everything again): a directory made where nothing was is watched once it is looked
    in, and a secret made in it later is seen; so is one made after a rename over it."""
    service = _reused(ws)
    for step in range(2):
        made = ws / f"made{step}"
        if step:
            (ws / "tmpdir").mkdir()
            os.rename(ws / "tmpdir", made)
        else:
            made.mkdir()
        assert not any(p.startswith(str(made)) for p in _hidden(service, ws))
        _hidden(service, ws)  # (reused)
        (made / ".env").write_text("TOKEN=1\n")
        assert str(made / ".env") in _hidden(service, ws)


def test_a_credential_made_below_a_directory_made_since_is_hidden(
    ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """~/.config/gcloud is looked up while ~/.config does not exist: once ~/.config is made,
    it must be watched, or the credential made in it later stays shown."""
    monkeypatch.setenv("HOME", str(home))
    service = _reused(ws)
    (home / ".config").mkdir()
    assert not any("gcloud" in p for p in _hidden(service, ws))
    _hidden(service, ws)  # (reused)
    (home / ".config" / "gcloud").mkdir()
    assert str(home / ".config" / "gcloud") in _hidden(service, ws)


def test_a_repository_made_in_the_workspace_is_protected_at_the_next_call(
    ws: Path, git: Any, home: Path
) -> None:
    service = _reused(ws)
    git("init", "-q", cwd=ws, home=home)
    answer = service.call("policy", {"cwd": str(ws)})
    assert any(str(p).startswith(str(ws / ".git")) for p in answer["read_only"]), answer


def test_a_file_changed_through_another_hard_link_is_seen(
    ws: Path, base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watch on a file's directory misses a write made through a link in another
    directory: the file is watched itself."""
    config_home = base / "config"
    (config_home / "corral").mkdir(parents=True)
    config = config_home / "corral" / "config.toml"
    config.write_text('[sandbox]\nmode = "workspace-write"\n')
    other = base / "elsewhere"
    other.mkdir()
    os.link(config, other / "same.toml")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    service = _reused(ws)
    assert service.call("policy", {"cwd": str(ws)})["mode"] == "workspace-write"
    with open(other / "same.toml", "r+") as f:  # (in place: the same inode)
        f.write('[sandbox]\nmode = "read-only"     \n')
    assert service.call("policy", {"cwd": str(ws)})["mode"] == "read-only"


def test_a_link_on_the_way_pointed_elsewhere_is_seen(ws: Path, base: Path) -> None:
    plain, secret = ws / "plain", ws / "secret"
    plain.mkdir()
    secret.mkdir()
    (secret / ".env").write_text("TOKEN=1\n")
    link = base / "project"
    link.symlink_to(plain)
    service = _reused(link)
    assert not any(p.endswith(".env") for p in _hidden(service, link))
    os.rename(base / "project", base / "old")
    (base / "project").symlink_to(secret)
    assert str(secret / ".env") in _hidden(service, link)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a tmpfs")
def test_a_mount_on_the_way_is_seen(ws: Path) -> None:
    (ws / "sub").mkdir()
    service = _reused(ws)
    if subprocess.run(["mount", "-t", "tmpfs", "none", str(ws / "sub")]).returncode:
        pytest.skip("cannot mount here")
    try:
        # a write below the mount point reaches no watch placed before it: the mount is seen
        (ws / "sub" / ".env").write_text("TOKEN=1\n")
        assert str(ws / "sub" / ".env") in _hidden(service, ws)
    finally:
        subprocess.run(["umount", str(ws / "sub")], check=True)


def test_a_change_while_a_policy_is_resolved_is_not_missed(ws: Path) -> None:
    """A change between a resolution's read and its end: the next call resolves anew."""
    reuse = policy_reuse.PolicyReuse()
    target = ws / "f"
    target.write_text("one")

    def resolve() -> str:
        seen = target.read_text()
        target.write_text("two")  # (after it was read: a watch stands since)
        return seen

    assert reuse.get({"cwd": str(ws)}, resolve) == "one"
    assert reuse.get({"cwd": str(ws)}, lambda: target.read_text()) == "two"


def test_what_cannot_be_traced_is_never_kept(ws: Path) -> None:
    reuse = policy_reuse.PolicyReuse()
    request = {"cwd": str(ws)}
    (ws / "x").write_text("")

    def by_descriptor() -> int:
        fd = os.open(ws, os.O_RDONLY)
        try:
            return os.stat("x", dir_fd=fd).st_size
        finally:
            os.close(fd)

    def runs_a_program() -> str:
        return subprocess.run(["true"], check=True).args[0]

    for resolve, why in ((by_descriptor, "descriptor"), (runs_a_program, "ran")):
        reuse.get(request, resolve)
        assert why in reuse.unsure
        reuse.get(request, resolve)
        assert reuse.hits == 0
    _kept(reuse, ws, lambda: os.path.exists(ws), True)


def test_a_filesystem_that_changes_unseen_is_never_kept(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A network or FUSE filesystem can change on another machine, unseen by inotify: what
    is read there is resolved afresh every time. (The mount table is told that the
    workspace's filesystem is NFS: no NFS server here.)"""
    reuse = policy_reuse.PolicyReuse()
    device = os.stat(ws).st_dev
    monkeypatch.setitem(reuse.watcher._types, device, "nfs4")
    reuse.watcher.settled.clear()
    for _ in range(2):
        reuse.get({"cwd": str(ws)}, lambda: (ws / "x").exists())
    assert "nfs4" in reuse.unsure and reuse.hits == 0


def test_running_out_of_watches_resolves_afresh(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fswatch, "MAX_WATCHES", 2)
    reuse = policy_reuse.PolicyReuse()
    for _ in range(2):
        reuse.get({"cwd": str(ws)}, lambda: (ws / "a" / "b").exists())
    assert "cannot be watched" in reuse.unsure and reuse.hits == 0


def test_running_out_of_watches_forgets_every_kept_policy(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """r89a RESTARTSTALE: one request's resolution ran out of watches; every watch was
    dropped, with no event, and the policies kept for other requests stayed in use: a
    command that made enough directories froze another chat's policy."""
    reuse = policy_reuse.PolicyReuse()
    secret, other = ws / "a" / ".env", ws / "b"
    secret.parent.mkdir()
    other.mkdir()
    _kept(reuse, ws, lambda: secret.exists(), False)
    # another request needs more watches than are left
    monkeypatch.setattr(fswatch, "MAX_WATCHES", len(reuse.watcher._spellings))
    reuse.get({"cwd": str(other)}, lambda: (other / "x" / "y").exists())
    assert "cannot be watched" in reuse.unsure
    monkeypatch.setattr(fswatch, "MAX_WATCHES", 20_000)
    secret.write_text("TOKEN=1\n")
    assert reuse.get({"cwd": str(ws)}, lambda: secret.exists()) is True


def test_the_mount_table_read_by_a_resolution_is_the_watchers_to_follow(ws: Path) -> None:
    """r89a PROCFIRST: the first resolution of an unprivileged host read the mount table
    (the system walk's kernel mounts) and was never kept: the watcher polls that table."""
    reuse = policy_reuse.PolicyReuse()

    def resolve() -> int:
        with open("/proc/self/mountinfo", "rb") as f:
            return len(f.read()) and 1

    _kept(reuse, ws, resolve, 1)
    assert reuse.unsure == ""


@pytest.mark.parametrize("lister", ["scandir", "glob"])
def test_a_links_target_that_appears_later_is_seen(ws: Path, base: Path, lister: str) -> None:
    """r90a, r91c POLICYREUSEGLOB: DirEntry.is_dir() follows a link by a stat in C, which is
    not traced (nor is glob's, which asks it): a listed link whose target did not exist yet
    was never watched, and its target made later went unseen. While a resolution is traced,
    os.scandir gives a symlink's entry as one that asks os.stat."""
    import glob

    listed, elsewhere = ws / "homes", base / "elsewhere"
    listed.mkdir()
    elsewhere.mkdir()
    (listed / "bob").symlink_to(elsewhere / "bob")
    reuse = policy_reuse.PolicyReuse()

    def resolve() -> list[str]:
        if lister == "glob":
            return [os.path.basename(p[:-1]) for p in glob.glob(f"{listed}/*/")]
        with os.scandir(listed) as it:
            return [e.name for e in it if e.is_dir()]

    _kept(reuse, ws, resolve, [])
    (elsewhere / "bob").mkdir()
    assert reuse.get({"cwd": str(ws)}, resolve) == ["bob"]


def test_a_link_on_a_targets_way_pointed_elsewhere_is_seen(ws: Path, base: Path) -> None:
    """r90a: a link's watch stands on what it led to; a link further along its target's way
    (`data -> disk1`) re-pointed changed what the first one names, with no event there. The
    way to every link's target is watched too."""
    for disk in ("disk1", "disk2"):
        (base / disk / "proj").mkdir(parents=True)
    (base / "disk2" / "proj" / ".env").write_text("TOKEN=1\n")
    (base / "data").symlink_to(base / "disk1")
    (ws / "proj").symlink_to(base / "data" / "proj")
    reuse = policy_reuse.PolicyReuse()
    _kept(reuse, ws, lambda: (ws / "proj" / ".env").exists(), False)
    (base / "new").symlink_to(base / "disk2")
    os.rename(base / "new", base / "data")
    assert reuse.get({"cwd": str(ws)}, lambda: (ws / "proj" / ".env").exists()) is True


def test_a_user_looked_up_watches_the_files_users_are_read_from(ws: Path) -> None:
    """r91c DOCNONETODAY: `~name` is expanded by pwd, whose C code reads /etc/passwd unseen
    by the trace: a user added later changed what a path names. The files nsswitch.conf
    names are watched; where users come from elsewhere, nothing is kept."""
    import pwd

    reuse = policy_reuse.PolicyReuse()
    with open("/etc/nsswitch.conf", encoding="utf-8") as f:
        local = set(policy_reuse.passwd_sources(f.read())) <= policy_reuse.NSS_FILES
    home = pwd.getpwuid(0).pw_dir
    if local:
        _kept(reuse, ws, lambda: pwd.getpwuid(0).pw_dir, home)
        assert "/etc/passwd" in reuse.watcher.settled
    else:
        for _ in range(2):
            assert reuse.get({"cwd": str(ws)}, lambda: pwd.getpwuid(0).pw_dir) == home
        assert "nsswitch.conf" in reuse.unsure and reuse.hits == 0
    assert pwd.getpwnam.__module__ == "pwd"  # (put back after the resolution)


@pytest.mark.parametrize(
    ("text", "local"),
    [
        ("", True), ("passwd: files\n", True), ("passwd:   compat # c\n", True),
        ("passwd: files systemd\n", False), ("passwd:sss\n", False), ("passwd :sss\n", False),
        ("passwd: files\npasswd: ldap\n", False), ("passwd: files [NOTFOUND=return]\n", True),
        ("group: ldap\npasswd: files\n", True),
    ],
)  # fmt: skip
def test_where_user_names_come_from_is_read_as_glibc_does(text: str, local: bool) -> None:
    """r92a NSSPARSEFAILOPEN: `passwd:sss`, `passwd :sss` and a second passwd line were read
    as files; nss-systemd reads more than files (userdb, systemd-homed)."""
    sources = policy_reuse.passwd_sources(text)
    assert (set(sources) <= policy_reuse.NSS_FILES) is local, sources


def test_a_listing_by_descriptor_keeps_its_entries_as_they_are(ws: Path) -> None:
    """r92a FDSCANDIRLINK: while a resolution ran, os.scandir(fd) gave its symlinks as
    entries that asked os.stat of their bare names, relative to the process's directory."""
    (ws / "real").mkdir()
    (ws / "link").symlink_to(ws / "real")

    def resolve() -> list[str]:
        fd = os.open(ws, os.O_RDONLY)
        try:
            with os.scandir(fd) as it:
                return sorted(e.name for e in it if e.is_dir())
        finally:
            os.close(fd)

    assert policy_reuse.PolicyReuse().get({"cwd": str(ws)}, resolve) == ["link", "real"]


def test_the_guards_call_is_reused_too(ws: Path) -> None:
    """r91c GUARDNOREUSE: the guard, asked for every tool call, passed its own layers to the
    policy and was never reused."""
    service = _reused(ws)
    request = {"cwd": str(ws), "tool": "bash", "input": {"command": "ls"}, "dry_run": True}
    for _ in range(TRIES):
        hits = service.reuse.hits
        assert service.call("guard", request)["decision"] == "approve"
        if service.reuse.hits > hits:
            return
    raise AssertionError(f"never reused: {service.reuse.unsure}")
