"""`corral explain`: the decision for a command string, nothing run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


def explain(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("CORRAL_MODE", None)
    return subprocess.run(
        [sys.executable, "-m", "corral", "explain", "--cwd", str(tmp_path), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "decision", "source", "kind"),
    [
        (["--", "ls -la"], "approve", "urn:corral:approval:sandbox", "read-only"),
        (["--", "sudo rm -rf /"], "deny", "urn:corral:guard:privileged", "privileged"),
        (["--mode", "read-only", "--", "echo x > f"], "deny", "sandbox.mode", "writes"),
        (["--approval", "read-only", "--", "touch f"], "deny", "tools.approval", "writes"),
        (["--mode", "off", "--", "touch f"], "require_approval", "urn:corral:approval:default",
         "writes"),
    ],
)  # fmt: skip
def test_json_decision(
    tmp_path: Path, args: list[str], decision: str, source: str, kind: str
) -> None:
    done = explain(tmp_path, "--json", *args)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {"decision", "source", "class", "reasons"} <= set(data)
    assert (data["decision"], data["source"], data["class"]) == (decision, source, kind)
    assert isinstance(data["reasons"], list)
    assert not (tmp_path / "f").exists()  # explained, never run


def test_text_output_names_the_rule_and_the_sandbox(tmp_path: Path) -> None:
    done = explain(tmp_path, "--", "echo hi > out.txt")
    assert done.returncode == 0, done.stderr
    assert "decision: approve" in done.stdout
    assert "writes:   out.txt" in done.stdout
    assert "mode workspace-write" in done.stdout
    assert not (tmp_path / "out.txt").exists()


def test_no_command_is_a_usage_error(tmp_path: Path) -> None:
    done = explain(tmp_path, "--json")
    assert done.returncode == 125
    assert done.stderr.startswith("corral: corral explain: no command given")


def test_what_the_sandbox_hides_and_the_check_holds_is_named(tmp_path: Path) -> None:
    """r61c EXPLAINGAPS: `cat ~/.ssh/id_rsa`, `echo x > .envrc` and `git commit` were each
    just "approve"; the command then met "No such file", or its work was held."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("key\n")
    env_home = {"HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "corral", "explain", "--cwd", str(tmp_path), "--",
         "cat ~/.ssh/id_rsa; echo x > .envrc; echo y > tool.yaml; echo z > data/d.json; "
         "git commit -qam wip"],
        capture_output=True, text=True, check=False,
        env={**os.environ, **env_home, "XDG_CONFIG_HOME": str(tmp_path / "config")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"hidden: {home}/.ssh/id_rsa is inside {home}/.ssh" in done.stdout, done.stdout
    assert "held after the run: .envrc: protected name" in done.stdout, done.stdout
    assert "held after the run: new git history" in done.stdout, done.stdout
    assert "held after the run: tool.yaml: a config file at the project's top" in done.stdout
    assert "d.json" not in done.stdout.split("writes:")[1].split("\n", 1)[1], done.stdout
