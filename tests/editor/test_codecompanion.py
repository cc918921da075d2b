"""codecompanion.nvim with corral's tools (issue 10): a real codecompanion chat buffer runs the
model's tool calls through its own tool system (`chat.tools:execute`), no model, no network.

codecompanion's `run_command` runs on the host and its file tools write without asking by
default: these check that those are gone, and that corral decides, confines and asks, in
codecompanion's yolo mode too."""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

import pytest

from .conftest import home_with_a_key
from .test_execute import confirm_window

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .conftest import Editor

# corral's entries merged into the user's tools, as :help corral-codecompanion shows; no
# automatic submit afterwards (it would call the model).
SETUP = """
local tools = vim.tbl_deep_extend("force", {
  opts = { auto_submit_success = false, auto_submit_errors = false },
}, require("corral.integrations.codecompanion").tools())
require("codecompanion").setup({
  interactions = { chat = { adapter = "openai", tools = tools } },
})
_G.cc_chat = require("codecompanion").chat()
"""

# The model's tool calls, as codecompanion's chat receives them.
CALL = """
local calls = ...
local list = {}
for i, c in ipairs(calls) do
  _G.cc_ids = (_G.cc_ids or 0) + 1
  list[i] = { id = "call_" .. _G.cc_ids, type = "function",
              ["function"] = { name = c[1], arguments = c[2] } }
end
_G.cc_chat.tools:execute(_G.cc_chat, list)
"""

TOOL_MESSAGES = """
local out = {}
for _, m in ipairs(_G.cc_chat.messages) do
  if m.role == "tool" then out[#out + 1] = vim.inspect(m.content) end
end
return out
"""


def codecompanion(ed: Editor) -> Editor:
    ed.add_plugins("codecompanion.nvim", "plenary.nvim")
    ed.lua(SETUP)
    return ed


def call(ed: Editor, *calls: tuple[str, dict[str, Any]]) -> None:
    ed.lua(CALL, [[name, json.dumps(args)] for name, args in calls])


def tool_messages(ed: Editor, count: int = 1, timeout: float = 20) -> list[str]:
    return ed.wait_for(
        lambda: (lambda m: m if len(m) >= count else False)(ed.lua(TOOL_MESSAGES)),
        timeout=timeout,
        what=f"{count} tool message(s) in the chat",
    )


@pytest.fixture
def cc(spawn: Callable[..., Editor], workspace: Path) -> Editor:
    return codecompanion(spawn(cwd=workspace))


