"""Whether a buffer layer only narrows the sandbox.

A chat file can come from an untrusted repository, so its frontmatter may make the sandbox
stricter but not looser unless the file is trusted. Each key has a direction: what counts as
"looser" for it. Anything this module does not know how to compare counts as widening.
"""

from __future__ import annotations

from corral import config, schema
from corral.paths import Context, expand_all, is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

# From the strictest to the loosest.
MODE_ORDER = ("read-only", "workspace-write", "workspace-write-network", "off")
HOME_ORDER = ("private", "visible")
BACKEND_ORDER = ("required", "auto")
WRITES_ORDER = ("review", "apply", "direct")
# Lists where removing entries loosens the sandbox (adding tightens it).
PROTECTIVE_LISTS = frozenset(
    {
        "sandbox.policy.deny_read",
        "sandbox.policy.deny_write",
        "sandbox.policy.protected",
        "tools.shell.deny",
        "tools.permissions.deny",
    }
)
# Lists where adding entries loosens it.
PERMISSIVE_LISTS = frozenset(
    {
        "sandbox.policy.env",
        "sandbox.policy.home_allow",
        "tools.available",
        "tools.auto_approve",
        "tools.shell.allow",
        "tools.fetch.allow_hosts",
        "tools.fetch.allow_private",
    }
)
# Allow-lists where empty means "no restriction": a first entry tightens, emptying loosens.
RESTRICTING_LISTS = frozenset(
    {"tools.permissions.write", "tools.permissions.read", "tools.permissions.envelope"}
)
# Booleans where true loosens, and limits where more loosens.
LOOSENING_WHEN_TRUE = frozenset(
    {
        "sandbox.policy.network",
        "sandbox.policy.allow_privileged",
        "sandbox.policy.unix_sockets",
        "tools.auto_approve_sandboxed",
        "tools.delete.allow_sandboxed",
    }
)
LIMITS = frozenset(
    {
        "tools.read.max_bytes",
        "tools.bash.timeout",
        "tools.bash.output_cap",
        *(f.key for f in schema.FIELDS if f.kind == schema.COUNT),
    }
)


def _raises(before: int, after: int, unlimited_at_zero: bool) -> bool:
    if unlimited_at_zero:
        return before != 0 and (after == 0 or after > before)
    return after > before


def _looser_in(order: tuple[str, ...], before: Any, after: Any) -> bool:
    return bool(
        after != before and (after not in order or order.index(after) > order.index(before))
    )


def _paths_widen(before: Sequence[str], after: Sequence[str], ctx: Context) -> list[str]:
    """Writable paths in `after` not already inside one of `before`."""
    old, _ = expand_all(before, ctx)
    new, _ = expand_all(after, ctx)
    return [p for p in new if not any(is_within(p, o) for o in old)]


def widenings(
    base: config.Config, narrowed: config.Config, cwd: str, env: Mapping[str, str],
    buffer_path: str | None = None,
) -> list[str]:  # fmt: skip
    """How `narrowed` (base plus the buffer layer) is looser than `base`, one reason each."""
    ctx = Context(cwd, env, buffer_path)
    reasons: list[str] = []
    for field in schema.FIELDS:
        key = field.key
        before, after = base[key], narrowed[key]
        if before == after:
            continue
        if key == "sandbox.enabled":
            if after is False:
                reasons.append(f"{key}: disables the sandbox")
        elif key == "sandbox.mode":
            if _looser_in(MODE_ORDER, before, after):
                reasons.append(f'{key}: "{before}" -> "{after}" is looser')
        elif key == "sandbox.policy.home":
            if _looser_in(HOME_ORDER, before, after):
                reasons.append(f'{key}: "{before}" -> "{after}" shows more of $HOME')
        elif key == "sandbox.writes":
            if _looser_in(WRITES_ORDER, before, after):
                reasons.append(f'{key}: "{before}" -> "{after}" checks fewer writes')
        elif key == "sandbox.unreadable_configs":
            if after != "hold":
                reasons.append(f'{key}: "{before}" -> "{after}" applies what is not checked')
        elif key == "sandbox.backend":
            if _looser_in(BACKEND_ORDER, before, after):
                reasons.append(f'{key}: "{before}" -> "{after}" may select a weaker sandbox')
        elif key in LOOSENING_WHEN_TRUE:
            if after is True:
                reasons.append(f"{key}: turns it on")
        elif key in ("tools.require_approval", "sandbox.policy.scrub_env"):
            if after is False:
                reasons.append(f"{key}: turns it off")
        elif key == "tools.approval":
            # No preset is strictly narrower than another: "read-only" refuses writes but also
            # approves reads that "ask" would ask about. Only your configuration chooses.
            reasons.append(f'{key}: "{before}" -> "{after}" changes what runs without asking')
        elif key in LIMITS:
            if _raises(before, after, schema.BY_KEY[key].kind == schema.COUNT):
                reasons.append(f"{key}: {before} -> {after} raises a limit")
        elif key in RESTRICTING_LISTS:
            if before and (not after or any(item not in before for item in after)):
                reasons.append(f"{key}: allows more than {list(before)}")
        elif key == "sandbox.policy.rw_paths":
            for path in _paths_widen(before, after, ctx):
                reasons.append(f"{key}: makes {path} writable")
        elif key in PROTECTIVE_LISTS:
            for item in before:
                if item not in after:
                    reasons.append(f"{key}: removes {item!r}")
        elif key in PERMISSIVE_LISTS:
            for item in after:
                if item not in before:
                    reasons.append(f"{key}: adds {item!r}")
        else:  # backend binaries and extra arguments: no safe direction
            reasons.append(f"{key}: may only be set by your own configuration")
    return reasons
