"""Fixtures for the real-sandbox tests: an isolated host layout and a `corral` runner.

The layout lives under /var/tmp, not pytest's tmp_path: the sandbox replaces /tmp with a private
tmpfs, so a fake home under /tmp would be hidden wholesale and the credential masks, the
read-only home and the sibling-directory checks would pass without being exercised. /var/tmp
is seen by the sandbox as the host has it (read-only), which is the situation of a real home.

    BASE/home/user          $HOME with fake credentials, rc files and editor plugins
    BASE/work/app           the workspace: a git repository with one commit
    BASE/work/app2, ap      siblings sharing a name prefix with the workspace
    BASE/outside            files a sandboxed command must not change
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .sandbox_support import q, script

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

HOST_SCRATCH = "/var/tmp"
# CORRAL_TEST_USER=nobody (scripts/test sets it for its second pass when run as root): corral
# and host git run as that user, in a layout it owns. Root is exempt from some kernel checks
# (RLIMIT_NPROC, file permissions), and most users are not root.
TEST_USER = os.environ.get("CORRAL_TEST_USER", "")
NOBODY = 65534 if TEST_USER != "nobody" else pwd.getpwnam("nobody").pw_uid


def user_prefix() -> list[str]:
    """The argv prefix that runs a host program as the test user (empty: as this process)."""
    if not TEST_USER or os.getuid() != 0:
        return []
    setpriv = shutil.which("setpriv", path="/usr/bin:/bin")
    if setpriv is None:
        raise RuntimeError("CORRAL_TEST_USER needs setpriv (util-linux)")
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]


def corral_runs_as_root() -> bool:
    """Whether corral (not this process) runs as root: root can write every file."""
    return not user_prefix() and os.geteuid() == 0


def give_to_test_user(base: Path) -> None:
    if not user_prefix():
        return
    # find, not os.walk: Python 3.11 walks recursively, and a test tree may be 1500 deep.
    # Only what root owns: a chown changes a file's ctime even to the same owner, and corral
    # takes a ctime after a command started for a change the host made meanwhile. Not into
    # another file system (a test's proc mount, whose files no chown changes).
    subprocess.run(
        ["find", str(base), "-xdev", "-user", "0", "-exec", "chown", "-h",
         f"{NOBODY}:{NOBODY}", "{}", "+"],
        check=True,
    )  # fmt: skip


class Host:
    """What one test works with: paths, markers, and ways to run corral and git on the host."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home" / "user"
        self.work = base / "work"
        self.ws = self.work / "app"
        self.outside = base / "outside"
        self.tag = uuid.uuid4().hex[:12]
        # Every secret holds SECRET_WORD, so one check finds any of them in any output; scripts
        # never spell the word whole, so it can only appear by leaking.
        self.secrets = {
            "ssh": f"CORRALSECRET-ssh-{self.tag}",
            "aws": f"CORRALSECRET-aws-{self.tag}",
            "netrc": f"CORRALSECRET-netrc-{self.tag}",
            "gh": f"CORRALSECRET-gh-{self.tag}",
            "openai": f"sk-CORRALSECRET-openai-{self.tag}",
            "github": f"ghp_CORRALSECRET-github-{self.tag}",
            "aws_env": f"CORRALSECRET-awsenv-{self.tag}",
            "anthropic": f"CORRALSECRET-anthropic-{self.tag}",
            "db": f"CORRALSECRET-db-{self.tag}",
        }
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "LANG": "C.UTF-8",
            "GIT_CONFIG_NOSYSTEM": "1",
            "OPENAI_API_KEY": self.secrets["openai"],
            "GITHUB_TOKEN": self.secrets["github"],
            "AWS_SECRET_ACCESS_KEY": self.secrets["aws_env"],
            "ANTHROPIC_API_KEY": self.secrets["anthropic"],
            "DATABASE_URL": f"postgres://u:{self.secrets['db']}@db.invalid/x",
            "NVIM": f"/tmp/nvim.{self.tag}/0",
            "NVIM_LISTEN_ADDRESS": f"/tmp/nvim.{self.tag}/0",
            "SSH_AUTH_SOCK": f"/tmp/ssh-{self.tag}/agent.1",
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus",
            "TMUX": f"/tmp/tmux-0/default-{self.tag},1,0",
        }
        if "PYENV_ROOT" in os.environ:
            self.env["PYENV_ROOT"] = os.environ["PYENV_ROOT"]

    SECRET_WORD = "CORRALSECRET"
    # Names whose presence in a sandboxed environment is a leak, whatever their value.
    HOST_SERVICE_VARS = (
        "NVIM",
        "NVIM_LISTEN_ADDRESS",
        "SSH_AUTH_SOCK",
        "DBUS_SESSION_BUS_ADDRESS",
        "TMUX",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "ANTHROPIC_API_KEY",
        "DATABASE_URL",
    )

    def corral(
        self,
        *args: str,
        cwd: Path | str | None = None,
        input: str | None = None,
        timeout: float = 60,
        pass_fds: tuple[int, ...] = (),
    ) -> subprocess.CompletedProcess[str]:
        """`python -m corral ARGS` with the isolated environment; never raises on exit status."""
        give_to_test_user(self.base)  # what the test made as root since the last call
        return subprocess.run(
            [*user_prefix(), sys.executable, "-m", "corral", *args],
            cwd=str(cwd or self.ws),
            env=self.env,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            text=True,
            timeout=timeout,
            pass_fds=pass_fds,
        )

    def sh(
        self,
        body: str,
        mode: str | None = None,
        *flags: str,
        **kwargs: Any,
    ) -> subprocess.CompletedProcess[str]:
        """Run `body` (with the attempt helper and the DONE marker) under `sh` in the sandbox."""
        mode_args = ("--mode", mode) if mode else ()
        return self.corral("run", *mode_args, *flags, "--", "sh", "-c", script(body), **kwargs)

    def git(self, *args: str, cwd: Path | str | None = None, check: bool = True) -> str:
        """git on the host, with the same isolated environment."""
        give_to_test_user(self.base)
        done = subprocess.run(
            [*user_prefix(), "git", *args],
            cwd=str(cwd or self.ws),
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"host git {args} failed: {done.stderr}")
        return done.stdout

    @property
    def own(self) -> list[Path]:
        """corral's own cache and state (the probe's answers, change sets, the journal):
        written by corral on the host, not by the sandbox; left out of snapshots."""
        return [self.home / ".cache" / "corral", self.home / ".local" / "state" / "corral"]

    def vars(self) -> str:
        """Shell assignments of the layout's paths, for the top of a script; `set -a` exports
        them and every later assignment, so `sh -c '...'` children see them too."""
        return "set -a\n" + "\n".join(
            f"{name}={q(value)}"
            for name, value in (
                ("BASE", self.base),
                ("WS", self.ws),
                ("WORK", self.work),
                ("OUT", self.outside),
                ("H", self.home),
            )
        )


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def _populate_home(host: Host) -> None:
    h, s = host.home, host.secrets
    _write(
        h / ".ssh" / "id_rsa",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{s['ssh']}\n-----END OPENSSH PRIVATE KEY-----\n",
        0o600,
    )
    _write(h / ".ssh" / "config", "Host *\n  IdentityFile ~/.ssh/id_rsa\n")
    _write(
        h / ".aws" / "credentials",
        f"[default]\naws_access_key_id = AKIAX\naws_secret_access_key = {s['aws']}\n",
        0o600,
    )
    _write(h / ".netrc", f"machine example.invalid login me password {s['netrc']}\n", 0o600)
    _write(
        h / ".config" / "gh" / "hosts.yml",
        f"github.com:\n  oauth_token: {s['gh']}\n  user: me\n",
        0o600,
    )
    _write(h / ".bashrc", "# the user's bashrc\nexport EDITOR=nvim\n")
    _write(h / ".config" / "nvim" / "init.lua", "vim.opt.number = true\n")
    _write(
        h
        / ".local"
        / "share"
        / "nvim"
        / "site"
        / "pack"
        / "p"
        / "start"
        / "plug"
        / "plugin"
        / "p.lua",
        "-- a plugin the user's Neovim runs at start-up\n",
    )
    (h / ".cache").mkdir(parents=True, exist_ok=True)
    (h / ".local" / "state").mkdir(parents=True, exist_ok=True)


