"""The last review round of this stop (final-d): `{NAME}>file` assigns NAME, and an allow entry
never approves a write that lands outside the workspace through a link."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from corral.toolguard.classify import DYNAMIC, READ_ONLY, classify
from corral.toolguard.classify.shell_policy import allow_may_approve

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    "command",
    [
        ": {PATH}>/dev/null; ls",
        ": {HOME}</dev/null; git status",
        "true {PATH}<<<x; ls",
        "exec {fd}>out; cat",
    ],
)
def test_a_variable_before_a_redirection_is_an_assignment(command: str) -> None:
    # D4: bash sets NAME to a descriptor number (10): `ls` then ran ./10/ls.
    assert classify(command).kind == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("pip list", "network"),  # D1: pip checks its index for a newer pip
        ("pip freeze", "network"),
        ("git archive HEAD", "network"),  # D3: filters, git-lfs downloads
        ("git cat-file --filters HEAD:x", DYNAMIC),
    ],
)
def test_commands_that_reach_the_network_or_run_filters_are_not_read_only(
    command: str, kind: str
) -> None:
    assert classify(command).kind == kind, classify(command)


def test_braces_without_a_redirection_stay_plain_words() -> None:
    assert classify("echo {x}").kind == READ_ONLY


def test_an_allowed_write_through_a_link_out_of_the_workspace_is_not_approved(
    tmp_path: Path,
) -> None:
    # D2: `sort -o notes.txt f` with notes.txt a link to ~/.bashrc.
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "bashrc"
    outside.write_text("x\n")
    os.symlink(outside, ws / "notes.txt")
    (ws / "f").write_text("b\na\n")
    found = classify("sort -o notes.txt f")
    assert allow_may_approve(found, str(ws)) is False
    (ws / "notes.txt").unlink()
    assert allow_may_approve(found, str(ws)) is True
