"""`:Sandbox disable` keeps the environment scrubbed (issue 7, "also found"): wrap_command used
to hand the host's environment, API keys included, to the command."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .conftest import Editor

CANARY = "sk-CORRALCANARY-disable-0123456789"


def test_disabled_sandbox_still_scrubs_the_environment(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    ed = spawn(cwd=workspace, env={"OPENAI_API_KEY": CANARY, "MY_TOKEN": CANARY})
    ed.cmd("Sandbox", "disable")
    argv, err, info = ed.lua(
        "local argv, err, info = require('corral.sandbox').wrap_command({ 'env' }, 0)"
        " return { argv, err or vim.NIL, info }"
    )
    assert err is None
    assert info["sandboxed"] is False
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert CANARY not in done.stdout
    assert "PATH=" in done.stdout
