"""What an interrupted command's held change set says, and in whose words."""

from __future__ import annotations

import marshal
from typing import TYPE_CHECKING

from corral.changes import finish
from corral.changes import stage as stages

if TYPE_CHECKING:
    from pathlib import Path


def test_an_interrupted_set_is_told_in_the_words_of_the_frontend_that_ran_it(
    tmp_path: Path,
) -> None:
    """r74c CANCELWORDS: a chat call cancelled or timed out handed the model `corral: the
    command did not finish ...; see: corral changes ID` (the check's own process said
    "cli"), which the model read as a command to run, and which the editor's repair line
    (`:Sandbox changes ID`) did not match to strip."""
    stage = tmp_path / "18ebe7892c19c379-806b3acd"
    stage.mkdir()
    with open(stage / stages.PLAN, "wb") as f:
        marshal.dump({"version": stages.PLAN_VERSION, "id": stage.name, "frontend": "nvim"}, f)
    lines = finish.describe(stages.interrupted_report(str(stage)))
    assert any(f":Sandbox changes {stage.name}" in line for line in lines), lines
    assert not any("corral changes" in line for line in lines), lines
    (tmp_path / "bare").mkdir()  # (no plan: the terminal's words)
    lines = finish.describe(stages.interrupted_report(str(tmp_path / "bare")))
    assert any("corral changes bare" in line for line in lines), lines
