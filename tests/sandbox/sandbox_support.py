"""Helpers shared by the real-sandbox tests: modes, host snapshots, process scans, shell quoting,
scripts run in the workspace, escape scripts and their reports.

Kept out of conftest.py so test modules can import the constants they parametrize over.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import stat
import subprocess
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Any

    from .conftest import Host

Snapshot = dict[str, tuple[object, ...]]

SANDBOXED = ("read-only", "workspace-write", "workspace-write-network")
WRITABLE = ("workspace-write", "workspace-write-network")
NO_NETWORK = ("read-only", "workspace-write")
ALL_MODES = (*SANDBOXED, "off")

# Printed by every in-sandbox script as its last act: a test whose script never ran (setup
# failure, missing tool) must fail instead of passing because nothing was written.
DONE = "CORRAL-SCRIPT-DONE"

# The shell prelude of escape scripts: `attempt NAME CMD...` runs CMD and reports the outcome.
# The outcome is informative only; the tests decide on what the host sees afterwards.
ATTEMPT = """
attempt() {
    name=$1; shift
    if "$@" >/dev/null 2>&1; then echo "ALLOWED $name"; else echo "refused $name"; fi
}
"""


def q(value: object) -> str:
    return shlex.quote(str(value))


def script(body: str) -> str:
    """A shell script: the attempt helper, `body`, then the DONE marker."""
    return f"{ATTEMPT}\n{body}\necho {DONE}\n"


def allowed(stdout: str) -> list[str]:
    return [line[len("ALLOWED ") :] for line in stdout.splitlines() if line.startswith("ALLOWED ")]


def snapshot(root: Path | str, exclude: Iterable[Path | str] = ()) -> Snapshot:
    """Every entry below `root` (symlinks not followed): type, mode, size, mtime and content hash.

    Directory mtimes are left out: added or removed entries show up by name.
    """
    root = str(root)
    skipped = {os.path.realpath(str(p)) for p in exclude}
    found: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in skipped]
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if path in skipped:
                continue
            st = os.lstat(path)
            rel = os.path.relpath(path, root)
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                found[rel] = ("dir", stat.S_IMODE(st.st_mode), st.st_ino)
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
                found[rel] = (
                    "file",
                    stat.S_IMODE(st.st_mode),
                    st.st_ino,
                    st.st_nlink,
                    st.st_size,
                    st.st_mtime_ns,
                    digest,
                )
            else:
                found[rel] = ("other", stat.S_IFMT(st.st_mode))
    return found


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """Human-readable differences between two snapshots (empty when identical)."""
    out = []
    for rel in sorted(before.keys() | after.keys()):
        if rel not in after:
            out.append(f"removed {rel}")
        elif rel not in before:
            out.append(f"created {rel} {after[rel][0]}")
        elif before[rel] != after[rel]:
            out.append(f"changed {rel}: {before[rel]} -> {after[rel]}")
    return out


def processes_with_argv(argv: Iterable[str]) -> list[int]:
    """Host pids whose command line is exactly `argv`."""
    want = ("\0".join(argv) + "\0").encode()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if f.read() == want:
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def survivors(argv: Iterable[str], grace: float = 2.0) -> list[int]:
    """Processes still matching `argv` after `grace` seconds (SIGKILL delivery is async)."""
    argv = tuple(argv)
    deadline = time.monotonic() + grace
    while True:
        pids = processes_with_argv(argv)
        if not pids or time.monotonic() >= deadline:
            return pids
        time.sleep(0.05)


def kill_all(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def run_wrapped(host: Host, script: str) -> subprocess.CompletedProcess[str]:
    """`sh -c SCRIPT` through the argv `corral wrap` prints, started as another program
    (jobstart) starts it: the check after it runs in the launcher, not in `corral run`."""
    import json

    from .conftest import give_to_test_user, user_prefix

    argv = json.loads(host.corral("wrap", "--", "sh", "-c", script).stdout)
    give_to_test_user(host.base)
    return subprocess.run(
        [*user_prefix(), *argv], cwd=str(host.ws), capture_output=True, text=True, timeout=60,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def corral_run_on_a_terminal(
    host: Host, *argv: str, stdout: int | None = None
) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """`corral run -- ARGV` with its stderr a pty (as on a terminal); (the run, every byte
    that reached the terminal)."""
    import pty
    import sys

    from .conftest import give_to_test_user, user_prefix

    main, secondary = pty.openpty()
    try:
        give_to_test_user(host.base)
        done = subprocess.run(
            [*user_prefix(), sys.executable, "-m", "corral", "run", "--", *argv],
            cwd=str(host.ws), env=host.env, stdout=subprocess.PIPE if stdout is None else stdout,
            stderr=secondary, timeout=60,
        )  # fmt: skip
        os.set_blocking(main, False)
        seen = b""
        try:
            while chunk := os.read(main, 65536):
                seen += chunk
        except (BlockingIOError, OSError):
            pass
    finally:
        os.close(main)
        os.close(secondary)
    return done, seen


def apply_a_venv_made_as_root(host: Host, stderr: str, venv_bin: Path) -> None:
    """As root a venv's links to its interpreter are held (root can write every interpreter,
    so a file that comes to lead there would rewrite it when saved), and with them the whole
    venv (r46c: applied without its links, `.venv/bin/pip` could not start): check it says
    so, and apply it as the message asks. Other users' venvs are applied as they are."""
    from .conftest import corral_runs_as_root

    if not corral_runs_as_root():
        assert "held" not in stderr, stderr
        return
    assert "a venv's link to" in stderr and "if you made this venv, apply it" in stderr, stderr
    # (the hint names the venv, not its 1,600 paths: r48c U8)
    assert "apply: corral apply" in stderr and f" {venv_bin.parent};" in stderr, stderr
    assert not (venv_bin / "activate").exists()  # (nothing of it until it is whole)
    out = host.corral("changes").stdout
    assert "held with the rest of the venv" in out, out
    held = [ln.split(":")[0] for ln in out.splitlines() if ": held" in ln and ln[0] != " "]
    for change_id in held:
        applied = host.corral("apply", change_id, str(venv_bin.parent))
        assert applied.returncode == 0, applied.stderr
    assert (venv_bin / "activate").exists()


