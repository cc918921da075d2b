"""status.report / render: the effective state as data, with provenance and warnings."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from corral import status_report as status
from corral.sandbox.backends import Backend, Registry, Wrapped

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from corral.config import Config
    from corral.sandbox.policy import Policy


class Fake(Backend):
    def __init__(self, name: str, reason: str | None) -> None:
        self.name, self.reason, self.priority = name, reason, 1

    def available(self, policy: Policy) -> str | None:
        return self.reason

    def wrap(self, policy: Policy, argv: Sequence[str], *, launcher_fds: bool = False) -> Wrapped:
        return Wrapped(argv, policy.env, self.name, True)


@pytest.fixture
def state(
    make_config: Callable[..., Config], host_env: dict[str, str], ws: Path
) -> Callable[..., tuple[Config, Policy]]:
    from corral.sandbox import policy

    def make(*layers: dict) -> tuple[Config, Policy]:
        cfg = make_config(*layers)
        return cfg, policy.resolve(cfg, str(ws), host_env)

    return make


def registry(reason: str | None) -> Registry:
    r = Registry()
    r.register(Fake("fake", reason))
    return r


def test_shorten(state: Callable[..., tuple[Config, Policy]], ws: Path, home: Path) -> None:
    _, p = state()
    assert status.shorten(str(ws), p) == "."
    assert status.shorten(str(ws / "a" / "b"), p) == "./a/b"
    assert status.shorten(str(ws) + "2", p) == str(ws) + "2"
    assert status.shorten(str(home), p) == "~"
    assert status.shorten(str(home / ".ssh"), p) == "~/.ssh"
    assert status.shorten("/etc", p) == "/etc"


def test_report_sandboxed(state: Callable[..., tuple[Config, Policy]]) -> None:
    cfg, p = state({"sandbox.policy.rw_paths": {"append": ["/nonexistent-corral-x"]}})
    data = status.report(cfg, p, registry(None))
    assert data["sandboxed"] is True
    assert data["backend"]["chosen"] == "fake"
    assert data["warnings"] == []
    assert data["paths"]["writable"] == [".", "/tmp (private)"]
    assert data["settings"]["sandbox.policy.rw_paths"]["layer"] == "mode workspace-write+global"
    assert data["settings"]["sandbox.mode"] == {"value": "workspace-write", "layer": "default"}
    assert any("does not exist" in n for n in data["notes"])
    json.dumps(data)  # JSON-ready
    text = status.render(data)
    assert "backend:   fake" in text
    assert "(mode workspace-write+global)" in text
    assert "WARNING" not in text


def test_report_unsandboxed_auto_warns(state: Callable[..., tuple[Config, Policy]]) -> None:
    cfg, p = state()
    data = status.report(cfg, p, registry("not installed"))
    assert data["sandboxed"] is False
    assert data["backend"]["candidates"][0]["reason"] == "not installed"
    assert any("UNSANDBOXED" in w and "not installed" in w for w in data["warnings"])
    assert "WARNING: commands run UNSANDBOXED" in status.render(data)


def test_report_required_refuses(state: Callable[..., tuple[Config, Policy]]) -> None:
    cfg, p = state({"sandbox.backend": "required"})
    data = status.report(cfg, p, registry("not installed"))
    assert data["sandboxed"] is False
    assert len(data["warnings"]) == 1
    assert "refused" in data["warnings"][0]


@pytest.mark.parametrize("layer", [{"sandbox.mode": "off"}, {"sandbox.enabled": False}])
def test_report_off_says_plainly_that_nothing_is_confined(
    state: Callable[..., tuple[Config, Policy]], layer: dict
) -> None:
    """Issue 9: while disabled, status listed hidden paths and "network off" as if they held."""
    cfg, p = state(layer)
    data = status.report(cfg, p, registry(None))
    assert data["enabled"] is False and data["sandboxed"] is False
    assert len(data["warnings"]) == 1 and "NOTHING IS CONFINED" in data["warnings"][0]
    # whether enabling it would work is still checked and said
    assert data["backend"]["candidates"][0]["available"] is True
    text = status.render(data)
    assert "WARNING: NOTHING IS CONFINED" in text
    assert "confined:  nothing" in text
    assert "network:   off" not in text and "hidden:" not in text and "writable:" not in text
    assert "available (not used: the sandbox is off)" in text
    (network,) = [x for x in text.splitlines() if x.strip().startswith("sandbox.policy.network ")]
    assert network.endswith("; not applied: the sandbox is off)"), network
    # r90t STATUSOFFSCRUB: the environment is scrubbed for every command, sandboxed or not
    for key in ("sandbox.policy.env ", "sandbox.policy.scrub_env "):
        (row,) = [x for x in text.splitlines() if x.strip().startswith(key)]
        assert "not applied" not in row, row


def test_report_environment_lists_names_only(
    state: Callable[..., tuple[Config, Policy]],
) -> None:
    cfg, p = state({"sandbox.policy.env": ["SECRET_TOKEN=hunter2"]})
    data = status.report(cfg, p, registry(None))
    assert "SECRET_TOKEN" in data["environment"]
    assert "hunter2" not in json.dumps(data["environment"])
