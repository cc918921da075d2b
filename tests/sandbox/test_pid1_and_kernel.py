"""Nothing inside the sandbox escapes the filter, outlives the run, or changes the kernel.

A second outside review found that bwrap's own init process ran inside every sandbox as pid 1,
without the seccomp filter or the limits: a command could ptrace it or write its memory, clear
its die-with-parent signal, fake the exit status and keep running after the run was reported
over (writing into the workspace later). As root, /proc/sys was writable (kernel.core_pattern
runs a program on the host as root). Datagram socketpairs got through as SOCK_RAW.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from corral.changes import stage as stages

from .conftest import give_to_test_user, user_prefix
from .sandbox_support import SANDBOXED, kill_all, q, survivors

if TYPE_CHECKING:
    from .conftest import Host

pytestmark = pytest.mark.sandbox

# Every process in the sandbox, with its seccomp mode (2: filtered) and name.
LIST_FILTERS = """
import os
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    try:
        fields = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status").read().splitlines())
    except OSError:
        continue
    print("PROC", pid, fields["Seccomp"].strip(), fields["Name"].strip())
"""


@pytest.mark.parametrize("mode", SANDBOXED)
def test_every_process_inside_runs_under_the_filter(host: Host, mode: str) -> None:
    done = host.corral("run", "--mode", mode, "--", "sh", "-c", f"python3 -c {q(LIST_FILTERS)}")
    found = [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("PROC ")]
    assert found, done.stdout + done.stderr
    unfiltered = [f for f in found if f[1] != "2"]
    assert unfiltered == [], f"processes without the seccomp filter inside: {unfiltered}"
    assert found[0][0] == "1" and found[0][2] == "sh", f"pid 1 is not the command: {found}"


KERNEL_WRITES = """
import sys
for path in sys.argv[1:]:
    try:
        open(path, "r+b").close()  # opened for writing, nothing written
        print("WRITABLE", path)
    except OSError as e:
        print("refused", path, e.errno)
"""
KERNEL_FILES = (
    "/proc/sys/kernel/core_pattern",
    "/proc/sys/kernel/modprobe",
    "/proc/sys/vm/drop_caches",
    "/proc/sys/fs/suid_dumpable",
    "/proc/sysrq-trigger",
)


@pytest.mark.parametrize("mode", SANDBOXED)
def test_kernel_settings_cannot_be_opened_for_writing(host: Host, mode: str) -> None:
    # As root the sandbox's uid 0 is the host's and procfs checks only the file mode.
    code = f"python3 -c {q(KERNEL_WRITES)} {' '.join(KERNEL_FILES)}; echo END"
    done = host.corral("run", "--mode", mode, "--", "sh", "-c", code)
    assert "END" in done.stdout, done.stderr
    assert "WRITABLE" not in done.stdout, done.stdout


PDEATHSIG_THEN_WAIT = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
print("PDEATHSIG", libc.prctl(1, 0, 0, 0, 0), ctypes.get_errno(), flush=True)
if os.fork() == 0:
    os.setsid()
    libc.prctl(1, 0, 0, 0, 0)
    os.execvp("sleep", ["sleep", sys.argv[1]])
time.sleep(float(sys.argv[1]))
"""


@pytest.mark.parametrize("mode", SANDBOXED)
def test_a_killed_run_leaves_no_process_even_when_it_clears_its_death_signal(
    host: Host, mode: str
) -> None:
    seconds = "317"
    done = host.corral(
        "run", "--mode", mode, "--timeout", "2", "--",
        "python3", "-c", PDEATHSIG_THEN_WAIT, seconds,
    )  # fmt: skip
    left = survivors(("sleep", seconds))
    left += survivors(("python3", "-c", PDEATHSIG_THEN_WAIT, seconds), grace=0)
    kill_all(left)
    assert done.returncode == 124, done.stderr
    assert "PDEATHSIG -1 1" in done.stdout, f"clearing the death signal was not refused: {done}"
    assert left == [], f"processes of the sandbox outlived the run: {left}"


SOCKETPAIRS = """
import socket
for kind in (socket.SOCK_DGRAM, 3, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK):  # 3: SOCK_RAW
    try:
        socket.socketpair(socket.AF_UNIX, kind)
        print("PAIR", kind)
    except OSError as e:
        print("refused", kind, e.errno)
print("END")
"""


