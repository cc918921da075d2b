"""Wrapped commands started from the editor run confined, and never block it."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Editor

ESCAPE = "/etc/corral-escape"


def run(ed: Editor, *words: str) -> str:
    """:Sandbox run WORDS; the name of the run's own output buffer."""
    ed.cmd("Sandbox", "run", *words)
    name = ed.lua("return vim.api.nvim_buf_get_name(0)")
    assert name.startswith("corral://run/"), name
    return name


def finished(ed: Editor, name: str, timeout: float = 20) -> list[str]:
    """The run's lines once its `[exit N]` (or `[stopped]`) line is there."""
    return ed.wait_for(
        lambda: (
            (lines := ed.buffer_lines(name))
            and lines[-1].startswith(("[exit", "[stopped]"))
            and lines
        ),
        timeout=timeout,
        what=f"the command in {name} to finish",
    )


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
        # (nothing held or put back: only what was applied, and how to undo it)
        said = ["applied 1 added, 0 modified, 0 deleted (undo: :Sandbox undo)"]
        assert result["repairs"] == said, result
    finally:
        if os.path.exists(ESCAPE):
            os.unlink(ESCAPE)


def test_sandbox_run_shows_output_and_exit(ed: Editor) -> None:
    lines = finished(ed, run(ed, "echo", "hello"))
    assert lines[-1] == "[exit 0]"
    assert lines[0] == "$ echo hello"
    assert "hello" in lines
    assert not any("UNSANDBOXED" in line for line in lines), lines
    assert ed.lua("return vim.bo.filetype") == "corral-run"


def test_sandbox_run_keeps_the_command_as_typed(ed: Editor, workspace: Path) -> None:
    # `\%` is a literal %, as with :!
    ed.lua('vim.cmd(\'Sandbox run printf "\\\\%s|" "a b" c > typed.txt; exit 3\')')
    name = ed.lua("return vim.api.nvim_buf_get_name(0)")
    assert finished(ed, name)[-1] == "[exit 3]"
    assert (workspace / "typed.txt").read_text() == "a b|c|"


def test_sandbox_run_does_not_block_the_editor(ed: Editor) -> None:
    started = time.monotonic()
    name = run(ed, "sleep", "2;", "echo", "slept")
    returned = time.monotonic() - started
    assert returned < 1.0, f":Sandbox run took {returned:.2f} s to return"
    started = time.monotonic()
    assert ed.nvim.eval("1+1") == 2
    assert time.monotonic() - started < 1.0
    assert "[exit 0]" not in ed.buffer_lines(name)
    lines = finished(ed, name)
    assert "slept" in lines


def test_sandbox_run_disabled_says_unsandboxed(ed: Editor) -> None:
    ed.cmd("Sandbox", "disable")
    lines = finished(ed, run(ed, "cat", "/proc/1/comm"))
    assert lines[-1] == "[exit 0]"
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
    lines = finished(ed, run(ed, "touch", "made.txt"))
    assert lines[-1] != "[exit 0]", lines
    assert not (workspace / "made.txt").exists()


def test_sandbox_run_output_in_many_chunks_keeps_its_lines(ed: Editor) -> None:
    """Issue 9: `seq 1 300000` gave 300,010 lines: a line cut between two chunks was split
    and doubled."""
    lines = finished(ed, run(ed, "seq", "1", "300000;", "printf", "no-newline"), timeout=60)
    assert lines[-1] == "[exit 0]"
    body = lines[1:-1]
    assert body[:300000] == [str(i) for i in range(1, 300001)]
    assert body[300000:] == ["no-newline"], body[300000:]


def test_sandbox_run_reads_nothing_from_stdin(ed: Editor) -> None:
    """`:Sandbox run cat` hung waiting for input that could never come."""
    lines = finished(ed, run(ed, "cat;", "echo", "after-cat"), timeout=20)
    assert lines[-2:] == ["after-cat", "[exit 0]"], lines


def _running(marker: str) -> bool:
    """Whether a process with `marker` in its command line runs anywhere on the host."""
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        return True
            except OSError:
                continue
    return False


def test_sandbox_stop_and_closing_the_window_stop_the_run(ed: Editor) -> None:
    first = run(ed, "sleep", "86.5")
    ed.wait_for(lambda: _running("86.5"), what="the first sleep to start")
    ed.cmd("Sandbox", "stop")
    lines = finished(ed, first)
    assert lines[-1] == "[stopped]", lines  # (not the signal's "exit 137", r61c STOPEXIT)
    ed.wait_for(lambda: not _running("86.5"), what="the first sleep to be gone")

    second = run(ed, "sleep", "87.5")
    ed.wait_for(lambda: _running("87.5"), what="the second sleep to start")
    ed.nvim.input("q")  # q closes corral's windows; the run goes with its window
    ed.wait_for(lambda: not _running("87.5"), what="the second sleep to be gone")
    assert ed.buffer_lines(second) is None


