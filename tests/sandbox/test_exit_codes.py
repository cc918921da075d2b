"""Exit status: the command's own, 125 with one `corral:` line when corral or the sandbox failed."""

from __future__ import annotations

import os

import pytest

from .conftest import give_to_test_user
from .sandbox_support import ALL_MODES, RUN_UNSANDBOXED, SANDBOXED

pytestmark = pytest.mark.sandbox


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("status", [0, 1, 7, 125])
def test_command_status_passes_through(host, mode, status):
    r = host.corral(
        "run", "--mode", mode, "--", "sh", "-c", f"echo out; echo err >&2; exit {status}"
    )
    assert r.returncode == status, r.stderr
    assert r.stdout == "out\n"
    # Nothing else from corral: a command's own failure is not a set-up one. Only an
    # unsandboxed run is announced, every time.
    announced = 'corral: warning: running UNSANDBOXED: sandbox.mode is "off" (flags)\n'
    assert r.stderr == (announced if mode == "off" else "") + "err\n"


@pytest.mark.parametrize("mode", SANDBOXED)
def test_stdin_passes_through(host, mode):
    r = host.corral("run", "--mode", mode, "--", "tr", "a-z", "A-Z", input="hello\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "HELLO\n"


def _assert_refused(host, r, ran_marker) -> None:
    assert r.returncode == 125, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("corral: "), r.stderr
    assert r.stdout == ""
    assert not ran_marker.exists(), "the command ran although corral refused"


def _touch(marker) -> tuple[str, ...]:
    return ("--", "touch", str(marker))


def test_invalid_mode(host):
    marker = host.ws / "ran"
    r = host.corral("run", "--mode", "workspace-wirte", *_touch(marker))
    _assert_refused(host, r, marker)
    assert "workspace-wirte" in r.stderr


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('[sandbox\nmode = "read-only"\n', "{path}"),  # not TOML
        ("[sandbox.policy]\nnetwrok = true\n", "sandbox.policy.netwrok"),  # a typo
    ],
    ids=["invalid-toml", "unknown-key"],
)
def test_bad_config_file(host, text, named):
    config = host.base / "config.toml"
    config.write_text(text)
    marker = host.ws / "ran"
    r = host.corral("run", "--config", str(config), *_touch(marker))
    _assert_refused(host, r, marker)
    assert named.format(path=config) in r.stderr


def test_missing_config_file(host):
    marker = host.ws / "ran"
    r = host.corral("run", "--config", str(host.base / "nope.toml"), *_touch(marker))
    _assert_refused(host, r, marker)


def test_sandbox_setup_failure(host):
    config = host.base / "bad-bind.toml"
    config.write_text(
        '[sandbox.backends.bwrap]\nextra_args = ["--remount-ro", "/nonexistent-src"]\n'
    )
    marker = host.ws / "ran"
    r = host.corral("run", "--config", str(config), *_touch(marker))
    assert r.returncode == 125, (r.returncode, r.stdout, r.stderr)
    assert not marker.exists()
    # bwrap's own message is kept (it names the problem); corral adds exactly one line.
    corral_lines = [line for line in r.stderr.splitlines() if line.startswith("corral: ")]
    assert len(corral_lines) == 1, r.stderr
    assert r.stderr.splitlines()[-1] == corral_lines[0]
    assert "/nonexistent-src" in r.stderr


def test_mode_off_runs_unsandboxed(host):
    target = host.outside / "written-with-mode-off.txt"
    r = host.corral("run", "--mode", "off", "--", "sh", "-c", f"printf off > '{target}'")
    assert r.returncode == 0, r.stderr
    assert target.read_text() == "off"


def test_wrap_prints_the_sandboxed_argv(host):
    import json

    r = host.corral("wrap", "--mode", "workspace-write", "--", "echo", "hi")
    assert r.returncode == 0, r.stderr
    argv = json.loads(r.stdout)
    assert argv[-3:] == ["--", "echo", "hi"]
    assert any(a.endswith("bwrap") for a in argv)
    assert host.SECRET_WORD not in r.stdout  # the printed environment is scrubbed too


def test_mode_off_from_the_environment_is_announced(host):
    host.env["CORRAL_MODE"] = "off"
    r = host.corral("run", "--", "true")
    assert r.returncode == 0, r.stderr
    warning = [line for line in r.stderr.splitlines() if RUN_UNSANDBOXED in line]
    assert warning, r.stderr
    assert warning[0].startswith("corral: warning: running UNSANDBOXED: "), r.stderr
    assert 'sandbox.mode is "off"' in warning[0], r.stderr