def test_corral_bash_runs_in_the_sandbox_with_a_credential_hidden(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    home = home_with_a_key(workspace, "CANARY-PRIVATE-KEY")
    ed = codecompanion(spawn(cwd=workspace, env={"HOME": str(home)}))
    command = "echo made > made.txt; cat ~/.ssh/id_rsa; touch /etc/corral-cc; echo end"
    call(ed, ("corral_bash", {"command": command}))
    [message] = tool_messages(ed)
    assert "exit 0; the sandbox refused 2 operations" in message, message  # (r52c)
    assert "a read of a path it hides" in message, message
    assert "end" in message and "CANARY-PRIVATE-KEY" not in message
    assert (workspace / "made.txt").read_text() == "made\n"
    assert not os.path.exists("/etc/corral-cc")


def test_the_replaced_built_ins_cannot_be_called(cc: Editor, workspace: Path) -> None:
    canary = workspace / "CANARY-run-command"
    call(
        cc,
        ("run_command", {"cmd": f"touch {canary}", "flag": None}),
        ("create_file", {"filepath": str(workspace / "CANARY-created"), "content": "x"}),
    )
    time.sleep(1.5)
    assert not canary.exists() and not (workspace / "CANARY-created").exists()
    enabled = cc.lua("return vim.tbl_keys(_G.cc_chat.tools.tools_config)")
    assert "corral_bash" in enabled and "corral_write" in enabled and "corral_edit" in enabled
    assert "corral_read" in enabled
    # (grep_search and get_changed_files, r12b F4: they search and diff files corral hides)
    replaced = {"run_command", "create_file", "insert_edit_into_file", "delete_file",
                "read_file", "fetch_webpage", "memory", "get_diagnostics",
                "grep_search", "get_changed_files"}  # fmt: skip
    assert not replaced & set(enabled)
    group = cc.lua("return _G.cc_chat.tools.tools_config.groups.corral.tools")
    assert group[:4] == ["corral_bash", "corral_write", "corral_edit", "corral_read"], group
    assert "file_search" in group and "grep_search" not in group


def test_in_yolo_mode_corral_still_asks_for_a_write(cc: Editor, workspace: Path) -> None:
    cc.lua(
        "require('codecompanion.interactions.chat.tools.approvals')"
        ":toggle_yolo_mode(_G.cc_chat.bufnr)"
    )
    call(cc, ("corral_write", {"path": "notes.txt", "content": "hello\n"}))
    lines = cc.wait_for(lambda: confirm_window(cc), what="corral's window")
    assert any("notes.txt" in line for line in lines)
    cc.nvim.input("d")
    [message] = tool_messages(cc)
    assert "the user declined" in message
    assert not (workspace / "notes.txt").exists()
    # (yolo mode then submits the chat to the model on its own: one call per test here)


def test_an_approved_write_and_edit_land(cc: Editor, workspace: Path) -> None:
    call(cc, ("corral_edit", {"path": "a.txt", "old_text": "a", "new_text": "b"}))
    [message] = tool_messages(cc)
    assert message.startswith('"not run:') and confirm_window(cc) is None  # no file: at once

    call(cc, ("corral_write", {"path": "a.txt", "content": "one two\n"}))
    cc.wait_for(lambda: confirm_window(cc), what="corral's window")
    time.sleep(0.5)  # approval keys act only after the window has been up a moment
    cc.nvim.input("a")
    tool_messages(cc, 2)
    call(cc, ("corral_edit", {"path": "a.txt", "old_text": "two", "new_text": "three"}))
    cc.wait_for(lambda: confirm_window(cc), what="corral's window")
    time.sleep(0.5)
    cc.nvim.input("a")
    messages = tool_messages(cc, 3)
    assert "replaced 1 occurrence" in messages[2] and "+one three" in messages[2]
    assert (workspace / "a.txt").read_text() == "one three\n"


def test_two_calls_in_one_batch_each_report_their_own_result(cc: Editor) -> None:
    call(
        cc,
        ("corral_bash", {"command": "echo first; exit 3"}),
        ("corral_bash", {"command": "echo second; exit 4"}),
    )
    first, second = tool_messages(cc, 2)
    assert "exit 3" in first and "first" in first and "second" not in first
    assert "exit 4" in second and "second" in second and "first" not in second


def test_codecompanions_cancel_stops_the_command(cc: Editor, workspace: Path) -> None:
    call(cc, ("corral_bash", {"command": "sleep 3; touch late.txt"}))
    time.sleep(1.0)
    cc.lua("_G.cc_chat.tool_orchestrator:cancel()")
    time.sleep(3.0)
    assert not (workspace / "late.txt").exists()


def test_the_older_handler_form_is_served(cc: Editor, workspace: Path) -> None:
    """codecompanion before its `opts.output_cb` called fn(self, args, input, output_cb)."""
    got = cc.lua(
        """
        local tool = require("corral.integrations.codecompanion.bash")
        local out
        local self = { chat = _G.cc_chat, tool = {} }
        tool.cmds[1](self, { command = "echo old-form > old.txt" }, nil, function(o) out = o end)
        vim.wait(10000, function() return out ~= nil end)
        return out
        """
    )
    assert got["status"] == "success" and got["data"].startswith("exit 0")
    assert (workspace / "old.txt").read_text() == "old-form\n"


def test_a_replaced_tool_an_adapter_adds_back_is_refused(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r10b C1: Anthropic's adapter adds `memory` back after the enabled filter and resolves
    it from the raw config entry (`enabled = false` unread): in yolo mode it wrote files,
    a new repository's config included, on the host unasked."""
    ed = spawn(cwd=workspace, env={"ANTHROPIC_API_KEY": "not-a-key"})
    ed.add_plugins("codecompanion.nvim", "plenary.nvim")
    ed.lua(SETUP.replace('adapter = "openai"', 'adapter = "anthropic"'))
    ed.lua(
        "require('codecompanion.interactions.chat.tools.approvals')"
        ":toggle_yolo_mode(_G.cc_chat.bufnr)"
    )
    assert ed.lua("return _G.cc_chat.tools.tools_config.memory ~= nil")  # the adapter's
    call(ed, ("memory", {"command": "create", "path": "/memories/sub/.git/config",
                         "file_text": "[core]\n\tfsmonitor = touch CANARY\n"}))  # fmt: skip
    [message] = tool_messages(ed)
    assert "not available" in message, message
    assert not (workspace / "memories").exists()


def test_a_rules_file_cannot_bring_a_credential_into_a_chat(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r11b F3: a sandboxed command wrote CLAUDE.md with a line `@~/.ssh/id_rsa`;
    codecompanion adds the project's rules, and the files they name, to every new chat:
    the key went into the next chat's first request. A workspace file named stays."""
    home = home_with_a_key(workspace, "CANARY-PRIVATE-KEY")
    (workspace / "notes.md").write_text("CANARY-NOTES-KEPT\n")
    (workspace / "CLAUDE.md").write_text("# Project notes\n\n@~/.ssh/id_rsa\n\n@notes.md\n")
    ed = codecompanion(spawn(cwd=workspace, env={"HOME": str(home)}))
    contents = """
    local out = {}
    for _, m in ipairs(_G.cc_chat.messages) do out[#out + 1] = vim.inspect(m.content) end
    return table.concat(out, "\\n")
    """
    text = ed.wait_for(
        lambda: (lambda t: t if "CANARY-NOTES-KEPT" in t else False)(ed.lua(contents)),
        what="the rules' workspace file in the chat",
    )
    assert "CANARY-PRIVATE-KEY" not in text
