"""The Lua sandbox API (require('corral.sandbox')) as a chat plugin uses it."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

from corral.sandbox.backends.bwrap import GUARD, LAUNCH_CHANGES

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .conftest import Editor

SANDBOX = "local sandbox = require('corral.sandbox') "


def test_resolve_config_reports_values_and_layers(fresh: Editor, workspace: Path) -> None:
    fresh.lua("require('corral').setup({ sandbox = { mode = 'read-only' } })")
    chat = workspace / "layers.chat"
    chat.write_text(
        "```lua\n"
        'corral.opt.sandbox.policy.home = "private"\n'
        'corral.opt.sandbox.policy.deny_read:append("secrets")\n'
        "```\n"
        "Hello\n"
    )
    buf = fresh.edit(chat)
    fresh.lua(SANDBOX + "sandbox.set_enabled(true)")
    config = fresh.config(buf)
    values, origins = config["values"], config["origins"]
    assert values["sandbox.mode"] == "read-only"
    assert origins["sandbox.mode"] == "setup"
    assert values["sandbox.policy.home"] == "private"
    assert origins["sandbox.policy.home"] == "buffer"
    assert "secrets" in values["sandbox.policy.deny_read"]
    assert "~/.ssh" in values["sandbox.policy.deny_read"]  # appended, not replaced
    assert origins["sandbox.policy.deny_read"] == "default+buffer"
    assert values["sandbox.enabled"] is True
    assert origins["sandbox.enabled"] == "runtime"
    assert origins["sandbox.backend"] == "default"
    assert origins["sandbox.policy.network"] == "mode read-only"
    # Another buffer has no buffer layer.
    other = fresh.lua("vim.cmd.enew() return vim.api.nvim_get_current_buf()")
    assert fresh.config(other)["origins"]["sandbox.policy.home"] == "default"
    assert fresh.messages() == []


def test_is_enabled_and_get_policy(ed: Editor, workspace: Path) -> None:
    assert ed.lua(SANDBOX + "return sandbox.is_enabled(0)") is True
    policy = ed.lua(SANDBOX + "return sandbox.get_policy(0)")
    assert policy["enabled"] is True
    assert policy["mode"] == "workspace-write"
    assert policy["network"] is False
    assert policy["allow_privileged"] is False
    assert policy["cwd"] == str(workspace)
    assert policy["rw_roots"] == [str(workspace)]
    for path in [policy["cwd"], policy["home"], *policy["rw_roots"], *policy["deny_read"]]:
        assert os.path.isabs(path), path
    assert "HOME" in policy["env"]
    ed.lua(SANDBOX + "sandbox.set_enabled(false)")
    assert ed.lua(SANDBOX + "return sandbox.is_enabled(0)") is False


def test_wrap_command_is_env_scrubbed_bwrap(ed: Editor, workspace: Path) -> None:
    argv, err, info = ed.lua(
        SANDBOX + "local argv, err, info = sandbox.wrap_command({ 'echo', 'hi there' }, 0)"
        " return { argv, err or vim.NIL, info }"
    )
    assert err is None
    assert os.path.basename(argv[0]) == "env" and argv[1] == "-i"
    bwrap_at = next(i for i, a in enumerate(argv) if os.path.basename(a) == "bwrap")
    # env -i NAME=value ... /bin/sh -c <constant launcher> <seccomp filter file> <staging
    # area> <python> <package dir> <check code> bwrap ...
    guard_at = next(i for i, a in enumerate(argv) if a in ("/usr/bin/sh", "/bin/sh"))
    assert all("=" in a for a in argv[2:guard_at]), argv[2:guard_at]
    assert argv[guard_at + 1 : guard_at + 3] == ["-c", GUARD]  # (r52b FDLEAK)
    launcher_at = guard_at + 4
    assert argv[launcher_at + 1 : launcher_at + 3] == ["-c", LAUNCH_CHANGES]
    assert bwrap_at == launcher_at + 8
    assert os.path.isfile(argv[launcher_at + 3])  # the seccomp filter bwrap reads on fd 3
    assert argv[argv.index("--seccomp") + 1] == "3"
    assert argv[-3:] == ["--", "echo", "hi there"]
    assert info["sandboxed"] is True and info["backend"] == "bwrap"
    # What wrap_command returns really runs, with only the scrubbed environment.
    done = subprocess.run(
        [*argv[: bwrap_at + 1], *argv[bwrap_at + 1 : -3], "--", "sh", "-c", "echo $HOME; env"],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=workspace,
    )
    assert done.returncode == 0, done.stderr
    names = {entry.split("=", 1)[0] for entry in done.stdout.splitlines()[1:] if "=" in entry}
    assert "NVIM" not in names and "NVIM_RPLUGIN_MANIFEST" not in names, names


def test_is_path_writable(ed: Editor, workspace: Path) -> None:
    (workspace / "file.txt").write_text("x\n")
    writable = ed.lua(
        SANDBOX + "local out = {} for _, p in ipairs({ ... }) do"
        " out[#out + 1] = sandbox.is_path_writable(p, 0) end return out",
        str(workspace / "file.txt"),
        "file.txt",
        "/etc/passwd",
        "/usr/bin/sh",
    )
    assert writable == [True, True, False, False]


def test_backend_detection(ed: Editor) -> None:
    assert ed.lua(SANDBOX + "return { sandbox.validate_backend(0) }") == [True]
    name, tried = ed.lua(SANDBOX + "return { sandbox.detect_available_backend() }")
    assert name == "bwrap"
    assert {"name": "bwrap", "reason": None} in tried
    all_backends = ed.lua(SANDBOX + "return sandbox.get_all()")
    assert [b["name"] for b in all_backends] == ["bwrap"]
    assert ed.lua(SANDBOX + "return sandbox.count()") == 1
    bwrap = ed.lua(SANDBOX + "return sandbox.get('bwrap')")
    assert bwrap["priority"] == all_backends[0]["priority"]
    assert ed.lua(SANDBOX + "return sandbox.get('nope') == nil") is True


LUA_BACKEND = """
local name, priority, reason = ...
local ok, err = require('corral.sandbox').register(name, {
  priority = priority,
  available = function(policy)
    if reason ~= vim.NIL then return reason end
    return type(policy) == 'table' and policy.mode ~= nil
  end,
  wrap = function(policy, argv)
    return { 'sh', '-c', 'echo LUA-BACKEND' }
  end,
})
return { ok, err }
"""


def test_lua_backend_register_select_unregister(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    editor = spawn(cwd=workspace)
    before = editor.lua(SANDBOX + "return sandbox.count()")
    assert editor.lua(LUA_BACKEND, "luatest", 200, None) == [True]
    assert editor.lua(SANDBOX + "return sandbox.count()") == before + 1
    names = [b["name"] for b in editor.lua(SANDBOX + "return sandbox.get_all()")]
    assert names[0] == "luatest" and "bwrap" in names
    assert editor.lua(SANDBOX + "return sandbox.get('luatest')")["priority"] == 200

    editor.lua("require('corral').setup({ sandbox = { backend = 'luatest' } })")
    assert editor.lua(SANDBOX + "return { sandbox.validate_backend(0) }") == [True]
    argv, err, info = editor.lua(
        SANDBOX
        + "local a, e, i = sandbox.wrap_command({ 'true' }, 0) return { a, e or vim.NIL, i }"
    )
    assert err is None, err
    assert info["backend"] == "luatest" and info["sandboxed"] is True
    assert argv[-3:] == ["sh", "-c", "echo LUA-BACKEND"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert done.stdout == "LUA-BACKEND\n"

    assert editor.lua(SANDBOX + "return sandbox.unregister('luatest')") is True
    assert editor.lua(SANDBOX + "return sandbox.count()") == before
    assert editor.lua(SANDBOX + "return sandbox.get('luatest') == nil") is True
    # Still selected by name, now gone: refused, not silently unsandboxed.
    ok, *reason = editor.lua(SANDBOX + "return { sandbox.validate_backend(0) }")
    assert ok is False and "luatest" in reason[0]
    assert editor.messages() == []


def test_lua_backend_unavailable_reason(spawn: Callable[..., Editor], workspace: Path) -> None:
    editor = spawn(cwd=workspace)
    assert editor.lua(LUA_BACKEND, "lualess", 300, "no luck on this machine") == [True]
    # With "auto" an unavailable backend is skipped, whatever its priority.
    assert editor.lua(SANDBOX + "return { sandbox.detect_available_backend() }")[0] == "bwrap"
    editor.lua("require('corral').setup({ sandbox = { backend = 'lualess' } })")
    ok, reason = editor.lua(SANDBOX + "return { sandbox.validate_backend(0) }")
    assert ok is False
    assert "lualess" in reason and "no luck on this machine" in reason
    argv, err = editor.lua(
        SANDBOX + "local a, e = sandbox.wrap_command({ 'true' }, 0) return { a or vim.NIL, e }"
    )
    assert argv is None and "no luck on this machine" in err
