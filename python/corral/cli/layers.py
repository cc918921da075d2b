"""The CLI's configuration layers: the TOML file < CORRAL_MODE < command-line flags."""

from __future__ import annotations

import os

from corral import config
from corral.config_file import default_config_path, file_layer
from corral.sandbox import policy

__all__ = ["default_config_path", "env_layer", "file_layer", "flags_layer", "resolve"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def env_layer(environ: dict[str, str] | os._Environ[str]) -> config.Layer | None:
    mode = environ.get("CORRAL_MODE", "")
    if not mode:
        return None
    return config.Layer("env", {"sandbox.mode": mode}, source="CORRAL_MODE")


def flags_layer(opts: dict[str, Any]) -> config.Layer | None:
    values: dict[str, Any] = {}
    if "mode" in opts:
        values["sandbox.mode"] = opts["mode"]
    if "backend" in opts:
        values["sandbox.backend"] = opts["backend"]
    if "writes" in opts:
        values["sandbox.writes"] = opts["writes"]
    if "approval" in opts:
        values["tools.approval"] = opts["approval"]
    if opts.get("network"):
        values["sandbox.policy.network"] = True
    if opts.get("no_network"):
        values["sandbox.policy.network"] = False
    if opts["allow_write"]:
        values["sandbox.policy.rw_paths"] = {"append": opts["allow_write"]}
    if opts["deny_read"]:
        values["sandbox.policy.deny_read"] = {"append": opts["deny_read"]}
    if opts.get("allow_host"):
        values["sandbox.policy.network_allow"] = {"append": opts["allow_host"]}
    return config.Layer("flags", values) if values else None


def resolve(opts: dict[str, Any]) -> tuple[config.Config, policy.Policy]:
    layers = [
        layer
        for layer in (file_layer(opts.get("config")), env_layer(os.environ), flags_layer(opts))
        if layer is not None
    ]
    resolved = config.resolve(layers)
    cwd = opts.get("cwd") or os.getcwd()
    pol = policy.resolve(resolved, cwd, os.environ)
    from corral.imports import drop_writable

    drop_writable(
        pol.rw_roots, pol.read_only
    )  # before the check after the run imports what it needs
    return resolved, pol
