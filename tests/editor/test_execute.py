"""require("corral").execute: guard, confirmation window, run, structured result."""

from __future__ import annotations

import os
import stat
import time
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .conftest import Editor

EXECUTE = """
local call, bufnr = ...
_G.corral_test_result = vim.NIL
require("corral").execute(call, { bufnr = bufnr }, function(result)
  _G.corral_test_result = result
end)
"""


def execute(ed: Editor, name: str, **tool_input: Any) -> None:
    ed.lua(EXECUTE, {"name": name, "input": tool_input}, 0)


RESULT = "local r = _G.corral_test_result if r == vim.NIL then return false end return r"


def result(ed: Editor, timeout: float = 20) -> dict[str, Any]:
    return ed.wait_for(
        lambda: ed.lua(RESULT),
        timeout=timeout,
        what="the tool call's result",
    )


def confirm_window(ed: Editor) -> list[str] | None:
    return ed.lua(
        "for _, w in ipairs(vim.api.nvim_list_wins()) do"
        "  local b = vim.api.nvim_win_get_buf(w)"
        "  if vim.bo[b].filetype == 'corral-confirm' then"
        "    return vim.api.nvim_buf_get_lines(b, 0, -1, false) end end return nil"
    )


def test_sandboxed_bash_runs_without_asking(fresh: Editor, workspace: Path) -> None:
    execute(fresh, "bash", command="echo hi > made.txt; echo done; echo x > /etc/corral-x")
    r = result(fresh)
    assert r["decision"]["source"] == "urn:corral:approval:sandbox"
    assert (workspace / "made.txt").read_text() == "hi\n"
    assert "done" in r["output"]
    assert r["exit"] != 0  # the write to /etc failed inside the sandbox
    codes = {x["code"] for x in r["sandbox_refusals"]}
    assert "read-only-file-system" in codes
    assert all(x["hint"] for x in r["sandbox_refusals"])


def test_a_write_asks_and_approve_runs_it(fresh: Editor, workspace: Path) -> None:
    execute(fresh, "write", path="notes.txt", content="hello\n")
    lines = fresh.wait_for(lambda: confirm_window(fresh), what="the confirmation window")
    assert any("notes.txt" in line for line in lines)
    assert any("hello" in line for line in lines)
    time.sleep(0.5)  # approval keys act only after the window has been up a moment
    fresh.nvim.input("a")
    r = result(fresh)
    assert r["ok"] is True and r["decision"]["source"] == "user"
    assert (workspace / "notes.txt").read_text() == "hello\n"


def test_a_call_changed_by_its_plugin_while_the_window_waits_runs_as_shown(
    fresh: Editor, workspace: Path
) -> None:
    """r40c: execute() read the caller's table again after the window was answered: a plugin
    changing it meanwhile ran a write other than the one decided and shown."""
    fresh.lua(
        "_G.call = { name = 'write', input = { path = 'shown.txt', content = 'shown' } }"
        " _G.corral_test_result = vim.NIL"
        " require('corral').execute(_G.call, { bufnr = 0 }, function(r)"
        " _G.corral_test_result = r end)"
    )
    fresh.wait_for(lambda: confirm_window(fresh), what="the confirmation window")
    fresh.lua("_G.call.input.path = 'other.txt' _G.call.input.content = 'other'")
    time.sleep(0.5)
    fresh.nvim.input("a")
    assert result(fresh)["ok"] is True
    assert (workspace / "shown.txt").read_text() == "shown"
    assert not (workspace / "other.txt").exists()


