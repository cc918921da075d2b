"""The CLI tour (`scripts/demo --cli`) must end with everyday work done and every escape
refused: it is the first thing a new user may run, and it once reported a failure nobody saw
(the private home made a write to $HOME succeed inside, harmlessly, and the tour judged it by
the exit status instead of by what reached the host)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import user_prefix

pytestmark = pytest.mark.sandbox

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"


def test_cli_tour_succeeds(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    done = subprocess.run(
        [*user_prefix(), sys.executable, str(DEMO)],
        env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[FAIL]" not in done.stdout
    assert "every escape attempt was refused" in done.stdout
