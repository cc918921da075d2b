"""Shared fixtures for the engine unit tests: a private home, a workspace, policy factories."""

from __future__ import annotations

import os
import subprocess

import pytest

from corral import config, policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any


def git(*args: str, cwd: Path | str, home: Path | str) -> str:
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
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
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