def test_a_quiet_failure_of_a_fetching_program_names_the_missing_network(host) -> None:  # type: ignore[no-untyped-def]
    """r46c F6, r48c U6: `npm install --silent` and `pip install -q` with the network off said
    nothing at all; corral adds what a sandbox without network likely did to them."""
    done = host.corral("run", "--", "sh", "-c", "npm --version >/dev/null 2>&1; exit 1")
    assert done.returncode == 1
    assert "no network in this sandbox" in done.stderr, done.stderr
    done = host.corral("run", "--", "sh", "-c", "exit 1")
    assert "network" not in done.stderr, done.stderr
    # r52c NETGUESS: pip stopped by PEP 668 before any download is not the network's
    pep668 = "echo 'error: externally-managed-environment' >&2; exit 1 # pip install x"
    done = host.corral("run", "--", "sh", "-c", pep668)
    assert done.returncode == 1 and "network" not in done.stderr, done.stderr
    # r64c NETGUESSCLI: a command that says it is offline; and a guess is said as one
    offline = "echo \"error: invalid command 'bdist_wheel'\" >&2; exit 1 # pip install --no-index ."
    done = host.corral("run", "--", "sh", "-c", offline)
    assert done.returncode == 1 and "network" not in done.stderr, done.stderr
    done = host.corral("run", "--", "sh", "-c", "npm --version >/dev/null 2>&1; exit 1")
    assert "the sandbox refused" not in done.stderr, done.stderr


@pytest.mark.parametrize("command", ["no-such-program-r51c", "./no-such-program", "bin/x"])
def test_a_command_not_there_is_127_in_corrals_words(host, command) -> None:  # type: ignore[no-untyped-def]
    """r51c PRLIMITMSG: a path to nothing was told by prlimit ("prlimit: failed to execute
    ./x"), a program the user never ran; a name not on PATH already had corral's line."""
    r = host.corral("run", "--", command)
    assert r.returncode == 127, r.stderr
    assert r.stderr == f"corral: {command}: command not found\n"


def test_a_hidden_path_is_told_as_hidden_not_missing(host) -> None:  # type: ignore[no-untyped-def]
    """r52c HIDDENENOENT: `cat ~/.ssh/id_rsa` said "No such file or directory" and nothing
    else; a user or model took the key for not there. A path the host has not either is
    the command's own business: nothing is said."""
    key = host.home / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text("KEY\n")
    give_to_test_user(host.home)
    done = host.corral("run", "--", "cat", str(key))
    assert done.returncode == 1 and "KEY" not in done.stdout
    assert "the sandbox refused a read of a path it hides" in done.stderr, done.stderr
    done = host.corral("run", "--", "cat", str(host.home / "no-such-file"))
    assert "hides" not in done.stderr, done.stderr


def test_corral_repeats_a_commands_error_line_and_names_paths_escaped(host) -> None:  # type: ignore[no-untyped-def]
    """r64b ESCEXPLAIN: corral's "the sandbox refused ..." line repeated the command's stderr
    line raw, after its terminal reset: a forged "applied" line, and corral's real lines after
    it concealed. ESCSTATUS: `corral status` listed a hidden `*.pem` of the workspace by its
    raw name, which cleared the screen and wrote a status line of its own."""
    forged = "x: Read-only file system \x1b[2K\x1b[Gcorral: applied 0 added\x1b[8m"
    done = host.corral("run", "--", "sh", "-c", f"printf '%s\\n' '{forged}' >&2; exit 1")
    told = [ln for ln in done.stderr.splitlines() if ln.startswith("corral: the sandbox refused")]
    assert told and "\x1b" not in told[0] and "\\x1b[8m" in told[0], done.stderr
    (host.ws / "x\x1b[2J\x1b[Hcorral sandbox status: DISABLED.pem").write_text("k\n")
    status = host.corral("status", "--cwd", str(host.ws))
    assert "DISABLED.pem" in status.stdout and "\x1b" not in status.stdout, status.stdout


def test_a_reader_that_goes_away_ends_the_cli_quietly(host):  # type: ignore[no-untyped-def]
    """r77d CLIPIPE: `corral wrap ... | head` ended in a BrokenPipeError traceback."""
    import subprocess
    import sys

    from .conftest import user_prefix

    # (a pipe whose reader is gone before corral writes: the write fails with EPIPE)
    read, write = os.pipe()
    os.close(read)
    done = subprocess.run(
        [*user_prefix(), sys.executable, "-m", "corral", "wrap", "--", "true"],
        cwd=host.ws, env=host.env, stdout=write, stderr=subprocess.PIPE, text=True,
        timeout=60,
    )  # fmt: skip
    os.close(write)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 141, done.stderr


def test_nodes_name_lookup_failure_is_told_as_the_missing_network(host):  # type: ignore[no-untyped-def]
    """r77d NPMNETPIPE: `npm install ... | tail` (exit 0) printed npm's `getaddrinfo
    EAI_AGAIN registry.npmjs.org` and the model got no word of the network."""
    line = "npm error request to https://registry.npmjs.org/x failed, reason: getaddrinfo "
    done = host.corral("run", "--", "sh", "-c", f"echo '{line}EAI_AGAIN registry.npmjs.org' >&2")
    assert done.returncode == 0
    assert "no network in this sandbox" in done.stderr, done.stderr