def test_a_call_arriving_while_you_type_neither_takes_your_keys_nor_approves(
    fresh: Editor, workspace: Path
) -> None:
    """Issue 9: the window opened in Insert mode (each key E21, the text lost); and an `a`
    typed as it opened (to append text) must not approve the call."""
    fresh.nvim.input("ihello")
    assert fresh.nvim.api.get_mode()["mode"] == "i"
    execute(fresh, "write", path="typed.txt", content="x")
    fresh.wait_for(lambda: confirm_window(fresh), what="the confirmation window")
    assert fresh.nvim.api.get_mode()["mode"] == "n"
    fresh.nvim.input("a")  # at once: too early to be an answer
    time.sleep(0.2)
    assert confirm_window(fresh) is not None
    assert fresh.lua(RESULT) is False
    time.sleep(0.5)
    fresh.nvim.input("a")
    assert result(fresh)["ok"] is True
    assert (workspace / "typed.txt").read_text() == "x"


def test_deny_in_the_window_runs_nothing(fresh: Editor, workspace: Path) -> None:
    execute(fresh, "write", path="nope.txt", content="x")
    fresh.wait_for(lambda: confirm_window(fresh), what="the confirmation window")
    fresh.nvim.input("d")
    r = result(fresh)
    assert r["ok"] is False and r["refusal"]["code"] == "denied-by-user"
    assert not (workspace / "nope.txt").exists()


def test_the_window_shows_control_characters_and_invisible_unicode(fresh: Editor) -> None:
    fresh.lua("require('corral').setup({ sandbox = { mode = 'off' } })")  # so bash must ask
    # (r74c INVISVS: U+E0100 and U+180B, drawn with no width: `rm -f notes.txt<U+E0100>`
    # read as notes.txt)
    execute(fresh, "bash", command="echo \x1b[31mred\x1b[0m # \u202eevil\u200b x\U000e0100 y\u180b")
    lines = fresh.wait_for(lambda: confirm_window(fresh), what="the confirmation window")
    text = "\n".join(lines)
    assert "^[[31mred^[[0m" in text
    assert "<U+202E>" in text and "<U+200B>" in text
    assert "x<U+E0100>" in text and "y<U+180B>" in text
    assert "\x1b" not in text and "\u202e" not in text
    fresh.nvim.input("q")
    assert result(fresh)["refusal"]["code"] == "denied-by-user"


def test_file_tools_refuse_with_a_structured_refusal(fresh: Editor, workspace: Path) -> None:
    (workspace / ".env").write_text("SECRET=1\n")
    fresh.lua("require('corral').setup({ tools = { auto_approve = { 'read' } } })")
    execute(fresh, "read", path=".env")
    r = result(fresh)
    assert r["ok"] is False
    refused = r["refusal"]
    assert refused["rule"].startswith("tools.permissions.deny")
    assert refused["hint"] and refused["path"].endswith(".env")
    assert "SECRET" not in str(r)


def test_read_only_chat_refuses_writes_before_asking(fresh: Editor, workspace: Path) -> None:
    fresh.lua("require('corral').setup({ sandbox = { mode = 'read-only' } })")
    execute(fresh, "bash", command="touch x")
    r = result(fresh)
    assert r["refusal"]["rule"] == "sandbox.mode"
    assert confirm_window(fresh) is None
    assert not (workspace / "x").exists()


def test_timeout_kills_the_command(fresh: Editor, workspace: Path) -> None:
    """... and what it wrote is held whole, not applied (r54c CANCELAPPLIED: the editor's
    stopped runs were applied; `corral run` held them)."""
    fresh.lua("require('corral').setup({ tools = { bash = { timeout = 1 } } })")
    execute(fresh, "bash", command="echo half > partial.txt; sleep 30; echo never")
    r = result(fresh, timeout=15)
    assert r["timed_out"] is True and r["ok"] is False
    assert "never" not in r["output"]
    assert not (workspace / "partial.txt").exists()
    assert r["changes"]["status"] == "held", r["changes"]


