"""Frontmatter narrowing: which changes to each setting count as widening."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from corral import config
from corral.toolguard import narrowing

if TYPE_CHECKING:
    from pathlib import Path


def widens(tmp_path: Path, buffer: dict[str, Any], base: dict[str, Any] | None = None) -> bool:
    layers = [config.Layer("global", base or {})]
    before = config.resolve(layers)
    after = config.resolve([*layers, config.Layer("buffer", buffer)])
    env = {"HOME": str(tmp_path / "home")}
    return bool(narrowing.widenings(before, after, str(tmp_path), env))


@pytest.mark.parametrize(
    ("buffer", "base", "expected"),
    [
        ({"tools.available": {"remove": ["bash"]}}, None, False),  # a chat may drop tools
        ({"tools.available": ["read", "teleport"]}, {"tools.available": ["read"]}, True),
        ({"tools.auto_approve": ["bash"]}, None, True),
        ({"tools.approval": "read-only"}, None, True),  # approves reads "ask" would ask about
        ({"tools.approval": "full"}, None, True),
        ({"tools.require_approval": False}, None, True),
        ({"tools.shell.deny": {"append": ["curl"]}}, None, False),
        ({"tools.shell.deny": []}, {"tools.shell.deny": ["curl"]}, True),
        ({"tools.shell.allow": ["make"]}, None, True),
        ({"tools.permissions.write": ["src/**"]}, None, False),  # a first restriction
        ({"tools.permissions.write": []}, {"tools.permissions.write": ["src/**"]}, True),
        ({"tools.permissions.write": ["src/**", "**"]}, {"tools.permissions.write": ["src/**"]},
         True),
        ({"tools.permissions.deny": {"remove": [".env"]}}, None, True),
        ({"tools.bash.timeout": 10}, None, False),
        ({"sandbox.limits.processes": 64}, None, False),  # a chat may lower a limit
        ({"sandbox.limits.processes": 4096}, None, True),
        ({"sandbox.limits.processes": 0}, None, True),  # 0 lifts it: the widest of all
        ({"sandbox.limits.processes": 64}, {"sandbox.limits.processes": 0}, False),
        ({"sandbox.limits.timeout": 30}, None, False),  # from none to a bound narrows
        ({"sandbox.limits.timeout": 0}, {"sandbox.limits.timeout": 30}, True),
        ({"tools.bash.timeout": 10000}, None, True),
        ({"tools.delete.allow_sandboxed": True}, None, True),
        ({"tools.fetch.allow_hosts": ["example.com"]}, None, True),
        ({"frontmatter.allow_widening": True}, None, True),
        ({"sandbox.mode": "read-only"}, None, False),
        ({"sandbox.enabled": False}, None, True),
        ({"sandbox.unreadable_configs": "apply"}, None, True),
        ({"sandbox.unreadable_configs": "hold"}, {"sandbox.unreadable_configs": "apply"}, False),
        ({"sandbox.writes": "review"}, None, False),
        ({"sandbox.writes": "direct"}, None, True),
        ({"sandbox.policy.home": "visible"}, None, True),
        ({"sandbox.backend": "required"}, None, False),
        # a backend named outright, then "auto" (which may fall back): looser, not a crash
        ({"sandbox.backend": "auto"}, {"sandbox.backend": "bwrap"}, True),
    ],
)  # fmt: skip
def test_direction_of_each_change(
    tmp_path: Path, buffer: dict[str, Any], base: dict[str, Any] | None, expected: bool
) -> None:
    assert widens(tmp_path, buffer, base) is expected


def test_the_schema_gives_every_ordered_key_all_its_values_and_the_docs_say_it() -> None:
    from corral import schema

    for field in schema.FIELDS:
        if field.narrows == schema.ORDERED and field.kind == schema.CHOICE:
            assert sorted(field.order) == sorted(field.choices), field.key
        assert field.narrowing().startswith("Frontmatter: "), field.key
