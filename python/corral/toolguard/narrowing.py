"""Whether a buffer layer only narrows the sandbox.

A chat file can come from an untrusted repository, so its frontmatter may make the sandbox
stricter but not looser unless the file is trusted. Each key has a direction, in the schema
(`Field.narrows`): what counts as "looser" for it. A key without one (schema.YOURS) is only
yours to set: any change to it counts as widening.
"""

from __future__ import annotations

from corral import config, schema
from corral.paths import PathContext, expand_all, is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


def _raises(before: int, after: int, unlimited_at_zero: bool) -> bool:
    if unlimited_at_zero:
        return before != 0 and (after == 0 or after > before)
    return after > before


def _looser_in(order: tuple[str, ...], before: Any, after: Any) -> bool:
    """Whether `after` comes later in `order` than `before`; a value outside it (a backend
    named outright) is no safe step either way."""
    if after == before:
        return False
    if after not in order or before not in order:
        return True
    return order.index(after) > order.index(before)


def _paths_widen(before: Sequence[str], after: Sequence[str], ctx: PathContext) -> list[str]:
    """Writable paths in `after` not already inside one of `before`."""
    old, _ = expand_all(before, ctx)
    new, _ = expand_all(after, ctx)
    return [p for p in new if not any(is_within(p, o) for o in old)]


def widenings(
    base: config.Config, narrowed: config.Config, cwd: str, env: Mapping[str, str],
    buffer_path: str | None = None,
) -> list[str]:  # fmt: skip
    """How `narrowed` (base plus the buffer layer) is looser than `base`, one reason each."""
    ctx = PathContext(cwd, env, buffer_path)
    reasons: list[str] = []
    for field in schema.FIELDS:
        key = field.key
        before, after = base[key], narrowed[key]
        if before == after:
            continue
        how = field.narrows
        if how == schema.ORDERED:
            if _looser_in(field.order, before, after):
                reasons.append(f'{key}: "{before}" -> "{after}" is looser')
        elif how == schema.TRUE_LOOSENS:
            if after is True:
                reasons.append(f"{key}: turns it on")
        elif how == schema.FALSE_LOOSENS:
            if after is False:
                reasons.append(f"{key}: turns it off")
        elif how == schema.MORE_LOOSENS:
            if _raises(before, after, field.kind == schema.COUNT):
                reasons.append(f"{key}: {before} -> {after} raises a limit")
        elif how == schema.EMPTYING_LOOSENS:
            if before and (not after or any(item not in before for item in after)):
                reasons.append(f"{key}: allows more than {list(before)}")
        elif how == schema.WIDER_PATHS:
            for path in _paths_widen(before, after, ctx):
                reasons.append(f"{key}: makes {path} writable")
        elif how == schema.REMOVING_LOOSENS:
            for item in before:
                if item not in after:
                    reasons.append(f"{key}: removes {item!r}")
        elif how == schema.ADDING_LOOSENS:
            for item in after:
                if item not in before:
                    reasons.append(f"{key}: adds {item!r}")
        else:  # schema.YOURS: tools.approval (no preset is strictly narrower), binaries, ...
            reasons.append(f"{key}: may only be set by your own configuration")
    return reasons
