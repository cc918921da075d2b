"""A tiny immutable-record base.

Resolved values are immutable. `dataclasses` would be the obvious tool, but importing it costs
~15 ms on a small machine (it pulls in `inspect`), which alone would break the start-up budget of
`corral run`; this base gives the same guarantees for a few lines.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Frozen:
    __slots__: tuple[str, ...] = ()

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot delete {name!r}")

    def _fields(self) -> tuple[tuple[str, Any], ...]:
        return tuple((n, getattr(self, n)) for n in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Frozen)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._fields()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={v!r}" for n, v in self._fields())
        return f"{type(self).__name__}({inner})"
