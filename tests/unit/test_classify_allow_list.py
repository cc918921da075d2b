"""The allow list (tools.shell.allow) against what the classifier found: an entry approves a
known or unknown tool, never what the classifier found dynamic for another reason, nor a write
outside the workspace, also through a link."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from corral import config
from corral.sandbox import policy
from corral.toolguard import approval, guard
from corral.toolguard.classify import classify
from corral.toolguard.classify.shell_policy import allow_may_approve

if TYPE_CHECKING:
    from pathlib import Path

A = approval.APPROVE


def _decide(ws: Path, command: str, allow: list[str]) -> approval.Decision:
    """The guard's decision on a bash call, with `allow` as tools.shell.allow and no sandbox."""
    layer: dict[str, Any] = {"tools.shell.allow": allow, "sandbox.mode": "off"}
    resolved = config.resolve([config.Layer("global", layer)])
    env = {"HOME": str(ws.parent / "home"), "PATH": os.environ.get("PATH", "")}
    pol = policy.resolve(resolved, str(ws), env)
    decision, _ = guard.decide(
        "bash", {"command": command}, resolved.values, pol, False, approval.Chain()
    )
    return decision


@pytest.mark.parametrize(
    ("command", "allow"),
    [
        ("for HOME in evilhome; do git status; done", ["git status"]),
        ("for PATH in .; do git status; done", ["git status"]),
        ("git diff --ext-diff", ["git diff"]),
        ("find . -exec sh -c 'touch x' \\;", ["find"]),
        ("sort -o ~/.bashrc f", ["sort"]),
        ("git log --output=/tmp/x", ["git log"]),
        ("sort -o ../../outside f", ["sort"]),
    ],
)
def test_allow_does_not_approve_what_the_classifier_refuses(
    tmp_path: Path, command: str, allow: list[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    d = _decide(ws, command, allow)
    assert d.decision != A, d


@pytest.mark.parametrize(
    ("command", "allow"),
    [
        ("make test", ["make test"]),
        ("./run-tests --fast", ["./run-tests"]),
        ("mytool build", ["mytool"]),
        ("sort -o out.txt f", ["sort"]),
    ],
)
def test_allow_still_approves_known_and_unknown_tools(
    tmp_path: Path, command: str, allow: list[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    d = _decide(ws, command, allow)
    assert d.decision == A and "tools.shell.allow" in d.source, d


def test_an_allowed_write_through_a_link_out_of_the_workspace_is_not_approved(
    tmp_path: Path,
) -> None:
    # `sort -o notes.txt f` with notes.txt a link to ~/.bashrc.
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