def test_lua_resolver_and_function_auto_approve(fresh: Editor, workspace: Path) -> None:
    fresh.lua(
        "require('corral').setup({ tools = { auto_approve = function(call)"
        " if call.name == 'write' then return true end end } })"
        " require('corral').register_resolver('no-rm', function(ctx)"
        " if ctx.input.command and ctx.input.command:find('rm ') then return 'deny' end end, 95)"
    )
    execute(fresh, "bash", command="rm -f something")
    r = result(fresh)
    assert r["decision"]["source"] == "urn:corral:approval:no-rm"
    execute(fresh, "write", path="auto.txt", content="ok")
    r = result(fresh)
    assert r["ok"] is True and r["decision"]["source"] == "urn:corral:approval:config"
    assert (workspace / "auto.txt").read_text() == "ok"


def test_status_shows_the_approval_chain(fresh: Editor) -> None:
    fresh.lua("require('corral').register_resolver('team-policy', function() end, 70)")
    fresh.cmd("Sandbox", "status")
    lines = "\n".join(fresh.buffer_lines("corral://status") or [])
    assert "approval:  preset ask" in lines
    assert "config (100), frontmatter (90), team-policy (70), sandbox (25), catch-all (0)" in lines


def test_a_long_command_is_shown_whole_with_the_decision_on_top(fresh: Editor) -> None:
    fresh.lua("require('corral').setup({ sandbox = { mode = 'off' } })")  # so bash must ask
    execute(fresh, "bash", command="echo " + "A" * 4000 + " ; touch HIDDEN_TAIL")
    lines = fresh.wait_for(lambda: confirm_window(fresh), what="the confirmation window")
    assert lines[1].startswith("asked because:")
    assert any(line.startswith("a / y: approve") for line in lines[:6])
    assert "HIDDEN_TAIL" in "\n".join(lines)
    shown = fresh.lua(
        "for _, w in ipairs(vim.api.nvim_list_wins()) do"
        "  local b = vim.api.nvim_win_get_buf(w)"
        "  if vim.bo[b].filetype == 'corral-confirm' then"
        "    local c = vim.api.nvim_win_get_config(w)"
        "    return { c.height, vim.api.nvim_win_text_height(w, {}).all,"
        "             vim.fn.join(vim.tbl_map(function(t) return t[1] end, c.title), '') }"
        "  end end"
    )
    height, needed, title = shown
    assert height == needed or "more below" in title, shown
    fresh.nvim.input("q")
    assert result(fresh)["refusal"]["code"] == "denied-by-user"


def test_bash_calls_run_in_bash_the_shell_the_classifier_reads(
    fresh: Editor, workspace: Path
) -> None:
    """dash reads `echo &>/dev/null touch X` as `echo &` then `touch X`; bash as an echo."""
    fresh.lua(
        "require('corral').setup({ sandbox = { mode = 'off' }, tools = { approval = 'full' } })"
    )
    execute(fresh, "bash", command="echo &>/dev/null touch PWNED")
    r = result(fresh)
    assert r["decision"]["decision"] == "approve"
    from corral.toolguard.classify import classify

    assert classify("echo &>/dev/null touch PWNED").kind == "read-only"  # as bash reads it
    assert r["exit"] == 0
    assert not (workspace / "PWNED").exists()


def test_bash_tool_calls_never_use_a_bash_found_on_path(spawn: Any, workspace: Path) -> None:
    """A workspace .venv/bin first on PATH (an activated venv) may hold a bash a sandboxed
    command wrote: bash tool calls use the system's bash (issue 7, item 1)."""
    import os

    bindir = workspace / ".venv" / "bin"
    bindir.mkdir(parents=True)
    planted = bindir / "bash"
    planted.write_text("#!/bin/sh\necho PLANTED-BASH-RAN\n")
    planted.chmod(0o755)
    ed = spawn(cwd=workspace, env={"PATH": f"{bindir}:{os.environ['PATH']}"})
    assert ed.lua("return vim.fn.exepath('bash')") == str(planted)
    execute(ed, "bash", command="echo from-the-real-bash")
    r = result(ed)
    # (The user's ~/.bashrc may itself start `bash` from PATH inside the sandbox: that is not
    # the tool call's shell, and it prints the marker inside a longer line.)
    assert "PLANTED-BASH-RAN" not in r["output"].splitlines(), r["output"]
    assert "from-the-real-bash" in r["output"].splitlines()


