"""The approval chain: priorities, provenance, faulty resolvers, the built-ins' conditions."""

from __future__ import annotations

from typing import Any

import pytest

from corral import schema
from corral.toolguard import approval
from corral.toolguard.approval import APPROVE, DENY, REQUIRE, CallContext, Chain


def config(**overrides: Any) -> dict[str, Any]:
    values = schema.defaults()
    values.update({k.replace("__", "."): v for k, v in overrides.items()})
    return values


def ctx(tool: str = "bash", sandboxed: bool = True, **kw: Any) -> CallContext:
    caps = frozenset({"can_auto_approve_if_sandboxed"}) if tool == "bash" else frozenset()
    kw.setdefault("config", config())
    return CallContext(tool=tool, input={}, capabilities=caps, sandboxed=sandboxed, **kw)


def test_nothing_approves_a_write_by_default() -> None:
    d = Chain().decide(ctx("write"))
    assert (d.decision, d.source) == (REQUIRE, "urn:corral:approval:default")


def test_sandboxed_bash_is_approved_by_the_sandbox_resolver() -> None:
    d = Chain().decide(ctx("bash", sandboxed=True))
    assert (d.decision, d.source) == (APPROVE, "urn:corral:approval:sandbox")


@pytest.mark.parametrize(
    ("why", "kw"),
    [
        ("no backend: the unsandboxed fallback", {"sandboxed": False}),
        ("switched off", {"config": config(tools__auto_approve_sandboxed=False)}),
        ("removed by frontmatter", {"config": config(tools__available=("read",))}),
        ("frontmatter took over the list", {"buffer_values": {"tools.auto_approve": []}}),
    ],
)
def test_the_sandbox_resolver_holds_back(why: str, kw: dict[str, Any]) -> None:
    kw.setdefault("sandboxed", True)
    assert Chain().decide(ctx("bash", **kw)).decision == REQUIRE, why


def test_only_tools_that_declare_the_capability_are_auto_approved_when_sandboxed() -> None:
    assert Chain().decide(ctx("write", sandboxed=True)).decision == REQUIRE


def test_config_list_approves_and_names_itself() -> None:
    d = Chain().decide(ctx("write", config=config(tools__auto_approve=("write",))))
    assert (d.decision, d.source) == (APPROVE, "urn:corral:approval:config")


def test_frontmatter_list_is_the_frontmatter_resolvers() -> None:
    values = config(tools__auto_approve=("edit",))
    d = Chain().decide(ctx("edit", config=values, buffer_values={"tools.auto_approve": ["edit"]}))
    assert (d.decision, d.source) == (APPROVE, "urn:corral:approval:frontmatter")


def test_a_lua_function_answer_counts_for_the_config_resolver() -> None:
    d = Chain().decide(ctx("write", lua_auto_approve="approve"))
    assert (d.decision, d.source) == (APPROVE, "urn:corral:approval:config")
    assert Chain().decide(ctx("write", lua_auto_approve="require_approval")).decision == REQUIRE


def test_catch_all_only_without_require_approval() -> None:
    d = Chain().decide(ctx("write", config=config(tools__require_approval=False)))
    assert (d.decision, d.source) == (APPROVE, "urn:corral:approval:catch-all")


def test_priority_order_and_first_answer_wins() -> None:
    chain = Chain()
    chain.register("team", lambda c: DENY, priority=95)
    values = config(tools__auto_approve=("bash",))
    d = chain.decide(ctx("bash", config=values))
    assert (d.decision, d.source) == (APPROVE, "urn:corral:approval:config")  # 100 beats 95
    d = chain.decide(ctx("bash"))  # config passes: the team resolver (95) decides
    assert (d.decision, d.source) == (DENY, "urn:corral:approval:team")
    names = [r.name for r in chain.resolvers()]
    assert names == [
        "urn:corral:approval:config",
        "urn:corral:approval:team",
        "urn:corral:approval:frontmatter",
        "urn:corral:approval:sandbox",
        "urn:corral:approval:catch-all",
    ]


def test_third_party_default_priority_sits_above_the_sandbox() -> None:
    chain = Chain()
    chain.register("urn:corral:approval:reviewer", lambda c: (REQUIRE, "needs review"))
    d = chain.decide(ctx("bash"))
    assert d.as_dict() == {
        "decision": REQUIRE,
        "source": "urn:corral:approval:reviewer",
        "reason": "needs review",
    }
    assert chain.unregister("reviewer")
    assert chain.decide(ctx("bash")).source == "urn:corral:approval:sandbox"


def test_faulty_resolvers_fail_closed_and_are_logged() -> None:
    """A resolver that raises or answers garbage asks: before, it was skipped, and the sandbox
    resolver below it approved (fail open)."""
    logged: list[str] = []
    chain = Chain(log=logged.append)

    def boom(c: CallContext) -> str:
        raise RuntimeError("kaput")

    chain.register("boom", boom, priority=99)
    d = chain.decide(ctx("bash"))
    assert (d.decision, d.source) == (REQUIRE, "urn:corral:approval:boom")
    assert "kaput" in d.reason
    assert "urn:corral:approval:boom" in logged[0] and "kaput" in logged[0]
    chain.unregister("boom")
    chain.register("garbage", lambda c: "yes please", priority=98)
    d = chain.decide(ctx("bash"))
    assert (d.decision, d.source) == (REQUIRE, "urn:corral:approval:garbage")
    assert "urn:corral:approval:garbage" in logged[1] and "yes please" in logged[1]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("approve", APPROVE), ("require_approval", REQUIRE), ("deny", DENY),
     ("error: boom", REQUIRE), ("error: answered 42", REQUIRE)],
)  # fmt: skip
def test_lua_function_answers(answer: str, expected: str) -> None:
    d = Chain().decide(ctx("bash", lua_auto_approve=answer))
    assert (d.decision, d.source) == (expected, "urn:corral:approval:config")


def test_every_builtin_is_named_by_urn() -> None:
    assert all(r.name.startswith(approval.URN) for r in approval.BUILTIN)


def test_a_context_missing_a_field_is_refused_when_built() -> None:
    # (it took any keywords: a missing one failed only when a resolver came to read it)
    with pytest.raises(TypeError, match="sandboxed"):
        CallContext(tool="bash", input={}, capabilities=frozenset(), config=config())  # type: ignore[call-arg]
