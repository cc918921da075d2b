"""The hand-written CLI option parser."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from corral.cli.options import UsageError, parse

if TYPE_CHECKING:
    from pathlib import Path


def test_defaults() -> None:
    opts, words = parse("run", ["ls"])
    assert opts == {"allow_write": [], "deny_read": [], "allow_host": []}
    assert words == ["ls"]


def test_repeatable_options_and_inline_values() -> None:
    opts, words = parse(
        "run",
        ["--allow-write", "/a", "--allow-write=/b", "--deny-read=/s", "--mode=read-only", "ls"],
    )
    assert opts["allow_write"] == ["/a", "/b"]
    assert opts["deny_read"] == ["/s"]
    assert opts["mode"] == "read-only"
    assert words == ["ls"]


def test_inline_value_may_contain_equals_and_be_empty() -> None:
    opts, _ = parse("run", ["--cwd=/x=y", "true"])
    assert opts["cwd"] == "/x=y"
    opts, _ = parse("run", ["--backend=", "true"])
    assert opts["backend"] == ""


def test_double_dash_ends_options() -> None:
    opts, words = parse("run", ["--network", "--", "--mode", "x", "--"])
    assert opts["network"] is True
    assert "mode" not in opts
    assert words == ["--mode", "x", "--"]


def test_first_non_option_ends_options() -> None:
    opts, words = parse("run", ["--no-network", "ls", "--network", "-la"])
    assert opts["no_network"] is True
    assert "network" not in opts
    assert words == ["ls", "--network", "-la"]


def test_lone_dash_is_a_word() -> None:
    _, words = parse("run", ["-", "x"])
    assert words == ["-", "x"]


def test_value_is_taken_verbatim_even_if_it_looks_like_an_option() -> None:
    opts, words = parse("run", ["--cwd", "--network", "true"])
    assert opts["cwd"] == "--network"
    assert words == ["true"]


@pytest.mark.parametrize(
    ("command", "args", "fragment"),
    [
        ("run", ["--nope", "ls"], "unknown option --nope"),
        ("run", ["--nope=1", "ls"], "unknown option --nope"),
        ("run", ["-x", "ls"], "unknown option -x"),
        ("run", ["--json", "ls"], "unknown option --json"),
        ("wrap", ["--timeout", "5", "ls"], "unknown option --timeout"),
        ("status", ["--timeout", "5"], "unknown option --timeout"),
        ("run", ["--mode"], "--mode needs a value"),
        ("run", ["--allow-write"], "--allow-write needs a value"),
        # r72d ALLOWHOSTDASH: `--` was taken as the host, and the proxy started for it
        ("run", ["--allow-host", "--", "sh"], "--allow-host needs a value"),
        ("run", ["--mode", "a", "--mode", "b", "ls"], "--mode given twice"),
        ("run", ["--cwd=/a", "--cwd", "/b", "ls"], "--cwd given twice"),
        ("run", ["--network=yes", "ls"], "--network takes no value"),
        ("run", ["--network", "--no-network", "ls"], "contradict"),
        ("run", ["--no-network", "--network", "ls"], "contradict"),
    ],
)
def test_usage_errors(command: str, args: list[str], fragment: str) -> None:
    with pytest.raises(UsageError) as info:
        parse(command, args)
    assert fragment in str(info.value)
    assert f"corral {command}" in str(info.value)


@pytest.mark.parametrize("value", ["abc", "-1", "", "nan", "-inf", "inf", "1e400", "1e300"])
def test_bad_timeout(value: str) -> None:
    # inf and huge values are refused here: they would crash select() after the command started.
    with pytest.raises(UsageError) as info:
        parse("run", ["--timeout", value, "ls"])
    assert "--timeout" in str(info.value)


# ("0": none, also where sandbox.limits.timeout sets one: r64c TIMEOUTZERO)
@pytest.mark.parametrize(
    ("value", "seconds"), [("5", 5.0), ("0.25", 0.25), ("1e3", 1000.0), ("0", 0.0)]
)
def test_good_timeout(value: str, seconds: float) -> None:
    opts, _ = parse("run", [f"--timeout={value}", "ls"])
    assert opts["timeout"] == seconds


def test_status_accepts_json_and_help() -> None:
    opts, words = parse("status", ["--json", "-h"])
    assert opts["json"] is True and opts["help"] is True
    assert words == []


def test_relative_paths_are_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    opts, _ = parse(
        "run",
        [
            "--allow-write", "out",
            "--allow-write", "../sibling",
            "--allow-write", "/abs",
            "--allow-write", "~/x",
            "--allow-write", "urn:corral:cwd/y",
            "--allow-write", "$HOME/z",
            "--deny-read", "secret",
            "ls",
        ],
    )  # fmt: skip
    assert opts["allow_write"] == [
        str(tmp_path / "out"),
        os.path.join(str(tmp_path.parent), "sibling"),
        "/abs",
        "~/x",
        "urn:corral:cwd/y",
        "$HOME/z",
    ]
    assert opts["deny_read"] == [str(tmp_path / "secret")]
    assert all(os.path.isabs(p) or p[0] in "~u$" for p in opts["allow_write"])


def test_arguments_are_not_modified() -> None:
    args = ["--allow-write", "rel", "ls"]
    parse("run", args)
    assert args == ["--allow-write", "rel", "ls"]


@pytest.mark.parametrize("command", ["changes", "apply", "discard", "undo"])
def test_help_of_the_change_set_commands(command: str) -> None:
    """r47b: `corral apply --help` said "no held change set '--help'"."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "corral", command, "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "corral apply ID" in done.stdout, done.stderr
