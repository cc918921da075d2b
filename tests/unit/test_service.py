"""The service layer (corral.service.Service): what a frontend's request becomes, in-process."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from corral.service import Service

if TYPE_CHECKING:
    from pathlib import Path


def _read(ws: Path, setting: int, asked: int | None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "layers": {"global": {"tools": {"read": {"max_bytes": setting}}}},
        "cwd": str(ws),
        "tool": "read",
        "input": {"path": "big", **({"max_bytes": asked} if asked else {})},
    }
    return Service().call("op", request)  # type: ignore[no-any-return]


def test_a_reads_max_bytes_may_lower_the_setting_never_raise_it(tmp_path: Path) -> None:
    """r31b READMAX: the call's max_bytes replaced tools.read.max_bytes: a read of a sparse
    512 MiB file written by a command took the engine (the editor's Python host) to 6.7 GiB."""
    (tmp_path / "big").write_bytes(b"x" * 5000)
    for asked, got in ((None, 100), (10**9, 100), (40, 40)):
        done = _read(tmp_path, 100, asked)
        assert done["ok"] and done["truncated"], done
        assert f"truncated at {got} bytes" in done["notice"], done


def test_change_set_lines_reach_a_frontend_escaped() -> None:
    """r31b: `:Sandbox undo` showed journal paths as written: a name with a newline forged
    message lines (the CLI escaped them, the service did not)."""
    from corral.changes.commands import Outcome

    done = Outcome(["restored a\nundid everything\x1b[2J", "x\ty"], ["bad\rname"]).as_dict()
    assert done["out"] == ["restored a\\x0aundid everything\\x1b[2J", "x\ty"]
    assert done["err"] == ["bad\\x0dname"]


def test_a_quiet_command_that_needed_the_network_is_told_so(tmp_path: Path) -> None:
    """r46c F6: `pip install -q` without network says only "No matching distribution found";
    the result named no cause. A failed command the classifier finds needs the network, in a
    sandbox without any, gets the network refusal; one that exits 0, or does not, none."""

    def result(command: str, exit_code: int) -> dict[str, Any]:
        request = {
            "layers": {}, "cwd": str(tmp_path), "tool": "bash", "command": command,
            "raw": {"exit": exit_code, "output": "ERROR: No matching distribution found",
                    "sandboxed": True},
            "decision": {"decision": "approve", "source": "s", "reason": ""},
        }  # fmt: skip
        return Service().call("result", request)["result"]  # type: ignore[no-any-return]

    done = result("pip install -q pytest", 1)
    assert [r["code"] for r in done["sandbox_refusals"]] == ["network"], done
    assert "network" in done["summary"]
    assert result("pip install -q pytest", 0)["sandbox_refusals"] == []
    assert result("ls nope", 2)["sandbox_refusals"] == []
    for command in (
        ".venv/bin/pip install -q x",
        "python3 -m pip install -q x",
        "cd web && npm install --silent left-pad",
    ):  # fmt: skip  (r48c)
        assert [r["code"] for r in result(command, 1)["sandbox_refusals"]] == ["network"]


def test_a_read_approved_unasked_must_still_be_inside_the_workspace(base: Path) -> None:
    """r91a UNASKEDREAD_RACE: the guard approved a read of `link/notes` unasked as one
    inside the workspace; re-pointed before it ran, the link took it outside with no window.
    The read approved so is held to the workspace when it runs; one you approved is not."""
    ws, outside = base / "ws", base / "outside"
    for d in (ws / "inside", outside):
        d.mkdir(parents=True)
        (d / "notes").write_text(f"{d.name}\n")
    (ws / "link").symlink_to(ws / "inside")
    request = {"cwd": str(ws), "tool": "read", "input": {"path": "link/notes"}}
    unasked = {**request, "approved_by": "urn:corral:approval:sandbox"}
    assert Service().call("op", unasked)["content"] == "inside\n"
    (ws / "link").unlink()
    (ws / "link").symlink_to(outside)
    refused = Service().call("op", unasked)
    assert refused["refusal"]["code"] == "outside-envelope", refused
    listed = Service().call("op", {**unasked, "tool": "ls", "input": {"path": "link"}})
    assert listed["refusal"]["code"] == "outside-envelope", listed
    assert Service().call("op", {**request, "approved_by": "user"})["content"] == "outside\n"