FAILING_FUNCTIONS = {
    "throws": "function() error('boom') end",
    "false": "function() return false end",
    "deny": "function() return 'deny' end",
    "junk": "function() return 42 end",
}


def test_auto_approve_functions_fail_closed(fresh: Editor, workspace: Path) -> None:
    """Sandboxed bash is approved by the sandbox resolver (25) when nothing above answers. A
    Lua auto_approve function that throws, says false or "deny", or answers junk used to count
    as "pass", so the sandbox approved: now it asks (or denies)."""
    expected = {"throws": "require_approval", "false": "require_approval", "deny": "deny",
                "junk": "require_approval"}  # fmt: skip
    for name, fn in FAILING_FUNCTIONS.items():
        fresh.lua(f"require('corral').setup({{ tools = {{ auto_approve = {fn} }} }})")
        fresh.lua(
            "_G.corral_test_result = vim.NIL "
            "require('corral').execute({ name = 'bash', input = { command = 'touch x-' .. ... } },"
            " { bufnr = 0 }, function(r) _G.corral_test_result = r end)",
            name,
        )
        if expected[name] == "require_approval":
            fresh.wait_for(lambda: confirm_window(fresh), what="the confirmation window")
            fresh.lua("vim.api.nvim_feedkeys('n', 'x', false)")
        r = result(fresh)
        assert r["decision"]["decision"] == expected[name], (name, r["decision"])
        assert r["decision"]["source"] == "urn:corral:approval:config", (name, r["decision"])
        assert not (workspace / f"x-{name}").exists(), name


def test_resolvers_fail_closed_and_get_the_calls_context(fresh: Editor, workspace: Path) -> None:
    fresh.lua(
        "_G.seen = nil require('corral').register_resolver('ctx', function(c, call)"
        " _G.seen = call error('resolver bug') end, 60)"
    )
    fresh.lua(
        "_G.corral_test_result = vim.NIL require('corral').execute({ id = 'call-7', name = 'bash',"
        " input = { command = 'touch y' } }, { bufnr = 0 }, function(r) _G.corral_test_result = r"
        " end)"
    )
    fresh.wait_for(lambda: confirm_window(fresh), what="the confirmation window")
    fresh.lua("vim.api.nvim_feedkeys('n', 'x', false)")
    r = result(fresh)
    assert (r["decision"]["decision"], r["decision"]["source"]) == (
        "require_approval", "urn:corral:approval:ctx",
    )  # fmt: skip
    assert "resolver bug" in r["decision"]["reason"]
    seen = fresh.lua("return _G.seen")
    assert seen["tool_call_id"] == "call-7"
    assert seen["cwd"] == str(workspace) and isinstance(seen["bufnr"], int)
    assert not (workspace / "y").exists()


def test_a_bash_result_says_what_changed_and_what_was_held(fresh: Editor, workspace: Path) -> None:
    # What a chat tells the model: the writes applied, and those held with the reason.
    (workspace / "old.txt").write_text("old\n")
    execute(fresh, "bash", command="echo n > new.txt; echo m > old.txt; echo x > .nvim.lua")
    changes = result(fresh)["changes"]
    assert changes["status"] == "held"
    assert changes["counts"] == {"added": 1, "modified": 1, "deleted": 0, "held": 1}
    assert sorted(changes["changed"]) == [
        f"added {workspace / 'new.txt'}",
        f"modified {workspace / 'old.txt'}",
    ]
    (held,) = changes["held"]
    assert held["path"] == str(workspace / ".nvim.lua") and "protected" in held["why"]
    assert not (workspace / ".nvim.lua").exists()
    # r51c MODELTEXT: corral's own lines (":Sandbox apply ...") are the user's, in `repairs`,
    # not in the output the model reads as the command's
    r = result(fresh)
    assert any(":Sandbox changes" in line for line in r["repairs"]), r["repairs"]
    assert "corral:" not in r["output"] and ":Sandbox" not in r["output"], r["output"]


