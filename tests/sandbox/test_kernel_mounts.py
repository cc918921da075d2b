"""The kernel's filesystems mounted outside /proc, /sys and /dev (a chroot's proc, a build
root's sys) are masked in the sandbox and never read by the file tools (r81c
PROCELSEWHERE, PROCINROOT); a read-only workspace inside a directory only you may enter
shows its own files (r81c ROPRIVWS)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import NOBODY, give_to_test_user, user_prefix
from .sandbox_support import DIRECT

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .conftest import Host

pytestmark = pytest.mark.sandbox

SECRET = f"--password=CORRAL-ARGV-{uuid.uuid4().hex[:8]}"


def _tool_read(host: Host, cwd: Path, path: Path, mode: str) -> str:
    """What the read tool answers a chat for `path`, run by the engine as the test's user."""
    request = {
        "cwd": str(cwd), "tool": "read", "input": {"path": str(path)},
        "layers": {"global": {"sandbox": {"mode": mode}}},
    }  # fmt: skip
    code = (
        "import json, sys\nfrom corral.service import Service\n"
        "print(json.dumps(Service().call('op', json.loads(sys.argv[1]))))"
    )
    done = subprocess.run(
        [*user_prefix(), sys.executable, "-c", code, json.dumps(request)],
        cwd=str(cwd), env=host.env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _mount(kind: str, point: Path) -> None:
    point.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", kind, kind, str(point)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a {kind} here: {done.stderr.strip()}")


@pytest.fixture
def mounted() -> Iterator[list[Path]]:
    """The mount points a test made, unmounted after it."""
    points: list[Path] = []
    try:
        yield points
    finally:
        for point in reversed(points):
            subprocess.run(["umount", "-l", str(point)], capture_output=True, check=False)
        for point in points:
            if point.name.startswith("corral-closed-"):
                shutil.rmtree(point, ignore_errors=True)


@pytest.fixture
def host_process() -> Iterator[int]:
    """A host process with a secret on its command line (`mysql -pPASS`, a `--token=`)."""
    process = subprocess.Popen(["sh", "-c", "sleep 120", SECRET])
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


def test_a_chroots_proc_shows_no_host_process(
    host: Host, mounted: list[Path], host_process: int
) -> None:
    chroot = host.outside / "chroot"
    for kind in ("proc", "sysfs"):
        point = chroot / ("proc" if kind == "proc" else "sys")
        _mount(kind, point)
        mounted.append(point)
    cmdline = chroot / "proc" / str(host_process) / "cmdline"
    assert SECRET in cmdline.read_text()  # (the host sees it there)
    done = host.corral(
        "run", "--", "sh", "-c",
        f"cat {cmdline} 2>&1; ls {chroot / 'proc'} | wc -l; ls {chroot / 'sys'} | wc -l",
    )  # fmt: skip
    assert SECRET not in done.stdout + done.stderr, done.stdout
    assert done.stdout.split()[-2:] == ["0", "0"], done.stdout + done.stderr
    # the read tool (on the host, the sandbox on or off) refuses it, by its filesystem
    for mode in ("read-only", "off"):
        said = _tool_read(host, host.ws, cmdline, mode)
        assert "on a proc filesystem mounted outside /proc" in said, said
        assert SECRET not in said, said


def test_a_mount_order_that_hides_a_mount_fools_no_file_tool(
    host: Host, mounted: list[Path], host_process: int
) -> None:
    """r82c SHADOWMOUNT: a tmpfs at x/<pid>, then a procfs over x: the longest mount point
    a path lies below was the tmpfs, hidden, and the read tool read the host process's
    environment; judged by what statfs says the path reaches."""
    over = host.outside / "over"
    _mount("tmpfs", over / str(host_process))
    mounted.append(over / str(host_process))
    _mount("proc", over)
    mounted.append(over)
    said = _tool_read(host, host.ws, over / str(host_process) / "cmdline", "off")
    assert "on a proc filesystem" in said and SECRET not in said, said


