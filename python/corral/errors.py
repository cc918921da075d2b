"""The few exception types the engine raises.

Errors are collected as values (`Problem`) and raised once with every reason, so a user fixing a
config file sees all of its mistakes at the same time.
"""

from __future__ import annotations

from corral.frozen import Frozen


class Problem(Frozen):
    """One thing wrong with the input: what (`message`), where (`key`, `layer`)."""

    __slots__ = ("key", "layer", "message")
    key: str
    layer: str
    message: str

    def __init__(self, key: str, layer: str, message: str) -> None:
        self._set(key=key, layer=layer, message=message)

    def __str__(self) -> str:
        where = f"{self.key} ({self.layer})" if self.layer else self.key
        return f"{where}: {self.message}"


class CorralError(Exception):
    """Base of every error the engine raises on purpose."""


class ConfigError(CorralError):
    """Invalid configuration; carries every problem found, not only the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(str(p) for p in problems))


class BackendError(CorralError):
    """No usable sandbox backend where one is required, or a backend could not wrap a command."""
