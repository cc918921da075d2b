"""The `none` backend: the command as it is, with the host environment.

Used for mode "off", a disabled sandbox, and `auto` when no backend is available. It is not in
the registry, so `auto` never picks it as if it were a sandbox.
"""

from __future__ import annotations

import os

from corral.sandbox.backends.base import Backend, Wrapped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from corral.sandbox.policy import Policy


class NoneBackend(Backend):
    name = "none"
    priority = 0
    capabilities: frozenset[str] = frozenset()

    def available(self, policy: Policy) -> str | None:
        return None

    def wrap(self, policy: Policy, argv: Sequence[str], *, launcher_fds: bool = False) -> Wrapped:
        return Wrapped(argv, sorted(os.environ.items()), self.name, False)
