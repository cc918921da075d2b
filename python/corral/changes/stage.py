"""Staging areas: where one command's change set lives from its start until it is applied.

`<state>/changes/<id>/` holds `plan.marshal` (what the check needs, decided when the command was
wrapped: the roots, the protected paths, the limits), an upper and a work directory per
writable root (`u0`, `w0`, ...), and once the command has ended `report.json`. A staging area
that still holds changes after the command is a *held* change set: refused paths, review mode,
or a command that never finished. The state directory is hidden from every sandboxed command.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import time

from corral import dirs
from corral.changes import words
from corral.paths import is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    from corral.sandbox.policy import Policy

PLAN = "plan.marshal"  # marshal, not json: json and re cost `corral run` ~10 ms to import
REPORT = "report.json"
OWNER = "pid"  # written by whoever runs the command: "PID" (the launcher) or "PID START"
DONE = "done"  # written by the launcher when the change set was empty: nothing to check
SANDBOX = "sandbox"  # bwrap's --info-fd: the sandbox's pid 1 and pid namespace, seen from here
SANDBOX_FD = 4  # the descriptor the launcher script opens on it
GONE_WAIT = 5.0  # seconds a killed sandbox gets to finish dying before its changes are read
PLAN_VERSION = 2
NEVER_STARTED_AFTER = 3600.0  # seconds: a wrapped argv nobody ran (corral wrap, say)


def root_dir() -> str:
    # Resolved: the staging area is named to bwrap, and a $HOME reached through a symlink
    # (/home -> /var/home) does not exist as such inside the sandbox's new root; its overlay
    # could not be mounted, and every run fell back to direct writes.
    return os.path.join(os.path.realpath(dirs.user_state_dir()), "changes")


def journal_dir() -> str:
    return os.path.join(os.path.realpath(dirs.user_state_dir()), "journal")


def lock_path() -> str:
    return os.path.join(root_dir(), ".lock")


def upper(stage: str, index: int) -> str:
    return os.path.join(stage, f"u{index}")


def work(stage: str, index: int) -> str:
    return os.path.join(stage, f"w{index}")


def protected_paths(policy: Policy) -> list[str]:
    """Every absolute path the check refuses to change, create or delete: what direct writes
    kept read-only, made read-only, watched or restored, and corral's own state."""
    found = {
        *policy.read_only,
        *policy.create_dirs,
        *policy.watch,
        *(link for link, _ in policy.links),
        *policy.never_writable,
        *(path for path, _ in policy.deny_read),
        os.path.realpath(dirs.user_state_dir()),
    }
    return sorted(found)


def protection(policy: Policy) -> dict[str, Any]:
    """What the check refuses under `policy`: a plan's part that finish.read can also take
    as it is now (see there)."""
    writable_home = any(is_within(policy.home, r) for r in policy.rw_roots)
    return {
        "protected": protected_paths(policy),
        "protected_names": list(policy.protected_names),
        "chat_patterns": list(policy.chat_patterns),
        "home_dot": policy.home if writable_home and policy.home != "/" else "",
        "module_dirs": list(policy.module_dirs),
        "protected_why": dict(policy.protected_why),
    }