def test_a_later_bash_result_says_what_earlier_calls_left_held(
    fresh: Editor, workspace: Path
) -> None:
    """A held file is in no later call's workspace: the model ran a script importing it and
    read only `ModuleNotFoundError` (r48c). The next result names it, for the model too."""
    fresh.clear_messages()
    execute(fresh, "bash", command="echo x > .nvim.lua")
    first = result(fresh)["changes"]
    # (r61c HELDSILENT: the user was told nothing; a chat plugin shows them no `repairs`)
    told = (
        "corral: the chat's bash call left .nvim.lua held for your review: "
        f":Sandbox changes {first['id']}"
    )
    assert told in fresh.messages(), fresh.messages()
    execute(fresh, "bash", command="test -e .nvim.lua")
    r = result(fresh)
    assert r["exit"] == 1
    assert r["changes"]["earlier"] == [{"id": first["id"], "paths": [".nvim.lua"], "count": 1}]
    assert r["summary"] == (
        "exit 1; earlier commands' changes held for the user's review are not in the "
        "workspace: .nvim.lua"
    )


def test_a_long_output_keeps_its_end_and_says_what_was_cut(fresh: Editor) -> None:
    # Issue 9: the cap kept the start; errors come last. Cut on a whole UTF-8 character.
    # (103: the cut falls inside a line of 6 bytes, `é186\n`)
    fresh.lua("require('corral').setup({ tools = { bash = { output_cap = 103 } } })")
    execute(fresh, "bash", command="for i in $(seq 1 200); do echo é$i; done; echo LAST-LINE")
    r = result(fresh)
    assert r["truncated"] is True
    header, _, kept = r["output"].partition("\n")
    assert header.startswith("[corral: output cut: the first ") and "dropped" in header
    assert kept.rstrip().endswith("LAST-LINE")
    assert len(kept.encode()) <= 103
    kept.encode("utf-8")  # whole characters only
    assert "\ufffd" not in kept
    # r72d OUTCUT: on a whole line: the tail of a cut `é187` read as a line `87`
    assert all(line.startswith("é") for line in kept.splitlines()[:-1]), kept


@pytest.mark.parametrize(
    "settings", ["approval = 'auto'", "approval = 'full'", "auto_approve = { 'read' }"]
)
def test_decide_never_approves_a_read_that_will_be_refused(
    fresh: Editor, workspace: Path, settings: str
) -> None:
    """r12b F1: with reads approved by the user's settings, decide() answered "approve" for
    ~/.ssh/id_rsa (the refusal came only when corral ran the read itself): a chat plugin
    that reads the file on its own, trusting decide() (Flemma, codecompanion's rules), read
    it. decide() now answers what execution would."""
    (workspace / ".env").write_text("SECRET=1\n")
    fresh.lua(f"require('corral').setup({{ tools = {{ {settings} }} }})")
    decide = "return require('corral').decide({ name = 'read', input = { path = ... } })"
    decided = fresh.lua(decide, str(workspace / ".env"))
    assert decided["decision"] == "deny", decided
    (workspace / "notes.md").write_text("x\n")
    decided = fresh.lua(decide, "notes.md")
    assert decided["decision"] == "approve", decided


def test_decide_never_approves_an_edit_that_will_be_refused(fresh: Editor, workspace: Path) -> None:
    """r13b G2: with edits approved by settings, decide() answered "approve" for an edit of
    a protected file (the edit's own checks ran only before asking)."""
    (workspace / ".nvim.lua").write_text("-- mine\n")
    fresh.lua("require('corral').setup({ tools = { approval = 'full' } })")
    decided = fresh.lua(
        "return require('corral').decide({ name = 'edit', input = { path = ...,"
        " old = 'mine', new = 'x' } })",
        str(workspace / ".nvim.lua"),
    )
    assert decided["decision"] == "deny", decided


