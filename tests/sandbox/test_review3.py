"""A third outside review, after the second round of fixes: what it got past (N1-N7 on the
filesystem side, P1-P3 on processes), each attack run inside real bwrap and judged on the host.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from .conftest import give_to_test_user, user_prefix
from .sandbox_support import DONE, corral_run_on_a_terminal, q

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Host

pytestmark = pytest.mark.sandbox


def run(host: Host, body: str, *flags: str) -> str:
    done = host.sh(host.vars() + '\ncd "$WS"\n' + body, None, *flags)
    assert DONE in done.stdout, done.stdout + done.stderr
    return done.stderr


def test_a_protected_path_below_a_host_link_is_checked_where_the_write_lands(host: Host) -> None:
    # N1: `env` is a link to `envdir` (made by an earlier run, or the user's own); the .envrc
    # sources env/local.sh; the sandbox's write is recorded at envdir/local.sh.
    (host.ws / "envdir").mkdir()
    (host.ws / "env").symlink_to("envdir")
    (host.ws / ".envrc").write_text("source_env_if_exists env/local.sh\n")
    held = run(host, "echo 'touch /tmp/x' > env/local.sh")
    assert not (host.ws / "envdir" / "local.sh").exists(), "the sourced file reached the host"
    assert "held" in held, held


def test_what_an_envrc_puts_on_path_in_any_spelling_is_protected(host: Host) -> None:
    # N2 and N7: layouts, export PATH=$PWD/..., and commands after `then` / in `{ }`.
    (host.ws / ".envrc").write_text(
        "if has nvm; then use nvm; else source_env_if_exists .envrc.private; fi\n"
        'layout node\nexport PATH="$PWD/tools:$PATH"\n{ PATH_add scripts; }\n'
    )
    held = run(
        host,
        "mkdir -p node_modules/.bin tools scripts; for f in node_modules/.bin/ls tools/git "
        "scripts/make .envrc.private; do echo x > $f; done; echo ok > fine.txt",
    )  # (`use flake` holds every change set now: round 23)
    for name in ("node_modules/.bin/ls", "tools/git", "scripts/make", ".envrc.private"):
        assert not (host.ws / name).exists(), f"{name} reached the host"
    assert (host.ws / "fine.txt").read_text() == "ok\n"
    assert "held" in held


def test_an_envrc_corral_cannot_follow_is_named_in_status(host: Host) -> None:
    (host.ws / ".envrc").write_text("layout something-new\nsource_env $EXTRA/x\n")
    status = host.corral("status")
    assert "layout something-new" in status.stdout + status.stderr, status.stdout


def test_a_link_target_through_another_link_is_resolved_before_it_is_judged(host: Host) -> None:
    # N3: `ua -> /usr` passes; `key -> ua/../<home>/.ssh/...` is folded by normpath into the
    # workspace, but the host resolves it through /usr into the private home.
    secret = host.home / ".ssh" / "id_ed25519"
    rel = os.path.relpath(secret, "/")
    held = run(host, f"ln -s /usr ua; ln -s ua/../{q(rel)} key; ln -s ua/../proc/self/root pr")
    assert not os.path.lexists(host.ws / "key"), "a link into the private home reached the host"
    assert not os.path.lexists(host.ws / "pr")
    assert "held" in held


def test_a_writable_root_that_is_a_bare_repository_keeps_its_hooks(host: Host) -> None:
    # N4: the check looked for repositories below a root, never at the root itself.
    bare = host.work / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    held = run(
        host,
        f"cd {q(bare)} && printf '#!/bin/sh\\ntouch /tmp/x\\n' > hooks/post-receive && "
        "echo '[core]' >> config && echo x > description",
        "--allow-write", str(bare),
    )  # fmt: skip
    assert not (bare / "hooks" / "post-receive").exists(), "a hook reached the bare repository"
    assert "[core]\n[core]" not in (bare / "config").read_text()
    assert "held" in held, held


def test_a_held_change_set_is_checked_against_what_is_protected_now(host: Host) -> None:
    # N5: held for review, then the user writes an .envrc that sources the held file.
    held = run(host, "echo 'touch /tmp/x' > .envrc.local", "--writes", "review")
    assert "held" in held
    listed = host.corral("changes").stdout
    change_id = next(line.split(":")[0] for line in listed.splitlines() if ": held" in line)
    (host.ws / ".envrc").write_text("source_env_if_exists .envrc.local\n")
    shown = host.corral("changes", change_id).stdout
    assert ".envrc.local: refused" in shown, shown
    applied = host.corral("apply", change_id)
    assert applied.returncode == 0, applied.stderr
    assert not (host.ws / ".envrc.local").exists()


def test_undo_does_not_write_through_a_link_made_since(host: Host) -> None:
    # N6: a change set replaced a/b/job; a later direct-writes run made a/b a link elsewhere.
    (host.ws / "a" / "b").mkdir(parents=True)
    (host.ws / "a" / "b" / "job").write_text("the user's\n")
    host.git("add", "-A")
    host.git("commit", "-qm", "job")
    run(host, "echo changed > a/b/job")
    elsewhere = host.outside / "cron"
    elsewhere.mkdir()
    run(host, f"rm -r a/b && ln -s {q(elsewhere)} a/b", "--writes", "direct")
    undo = host.corral("undo")
    assert undo.returncode != 0
    assert "symlink now" in undo.stderr + undo.stdout
    assert list(elsewhere.iterdir()) == [], "undo restored a file through the link"


def test_a_host_file_given_as_stdin_cannot_be_written_through_proc(host: Host) -> None:
    # P1: /proc/self/fd/0 of a file opens the host's file again, outside every mount.
    notes = host.outside / "notes.txt"
    notes.write_text("the user's notes\n")
    give_to_test_user(host.base)
    with open(notes, "rb") as stdin:
        done = subprocess.run(
            [*user_prefix(), sys.executable, "-m", "corral", "run", "--", "sh", "-c",
             "cat; echo overwritten > /proc/self/fd/0; echo end"],
            cwd=str(host.ws), env=host.env, stdin=stdin, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
    assert "the user's notes" in done.stdout and "end" in done.stdout, done.stderr
    assert notes.read_text() == "the user's notes\n"


def test_dev_is_read_only_and_dev_shm_is_bounded(host: Host) -> None:
    # P2: bwrap's /dev is a tmpfs of no set size.
    config = host.base / "limits.toml"
    config.write_text("[sandbox.limits]\ntmp_percent = 1\n")
    body = "touch /dev/planted 2>/dev/null && echo DEV-WRITABLE\ndf -k /dev/shm | tail -1\n"
    done = host.corral("run", "--config", str(config), "--", "sh", "-c", body)
    assert "DEV-WRITABLE" not in done.stdout
    size_kb = int(done.stdout.split()[-5])
    total_kb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 1024
    assert size_kb <= total_kb // 100 + 1024, (size_kb, total_kb)


def test_a_sandbox_whose_first_thread_ended_still_counts_as_running(tmp_path: Path) -> None:
    # P3: pid 1's main thread called pthread_exit; another thread still writes. Its stat
    # says zombie, and the change set was read as if the sandbox were gone.
    from corral.changes import stage as stages

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


@pytest.mark.skipif(os.geteuid() != 0, reason="a fifo under /run: root's sandbox")
def test_a_root_sandbox_cannot_write_to_host_fifos_under_run(host: Host) -> None:
    # P4: a read-only mount does not stop opening a fifo for writing (/run/initctl).
    fifo = f"/run/corral-test-fifo-{os.getpid()}"
    os.mkfifo(fifo, 0o600)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        done = host.corral(
            "run", "--", "sh", "-c", f"echo CANARY > {fifo} 2>/dev/null; echo end", timeout=30
        )
        assert "end" in done.stdout, done.stderr
        try:
            got = os.read(reader, 100)
        except BlockingIOError:
            got = b""
        assert b"CANARY" not in got, "the sandbox wrote into a host fifo"
    finally:
        os.close(reader)
        os.unlink(fifo)


def test_the_terminal_is_left_as_it_was(host: Host) -> None:
    # P5: echo off, exclusive or non-blocking mode set by the command outlived it.
    import pty
    import termios

    main, secondary = pty.openpty()
    try:
        before = termios.tcgetattr(secondary)
        give_to_test_user(host.base)
        done = subprocess.run(
            [*user_prefix(), sys.executable, "-m", "corral", "run", "--",
             "sh", "-c", "stty -echo raw; echo end"],
            cwd=str(host.ws), env=host.env, stdin=secondary, stdout=secondary,
            stderr=subprocess.PIPE, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        after = termios.tcgetattr(secondary)
        assert after[3] & termios.ECHO, "echo stayed off"
        assert after == before
    finally:
        os.close(main)
        os.close(secondary)


def test_stopped_output_and_the_window_size_do_not_outlive_the_run(host: Host) -> None:
    # Fourth review, F9: the command stopped the terminal's output (TCOOFF) and resized it;
    # both stayed, and corral's own writes to the stopped terminal then blocked for good.
    import fcntl
    import pty
    import termios

    main, secondary = pty.openpty()
    try:
        size = fcntl.ioctl(secondary, termios.TIOCGWINSZ, b"\0" * 8)
        give_to_test_user(host.base)
        command = (
            "import fcntl, struct, termios; "
            "fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack('HHHH', 3, 7, 0, 0)); "
            "termios.tcflow(1, termios.TCOOFF)"
        )
        done = subprocess.run(
            [*user_prefix(), sys.executable, "-m", "corral", "run", "--",
             "/usr/bin/python3", "-c", command],
            cwd=str(host.ws), env=host.env, stdin=secondary, stdout=secondary,
            stderr=subprocess.PIPE, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert fcntl.ioctl(secondary, termios.TIOCGWINSZ, b"\0" * 8) == size
        os.set_blocking(secondary, False)
        assert os.write(secondary, b"still flowing\n") > 0  # BlockingIOError when stopped
    finally:
        os.close(main)
        os.close(secondary)


def test_a_link_on_the_way_to_a_protected_path_cannot_be_pointed_elsewhere(host: Host) -> None:
    # Final review, A2: `env -> envdir` is the user's; .envrc sources env/local.sh. The command
    # pointed `env` at a directory of its own holding a local.sh: every entry passed.
    (host.ws / "envdir").mkdir()
    (host.ws / "envdir" / "local.sh").write_text("export A=1\n")
    (host.ws / "env").symlink_to("envdir")
    (host.ws / ".envrc").write_text("source_env_if_exists env/local.sh\n")
    held = run(host, "mkdir evil && echo 'touch /tmp/x' > evil/local.sh && ln -sfn evil env")
    assert os.readlink(host.ws / "env") == "envdir", "the protected path's link was re-pointed"
    assert "held" in held and "/env" in held, held


def test_corral_run_explains_what_the_sandbox_refused_after_the_output(host: Host) -> None:
    # Issue 9: `corral run` left the user to guess from "Read-only file system". Its stderr
    # now goes through corral (a pty when it is a terminal: the command still sees one).
    done, seen = corral_run_on_a_terminal(
        host, "sh", "-c", "[ -t 2 ] && echo stderr-is-a-terminal; touch /etc/corral-x"
    )
    text = seen.decode(errors="replace")
    assert done.returncode != 0
    assert b"stderr-is-a-terminal" in done.stdout, (done.stdout, text)
    assert "Read-only file system" in text
    assert "corral: the sandbox refused a write outside the writable area" in text, text
    assert text.index("Read-only file system") < text.index("corral: the sandbox refused")
