""":Sandbox status, enable, disable, reset."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .conftest import ERROR, WARN

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Editor


def status(editor: Editor) -> list[str]:
    editor.cmd("Sandbox", "status")
    name = editor.lua("return vim.api.nvim_buf_get_name(0)")
    assert name == "corral://status", f":Sandbox status left the cursor in {name!r}"
    lines = editor.buffer_lines("corral://status")
    assert lines, "corral://status is empty"
    return lines


def line(lines: list[str], pattern: str) -> str:
    found = [entry for entry in lines if re.search(pattern, entry)]
    assert found, f"no line matches {pattern!r} in:\n" + "\n".join(lines)
    return found[0]


def test_status_shows_mode_backend_paths_and_layers(ed: Editor, workspace: Path) -> None:
    lines = status(ed)
    assert str(workspace) in lines[0]
    assert "enabled" in line(lines, r"^\s*sandbox:")
    assert "mode workspace-write" in line(lines, r"^\s*sandbox:")
    assert "bwrap" in line(lines, r"^\s*backend:")
    assert "available" in line(lines, r"bwrap \(priority \d+\)")
    writable = line(lines, r"^\s*writable:").split(":", 1)[1].split()
    assert "." in writable
    assert "network:   off" in "\n".join(lines)
    # Every setting with the layer it came from.
    assert re.search(r"sandbox\.mode\s+\"workspace-write\"\s+\(default\)", "\n".join(lines))
    assert re.search(
        r"sandbox\.policy\.network\s+false\s+\(mode workspace-write\)", "\n".join(lines)
    )
    assert not any(entry.startswith("WARNING") for entry in lines), lines
    assert ed.lua("return vim.bo.filetype") == "corral-status"
    assert ed.lua("return vim.bo.modifiable") is False


def test_status_names_the_buffer_and_its_frontmatter(ed: Editor, workspace: Path) -> None:
    """r89 trial STATUSWHICHBUFFER: a chat and a help file of one directory showed two
    sandboxes under one header naming only the directory."""
    chat = workspace / "demo.chat"
    chat.write_text('```lua\ncorral.opt.sandbox.mode = "read-only"\n```\n')
    ed.edit(chat)
    assert status(ed)[0] == (
        f"corral sandbox status for ./demo.chat (its frontmatter sets sandbox.mode) in {workspace}"
    )
    (workspace / "notes.txt").write_text("hi\n")
    ed.edit(workspace / "notes.txt")
    first = status(ed)[0]
    assert (
        first
        == f"corral sandbox status for ./notes.txt (no chat frontmatter applies) in {workspace}"
    )
    (workspace / "empty.chat").write_text("hello\n")
    ed.edit(workspace / "empty.chat")
    assert "./empty.chat (a chat without frontmatter) in" in status(ed)[0]


def test_status_buffer_is_reused(ed: Editor) -> None:
    status(ed)
    status(ed)
    count = ed.lua(
        "local n = 0 for _, b in ipairs(vim.api.nvim_list_bufs()) do"
        " if vim.api.nvim_buf_get_name(b) == 'corral://status' then n = n + 1 end end return n"
    )
    assert count == 1


def test_disable_then_reset(ed: Editor) -> None:
    ed.cmd("Sandbox", "disable")
    assert ed.lua("return require('corral.sandbox').get_override()") == {"sandbox.enabled": False}
    assert ed.lua("return require('corral.sandbox').is_enabled(0)") is False
    warnings = ed.messages(WARN)
    assert any("DISABLED" in m for m in warnings), ed.messages()
    lines = status(ed)
    sandbox_line = line(lines, r"^\s*sandbox:")
    assert "DISABLED" in sandbox_line
    assert "(from runtime)" in sandbox_line
    assert re.search(r"sandbox\.enabled\s+false\s+\(runtime\)", "\n".join(lines))
    # (not "network false" as if it held, r89 trial STATUSOFFTABLE)
    off = "not applied: the sandbox is off"
    assert f"false  (mode workspace-write; {off})" in line(lines, r"sandbox\.policy\.network ")
    assert "file tools only" in line(lines, r"sandbox\.policy\.deny_read ")

    ed.cmd("Sandbox", "reset")
    assert ed.lua("return require('corral.sandbox').get_override()") is None
    assert ed.lua("return require('corral.sandbox').is_enabled(0)") is True
    sandbox_line = line(status(ed), r"^\s*sandbox:")
    assert "DISABLED" not in sandbox_line
    assert "(from default)" in sandbox_line


def test_enable(ed: Editor) -> None:
    ed.cmd("Sandbox", "disable")
    ed.clear_messages()
    ed.cmd("Sandbox", "enable")
    assert ed.messages(ERROR) == []
    assert any("enabled" in m for m in ed.messages()), ed.messages()
    assert ed.lua("return require('corral.sandbox').get_override()") == {"sandbox.enabled": True}
    assert ed.lua("return require('corral.sandbox').is_enabled(0)") is True
    sandbox_line = line(status(ed), r"^\s*sandbox:")
    assert "enabled" in sandbox_line
    assert "(from runtime)" in sandbox_line


def test_no_argument_is_status_and_unknown_subcommand_is_an_error(ed: Editor) -> None:
    ed.cmd("Sandbox")
    assert ed.lua("return vim.api.nvim_buf_get_name(0)") == "corral://status"
    ed.cmd("Sandbox", "bogus")
    errors = ed.messages(ERROR)
    assert len(errors) == 1 and "bogus" in errors[0], ed.messages()


def test_a_subcommand_without_arguments_refuses_extra_words(ed: Editor) -> None:
    """r90t EXTRAARGSIGNORED: `:Sandbox disable now` disabled the sandbox, `now` unsaid."""
    for words in (("disable", "now"), ("status", "extra", "words")):
        ed.clear_messages()
        ed.cmd("Sandbox", *words)
        said = f":Sandbox {words[0]} takes no arguments (got {' '.join(words[1:])})"
        assert any(said in m for m in ed.messages()), ed.messages()
    assert ed.lua("return require('corral.sandbox').is_enabled(0)") is True
