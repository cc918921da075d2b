"""Unsandboxed commands get a scrubbed environment too ("also found" in issue 7): mode "off",
a disabled sandbox and the "auto" fallback used to pass the host environment, API keys
included. Only `sandbox.policy.scrub_env = false` passes it through."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("how", [("--mode", "off"), ("--config", "DISABLED")])
def test_unsandboxed_commands_get_no_secrets(host, how: tuple[str, str]) -> None:
    flag, value = how
    if value == "DISABLED":
        config = host.base / "disabled.toml"
        config.write_text("[sandbox]\nenabled = false\n")
        value = str(config)
    r = host.corral("run", flag, value, "--", "env")
    assert r.returncode == 0, r.stderr
    assert "running UNSANDBOXED" in r.stderr
    assert host.SECRET_WORD not in r.stdout
    names = {line.partition("=")[0] for line in r.stdout.splitlines()}
    assert not names & set(host.HOST_SERVICE_VARS), names & set(host.HOST_SERVICE_VARS)
    assert "PATH" in names and "HOME" in names


def test_scrubbing_is_turned_off_only_by_name(host) -> None:
    config = host.base / "raw.toml"
    config.write_text("[sandbox.policy]\nscrub_env = false\n")
    r = host.corral("run", "--mode", "off", "--config", str(config), "--", "env")
    assert r.returncode == 0, r.stderr
    assert host.secrets["openai"] in r.stdout  # asked for by name: the host's environment
