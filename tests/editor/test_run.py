"""Wrapped commands started from the editor run confined, and never block it."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Editor

ESCAPE = "/etc/corral-escape"


def test_wrapped_command_is_confined(ed: Editor, workspace: Path) -> None:
    try:
        result = ed.run_job(
            [
                "sh",
                "-c",
                f"echo hi > inside.txt; echo x > {ESCAPE} 2>&1; echo pid=$$",
            ],
        )
        assert (workspace / "inside.txt").read_text() == "hi\n"
        assert not os.path.exists(ESCAPE), "a sandboxed command wrote to /etc on the host"
        assert "pid=1" in result["out"], result  # pid 1 of a namespace of its own
        assert result["code"] == 0, result
        assert result["repairs"] == [], result
    finally:
        if os.path.exists(ESCAPE):
            os.unlink(ESCAPE)


def test_sandbox_run_shows_output_and_exit(ed: Editor) -> None:
    ed.cmd("Sandbox", "run", "echo", "hello")
    assert ed.lua("return vim.api.nvim_buf_get_name(0)") == "corral://run"
    lines = ed.wait_for(
        lambda: (lines := ed.buffer_lines("corral://run")) and "[exit 0]" in lines and lines,
        timeout=20,
        what="[exit 0] in corral://run",
    )
    assert lines[0] == "$ echo hello"
    assert "hello" in lines
    assert not any("UNSANDBOXED" in line for line in lines), lines
    assert ed.lua("return vim.bo.filetype") == "corral-run"


def test_sandbox_run_keeps_the_command_as_typed(ed: Editor, workspace: Path) -> None:
    ed.lua('vim.cmd(\'Sandbox run printf "%s|" "a b" c > typed.txt; exit 3\')')
    ed.wait_for(
        lambda: "[exit 3]" in (ed.buffer_lines("corral://run") or []),
        timeout=20,
        what="[exit 3] in corral://run",
    )
    assert (workspace / "typed.txt").read_text() == "a b|c|"


def test_sandbox_run_does_not_block_the_editor(ed: Editor) -> None:
    started = time.monotonic()
    ed.cmd("Sandbox", "run", "sleep", "2;", "echo", "slept")
    returned = time.monotonic() - started
    assert returned < 1.0, f":Sandbox run took {returned:.2f} s to return"
    started = time.monotonic()
    assert ed.nvim.eval("1+1") == 2
    assert time.monotonic() - started < 1.0
    assert "[exit 0]" not in ed.buffer_lines("corral://run")
    lines = ed.wait_for(
        lambda: (lines := ed.buffer_lines("corral://run")) and "[exit 0]" in lines and lines,
        timeout=20,
        what="the slow command to finish",
    )
    assert "slept" in lines


def test_sandbox_run_disabled_says_unsandboxed(ed: Editor) -> None:
    ed.cmd("Sandbox", "disable")
    ed.cmd("Sandbox", "run", "cat", "/proc/1/comm")
    lines = ed.wait_for(
        lambda: (lines := ed.buffer_lines("corral://run")) and "[exit 0]" in lines and lines,
        timeout=20,
        what="[exit 0] in corral://run",
    )
    assert any("UNSANDBOXED" in line for line in lines), lines
    assert "bwrap" not in lines


def test_no_descriptors_leak_into_the_sandbox(ed: Editor) -> None:
    result = ed.run_job(["ls", "/proc/self/fd"])
    assert result["code"] == 0, result
    # 0, 1 and 2, and the directory ls itself has open to list them.
    assert sorted(result["out"], key=int) == ["0", "1", "2", "3"], result["out"]


def test_sandbox_run_uses_the_chat_buffers_sandbox(ed: Editor, workspace: Path) -> None:
    chat = workspace / "ro.chat"
    chat.write_text('```lua\ncorral.opt.sandbox.mode = "read-only"\n```\n')
    ed.edit(chat)
    ed.cmd("Sandbox", "run", "touch", "made.txt")
    lines = ed.wait_for(
        lambda: (
            (lines := ed.buffer_lines("corral://run")) and lines[-1].startswith("[exit") and lines
        ),
        timeout=20,
        what="the command to finish",
    )
    assert lines[-1] != "[exit 0]", lines
    assert not (workspace / "made.txt").exists()
