"""`sandbox.policy.home = "private"`: $HOME is emptied except the workspace, the allowlist, and
never what the deny list hides; everyday work still succeeds."""

from __future__ import annotations

import pytest

from .conftest import Host
from .sandbox_support import q
from .test_change_sets import take_history

pytestmark = pytest.mark.sandbox


def _private_home(host: Host, extra: str = "") -> None:
    config = host.home / ".config" / "corral" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[sandbox.policy]\nhome = "private"\n{extra}')


@pytest.fixture
def home_ws(host: Host) -> Host:
    """The workspace moved inside $HOME (projects/app), with a git identity in ~/.gitconfig."""
    ws = host.home / "projects" / "app"
    ws.mkdir(parents=True)
    host.git("init", "-q", "-b", "main", str(ws), cwd=host.base)
    identity = "[user]\n\tname = Home User\n\temail = h@example.invalid\n"
    (host.home / ".gitconfig").write_text(identity)
    diary = host.home / "Documents" / "diary.txt"
    diary.parent.mkdir()
    diary.write_text(f"{host.secrets['db']}-diary\n")
    host.ws = ws
    return host


@pytest.mark.parametrize("mode", ["read-only", "workspace-write"])
def test_private_home_shows_only_workspace_and_allowlist(home_ws: Host, mode: str) -> None:
    host = home_ws
    # ~/.ssh in the allowlist would still be hidden (masks come last): an error says so.
    _private_home(host, 'home_allow = { append = ["~/.ssh", "~/Documents/none"] }\n')
    refused = host.corral("run", "--mode", mode, "--", "true")
    assert refused.returncode == 125, refused.stderr
    assert "sandbox.policy.home_allow" in refused.stderr
    assert "is a credential store" in refused.stderr
    _private_home(host, 'home_allow = { append = ["~/Documents/none"] }\n')
    r = host.corral(
        "run",
        "--mode",
        mode,
        "--",
        "sh",
        "-c",
        'ls -A "$HOME"; echo ---; cat "$HOME/.gitconfig"; echo ---; '
        'cat "$HOME/.ssh/id_rsa" "$HOME/Documents/diary.txt" "$HOME/.bashrc" 2>&1; '
        "ls -A; echo DONE",
    )
    assert r.returncode == 0, r.stderr
    assert "DONE" in r.stdout
    listing = r.stdout.split("---")[0].split()
    # Only the way to the workspace and existing allowlisted entries remain.
    assert sorted(listing) == [".gitconfig", "projects"], r.stdout
    assert "Home User" in r.stdout
    assert host.SECRET_WORD not in r.stdout + r.stderr
    assert "the user's bashrc" not in r.stdout


def test_everyday_git_work_in_a_private_home(home_ws: Host) -> None:
    host = home_ws
    _private_home(host)
    r = host.corral(
        "run",
        "--",
        "sh",
        "-c",
        "set -e; echo hi > a.txt; git add a.txt; git commit -q -m 'from the sandbox'; "
        "git checkout -q -b topic; echo more >> a.txt; git commit -qam more; "
        "git checkout -q main; git merge -q topic; python3 -m venv --without-pip .venv; "
        ".venv/bin/python -c 'print(40 + 2)'; echo scratch > /tmp/s && cat /tmp/s",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["42", "scratch"]
    take_history(host)
    log = host.git("log", "--format=%an|%s", cwd=host.ws).splitlines()
    assert log == ["Home User|more", "Home User|from the sandbox"]


def test_private_home_hides_entries_created_after_the_policy(home_ws: Host) -> None:
    """The allowlist is of names, not a snapshot: a file appearing in $HOME is hidden too."""
    host = home_ws
    _private_home(host)
    late = host.home / "created-later.txt"
    r = host.corral(
        "run",
        "--",
        "sh",
        "-c",
        f"ls {q(host.home)}; cat {q(late)} 2>&1; echo DONE",
        cwd=host.ws,
    )
    assert "DONE" in r.stdout
    late.write_text(f"{host.secrets['db']}-late\n")
    r2 = host.corral("run", "--", "cat", str(late), cwd=host.ws)
    assert r2.returncode != 0
    assert host.SECRET_WORD not in r2.stdout + r2.stderr
