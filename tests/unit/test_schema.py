"""The schema is the single source of defaults, validation and docs: it must agree with itself."""

from __future__ import annotations

import pytest

from corral import config, schema
from corral.errors import Problem

KINDS = {
    schema.BOOL, schema.STRING, schema.CHOICE, schema.LIST, schema.NAME, schema.INT, schema.COUNT
}  # fmt: skip


@pytest.mark.parametrize("field", schema.FIELDS, ids=lambda f: f.key)
def test_every_field_is_documented(field: schema.Field) -> None:
    assert isinstance(field.doc, str)
    assert len(field.doc.strip()) > 20, f"{field.key} needs a real doc string"
    assert field.kind in KINDS


@pytest.mark.parametrize("field", schema.FIELDS, ids=lambda f: f.key)
def test_every_default_validates_against_its_own_kind(field: schema.Field) -> None:
    problems: list[Problem] = []
    checked = config._validate(field, "default", field.default, problems)
    assert problems == []
    assert checked is not None
    assert checked == field.default


@pytest.mark.parametrize("field", schema.FIELDS, ids=lambda f: f.key)
def test_choices_only_on_choice_fields(field: schema.Field) -> None:
    if field.kind == schema.CHOICE:
        assert len(field.choices) >= 2
        assert field.default in field.choices
        for choice in field.choices:
            assert f'"{choice}"' in field.expected()
    else:
        assert field.choices == ()


def test_list_defaults_are_immutable_tuples() -> None:
    for field in schema.FIELDS:
        if field.kind == schema.LIST:
            assert isinstance(field.default, tuple), field.key
            assert all(isinstance(i, str) and i for i in field.default), field.key


def test_mode_choices_and_presets() -> None:
    mode = schema.BY_KEY["sandbox.mode"]
    assert mode.kind == schema.CHOICE
    assert mode.choices == schema.MODES
    assert set(mode.choices) == {"read-only", "workspace-write", "workspace-write-network", "off"}
    assert set(schema.PRESETS) == set(schema.MODES)


@pytest.mark.parametrize("mode", schema.MODES)
def test_presets_only_set_known_keys_with_valid_values(mode: str) -> None:
    for key, value in schema.PRESETS[mode].items():
        field = schema.BY_KEY[key]
        problems: list[Problem] = []
        assert config._validate(field, f"mode {mode}", value, problems) is not None
        assert problems == []


def test_preset_network_matches_mode_name() -> None:
    assert schema.PRESETS["workspace-write-network"]["sandbox.policy.network"] is True
    assert schema.PRESETS["workspace-write"]["sandbox.policy.network"] is False
    assert schema.PRESETS["read-only"]["sandbox.policy.network"] is False
    assert schema.PRESETS["read-only"]["sandbox.policy.rw_paths"] == ()


def test_keys_are_unique_and_never_sections() -> None:
    assert len(schema.BY_KEY) == len(schema.FIELDS)
    for key in schema.BY_KEY:
        assert key not in schema.SECTIONS, f"{key} is both a setting and a section"
    assert {"sandbox", "sandbox.policy", "sandbox.backends", "sandbox.backends.bwrap"} <= (
        schema.SECTIONS
    )


def test_defaults_returns_a_fresh_dict() -> None:
    first = schema.defaults()
    first["sandbox.mode"] = "off"
    assert schema.defaults()["sandbox.mode"] == "workspace-write"
    assert set(first) == set(schema.BY_KEY)


def test_protected_entries_are_relative() -> None:
    # They are joined to every writable root; an absolute entry would escape that meaning.
    for entry in schema.BY_KEY["sandbox.policy.protected"].default:
        assert not entry.startswith(("/", "~", "$", "urn:")), entry


def test_default_deny_lists_cover_credentials_and_editor_config() -> None:
    deny_read = schema.BY_KEY["sandbox.policy.deny_read"].default
    for entry in ("~/.ssh", "~/.gnupg", "~/.aws", "urn:corral:other-homes", "/run/user"):
        assert entry in deny_read
    deny_write = schema.BY_KEY["sandbox.policy.deny_write"].default
    assert "~/.config/nvim" in deny_write
    assert "~/.local/share/nvim" in deny_write
    # The Flemma escape: ~/.local/share must never be writable by default.
    assert schema.BY_KEY["sandbox.policy.rw_paths"].default == ()


def test_field_is_immutable() -> None:
    field = schema.FIELDS[0]
    with pytest.raises(AttributeError):
        field.doc = "changed"  # type: ignore[misc]


@pytest.mark.parametrize("bad", [0, -5, True, 1.5, "10"])
def test_integer_settings_refuse_what_is_not_a_positive_integer(bad: object) -> None:
    problems: list[Problem] = []
    assert config._validate(schema.BY_KEY["tools.bash.timeout"], "global", bad, problems) is None
    assert "tools.bash.timeout" in str(problems[0]) and "positive integer" in str(problems[0])