def test_one_file_of_a_kernel_filesystem_bound_elsewhere_is_masked(
    host: Host, mounted: list[Path]
) -> None:
    """r82c KERNELFILEMOUNT: a tmpfs was asked for on a file, and every run failed."""
    point = host.outside / "cmdline"
    point.write_text("")
    done = subprocess.run(["mount", "--bind", "/proc/cmdline", str(point)], check=False)
    if done.returncode != 0:
        pytest.skip("cannot bind-mount here")
    mounted.append(point)
    ran = host.corral("run", "--", "sh", "-c", f"cat {point} 2>/dev/null; echo ran")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "ran\n", ran.stdout  # (started, and nothing of the kernel's read)


def test_a_proc_in_the_workspace_is_masked_or_refused(host: Host, mounted: list[Path]) -> None:
    """A rootfs built in the project, its proc mounted: with direct writes the sandbox's
    root could write kernel settings there (kernel.core_pattern); a change set's overlay
    cannot hold it, and says so."""
    point = host.ws / "rootfs" / "proc"
    _mount("proc", point)
    mounted.append(point)
    done = host.corral("run", *DIRECT, "--", "sh", "-c",
                       "ls rootfs/proc | wc -l; test -w rootfs/proc/sys/kernel/hostname"
                       " && echo writable || echo not-writable")  # fmt: skip
    assert done.stdout.split() == ["0", "not-writable"], done.stdout + done.stderr
    refused = host.corral("run", "--", "true")
    assert refused.returncode != 0
    assert f"{point} is a kernel filesystem mounted inside the writable root" in (refused.stderr), (
        refused.stderr
    )
    assert f"umount {point}" in refused.stderr


@pytest.fixture
def private_place() -> Iterator[Path]:
    """A directory only the test's corral user may enter, in /srv (walked for private
    files), removed after."""
    if os.geteuid() != 0 or not os.path.isdir("/srv"):
        pytest.skip("needs root to make a directory in /srv")
    place = Path("/srv") / f"corral-test-{uuid.uuid4().hex[:12]}"
    place.mkdir(mode=0o700)
    try:
        yield place
    finally:
        shutil.rmtree(place, ignore_errors=True)


def test_a_read_only_workspace_in_a_private_directory_shows_its_files(
    host: Host, private_place: Path
) -> None:
    """r82c ROPRIVMODE: its own files private by their modes (umask 077) were hidden too;
    PRIVLINKS: a link beside it (a deploy's `current -> releases`) was masked, and bwrap,
    following it, failed every run."""
    ws = private_place / "ws"
    (ws / "sub").mkdir(parents=True, mode=0o700)
    (ws / "README.md").write_text("own words\n")
    (ws / "sub" / "a.txt").write_text("deeper words\n")
    (private_place / "sib").mkdir()
    (private_place / "sib" / "beside.txt").write_text("a private sibling\n")
    (private_place / "releases").mkdir()
    (private_place / "current").symlink_to(private_place / "releases")
    (private_place / "tohost").symlink_to("/etc/hostname")
    made = [private_place, ws, ws / "sub", ws / "README.md", ws / "sub" / "a.txt",
            private_place / "sib", private_place / "sib" / "beside.txt",
            private_place / "releases"]  # fmt: skip
    for path in made[3:]:
        path.chmod(0o600 if path.is_file() else 0o700)
    if user_prefix():
        for path in made:
            os.chown(path, NOBODY, NOBODY)
    for mode in ("read-only", "workspace-write"):
        done = host.corral(
            "run", "--mode", mode, "--", "sh", "-c",
            f"cat README.md sub/a.txt; cat {private_place / 'sib' / 'beside.txt'}", cwd=ws,
        )  # fmt: skip
        assert "own words\ndeeper words" in done.stdout, (mode, done.stdout + done.stderr)
        assert "a private sibling" not in done.stdout, done.stdout
        # (told in the walk's words, not the home's, r82c AREAWORDS2)
        assert "system file only you may read" in done.stderr, done.stderr
        assert "home_allow" not in done.stderr, done.stderr


def test_the_file_tools_name_a_private_directory_holding_the_workspace(
    host: Host, private_place: Path
) -> None:
    """r81c AREAWORDS: a path there was refused as "in your home directory", with a
    home_allow hint that could not help."""
    ws = private_place / "ws"
    ws.mkdir()
    beside = private_place / "beside.txt"
    beside.write_text("a private sibling\n")
    if user_prefix():
        for path in (private_place, ws, beside):
            os.chown(path, NOBODY, NOBODY)
    private_place.chmod(0o300)  # (entered, never listed: hidden as an area around ws)
    said = _tool_read(host, ws, beside, "read-only")
    assert "system files only you may read" in said, said
    assert "home_allow" not in said and "home directory" not in said, said


