"""A backend implemented outside the engine (a Lua table registered from Neovim).

The engine stays free of any editor API: the adapter hands in `call(method, *args)`, which runs
the foreign implementation and returns plain data.
"""

from __future__ import annotations

from corral.errors import BackendError
from corral.sandbox.backends.base import Backend, Wrapped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence
    from typing import Any

    from corral.sandbox.policy import Policy


class ForeignBackend(Backend):
    def __init__(
        self,
        name: str,
        priority: int,
        call: Callable[..., Any],
        capabilities: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.priority = priority
        self.capabilities = frozenset(capabilities)
        self._call = call

    def detection_key(self, policy: Policy) -> Hashable:
        return (policy.mode, policy.network)

    def available(self, policy: Policy) -> str | None:
        answer = self._call("available", policy.as_dict())
        if answer is True or answer is None:
            return None
        return str(answer) if answer else f"backend {self.name!r} says it is unavailable"

    def wrap(self, policy: Policy, argv: Sequence[str], *, launcher_fds: bool = False) -> Wrapped:
        answer = self._call("wrap", policy.as_dict(), list(argv))
        if not (isinstance(answer, list) and answer and all(isinstance(a, str) for a in answer)):
            raise BackendError(f"backend {self.name!r} returned no argv: {answer!r}")
        return Wrapped(answer, policy.env, self.name, True)