def ignore_less(host: Host) -> None:
    """The standard repository ignores .venv/ and build/ (conftest), and what git ignores is
    held by a rule of its own (test_git_ignored): a test of another rule whose paths lie
    there has git ignore only Python's bytecode."""
    (host.ws / ".gitignore").write_text("__pycache__/\n")
    host.git("commit", "-q", "-m", "ignore less", ".gitignore")


def apply_what_git_ignores(host: Host, stderr: str, *names: str) -> None:
    """What git ignores is held (sandbox.ignored_files), named as the directories git ignores:
    check the apply hint names `names`, and apply them as a user who knows their command
    made them does."""
    assert "what git ignores" in stderr, stderr
    hint = stderr.split("(apply: corral apply ", 1)[1].split(";", 1)[0].split()
    paths = [str(host.ws / name) for name in names]
    assert set(paths) <= set(hint[1:]), (paths, hint)
    out = host.corral("changes").stdout
    for change_id in [
        ln.split(":")[0] for ln in out.splitlines() if ": held" in ln and ln[0] != " "
    ]:
        applied = host.corral("apply", change_id, *paths)
        assert applied.returncode == 0, applied.stderr


# The post-run sweep of direct writes (sandbox.writes = "direct", and the fallback where no
# overlay works): change sets replace it by default; test_change_sets.py covers those.
DIRECT = ("--writes", "direct")

RUN_UNSANDBOXED = "running UNSANDBOXED"


def run(host: Host, body: str, *flags: str) -> str:
    """`body` under sh in the sandbox, from the workspace, with change sets on (the default)
    unless `flags` say otherwise; the script must run to its end. Returns corral's stderr:
    what was held, and why."""
    done = host.sh(host.vars() + '\ncd "$WS"\n' + body, None, *flags)
    assert DONE in done.stdout, done.stdout + done.stderr
    return done.stderr


def pwned_prelude(host: Host, cwd: Path | str | None = None) -> tuple[str, str]:
    """(PWNED path, script prelude): layout variables, PWNED, an executable payload, `cd`.

    PWNED lives in the layout's base directory, which no sandbox can write: it can only appear
    when the host itself runs a planted payload."""
    pwned = host.base / "PWNED"
    evil = f"#!/bin/sh\ntouch {pwned}\n"
    prelude = (
        f"{host.vars()}\nPWNED={q(pwned)}\nEVIL=$(printf {q(evil)})\n"
        'hook() { printf "%s\\n" "$EVIL" > "$1" && chmod +x "$1"; }\n'
        f"cd {q(cwd or host.ws)}\n"
    )
    return str(pwned), prelude


def script_report(r: subprocess.CompletedProcess[str]) -> str:
    """Check that an escape script ran to its end; returns what to add to a failed assertion
    (the attempts the sandbox allowed, and stderr)."""
    assert DONE in r.stdout, f"the script did not run to its end:\n{r.stdout}\n{r.stderr}"
    return f"\nattempts the sandbox allowed: {allowed(r.stdout)}\nstderr: {r.stderr}"


def assert_sandboxed(host: Host, *flags: str, mode: str | None = None, **kwargs: Any) -> None:
    """A run that tries to change a file outside every writable root: must be refused."""
    victim = host.outside / "victim.txt"
    before = victim.read_bytes()
    r = host.sh(f"attempt outside sh -c 'echo changed > {q(victim)}'", mode, *flags, **kwargs)
    report = script_report(r)
    assert victim.read_bytes() == before, "a later run was not sandboxed" + report
    assert "outside" not in allowed(r.stdout), report
    assert RUN_UNSANDBOXED not in r.stderr, report
