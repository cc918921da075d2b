"""Documentation generated from the schema: the options section of doc/corral.txt, and the
`corral.Options` LuaCATS classes in lua/corral/types.lua (what setup() takes, for LuaLS).

`.venv/bin/python scripts/gen_docs.py` rewrites both in place; a test fails when either is out
of date. (Tooling, not the engine: it lives in scripts/, and imports the installed corral.)
"""

from __future__ import annotations

import os
import sys

from corral import schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

BEGIN = "The list below is generated from the schema by `scripts/gen_docs.py`."
END = "(end of the generated list)"
WIDTH = 78


def _wrap(text: str, indent: str) -> list[str]:
    lines: list[str] = []
    line = indent
    for word in text.split():
        if len(line) + len(word) + 1 > WIDTH and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += word + " "
    if line.strip():
        lines.append(line.rstrip())
    return lines


def _default(field: schema.Field) -> list[str]:
    if any(field.key in preset for preset in schema.PRESETS.values()):
        return ["set by the mode (|corral-modes|)"]
    value = field.default
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, str):
        return [f'"{value}"']
    if isinstance(value, int):
        return [str(value)]
    if not value:
        return ["[]"]
    return ["["] + [f'  "{item}",' for item in value] + ["]"]


def options_section() -> str:
    out = [BEGIN]
    for field in schema.FIELDS:
        tag = f"*corral-{field.key}*"
        out.append("")
        out.append(f"{field.key}".ljust(WIDTH - len(tag)) + tag)
        out.extend(_wrap(f"Type: {field.expected()}.", "    "))
        out.extend(_wrap(field.doc, "    "))
        out.extend(_wrap(field.narrowing(), "    "))
        default = _default(field)
        if len(default) == 1:
            out.append(f"    Default: {default[0]}")
        else:
            out.append("    Default: >")
            out.extend("      " + line for line in default)
            out.append("<")
    out.append(END)
    return "\n".join(out)


def _between(text: str, begin: str, end: str, new: str) -> str:
    """`text` with what runs from `begin` to `end` (both included) replaced by `new`."""
    start = text.index(begin)
    stop = text.index(end) + len(end)
    return text[:start] + new + text[stop:]


def replace_section(text: str) -> str:
    return _between(text, BEGIN, END, options_section())


LUA_BEGIN = "-- The options classes below are generated from the schema by `scripts/gen_docs.py`."
LUA_END = "-- (end of the generated options classes)"
_LUA_LIST = "string[]|{set: string[]|nil, append: string[]|nil, remove: string[]|nil}"
# setup() keeps a Lua function for this key on the Lua side (see lua/corral/init.lua)
_LUA_EXTRA = {"tools.auto_approve": "fun(tool_call: corral.ToolCall, context: table): any"}


def _lua_type(field: schema.Field) -> str:
    if field.kind == schema.BOOL:
        kind = "boolean"
    elif field.kind == schema.CHOICE:
        kind = "|".join(f'"{c}"' for c in field.choices)
    elif field.kind == schema.LIST:
        kind = _LUA_LIST
    elif field.kind in (schema.INT, schema.COUNT):
        kind = "integer"
    else:
        kind = "string"
    extra = _LUA_EXTRA.get(field.key)
    return f"{kind}|{extra}|nil" if extra else f"{kind}|nil"


def lua_classes() -> str:
    """`---@class corral.Options` and one class per table below it (`corral.Options.sandbox`),
    each key's type and the first sentence of its doc."""
    tables: dict[str, list[str]] = {"": []}
    for field in schema.FIELDS:
        parts = field.key.split(".")
        for depth in range(1, len(parts)):
            prefix, name = ".".join(parts[:depth]), parts[depth - 1]
            parent = ".".join(parts[: depth - 1])
            if prefix not in tables:
                tables[prefix] = []
                cls = "corral.Options." + prefix
                tables[parent].append(f"---@field {name} {cls}|nil")
        first = field.doc.split(". ")[0].rstrip(".")
        if len(first) > 80:  # (a hover's hint: the whole text is in :help)
            first = first[:80].rsplit(" ", 1)[0].rstrip(",:;(") + " ..."
        tables[".".join(parts[:-1])].append(f"---@field {parts[-1]} {_lua_type(field)} {first}")
    out = [LUA_BEGIN]
    for prefix, lines in tables.items():
        out.append("")
        title = "corral.Options" + ("." + prefix if prefix else "")
        if not prefix:
            out.append("---What setup() takes: :help corral-options (every key is optional).")
        out.append(f"---@class {title}")
        out.extend(lines)
    out.append("")
    out.append(LUA_END)
    return "\n".join(out)


def replace_lua(text: str) -> str:
    return _between(text, LUA_BEGIN, LUA_END, lua_classes())


def _rewrite(path: str, replace: Callable[[str], str]) -> None:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = replace(text)
    if new != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
        print(f"updated {path}")


def main(argv: list[str]) -> int:
    """`[doc/corral.txt [lua/corral/types.lua]]`"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    _rewrite(argv[0] if argv else os.path.join(root, "doc", "corral.txt"), replace_section)
    _rewrite(argv[1] if len(argv) > 1 else os.path.join(root, "lua", "corral", "types.lua"),
             replace_lua)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
