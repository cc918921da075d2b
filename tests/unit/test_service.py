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
