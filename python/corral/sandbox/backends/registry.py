"""The backend registry and backend selection.

Backends are ordered by priority (highest first), then name. Detection results are cached per
backend and per detection key (the backend's configuration); registering or unregistering
clears the cache.
"""

from __future__ import annotations

from corral.errors import BackendError
from corral.frozen import Frozen
from corral.sandbox.backends.base import Backend, Wrapped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence
    from typing import Any

    from corral.sandbox.policy import Policy


class Selection(Frozen):
    """The backend a policy gets: `backend` is None when commands run unsandboxed (`reason`)."""

    __slots__ = ("backend", "reason", "tried")
    backend: Backend | None
    reason: str
    tried: tuple[tuple[str, str | None], ...]  # (name, unavailability reason or None)

    def __init__(
        self, backend: Backend | None, reason: str, tried: Sequence[tuple[str, str | None]] = ()
    ) -> None:
        self._set(backend=backend, reason=reason, tried=tuple(tried))


class Registry:
    def __init__(self) -> None:
        self._backends: dict[str, Backend] = {}
        self._detected: dict[tuple[str, Hashable], str | None] = {}

    def register(self, backend: Backend) -> None:
        if not backend.name or backend.name in ("auto", "required", "none"):
            raise ValueError(f"invalid backend name {backend.name!r}")
        self._backends[backend.name] = backend
        self._detected.clear()

    def unregister(self, name: str) -> bool:
        self._detected.clear()
        return self._backends.pop(name, None) is not None

    def forget(self) -> None:
        """Drop detection results: the next selection checks every backend again."""
        self._detected.clear()

    def get(self, name: str) -> Backend | None:
        return self._backends.get(name)

    def get_all(self) -> list[Backend]:
        """A new list, by priority then name: changing it does not change the registry."""
        return sorted(self._backends.values(), key=lambda b: (-b.priority, b.name))

    def count(self) -> int:
        return len(self._backends)

    def availability(self, backend: Backend, policy: Policy) -> str | None:
        key = (backend.name, backend.detection_key(policy))
        if key not in self._detected:
            try:
                self._detected[key] = backend.available(policy)
            except Exception as e:  # a third-party backend must not take the engine down
                self._detected[key] = f"availability check failed: {e!r}"
        return self._detected[key]

    def select(self, policy: Policy) -> Selection:
        """Pick the backend for `policy`; raises BackendError where a sandbox is required."""
        if not policy.enabled:
            why = 'mode is "off"' if policy.mode == "off" else "the sandbox is disabled"
            return Selection(None, why)
        choice = policy.backend
        if choice in ("auto", "required"):
            tried = [(b.name, self.availability(b, policy)) for b in self.get_all()]
            for name, reason in tried:
                if reason is None:
                    return Selection(self._backends[name], "", tried)
            detail = "; ".join(f"{n}: {r}" for n, r in tried) or "no backend is registered"
            explicit = [b.name for b in self.get_all() if b.configured(policy)]
            if explicit:
                raise BackendError(
                    f"{', '.join(explicit)} is configured explicitly but not available ({detail})"
                )
            if choice == "required":
                raise BackendError(
                    f'sandbox.backend is "required" but no backend is available ({detail})'
                )
            return Selection(None, f"no sandbox backend is available ({detail})", tried)
        backend = self._backends.get(choice)
        if backend is None:
            known = ", ".join(b.name for b in self.get_all()) or "none"
            raise BackendError(f"sandbox.backend: unknown backend {choice!r} (registered: {known})")
        reason = self.availability(backend, policy)
        if reason is not None:
            raise BackendError(f"sandbox.backend {choice!r} is not available: {reason}")
        return Selection(backend, "", [(choice, None)])

    def staged(self, policy: Policy) -> bool:
        """Whether commands' writes go through change sets here (not direct writes, chosen
        or the fallback where the chosen backend can mount no overlay)."""
        if policy.writes == "direct" or not policy.enabled:
            return False
        try:
            backend = self.select(policy).backend
        except BackendError:
            return False
        problem = getattr(backend, "changes_problem", None)
        return problem is not None and problem(policy) is None

    def outcome(self, policy: Policy) -> tuple[str | None, str, bool]:
        """(the chosen backend's name, or None and why not; whether commands are refused
        rather than run unsandboxed). Never raises: for reports and decisions."""
        try:
            selection = self.select(policy)
        except BackendError as e:
            return None, str(e), True
        return (selection.backend.name if selection.backend else None), selection.reason, False

    def wrap(
        self,
        policy: Policy,
        argv: Sequence[str],
        *,
        launcher_fds: bool = False,
        proxied: bool = False,
    ) -> Wrapped:
        """Wrap `argv` for `policy`; unsandboxed only when disabled or auto found nothing."""
        selection = self.select(policy)
        if selection.backend is None:
            from corral.sandbox.backends.none import NoneBackend

            wrapped = NoneBackend().wrap(policy, argv)
            # No sandbox (mode off, disabled, or "auto" with none working): the secrets stay
            # out all the same, unless the user turned scrubbing off by name.
            env = policy.env if policy.scrub_env else wrapped.env
            if policy.network_allow:  # no proxy runs for it
                from corral.sandbox.environment import without_proxy

                env = tuple(without_proxy(env))
            return Wrapped(wrapped.argv, env, "none", False, notes=[selection.reason])
        if "network_proxy" in selection.backend.capabilities:
            wrap: Any = selection.backend.wrap  # (takes proxied: see Backend.wrap)
            return wrap(policy, argv, launcher_fds=launcher_fds, proxied=proxied)  # type: ignore[no-any-return]
        wrapped = selection.backend.wrap(policy, argv, launcher_fds=launcher_fds)
        if policy.network_allow:
            # A backend that runs no proxy (one registered from Lua): no variable may name
            # one on 127.0.0.1:3128, which could be anyone's (review r28b).
            from corral.sandbox.environment import without_proxy

            env = tuple(without_proxy(wrapped.env))
            wrapped = Wrapped(
                wrapped.argv, env, wrapped.backend, wrapped.sandboxed, wrapped.status_fd,
                wrapped.fds, [*wrapped.notes, "no network: this backend runs no proxy"],
                wrapped.stage,
            )  # fmt: skip
        return wrapped


def default_registry() -> Registry:
    """A registry holding the built-in backends (bwrap on Linux)."""
    import sys

    registry = Registry()
    if sys.platform.startswith("linux"):
        from corral.sandbox.backends.bwrap import BwrapBackend

        registry.register(BwrapBackend())
    return registry
