"""The result contract chat plugins program against (issue 9): one shape for every tool, a
status, one Refusal shape with a hint, a plain summary for the model, refusal before asking
when a call is refused anyway, a cancel handle, and decide() that runs nothing."""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

from .test_execute import RESULT, confirm_window, execute, result
from .test_run import _running

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Editor

# (execute() as test_execute's EXECUTE, with the call's input as it is given)
EXECUTE_RAW = """
_G.corral_test_result = vim.NIL
require("corral").execute(..., {}, function(result) _G.corral_test_result = result end)
"""
REFUSAL_FIELDS = {"code", "rule", "layer", "message", "hint"}
RESULT_FIELDS = {"status", "ok", "tool", "sandboxed", "summary", "decision"}


def shaped(r: dict[str, Any], status: str) -> dict[str, Any]:
    assert set(r) >= RESULT_FIELDS, r
    assert r["status"] == status, r
    assert r["summary"] and "\n" not in r["summary"], r
    if status in ("refused", "denied_by_user"):
        assert set(r["refusal"]) >= REFUSAL_FIELDS, r["refusal"]
        assert r["refusal"]["hint"], r["refusal"]
        assert "refused" not in r  # one name for it
    return r


def test_a_command_that_ran_says_what_the_sandbox_refused(fresh: Editor) -> None:
    execute(fresh, "bash", command="echo ok; touch /etc/corral-contract; exit 3")
    r = shaped(result(fresh), "ran")
    assert r["ok"] is False and r["exit"] == 3 and r["sandboxed"] is True
    assert not os.path.exists("/etc/corral-contract")
    seen = r["sandbox_refusals"][0]
    assert set(seen) >= REFUSAL_FIELDS and seen["code"] == "read-only-file-system"
    assert seen["rule"] == "sandbox.policy.rw_paths" and "/etc/corral-contract" in seen["message"]
    assert r["summary"].startswith("exit 3; the sandbox refused 1 operation")
    assert "a write outside the writable area" in r["summary"]

    execute(fresh, "bash", command="true")
    r = shaped(result(fresh), "ran")
    assert (r["ok"], r["summary"]) == (True, "exit 0")

    # r89t SILENTDISCARD: a report written to /tmp "succeeded" and was gone, unsaid
    execute(fresh, "bash", command="echo x > /tmp/report.txt")
    r = shaped(result(fresh), "ran")
    assert r["ok"] and "/tmp/report.txt was written in the sandbox's own /tmp" in r["summary"], r
    assert "write it inside the workspace" in r["summary"]


def test_guard_refusals_have_codes_layers_and_hints(fresh: Editor, workspace: Path) -> None:
    chat = workspace / "ro.chat"
    chat.write_text('```lua\ncorral.opt.sandbox.mode = "read-only"\n```\n')
    bufnr = fresh.edit(chat)
    fresh.lua(
        "local call, b = ... _G.corral_test_result = vim.NIL"
        " require('corral').execute(call, { bufnr = b },"
        " function(r) _G.corral_test_result = r end)",
        {"name": "bash", "input": {"command": "touch x"}},
        bufnr,
    )
    r = shaped(result(fresh), "refused")
    refusal = r["refusal"]
    assert (refusal["code"], refusal["rule"]) == ("read-only-mode", "sandbox.mode")
    assert refusal["layer"] == f"frontmatter of {chat}", refusal  # where "read-only" came from
    assert "workspace-write" in refusal["hint"]
    assert r["summary"].startswith("not run: the sandbox is read-only")

    execute(fresh, "bash", command="sudo ls")
    refusal = shaped(result(fresh), "refused")["refusal"]
    assert refusal["code"] == "privileged" and "terminal" in refusal["hint"]


