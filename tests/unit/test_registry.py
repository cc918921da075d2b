"""The backend registry: ordering, selection (auto/required/explicit) and cached detection.

The backends here are fakes on purpose: the registry is under test, not a sandbox.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest

from corral.errors import BackendError
from corral.sandbox.backends import Backend, Registry, Wrapped, default_registry

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence
    from pathlib import Path

    from corral.sandbox.policy import Policy


class Fake(Backend):
    def __init__(
        self,
        name: str,
        priority: int = 0,
        reason: str | None = None,
        error: Exception | None = None,
    ) -> None:
        self.name = name
        self.priority = priority
        self.reason = reason
        self.error = error
        self.key: Hashable = ()
        self.calls = 0

    def detection_key(self, policy: Policy) -> Hashable:
        return self.key

    def available(self, policy: Policy) -> str | None:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return self.reason

    def wrap(self, policy: Policy, argv: Sequence[str], *, launcher_fds: bool = False) -> Wrapped:
        return Wrapped([self.name, *argv], policy.env, self.name, True)


@pytest.fixture
def policy_for(make_policy: Callable[..., Policy], ws: Path) -> Callable[..., Policy]:
    def make(backend: str = "auto", **extra: object) -> Policy:
        return make_policy(ws, {"sandbox.backend": backend, **extra})

    return make


def registry_of(*backends: Backend) -> Registry:
    r = Registry()
    for b in backends:
        r.register(b)
    return r


# --- register / get / get_all ----------------------------------------------------------------


def test_register_get_unregister_count() -> None:
    r = Registry()
    assert r.count() == 0 and r.get_all() == []
    a = Fake("a")
    r.register(a)
    assert r.get("a") is a
    assert r.count() == 1
    assert r.unregister("a") is True
    assert r.unregister("a") is False
    assert r.get("a") is None
    assert r.count() == 0


def test_register_same_name_replaces() -> None:
    first, second = Fake("a", 1), Fake("a", 2)
    r = registry_of(first, second)
    assert r.count() == 1
    assert r.get("a") is second


@pytest.mark.parametrize("name", ["", "auto", "required", "none"])
def test_reserved_or_empty_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError):
        Registry().register(Fake(name))


def test_get_all_by_priority_then_name() -> None:
    r = registry_of(Fake("zeta", 10), Fake("alpha", 10), Fake("low", 1), Fake("high", 99))
    assert [b.name for b in r.get_all()] == ["high", "alpha", "zeta", "low"]


def test_get_all_returns_a_copy() -> None:
    r = registry_of(Fake("a", 1), Fake("b", 2))
    listed = r.get_all()
    listed.clear()
    listed.append(Fake("intruder"))
    assert [b.name for b in r.get_all()] == ["b", "a"]
    assert r.count() == 2


# --- selection -------------------------------------------------------------------------------


def test_auto_picks_the_highest_priority_available(policy_for: Callable[..., Policy]) -> None:
    best = Fake("best", 50, reason="kernel says no")
    good = Fake("good", 10)
    worse = Fake("worse", 1)
    sel = registry_of(worse, good, best).select(policy_for("auto"))
    assert sel.backend is good
    assert sel.reason == ""
    assert sel.tried[:2] == (("best", "kernel says no"), ("good", None))


def test_required_picks_like_auto(policy_for: Callable[..., Policy]) -> None:
    good = Fake("good", 10)
    sel = registry_of(Fake("bad", 20, reason="no"), good).select(policy_for("required"))
    assert sel.backend is good


def test_auto_with_nothing_available_is_unsandboxed_with_reasons(
    policy_for: Callable[..., Policy],
) -> None:
    r = registry_of(Fake("a", 2, reason="a missing"), Fake("b", 1, reason="b broken"))
    sel = r.select(policy_for("auto"))
    assert sel.backend is None
    assert "a: a missing" in sel.reason and "b: b broken" in sel.reason
    assert sel.tried == (("a", "a missing"), ("b", "b broken"))


def test_auto_with_an_empty_registry(policy_for: Callable[..., Policy]) -> None:
    sel = Registry().select(policy_for("auto"))
    assert sel.backend is None
    assert "no backend is registered" in sel.reason


def test_required_with_nothing_available_raises(policy_for: Callable[..., Policy]) -> None:
    r = registry_of(Fake("a", reason="a missing"))
    with pytest.raises(BackendError) as info:
        r.select(policy_for("required"))
    assert "required" in str(info.value) and "a missing" in str(info.value)
    with pytest.raises(BackendError):
        Registry().select(policy_for("required"))


def test_explicit_name_beats_priority(policy_for: Callable[..., Policy]) -> None:
    low = Fake("low", 1)
    sel = registry_of(Fake("high", 100), low).select(policy_for("low"))
    assert sel.backend is low
    assert sel.tried == (("low", None),)


def test_explicit_unknown_raises_listing_registered(policy_for: Callable[..., Policy]) -> None:
    with pytest.raises(BackendError) as info:
        registry_of(Fake("a"), Fake("b")).select(policy_for("nope"))
    assert "'nope'" in str(info.value)
    assert "a, b" in str(info.value)


def test_explicit_unavailable_raises_with_reason(policy_for: Callable[..., Policy]) -> None:
    # An explicit choice never falls back to running unsandboxed.
    r = registry_of(Fake("only", reason="binary not found"), Fake("other", 5))
    with pytest.raises(BackendError) as info:
        r.select(policy_for("only"))
    assert "binary not found" in str(info.value)


def test_raising_available_is_reported_unavailable(policy_for: Callable[..., Policy]) -> None:
    broken = Fake("broken", 100, error=RuntimeError("boom"))
    fine = Fake("fine", 1)
    r = registry_of(broken, fine)
    sel = r.select(policy_for("auto"))
    assert sel.backend is fine
    assert sel.tried[0][0] == "broken"
    reason = sel.tried[0][1]
    assert reason is not None and "boom" in reason and "RuntimeError" in reason
    with pytest.raises(BackendError) as info:
        r.select(policy_for("broken"))
    assert "boom" in str(info.value)


@pytest.mark.parametrize(
    ("layer", "why"),
    [({"sandbox.mode": "off"}, 'mode is "off"'), ({"sandbox.enabled": False}, "disabled")],
)
def test_disabled_policy_selects_nothing_without_detecting(
    policy_for: Callable[..., Policy], layer: dict, why: str
) -> None:
    a = Fake("a")
    sel = registry_of(a).select(policy_for("required", **layer))
    assert sel.backend is None
    assert why in sel.reason
    assert a.calls == 0


# --- detection cache -------------------------------------------------------------------------


def test_detection_is_cached(policy_for: Callable[..., Policy]) -> None:
    a = Fake("a")
    r = registry_of(a)
    p = policy_for()
    for _ in range(3):
        r.select(p)
    r.availability(a, p)
    assert a.calls == 1


def test_register_and_unregister_clear_the_cache(policy_for: Callable[..., Policy]) -> None:
    a = Fake("a", 10)
    r = registry_of(a)
    p = policy_for()
    r.select(p)
    r.register(Fake("b", 1))
    r.select(p)
    assert a.calls == 2
    r.unregister("b")
    r.select(p)
    assert a.calls == 3
    r.select(p)
    assert a.calls == 3


def test_detection_key_change_redetects(policy_for: Callable[..., Policy]) -> None:
    a = Fake("a")
    r = registry_of(a)
    p = policy_for()
    r.select(p)
    a.key = ("other-path",)
    a.reason = "gone"
    assert r.select(p).backend is None
    assert a.calls == 2
    a.key = ()
    assert r.select(p).backend is a  # the first key's answer is still cached
    assert a.calls == 2


def test_failing_detection_is_cached_too(policy_for: Callable[..., Policy]) -> None:
    a = Fake("a", error=OSError("nope"))
    r = registry_of(a)
    r.select(policy_for())
    r.select(policy_for())
    assert a.calls == 1


# --- wrap --------------------------------------------------------------------------------------


def test_wrap_with_a_backend(policy_for: Callable[..., Policy]) -> None:
    w = registry_of(Fake("a")).wrap(policy_for(), ["ls"])
    assert w.argv == ("a", "ls")
    assert w.sandboxed is True


def test_wrap_unsandboxed_says_why(policy_for: Callable[..., Policy]) -> None:
    w = registry_of(Fake("a", reason="missing")).wrap(policy_for("auto"), ["ls", "-l"])
    assert w.argv == ("ls", "-l")
    assert w.sandboxed is False
    assert w.backend == "none"
    assert any("a: missing" in n for n in w.notes)


def test_wrap_required_refuses(policy_for: Callable[..., Policy]) -> None:
    with pytest.raises(BackendError):
        registry_of(Fake("a", reason="missing")).wrap(policy_for("required"), ["ls"])


def test_capabilities_are_data() -> None:
    assert "can_auto_approve_if_sandboxed" in Fake("a").capabilities
    from corral.sandbox.backends.none import NoneBackend

    assert "can_auto_approve_if_sandboxed" not in NoneBackend().capabilities


def test_default_registry() -> None:
    r = default_registry()
    if sys.platform.startswith("linux"):
        assert [b.name for b in r.get_all()] == ["bwrap"]
    else:
        assert r.count() == 0
    assert default_registry() is not r


def test_auto_fallback_runs_unsandboxed_with_the_scrubbed_environment(
    make_policy: Callable[..., Policy], ws: Path, host_env: dict[str, str]
) -> None:
    policy = make_policy(ws, env={**host_env, "OPENAI_API_KEY": "sk-fallback-marker"})
    wrapped = Registry().wrap(policy, ["true"])  # an empty registry: nothing is available
    assert not wrapped.sandboxed
    assert wrapped.argv == ("true",)
    assert "OPENAI_API_KEY" not in dict(wrapped.env)
    assert dict(wrapped.env) == dict(policy.env)
    assert "no sandbox backend is available" in wrapped.notes[0]


class Configured(Fake):
    def configured(self, policy: Policy) -> bool:
        return True


def test_auto_never_falls_back_past_an_explicitly_configured_backend(
    policy_for: Callable[..., Policy],
) -> None:
    registry = registry_of(Configured("pinned", 10, reason="no such file: /opt/bwrap"))
    with pytest.raises(BackendError, match="configured explicitly but not available"):
        registry.select(policy_for("auto"))
    # without explicit configuration, auto falls back (and says why)
    fallback = registry_of(Fake("plain", 10, reason="missing")).select(policy_for("auto"))
    assert fallback.backend is None and "missing" in fallback.reason


def test_outcome_never_raises_and_says_which_case(policy_for: Callable[..., Policy]) -> None:
    working = registry_of(Fake("good", 10))
    assert working.outcome(policy_for("auto")) == ("good", "", False)
    broken = registry_of(Fake("bad", 10, reason="no namespaces"))
    name, why, refused = broken.outcome(policy_for("auto"))
    assert (name, refused) == (None, False) and "no namespaces" in why  # runs unsandboxed
    name, why, refused = broken.outcome(policy_for("required"))
    assert (name, refused) == (None, True) and "required" in why  # refused instead
