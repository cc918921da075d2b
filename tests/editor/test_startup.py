"""Zero-config start: :Sandbox exists without setup(), nothing heavy runs until first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .conftest import Editor

SUBCOMMANDS = sorted(
    [
        "apply",
        "changes",
        "disable",
        "discard",
        "enable",
        "reload",
        "reset",
        "run",
        "status",
        "stop",
        "undo",
    ]
)


def python_hosts(editor: Editor) -> list[dict]:
    """Channels of a Python remote-plugin host (a job whose client says it is a host)."""
    return [
        chan
        for chan in editor.nvim.api.list_chans()
        if chan.get("stream") == "job"
        and (chan.get("client", {}).get("type") == "host" or "python" in str(chan.get("argv")))
    ]


def test_sandbox_command_defined_without_setup_and_host_not_started(fresh: Editor) -> None:
    state = fresh.lua(
        "return {"
        " command = vim.fn.exists(':Sandbox'),"
        " remote_fn = vim.fn.exists('*CorralCall'),"
        " loaded = package.loaded['corral.engine'] ~= nil"
        "   or package.loaded['corral.sandbox'] ~= nil,"
        " registered = require('corral.engine').registered(),"
        " }"
    )
    assert state["command"] == 2, "the :Sandbox user command is not defined after start-up"
    assert state["remote_fn"] == 0, "CorralCall is defined before first use: host started early"
    assert state["loaded"] is False, "corral's Lua modules were loaded at start-up"
    assert state["registered"] is True, "the remote plugin's lazy definition is missing"
    assert python_hosts(fresh) == [], "a Python host runs before corral was used"

    # First use starts the host and defines the function.
    config = fresh.config()
    assert config["values"]["sandbox.mode"] == "workspace-write"
    assert fresh.lua("return vim.fn.exists('*CorralCall')") == 1
    assert len(python_hosts(fresh)) == 1


def test_completion_of_subcommands(fresh: Editor) -> None:
    complete = fresh.nvim.funcs.getcompletion
    assert sorted(complete("Sandbox ", "cmdline")) == SUBCOMMANDS
    assert complete("Sandbox st", "cmdline") == ["status", "stop"]
    assert complete("Sandbox re", "cmdline") == ["reload", "reset"]
    assert complete("Sandbox status ", "cmdline") == []
    # Completion alone must not start the Python host.
    assert python_hosts(fresh) == []


def test_completion_of_run_is_shell_commands(fresh: Editor) -> None:
    found = fresh.nvim.funcs.getcompletion("Sandbox run ech", "cmdline")
    assert "echo" in found
    assert all(name.startswith("ech") for name in found)
    assert "sh" in fresh.nvim.funcs.getcompletion("Sandbox run s", "cmdline")
