"""The classifier reads blanks and line ends as bash does (issue 7, item 4).

"\\f# ; touch X" was read-only to corral (Python's lstrip() took \\f for a blank, so the text
looked like a comment) and a write to bash. With no working sandbox and the "auto" preset,
that ran a write on the host unasked.
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral import config
from corral.sandbox import policy
from corral.toolguard import approval, guard
from corral.toolguard.classify import classify
from corral.toolguard.classify.walk import NOT_BASH_BLANKS

if TYPE_CHECKING:
    from pathlib import Path

ODD = sorted(NOT_BASH_BLANKS)
BASH = "/bin/bash"


@pytest.mark.parametrize("odd", ODD, ids=lambda c: f"U+{ord(c):04X}")
def test_a_comment_behind_any_odd_blank_is_not_read_only(odd: str) -> None:
    result = classify(f"{odd}# ; touch X")
    assert result.kind != "read-only", result


@pytest.mark.parametrize("odd", ODD, ids=lambda c: f"U+{ord(c):04X}")
def test_odd_blanks_anywhere_are_dynamic(odd: str) -> None:
    for text in (f"ls{odd}-la", f"cat a{odd}b", f"# c{odd}\nls"):
        assert classify(text).kind != "read-only", repr(text)


def test_plain_comments_and_bash_blanks_still_read_only() -> None:
    assert classify("# nothing\n\t  # at all\n").kind == "read-only"
    assert classify("ls\t-la   # list").kind == "read-only"


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["ls -la", "cat README.md", "# only a comment", "git status", "wc -l x"]),
    st.sampled_from(ODD),
    st.integers(min_value=0, max_value=40),
)
def test_inserting_an_odd_blank_never_yields_read_only(base: str, odd: str, at: int) -> None:
    text = base[: at % (len(base) + 1)] + odd + base[at % (len(base) + 1) :] + " ; touch X"
    assert classify(text).kind != "read-only", repr(text)


@pytest.mark.skipif(not os.access(BASH, os.X_OK), reason="needs /bin/bash")
@pytest.mark.parametrize("odd", ["\f", "\v", "\r", "\xa0", "\u3000"], ids=repr)
def test_bash_really_runs_the_command_after_the_odd_blank(odd: str, tmp_path: Path) -> None:
    """The premise, checked against real bash: the text after `;` runs. (Harmless: a touch in
    tmp_path.)"""
    marker = tmp_path / "X"
    subprocess.run([BASH, "-c", f"{odd}# ; touch X"], cwd=tmp_path, capture_output=True, timeout=10)
    assert marker.exists()
    assert classify(f"{odd}# ; touch X").kind != "read-only"


def test_guard_without_a_sandbox_and_preset_auto_does_not_run_it(tmp_path: Path) -> None:
    resolved = config.resolve([config.Layer("global", {"tools.approval": "auto"})])
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    pol = policy.resolve(resolved, str(tmp_path), env)
    decision, _ = guard.decide(
        "bash", {"command": "\f# ; touch X"}, resolved.values, pol, False, approval.Chain()
    )
    assert decision.decision != approval.APPROVE, decision
