"""Writes outside the writable roots must not reach the host, however the path is spelled."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from .conftest import give_to_test_user, user_prefix
from .sandbox_support import (
    DONE,
    RUN_UNSANDBOXED,
    SANDBOXED,
    allowed,
    assert_sandboxed,
    changes,
    q,
    snapshot,
)

if TYPE_CHECKING:
    from .conftest import Host

pytestmark = pytest.mark.sandbox

# Each line: attempt NAME CMD... ; the host snapshot afterwards decides, the names help reading.
OUTSIDE_ATTEMPTS = r"""
w() { printf 'pwned\n' > "$1"; }
a() { printf 'pwned\n' >> "$1"; }
link_then_write() { ln -s "$1" "$2" && printf x > "$2/made-inside.txt"; }
hardlink_then_write() { ln "$1" "$2" && printf pwned >> "$2"; }
py_rename() { python3 -c 'import os, sys; os.rename(*sys.argv[1:])' "$@"; }
py_link() { python3 -c 'import os, sys; os.link(*sys.argv[1:])' "$@"; }
attempt plain-new           w "$OUT/plain-new.txt"
attempt plain-existing      w "$OUT/victim.txt"
attempt plain-append        a "$OUT/victim.txt"
attempt truncate            truncate -s 0 "$OUT/victim.txt"
attempt chmod               chmod 777 "$OUT/victim.txt"
attempt touch-mtime         touch -d 2001-01-01 "$OUT/victim.txt"
attempt rm                  rm -f "$OUT/hard.txt"
attempt mkdir               mkdir "$OUT/newdir"
attempt proc-self-root      w "/proc/self/root$OUT/procroot.txt"
attempt double-slash        w "/$OUT//slashes.txt"
attempt dot-segments        w "$OUT/./././dots.txt"
attempt symlink-dir         w "$WS/out-link/via-dir-link.txt"
attempt symlink-file        a "$WS/victim-link"
attempt symlink-sibling     w "$WS/app2-link/via-sibling-link.txt"
attempt symlink-dangling    w "$WS/dangling-link"
attempt symlink-made-inside link_then_write "$OUT" "$WS/made-link"
attempt hardlink            hardlink_then_write "$OUT/hard.txt" "$WS/hard-x"
attempt dotdot-relative     w ../app2/dotdot.txt
attempt dotdot-absolute     w "$WS/../outside-dotdot.txt"
attempt dotdot-deep         w "$WS/sub/../../ap/dotdot.txt"
attempt dotdot-outside      w "$WS/../../outside/dotdot.txt"
attempt prefix-app2         w "$WORK/app2/prefix.txt"
attempt prefix-ap           w "$WORK/ap/prefix.txt"
attempt prefix-file         a "$WORK/app.txt"
attempt prefix-new-dir      mkdir "$WORK/app3"
attempt prefix-new-file     w "$WORK/app-new.txt"
attempt mv-out              mv "$WS/movable.txt" "$OUT/moved.txt"
attempt rename-out          py_rename "$WS/movable.txt" "$OUT/renamed.txt"
attempt link-out            py_link "$WS/movable.txt" "$OUT/linked.txt"
attempt cp-out              cp "$WS/movable.txt" "$OUT/copied.txt"
attempt mv-workspace        mv "$WS" "$WORK/app-moved"
attempt rename-workspace    py_rename "$WS" "$WORK/app-renamed"
attempt home-bashrc         a "$H/.bashrc"
attempt home-nvim-init      a "$H/.config/nvim/init.lua"
attempt home-nvim-plugin    w "$H/.local/share/nvim/site/pack/p/start/plug/plugin/evil.lua"
attempt home-authorized     a "$H/.ssh/authorized_keys"
attempt home-new            w "$H/.profile"
attempt host-tmp            w "$HOST_TMP"
attempt dev-shm             w "/dev/shm/corral-$TAG"
"""

INSIDE_ATTEMPTS = r"""
attempt ws-new              w "$WS/new.txt"
attempt ws-modify           a "$WS/README.md"
attempt ws-truncate         truncate -s 0 "$WS/README.md"
attempt ws-rm               rm -f "$WS/README.md"
attempt ws-mv               mv "$WS/movable.txt" "$WS/moved-inside.txt"
attempt ws-mkdir            mkdir "$WS/newdir"
attempt ws-chmod            chmod 600 "$WS/README.md"
attempt ws-touch            touch -d 2001-01-01 "$WS/README.md"
attempt ws-git-commit       git commit -q --allow-empty -m sneaky
attempt ws-git-branch       git branch sneaky
"""


def _plant_links(host) -> None:
    ws = host.ws
    os.symlink(host.outside, ws / "out-link")
    os.symlink(host.outside / "victim.txt", ws / "victim-link")
    os.symlink("../app2", ws / "app2-link")
    os.symlink(host.outside / "dangling-target.txt", ws / "dangling-link")


@pytest.mark.parametrize("mode", SANDBOXED)
def test_writes_outside_the_writable_roots_do_not_reach_the_host(host, mode):
    _plant_links(host)
    host_tmp = f"/tmp/corral-escape-{host.tag}"
    read_only = mode == "read-only"
    # In read-only mode the workspace itself is part of what must not change.
    exclude = host.own if read_only else [*host.own, host.ws]
    before = snapshot(host.base, exclude)

    body = f"""
{host.vars()}
HOST_TMP={q(host_tmp)}
TAG={q(host.tag)}
cd "$WS"
{OUTSIDE_ATTEMPTS}
{INSIDE_ATTEMPTS if read_only else ""}
"""
    r = host.sh(body, mode)
    assert DONE in r.stdout, r.stdout + r.stderr
    assert r.returncode == 0, r.stderr

    after = snapshot(host.base, exclude)
    report = f"\nattempts the sandbox allowed: {allowed(r.stdout)}\nstderr: {r.stderr}"
    assert changes(before, after) == [], report
    assert not os.path.lexists(host_tmp), report
    assert not os.path.lexists(f"/dev/shm/corral-{host.tag}"), report
    # The workspace is still where it was, with its files.
    assert (host.ws / "movable.txt").read_text() == "stays in the workspace\n", report
    assert (host.ws / ".git").is_dir()


@pytest.mark.parametrize("mode", ["workspace-write", "workspace-write-network"])
def test_workspace_is_writable_in_write_modes(host, mode):
    """The other side of the escape tests: the same kind of write inside the workspace works,
    so a refusal above is the sandbox's doing, not a broken script."""
    r = host.sh(f"cd {q(host.ws)}\nprintf ok > inside.txt\nmkdir -p d/e && printf ok > d/e/f", mode)
    assert DONE in r.stdout, r.stdout + r.stderr
    assert (host.ws / "inside.txt").read_text() == "ok"
    assert (host.ws / "d" / "e" / "f").read_text() == "ok"