def test_a_kernel_mount_this_user_cannot_reach_stops_no_run(
    host: Host, mounted: list[Path]
) -> None:
    """r83c KERNELUNREACH (a proc in root's 0700 directory: every other user's run failed,
    bwrap could not make the mask) and SHADOWMASK (one a later mount over its parent hid:
    the mask was asked for where nothing is)."""
    closed = Path(tempfile.mkdtemp(prefix="corral-closed-", dir="/var/tmp"))  # (root's, 0700)
    mounted.append(closed)  # (not a mount: removed after the ones in it, see below)
    _mount("proc", closed / "chroot" / "proc")
    mounted.append(closed / "chroot" / "proc")
    hidden = host.outside / "a"
    _mount("proc", hidden / "b" / "proc")
    mounted.append(hidden / "b" / "proc")
    _mount("tmpfs", hidden)
    mounted.append(hidden)
    ran = host.corral("run", "--", "sh", "-c", "echo ran")
    assert ran.returncode == 0 and ran.stdout == "ran\n", ran.stderr


# An automount daemon's stand-in: mounts an autofs at argv[1] (this process the one whose
# lookups it never waits on), mounts a tmpfs at its key `u`, says so, and answers every
# other lookup "no such key" (autofs_v5_packet: its token at byte 8, the name's length at
# 40, the name at 44; AUTOFS_IOC_FAIL), writing the names asked for to argv[2].
AUTOMOUNTER = """
import fcntl, os, select, struct, subprocess, sys
point, canary = sys.argv[1], sys.argv[2]
os.setpgid(0, 0)
r, w = os.pipe()
options = f"fd={w},pgrp={os.getpgrp()},minproto=5,maxproto=5,indirect"
done = subprocess.run(["mount", "-t", "autofs", "-o", options, "autofs", point],
                      pass_fds=(w,), capture_output=True, text=True)
if done.returncode != 0:
    print("no autofs:", done.stderr.strip(), flush=True)
    sys.exit(0)
for key in ("u", "esp"):
    os.mkdir(os.path.join(point, key))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0777", "tmpfs", os.path.join(point, key)],
                   check=True)
with open(os.path.join(point, "esp", "seed"), "w") as f:
    f.write("CORRAL-SEED\\n")
os.chmod(os.path.join(point, "esp", "seed"), 0o600)
print("ready", flush=True)
while True:
    ready, _, _ = select.select([sys.stdin, r], [], [])
    if r in ready:
        packet = os.read(r, 304)
        token, = struct.unpack_from("I", packet, 8)
        size, = struct.unpack_from("I", packet, 40)
        with open(canary, "a") as f:
            f.write(packet[44:44 + size].decode() + "\\n")
        root = os.open(point, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.ioctl(root, 0x9361, token)
        os.close(root)
    if sys.stdin in ready and not sys.stdin.readline():
        break
"""


