"""Start a wrapped command, wait for it, and kill its whole tree on timeout.

posix_spawn and a pidfd instead of `subprocess`: importing subprocess costs more than the rest
of a `corral run`. Every descriptor above 2 is made non-inheritable first, except the ones the
backend asked to pass (bwrap's status pipe, the seccomp program).

Exit status: the command's own; 124 when the timeout killed it; 125 when the sandbox could not
be set up; 128+N when a signal N ended it.
"""

from __future__ import annotations

import os
import select

from corral.errors import CorralError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from corral.sandbox.backends.base import Wrapped

TIMED_OUT = 124
SETUP_FAILED = 125
SIGKILL = 9  # the `signal` module would import `enum` (~7 ms) for one constant


class SetupFailed(CorralError):
    """The sandbox could not start the command; bwrap's own message went to stderr."""


def _seal_descriptors(keep: tuple[int, ...]) -> None:
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd > 2 and fd not in keep:
            try:  # the listdir descriptor is closed meanwhile
                os.set_inheritable(fd, False)
            except OSError:
                pass


def _wait(pid: int, timeout: float | None) -> int | None:
    """The wait status, or None when `timeout` passed first."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = -1
    try:
        if pidfd >= 0:
            ready, _, _ = select.select([pidfd], [], [], timeout)
            if not ready:
                return None
            return os.waitpid(pid, 0)[1]
        # Kernels before 5.3 have no pidfd: poll.
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(0.005)
    finally:
        if pidfd >= 0:
            os.close(pidfd)


PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    """Orphans of our descendants (`setsid cmd &`, double forks) are re-parented to us instead
    of to init, so a timeout can still find and kill them. Only unsandboxed runs need this:
    inside bwrap the pid namespace ends with its init."""
    import ctypes  # only here: a few ms

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        ppid = int(stat.rsplit(b")", 1)[1].split()[1])  # the name may contain spaces and ")"
        children.setdefault(ppid, []).append(int(name))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found


def _kill_tree() -> None:
    """Kill every descendant of this process, again until none is left (they may fork)."""
    for _ in range(100):
        pids = _descendants(os.getpid())
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


def _file_descriptors() -> list[int]:
    """Which of stdin, stdout and stderr are files or directories rather than pipes or
    terminals. A sandboxed command could open such a descriptor again through /proc/self/fd
    with other access (`corral run cmd < notes.txt`, then writing notes.txt): the host's file,
    outside every read-only mount."""
    import stat

    found = []
    for fd in (0, 1, 2):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISBLK(mode):
            found.append(fd)
    return found


TAIL = 65536  # how much of stderr is kept to tell what the sandbox refused


def _pump(source: int, sink: int, tail: bytearray | None = None) -> None:
    try:
        while chunk := os.read(source, 65536):
            if tail is not None:
                tail += chunk
                del tail[:-TAIL]
            view = memoryview(chunk)
            while view:
                view = view[os.write(sink, view) :]
    except OSError:
        pass  # (a pty's main side reads EIO once the command's side is closed)
    finally:
        os.close(source if sink in (1, 2) else sink)


def _stderr_tee(tail: bytearray) -> tuple[tuple[int, int, int], int, Any]:
    """The command's stderr through corral, which keeps its end (`tail`) to explain what the
    sandbox refused after it: a pty when stderr is a terminal (the command still sees one, and
    cannot reach the user's terminal settings through it), else a pipe. (file action, the
    command's end, the thread copying to the real stderr)."""
    import threading

    if os.isatty(2):
        import fcntl
        import termios

        main, side = os.openpty()
        try:
            attributes = termios.tcgetattr(2)
            attributes[1] &= ~termios.OPOST  # bytes pass as written; the real terminal
            termios.tcsetattr(side, termios.TCSANOW, attributes)  # does its own processing
            size = fcntl.ioctl(2, termios.TIOCGWINSZ, b"\0" * 8)
            fcntl.ioctl(side, termios.TIOCSWINSZ, size)
        except OSError:
            pass
    else:
        main, side = os.pipe()
    os.set_inheritable(side, False)
    thread = threading.Thread(target=_pump, args=(main, 2, tail), daemon=True)
    return (os.POSIX_SPAWN_DUP2, side, 2), side, thread


def _through_pipes(fds: list[int]) -> tuple[list[tuple[int, int, int]], list[int], list[Any]]:
    """For each descriptor in `fds`, a pipe the command gets instead, and a thread that copies
    between it and the file: (file actions for posix_spawn, the command's ends, threads)."""
    import threading

    actions, ends, threads = [], [], []
    for fd in fds:
        r, w = os.pipe()
        child, ours = (r, w) if fd == 0 else (w, r)
        actions.append((os.POSIX_SPAWN_DUP2, child, fd))
        ends.append(child)  # closed here once the command started
        source, sink = (fd, ours) if fd == 0 else (ours, fd)
        threads.append(threading.Thread(target=_pump, args=(source, sink), daemon=True))
    return actions, ends, threads


def _terminal_state() -> list[tuple[int, Any, int, bytes]]:
    """(descriptor, termios attributes, file status flags, window size) of each of stdin,
    stdout and stderr that is a terminal: a sandboxed command can turn echo off, make it
    exclusive or non-blocking, stop its output (TCOOFF), resize it, and that outlives it (see
    _restore_terminal)."""
    saved = []
    for fd in (0, 1, 2):
        if os.isatty(fd):
            import fcntl
            import termios

            try:
                size = fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8)
                saved.append((fd, termios.tcgetattr(fd), fcntl.fcntl(fd, fcntl.F_GETFL), size))
            except OSError:
                continue
    return saved


