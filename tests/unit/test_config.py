"""Config layering (defaults < mode preset < layers), list operations, provenance, validation."""

from __future__ import annotations

import pytest

from corral import schema
from corral.config import Config, Layer, resolve
from corral.errors import ConfigError

RW = "sandbox.policy.rw_paths"
NET = "sandbox.policy.network"
DENY = "sandbox.policy.deny_read"
MODE = "sandbox.mode"


def problems_of(*layers: Layer) -> list[tuple[str, str, str]]:
    with pytest.raises(ConfigError) as info:
        resolve(list(layers))
    return [(p.key, p.layer, p.message) for p in info.value.problems]


# --- layering and provenance ---------------------------------------------------------------


def test_no_layers_gives_defaults_and_default_preset() -> None:
    cfg = resolve([])
    assert cfg[MODE] == "workspace-write"
    assert cfg[RW] == ("urn:corral:cwd",)
    assert cfg[NET] is False
    assert cfg.origins[MODE] == "default"
    assert cfg.origins[RW] == "mode workspace-write"
    assert cfg.origins[NET] == "mode workspace-write"
    assert cfg.origins[DENY] == "default"
    assert set(cfg.values) == set(schema.BY_KEY)
    assert set(cfg.origins) == set(schema.BY_KEY)


def test_mode_preset_is_applied_with_its_name() -> None:
    cfg = resolve([Layer("global", {"sandbox": {"mode": "workspace-write-network"}})])
    assert cfg[NET] is True
    assert cfg.origins[NET] == "mode workspace-write-network"
    assert cfg.origins[MODE] == "global"


def test_later_layers_win_in_order() -> None:
    cfg = resolve(
        [
            Layer("global", {"sandbox.backend": "bwrap", "sandbox.enabled": False}),
            Layer("buffer", {"sandbox.backend": "required"}),
            Layer("runtime", {"sandbox.enabled": True}),
        ]
    )
    assert cfg["sandbox.backend"] == "required"
    assert cfg.origins["sandbox.backend"] == "buffer"
    assert cfg["sandbox.enabled"] is True
    assert cfg.origins["sandbox.enabled"] == "runtime"


def test_origin_is_the_layer_name_not_its_source() -> None:
    cfg = resolve([Layer("global", {MODE: "read-only"}, source="/etc/x.toml")])
    assert cfg.origins[MODE] == "global"


def test_a_plain_list_replaces_the_value_below() -> None:
    cfg = resolve([Layer("global", {DENY: ["/secret"]})])
    assert cfg[DENY] == ("/secret",)
    assert cfg.origins[DENY] == "global"


def test_append_keeps_the_base_and_records_both_origins() -> None:
    cfg = resolve([Layer("flags", {RW: {"append": ["/extra"]}})])
    assert cfg[RW] == ("urn:corral:cwd", "/extra")
    assert cfg.origins[RW] == "mode workspace-write+flags"


def test_remove_from_defaults() -> None:
    cfg = resolve([Layer("global", {DENY: {"remove": ["~/.ssh"]}})])
    assert "~/.ssh" not in cfg[DENY]
    assert "~/.gnupg" in cfg[DENY]
    assert len(cfg[DENY]) == len(schema.BY_KEY[DENY].default) - 1
    assert cfg.origins[DENY] == "default+global"


def test_ops_apply_set_then_append_then_remove() -> None:
    cfg = resolve(
        [Layer("buffer", {RW: {"remove": ["b"], "append": ["c", "a"], "set": ["a", "b"]}})]
    )
    assert cfg[RW] == ("a", "c")
    # `set` replaces: the layer alone made the value.
    assert cfg.origins[RW] == "buffer"


def test_append_does_not_duplicate() -> None:
    cfg = resolve([Layer("flags", {RW: {"append": ["urn:corral:cwd", "/x", "/x"]}})])
    assert cfg[RW] == ("urn:corral:cwd", "/x")


def test_ops_chain_through_several_layers() -> None:
    cfg = resolve(
        [
            Layer("global", {RW: {"append": ["/g"]}}),
            Layer("buffer", {RW: {"append": ["/b"]}}),
            Layer("runtime", {RW: {"remove": ["/g"]}}),
        ]
    )
    assert cfg[RW] == ("urn:corral:cwd", "/b")
    assert cfg.origins[RW] == "mode workspace-write+global+buffer+runtime"


def test_plain_list_after_ops_replaces_everything() -> None:
    cfg = resolve([Layer("global", {RW: {"append": ["/g"]}}), Layer("buffer", {RW: ["/only"]})])
    assert cfg[RW] == ("/only",)
    assert cfg.origins[RW] == "buffer"