def test_calls_refused_anyway_are_refused_before_asking(fresh: Editor, workspace: Path) -> None:
    """Nothing auto-approves file writes or fetches here, so each would have opened the
    window first, only to be refused after you said yes."""
    (workspace / "f.txt").write_text("hello\n")
    outside = workspace.parent / f"{workspace.name}-outside.txt"
    cases = [
        ("write", {"path": str(outside), "content": "x"}, "outside-writable-roots"),
        ("delete", {"path": "f.txt"}, "delete-disabled"),
        ("edit", {"path": "f.txt", "old": "absent", "new": "y"}, "match-count"),
        ("read", {"path": "missing.txt"}, "not-found"),
        ("setup", {}, ""),  # with network, so that fetch reaches the preset and its check
        ("fetch", {"url": "https://example.com/"}, "host-not-allowed"),
    ]
    for tool, tool_input, code in cases:
        if tool == "setup":
            fresh.lua("require('corral').setup({ sandbox = { mode = 'workspace-write-network' } })")
            continue
        execute(fresh, tool, **tool_input)
        r = fresh.wait_for(lambda: fresh.lua(RESULT) or confirm_window(fresh), what=tool)
        assert isinstance(r, dict), f"{tool}: the window opened for a call refused anyway: {r}"
        shaped(r, "refused")
        assert r["refusal"]["code"] == code, (tool, r["refusal"])
        assert r["decision"]["reason"].startswith("refused before asking"), r
    assert not outside.exists()
    assert (workspace / "f.txt").read_text() == "hello\n"


def test_denied_by_user_and_cancel_while_asking(fresh: Editor, workspace: Path) -> None:
    execute(fresh, "write", path="a.txt", content="x")
    fresh.wait_for(lambda: confirm_window(fresh), what="the window")
    fresh.nvim.input("n")
    r = shaped(result(fresh), "denied_by_user")
    assert r["refusal"]["code"] == "denied-by-user"
    assert r["summary"] == "not run: the user declined this call"

    fresh.lua(
        "_G.corral_test_result = vim.NIL"
        " _G.handle = require('corral').execute({ name = 'write', input = { path = 'b.txt',"
        " content = 'x' } }, {}, function(r) _G.corral_test_result = r end)"
    )
    fresh.wait_for(lambda: confirm_window(fresh), what="the window")
    assert fresh.lua("return _G.handle.cancel()") is True
    r = shaped(result(fresh), "cancelled")
    assert confirm_window(fresh) is None
    assert fresh.lua("return _G.handle.cancel()") is False  # once done, nothing to cancel
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()


def test_cancel_stops_a_running_command_and_all_it_started(fresh: Editor) -> None:
    fresh.lua(
        "_G.corral_test_result = vim.NIL"
        " _G.handle = require('corral').execute({ name = 'bash', input = { command ="
        " 'sleep 93.25 & sleep 94.25; echo never' } }, {},"
        " function(r) _G.corral_test_result = r end)"
    )
    fresh.wait_for(lambda: _running("94.25"), what="the command to start")
    assert fresh.lua("return _G.handle.cancel()") is True
    r = shaped(result(fresh), "cancelled")
    assert r["ok"] is False and "never" not in r["output"]
    fresh.wait_for(lambda: not _running("93.25") and not _running("94.25"), what="all gone")


def test_timed_out_and_stdin(fresh: Editor) -> None:
    fresh.lua("require('corral').setup({ tools = { bash = { timeout = 1 } } })")
    started = time.monotonic()
    execute(fresh, "bash", command="cat; echo after-cat")
    r = shaped(result(fresh), "ran")  # stdin is /dev/null: cat ends at once
    assert "after-cat" in r["output"] and time.monotonic() - started < 1
    execute(fresh, "bash", command="sleep 30")
    r = shaped(result(fresh, timeout=15), "timed_out")
    assert r["summary"].startswith("killed after 1 s")


def test_decide_answers_without_running_or_asking(fresh: Editor, workspace: Path) -> None:
    decide = "return require('corral').decide(...)"
    d = fresh.lua(decide, {"name": "bash", "input": {"command": "touch made.txt"}})
    assert (d["decision"], d["source"], d["class"]) == (
        "approve", "urn:corral:approval:sandbox", "writes",
    )  # fmt: skip
    d = fresh.lua(decide, {"name": "write", "input": {"path": "w.txt", "content": "x"}})
    assert d["decision"] == "require_approval" and confirm_window(fresh) is None
    d = fresh.lua(decide, {"name": "bash", "input": {"command": "sudo id"}})
    assert d["decision"] == "deny" and d["refusal"]["code"] == "privileged"
    assert not (workspace / "made.txt").exists() and not (workspace / "w.txt").exists()


