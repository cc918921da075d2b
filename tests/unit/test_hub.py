"""The hub that runs corral's proxy for Neovim's jobs (corral.net.hub): it serves only the
sandbox its launcher started. Real FIFOs and processes; the sandboxed side is played by the
test (a sandbox that could reach the FIFOs, as one with direct writes could reach corral's
state directory before review r28b)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time

from corral.net import hub


def test_the_pipes_are_reached_only_through_this_process() -> None:
    """r28b, r29b: FIFOs in corral's state directory, then in /tmp, could be written by a
    sandbox that saw them (direct writes; a workspace at /tmp). The launcher now opens this
    process's own pipes by /proc/<pid>/fd/<n>: nothing in any directory, and each sandbox
    has a /proc of its own."""
    info, block, _token = hub.fifo_pair()
    try:
        for path in (info, block):
            assert os.path.dirname(path) == f"/proc/{os.getpid()}/fd", path
            assert stat.S_ISFIFO(os.stat(path).st_mode)
        assert os.stat(info).st_ino != os.stat(block).st_ino
    finally:
        for fd in hub._PENDING.pop(info)[1]:
            os.close(fd)


def test_a_pid_nobody_launched_is_neither_served_nor_killed() -> None:
    """r28b FIFOKILL: the hub took any child-pid written to the info FIFO, opened the proxy
    in that process's network (the host's, as root) and, when that failed, killed it: with
    a negative number, a whole process group."""
    canary = subprocess.Popen(["sleep", "30"])
    try:
        for pid in (canary.pid, -canary.pid, 1, 0):
            fifos = hub.fifo_pair()
            the_hub = hub.Hub()
            run_id = the_hub.expect(fifos, (("pypi.org",), ()), None)
            fd = os.open(fifos[0], os.O_WRONLY)
            os.write(fd, fifos[2].encode() + b"\n")  # (the right token: the pid is judged)
            os.write(fd, json.dumps({"child-pid": pid, "pid-namespace": 1}).encode())
            os.close(fd)
            deadline = time.monotonic() + 10
            while not the_hub._reports and time.monotonic() < deadline:
                time.sleep(0.02)
            report = the_hub.report(run_id)
            assert report and "is not this run's sandbox" in report[0], report
            assert canary.poll() is None, f"the hub killed the process it was told of ({pid})"
    finally:
        canary.kill()
        canary.wait()


def test_a_launcher_without_this_runs_token_is_not_served() -> None:
    """r30b FDREUSE: the /proc/PID/fd/N paths name descriptor numbers a later run gets
    again: an argv started late, or twice, wrote into another run's pipe and got that run's
    allowlist. Each run now waits for its own one-time token first."""
    fifos = hub.fifo_pair()
    the_hub = hub.Hub()
    run_id = the_hub.expect(fifos, (("pypi.org",), ()), None)
    fd = os.open(fifos[0], os.O_WRONLY)
    os.write(fd, b"0" * 32 + b"\n" + json.dumps({"child-pid": os.getpid()}).encode())
    os.close(fd)
    deadline = time.monotonic() + 10
    while not the_hub._reports and time.monotonic() < deadline:
        time.sleep(0.02)
    report = the_hub.report(run_id)
    assert report and "another launcher" in report[0], report