def test_decide_never_approves_a_write_the_change_set_check_refuses(
    fresh: Editor, workspace: Path
) -> None:
    """r18b L1: with writes approved by settings, decide() answered "approve" for a write of
    the open chat file, a new `.chat` file or a protected name below the top (only the
    change-set check refused them, when execute() ran). decide() now asks the same rules."""
    fresh.lua("require('corral').setup({ tools = { approval = 'auto' } })")
    chat = workspace / "c.chat"
    chat.write_text("@You: hi\n")
    fresh.cmd("edit", str(chat))
    decide = (
        "return require('corral').decide({ name = 'write', input = { path = ..., content = 'x' } })"
    )
    for path in (str(chat), "sub/../c.chat", "other.chat", "sub/.nvim.lua"):
        decided = fresh.lua(decide, path)
        assert decided["decision"] == "deny", (path, decided)
        assert "corral apply" not in str(decided), decided  # no change set to apply
    decided = fresh.lua(decide, "notes.md")
    assert decided["decision"] == "approve", decided


# Tool calls whose result is checked on the host or in what the model was given.


def call(ed: Editor, name: str, bufnr: int = 0, **tool_input: Any) -> dict[str, Any]:
    """Run a tool call for the chat in `bufnr` (0: the current buffer); its result."""
    ed.lua(EXECUTE, {"name": name, "input": tool_input}, bufnr)
    return ed.wait_for(lambda: ed.lua(RESULT), timeout=20, what=f"the {name} call's result")


def unasked(spawn: Callable[..., Editor], cwd: Path, approval: str = "full") -> Editor:
    """An editor in `cwd` with the approval preset `approval` (full: nothing is asked)."""
    ed = spawn(cwd=cwd)
    ed.lua("require('corral').setup({ tools = { approval = ... } })", approval)
    return ed


