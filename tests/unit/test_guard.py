"""The guard's table: approval presets x sandbox modes x kinds of call, as a user expects it.

A call must pass both the sandbox and the approval layer: the mode refuses what it would never
allow (writes in read-only, fetch without network) before any preset or resolver speaks.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from corral import config
from corral.sandbox import policy
from corral.toolguard import approval, guard

if TYPE_CHECKING:
    from pathlib import Path

A, R, D = approval.APPROVE, approval.REQUIRE, approval.DENY

CALLS = {
    "bash-read": ("bash", {"command": "ls -la"}),
    "bash-write": ("bash", {"command": "echo hi > out.txt"}),
    "read": ("read", {"path": "README.md"}),
    "read-out": ("read", {"path": "/etc/hostname"}),
    "bash-rmr": ("bash", {"command": "rm -rf build && git clean -fdx"}),
    "write": ("write", {"path": "out.txt", "content": "x"}),
    "fetch": ("fetch", {"url": "https://example.com/"}),
}

# preset -> mode -> decisions for COLUMNS, with a working sandbox and direct writes
# (bash-rmr with change sets runs unasked where bash-write does: see
# test_what_only_a_change_set_undoes_is_asked_about_with_direct_writes). r89 audit C8: a
# read in the workspace is approved where a sandboxed `cat` of it is; one outside is asked.
COLUMNS = ("bash-read", "bash-write", "bash-rmr", "read", "read-out", "write", "fetch")
ROWS: dict[str, dict[str, str]] = {
    "ask": {
        "read-only":               "A D D A R D D",
        "workspace-write":         "A A R A R R D",
        "workspace-write-network": "A A R A R R R",
        "off":                     "R R R R R R R",  # no sandbox: its resolver never approves
    },
    "read-only": {
        "read-only":               "A D D A A D D",
        "workspace-write":         "A D D A A D D",
        "workspace-write-network": "A D D A A D D",
        "off":                     "D D D A A D D",  # the classifier alone approves no bash
    },
    "auto": {
        "read-only":               "A D D A A D D",
        "workspace-write":         "A A A A A A D",
        "workspace-write-network": "A A A A A A A",
        "off":                     "D D D A A D D",  # nothing but file reads, nothing asked
    },
    "full": {
        "read-only":               "A D D A A D D",
        "workspace-write":         "A A A A A A D",
        "workspace-write-network": "A A A A A A A",
        "off":                     "A A A A A A A",
    },
}  # fmt: skip
WORDS = {"A": A, "R": R, "D": D}
TABLE = {
    preset: {
        mode: dict(zip(COLUMNS, (WORDS[w] for w in row.split()), strict=True))
        for mode, row in modes.items()
    }
    for preset, modes in ROWS.items()
}

CASES = [
    (preset, mode, call, expected)
    for preset, modes in TABLE.items()
    for mode, calls in modes.items()
    for call, expected in calls.items()
]


def decide(ws: Path, tool: str, tool_input: dict[str, Any], **layer: Any) -> approval.Decision:
    resolved = config.resolve([config.Layer("global", layer)])
    env = {"HOME": str(ws.parent / "home"), "PATH": os.environ.get("PATH", "")}
    pol = policy.resolve(resolved, str(ws), env)
    sandboxed = pol.enabled  # a working backend, as on this machine
    decision, _ = guard.decide(tool, tool_input, resolved.values, pol, sandboxed, approval.Chain())
    return decision


@pytest.mark.parametrize(("preset", "mode", "call", "expected"), CASES)
def test_preset_and_mode_table(
    tmp_path: Path, preset: str, mode: str, call: str, expected: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    tool, tool_input = CALLS[call]
    d = decide(ws, tool, tool_input, **{"sandbox.mode": mode, "tools.approval": preset})
    assert d.decision == expected, d


def test_read_only_mode_names_the_network_for_what_needs_it(tmp_path: Path) -> None:
    """r51c FETCHRO: fetch in read-only mode was refused as "fetch changes files", with a
    hint to workspace-write, which has no network either; curl was "not read-only"."""
    d = decide(tmp_path, "fetch", {"url": "https://example.com/"}, **{"sandbox.mode": "read-only"})
    assert (d.decision, d.source) == (D, "sandbox.policy.network"), d
    d = decide(tmp_path, "bash", {"command": "curl https://example.com/"},
               **{"sandbox.mode": "read-only"})  # fmt: skip
    assert d.reason == "the sandbox is read-only and this command uses the network", d
    d = decide(tmp_path, "write", {"path": "x", "content": ""}, **{"sandbox.mode": "read-only"})
    assert d.reason == "the sandbox is read-only and write changes files", d


def test_privileged_is_refused_even_with_full(tmp_path: Path) -> None:
    d = decide(tmp_path, "bash", {"command": "sudo ls"}, **{"tools.approval": "full"})
    assert (d.decision, d.source) == (D, "urn:corral:guard:privileged")


def test_shell_deny_beats_allow_and_presets(tmp_path: Path) -> None:
    d = decide(
        tmp_path,
        "bash",
        {"command": "git push --force"},
        **{"tools.shell.deny": ["PUSH --FORCE"], "tools.shell.allow": ["git"]},
    )
    assert d.decision == D and "tools.shell.deny" in d.source


def test_shell_allow_approves_in_ask(tmp_path: Path) -> None:
    d = decide(
        tmp_path,
        "bash",
        {"command": "make test"},
        **{"tools.shell.allow": ["make test"], "sandbox.mode": "off"},
    )
    assert d.decision == A and "tools.shell.allow" in d.source


def test_unknown_and_removed_tools_are_refused(tmp_path: Path) -> None:
    assert decide(tmp_path, "teleport", {}).source == "urn:corral:guard:unknown-tool"
    d = decide(tmp_path, "bash", {"command": "ls"}, **{"tools.available": ["read"]})
    assert (d.decision, d.source) == (D, "tools.available")


def test_unsandboxed_fallback_never_auto_approves_bash(tmp_path: Path) -> None:
    resolved = config.resolve([])
    pol = policy.resolve(resolved, str(tmp_path), {"HOME": str(tmp_path), "PATH": "/usr/bin"})
    decision, _ = guard.decide(
        "bash", {"command": "ls"}, resolved.values, pol, False, approval.Chain()
    )
    assert decision.decision == R


def test_auto_says_no_sandbox_confines_a_read_that_runs_without_one(tmp_path: Path) -> None:
    # Second review, L1: with the sandbox off, the reason claimed the sandbox confined it.
    layer = {"tools.approval": "auto", "sandbox.mode": "off"}
    d = decide(tmp_path, "read", {"path": "README.md"}, **layer)
    assert d.decision == A
    assert "confines" not in d.reason and "file tool" in d.reason, d


@pytest.mark.parametrize("preset", ["read-only", "auto"])
@pytest.mark.parametrize("sandboxed", [False, "mode off"])
def test_the_classifier_alone_never_approves_a_command_on_the_host(
    tmp_path: Path, preset: str, sandboxed: object
) -> None:
    """Every classifier review found a command it read as read-only and bash ran as a write.
    Where no sandbox would hold if it were wrong (mode off, or no working backend), presets
    that never ask refuse bash instead of trusting the classifier: a classifier mistake can
    then only ever run inside a sandbox."""
    mode = "off" if sandboxed == "mode off" else "workspace-write"
    resolved = config.resolve([config.Layer("global", {"tools.approval": preset,
                                                       "sandbox.mode": mode})])  # fmt: skip
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    pol = policy.resolve(resolved, str(tmp_path), env)
    for command in ("ls", "cat README.md", "git status"):
        d, cls = guard.decide("bash", {"command": command}, resolved.values, pol, False,
                              approval.Chain())  # fmt: skip
        assert cls is not None and cls.kind == "read-only"  # the classifier still reads it
        assert (d.decision, d.source) == (D, "tools.approval"), (command, d)
        assert "only inside a working sandbox" in d.reason and '"ask"' in d.reason
    # a file tool's read is guarded by the file tool itself and still runs
    d, _ = guard.decide("read", {"path": "x"}, resolved.values, pol, False, approval.Chain())
    assert d.decision == A


@pytest.mark.parametrize(
    ("tool", "tool_input", "message"),
    [
        ("bash", {"cmd": "ls"}, "input.cmd is not an input of bash"),
        ("bash", {}, "input.command (a string) is required"),
        ("bash", {"command": ""}, "input.command is empty"),
        # (r89 MODELTEXTVOICE: not Python's "not list", "not str")
        ("bash", {"command": ["ls"]}, "input.command must be a string, not a list"),
        ("bash", {"command": {"x": 1}}, "input.command must be a string, not a table"),
        ("read", {"path": "x", "offset": 1.5}, "input.offset must be an integer, not a number"),
        ("write", {"path": "x"}, "input.content (a string) is required"),
        ("read", {"path": "x", "max_bytes": True}, "input.max_bytes must be an integer, not true"),
        # (r88c GUARDQUADRATIC: no file has a path past PATH_MAX)
        ("read", {"path": "a/" * 2048 + "b"}, "input.path is 4097 bytes, more than a path"),
    ],
)
def test_malformed_input_is_refused_before_anything_runs(
    tmp_path: Path, tool: str, tool_input: dict[str, Any], message: str
) -> None:
    # Issue 9: {cmd = "ls"} ran as `bash -c ""`.
    d = decide(tmp_path, tool, tool_input, **{"tools.approval": "full"})
    assert (d.decision, d.source) == (D, "urn:corral:guard:invalid-input"), d
    assert message in d.reason


@pytest.mark.parametrize(("given", "said"), [('{"command": "ls"}', "a string"), (["ls"], "a list")])
def test_an_input_that_is_no_table_is_the_chat_plugins_to_mend(
    tmp_path: Path, given: Any, said: str
) -> None:
    """r89 MODELTEXTVOICE: "not a str" (Python's word), and a hint asking the model to send
    other inputs, for what only the chat plugin can mend."""
    from corral.results import guard_refusal, shape

    d = decide(tmp_path, "bash", given, **{"tools.approval": "full"})
    assert (d.decision, d.source) == (D, "urn:corral:guard:plugin-input"), d
    assert d.reason.startswith(f"the chat plugin passed corral the call's input as {said}, ")
    refusal = guard_refusal(d.as_dict(), {})
    assert refusal["code"] == "invalid-input"
    summary = shape("bash", {"refusal": refusal}, d.as_dict(), False)["summary"]
    assert summary.endswith("; ask the user to report it to the chat plugin's author: the same "
                            "call sent again fails the same way"), summary  # fmt: skip
    assert summary.count("(") == summary.count(")") == 0, summary


@pytest.mark.parametrize(
    "command",
    ["rm -rf build", "rm -R x", "git clean -fdx", "git reset --hard", "find . -name '*.o' -delete"],
)
def test_what_only_a_change_set_undoes_is_asked_about_with_direct_writes(
    tmp_path: Path, command: str
) -> None:
    """r89 audit C8 (issue 9): `rm -rf build && git clean -fdx` ran unasked while a read of
    a workspace file asked. A command that deletes or discards work wholesale runs unasked
    in a working sandbox only where a change set can undo it; with direct writes (chosen, or
    no overlay) it is asked about, unless your own tools.auto_approve approves it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    resolved = config.resolve([config.Layer("global", {"sandbox.mode": "workspace-write"})])
    pol = policy.resolve(resolved, str(ws), {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})

    def decided(undoable: bool, **values: Any) -> approval.Decision:
        settings = {**resolved.values, **values}
        call = {"command": command}
        chain = approval.Chain()
        return guard.decide("bash", call, settings, pol, True, chain, undoable=undoable)[0]

    assert decided(True).decision == A
    asked = decided(False)
    assert asked.decision == R, asked
    assert asked.reason.endswith("and with direct writes nothing undoes it"), asked  # (r90t)
    assert decided(False, **{"tools.auto_approve": ["bash"]}).decision == A
    assert guard.decide("bash", {"command": "rm build/a.o"}, resolved.values, pol, True,
                        approval.Chain())[0].decision == A  # (one file: not wholesale)  # fmt: skip


def test_a_read_is_unasked_only_where_the_tool_reads_inside_the_workspace(tmp_path: Path) -> None:
    """r90a TILDEUNASKED: "inside the workspace" was judged on the path joined to the
    workspace, `~` unexpanded, while the read tool reads `~/x` in your home: read
    "~/.gitconfig" ran unasked, and so did any path through a directory named `~` made in
    the workspace. Judged now on the path as the tool resolves it, before and after links."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / "~" / "x").mkdir(parents=True)
    home.mkdir()
    (ws / "out").symlink_to("/etc")
    resolved = config.resolve([])
    pol = policy.resolve(resolved, str(ws), {"HOME": str(home), "PATH": "/usr/bin:/bin"})

    def asked(path: str) -> str:
        call = {"path": path}
        return guard.decide("read", call, resolved.values, pol, True, approval.Chain())[0].decision

    assert asked("notes.txt") == A and asked(str(ws / "sub" / "x")) == A
    for outside in ("~/.gitconfig", "~/x/../../etc/hostname", "out/hostname", "sub/../..", "/etc"):
        assert asked(outside) == R, outside
    why = guard.decide("ls", {"path": "/etc"}, resolved.values, pol, True, approval.Chain())[0]
    assert why.reason == "corral asks before an ls where it is outside the workspace", why
