"""Shared fixtures for the engine unit tests: a private home, a workspace, policy factories."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from corral import config
from corral.sandbox import policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any


def _git(*args: str, cwd: Path | str, home: Path | str) -> str:
    """Run git with an isolated configuration (no user or system config leaks in)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def git() -> Callable[..., str]:
    """`git(*args, cwd=..., home=...)`: real git, isolated from the user's configuration."""
    return _git


@pytest.fixture
def base(tmp_path: Path) -> Iterator[Path]:
    """A scratch directory outside /tmp, laid out like a real user's files.

    Inside the sandbox /tmp is a private tmpfs, so a path under pytest's tmp_path counts as
    writable for a reason unrelated to the test; policy tests use this directory instead.
    """
    try:
        made = tempfile.mkdtemp(prefix="corral-unit-", dir="/var/tmp")
        os.chmod(made, 0o755)  # (not a directory only the user may read: see system_private)
    except OSError:  # no /var/tmp: fall back, the /tmp-specific assertions are then moot
        yield tmp_path
        return
    try:
        yield Path(os.path.realpath(made))
    finally:
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture
def home(base: Path) -> Path:
    h = base / "home"
    h.mkdir()
    return h


@pytest.fixture
def ws(base: Path) -> Path:
    w = base / "ws"
    w.mkdir()
    return w


@pytest.fixture
def host_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


@pytest.fixture
def make_config() -> Callable[..., config.Config]:
    """`make_config({...}, Layer(...), ...)`: dicts become layers named global, buffer, runtime."""
    names = ("global", "buffer", "runtime", "extra")

    def make(*layers: dict[str, Any] | config.Layer) -> config.Config:
        built = [
            layer if isinstance(layer, config.Layer) else config.Layer(names[i], layer)
            for i, layer in enumerate(layers)
        ]
        return config.resolve(built)

    return make


@pytest.fixture
def make_policy(
    make_config: Callable[..., config.Config], host_env: dict[str, str]
) -> Callable[..., policy.Policy]:
    """`make_policy(cwd, {...layer...}, env=..., buffer_path=...)`."""

    def make(
        cwd: Path | str,
        *layers: dict[str, Any] | config.Layer,
        env: dict[str, str] | None = None,
        buffer_path: str | None = None,
    ) -> policy.Policy:
        return policy.resolve(
            make_config(*layers), str(cwd), host_env if env is None else env, buffer_path
        )

    return make
