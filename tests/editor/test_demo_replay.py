"""The demo's scripted chat (examples/replay.lua, issue 10): a model stand-in's calls through
corral.execute, in a real Neovim, and what the chat shows afterwards."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .conftest import REPO, home_with_a_key
from .test_execute import confirm_window

if TYPE_CHECKING:
    from collections.abc import Callable

    from .conftest import Editor

PLAY = """
local script, chat = ...
local replay = dofile(script)
vim.cmd.edit(vim.fn.fnameescape(chat))
_G.replay_results = vim.NIL
replay.play(vim.api.nvim_get_current_buf(), function(results) _G.replay_results = results end)
"""


def test_the_scripted_chat_shows_each_kind_of_answer(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    home = home_with_a_key(workspace, "CANARY-DEMO-KEY")
    for name in ("replay.lua", "replay.chat"):
        shutil.copy(REPO / "examples" / name, workspace / name)
    ed = spawn(cwd=workspace, env={"HOME": str(home)})
    ed.lua(PLAY, str(workspace / "replay.lua"), str(workspace / "replay.chat"))
    lines = ed.wait_for(lambda: confirm_window(ed), what="the write's window")
    assert any("notes-from-the-model.txt" in line for line in lines)
    time.sleep(0.5)  # approval keys act only after the window has been up a moment
    ed.nvim.input("a")
    results = ed.wait_for(
        lambda: ed.lua("return _G.replay_results ~= vim.NIL and _G.replay_results or false"),
        timeout=40,
        what="the replay's end",
    )
    ls, write, ssh, sudo, net = results
    assert ls["status"] == "ran" and ls["decision"]["source"] == "urn:corral:approval:sandbox"
    assert write["ok"] and write["decision"]["source"] == "user"
    assert (workspace / "notes-from-the-model.txt").read_text() == "hello\n"
    assert ssh["status"] == "ran" and not ssh["ok"]
    assert ssh["sandbox_refusals"][0]["code"] == "hidden", ssh  # (told as hidden, r52c)
    assert sudo["status"] == "refused" and sudo["refusal"]["code"] == "privileged"
    assert net["sandbox_refusals"][0]["code"] == "network", net
    text = "\n".join(ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "CANARY-DEMO-KEY" not in text
    assert text.count("@Model:") == 5 and text.count("@Tool:") == 5
    assert "no network in this sandbox" in text
    assert "@Demo: that is all" in text


def test_the_demo_from_a_clone_asks_before_the_models_write() -> None:
    """r89t DEMOWRITEIGNORED: scripts/demo worked in the clone's examples/, where corral's
    own .gitignore listed the file the replay writes; corral refused the write as one git
    ignores, and the demo's "corral asks you first" step never asked. The demo now works in
    a scratch folder outside the repository, removed when Neovim exits."""
    import json
    import subprocess

    decide = (
        "lua io.stdout:write(vim.fn.getcwd() .. '\\t' .. vim.json.encode(require('corral')"
        ".decide({name='write', input={path='notes-from-the-model.txt', content='x'}},"
        " {bufnr=0})) .. '\\n')"
    )
    before = sorted(p.name for p in (REPO / "examples").iterdir())
    done = subprocess.run(
        [str(REPO / "scripts" / "demo"), "--headless",
         "-c", f"edit {REPO / 'examples' / 'replay.chat'}", "-c", decide, "-c", "qa!"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    where, answer = done.stdout.strip().splitlines()[-1].split("\t")
    assert json.loads(answer)["decision"] == "require_approval", answer
    assert not where.startswith(str(REPO)), where
    assert not Path(where).exists()  # (removed when Neovim exited)
    assert sorted(p.name for p in (REPO / "examples").iterdir()) == before
