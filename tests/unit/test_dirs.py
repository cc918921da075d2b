"""The fast XDG paths must agree with platformdirs, which corral avoids importing on Linux."""

from __future__ import annotations

from typing import TYPE_CHECKING

import platformdirs
import pytest

from corral import dirs

if TYPE_CHECKING:
    from pathlib import Path

XDG = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")


def settings(tmp_path: Path) -> dict[str, dict[str, str | None]]:
    return {
        "unset": dict.fromkeys(XDG),
        "set": {v: str(tmp_path / v.lower()) for v in XDG},
        "empty": dict.fromkeys(XDG, ""),
        "blank": dict.fromkeys(XDG, "   "),
        "trailing-slash": {v: str(tmp_path / v.lower()) + "/" for v in XDG},
        "mixed": {
            "XDG_CONFIG_HOME": str(tmp_path / "c"),
            "XDG_CACHE_HOME": "",
            "XDG_STATE_HOME": None,
        },
        # The XDG spec says relative values are invalid and must be ignored.
        "relative": dict.fromkeys(XDG, "relative/dir"),
    }


@pytest.mark.parametrize(
    "name", ["unset", "set", "empty", "blank", "trailing-slash", "mixed", "relative"]
)
def test_matches_platformdirs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (on other platforms dirs delegates to platformdirs, so this holds there trivially)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var, value in settings(tmp_path)[name].items():
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)
    assert dirs.user_config_dir() == platformdirs.user_config_dir("corral")
    assert dirs.user_cache_dir() == platformdirs.user_cache_dir("corral")
    assert dirs.user_log_dir() == platformdirs.user_log_dir("corral")


def test_paths_follow_home_and_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert dirs.user_config_dir() == str(tmp_path / "h" / ".config" / "corral")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert dirs.user_cache_dir() == str(tmp_path / "cache" / "corral")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert dirs.user_log_dir() == str(tmp_path / "state" / "corral" / "log")
