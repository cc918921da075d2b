"""What the sandbox visibly refused in a command's output, in corral's words: the right rule
and a hint that fits (new-user trial, session 19)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from corral import config
from corral.results import summary
from corral.sandbox.policy import resolve
from corral.toolguard.ops import bash_report

if TYPE_CHECKING:
    from pathlib import Path

    from corral.sandbox.policy import Policy


def _policy(tmp_path: Path, mode: str = "workspace-write") -> Policy:
    layers = [config.Layer("global", {"sandbox.mode": mode})]
    return resolve(config.resolve(layers), str(tmp_path), {"HOME": str(tmp_path / "home")})


def test_a_protected_path_inside_the_workspace_is_not_blamed_on_rw_paths(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    line = "touch: cannot touch '.git/hooks/pre-commit': Read-only file system"
    (found,) = bash_report.report(line, _policy(tmp_path))
    assert found["rule"] == "sandbox.policy.protected", found
    assert "on purpose" in found["hint"] and "rw_paths" not in found["hint"], found


def test_outside_the_workspace_the_hint_fits_the_mode(tmp_path: Path) -> None:
    line = "sh: 1: cannot create /etc/x: Read-only file system"
    (written,) = bash_report.report(line, _policy(tmp_path))
    assert written["rule"] == "sandbox.policy.rw_paths", written
    assert "workspace-write" not in written["hint"], written  # it is that mode already
    (read_only,) = bash_report.report(line, _policy(tmp_path, "read-only"))
    assert read_only["rule"] == "sandbox.policy.rw_paths", read_only  # (no mode makes /etc so)
    # r72d CLICHATWORD: in the workspace, a read-only sandbox says so, in no chat's words
    inside = f"sh: 1: cannot create {tmp_path}/x: Read-only file system"
    (mode,) = bash_report.report(inside, _policy(tmp_path, "read-only"))
    assert mode["rule"] == "sandbox.mode" and "workspace-write" in mode["hint"], mode
    assert "chat" not in mode["hint"] and "outside" not in mode["hint"], mode


def test_the_model_is_told_how_to_allow_what_the_sandbox_refused() -> None:
    seen = bash_report.report("curl: (6) Could not resolve host: example.com")
    text = summary({"status": "ran", "tool": "bash", "exit": 6, "sandbox_refusals": seen})
    assert "(network access; to allow: no network in this sandbox" in text, text
    assert "refused no network" not in "\n".join(bash_report.explain(seen))


def test_a_privileged_refusal_does_not_say_the_user_can_allow_it() -> None:
    refusal = {"code": "privileged", "message": "sudo", "hint": "run it yourself"}
    text = summary({"status": "refused", "tool": "bash", "refusal": refusal})
    assert "can allow" not in text and "run it yourself" in text, text


def test_a_path_a_deny_list_hides_is_told_as_hidden(tmp_path: Path) -> None:
    """New-user trial: `cat secret-notes.txt`, hidden by the chat's deny_read, was reported
    as sandbox.policy.protected."""
    (tmp_path / "secret-notes.txt").write_text("x\n")
    layers = [
        config.Layer("global", {"sandbox.policy.deny_read": {"append": ["secret-notes.txt"]}})
    ]
    policy = resolve(config.resolve(layers), str(tmp_path), {"HOME": str(tmp_path / "home")})
    line = "cat: secret-notes.txt: Permission denied"
    (found,) = bash_report.report(line, policy)
    assert found["rule"] == "sandbox.policy.deny_read", found


def test_one_failed_connection_is_one_refusal() -> None:
    """r72d NETCOUNT: Python's traceback of one failed lookup says it twice (gaierror, then
    URLError): "the sandbox refused 2 operations"."""
    output = (
        "socket.gaierror: [Errno -3] Temporary failure in name resolution\n"
        "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name "
        "resolution>\n"
    )
    (seen,) = bash_report.report(output)
    assert seen["code"] == "network", seen


def test_writes_where_nothing_is_kept_are_said_and_others_are_not(tmp_path: Path) -> None:
    """r89t SILENTDISCARD: what a command names as written in the sandbox's own /tmp or a
    private home is gone when it ends; said, with the way to keep it. Writes in the
    workspace, refused ones (told from the output) and unnamed ones are not."""
    for name in ("home", "ws"):
        (tmp_path / name).mkdir()
    layers = [config.Layer("global", {"sandbox.mode": "workspace-write"})]
    pol = resolve(config.resolve(layers), str(tmp_path / "ws"), {"HOME": str(tmp_path / "home")})
    said = bash_report.discarded("echo x > /tmp/o.txt | tee ~/n; cp a ./b; echo > /etc/x", pol)
    assert [s["message"].split(" was ")[0] for s in said] == ["/tmp/o.txt", "~/n"], said
    assert all(s["code"] == "discarded" and "inside the workspace" in s["hint"] for s in said)
    assert bash_report.discarded("pip install --user x; ls /usr", pol) == []
    lines = bash_report.explain(said)
    assert lines[-1].startswith("corral: to keep such a file: write it inside the workspace")
    text = summary({"status": "ran", "tool": "bash", "exit": 0, "sandbox_refusals": said})
    assert text.startswith("exit 0; /tmp/o.txt was written in the sandbox's own /tmp"), text
    assert "1 more like it" in text and "refused" not in text


def test_unsandboxed_no_write_is_said_to_be_gone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """r91c DISCARDUNSANDBOXED: in the unsandboxed fallback /tmp is the host's, and a file
    written there stays: corral run must not say it is gone."""
    from corral.cli.run import _explain

    for name in ("home", "ws"):
        (tmp_path / name).mkdir()
    layers = [config.Layer("global", {"sandbox.mode": "workspace-write"})]
    pol = resolve(config.resolve(layers), str(tmp_path / "ws"), {"HOME": str(tmp_path / "home")})
    words = ["sh", "-c", "echo x > /tmp/out.txt"]
    for sandboxed in (True, False):
        _explain(bytearray(), pol, {}, words, 0, sandboxed)
        said = capsys.readouterr().err
        assert ("/tmp/out.txt was written in the sandbox's own /tmp" in said) is sandboxed, said
