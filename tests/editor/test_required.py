"""sandbox.backend = "required" with no working backend: entering a chat warns once, visibly."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .conftest import WARN

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Editor


def test_required_backend_missing_warns_once_on_entering_chats(
    fresh: Editor, workspace: Path
) -> None:
    fresh.lua(
        "require('corral').setup({ sandbox = { backend = 'required',"
        " backends = { bwrap = { path = ... } } } })",
        str(workspace / "no-such-bwrap"),
    )
    for name in ("one.chat", "two.chat"):
        (workspace / name).write_text("a chat without frontmatter\n")
        fresh.edit(workspace / name)
    warnings = [m for m in fresh.messages(WARN) if "required" in m]
    assert len(warnings) == 1, fresh.messages()
    assert "no-such-bwrap" in warnings[0]  # the real reason
    assert ":Sandbox status" in warnings[0] and ":checkhealth corral" in warnings[0]
    # And commands are refused, not run unsandboxed.
    argv, err = fresh.lua("return { require('corral.sandbox').wrap_command({ 'true' }, 0) }")[:2]
    assert argv is None and "not available" in err
