"""The approval chain: may this tool call run without asking?

Resolvers `{name, priority, resolve(context)}` answer "approve", "require_approval", "deny" or
None (pass). The highest priority asks first and the first answer wins. A resolver that raises
or answers garbage fails closed: the answer is "require_approval" (and the fault is logged),
never "pass", which would let a lower resolver (the sandbox's) approve. When nobody answers, the
answer is "require_approval". Every decision names the resolver (a URN) that made it.

Built-in resolvers:
  urn:corral:approval:config       100  tools.auto_approve from your own configuration
  urn:corral:approval:frontmatter   90  tools.auto_approve set by the buffer's frontmatter
  (third-party resolvers)           50  by default
  urn:corral:approval:sandbox       25  tools that can_auto_approve_if_sandboxed, when a sandbox
                                        really confines them
  urn:corral:approval:catch-all      0  approves everything, only with tools.require_approval off
"""

from __future__ import annotations

from corral.frozen import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Final, Literal

    from corral.toolguard.classify.result import Classification

    Answer = Literal["approve", "require_approval", "deny"]

APPROVE: Final = "approve"
REQUIRE: Final = "require_approval"
DENY: Final = "deny"
ANSWERS: tuple[Answer, ...] = (APPROVE, REQUIRE, DENY)
URN = "urn:corral:approval:"
DEFAULT = URN + "default"  # (what answers when no resolver did: you are asked)
SANDBOX = URN + "sandbox"  # (the sandbox's resolver: see _sandbox)
DEFAULT_PRIORITY = 50


class Decision(Frozen):
    __slots__ = ("decision", "reason", "source")
    decision: Answer
    source: str  # the resolver's URN, or the guard rule that decided
    reason: str

    def __init__(self, decision: Answer, source: str, reason: str = "") -> None:
        self._set(decision=decision, source=source, reason=reason)

    def as_dict(self) -> dict[str, str]:
        return {"decision": self.decision, "source": self.source, "reason": self.reason}


class CallContext(Frozen):
    """What resolvers may look at: plain data, resolved once for the call."""

    __slots__ = (
        "buffer_values",
        "capabilities",
        "classification",
        "config",
        "input",
        "lua_auto_approve",
        "sandboxed",
        "tool",
    )
    tool: str
    input: Mapping[str, Any]
    capabilities: frozenset[str]
    config: Mapping[str, Any]  # resolved settings, all layers
    buffer_values: Mapping[str, Any]  # what the buffer's frontmatter itself set (dotted keys)
    sandboxed: bool  # enabled for the buffer AND a backend is really available
    classification: Classification | None  # for bash only
    # a Lua tools.auto_approve function's answer, if one is set: one of ANSWERS, or
    # "error: ..." when it failed (None: it passed, or there is none)
    lua_auto_approve: str | None

    def __init__(
        self,
        *,
        tool: str,
        input: Mapping[str, Any],
        capabilities: frozenset[str],
        config: Mapping[str, Any],
        sandboxed: bool,
        buffer_values: Mapping[str, Any] | None = None,
        classification: Classification | None = None,
        lua_auto_approve: str | None = None,
    ) -> None:
        self._set(
            tool=tool,
            input=input,
            capabilities=capabilities,
            config=config,
            buffer_values=buffer_values or {},
            sandboxed=sandboxed,
            classification=classification,
            lua_auto_approve=lua_auto_approve,
        )


class Resolver(Frozen):
    __slots__ = ("name", "priority", "resolve")
    name: str
    priority: int
    # an answer, (an answer, why), or None to pass; anything else is garbage the chain logs
    resolve: Callable[[CallContext], object]

    def __init__(self, name: str, priority: int, resolve: Callable[[CallContext], object]) -> None:
        if not name.startswith(URN):
            name = URN + name
        self._set(name=name, priority=priority, resolve=resolve)


def _answer(value: object) -> Answer | None:
    """`value` as one of ANSWERS, or None when it is none of them."""
    return next((answer for answer in ANSWERS if answer == value), None)


