"""A terminal agent's whole session in one `corral run` with examples/agent.toml (issue 10):
its state written, its key passed by name and no other, its commands confined, the change
set checked at the end. The agent is a stand-in (fake_agent.py) that behaves like one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .conftest import Host

pytestmark = pytest.mark.sandbox

PROFILE = Path(__file__).resolve().parents[2] / "examples" / "agent.toml"
AGENT = Path(__file__).resolve().parent / "fake_agent.py"


def test_an_agent_session_under_the_profile(host: Host) -> None:
    (host.home / ".claude").mkdir(exist_ok=True)
    (host.home / ".claude.json").write_text("{}\n")
    host.env["ANTHROPIC_API_KEY"] = "sk-ant-CORRALSECRET-agent"
    agent = host.ws / ".." / "fake_agent.py"
    agent.write_text(AGENT.read_text())
    done = host.corral(
        "run", "--config", str(PROFILE), "--", "/usr/bin/python3", str(agent.resolve())
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["key"] is True and report["other_key"] is False
    assert report["echo made > made.txt"] == 0
    assert report["cat ~/.ssh/id_ed25519 ~/.ssh/id_rsa"] != 0
    leaked = [name for name, value in host.secrets.items() if value in done.stdout + done.stderr]
    assert leaked == [], leaked
    # its state and its work are on the host; the hook it tried is not
    assert json.loads((host.home / ".claude" / "session.json").read_text()) == {"turns": 1}
    assert "numStartups" in (host.home / ".claude.json").read_text()
    assert (host.ws / "made.txt").read_text() == "made\n"
    assert not (host.ws / ".git" / "hooks" / "pre-commit").exists()


def test_the_agents_settings_stay_read_only_under_the_profile(host: Host) -> None:
    """r86c AGENTPROFILE: with ~/.claude writable, a session wrote a SessionStart hook into
    ~/.claude/settings.json, which Claude Code runs at its next start, in corral or not."""
    claude = host.home / ".claude"
    claude.mkdir(exist_ok=True)
    (claude / "settings.json").write_text("{}\n")
    (host.home / ".claude.json").write_text("{}\n")
    hook = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch x"}]}]}}'
    done = host.corral(
        "run", "--config", str(PROFILE), "--", "sh", "-c",
        f"echo '{hook}' > ~/.claude/settings.json; echo '{hook}' > ~/.claude/settings.local.json;"
        " mkdir -p ~/.claude/hooks && echo 'touch x' > ~/.claude/hooks/start.sh;"
        " echo state > ~/.claude/state.txt; true",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (claude / "settings.json").read_text() == "{}\n", done.stderr
    assert not (claude / "settings.local.json").exists(), done.stderr
    assert not (claude / "hooks").exists(), done.stderr
    assert (claude / "state.txt").read_text() == "state\n", done.stderr  # (its state lands)
