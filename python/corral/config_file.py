"""Your configuration file, `~/.config/corral/config.toml`: the first layer under setup() in
Neovim and under CORRAL_MODE and the flags in the CLI, so both frontends start from it."""

from __future__ import annotations

import os

from corral import config, dirs
from corral.errors import ConfigError, Problem

CONFIG_NAME = "config.toml"
FILE_LAYER = "config file"  # (its name where a value's origin is shown)


def default_config_path() -> str:
    return os.path.join(dirs.user_config_dir(), CONFIG_NAME)


def file_layer(path: str | None) -> config.Layer | None:
    """The TOML file's layer; a missing default file is no layer, a missing --config an error."""
    explicit = path is not None
    path = path or default_config_path()
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below, once we know it exists
    except FileNotFoundError:
        if explicit:
            raise ConfigError([Problem("--config", "flags", f"{path}: no such file")]) from None
        return None
    except OSError as e:
        raise ConfigError([Problem("config file", path, e.strerror or str(e))]) from None
    import tomllib  # only when there is a file: it costs ~20 ms to import

    with f:
        try:
            data = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError([Problem("config file", path, f"not valid TOML: {e}")]) from None
    return config.Layer(FILE_LAYER, data, source=path)


_cached: dict[str, tuple[tuple[int, int, int], config.Layer | None]] = {}


def file_layer_cached(path: str | None = None) -> config.Layer | None:
    """file_layer, read again only when the file changed (the editor asks on every call)."""
    path = path or default_config_path()
    try:
        st = os.stat(path)
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        key = (0, 0, 0)
    hit = _cached.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    layer = file_layer(None) if path == default_config_path() else file_layer(path)
    _cached[path] = (key, layer)
    return layer