def test_a_file_in_a_subdirectory_keeps_its_own_mode(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """F5: through a change set, a file below a subdirectory got the directory's mode (an
    edited 0600 file became 0755, every new file there executable)."""
    (workspace / "sub" / "deeper").mkdir(parents=True)
    secret = workspace / "sub" / "private.txt"
    secret.write_text("abc\n")
    secret.chmod(0o600)
    ed = unasked(spawn, workspace)
    assert call(ed, "edit", path="sub/private.txt", old="abc", new="abd")["ok"]
    assert call(ed, "write", path="sub/deeper/new.txt", content="x")["ok"]
    assert secret.read_text() == "abd\n"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert not stat.S_IMODE((workspace / "sub" / "deeper" / "new.txt").stat().st_mode) & 0o111


def test_the_hosts_proc_is_never_read_by_the_read_tool(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """F8: with the sandbox off and preset auto, the read tool returned /proc/self/environ
    (the engine's environment: API keys), unasked, while bash was refused."""
    ed = unasked(spawn, workspace, "auto")
    ed.cmd("Sandbox", "disable")
    pid = ed.lua("return vim.fn.getpid()")
    for path in ("/proc/self/environ", f"/proc/{pid}/environ"):
        r = call(ed, "read", path=path)
        assert r["status"] == "refused" and r["refusal"]["code"] == "hidden", r
        assert "content" not in r


def test_a_secret_behind_a_denied_link_is_not_read_by_its_own_path(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """F6: `.env -> config/prod.env`: the sandbox hides the target (found by the link's
    name), but the read tool, asked for config/prod.env, returned it."""
    (workspace / "config").mkdir()
    (workspace / "config" / "prod.env").write_text("API_KEY=CANARY-prodenv\n")
    os.symlink("config/prod.env", workspace / ".env")
    ed = unasked(spawn, workspace, "auto")
    for path in ("config/prod.env", str(workspace / "config" / "prod.env"), ".env"):
        r = call(ed, "read", path=path)
        assert r["status"] == "refused", (path, r)
        assert "CANARY" not in str(r)


def test_a_call_for_a_chat_that_is_gone_does_not_run(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """F7: a call arriving after its chat buffer was wiped ran with no chat layer (its
    read-only mode dropped) and the global directory, unasked."""
    chat = workspace / "t.chat"
    chat.write_text('```json\n{"corral": {"sandbox": {"mode": "read-only"}}}\n```\n')
    ed = spawn(cwd=workspace)
    buf = ed.edit(chat)
    r = call(ed, "bash", buf, command="echo x > before")
    assert r["status"] == "refused", r
    ed.lua("vim.cmd('enew') vim.cmd('bwipeout! ' .. ...)", buf)
    r = call(ed, "bash", buf, command="echo x > after")
    assert r["status"] == "refused" and "buffer" in r["summary"], r
    assert not (workspace / "after").exists()


def test_the_model_is_told_its_commits_wait_and_later_commits_start_beside(
    spawn: Any, workspace: Path
) -> None:
    """r61c HELDSUMMARY: a held commit was "8 changes applied, 4 paths held back" to the
    model, whose own `git log` showed the commit; EARLIERSILENT: the next call (exit 0)
    said nothing of it, and the model committed again, beside it."""
    import subprocess

    git = ["git", "-c", "user.name=u", "-c", "user.email=u@x"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(workspace)], check=True)
    (workspace / "a.txt").write_text("a\n")
    subprocess.run([*git, "-C", str(workspace), "add", "a.txt"], check=True)
    subprocess.run([*git, "-C", str(workspace), "commit", "-qm", "one"], check=True)
    ed = spawn(cwd=workspace)
    commit = "echo b >> a.txt && git -c user.name=a -c user.email=a@x commit -qam two"
    execute(ed, "bash", command=commit)
    r = result(ed)
    assert "its git commits are held for the user's review" in r["summary"], r["summary"]
    execute(ed, "bash", command="true")
    r = result(ed)
    assert r["exit"] == 0
    assert "git commits are held for the user's review" in r["summary"], r["summary"]


def test_a_file_tool_on_a_file_held_for_review_says_so(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r64c EDITHELD: an edit of a file the model had just written, held for review, was
    "No such file or directory (check the path ...)", and the model wrote it again."""
    ed = unasked(spawn, workspace)
    # (r68c WRITEREFUSED: a config-format file at the top was refused outright, where the
    # same file written by bash was held for the user to apply)
    r = call(ed, "write", path="tool.yaml", content="x: 1\n")
    assert r["status"] == "ran" and r["held"], r
    assert "held for the user's review" in r["summary"], r["summary"]
    r = call(ed, "write", path="helpers.py", content="X = 1\n")
    assert r["held"], r
    r = call(ed, "edit", path="helpers.py", old="X = 1", new="X = 2")
    assert r["status"] == "refused", r
    assert "is held for the user's review (change set" in r["summary"], r["summary"]
    assert "do not write it again" in r["summary"], r["summary"]


def test_a_write_makes_missing_directories_unless_told_not_to(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r72d CREATEDIRS: a write into a new directory (`src/utils/x.py`, one of an agent's
    most common steps) was refused with a hint naming an undocumented input in Python's
    spelling (`create_dirs=True`), which no integration's tool schema offers."""
    ed = unasked(spawn, workspace)
    done = call(ed, "write", path="src/utils/x.py", content="x = 1\n")
    assert done["ok"], done
    assert (workspace / "src" / "utils" / "x.py").read_text() == "x = 1\n"
    refused = call(ed, "write", path="other/y.py", content="y", create_dirs=False)
    assert not refused["ok"] and "create_dirs = true" in refused["refusal"]["hint"], refused
    assert not (workspace / "other").exists()
