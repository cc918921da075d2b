"""Frontmatter cannot touch the editor's state or freeze it (issue 7, item 2), and trust binds to
a chat file's exact contents (item 3).

Before: the chunk ran in the editor. Its instruction-budget hook could fire after pcall returned,
the error escaped, and the string metatable stayed pointed at a table the chunk had filled (it
replaced `match`; is_trusted() then read every trust entry as "directory /"). A 256-character
backtracking pattern froze Neovim for minutes. Trust of a directory covered every chat file in
it, so a sandboxed command could write `sandbox.mode = "off"` into its own chat and autoread
applied it.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

import pytest

from .conftest import ERROR, WARN
from .test_execute import execute, result
from .test_frontmatter import lua_block, write_chat

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .conftest import Editor

EDITOR_STATE = """
local mt = getmetatable("")
return {
  index_is_string = mt.__index == string,
  match_works = ("abc def"):match("^(%S+) (.+)$") == "abc",
  hook = debug.gethook() ~= nil,
  rep = type(("x").rep) == "function",
}
"""

HOSTILE = [
    # fill the shared string table, then burn the budget
    'string.match = function() return "directory", "/" end\n'
    "local n = 0 while n < 100000 do n = n + 1 end",
    '("").match = nil\nlocal t = {} for i = 1, 100000 do t[i] = i end',
    # end just as the budget of 1,000,000 instructions runs out (5 per iteration, 1 per
    # padding statement): before the fix, these made the hook fire after pcall returned
    *(
        f"local n = 0 while n < {k} do n = n + 1 end" + " local a = 1" * pad
        for k, pad in ((199997, 5), (199997, 6), (199997, 7), (199998, 0), (199998, 1))
    ),
]


@pytest.mark.parametrize("chunk", HOSTILE)
def test_frontmatter_leaves_no_trace_in_the_editor(ed: Editor, workspace: Path, chunk: str) -> None:
    before = ed.lua(EDITOR_STATE)
    chat = write_chat(workspace, lua_block(*chunk.split("\n")))
    ed.edit(chat)
    assert ed.lua(EDITOR_STATE) == before == {
        "index_is_string": True, "match_works": True, "hook": False, "rep": True,
    }  # fmt: skip
    # Trust is not fooled either: an untrusted chat stays untrusted.
    assert ed.lua("return require('corral.chat').is_trusted(...)", str(chat)) is False


@pytest.mark.parametrize(
    "chunk",
    [
        # backtracking: each `.-` multiplies the work; this froze Neovim for 211 s in-process
        'local s = "' + "a" * 256 + '" local p = "' + ".-" * 12 + 'b" string.find(s, p)',
        # memory doubling: one instruction per doubling, far under the instruction budget
        'local s = "x" for i = 1, 40 do s = s .. s end',
    ],
    ids=["backtracking", "memory"],
)
def test_runaway_frontmatter_cannot_freeze_the_editor(
    ed: Editor, workspace: Path, chunk: str
) -> None:
    chat = write_chat(workspace, lua_block(chunk, 'corral.opt.sandbox.mode = "read-only"'))
    started = time.monotonic()
    buf = ed.edit(chat)
    assert ed.lua("return 1 + 1") == 2
    # a liveness bound, not a speed target: the evaluation is stopped after 2 s
    assert time.monotonic() - started < 20
    errors = ed.messages(ERROR)
    assert len(errors) == 1, ed.messages()
    assert "took too long" in errors[0] or "too much memory" in errors[0], errors[0]
    assert ed.config(buf)["values"]["sandbox.mode"] == "workspace-write"  # nothing applied


def _trust(ed: Editor, buf: int) -> None:
    ok = ed.lua("return { vim.secure.trust({ action = 'allow', bufnr = ... }) }", buf)
    assert ok[0] is True, ok


def test_a_chat_rewritten_on_disk_loses_trust_and_the_user_is_told(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    ed = spawn(cwd=workspace)
    ed.lua("vim.o.autoread = true")
    chat = write_chat(workspace, lua_block('corral.opt.sandbox.mode = "read-only"'))
    buf = ed.edit(chat)
    _trust(ed, buf)
    ed.cmd("Sandbox", "reload")
    assert ed.config(buf)["values"]["sandbox.mode"] == "read-only"
    ed.clear_messages()

    # What a sandboxed command can do: rewrite its own chat file to switch the sandbox off.
    chat.write_text(lua_block('corral.opt.sandbox.mode = "off"', body="Hello, host."))
    ed.cmd("checktime")
    ed.wait_for(
        lambda: (
            ed.lua("return vim.api.nvim_buf_get_lines(..., 0, 1, false)[1]", buf) == "```lua"
            and "host"
            in "".join(ed.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf))
        ),
        what="autoread to reload the chat",
    )
    ed.nvim.eval("1")
    config = ed.config(buf)
    assert config["values"]["sandbox.mode"] != "off", "the chat switched its own sandbox off"
    assert ed.lua("return require('corral.sandbox').is_enabled(...)", buf) is True
    warnings = ed.messages(WARN)
    assert any("changed on disk" in w and ":trust" in w for w in warnings), ed.messages()


def test_a_chat_rewritten_on_disk_keeps_the_narrowing_it_had(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r31c UNNARROW: with direct writes a command rewrote its own chat file without its
    frontmatter; after autoread the chat's `deny_read` was gone, silently, and the next
    command read the secret it hid. A change made on disk by something else now leaves the
    settings as they were (untrusted) until the user reads the file again."""
    ed = spawn(cwd=workspace)
    ed.lua("vim.o.autoread = true")
    narrow = 'corral.opt.sandbox.policy.deny_read:append("urn:corral:cwd/secrets")'
    chat = write_chat(workspace, lua_block(narrow))
    buf = ed.edit(chat)
    hidden = "urn:corral:cwd/secrets"
    ed.wait_for(
        lambda: hidden in ed.config(buf)["values"]["sandbox.policy.deny_read"], what="narrowing"
    )
    ed.clear_messages()
    chat.write_text("@You: hi, host.\n")
    ed.cmd("checktime")
    ed.wait_for(
        lambda: "host" in "".join(ed.lua(ALL_LINES, buf)), what="autoread to reload the chat"
    )
    ed.nvim.eval("1")
    assert hidden in ed.config(buf)["values"]["sandbox.policy.deny_read"]
    warnings = ed.messages(WARN)
    assert any("changed on disk" in w and "Sandbox reload" in w for w in warnings), ed.messages()
    # r32b KEPTEDIT: what you then add to the block yourself narrows on top, at once
    keys = 'corral.opt.sandbox.policy.deny_read:append("urn:corral:cwd/keys")'
    ed.lua(
        "vim.api.nvim_buf_set_lines(..., 0, 0, false, { '```lua', select(2, ...), '```' })"
        " vim.cmd('silent write')",
        buf,
        keys,
    )
    ed.wait_for(
        lambda: "urn:corral:cwd/keys" in ed.config(buf)["values"]["sandbox.policy.deny_read"],
        what="the user's own narrowing",
    )
    assert hidden in ed.config(buf)["values"]["sandbox.policy.deny_read"]
    ed.cmd("Sandbox", "reload")  # the user's own decision: the block alone again
    denied = ed.config(buf)["values"]["sandbox.policy.deny_read"]
    assert hidden not in denied and "urn:corral:cwd/keys" in denied


