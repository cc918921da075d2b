"""Sandbox backends and their registry."""

from __future__ import annotations

from corral.sandbox.backends.base import Backend, Wrapped
from corral.sandbox.backends.registry import Registry, Selection, default_registry

__all__ = ["Backend", "Registry", "Selection", "Wrapped", "default_registry"]