def marker(ed: Editor, name: str) -> str:
    """The text shown after the first line of run `name` (the extmark corral keeps there)."""
    return ed.lua(
        "local b = vim.fn.bufnr(...)"
        " local ns = vim.api.nvim_get_namespaces().corral_run"
        " local marks = vim.api.nvim_buf_get_extmarks(b, ns, 0, -1, { details = true })"
        " local text = {}"
        " for _, m in ipairs(marks) do for _, chunk in ipairs(m[4].virt_text or {}) do"
        "   text[#text + 1] = chunk[1] end end"
        " return table.concat(text, '|')",
        name,
    )


def test_a_run_is_marked_running_until_it_ends(ed: Editor) -> None:
    """r89 audit N4e: the marker existed, untested and not in :help."""
    name = run(ed, "sleep", "89.5")
    assert marker(ed, name) == "  running… <C-c> stops · q closes"
    ed.wait_for(lambda: _running("89.5"), what="the sleep to start")
    ed.cmd("Sandbox", "stop")
    finished(ed, name)
    assert marker(ed, name) == "  stopped · q closes"
    done = run(ed, "exit", "3")
    finished(ed, done)
    assert marker(ed, done) == "  exit 3 · q closes"


def test_sandbox_run_ctrl_c_stops_it(ed: Editor) -> None:
    name = run(ed, "sleep", "88.5")
    ed.wait_for(lambda: _running("88.5"), what="the sleep to start")
    ed.nvim.input("<C-c>")
    assert finished(ed, name)[-1] != "[exit 0]"
    ed.wait_for(lambda: not _running("88.5"), what="the sleep to be gone")


def test_each_run_has_its_own_buffer(ed: Editor) -> None:
    first = run(ed, "sleep", "1;", "echo", "first")
    second = run(ed, "echo", "second")
    assert first != second
    assert "second" in finished(ed, second)
    lines = finished(ed, first)
    assert "first" in lines and "second" not in lines, lines


def test_sandbox_run_expands_percent_like_bang(ed: Editor, workspace: Path) -> None:
    chat = workspace / "notes.chat"
    chat.write_text("hello\n")
    ed.edit(chat)
    lines = finished(ed, run(ed, "echo", "%:t", "%:p:h:S", "\\%d"))
    assert lines[1] == f"notes.chat {workspace} %d", lines
    assert lines[0] == f"$ echo notes.chat '{workspace}' %d"


def test_sandbox_run_percent_without_a_file_name_is_an_error(ed: Editor) -> None:
    ed.cmd("Sandbox", "run", "echo", "%")
    assert any("no file name for '%'" in m for m in ed.messages()), ed.messages()
    assert not ed.lua("return vim.api.nvim_buf_get_name(0)").startswith("corral://run/")


def test_sandbox_subcommands_end_at_a_bar_and_run_keeps_it(ed: Editor) -> None:
    ed.lua("vim.cmd('Sandbox disable | Sandbox status')")
    assert ed.lua("return vim.api.nvim_buf_get_name(0)") == "corral://status"
    assert ed.lua("return require('corral.sandbox').get_override()") == {"sandbox.enabled": False}
    ed.lua("require('corral.sandbox').reset_enabled()")
    ed.lua("vim.cmd('Sandbox run printf \"a\\\\nb\\\\n\" | wc -l')")
    name = ed.lua("return vim.api.nvim_buf_get_name(0)")
    assert finished(ed, name)[1].strip() == "2"


def test_changes_and_undo_end_at_a_bar_and_apply_does_not(ed: Editor) -> None:
    """r89 trial HELPBARCHAIN: the help said every subcommand but run ends at a `|`, and
    `:Sandbox changes | echo` looked for a change set named `|`."""
    ed.lua("vim.cmd('Sandbox changes | let g:after_changes = 1')")
    ed.lua("vim.cmd('Sandbox undo list | let g:after_undo = 1')")
    assert ed.lua("return { vim.g.after_changes, vim.g.after_undo }") == [1, 1]
    assert not [m for m in ed.messages() if "'|'" in m], ed.messages()
    ed.lua("vim.cmd('Sandbox apply nosuch | let g:after_apply = 1')")  # (a path may hold `|`)
    assert ed.lua("return vim.g.after_apply") is None


def test_q_closes_the_status_window(ed: Editor) -> None:
    ed.cmd("Sandbox", "status")
    assert ed.lua("return #vim.api.nvim_list_wins()") == 2
    ed.nvim.input("q")
    ed.wait_for(lambda: ed.lua("return #vim.api.nvim_list_wins()") == 1, what="q to close")


def test_sandbox_run_completes_commands_then_files(ed: Editor, workspace: Path) -> None:
    (workspace / "data-file.txt").write_text("x")
    assert "ls" in ed.lua("return vim.fn.getcompletion('Sandbox run l', 'cmdline')")
    got = ed.lua("return vim.fn.getcompletion('Sandbox run cat data-', 'cmdline')")
    assert got == ["data-file.txt"], got