def create(policy: Policy, made_by: Sequence[str] = ()) -> str:
    """A new staging area for one run of a command under `policy`; returns its path.
    `made_by`: the command's argv (or the file tool's call, one word), shown with the
    change set."""
    base = root_dir()
    os.makedirs(base, mode=0o700, exist_ok=True)
    collect_garbage(base)
    name = f"{time.time_ns():x}-{os.urandom(4).hex()}"
    stage = os.path.join(base, name)
    os.mkdir(stage, 0o700)
    indexes = {}
    for i, root in enumerate(policy.rw_roots):
        os.mkdir(upper(stage, i), 0o755)
        os.mkdir(work(stage, i), 0o700)
        # The git index as the command starts from it, kept by a second name (git replaces
        # its index by rename, never in place): a `git status` on the host rewrites it with
        # the same entries, which is no change of yours (r58c INDEXSTALE: held history's
        # index was kept as "changed on the host", and the applied HEAD showed a revert)
        index = os.path.join(root, ".git", "index")
        with contextlib.suppress(OSError):  # (none, or another file system: by its times)
            os.link(index, os.path.join(stage, f"index{i}"), follow_symlinks=False)
            indexes[index] = os.path.join(stage, f"index{i}")
    plan = {
        "version": PLAN_VERSION,
        "id": name,
        "created_ns": time.time_ns(),
        "made_by": [str(word)[:200] for word in made_by[:20]],
        "cwd": policy.cwd,
        # (the PATH programs are looked up on where the command was started: a program in
        # node_modules/.bin named as one of them is held, see rules._system_program)
        "host_path": os.environ.get("PATH", ""),
        "host_home": os.path.expanduser("~"),
        "writes": policy.writes,
        "roots": list(policy.rw_roots),
        **protection(policy),
        "hidden": list(policy.hidden),
        "visible": list(policy.visible),
        "max_file_bytes": dict(policy.rlimits).get("fsize", 0),
        "undo_bytes": policy.undo_bytes,
        "unreadable": list(policy.unreadable),
        "unreadable_configs": policy.unreadable_configs,
        "new_modules": policy.new_modules,
        "project_configs": policy.project_configs,
        "git_history": policy.git_history,
        "ignored_files": policy.ignored_files,
        "indexes": indexes,
        "frontend": words.frontend(),  # how the check after the run names commands
    }
    tmp = os.path.join(stage, PLAN + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        marshal.dump(plan, f)
    os.replace(tmp, os.path.join(stage, PLAN))
    return stage


def read_plan(stage: str) -> dict[str, Any]:
    """The plan `create` wrote (the state directory is hidden from every sandbox: marshal
    reads only what corral wrote)."""
    with open(os.path.join(stage, PLAN), "rb") as f:
        plan: dict[str, Any] = marshal.load(f)
    if plan.get("version") != PLAN_VERSION:
        raise ValueError(f"change set {os.path.basename(stage)} was made by another corral version")
    return plan


def _write_json(path: str, value: object) -> None:
    import json  # reports only: a run whose change set is empty never needs it

    tmp = f"{path}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(value))  # dumps: the C encoder (dump iterates in Python)
    os.replace(tmp, path)


def read_json(path: str) -> Any:
    import json

    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_report(stage: str, report: dict[str, Any]) -> None:
    _write_json(os.path.join(stage, REPORT), report)


def mark_owner(stage: str) -> None:
    """Record this process as the one running the command (see `alive`)."""
    # (whole or not at all: another run's clean-up read an owner file just created, empty,
    # took the run for dead and removed its staging area, r48c U5)
    tmp = os.path.join(stage, f".{OWNER}.{os.getpid()}")
    with open(tmp, "w", encoding="ascii") as f:
        f.write(f"{os.getpid()} {_start_time(os.getpid())}")
    os.replace(tmp, os.path.join(stage, OWNER))


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def alive(stage: str) -> bool:
    """Whether the process that runs this stage's command, or its sandbox, may still be
    running."""
    if sandbox_alive(stage):
        return True
    try:
        with open(os.path.join(stage, OWNER), encoding="ascii") as f:
            words = f.read().split()
    except OSError:
        try:  # not started yet, or never will be (an argv printed by `corral wrap`)
            return time.time() - os.stat(stage).st_mtime < NEVER_STARTED_AFTER
        except OSError:
            return False
    if not words or not words[0].isdigit():
        try:  # (being written by a launcher that writes it in place: young means alive)
            return time.time() - os.stat(stage).st_mtime < GONE_WAIT
        except OSError:
            return False
    pid = int(words[0])
    if len(words) > 1:
        return _start_time(pid) == words[1]
    try:  # the launcher script: its command line names the stage
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return os.fsencode(stage) in f.read().split(b"\0")
    except OSError:
        return False


def open_sandbox_record(stage: str) -> int:
    """A new descriptor (not inherited) on the stage's record of its sandbox (SANDBOX), made
    here and now: never an existing file, nor through a link."""
    return os.open(
        os.path.join(stage, SANDBOX),
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o600,
    )


def sandbox_alive(stage: str) -> bool:
    """Whether a process of this stage's sandbox may still run. Its pid 1 is the command
    (bwrap --as-pid-1): while that process lives in the recorded pid namespace, it or what it
    started could still write through the overlay into the upper directories; once it is
    gone, the kernel has killed everything else in the namespace. Independent of the
    launcher: a launcher killed alone leaves bwrap and its command running."""
    try:
        with open(os.path.join(stage, SANDBOX), encoding="utf-8") as f:
            info = f.read()
        pid, namespace = info_number(info, "child-pid"), info_number(info, "pid-namespace")
    except (OSError, ValueError):
        return False  # bwrap never got as far as starting the sandbox
    try:
        if os.readlink(f"/proc/{pid}/ns/pid") != f"pid:[{namespace}]":
            return False  # the pid was reused
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:
        return os.path.exists(f"/proc/{pid}")  # cannot tell: alive, as long as the pid is
    if state not in (b"Z", b"X"):
        return True
    # A zombie pid 1 has taken the rest of its namespace with it, unless only its main thread
    # ended (pthread_exit) and other threads of it still run.
    try:
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


INTERRUPTED = "interrupted"  # written when the editor stops a run: its writes are held


def mark_interrupted(stage: str) -> None:
    """Say in the staging area that its command was stopped before it ended (cancelled, or
    timed out in the editor): the check after it holds the change set whole, as `corral run`
    does for Ctrl-C (r54c CANCELAPPLIED: the editor's were applied)."""
    own = os.path.join(root_dir(), os.path.basename(stage))  # (corral's own, nowhere else)
    try:
        os.close(os.open(os.path.join(own, INTERRUPTED), os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError:
        pass


def stop_sandbox(stage: str) -> bool:
    """Kill what is left of the stage's sandbox once its launcher is gone (stopped by the
    editor, or the editor quitting): SIGKILL to its pid 1, from which the kernel kills the rest
    of the namespace. bwrap may outlive a launcher killed alone, and with it the command; a
    run that is over must leave no process behind. True when something was killed."""
    if not sandbox_alive(stage):
        return False
    try:
        with open(os.path.join(stage, SANDBOX), encoding="utf-8") as f:
            pid = info_number(f.read(), "child-pid")
        os.kill(pid, 9)  # (sandbox_alive checked it is still the sandbox's pid 1)
    except (OSError, ValueError):
        return False
    return True


def info_number(info: str, key: str) -> int:
    """The number after "key": in bwrap's info JSON (its own fixed output: no json import)."""
    at = info.index(f'"{key}"') + len(key) + 2
    return int(info[at:].lstrip(" \t\n:").split(",", 1)[0].split("}", 1)[0].strip())


def direct_writers(roots: list[str]) -> list[int]:
    """The bwrap processes (this user's, as /proc shows them) that bind one of `roots`, or a
    directory above or below one, writable as it is: a command with direct writes. While
    one runs, it can swap a directory of the workspace for a link between corral's check of
    a path and the rename that puts a file there."""
    from corral.paths import is_within

    found: list[int] = []
    try:
        ours = os.readlink("/proc/self/ns/user")
    except OSError:
        ours = ""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            # bwrap itself runs in ours; a sandboxed process calling itself bwrap does not
            if ours and os.readlink(f"/proc/{name}/ns/user") != ours:
                continue
        except OSError:
            continue
        if not argv or os.path.basename(argv[0]) != b"bwrap":
            continue
        words = [w.decode("utf-8", "surrogateescape") for w in argv]
        for i, word in enumerate(words[:-2]):
            if word in ("--bind", "--bind-try") and words[i + 1] == words[i + 2]:
                bound = words[i + 1]
                if any(is_within(bound, r) or is_within(r, bound) for r in roots):
                    found.append(int(name))
                    break
    return found


def wait_sandbox_gone(stage: str, seconds: float | None = None) -> None:
    """Return once no process of the stage's sandbox runs; raise when one still does after
    `seconds`. Reading a change set while its command can still write would check one
    tree and apply another."""
    from corral.errors import CorralError

    deadline = time.monotonic() + (GONE_WAIT if seconds is None else seconds)
    while sandbox_alive(stage):
        if time.monotonic() >= deadline:
            raise CorralError(
                f"the sandboxed command of change set {os.path.basename(stage)} is still "
                "running: its changes are read once it has ended"
            )
        time.sleep(0.02)


def is_empty(stage: str) -> bool:
    for name in os.listdir(stage):
        if name.startswith("u") and name[1:].isdigit() and os.listdir(os.path.join(stage, name)):
            return False
    return True


def remove(stage: str) -> None:
    """Delete a staging area (whatever its depth; see tree.remove)."""
    from corral.changes import tree

    tree.remove(stage)


def held(base: str | None = None) -> Iterator[str]:
    """Staging areas whose command has ended and whose changes were not (all) applied."""
    base = base or root_dir()
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return
    for name in names:
        stage = os.path.join(base, name)
        if name.startswith(".") or not os.path.isdir(stage):
            continue
        if os.path.exists(os.path.join(stage, REPORT)):
            yield stage


def collect_garbage(base: str) -> None:
    """Remove staging areas that ended empty; hold those whose command was interrupted (its
    changes are kept for review, never applied unasked)."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        stage = os.path.join(base, name)
        if name.startswith(".") or os.path.exists(os.path.join(stage, REPORT)):
            continue
        try:
            if os.path.exists(os.path.join(stage, DONE)) or (not alive(stage) and is_empty(stage)):
                remove(stage)
            elif not alive(stage):
                write_report(stage, interrupted_report(stage))
        except OSError:
            continue


INTERRUPTED_WHY = "the command did not finish"


def interrupted_report(stage: str) -> dict[str, Any]:
    try:  # (in the words of the frontend that ran it: the editor's user was told
        # `corral changes ID`, and the model read it as a command of its own, r74c
        # CANCELWORDS)
        frontend = read_plan(stage).get("frontend", "cli")
    except (OSError, ValueError, EOFError, TypeError):
        frontend = "cli"
    return {
        "frontend": frontend,
        "id": os.path.basename(stage),
        "status": "held",
        "why": f"{INTERRUPTED_WHY} (stopped, killed or timed out): its changes are held, not "
        "applied",
        "applied": [],
        "held": [],
    }