def _make_repo(host: Host) -> None:
    ws = host.ws
    ws.mkdir(parents=True, exist_ok=True)
    host.git("init", "-q", "-b", "main", str(ws), cwd=host.base)
    # Identity in the repository's own config, written before any sandbox runs: .git/config is
    # read-only inside.
    host.git("config", "user.name", "Corral Test")
    host.git("config", "user.email", "corral-test@example.invalid")
    host.git("config", "commit.gpgsign", "false")
    _write(ws / "README.md", "# app\n")
    _write(ws / "movable.txt", "stays in the workspace\n")
    _write(ws / ".gitignore", ".venv/\nbuild/\n__pycache__/\n")
    (ws / "sub").mkdir()
    _write(ws / "sub" / "keep.txt", "sub\n")
    host.git("add", "-A")
    host.git("commit", "-q", "-m", "initial")


@pytest.fixture
def host() -> Iterator[Host]:
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="corral-sandbox-", dir=HOST_SCRATCH)))
    # (like the directories a user keeps projects in: others may look in; one only the
    # user may is hidden from commands, see system_private)
    base.chmod(0o755)
    h = Host(base)
    try:
        _populate_home(h)
        h.ws.mkdir(parents=True)
        give_to_test_user(base)  # before host git, run as the test user, makes the repository
        _make_repo(h)
        for sibling in ("app2", "ap"):
            _write(h.work / sibling / "keep.txt", f"{sibling} must not change\n")
        _write(h.work / "app.txt", "a sibling file\n")
        _write(h.outside / "victim.txt", "original\n")
        _write(h.outside / "hard.txt", "original\n")
        give_to_test_user(base)
        yield h
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def fake_home(host: Host) -> Path:
    return host.home


@pytest.fixture
def workspace(host: Host) -> Path:
    return host.ws


@pytest.fixture
def corral(host: Host) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`corral(*args, cwd=..., input=..., timeout=...) -> CompletedProcess`."""
    return host.corral


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In the second pass as another user, tests built on pytest's own (root-only) tmp_path, or
    on keys that bind the uid of the test process itself, do not apply."""
    if not user_prefix():
        return
    for item in items:
        if "tmp_path" in getattr(item, "fixturenames", ()) or item.get_closest_marker("as_root"):
            item.add_marker(pytest.mark.skip(reason="runs only as the test process's own user"))
