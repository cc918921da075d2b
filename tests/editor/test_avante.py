"""avante.nvim with corral's tools (issue 10), driven through avante's own tool entry point
(`avante.llm_tools.process_tool_use`, what avante calls for the model's tool use), no model.

avante approves every tool by default and runs its own bash on the host: these check that its
replaced tools are gone from what avante offers, and that corral's decide, confine and ask."""

from __future__ import annotations

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

# avante's log module fills a table while iterating it, so a numeric log level is at times
# "invalid" when it loads; a level by name always resolves.
SETUP = """
local extra = ...
vim.g.avante = { log_level = "WARN" }
require("avante.config").setup(require("corral.integrations.avante").extend(extra))
"""

# avante's entry point for one tool use; every on_complete call is recorded.
USE = """
local name, input = ...
_G.avante_calls = {}
local tools = require("avante.llm_tools").get_tools("", {})
local r, e = require("avante.llm_tools").process_tool_use(
  tools,
  { name = name, id = "toolu_1", input = input },
  {
    session_ctx = {},
    on_complete = function(result, err)
      table.insert(_G.avante_calls, { result = result or vim.NIL, err = err or vim.NIL })
    end,
  }
)
return { r or vim.NIL, e or vim.NIL }
"""


def avante(ed: Editor, **extra: Any) -> Editor:
    ed.add_plugins("avante.nvim", "plenary.nvim", "nui.nvim")
    ed.lua(SETUP, extra)
    return ed


def use(ed: Editor, name: str, **tool_input: Any) -> None:
    returned = ed.lua(USE, name, tool_input)
    assert returned == [None, None], returned  # asynchronous: the answer comes by on_complete


def answer(ed: Editor, timeout: float = 20) -> dict[str, Any]:
    calls = ed.wait_for(
        lambda: ed.lua("return #_G.avante_calls > 0 and _G.avante_calls or false"),
        timeout=timeout,
        what="avante's on_complete",
    )
    time.sleep(0.2)
    assert len(ed.lua("return _G.avante_calls")) == 1, "on_complete ran more than once"
    return calls[0]


@pytest.fixture
def av(spawn: Callable[..., Editor], workspace: Path) -> Editor:
    return avante(spawn(cwd=workspace))


def test_avante_offers_corral_tools_instead_of_its_own_bash_and_writers(av: Editor) -> None:
    names = av.lua(
        "local out = {} for _, t in ipairs(require('avante.llm_tools').get_tools('', {})) do"
        " out[#out + 1] = t.name end return out"
    )
    assert {"corral_bash", "corral_write", "corral_edit", "corral_delete", "corral_read",
            "corral_ls"} <= set(names)  # fmt: skip
    kept = av.lua("return require('corral.integrations.avante').KEPT")
    # (eighth review r8b A1, A6, A7: avante's reads read outside the project, ran a shell
    # through glob and took options through grep and git_diff)
    assert {n for n in names if not n.startswith("corral_")} <= set(kept), names


def test_avantes_tools_run_by_name_whatever_is_disabled_are_refused(
    av: Editor, workspace: Path
) -> None:
    """r8b A1: avante runs str_replace_based_edit_tool (and str_replace_editor) by name even
    when disabled: its `view` read any file unasked."""
    (workspace / "a.txt").write_text("secret-ish\n")
    got = av.lua(
        "return { require('avante.llm_tools').process_tool_use({},"
        " { name = 'str_replace_based_edit_tool', id = 'toolu_4',"
        "   input = { command = 'view', path = ... } }, { session_ctx = {} }) }",
        str(workspace / "a.txt"),
    )
    assert "secret-ish" not in str(got) and "not available" in str(got), got
    # r9b F5: avante's history refresh calls view's func directly
    got = av.lua(
        "return { require('avante.llm_tools.view').func({ path = ... }, { session_ctx = {} }) }",
        str(workspace / "a.txt"),
    )
    assert "secret-ish" not in str(got) and "not available" in str(got), got
    canary = workspace.parent / (workspace.name + "-CANARY-glob")
    use_result = av.lua(
        "return { require('avante.llm_tools').process_tool_use("
        " require('avante.llm_tools').get_tools('', {}),"
        " { name = 'glob', id = 'toolu_5', input = { path = '.', pattern = ... } },"
        " { session_ctx = {} }) }",
        f"*`touch {canary}`",
    )
    assert "not provided" in str(use_result), use_result
    assert not canary.exists()