def test_ops_build_on_the_final_modes_preset() -> None:
    # The mode is decided by the last layer that sets it, before any layer's values apply.
    cfg = resolve([Layer("global", {RW: {"append": ["/x"]}}), Layer("flags", {MODE: "read-only"})])
    assert cfg[RW] == ("/x",)
    assert cfg.origins[RW] == "mode read-only+global"


@pytest.mark.parametrize("order", ["mode-first", "mode-last"])
def test_explicit_values_beat_the_preset_whichever_layer_sets_the_mode(order: str) -> None:
    explicit = Layer("global", {RW: ["/mine"], NET: True})
    mode = Layer("flags", {MODE: "read-only"})
    layers = [mode, explicit] if order == "mode-first" else [explicit, mode]
    cfg = resolve(layers)
    assert cfg[MODE] == "read-only"
    assert cfg[RW] == ("/mine",)
    assert cfg[NET] is True
    assert cfg.origins[RW] == "global"
    assert cfg.origins[NET] == "global"


def test_explicit_network_false_beats_network_mode() -> None:
    cfg = resolve(
        [Layer("global", {NET: False}), Layer("runtime", {MODE: "workspace-write-network"})]
    )
    assert cfg[NET] is False
    assert cfg[RW] == ("urn:corral:cwd",)
    assert cfg.origins[RW] == "mode workspace-write-network"


@pytest.mark.parametrize(
    "values",
    [
        {"sandbox": {"policy": {"network": True, "home": "private"}}},
        {"sandbox.policy": {"network": True, "home": "private"}},
        {"sandbox": {"policy.network": True, "policy.home": "private"}},
        {"sandbox.policy.network": True, "sandbox.policy.home": "private"},
    ],
    ids=["nested", "dotted-section", "dotted-inside-table", "dotted"],
)
def test_nested_tables_and_dotted_keys_are_equivalent(values: dict) -> None:
    cfg = resolve([Layer("global", values)])
    assert cfg[NET] is True
    assert cfg["sandbox.policy.home"] == "private"
    assert cfg.origins[NET] == "global"


def test_deeply_nested_backend_key() -> None:
    cfg = resolve([Layer("global", {"sandbox": {"backends": {"bwrap": {"path": "/opt/bwrap"}}}})])
    assert cfg["sandbox.backends.bwrap.path"] == "/opt/bwrap"


def test_config_is_immutable() -> None:
    cfg = resolve([])
    with pytest.raises(TypeError):
        cfg.values[MODE] = "off"  # type: ignore[index]
    with pytest.raises(TypeError):
        cfg.origins[MODE] = "x"  # type: ignore[index]
    with pytest.raises(AttributeError):
        cfg.values = {}  # type: ignore[misc]
    assert isinstance(cfg, Config)


def test_resolve_does_not_mutate_the_layer() -> None:
    values = {"sandbox": {"policy": {"rw_paths": {"append": ["/x"]}}}}
    resolve([Layer("global", values)])
    assert values == {"sandbox": {"policy": {"rw_paths": {"append": ["/x"]}}}}


# --- validation -------------------------------------------------------------------------------


def test_unknown_key_names_key_layer_and_suggests() -> None:
    [(key, layer, message)] = problems_of(
        Layer("global", {"sandbox": {"policy": {"netwrok": True}}}, source="/c.toml")
    )
    assert key == "sandbox.policy.netwrok"
    assert layer == "global /c.toml"
    assert "unknown key" in message
    assert 'did you mean "sandbox.policy.network"?' in message


def test_unknown_key_far_from_anything_has_no_suggestion() -> None:
    [(key, _, message)] = problems_of(Layer("global", {"zzzz": 1}))
    assert key == "zzzz"
    assert "did you mean" not in message


def test_misspelled_section_suggests_the_section_or_the_key() -> None:
    # `[sandbox.polcy] network = true`: the useful hint points at sandbox.policy(.network),
    # not at some unrelated key that happens to share the prefix.
    [(key, _, message)] = problems_of(Layer("global", {"sandbox": {"polcy": {"network": True}}}))
    assert key.startswith("sandbox.polcy")
    assert (
        'did you mean "sandbox.policy"?' in message
        or 'did you mean "sandbox.policy.network"?' in message
    ), message


def test_section_given_a_value() -> None:
    [(key, layer, message)] = problems_of(Layer("buffer", {"sandbox": {"policy": True}}))
    assert (key, layer) == ("sandbox.policy", "buffer")
    assert "holds settings" in message


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("sandbox.enabled", "yes", "expected a boolean, got 'yes' (string)"),
        ("sandbox.enabled", 1, "expected a boolean, got 1 (number)"),
        ("sandbox.policy.network", "true", "expected a boolean"),
        ("sandbox.backends.bwrap.path", 5, "expected a string, got 5 (number)"),
        ("sandbox.backend", "", "expected "),
        ("sandbox.backend", "bw rap", "expected "),
        ("sandbox.backend", ["bwrap"], "(list)"),
        ("sandbox.policy.rw_paths", "/a", "expected a list of strings, got '/a' (string)"),
        ("sandbox.policy.rw_paths", True, "expected a list of strings"),
    ],
)
def test_wrong_type(key: str, value: object, expected: str) -> None:
    [(k, layer, message)] = problems_of(Layer("runtime", {key: value}))
    assert k == key
    assert layer == "runtime"
    assert expected in message