def test_a_chat_rewritten_on_disk_keeps_asking_before_every_call(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r38c KEPTAPPROVE: a chat's `tools.auto_approve = {}` (ask before every call) was in
    its kept settings after a change on disk, but only the current block counted as the chat
    taking auto-approval over: sandboxed bash was approved again, unasked."""
    ed = spawn(cwd=workspace)
    ed.lua("vim.o.autoread = true")
    chat = write_chat(workspace, lua_block("corral.opt.tools.auto_approve = {}"))
    buf = ed.edit(chat)
    decide = (
        "return require('corral').decide("
        "{ name = 'bash', input = { command = 'ls' } }, { bufnr = ... })"
    )
    assert ed.lua(decide, buf)["decision"] == "require_approval"
    chat.write_text("@You: hi, host.\n")
    ed.cmd("checktime")
    ed.wait_for(
        lambda: "host" in "".join(ed.lua(ALL_LINES, buf)), what="autoread to reload the chat"
    )
    decided = ed.lua(decide, buf)
    assert decided["decision"] == "require_approval", decided


def test_an_open_chat_with_another_name_is_refused_a_run(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r38c LINKCHAT: with direct writes a command hard-linked the closed chat as
    data/log.txt; once it was open (read-only by its path) a write to data/log.txt rewrote
    its frontmatter. An open chat with other names refuses the run, naming them."""
    ed = spawn(cwd=workspace)
    ed.lua("require('corral').setup({ sandbox = { writes = 'direct' } })")
    chat = write_chat(workspace, lua_block('corral.opt.sandbox.mode = "workspace-write"'))
    (workspace / "data").mkdir()
    os.link(chat, workspace / "data" / "log.txt")
    buf = ed.edit(chat)
    execute(ed, "bash", command="echo hijacked > data/log.txt")
    r = result(ed)
    assert chat.read_text().startswith("```lua"), r
    assert "hard links" in json.dumps(r), r
    (workspace / "data" / "log.txt").unlink()
    execute(ed, "bash", command="echo fine > data/log.txt")
    assert result(ed)["exit"] == 0 and ed.lua("return vim.api.nvim_buf_is_valid(...)", buf)


def test_trust_survives_the_users_own_write(ed: Editor, workspace: Path) -> None:
    chat = write_chat(workspace, lua_block("corral.opt.sandbox.policy.network = true"))
    buf = ed.edit(chat)
    _trust(ed, buf)
    ed.cmd("Sandbox", "reload")
    assert ed.config(buf)["values"]["sandbox.policy.network"] is True
    # The conversation goes on below the frontmatter, and the user (or the chat plugin) saves.
    ed.lua(
        "vim.api.nvim_buf_set_lines(..., -1, -1, false, { 'Another message.' }) "
        "vim.cmd('silent write')",
        buf,
    )
    assert ed.config(buf)["values"]["sandbox.policy.network"] is True


def test_a_trusted_directory_does_not_trust_the_chats_in_it(ed: Editor, workspace: Path) -> None:
    chat = write_chat(workspace, lua_block("corral.opt.sandbox.policy.network = true"))
    trust_file = ed.lua("return vim.fn.stdpath('state') .. '/trust'")
    real = ed.lua("return vim.uv.fs_realpath(...)", str(workspace))
    with open(trust_file, "a", encoding="utf-8") as f:
        f.write(f"directory {real}\n")
    buf = ed.edit(chat)
    assert ed.lua("return require('corral.chat').is_trusted(...)", str(chat)) is False
    assert ed.config(buf)["values"]["sandbox.policy.network"] is False


ALL_LINES = "return vim.api.nvim_buf_get_lines(..., 0, -1, false)"


def test_trust_is_checked_against_the_frontmatter_that_was_read(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    # Second review, C6: the file is swapped between its trusted version and a hostile one.
    # The buffer holds the hostile frontmatter (autoread); by the time trust was looked up the
    # file on disk was the trusted version again, and its trust covered the hostile text.
    ed = spawn(cwd=workspace)
    ed.lua("vim.o.autoread = true")
    trusted = lua_block("corral.opt.sandbox.policy.network = true")
    chat = write_chat(workspace, trusted)
    buf = ed.edit(chat)
    _trust(ed, buf)
    ed.cmd("Sandbox", "reload")
    assert ed.config(buf)["values"]["sandbox.policy.network"] is True
    chat.write_text(lua_block('corral.opt.sandbox.mode = "off"', body="Hello, host."))
    ed.cmd("checktime")
    ed.wait_for(
        lambda: "host" in "".join(ed.lua(ALL_LINES, buf)),
        what="autoread to reload the chat",
    )
    chat.write_text(trusted)  # swapped back before the next look at trust
    ed.cmd("Sandbox", "reload")
    assert ed.config(buf)["values"]["sandbox.mode"] != "off", "hostile frontmatter was trusted"
    assert ed.lua("return require('corral.sandbox').is_enabled(...)", buf) is True


def test_oversized_frontmatter_is_refused_at_once(ed: Editor, workspace: Path) -> None:
    # Second review, L2: 16 MiB of frontmatter cost over a second on every read.
    filler = "-- " + "x" * 1000
    chat = write_chat(
        workspace, lua_block(*[filler] * 100, 'corral.opt.sandbox.mode = "read-only"')
    )
    buf = ed.edit(chat)
    errors = ed.wait_for(lambda: ed.messages(ERROR), timeout=5, what="the size error")
    assert "bytes, more than the" in errors[0], errors[0]
    assert ed.config(buf)["values"]["sandbox.mode"] == "workspace-write"


def test_frontmatter_settings_past_their_bound_are_refused(ed: Editor, workspace: Path) -> None:
    """r31c BIGFM: a few lines appending 120,000 deny_read entries (narrowing, so accepted)
    froze the editor and every later request for minutes; C functions such as
    vim.list_extend run outside the instruction budget."""
    chat = write_chat(
        workspace,
        lua_block(
            "local t = {} for i = 1, 200 do t[i] = '/x/' .. i end",
            "for _ = 1, 400 do corral.opt.sandbox.policy.deny_read:append(t) end",
        ),
    )
    buf = ed.edit(chat)
    errors = ed.wait_for(lambda: ed.messages(ERROR), timeout=10, what="the bound's error")
    assert "more than the 1000" in errors[0] or "more than 262144" in errors[0], errors
    assert "/x/1" not in ed.config(buf)["values"]["sandbox.policy.deny_read"]


def test_a_frontmatter_error_cannot_speak_as_corral(ed: Editor, workspace: Path) -> None:
    """Fifth review, G5: an error() text of the chat file went into corral's notification as
    it was: fake `corral:` lines and raw escape characters."""
    chat = write_chat(workspace, lua_block('error("boom\\ncorral: sandbox enabled\\27[2K")'))
    ed.edit(chat)
    errors = [m for m in ed.messages(ERROR) if "frontmatter" in m]
    assert errors, ed.messages()
    assert "\n" not in errors[0] and "\x1b" not in errors[0], errors
    assert "^[" in errors[0]
