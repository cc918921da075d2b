"""Host processes stay out of reach, nested namespaces are refused, nothing is left running."""

from __future__ import annotations

import subprocess
import time

import pytest

from .sandbox_support import (
    ALL_MODES,
    DONE,
    SANDBOXED,
    allowed,
    kill_all,
    processes_with_argv,
    q,
    survivors,
)

pytestmark = pytest.mark.sandbox

# os.unshare is 3.12+; the sandbox's python3 may be older. Exit 0 only when unshare(2) worked.
UNSHARE = "import ctypes, sys; sys.exit(ctypes.CDLL(None).unshare(int(sys.argv[1], 16)) != 0)"


@pytest.mark.parametrize("mode", SANDBOXED)
def test_host_processes_are_invisible_and_unkillable(host, mode):
    victim = subprocess.Popen(["sleep", "311"], stdin=subprocess.DEVNULL)
    try:
        pid = victim.pid
        # comm (the executable's name), not args: the script's own text would match itself.
        body = f"""
echo "PS:" $(ps -eo comm=)
echo "PIDS:" $(ls /proc | grep -E '^[0-9]+$')
attempt stat-proc   test -e /proc/{pid}/cmdline
attempt kill-term   kill -TERM {pid}
attempt kill-kill   kill -KILL {pid}
attempt pkill       pkill -KILL -x sleep
attempt python-kill python3 -c 'import os; os.kill({pid}, 9)'
"""
        r = host.sh(body, mode)
        assert DONE in r.stdout, r.stdout + r.stderr
        time.sleep(0.1)
        assert victim.poll() is None, f"the host process was killed: {allowed(r.stdout)}"
        lines = dict(line.split(":", 1) for line in r.stdout.splitlines() if ":" in line)
        names, pids = lines["PS"].split(), lines["PIDS"].split()
        assert "sleep" not in names, names
        assert str(pid) not in pids, pids
        assert allowed(r.stdout) == [], r.stdout
        # A pid namespace of its own: a handful of processes, not the host's.
        assert 0 < len(pids) < 10, pids
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.parametrize("mode", SANDBOXED)
def test_nested_namespaces_and_mounts_are_refused(host, mode):
    target = host.outside
    body = f"""
attempt unshare-user        unshare -U true
attempt unshare-user-root   unshare -Ur true
attempt unshare-net         unshare -n true
attempt unshare-mount       unshare -m true
attempt unshare-pid         unshare -p -f true
attempt libc-userns         python3 -c {q(UNSHARE)} 0x10000000
attempt libc-netns          python3 -c {q(UNSHARE)} 0x40000000
attempt libc-mountns        python3 -c {q(UNSHARE)} 0x00020000
attempt mount-tmpfs         mount -t tmpfs none /mnt
attempt mount-bind-rw       mount --bind {target} /mnt
attempt remount-rw          mount -o remount,rw /
attempt remount-outside-rw  mount -o remount,rw,bind {target}
attempt umount-mask         umount /etc/shadow
attempt write-after         sh -c 'printf x > {target}/after-mount.txt'
"""
    r = host.sh(body, mode)
    assert DONE in r.stdout, r.stdout + r.stderr
    assert allowed(r.stdout) == [], r.stdout
    assert not (target / "after-mount.txt").exists()


def _leftovers(argv: tuple[str, ...]) -> list[int]:
    found = survivors(argv)
    kill_all(found)  # never leave them behind on the test machine, even when failing
    return found


@pytest.mark.parametrize("mode", ALL_MODES)
def test_timeout_kills_every_descendant(host, mode):
    """--timeout: exit 124 promptly, and nothing the command started survives it."""
    argv = ("sleep", "313")
    assert processes_with_argv(argv) == []
    command = (
        "sleep 313 >/dev/null 2>&1 & "
        "setsid sleep 313 >/dev/null 2>&1 & "
        "nohup sleep 313 >/dev/null 2>&1 & "
        "(sleep 313 >/dev/null 2>&1 &) ; "
        "sleep 313"
    )
    start = time.monotonic()
    r = host.corral("run", "--mode", mode, "--timeout", "1", "--", "sh", "-c", command, timeout=30)
    elapsed = time.monotonic() - start
    left = _leftovers(argv)
    assert r.returncode == 124, r.stderr
    assert "corral: killed after 1 s" in r.stderr  # (r46c F9: it said nothing)
    assert elapsed < 6, elapsed
    assert left == [], f"still running on the host after the timeout: {left}"


@pytest.mark.parametrize("mode", SANDBOXED)
def test_background_children_die_when_the_command_exits(host, mode):
    argv = ("sleep", "314")
    assert processes_with_argv(argv) == []
    command = (
        "sleep 314 >/dev/null 2>&1 & "
        "setsid sleep 314 >/dev/null 2>&1 & "
        "(nohup sleep 314 >/dev/null 2>&1 &) ; "
        "echo started"
    )
    start = time.monotonic()
    r = host.corral("run", "--mode", mode, "--", "sh", "-c", command, timeout=30)
    elapsed = time.monotonic() - start
    left = _leftovers(argv)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "started\n"
    assert elapsed < 5, elapsed
    assert left == [], f"still running on the host after the command exited: {left}"


def test_timeout_zero_lifts_the_configured_one(host) -> None:  # type: ignore[no-untyped-def]
    """r64c TIMEOUTZERO: `--help` said "0 = none", and `--timeout 0` was refused."""
    config = host.home / ".config" / "corral" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[sandbox.limits]\ntimeout = 1\n")
    r = host.corral("run", "--", "sh", "-c", "sleep 1.5", timeout=30)
    assert r.returncode == 124, r.stderr
    r = host.corral("run", "--timeout", "0", "--", "sh", "-c", "sleep 1.5", timeout=30)
    assert r.returncode == 0, r.stderr