def _config(ctx: CallContext) -> tuple[Answer, str] | None:
    said = ctx.lua_auto_approve
    if said is not None:
        answer = _answer(said)
        if answer is not None:
            return answer, f"tools.auto_approve (a Lua function) answered {answer}"
        return REQUIRE, f"tools.auto_approve (a Lua function) {said}"[:300]
    if "tools.auto_approve" in ctx.buffer_values:
        return None  # the frontmatter's own list is the frontmatter resolver's to judge
    if ctx.tool in ctx.config["tools.auto_approve"]:
        return APPROVE, f"tools.auto_approve lists {ctx.tool}"
    return None


def _frontmatter(ctx: CallContext) -> tuple[Answer, str] | None:
    listed = ctx.buffer_values.get("tools.auto_approve")
    if listed is None or ctx.tool not in ctx.config["tools.auto_approve"]:
        return None
    return APPROVE, f"the frontmatter's tools.auto_approve lists {ctx.tool}"


def _sandbox(ctx: CallContext) -> tuple[Answer, str] | None:
    if (
        "can_auto_approve_if_sandboxed" in ctx.capabilities
        and ctx.config["tools.auto_approve_sandboxed"]
        and ctx.tool in ctx.config["tools.available"]  # not removed by the frontmatter
        and "tools.auto_approve" not in ctx.buffer_values  # nor taken over by it
        and ctx.sandboxed  # enabled, and a backend really available: never the fallback
    ):
        if "read-only" in ctx.capabilities:  # (a file tool's read in the workspace, see guard)
            return APPROVE, "a sandboxed command may read it unasked too"
        return APPROVE, "the sandbox confines it"
    return None


def _catch_all(ctx: CallContext) -> tuple[Answer, str] | None:
    if ctx.config["tools.require_approval"]:
        return None
    return APPROVE, "tools.require_approval is off"


BUILTIN = (
    Resolver("config", 100, _config),
    Resolver("frontmatter", 90, _frontmatter),
    Resolver("sandbox", 25, _sandbox),
    Resolver("catch-all", 0, _catch_all),
)


class Chain:
    def __init__(self, log: Callable[[str], None] | None = None) -> None:
        self._resolvers: dict[str, Resolver] = {r.name: r for r in BUILTIN}
        self._log = log or (lambda message: None)

    def register(
        self, name: str, resolve: Callable[[CallContext], object], priority: int = DEFAULT_PRIORITY
    ) -> str:
        resolver = Resolver(name, priority, resolve)
        self._resolvers[resolver.name] = resolver
        return resolver.name

    def unregister(self, name: str) -> bool:
        return self._resolvers.pop(name if name.startswith(URN) else URN + name, None) is not None

    def resolvers(self) -> list[Resolver]:
        """By priority (highest first), then name."""
        return sorted(self._resolvers.values(), key=lambda r: (-r.priority, r.name))

    def decide(self, ctx: CallContext) -> Decision:
        for resolver in self.resolvers():
            try:
                answer = resolver.resolve(ctx)
            except Exception as e:  # a third-party resolver must not break the guard
                self._log(f"approval resolver {resolver.name} failed: {e!r}")
                return Decision(REQUIRE, resolver.name, f"the resolver failed: {e!r}"[:300])
            if answer is None:
                continue
            reason: object = ""
            if isinstance(answer, tuple) and len(answer) == 2:
                answer, reason = answer
            decision = _answer(answer)
            if decision is None:
                self._log(
                    f"approval resolver {resolver.name} answered {answer!r} "
                    f"(not one of {', '.join(ANSWERS)})"
                )
                why = f"the resolver answered {answer!r}, not one of {', '.join(ANSWERS)}"
                return Decision(REQUIRE, resolver.name, why[:300])
            return Decision(decision, resolver.name, str(reason))
        return Decision(
            REQUIRE, DEFAULT, "corral asks before this kind of call unless "
            "tools.auto_approve (or tools.shell.allow for commands) lists it",
        )  # fmt: skip