@pytest.fixture
def automount(host: Host) -> Iterator[tuple[Path, Path]]:
    """(an automount point, the file naming each key looked up there), with a filesystem
    mounted at its key `u`, as an automounted /home is."""
    point, canary = host.outside / "auto", host.base / "LOOKED-UP"
    point.mkdir()
    daemon = subprocess.Popen(
        [sys.executable, "-c", AUTOMOUNTER, str(point), str(canary)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert daemon.stdout is not None and daemon.stdin is not None
    said = daemon.stdout.readline()
    try:
        if said != "ready\n":
            pytest.skip(f"cannot mount an autofs here: {said.strip()}")
        yield point, canary
    finally:
        for inner in (point / "u", point / "esp", point):
            subprocess.run(["umount", "-l", str(inner)], capture_output=True, check=False)
        daemon.stdin.close()
        daemon.wait(timeout=10)


def test_a_workspace_on_an_automounted_home_runs(host: Host, automount: tuple[Path, Path]) -> None:
    """r83c AUTOMOUNTWS: the automount point is masked (r85c AUTOMOUNTRW: a lookup in the
    sandbox's copy of it had the host mount into it, read-write), and every run of a
    workspace on an automounted /home failed; what the host mounted there is bound back,
    only where it holds the workspace (r87b AUTOMOUNTPRIV: an automounted /boot's root-only
    seed was shown, to the sandbox and the read tool)."""
    point, canary = automount
    ws = point / "u" / "app"
    ws.mkdir()
    (ws / "kept.txt").write_text("kept\n")
    os.chown(ws, NOBODY, NOBODY)  # (as nobody; give_to_test_user stays on its filesystem)
    done = host.corral(
        "run", "--", "sh", "-c",
        f"echo new > made.txt; cat kept.txt; ls {point}; ls {point}/elsewhere 2>&1;"
        f" touch {point}/u/outside 2>&1; cat {point}/esp/seed 2>&1; true",
        cwd=ws,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (ws / "made.txt").read_text() == "new\n", done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["kept", "u"], done.stdout
    assert "No such file" in lines[2] and "Read-only" in lines[3], done.stdout
    assert not (point / "u" / "outside").exists()
    # (the sandbox's lookup never reached the automounter; corral's own, on the host, do)
    assert "elsewhere" not in (canary.read_text() if canary.exists() else ""), done.stdout
    assert "CORRAL-SEED" not in done.stdout, done.stdout
    said = _tool_read(host, ws, point / "esp" / "seed", "workspace-write")
    assert "below the automount point" in said and "CORRAL-SEED" not in said, said


def test_a_filesystem_the_host_mounts_during_a_run_stays_out(
    host: Host, mounted: list[Path]
) -> None:
    """r82c LATEMOUNT: bwrap makes the sandbox's mounts slaves of the host's, and a
    filesystem the host mounted while a command ran (a USB stick, an automounted share)
    appeared in the sandbox as the host made it, writable where the host's is. A launcher
    makes them private before the command starts."""
    shared = host.outside / "shared"
    (shared / "late").mkdir(parents=True)
    for step in (["--bind", str(shared), str(shared)], ["--make-shared", str(shared)]):
        done = subprocess.run(["mount", *step], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            pytest.skip(f"cannot make a shared mount here: {done.stderr.strip()}")
        if step[0] == "--bind":
            mounted.append(shared)
    go = host.base / "go"
    script = (
        f"echo started; i=0; while [ ! -e {go} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1));"
        f" done; ls {shared / 'late'}; touch {shared / 'late' / 'written'} 2>/dev/null;"
        " echo done"
    )
    give_to_test_user(host.base)
    run = subprocess.Popen(
        [*user_prefix(), sys.executable, "-m", "corral", "run", "--", "sh", "-c", script],
        cwd=str(host.ws), env=host.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert run.stdout is not None
    try:
        assert run.stdout.readline() == "started\n"
        _mount("tmpfs", shared / "late")
        mounted.append(shared / "late")
        (shared / "late" / "LATE").write_text("")
        os.chmod(shared / "late", 0o777)
        go.write_text("")
        out, err = run.communicate(timeout=60)
    finally:
        run.kill()
    assert out == "done\n", out + err  # (the late mount's LATE not listed)
    assert not (shared / "late" / "written").exists()


def test_the_loaders_variables_reach_only_the_command(host: Host) -> None:
    """r88b LAUNCHERENV: an LD_LIBRARY_PATH given in sandbox.policy.env reached the launcher
    that runs with two capabilities (a library planted there unmounted the masks over the
    credentials, as root) and the host's sh, bwrap and change-set check. LD_DEBUG shows
    which programs the loader read it in: only the command's."""
    config = host.base / "env.toml"
    config.write_text(
        f'[sandbox.policy]\nenv = ["LD_DEBUG=files", "LD_DEBUG_OUTPUT={host.ws}/ld"]\n'
    )
    give_to_test_user(host.base)
    done = host.corral("run", "--config", str(config), "--", "sh", "-c", "true")
    assert done.returncode == 0, done.stderr
    logs = [p.read_text() for p in host.ws.glob("ld.*")]
    started = {
        line.split("initialize program: ", 1)[1].split()[0].split("/")[-1]
        for text in logs for line in text.splitlines() if "initialize program: " in line
    }  # fmt: skip
    assert "sh" in started, logs  # (the command's own)
    assert not started & {"bwrap", "unshare", "setpriv", "python3", "python"}, started
