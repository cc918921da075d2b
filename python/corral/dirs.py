"""Per-user config, cache and log directories.

On Linux these follow the XDG base directory rules directly: importing platformdirs costs ~20 ms
(it pulls in pathlib), a large share of `corral run`'s start-up budget. Other platforms use
platformdirs. A test checks that both give the same answers on Linux.
"""

from __future__ import annotations

import os
import sys

APP = "corral"


_memo: dict[tuple[str, str, str], str] = {}


def _xdg(var: str, fallback: str) -> str:
    key = (var, os.environ.get(var, ""), os.environ.get("HOME", ""))
    if key not in _memo:
        _memo[key] = _xdg_uncached(var, fallback)
    return _memo[key]


def _xdg_uncached(var: str, fallback: str) -> str:
    value = os.environ.get(var, "")
    if not os.path.isabs(value.strip()):  # unset, empty or relative: ignored, as the spec says
        value = os.path.join(os.path.expanduser("~"), fallback)
    return os.path.join(value, APP)


def user_config_dir() -> str:
    if sys.platform.startswith("linux"):
        return _xdg("XDG_CONFIG_HOME", ".config")
    import platformdirs

    return platformdirs.user_config_dir(APP)


def user_cache_dir() -> str:
    if sys.platform.startswith("linux"):
        return _xdg("XDG_CACHE_HOME", ".cache")
    import platformdirs

    return platformdirs.user_cache_dir(APP)


def user_state_dir() -> str:
    """corral's own state: the audit log, change sets held or being checked, the undo journal.
    Hidden from every sandboxed command."""
    if sys.platform.startswith("linux"):
        return _xdg("XDG_STATE_HOME", ".local/state")
    import platformdirs

    return platformdirs.user_state_dir(APP)


def user_log_dir() -> str:
    if sys.platform.startswith("linux"):
        return os.path.join(user_state_dir(), "log")
    import platformdirs

    return platformdirs.user_log_dir(APP)