def test_stopping_at_once_or_quitting_leaves_no_process(spawn: Any, workspace: Path) -> None:
    """A stop that reached only the launcher (the editor quitting, or a stop while bwrap was
    still starting) left bwrap and the command running, reparented to init."""
    ed = spawn(cwd=workspace)
    for i in range(3):
        ed.cmd("Sandbox", "run", "sleep", f"8{i}.25")
        ed.cmd("Sandbox", "stop")  # at once, while the sandbox may still be starting
    ed.cmd("Sandbox", "run", "sleep", "84.25")
    ed.wait_for(lambda: _running("84.25"), what="the last sleep to start")
    ed.close()  # quitting with a command still running
    for marker in ("80.25", "81.25", "82.25", "84.25"):
        ed.wait_for(lambda m=marker: not _running(m), what=f"sleep {marker} to be gone")


def test_sandbox_run_explains_what_the_sandbox_refused(ed: Editor) -> None:
    """Issue 9: a user must never have to guess from `Read-only file system`."""
    lines = finished(ed, run(ed, "touch", "/etc/corral-run-x;", "touch", "/usr/corral-run-y"))
    told = [line for line in lines if line.startswith("corral: the sandbox refused")]
    assert len(told) == 1, lines
    assert "a write outside the writable area (2 times, first: touch:" in told[0]
    assert "[sandbox.policy.rw_paths, from mode workspace-write]" in told[0]
    assert "to allow: " in told[0]
    assert lines.index(told[0]) < len(lines) - 1  # before [exit N]


def test_sandbox_run_says_what_it_wrote_where_nothing_is_kept(ed: Editor) -> None:
    """r89t SILENTDISCARD (r90t: :Sandbox run still said nothing): `echo y > /tmp/out`
    succeeded and was gone after the run."""
    lines = finished(ed, run(ed, "echo", "y", ">", "/tmp/corral-run-out"))
    assert any("/tmp/corral-run-out was written in the sandbox's own /tmp" in x for x in lines)


def test_a_held_run_says_so_once_in_the_editors_words(ed: Editor, workspace: Path) -> None:
    """New-user trial (session 19): :Sandbox run showed the held lines twice, and named the
    `corral` CLI (`corral apply ID`), which a Neovim-only install does not have."""
    lines = finished(ed, run(ed, "sh", "-c", "echo x > .nvim.lua"))
    held = [line for line in lines if "these changes are held" in line]
    assert len(held) == 1, lines
    assert ":Sandbox apply " in held[0] and "corral apply" not in held[0], held
    assert len([line for line in lines if "held " in line and ".nvim.lua" in line]) == 1, lines
    assert not (workspace / ".nvim.lua").exists()


def test_what_the_editor_left_open_never_reaches_the_sandbox(ed: Editor, workspace: Path) -> None:
    """r52b FDLEAK: a descriptor Neovim or a Lua plugin keeps open without close-on-exec
    (Neovim's LSP log, `io.open` of a directory left to the collector) passed through
    jobstart, the launcher and bwrap: the sandbox read a hidden file through it and wrote a
    hook into the host's `.git` by /proc/self/fd/N. Past 9 too: sh cannot name those."""
    secret = workspace.parent / f"{workspace.name}-lsp.log"
    secret.write_text("api_token = FDLEAK-SECRET\n")
    (workspace / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    ed.lua(
        "local secret, git = ... _G.leaks = {}"
        " for _ = 1, 12 do table.insert(_G.leaks, io.open(secret, 'a+')) end"
        " table.insert(_G.leaks, io.open(git, 'r'))",
        str(secret), str(workspace / ".git"),
    )  # fmt: skip
    probe = (
        'for f in /proc/self/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] || continue; '
        'echo "open $n $(readlink $f)"; cat $f 2>/dev/null; '
        "echo x > $f/hooks/post-checkout 2>/dev/null && echo WROTE; done; echo end"
    )
    result = ed.run_job(["sh", "-c", probe])
    out = "\n".join(result["out"])
    assert "end" in out and result["code"] == 0, result
    assert "FDLEAK-SECRET" not in out and "WROTE" not in out, out
    assert str(secret) not in out and not (workspace / ".git" / "hooks" / "post-checkout").exists()


def test_undo_list_takes_the_clis_spelling_too(ed: Editor) -> None:
    """r61c UNDOLIST: `:Sandbox undo --list` (the CLI's spelling) took --list for an id."""
    ed.run_job(["sh", "-c", "echo hi > undo-me.txt"])
    for spelling in ("list", "--list"):
        ed.clear_messages()
        ed.nvim.command(f"Sandbox undo {spelling}")
        said = ed.messages()
        assert any("applied change sets" in m and "undo-me.txt" in m for m in said), said