@pytest.mark.parametrize("mode", ["workspace-write", "workspace-write-network"])
def test_no_datagram_socketpair_under_any_type_name(host: Host, mode: str) -> None:
    # AF_UNIX turns SOCK_RAW into SOCK_DGRAM: the filter allows only stream and seqpacket.
    host_side = subprocess.run(["python3", "-c", SOCKETPAIRS], capture_output=True, text=True)
    assert host_side.stdout.count("PAIR") == 3, host_side.stdout  # they work out here
    done = host.corral("run", "--mode", mode, "--", "python3", "-c", SOCKETPAIRS)
    assert "END" in done.stdout, done.stderr
    assert "PAIR" not in done.stdout, done.stdout


def _start_wrapped(host: Host, seconds: str) -> tuple[subprocess.Popen[bytes], Path]:
    """A `corral wrap` argv started as jobstart would, once its command has written."""
    wrapped = host.corral("wrap", "--", "sh", "-c", f"echo early > early.txt; sleep {seconds}")
    argv = json.loads(wrapped.stdout)
    give_to_test_user(host.base)
    launcher = subprocess.Popen(
        [*user_prefix(), *argv], cwd=str(host.ws), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    stage_root = host.home / ".local" / "state" / "corral" / "changes"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = [p for p in stage_root.glob("*") if (p / "u0" / "early.txt").exists()]
        if found:
            return launcher, found[0]
        time.sleep(0.05)
    launcher.kill()
    raise AssertionError("the command never wrote")


@pytest.mark.as_root  # as nobody, this machine's test Python (under /root) cannot be run
def test_killing_the_launcher_alone_ends_the_sandbox_and_holds_its_changes(host: Host) -> None:
    # jobstart's launcher killed alone (not its process group): bwrap dies with it, and the
    # command with bwrap; the change set is held for review, never applied.
    launcher, stage = _start_wrapped(host, "319")
    try:
        launcher.send_signal(signal.SIGKILL)
        launcher.wait()
        left = survivors(("sleep", "319"))
    finally:
        kill_all(survivors(("sleep", "319"), grace=0))
    assert left == [], "the sandbox outlived its launcher"
    assert stage.name in host.corral("changes").stdout
    assert not (host.ws / "early.txt").exists()


@pytest.mark.as_root
def test_a_change_set_is_not_read_while_its_sandbox_runs(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Checking one tree while the command can still change it would apply another.
    from corral.changes import finish
    from corral.errors import CorralError

    launcher, stage = _start_wrapped(host, "321")
    try:
        assert stages.sandbox_alive(str(stage))
        monkeypatch.setattr(stages, "GONE_WAIT", 0.2)
        with pytest.raises(CorralError, match="still running"):
            finish.read(str(stage))
    finally:
        launcher.kill()
        launcher.wait()
        kill_all(survivors(("sleep", "321"), grace=0))
    deadline = time.monotonic() + 10
    while stages.sandbox_alive(str(stage)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not stages.sandbox_alive(str(stage))


def test_a_sandbox_whose_first_thread_ended_still_counts_as_running(tmp_path: Path) -> None:
    # Third review, P3: pid 1's main thread called pthread_exit; another thread still writes. Its
    # stat says zombie, and the change set was read as if the sandbox were gone.
    code = (
        "import ctypes, threading, time; "
        "threading.Thread(target=time.sleep, args=(30,)).start(); "
        "ctypes.CDLL(None).pthread_exit(None)"
    )
    proc = subprocess.Popen(["python3", "-c", code])
    try:
        namespace = os.readlink("/proc/self/ns/pid")[len("pid:[") : -1]
        (tmp_path / stages.SANDBOX).write_text(
            f'{{\n    "child-pid": {proc.pid},\n    "pid-namespace": {namespace}\n}}\n'
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(f"/proc/{proc.pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    break
            time.sleep(0.02)
        assert stages.sandbox_alive(str(tmp_path))
    finally:
        proc.kill()
        proc.wait()
    assert not stages.sandbox_alive(str(tmp_path))
