"""Evasions found by the tool-guard review: none may come out read-only."""

from __future__ import annotations

import pytest

from corral.toolguard.classify import READ_ONLY, classify


@pytest.mark.parametrize(
    "command",
    [
        "jobs -x touch P",  # runs a command, even with no jobs
        "sleep 0 & wait -n -p 'a[$(touch P)]'",  # evaluates the subscript
        r"printf -va\[\$\(touch\ P\)\] x",  # -v attached to its name
        "printf -vPATH x",
        "fd -Hx touch",  # -x in a cluster of short options
        "fd -tfx rm",
        "fd --exec=rm",
        "fd --exec-batch=rm",
        "fdfind victim --exec=rm",
        "tree -R -L 1 -H . d",  # writes 00Tree.html into each directory
    ],
)
def test_never_read_only(command: str) -> None:
    assert classify(command).kind != READ_ONLY, classify(command)


@pytest.mark.parametrize("command", ["jobs", "wait", "fd foo", "tree -L 2", 'printf "%s" x'])
def test_the_plain_forms_stay_read_only(command: str) -> None:
    assert classify(command).kind == READ_ONLY