def test_invalid_choice_lists_the_choices() -> None:
    [(key, layer, message)] = problems_of(Layer("global", {"sandbox": {"mode": "workspace"}}))
    assert (key, layer) == ("sandbox.mode", "global")
    for mode in schema.MODES:
        assert f'"{mode}"' in message
    assert "'workspace'" in message


def test_invalid_home_choice() -> None:
    [(key, _, message)] = problems_of(Layer("global", {"sandbox.policy.home": "hidden"}))
    assert key == "sandbox.policy.home"
    assert '"visible"' in message and '"private"' in message


@pytest.mark.parametrize(
    ("items", "index"),
    [(["/a", 3], 2), ([""], 1), (["/a", "/b", None], 3), ([["/nested"]], 1)],
)
def test_bad_list_items_name_the_item(items: list, index: int) -> None:
    [(key, layer, message)] = problems_of(Layer("flags", {RW: items}))
    assert (key, layer) == (RW, "flags")
    assert f"item {index}: expected a non-empty string" in message


@pytest.mark.parametrize(
    ("ops", "key", "fragment"),
    [
        ({"add": ["/x"]}, RW, "got add"),
        ({"append": ["/x"], "prepend": ["/y"]}, RW, "got prepend"),
        ({}, RW, "an empty table"),
        ({"append": "/x"}, RW + ".append", "expected a list of strings"),
        ({"remove": [1]}, RW + ".remove", "item 1"),
        ({"set": None}, RW + ".set", "expected a list of strings"),
    ],
)
def test_bad_ops_table(ops: dict, key: str, fragment: str) -> None:
    [(k, layer, message)] = problems_of(Layer("global", {RW: ops}))
    assert k == key
    assert layer == "global"
    assert fragment in message


def test_every_bad_op_in_one_table_is_reported() -> None:
    found = problems_of(Layer("global", {RW: {"set": 1, "append": 2, "remove": ["ok"]}}))
    assert {k for k, _, _ in found} == {RW + ".set", RW + ".append"}


def test_non_table_layer_describes_the_values() -> None:
    [(key, layer, message)] = problems_of(Layer("global", ["sandbox.mode"]))
    assert (key, layer) == ("(top)", "global")
    assert "expected a table" in message
    assert "['sandbox.mode'] (list)" in message


def test_all_problems_in_all_layers_are_reported_together() -> None:
    layers = [
        Layer(
            "global",
            {"sandbox": {"mdoe": "read-only", "enabled": "yes", "policy": {"network": True}}},
            source="/home/u/.config/corral/config.toml",
        ),
        Layer("buffer", {"sandbox.policy.rw_paths": ["ok", 7]}),
        Layer("runtime", {"sandbox.mode": "nope", "sandbox.backend": "bwrap"}),
    ]
    with pytest.raises(ConfigError) as info:
        resolve(layers)
    found = {(p.key, p.layer) for p in info.value.problems}
    assert found == {
        ("sandbox.mdoe", "global /home/u/.config/corral/config.toml"),
        ("sandbox.enabled", "global /home/u/.config/corral/config.toml"),
        ("sandbox.policy.rw_paths", "buffer"),
        ("sandbox.mode", "runtime"),
    }
    text = str(info.value)
    for key, layer in found:
        assert f"{key} ({layer})" in text
    assert 'did you mean "sandbox.mode"?' in text


def test_nothing_is_applied_when_any_layer_is_invalid() -> None:
    # A valid widening in one layer must not take effect because another layer has a typo.
    with pytest.raises(ConfigError):
        resolve(
            [
                Layer("global", {"sandbox.policy.network": True, MODE: "off"}),
                Layer("buffer", {"sandbox.policy.rw_pathz": ["/"]}),
            ]
        )


def test_a_list_of_more_than_a_thousand_entries_is_refused_by_name() -> None:
    """r31c BIGFM: 120,000 deny_read entries from a chat's frontmatter (narrowing, so
    accepted) were merged in quadratic time on every request: the editor froze for minutes."""
    many = [f"/x/{i}" for i in range(1001)]
    for value in (many, {"append": many}):
        found = problems_of(Layer("buffer", {DENY: value}))
        assert found and found[0][0].startswith(DENY) and "more than the 1000" in found[0][2]
    cfg = resolve([Layer("buffer", {DENY: {"append": many[:1000]}})])
    assert cfg[DENY][-1] == "/x/999" and len(set(cfg[DENY])) == len(cfg[DENY])
