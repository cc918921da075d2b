"""Seventh review, the editor and the tool guard (r7b): each test drives corral.execute in a
real headless Neovim and checks what the host holds or what the model was given."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any

from .test_execute import RESULT

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .conftest import Editor

RUN = """
local call, bufnr = ...
_G.corral_test_result = vim.NIL
require("corral").execute(call, { bufnr = bufnr }, function(r) _G.corral_test_result = r end)
"""


def call(ed: Editor, name: str, bufnr: int = 0, **tool_input: Any) -> dict[str, Any]:
    ed.lua(RUN, {"name": name, "input": tool_input}, bufnr)
    return ed.wait_for(lambda: ed.lua(RESULT), timeout=20, what=f"the {name} call's result")


def unasked(spawn: Callable[..., Editor], cwd: Path, approval: str = "full") -> Editor:
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


def test_checkhealth_imports_nothing_from_the_workspace(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """F4: :checkhealth corral ran `python -c "import pynvim"` in the workspace, first on
    sys.path: a logging.py a sandboxed command left there (direct writes) ran on the host."""
    canary = workspace.parent / (workspace.name + "-CANARY-health")
    (workspace / "logging.py").write_text(f"open({str(canary)!r}, 'w').close()\n")
    ed = spawn(cwd=workspace)
    ed.cmd("checkhealth", "corral")
    assert not canary.exists()


def test_lua_modules_are_not_looked_for_in_the_workspace(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r7a A6: Lua's search falls back to ./?.lua: a module a sandboxed command wrote to the
    workspace ran in the editor when a config asked for one that is not installed."""
    canary = workspace.parent / (workspace.name + "-CANARY-lua")
    (workspace / "corral_absent_module.lua").write_text(
        f"vim.fn.writefile({{'x'}}, {str(canary)!r})\n"
    )
    ed = spawn(cwd=workspace)
    assert ed.lua("return (pcall(require, 'corral_absent_module'))") is False
    assert not canary.exists()
    assert "./?.lua" not in ed.lua("return package.path")
