"""The CLI's layers: config file < CORRAL_MODE < flags, with provenance."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from corral import config
from corral.cli import layers
from corral.cli.options import parse
from corral.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path


def resolve_flags(args: list[str], *below: config.Layer) -> config.Config:
    opts, _ = parse("run", [*args, "true"])
    flags = layers.flags_layer(opts)
    return config.resolve([*below, *([flags] if flags else [])])


def test_allow_write_appends_to_the_preset() -> None:
    cfg = resolve_flags(["--allow-write", "/extra"])
    assert cfg["sandbox.policy.rw_paths"] == ("urn:corral:cwd", "/extra")
    assert cfg.origins["sandbox.policy.rw_paths"] == "mode workspace-write+flags"


def test_deny_read_appends_to_the_defaults() -> None:
    cfg = resolve_flags(["--deny-read", "/mine"])
    assert cfg["sandbox.policy.deny_read"][-1] == "/mine"
    assert "~/.ssh" in cfg["sandbox.policy.deny_read"]
    assert cfg.origins["sandbox.policy.deny_read"] == "default+flags"


def test_no_flags_no_layer() -> None:
    opts, _ = parse("run", ["true"])
    assert layers.flags_layer(opts) is None


def test_network_flags() -> None:
    assert resolve_flags(["--network"])["sandbox.policy.network"] is True
    on = config.Layer("global", {"sandbox.mode": "workspace-write-network"})
    cfg = resolve_flags(["--no-network"], on)
    assert cfg["sandbox.policy.network"] is False
    assert cfg.origins["sandbox.policy.network"] == "flags"


def test_flags_beat_env_beat_file(tmp_path: Path) -> None:
    f = tmp_path / "config.toml"
    f.write_text('[sandbox]\nmode = "off"\nbackend = "required"\n')
    file_layer = layers.file_layer(str(f))
    env_layer = layers.env_layer({"CORRAL_MODE": "read-only"})
    assert file_layer is not None and env_layer is not None
    assert file_layer.label == f"config file {f}"
    cfg = config.resolve([file_layer, env_layer])
    assert cfg["sandbox.mode"] == "read-only"
    assert cfg.origins["sandbox.mode"] == "env"
    assert cfg["sandbox.backend"] == "required"
    assert cfg.origins["sandbox.backend"] == "config file"
    cfg = resolve_flags(["--mode", "workspace-write-network"], file_layer, env_layer)
    assert cfg["sandbox.mode"] == "workspace-write-network"
    assert cfg.origins["sandbox.mode"] == "flags"


def test_empty_corral_mode_is_no_layer() -> None:
    assert layers.env_layer({"CORRAL_MODE": ""}) is None
    assert layers.env_layer({}) is None


def test_bad_corral_mode_names_its_source() -> None:
    env_layer = layers.env_layer({"CORRAL_MODE": "yolo"})
    assert env_layer is not None
    with pytest.raises(ConfigError) as info:
        config.resolve([env_layer])
    [problem] = info.value.problems
    assert (problem.key, problem.layer) == ("sandbox.mode", "env CORRAL_MODE")


def test_missing_explicit_config_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        layers.file_layer(str(tmp_path / "nope.toml"))
    assert "no such file" in str(info.value)


def test_missing_default_config_is_no_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert layers.file_layer(None) is None
    assert layers.default_config_path() == str(tmp_path / "cfg" / "corral" / "config.toml")


def test_default_config_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    path = tmp_path / "cfg" / "corral" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("[sandbox.policy]\nnetwork = true\n")
    layer = layers.file_layer(None)
    assert layer is not None
    assert config.resolve([layer])["sandbox.policy.network"] is True


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text("[sandbox\nmode = 1\n")
    with pytest.raises(ConfigError) as info:
        layers.file_layer(str(f))
    assert str(f) in str(info.value)
    assert "not valid TOML" in str(info.value)


def test_typo_in_config_file_names_file_and_key(tmp_path: Path) -> None:
    f = tmp_path / "config.toml"
    f.write_text("[sandbox.policy]\nnetwrk = true\n")
    layer = layers.file_layer(str(f))
    assert layer is not None
    with pytest.raises(ConfigError) as info:
        config.resolve([layer])
    assert f"sandbox.policy.netwrk (config file {f})" in str(info.value)