def test_corral_bash_runs_in_the_sandbox_with_a_credential_hidden(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    home = home_with_a_key(workspace, "CANARY-PRIVATE-KEY")
    ed = avante(spawn(cwd=workspace, env={"HOME": str(home)}))
    use(
        ed,
        "corral_bash",
        command="echo made > made.txt; cat ~/.ssh/id_rsa; echo x > /etc/corral-avante; echo end",
    )
    got = answer(ed)
    assert got["err"] is None, got
    text = got["result"]
    # (the hidden key, then the write to /etc: r52c HIDDENENOENT)
    assert text.startswith("exit 0; the sandbox refused 2 operations"), text
    assert "a read of a path it hides" in text, text
    assert "end" in text and "CANARY-PRIVATE-KEY" not in text
    assert (workspace / "made.txt").read_text() == "made\n"
    assert not os.path.exists("/etc/corral-avante")

    use(ed, "corral_bash", command="exit 4")
    got = answer(ed)
    assert got["result"] is None and got["err"].startswith("exit 4"), got


def test_corral_bash_runs_in_the_directory_avante_names(av: Editor, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    use(av, "corral_bash", command="pwd", path="sub")
    got = answer(av)
    assert got["err"] is None, got
    assert got["result"].startswith("exit 0")
    assert str(workspace / "sub") in got["result"]


def test_a_write_asks_in_corrals_window(av: Editor, workspace: Path) -> None:
    use(av, "corral_write", path="notes.txt", content="hello\n")
    lines = av.wait_for(lambda: confirm_window(av), what="corral's window")
    assert any("notes.txt" in line for line in lines)
    av.nvim.input("d")
    got = answer(av)
    assert got["result"] is None and got["err"].startswith("User declined")
    assert not (workspace / "notes.txt").exists()

    use(av, "corral_write", path="notes.txt", content="hello\n")
    av.wait_for(lambda: confirm_window(av), what="corral's window")
    time.sleep(0.5)  # approval keys act only after the window has been up a moment
    av.nvim.input("a")
    got = answer(av)
    assert got["err"] is None and got["result"].startswith("wrote 6 bytes")
    assert (workspace / "notes.txt").read_text() == "hello\n"


def test_a_write_outside_the_workspace_is_refused_without_asking(
    av: Editor, workspace: Path
) -> None:
    outside = workspace.parent / (workspace.name + "-outside.txt")
    use(av, "corral_write", path=str(outside), content="x")
    got = answer(av)
    assert got["result"] is None and got["err"].startswith("not run:"), got
    assert "the user can allow it" in got["err"]
    assert confirm_window(av) is None
    assert not outside.exists()


def test_an_edit_and_a_delete_go_through_corral(av: Editor, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one two\n")
    use(av, "corral_edit", path="a.txt", old_str="two", new_str="three")
    av.wait_for(lambda: confirm_window(av), what="corral's window")
    time.sleep(0.5)
    av.nvim.input("a")
    got = answer(av)
    assert got["err"] is None and "replaced 1 occurrence" in got["result"], got
    assert "+one three" in got["result"]  # the diff follows the summary
    assert (workspace / "a.txt").read_text() == "one three\n"

    # corral's delete tool is off while the sandbox is on (rm in the sandbox can be undone)
    use(av, "corral_delete", path="a.txt")
    got = answer(av)
    assert got["result"] is None and "tools.delete.allow_sandboxed" in got["err"], got
    assert (workspace / "a.txt").exists()
    av.lua("require('corral').setup({ tools = { delete = { allow_sandboxed = true } } })")
    use(av, "corral_delete", path="a.txt")
    av.wait_for(lambda: confirm_window(av), what="corral's window")
    time.sleep(0.5)
    av.nvim.input("a")
    got = answer(av)
    assert got["err"] is None, got
    assert not (workspace / "a.txt").exists()


def test_avantes_stop_kills_the_command_and_answers_once(av: Editor, workspace: Path) -> None:
    use(av, "corral_bash", command="sleep 3; touch late.txt")
    time.sleep(1.0)
    av.lua("require('avante.llm').cancel_inflight_request()")
    got = answer(av)
    assert got["err"] == "__CANCELLED__", got  # avante's own cancel token
    time.sleep(3.0)
    assert not (workspace / "late.txt").exists()
    assert len(av.lua("return _G.avante_calls")) == 1


def test_extend_keeps_the_users_own_tools(spawn: Callable[..., Editor], workspace: Path) -> None:
    ed = spawn(cwd=workspace)
    ed.add_plugins("avante.nvim", "plenary.nvim", "nui.nvim")
    names = ed.lua(
        """
        local mine = { name = "mine", description = "d", func = function() return "x" end }
        local opts = { custom_tools = { mine }, disabled_tools = { "web_search" } }
        local out = require("corral.integrations.avante").extend(opts)
        assert(#opts.custom_tools == 1 and #opts.disabled_tools == 1, "extend changed its input")
        local as_fn = require("corral.integrations.avante").extend({
          custom_tools = function() return { mine } end,
        })
        local names = {}
        for _, t in ipairs(out.custom_tools) do names[#names + 1] = t.name end
        for _, t in ipairs(as_fn.custom_tools()) do names[#names + 1] = "fn:" .. t.name end
        names[#names + 1] = vim.tbl_contains(out.disabled_tools, "web_search") and "kept" or "lost"
        return names
        """
    )
    assert names[0] == "mine" and "corral_bash" in names
    assert "fn:mine" in names and "fn:corral_bash" in names
    assert names[-1] == "kept"


def test_avantes_own_editor_tools_are_no_longer_approved_unasked(av: Editor) -> None:
    """avante runs str_replace_editor whenever the model names it, disabled or not, and its
    tools ask through Helpers.confirm, which approved everything by default. After extend()
    it asks (headless, with no sidebar to ask in, nothing is approved)."""
    answers = av.lua(
        """
        local helpers = require("avante.llm_tools.helpers")
        local approved = {}
        for _, tool in ipairs({ "str_replace", "create", "insert", "undo_edit", "bash" }) do
          -- (asking needs avante's sidebar: here it fails, or answers no)
          pcall(helpers.confirm, "write?", function(ok)
            if ok then approved[#approved + 1] = tool end
          end, {}, {}, tool)
        end
        vim.wait(500, function() return #approved > 0 end)
        return approved
        """
    )
    assert answers == []


# A real sidebar builds the options of the next request (what pressing send builds), and the
# model's tool use goes through avante's entry point with the tools those options hold.
SIDEBAR = """
local secret = ...
local sb = require("avante.sidebar"):new(vim.api.nvim_get_current_tabpage())
sb.code.bufnr = vim.api.nvim_get_current_buf()
sb.chat_history = { messages = {}, entries = {}, title = "t", timestamp = "x", filename = "x" }
local opts
sb:get_generate_prompts_options("hello", function(o) opts = o end)
local names = {}
for _, t in ipairs(opts.tools) do names[#names + 1] = t.name end
local r, e = require("avante.llm_tools").process_tool_use(opts.tools,
  { name = "add_file_to_context", id = "toolu_a", input = { rel_path = secret } },
  { session_ctx = {} })
local again
sb:get_generate_prompts_options("next", function(o) again = o end)
return { names = names, result = r or vim.NIL, err = e or vim.NIL,
         selected = again.selected_filepaths }
"""


def test_the_sidebars_own_context_tool_cannot_read_a_host_file(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r10b A1: the sidebar adds add_file_to_context to every request after disabled_tools
    is applied: a file the model named (~/.ssh/id_rsa) went into every later prompt."""
    home = home_with_a_key(workspace, "CANARY-PRIVATE-KEY")
    (workspace / "main.py").write_text("print(1)\n")
    ed = avante(
        spawn(cwd=workspace, env={"HOME": str(home)}),
        provider="openai",
        behaviour={"enable_token_counting": False},  # (needs avante's templates, not built)
    )
    ed.edit(workspace / "main.py")
    got = ed.lua(SIDEBAR, str(home / ".ssh" / "id_rsa"))
    assert "corral_read" in got["names"]
    assert "add_file_to_context" not in got["names"]
    assert "not provided" in str(got["err"]), got
    assert not any("id_rsa" in p for p in got["selected"]), got["selected"]


def test_a_path_avante_would_edit_unescaped_is_refused(av: Editor, workspace: Path) -> None:
    """r10b A2: Sidebar:apply opens the file a code block names with `noautocmd edit ` ..
    path, unescaped: a backtick in the model's path ran a shell command on the host."""
    canary = workspace / "CANARY-edit"
    got = av.lua(
        "local ok, err = pcall(require('avante.utils').open_buffer, ...) return tostring(err)",
        f"x`touch {canary}`.py",
    )
    assert not canary.exists()
    assert "refused" in got and "unescaped" in got, got
    # r11b A3: applying a code block makes the directories above its path: not outside
    for outside in ("../elsewhere/new/x.py", "/var/tmp/corral-avante-elsewhere/x.py"):
        got = av.lua(
            "local ok, err = pcall(require('avante.utils').open_buffer, ...) return tostring(err)",
            outside,
        )
        assert "outside avante's project" in got, got
    (workspace / "plain.py").write_text("x = 1\n")
    av.lua("require('avante.utils').open_buffer(...)", str(workspace / "plain.py"))
    assert av.lua("return vim.api.nvim_buf_get_name(0)") == str(workspace / "plain.py")


def test_avante_opens_no_path_that_names_the_text_under_the_cursor(av: Editor) -> None:
    """r13b G4: `<cfile>` passed corral's list of what `:edit` expands: avante's apply
    opened the file named under the cursor (~/.bashrc) instead of a project file."""
    got = av.lua(
        "local ok, err = pcall(require('avante.utils').open_buffer, '<cfile>') return tostring(err)"
    )
    assert "refused" in got and "unescaped" in got, got


def test_attempt_completions_command_is_not_run_on_the_host(av: Editor, workspace: Path) -> None:
    """r14b H2: attempt_completion, kept as harmless, hands its optional `command` to
    avante's own bash on the host: it is dropped, the result kept."""
    canary = workspace / "CANARY-completion"
    # (it ends the task only in a sidebar: a real one, made as avante makes it)
    av.lua(
        "local sb = require('avante.sidebar'):new(vim.api.nvim_get_current_tabpage())"
        " require('avante').get = function() return sb end"
    )
    use(av, "attempt_completion", result="done", command=f"touch {canary}")
    got = answer(av)
    assert got["result"] in (True, "true") and got["err"] is None, got  # completed, nothing run
    assert not canary.exists()
