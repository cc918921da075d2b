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
    from corral.backends.base import Wrapped

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
            # (contextlib would cost an import here) the listdir descriptor is closed meanwhile
            try:  # noqa: SIM105
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


def launch(wrapped: Wrapped, timeout: float | None = None) -> int:
    """Run `wrapped` with stdin/stdout/stderr passed through; return the exit status."""
    _seal_descriptors(wrapped.fds)
    argv = list(wrapped.argv)
    env = dict(wrapped.env)
    # Unsandboxed commands get their own process group so a timeout can kill what they start;
    # bwrap's children die with it (--die-with-parent, and the pid namespace goes with its init).
    own_group = timeout is not None and not wrapped.sandboxed
    spawn = os.posix_spawn if os.path.isabs(argv[0]) else os.posix_spawnp
    try:
        if own_group:  # noqa: SIM108 - posix_spawn rejects setpgroup=None
            pid = spawn(argv[0], argv, env, setpgroup=0)
        else:
            pid = spawn(argv[0], argv, env)
    except OSError as e:
        raise SetupFailed(f"cannot start {argv[0]}: {e.strerror}") from None
    finally:
        for fd in wrapped.fds:
            os.close(fd)

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
        return 130
    timed_out = status is None
    if status is None:
        kill()
        status = os.waitpid(pid, 0)[1]
    elif own_group:
        kill()  # whatever the command left running in its group

    if wrapped.status_fd is not None:
        report = _read_all(wrapped.status_fd)
        os.close(wrapped.status_fd)
        if not timed_out and b'"child-pid"' not in report:
            code = os.waitstatus_to_exitcode(status)
            raise SetupFailed(
                f"the sandbox could not be set up ({wrapped.backend} exited with status {code} "
                "before starting the command; its message is above)"
            )
    if timed_out:
        return TIMED_OUT
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code