def _restore_terminal(saved: list[tuple[int, Any, int, bytes]]) -> None:
    if not saved:
        return
    import fcntl
    import termios

    for fd, attributes, flags, size in saved:
        try:
            termios.tcflow(fd, termios.TCOON)  # output stopped by the command: corral's own
            termios.tcsetattr(fd, termios.TCSANOW, attributes)  # writes would block for good
            fcntl.fcntl(fd, fcntl.F_SETFL, flags)
            fcntl.ioctl(fd, termios.TIOCNXCL)
            fcntl.ioctl(fd, termios.TIOCSWINSZ, size)
        except OSError:
            continue


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _open_network(wrapped: Wrapped, pid: int) -> Any:
    """corral's proxy for this run (see corral.net.run), or None; kills the sandbox and raises
    SetupFailed when the way into its network could not be made."""
    if wrapped.bridge is None:
        return None
    from corral.net.run import open_network

    try:
        return open_network(wrapped.bridge, wrapped.network, wrapped.stage)
    except (CorralError, OSError) as e:
        try:
            os.kill(pid, SIGKILL)  # bwrap; the sandbox dies with it (--die-with-parent)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        raise SetupFailed(f"corral's network proxy could not be set up: {e}") from None


def launch(
    wrapped: Wrapped,
    timeout: float | None = None,
    stderr_tail: bytearray | None = None,
    refused_hosts: list[str] | None = None,
) -> tuple[int, bool]:
    """Run `wrapped` with stdin/stdout/stderr passed through; return the exit status and
    whether the command was stopped before it ended (timeout, Ctrl-C). With `stderr_tail`, a
    sandboxed command's stderr goes through corral, and its end is kept there;
    `refused_hosts` gets what corral's proxy refused, a line each."""
    _seal_descriptors(wrapped.fds)
    argv = list(wrapped.argv)
    env = dict(wrapped.env)
    # Unsandboxed commands get their own process group so a timeout can kill what they start;
    # bwrap's children die with it (--die-with-parent, and the pid namespace goes with its init).
    own_group = timeout is not None and not wrapped.sandboxed
    if own_group:
        _become_subreaper()
    spawn = os.posix_spawn if os.path.isabs(argv[0]) else os.posix_spawnp
    files = _file_descriptors() if wrapped.sandboxed else []
    terminal = _terminal_state() if wrapped.sandboxed else []
    keep = stderr_tail is not None and wrapped.sandboxed
    actions, ends, pumps = _through_pipes([f for f in files if not (keep and f == 2)])
    if keep and stderr_tail is not None:
        action, end, pump = _stderr_tee(stderr_tail)
        actions.append(action)
        ends.append(end)
        pumps.append(pump)
    try:
        if own_group:  # posix_spawn rejects setpgroup=None: two calls
            pid = spawn(argv[0], argv, env, setpgroup=0, file_actions=actions)
        else:
            pid = spawn(argv[0], argv, env, file_actions=actions)
    except OSError as e:
        raise SetupFailed(f"cannot start {argv[0]}: {e.strerror}") from None
    finally:
        for fd in wrapped.fds:
            os.close(fd)
        for end in ends:
            os.close(end)
    for pump in pumps:
        pump.start()
    try:
        proxy = _open_network(wrapped, pid)
    except SetupFailed:
        for pump in pumps:
            pump.join(5.0)
        _restore_terminal(terminal)
        raise
    try:
        return _finish(wrapped, pid, timeout, own_group, terminal, pumps)
    finally:
        if proxy is not None:
            proxy.close()
            if refused_hosts is not None:
                refused_hosts += proxy.refused()


def _finish(
    wrapped: Wrapped,
    pid: int,
    timeout: float | None,
    own_group: bool,
    terminal: list[tuple[int, Any, int, bytes]],
    pumps: list[Any],
) -> tuple[int, bool]:
    """Wait for the started command (see launch)."""

    def kill() -> None:
        try:
            if own_group:
                os.killpg(pid, SIGKILL)
            else:
                os.kill(pid, SIGKILL)
        except ProcessLookupError:
            pass

    try:
        status = _wait(pid, timeout)
    except KeyboardInterrupt:
        kill()
        os.waitpid(pid, 0)
        if own_group:
            _kill_tree()
        _restore_terminal(terminal)
        return 130, True
    timed_out = status is None
    if status is None:
        kill()
        status = os.waitpid(pid, 0)[1]
    if own_group:
        # After reaping the command itself: _kill_tree reaps whatever it finds. With a
        # timeout, nothing the command started outlives it, even when it exits in time.
        kill()
        _kill_tree()

    for pump in pumps:
        pump.join(5.0)  # the command's output, copied to its file to the end
    _restore_terminal(terminal)
    if wrapped.status_fd is not None:
        report = _read_all(wrapped.status_fd)
        os.close(wrapped.status_fd)
        # bwrap reports "child-pid" before it sets up the mounts, and "exit-code" only once the
        # command itself ran and exited: without it, the set-up (or the exec) failed.
        if not timed_out and b'"exit-code"' not in report:
            code = os.waitstatus_to_exitcode(status)
            raise SetupFailed(
                f"the sandbox could not set up or start the command ({wrapped.backend} exited "
                f"with status {code}; its message is above)"
            )
    if timed_out:
        return TIMED_OUT, True
    code = os.waitstatus_to_exitcode(status)
    return (128 - code if code < 0 else code), False
