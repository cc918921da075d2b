"""Chat-file frontmatter: narrowing, refused widening, trust, error recovery, confinement."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .conftest import ERROR, WARN

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .conftest import Editor

SET_LINES = "vim.api.nvim_buf_set_lines(0, 0, -1, false, { ... })"


def settle(editor: Editor) -> None:
    """Wait out the debounce of edits (plus a margin): after it, an edit has been read."""
    time.sleep(editor.lua("return require('corral.chat').DEBOUNCE_MS") / 1000 + 0.3)
    editor.nvim.eval("1")  # let scheduled callbacks run before the next request


def lua_block(*lines: str, body: str = "Hello, assistant.") -> str:
    return "\n".join(["```lua", *lines, "```", body]) + "\n"


def write_chat(workspace: Path, text: str, name: str = "talk.chat") -> Path:
    path = workspace / name
    path.write_text(text)
    return path


def test_lua_narrowing_applies_to_the_buffer(ed: Editor, workspace: Path) -> None:
    chat = write_chat(
        workspace,
        lua_block(
            'corral.opt.sandbox.mode = "read-only"',
            'corral.opt.sandbox.policy.deny_read:append("private-notes")',
        ),
    )
    buf = ed.edit(chat)
    assert ed.lua("return require('corral.chat').is_attached(...)", buf) is True
    config = ed.config(buf)
    assert config["values"]["sandbox.mode"] == "read-only"
    assert config["origins"]["sandbox.mode"] == "buffer"
    assert "private-notes" in config["values"]["sandbox.policy.deny_read"]
    assert config["values"]["sandbox.policy.rw_paths"] == []
    assert ed.messages() == []
    # The effective sandbox of that buffer really is read-only.
    assert ed.lua("return require('corral.sandbox').is_path_writable('new.txt', ...)", buf) is False
    # Other buffers keep the defaults.
    other = ed.lua("vim.cmd.enew() return vim.api.nvim_get_current_buf()")
    assert ed.config(other)["values"]["sandbox.mode"] == "workspace-write"
    assert ed.lua("return require('corral.sandbox').is_path_writable('new.txt', ...)", other)


def test_refused_widening_in_an_untrusted_file(ed: Editor, workspace: Path) -> None:
    chat = write_chat(
        workspace,
        lua_block(
            "corral.opt.sandbox.policy.network = true",
            "corral.opt.sandbox = false",
            'corral.opt.sandbox.policy.home = "private"',
        ),
    )
    buf = ed.edit(chat)
    warnings = ed.messages(WARN)
    assert len(warnings) == 1, ed.messages()
    assert "sandbox.policy.network" in warnings[0]
    assert "sandbox.enabled" in warnings[0]
    assert ":trust" in warnings[0]
    assert ed.messages(ERROR) == []
    config = ed.config(buf)
    assert config["values"]["sandbox.policy.network"] is False
    assert config["values"]["sandbox.enabled"] is True
    # What narrows is still accepted.
    assert config["values"]["sandbox.policy.home"] == "private"
    assert config["origins"]["sandbox.policy.home"] == "buffer"
    assert ed.lua("return require('corral.sandbox').is_enabled(...)", buf) is True


def test_trusted_file_may_widen(ed: Editor, workspace: Path) -> None:
    chat = write_chat(workspace, lua_block("corral.opt.sandbox.policy.network = true"))
    buf = ed.edit(chat)
    assert len(ed.messages(WARN)) == 1, ed.messages()
    assert ed.config(buf)["values"]["sandbox.policy.network"] is False

    ok = ed.lua("return { vim.secure.trust({ action = 'allow', bufnr = ... }) }", buf)
    assert ok[0] is True, ok
    ed.clear_messages()
    ed.cmd("Sandbox", "reload")
    config = ed.config(buf)
    assert config["values"]["sandbox.policy.network"] is True
    assert config["origins"]["sandbox.policy.network"] == "buffer"
    assert ed.messages(WARN) == [], ed.messages()
    assert ed.lua("return require('corral.sandbox').get_policy(...).network", buf) is True

    # Trust follows the contents: after a change the file must be trusted again.
    ed.lua(
        SET_LINES + " vim.cmd('silent write')",
        "```lua",
        "corral.opt.sandbox.policy.network = true",
        "-- changed",
        "```",
    )
    assert ed.config(buf)["values"]["sandbox.policy.network"] is False


def test_unsaved_edit_of_a_trusted_file_is_not_trusted(ed: Editor, workspace: Path) -> None:
    chat = write_chat(workspace, lua_block("corral.opt.sandbox.policy.network = true"))
    buf = ed.edit(chat)
    ed.lua("vim.secure.trust({ action = 'allow', bufnr = ... })", buf)
    ed.cmd("Sandbox", "reload")
    assert ed.config(buf)["values"]["sandbox.policy.network"] is True
    ed.clear_messages()

    # The buffer now says something the user never trusted; the file on disk is unchanged.
    ed.lua(SET_LINES, "```lua", "corral.opt.sandbox = false", "```")
    settle(ed)
    enabled = ed.config(buf)["values"]["sandbox.enabled"]
    assert enabled is True, (
        f"an unsaved edit of a trusted file disabled the sandbox; messages: {ed.messages()}"
    )
    assert ed.lua("return require('corral.sandbox').is_enabled(...)", buf) is True


def test_allow_widening_in_setup(spawn: Callable[..., Editor], workspace: Path) -> None:
    editor = spawn(cwd=workspace)
    editor.lua("require('corral').setup({ frontmatter = { allow_widening = true } })")
    chat = write_chat(workspace, lua_block("corral.opt.sandbox.policy.network = true"))
    buf = editor.edit(chat)
    assert editor.messages() == []
    config = editor.config(buf)
    assert config["values"]["sandbox.policy.network"] is True
    assert config["origins"]["sandbox.policy.network"] == "buffer"


def test_widening_setting_cannot_come_from_frontmatter(ed: Editor, workspace: Path) -> None:
    chat = write_chat(
        workspace,
        lua_block(
            "corral.opt.frontmatter.allow_widening = true",
            "corral.opt.sandbox.policy.network = true",
        ),
    )
    buf = ed.edit(chat)
    warnings = ed.messages(WARN)
    assert len(warnings) == 1 and "frontmatter.allow_widening" in warnings[0], ed.messages()
    assert ed.config(buf)["values"]["sandbox.policy.network"] is False


def test_errors_keep_the_last_good_settings(ed: Editor, workspace: Path) -> None:
    chat = write_chat(workspace, lua_block('corral.opt.sandbox.mode = "read-only"'))
    buf = ed.edit(chat)
    assert ed.config(buf)["values"]["sandbox.mode"] == "read-only"

    # A syntax error on buffer line 3, picked up by the debounced re-read of an edit.
    ed.lua(SET_LINES, "```lua", "corral.opt.tools.bash.timeout = 30", "corral.opt.x = =", "```")
    errors = ed.wait_for(lambda: ed.messages(ERROR), timeout=5, what="the frontmatter error")
    time.sleep(0.5)  # no second message for the same error
    errors = ed.messages(ERROR)
    assert len(errors) == 1, ed.messages()
    assert "line 3" in errors[0], errors[0]
    assert "talk.chat" in errors[0]
    config = ed.config(buf)
    assert config["values"]["sandbox.mode"] == "read-only"
    assert config["values"]["tools.bash.timeout"] == 120

    # Writing the same broken text does not repeat the message.
    ed.lua("vim.cmd('silent write')")
    assert len(ed.messages(ERROR)) == 1, ed.messages()

    # Fixed: the new values apply (read again at once on write).
    ed.lua(
        SET_LINES + " vim.cmd('silent write')",
        "```lua",
        "corral.opt.tools.bash.timeout = 30",
        "```",
    )
    config = ed.config(buf)
    assert config["values"]["tools.bash.timeout"] == 30
    assert config["origins"]["tools.bash.timeout"] == "buffer"
    assert config["values"]["sandbox.mode"] == "workspace-write"  # no longer set
    assert len(ed.messages(ERROR)) == 1


def test_edit_is_read_again_after_the_debounce(ed: Editor, workspace: Path) -> None:
    chat = write_chat(workspace, lua_block("corral.opt.tools.bash.timeout = 30"))
    buf = ed.edit(chat)
    assert ed.config(buf)["values"]["sandbox.mode"] == "workspace-write"
    ed.lua(SET_LINES, "```lua", 'corral.opt.sandbox.mode = "read-only"', "```")
    ed.wait_for(
        lambda: ed.config(buf)["values"]["sandbox.mode"] == "read-only",
        timeout=5,
        what="the edited frontmatter to apply",
    )
    assert ed.config(buf)["values"]["tools.bash.timeout"] == 120  # no longer set
    assert ed.messages() == []


def test_runtime_error_names_its_line(ed: Editor, workspace: Path) -> None:
    chat = write_chat(
        workspace,
        lua_block(
            'corral.opt.sandbox.mode = "read-only"',
            "",
            'error("stop here")',
        ),
    )
    buf = ed.edit(chat)
    errors = ed.messages(ERROR)
    assert len(errors) == 1, ed.messages()
    assert "line 4" in errors[0] and "stop here" in errors[0]
    # Nothing from a failing block is applied.
    assert ed.config(buf)["values"]["sandbox.mode"] == "workspace-write"


def test_infinite_loop_is_stopped(ed: Editor, workspace: Path) -> None:
    chat = write_chat(
        workspace, lua_block('corral.opt.sandbox.mode = "read-only"', "while true do end")
    )
    started = time.monotonic()
    buf = ed.edit(chat)
    elapsed = time.monotonic() - started
    assert elapsed < 5, f"opening the file took {elapsed:.1f} s"
    errors = ed.messages(ERROR)
    assert len(errors) == 1, ed.messages()
    assert "took too long" in errors[0]
    assert ed.nvim.eval("1+1") == 2
    assert ed.config(buf)["values"]["sandbox.mode"] == "workspace-write"
    # The instruction hook is gone: ordinary Lua runs at full length afterwards.
    assert ed.lua("local n = 0 for i = 1, 3000000 do n = n + 1 end return n") == 3000000


def test_json_frontmatter(ed: Editor, workspace: Path) -> None:
    chat = write_chat(
        workspace,
        '```json\n{"corral": {"sandbox": {"mode": "read-only", "policy": {"home": "private"}}}}\n'
        "```\nHello\n",
    )
    buf = ed.edit(chat)
    assert ed.messages() == []
    config = ed.config(buf)
    assert config["values"]["sandbox.mode"] == "read-only"
    assert config["origins"]["sandbox.mode"] == "buffer"
    assert config["values"]["sandbox.policy.home"] == "private"


def test_invalid_json_and_unknown_keys_are_errors(ed: Editor, workspace: Path) -> None:
    broken = write_chat(workspace, '```json\n{"corral": {"sandbox": \n```\n', name="a.chat")
    buf = ed.edit(broken)
    errors = ed.messages(ERROR)
    assert len(errors) == 1 and "a.chat" in errors[0], ed.messages()
    assert ed.config(buf)["origins"]["sandbox.mode"] == "default"

    ed.clear_messages()
    typo = write_chat(workspace, lua_block('corral.opt.sandbox.mdoe = "read-only"'), name="b.chat")
    buf = ed.edit(typo)
    errors = ed.messages(ERROR)
    assert len(errors) == 1 and "sandbox.mdoe" in errors[0], ed.messages()


def test_no_editor_or_os_access_from_frontmatter(ed: Editor, workspace: Path) -> None:
    chat = write_chat(
        workspace,
        lua_block(
            "assert(io == nil and require == nil and vim == nil, 'exposed')",
            # (the clock only, as in Flemma's frontmatter: see test_flemma)
            "assert(os.execute == nil and os.getenv == nil and os.remove == nil, 'os')",
            "assert(load == nil and loadstring == nil and dofile == nil, 'loaders')",
            "assert(getfenv == nil and setfenv == nil and rawset == nil and debug == nil, 'meta')",
            "assert(jit == nil and package == nil and _G == nil, 'globals')",
            'corral.opt.sandbox.mode = "read-only"',
        ),
    )
    buf = ed.edit(chat)
    assert ed.messages() == []
    assert ed.config(buf)["values"]["sandbox.mode"] == "read-only"


def test_os_execute_from_frontmatter_fails(ed: Editor, workspace: Path) -> None:
    marker = workspace / "frontmatter-ran"
    chat = write_chat(
        workspace,
        lua_block(
            "os.execute('touch ' .. 'frontmatter-ran')",
        ),
    )
    buf = ed.edit(chat)
    errors = ed.messages(ERROR)
    assert len(errors) == 1 and "line 2" in errors[0], ed.messages()
    assert not marker.exists()
    assert ed.config(buf)["origins"]["sandbox.mode"] == "default"

    for attempt in (
        "vim.fn.writefile({'x'}, 'frontmatter-ran')",
        "io.open('frontmatter-ran', 'w'):write('x')",
        "require('os').execute('touch frontmatter-ran')",
        "string.dump(assert)",
    ):
        ed.clear_messages()
        ed.lua(SET_LINES + " vim.cmd('silent write')", "```lua", attempt, "```")
        assert len(ed.messages(ERROR)) == 1, (attempt, ed.messages())
        assert not marker.exists(), attempt


def test_string_methods_outside_the_allowlist_are_unreachable(ed: Editor, workspace: Path) -> None:
    # The environment's `string` leaves out rep (unbounded memory: the instruction budget does
    # not count bytes) and dump; the string metatable must not hand them back.
    chat = write_chat(
        workspace,
        lua_block(
            'assert(("x").rep == nil, "string.rep reachable through the string metatable")',
            'assert(("x").dump == nil, "string.dump reachable through the string metatable")',
            'corral.opt.sandbox.mode = "read-only"',
        ),
    )
    buf = ed.edit(chat)
    assert ed.messages(ERROR) == []
    assert ed.config(buf)["values"]["sandbox.mode"] == "read-only"