def test_allow_write_adds_exactly_that_root(host):
    """--allow-write opens the named directory and nothing beside it (no prefix match)."""
    extra = host.work / "app2"
    body = f"""
{host.vars()}
attempt allowed-root  sh -c 'printf ok > "$1"' _ "$WORK/app2/allowed.txt"
attempt prefix-ap     sh -c 'printf x > "$1"' _ "$WORK/ap/prefix.txt"
attempt prefix-app    sh -c 'printf x > "$1"' _ "$WORK/app.txt"
attempt outside       sh -c 'printf x > "$1"' _ "$OUT/allow-write.txt"
"""
    before = snapshot(host.base, [*host.own, host.ws, extra])
    r = host.sh(body, "workspace-write", "--allow-write", str(extra))
    assert DONE in r.stdout, r.stdout + r.stderr
    assert (extra / "allowed.txt").read_text() == "ok"
    after = snapshot(host.base, [*host.own, host.ws, extra])
    assert changes(before, after) == [], allowed(r.stdout)


def test_a_host_file_given_as_stdin_cannot_be_written_through_proc(host: Host) -> None:
    # Third review, P1: /proc/self/fd/0 of a file opens the host's file again, outside every mount.
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


@pytest.mark.skipif(os.geteuid() != 0, reason="a fifo under /run: root's sandbox")
def test_a_root_sandbox_cannot_write_to_host_fifos_under_run(host: Host) -> None:
    # Third review, P4: a read-only mount does not stop opening a fifo for writing (/run/initctl).
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


# Writable roots that would undo the sandbox's own mounts are refused.


@pytest.mark.parametrize(
    "flags",
    [
        ("--cwd", "/"),
        ("--allow-write", "/tmp"),
        ("--allow-write", "/run"),
        ("--allow-write", "/dev"),
        ("--allow-write", "/"),
    ],
    ids=lambda f: " ".join(f),
)
def test_writable_root_holding_a_system_mount_is_refused(host, flags):
    marker = host.base / "RAN"
    r = host.corral("run", *flags, "--", "touch", str(marker))
    assert r.returncode == 125, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("corral: "), r.stderr
    assert "sandbox.policy.rw_paths" in lines[0], r.stderr
    assert not os.path.lexists(marker), "the command ran"


def test_read_only_workspace_at_root_works(host):
    r = host.corral("run", "--mode", "read-only", "--cwd", "/", "--", "true", cwd="/")
    assert r.returncode == 0, r.stderr
    assert RUN_UNSANDBOXED not in r.stderr, r.stderr
    assert_sandboxed(host, "--cwd", "/", mode="read-only", cwd="/")
