""":Sandbox changes, apply, discard and undo: held change sets and the undo journal from the
editor, with a real sandboxed job and what the workspace holds afterwards."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Editor


def held_id(ed: Editor) -> str:
    ed.cmd("Sandbox", "changes")
    lines = ed.buffer_lines("corral://changes") or []
    ids = [line.split(":")[0] for line in lines if ": held" in line and line[0] != " "]
    assert len(ids) == 1, lines
    return ids[0]


def test_review_apply_and_undo_from_the_editor(ed: Editor, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("before\n")
    result = ed.run_job(["sh", "-c", "echo after > notes.txt; echo x > .nvim.lua"])
    assert result["code"] == 0, result
    assert (workspace / "notes.txt").read_text() == "after\n"  # passed the check: applied
    assert not (workspace / ".nvim.lua").exists()  # held
    change_id = held_id(ed)
    assert change_id in ed.lua("return vim.fn.getcompletion('Sandbox changes ', 'cmdline')")

    ed.cmd("Sandbox", "changes", change_id)
    shown = ed.buffer_lines(f"corral://changes/{change_id}") or []
    assert any(".nvim.lua: held" in line for line in shown), shown
    assert "+x" in shown, shown  # the diff of the held file
    assert ed.lua("return vim.bo.filetype") == "diff"

    ed.cmd("Sandbox", "apply", change_id, ".nvim.lua")  # named: the user's decision
    assert (workspace / ".nvim.lua").read_text() == "x\n"
    # r58c NVIMSTALE: the open details still said `held:` for what was applied
    shown = ed.buffer_lines(f"corral://changes/{change_id}") or []
    assert not any(".nvim.lua: held" in line for line in shown), shown
    ed.cmd("Sandbox", "undo")
    assert not (workspace / ".nvim.lua").exists()
    ed.cmd("Sandbox", "undo")
    assert (workspace / "notes.txt").read_text() == "before\n"


def test_discard_drops_a_held_change_set(ed: Editor, workspace: Path) -> None:
    ed.run_job(["sh", "-c", "echo x > .exrc"])
    change_id = held_id(ed)
    ed.cmd("Sandbox", "discard", change_id)
    ed.cmd("Sandbox", "changes")
    assert ed.buffer_lines("corral://changes") == ["no held change sets"]
    assert not (workspace / ".exrc").exists()


def test_an_unknown_id_points_to_the_editors_command(ed: Editor) -> None:
    """r89 trial CLIWORDSINEDITOR: `see corral changes`, a command the editor may not have."""
    for verb in ("apply", "discard", "changes"):
        ed.clear_messages()
        ed.cmd("Sandbox", verb, "nosuchid")
        (said,) = ed.messages()
        assert said == "corral: no held change set 'nosuchid'; see :Sandbox changes", said


def test_a_bar_in_a_held_path_typed_back_runs_nothing(ed: Editor, workspace: Path) -> None:
    """r20b F2: `:Sandbox` ran what follows a `|` as another command for every subcommand: a
    held path with a `|` in it, typed back as corral printed it, ran `:!` on the host."""
    result = ed.run_job(["sh", "-c", "echo x > .nvim.lua"])
    assert result["code"] == 0, result
    change_id = held_id(ed)
    ed.lua(f"vim.cmd([[Sandbox discard {change_id} x|lua vim.g.corral_chained = 1]])")
    assert ed.lua("return vim.g.corral_chained") is None


def test_a_held_set_names_the_line_that_was_typed(ed: Editor, workspace: Path) -> None:
    """r64c MADEBYQUOTE: `:Sandbox run` was listed as made by `/bin/sh -c 'sh -c '"'"'...`,
    the shell corral started around the typed line."""
    ids = "return require('corral.engine').call('held_ids', require('corral.engine').request())"
    before = len(ed.lua(ids) or [])
    ed.lua("vim.cmd([[Sandbox run echo x > .exrc]])")
    ed.wait_for(lambda: len(ed.lua(ids) or []) > before, what="a held set")
    ed.cmd("Sandbox", "changes")
    lines = ed.buffer_lines("corral://changes") or []
    assert any("from `echo x > .exrc` at" in line for line in lines), lines