def test_unsandboxed_calls_say_so_in_the_window_once_and_in_the_result(
    fresh: Editor, workspace: Path
) -> None:
    fresh.lua("require('corral').setup({ sandbox = { mode = 'off' } })")
    fresh.clear_messages()
    execute(fresh, "bash", command="echo on-the-host")
    lines = fresh.wait_for(lambda: confirm_window(fresh), what="the window")
    assert any(line.startswith("!! UNSANDBOXED") for line in lines), lines
    time.sleep(0.5)
    fresh.nvim.input("a")
    r = shaped(result(fresh), "ran")
    assert r["sandboxed"] is False
    execute(fresh, "bash", command="echo again")
    fresh.wait_for(lambda: confirm_window(fresh), what="the window")
    fresh.nvim.input("n")
    result(fresh)
    told = [m for m in fresh.messages() if "UNSANDBOXED" in m]
    assert len(told) == 1, fresh.messages()


def test_home_as_the_workspace_is_warned_about(spawn: Any, workspace: Path) -> None:
    home = workspace / "home"
    home.mkdir()
    ed = spawn(cwd=home, env={"HOME": str(home)})
    execute(ed, "write", path="x.txt", content="x")
    lines = ed.wait_for(lambda: confirm_window(ed), what="the window")
    assert any("workspace is your home directory" in line for line in lines), lines
    ed.nvim.input("n")
    ed.cmd("Sandbox", "status")
    text = "\n".join(ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "WARNING: the workspace is your home directory" in text


def test_root_as_the_workspace_is_warned_about(spawn: Any) -> None:
    """r89 audit C9: the warning for `/` had no test (only the one for $HOME). A workspace at
    / cannot be writable at all: in the default mode nothing runs, and both say why; in mode
    read-only the window and :Sandbox status warn."""
    ed = spawn(cwd="/")
    why = "/ cannot be writable: it is or contains /proc"
    execute(ed, "write", path="corral-root-workspace.txt", content="x")
    r = shaped(result(ed), "failed")
    assert why in r["summary"] and confirm_window(ed) is None, r
    ed.cmd("Sandbox", "status")
    assert any(why in m and "read-only" in m for m in ed.messages()), ed.messages()

    ed.lua("require('corral').setup({ sandbox = { mode = 'read-only' } })")
    execute(ed, "read", path="etc/hostname")
    lines = ed.wait_for(lambda: confirm_window(ed), what="the window")
    assert "!! the workspace is / (the whole system): open Neovim in a project directory" in lines
    ed.nvim.input("n")
    shaped(result(ed), "denied_by_user")
    ed.cmd("Sandbox", "status")
    text = "\n".join(ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "WARNING: the workspace is / (the whole system)" in text, text
    assert not os.path.exists("/corral-root-workspace.txt")


def test_each_call_is_one_audit_line_naming_its_chat(spawn: Any, workspace: Path) -> None:
    """r89 audit C10: the chat's path was dropped from the line (not a key the log kept), and a
    file tool's call was logged twice (by the engine's op, and when execute() finished)."""
    state = workspace.parent / (workspace.name + "-state")
    ed = spawn(cwd=workspace, env={"XDG_STATE_HOME": str(state)})
    ed.lua("require('corral').setup({ tools = { auto_approve = { 'write', 'read' } } })")
    chat = workspace / "talk.chat"
    chat.write_text("# a chat\n")
    ed.edit(chat)
    calls = [
        ("bash", {"command": "echo hi"}, "ran"),
        ("write", {"path": "w.txt", "content": "x"}, "ran"),
        ("read", {"path": "w.txt"}, "ran"),
        ("bash", {"command": "sudo ls"}, "refused"),
    ]
    for name, tool_input, status in calls:
        execute(ed, name, **tool_input)
        shaped(result(ed), status)
    log = state / "corral" / "log" / "audit.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(x["tool"], x["status"]) for x in lines] == [(c[0], c[2]) for c in calls], lines
    assert all(x["chat"] == str(chat) for x in lines), lines
    assert [x["sandboxed"] for x in lines] == [True, True, True, False], lines
    assert lines[1]["path"] == "w.txt" and lines[3]["refusal"]["code"] == "privileged"
    assert not any("bufnr" in x for x in lines)


def test_a_name_too_long_is_a_refusal_not_a_hang(fresh: Editor, workspace: Path) -> None:
    """Fourth review, F3: an OSError from the change-set path escaped the engine's async call,
    so on_done was never called and the chat waited for good."""
    fresh.lua("require('corral').setup({ tools = { auto_approve = { 'write' } } })")
    execute(fresh, "write", path="x" * 300, content="y")
    r = shaped(result(fresh), "refused")
    assert r["refusal"]["code"] == "name-too-long", r["refusal"]


def test_a_nul_byte_in_an_input_is_refused_not_a_hang(fresh: Editor, workspace: Path) -> None:
    """Fourth review, F4: a NUL in the command raised E976 in the window code before asking;
    on_done was never called."""
    fresh.lua("require('corral').setup({ tools = { auto_approve_sandboxed = false } })")
    execute(fresh, "bash", command="echo shown\0; touch nul-ran")
    r = shaped(result(fresh), "refused")
    assert r["refusal"]["code"] == "invalid-input" and "NUL" in r["refusal"]["message"]
    assert not (workspace / "nul-ran").exists()


def test_bash_takes_a_cwd_inside_the_writable_roots(fresh: Editor, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    execute(fresh, "bash", command="pwd; touch here", cwd="sub")
    r = shaped(result(fresh), "ran")
    assert r["output"].strip() == str(workspace / "sub"), r
    assert (workspace / "sub" / "here").exists()
    for bad in ("/etc", "..", "missing"):
        execute(fresh, "bash", command="touch x", cwd=bad)
        r = shaped(result(fresh), "refused")
        assert r["refusal"]["code"] == "invalid-input" and "input.cwd" in r["refusal"]["message"]
    # (r61c CWDHINT: a directory yet to make was only "send the inputs the tool takes")
    assert "make it first (mkdir -p missing)" in r["summary"], r["summary"]
    d = fresh.lua(
        "return require('corral').decide(...)",
        {"name": "bash", "input": {"command": "git status", "cwd": "sub"}},
    )
    assert d["class"] == "dynamic", d  # git after a change of directory: never read-only


def test_two_calls_asked_at_once_are_asked_one_after_the_other(
    fresh: Editor, workspace: Path
) -> None:
    """Fifth review, G4: two windows stacked, each with its own 0.4 s; a double `a` approved
    the visible call and then the one under it, never seen."""
    fresh.lua(
        "_G.r1, _G.r2 = vim.NIL, vim.NIL"
        " local c = require('corral')"
        " c.execute({ name = 'write', input = { path = 'one.txt', content = '1' } }, {},"
        "   function(r) _G.r1 = r end)"
        " c.execute({ name = 'write', input = { path = 'two.txt', content = '2' } }, {},"
        "   function(r) _G.r2 = r end)"
    )
    lines = fresh.wait_for(lambda: confirm_window(fresh), what="the first window")
    assert any("one.txt" in line for line in lines)
    windows = fresh.lua(
        "local n = 0 for _, w in ipairs(vim.api.nvim_list_wins()) do"
        " if vim.bo[vim.api.nvim_win_get_buf(w)].filetype == 'corral-confirm' then n = n + 1 end"
        " end return n"
    )
    assert windows == 1
    time.sleep(0.5)
    fresh.nvim.input("aa")  # the second `a` lands before the next window is up 0.4 s
    fresh.wait_for(lambda: fresh.lua("return _G.r1 ~= vim.NIL"), what="the first result")
    time.sleep(0.3)
    assert fresh.lua("return _G.r2 == vim.NIL"), "the second call was approved unseen"
    lines = fresh.wait_for(lambda: confirm_window(fresh), what="the second window")
    assert any("two.txt" in line for line in lines)
    fresh.nvim.input("n")
    fresh.wait_for(lambda: fresh.lua("return _G.r2 ~= vim.NIL"), what="the second result")
    assert (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()


def _runs_in(ed: Editor, buf: int, workspace: Path, other: Path) -> None:
    """A command from the chat in `buf` runs in `workspace` and writes there, not in `other`."""
    ed.lua(
        "local b = ... _G.corral_test_result = vim.NIL"
        " require('corral').execute({ name = 'bash', input = { command = 'pwd; touch made' } },"
        " { bufnr = b }, function(r) _G.corral_test_result = r end)",
        buf,
    )
    r = result(ed)
    assert r["output"].strip().splitlines()[0] == str(workspace), r
    assert (workspace / "made").exists() and not (other / "made").exists()


def test_a_chats_workspace_is_its_own_windows_not_the_current_one(
    spawn: Any, workspace: Path
) -> None:
    """Sixth review (editor) R4: the workspace came from whichever window was current when a
    call arrived: with another project open in a tab of its own (:tcd), that project became
    writable for the chat's command."""
    other = workspace.parent / f"{workspace.name}-other"
    other.mkdir()
    ed = spawn(cwd=workspace)
    chat = workspace / "talk.chat"
    chat.write_text("hello\n")
    buf = ed.edit(chat)
    ed.lua("vim.cmd('tabnew') vim.cmd('tcd ' .. vim.fn.fnameescape(...))", str(other))
    assert ed.lua("return vim.fn.getcwd()") == str(other)
    _runs_in(ed, buf, workspace, other)


def test_a_hidden_chats_workspace_is_where_it_was_last_shown(spawn: Any, workspace: Path) -> None:
    """Seventh review r7b F2: a chat no window shows got the editor's global directory (another
    project, or $HOME) as its workspace, not the :tcd directory it was opened and shown in."""
    other = workspace.parent / f"{workspace.name}-other"
    other.mkdir()
    ed = spawn(cwd=other)  # Neovim started in another project
    chat = workspace / "talk.chat"
    chat.write_text("hello\n")
    (workspace / "notes.txt").write_text("x\n")
    ed.lua("vim.o.hidden = true vim.cmd('tabnew') vim.cmd('tcd ' .. vim.fn.fnameescape(...))",
           str(workspace))  # fmt: skip
    buf = ed.edit(chat)
    ed.edit(workspace / "notes.txt")  # the chat is hidden now; the tab's directory is the same
    assert ed.lua("return #vim.fn.win_findbuf(...)", buf) == 0
    _runs_in(ed, buf, workspace, other)


def test_a_call_whose_chat_was_closed_while_it_waited_does_not_run(
    fresh: Editor, workspace: Path
) -> None:
    """Sixth review (editor) R6: decided with the chat's settings, run with others once its
    buffer was gone (its narrowing lost, and the window did not say so)."""
    chat = workspace / "talk.chat"
    chat.write_text("```lua\ncorral.opt.sandbox.policy.network = false\n```\n")
    buf = fresh.edit(chat)
    fresh.lua(
        "local b = ... _G.corral_test_result = vim.NIL"
        " require('corral').execute({ name = 'write', input = { path = 'w.txt', content = 'x' } },"
        " { bufnr = b }, function(r) _G.corral_test_result = r end)",
        buf,
    )
    fresh.wait_for(lambda: confirm_window(fresh), what="the window")
    fresh.lua(
        "local b = ... local main = vim.fn.win_findbuf(b)[1]"
        " vim.api.nvim_win_set_buf(main, vim.api.nvim_create_buf(true, false))"
        " vim.cmd('bwipeout! ' .. b)",
        buf,
    )
    assert fresh.lua("return vim.api.nvim_buf_is_valid(...)", buf) is False
    time.sleep(0.5)
    fresh.nvim.input("a")
    r = shaped(result(fresh), "cancelled")
    assert not (workspace / "w.txt").exists(), r


def test_a_fetch_of_a_private_address_is_refused_with_the_layer_of_its_setting(
    fresh: Editor,
) -> None:
    """r72d FETCHPRIVSTATUS: a fetch refused for a private address came back "failed"
    ("could not run"), though its code was private-address; REFUSALLAYER: its layer was
    allow_hosts' (global), not allow_private's (default)."""
    fresh.lua(
        "require('corral').setup({ sandbox = { mode = 'workspace-write-network' },"
        " tools = { approval = 'auto', auto_approve = { 'fetch' },"
        " fetch = { allow_hosts = { '127.0.0.1' } } } })"
    )
    execute(fresh, "fetch", url="http://127.0.0.1:9/")
    r = shaped(result(fresh), "refused")
    assert r["refusal"]["code"] == "private-address", r
    assert r["refusal"]["layer"] == "default", r["refusal"]
    assert r["summary"].startswith("not run: "), r["summary"]
    # r77d FETCHRESOLVE: a name that does not resolve is the world's failure, not corral's
    # refusal (it was "refused", as if a setting had said no)
    fresh.lua("require('corral').setup({ sandbox = { mode = 'workspace-write-network' },"
              " tools = { approval = 'auto', auto_approve = { 'fetch' },"
              " fetch = { allow_hosts = { 'corral-test.invalid' } } } })")  # fmt: skip
    execute(fresh, "fetch", url="http://corral-test.invalid/")
    r = shaped(result(fresh), "failed")
    assert r["refusal"]["code"] == "resolve-failed", r
    assert r["summary"].startswith("could not run: "), r["summary"]
    # ... and the delete tool's refusal named "builtin" for its setting's default
    execute(fresh, "delete", path="x.txt")
    r = shaped(result(fresh), "refused")
    assert (r["refusal"]["code"], r["refusal"]["layer"]) == ("delete-disabled", "default"), r


def test_an_input_that_is_no_table_is_refused_and_later_calls_still_end(
    fresh: Editor, workspace: Path
) -> None:
    """r77d STRINPUT, STRINPUTWEDGE: `input` as the JSON string an OpenAI-style API hands
    over gave the model a Python traceback (bash) or "input.  is not an input" (read); and
    after the bash one, no read, write or fetch call of the session ever called on_done."""
    (workspace / "README.md").write_text("hello\n")
    for name in ("bash", "read"):
        fresh.lua(EXECUTE_RAW, {"name": name, "input": '{"command": "ls", "path": "README.md"}'})
        r = shaped(result(fresh), "refused")
        assert r["refusal"]["code"] == "invalid-input", r
        assert "input as a string, not a table" in r["refusal"]["message"], r  # (r89)
        assert "vim.json.decode" in r["refusal"]["message"], r
        assert "Traceback" not in r["summary"] and len(r["summary"]) < 400, r
    fresh.lua("require('corral').setup({ tools = { auto_approve = { 'read' } } })")
    execute(fresh, "read", path="README.md")
    r = shaped(result(fresh), "ran")
    assert r["content"] == "hello\n", r


def test_an_engine_error_in_one_call_never_stops_later_calls_from_ending(
    fresh: Editor, workspace: Path
) -> None:
    """r77d STRINPUTWEDGE, the mechanism: an error out of the engine's synchronous request
    left Neovim's remote#define#request counting the host busy, and every later notification
    to it (read, write, edit, fetch) waited for good. Any error comes back as an answer."""
    (workspace / "README.md").write_text("hello\n")
    answer = fresh.lua(
        "return vim.fn.CorralCall('register', { name = 'x', priority = 'not a number' })"
    )
    assert "corral's engine failed in register: ValueError" in answer["error"], answer
    fresh.lua("require('corral').setup({ tools = { auto_approve = { 'read' } } })")
    execute(fresh, "read", path="README.md")
    assert shaped(result(fresh), "ran")["content"] == "hello\n"


def test_a_command_or_input_too_large_is_refused_and_on_done_still_comes(
    fresh: Editor, workspace: Path
) -> None:
    """r78c BASHARGMAX: a bash command past 128 KiB made jobstart fail with E903, which
    escaped execute(): on_done never came. RPCWEDGE: a file tool's input past ~100 MiB was
    dropped by pynvim, and Neovim waited for good."""
    execute(fresh, "bash", command="echo " + "x" * 200_000)
    r = shaped(result(fresh), "refused")
    assert r["refusal"]["code"] == "invalid-input" and "KiB" in r["refusal"]["message"], r
    fresh.lua("require('corral').setup({ tools = { auto_approve = { 'write' } } })")
    fresh.lua(
        EXECUTE_RAW, {"name": "write", "input": {"path": "big.txt", "content": "y" * (40 << 20)}}
    )
    r = shaped(result(fresh), "refused")
    assert r["refusal"]["code"] == "invalid-input" and "MiB" in r["refusal"]["message"], r
    assert not (workspace / "big.txt").exists()
    execute(fresh, "write", path="small.txt", content="ok\n")
    assert shaped(result(fresh), "ran")
    assert (workspace / "small.txt").read_text() == "ok\n"


def test_nested_huge_inputs_and_malformed_text_are_refused_with_a_hint(
    fresh: Editor, workspace: Path
) -> None:
    """r79c RPCNEST: a huge string nested in the input, or as the tool's name, passed the
    size check and froze the editor; MALFORMEDWORDS: a cwd with a NUL and a command that is
    no UTF-8 ended "failed" with Python's exception text."""
    fresh.lua(EXECUTE_RAW, {"name": "read", "input": {"path": {"x": "y" * (40 << 20)}}})
    assert shaped(result(fresh), "refused")["refusal"]["code"] == "invalid-input"
    fresh.lua(EXECUTE_RAW, {"name": "z" * (40 << 20), "input": {}})
    assert shaped(result(fresh), "refused")
    # (a table nested past 32 levels: said so, not "32 MiB")
    fresh.lua(
        "local t = {} local n = t for _ = 1, 40 do n.x = {} n = n.x end"
        " _G.corral_test_result = vim.NIL require('corral').execute({ name = 'read', input ="
        " { path = 'a', deep = t } }, {}, function(r) _G.corral_test_result = r end)"
    )
    r = shaped(result(fresh), "refused")
    assert "nested more than 32 levels" in r["refusal"]["message"], r
    fresh.lua(EXECUTE_RAW, {"name": "bash", "input": {"command": "ls", "cwd": "a\0b"}})
    r = shaped(result(fresh), "refused")
    assert r["refusal"]["code"] == "invalid-input" and "NUL" in r["refusal"]["message"], r
    fresh.lua(
        "_G.corral_test_result = vim.NIL require('corral').execute({ name = 'bash', input ="
        " { command = 'echo ' .. string.char(255, 254) } }, {}, function(r)"
        " _G.corral_test_result = r end)"
    )
    r = shaped(result(fresh), "refused")
    assert r["refusal"]["code"] == "invalid-input" and "UTF-8" in r["refusal"]["message"], r


def test_a_wholesale_delete_asks_only_where_no_change_set_undoes_it(
    spawn: Any, workspace: Path
) -> None:
    """r89 audit C8: `rm -rf build` ran unasked with direct writes, where nothing undoes it;
    with change sets (the default) it still runs unasked, and can be undone."""
    ed = spawn(cwd=workspace)
    for attempt in ("apply", "direct"):
        (workspace / "build").mkdir()
        (workspace / "build" / "a.o").write_text("x")
        ed.lua(f"require('corral').setup({{ sandbox = {{ writes = '{attempt}' }} }})")
        execute(ed, "bash", command="rm -rf build")
        if attempt == "apply":
            shaped(result(ed), "ran")
            assert not (workspace / "build").exists()
            continue
        lines = ed.wait_for(lambda: confirm_window(ed), what="the window")
        assert any("rm -r removes whole directories" in line for line in lines), lines
        time.sleep(0.5)  # approval keys act only after the window has been up a moment
        ed.nvim.input("n")
        shaped(result(ed), "denied_by_user")
        assert (workspace / "build" / "a.o").exists()


def test_the_first_chat_opened_says_once_that_nothing_confines_its_calls(
    spawn: Any, workspace: Path
) -> None:
    """r89 audit C7: with no sandbox at work, the warning came at the first bash call only;
    the issue asked for it when the first chat opens. Said once a session, not again at the
    next chat nor at a call; with a sandbox at work, nothing is said; with one required and
    none working, the chat's commands are said to be refused (r91c)."""
    first, second = workspace / "a.chat", workspace / "b.chat"
    for chat in (first, second):
        chat.write_text("# a chat\n")
    working = spawn(cwd=workspace)
    working.edit(first)
    time.sleep(0.3)
    assert not any("UNSANDBOXED" in m for m in working.messages()), working.messages()
    required = spawn(cwd=workspace)
    required.lua(
        "require('corral').setup({ sandbox = { backend = 'required',"
        " backends = { bwrap = { path = '/nonexistent/bwrap' } } } })"
    )
    required.edit(first)
    required.wait_for(
        lambda: any("this chat's commands are refused here" in m for m in required.messages()),
        what="the refusal warning",
    )
    fresh = spawn(cwd=workspace)
    fresh.lua("require('corral').setup({ sandbox = { mode = 'off' } })")
    fresh.edit(first)
    fresh.wait_for(lambda: any("UNSANDBOXED" in m for m in fresh.messages()), what="the warning")
    fresh.edit(second)
    execute(fresh, "bash", command="echo on-the-host")
    fresh.wait_for(lambda: confirm_window(fresh), what="the window")
    fresh.nvim.input("n")
    result(fresh)
    told = [m for m in fresh.messages() if "UNSANDBOXED" in m and m.startswith("corral: ")]
    assert len(told) == 1 and "this chat's tool calls run UNSANDBOXED" in told[0], told
