"""Configuration layers and their resolution into one immutable `Config`.

Order, lowest first: schema defaults < the mode's preset < the given layers (global, buffer,
runtime for Neovim; file, environment, flags for the CLI). Every value remembers which layers
made it, so status can show where it came from. Every problem in every layer is collected and
raised together as one `ConfigError`; nothing invalid is dropped or half-applied.
"""

from __future__ import annotations

from corral import schema
from corral.errors import ConfigError, Problem
from corral.frozen import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence
    from typing import Any

LIST_OPS = ("set", "append", "remove")


class Layer(Frozen):
    """One source of settings: `name` is its level, `source` says where exactly (a file path)."""

    __slots__ = ("name", "source", "values")
    name: str
    source: str
    values: Mapping[str, Any]

    def __init__(self, name: str, values: Mapping[str, Any], source: str = "") -> None:
        self._set(name=name, values=values, source=source)

    @property
    def label(self) -> str:
        return f"{self.name} {self.source}" if self.source else self.name


class Config(Frozen):
    """Resolved settings: `values[key]` and `origins[key]` (the layers that set it)."""

    __slots__ = ("origins", "values")
    values: Mapping[str, Any]
    origins: Mapping[str, str]

    def __init__(self, values: dict[str, Any], origins: dict[str, str]) -> None:
        from types import MappingProxyType

        self._set(values=MappingProxyType(values), origins=MappingProxyType(origins))

    def __getitem__(self, key: str) -> Any:
        return self.values[key]


class _Ops(Frozen):
    """A validated list operation: replace with `set` (or keep), then append, then remove."""

    __slots__ = ("append", "remove", "set")
    set: tuple[str, ...] | None
    append: tuple[str, ...]
    remove: tuple[str, ...]

    def __init__(
        self, set: tuple[str, ...] | None, append: tuple[str, ...], remove: tuple[str, ...]
    ) -> None:
        self._set(set=set, append=append, remove=remove)

    def apply(self, base: tuple[str, ...]) -> tuple[str, ...]:
        items = list(self.set if self.set is not None else base)
        seen = set(items)  # (not `in items`: quadratic in the length, review r31c)
        for item in self.append:
            if item not in seen:
                seen.add(item)
                items.append(item)
        removed = set(self.remove)
        return tuple(i for i in items if i not in removed)


def _describe(value: Any) -> str:
    kind = {bool: "boolean", str: "string", int: "number", float: "number"}.get(type(value))
    if kind is None:
        kind = "table" if isinstance(value, dict) else type(value).__name__
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{shown} ({kind})"


def _walk(values: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Yield (dotted key, value) for each leaf, accepting nested tables and dotted names."""
    for name, value in values.items():
        key = f"{prefix}{name}"
        if key in schema.BY_KEY:
            yield key, value
        elif key in schema.SECTIONS and isinstance(value, dict):
            yield from _walk(value, key + ".")
        else:
            yield key, value


def flatten(values: Mapping[str, Any]) -> dict[str, Any]:
    """A layer table (nested or dotted) as {dotted key: value}, values as given."""
    return dict(_walk(values))


MAX_LIST_ITEMS = 1000  # of one list in one layer (a chat's frontmatter is the command's to write)


def _check_strings(key: str, layer: str, items: Any, problems: list[Problem]) -> bool:
    if not isinstance(items, list | tuple):
        problems.append(Problem(key, layer, f"expected a list of strings, got {_describe(items)}"))
        return False
    if len(items) > MAX_LIST_ITEMS:
        many = f"{len(items)} entries, more than the {MAX_LIST_ITEMS} a list takes"
        problems.append(Problem(key, layer, many))
        return False
    for i, item in enumerate(items, 1):
        if not isinstance(item, str) or not item:
            problems.append(
                Problem(key, layer, f"item {i}: expected a non-empty string, got {_describe(item)}")
            )
            return False
    return True


def _validate(field: schema.Field, layer: str, value: Any, problems: list[Problem]) -> Any:
    """Return the normalised value, or None after recording why it is invalid."""
    key, kind = field.key, field.kind
    bad = Problem(key, layer, f"expected {field.expected()}, got {_describe(value)}")
    if kind == schema.BOOL:
        if isinstance(value, bool):
            return value
    elif kind == schema.STRING:
        if isinstance(value, str):
            return value
    elif kind == schema.INT:
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    elif kind == schema.COUNT:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    elif kind == schema.CHOICE:
        if isinstance(value, str) and value in field.choices:
            return value
    elif kind == schema.NAME:
        if isinstance(value, str) and value and all(c.isalnum() or c in "-_" for c in value):
            return value
    elif kind == schema.LIST:
        if isinstance(value, dict):
            unknown = sorted(set(value) - set(LIST_OPS))
            if unknown or not value:
                problems.append(
                    Problem(
                        key,
                        layer,
                        f"a list operation table takes set, append and remove; got "
                        f"{', '.join(map(str, unknown)) or 'an empty table'}",
                    )
                )
                return None
            parts = {op: value.get(op, ()) for op in LIST_OPS}
            checks = [_check_strings(f"{key}.{op}", layer, v, problems) for op, v in parts.items()]
            if all(checks):
                base = tuple(parts["set"]) if "set" in value else None
                return _Ops(base, tuple(parts["append"]), tuple(parts["remove"]))
            return None
        if _check_strings(key, layer, value, problems):
            return tuple(value)
        return None
    problems.append(bad)
    return None


def _suggest(key: str) -> str:
    import difflib  # only on the error path

    # A misspelt section ("sandbox.polcy") should point at the section, not at some key.
    names = [*schema.BY_KEY, *schema.SECTIONS]
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    return f'; did you mean "{close[0]}"?' if close else ""


def validate_layer(layer: Layer, problems: list[Problem]) -> dict[str, Any]:
    """Flatten and check one layer; return its valid values, recording every problem."""
    out: dict[str, Any] = {}
    if not isinstance(layer.values, dict):
        problems.append(
            Problem("(top)", layer.label, f"expected a table, got {_describe(layer.values)}")
        )
        return out
    for key, value in _walk(layer.values):
        field = schema.BY_KEY.get(key)
        if field is None:
            what = "not a setting, it holds settings" if key in schema.SECTIONS else "unknown key"
            problems.append(Problem(key, layer.label, what + _suggest(key)))
            continue
        checked = _validate(field, layer.label, value, problems)
        if checked is not None:
            out[key] = checked
    return out


def resolve(layers: Sequence[Layer]) -> Config:
    """Merge `layers` (lowest first) over the defaults and the mode preset."""
    problems: list[Problem] = []
    checked = [(layer, validate_layer(layer, problems)) for layer in layers]
    if problems:
        raise ConfigError(problems)

    mode = schema.BY_KEY["sandbox.mode"].default
    for _, values in checked:
        mode = values.get("sandbox.mode", mode)

    values = schema.defaults()
    origins = dict.fromkeys(values, "default")
    for key, preset in schema.PRESETS[mode].items():
        values[key] = preset
        origins[key] = f"mode {mode}"
    for layer, layer_values in checked:
        for key, value in layer_values.items():
            if isinstance(value, _Ops):
                values[key] = value.apply(values[key])
                origins[key] = (
                    layer.name if value.set is not None else f"{origins[key]}+{layer.name}"
                )
            else:
                values[key] = value
                origins[key] = layer.name
    return Config(values, origins)
