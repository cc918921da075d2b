"""corral's proxy for commands another program starts: Neovim's jobs.

An argv handed to jobstart cannot carry descriptors, so its launcher opens two pipes of the
editor's Python host by path instead (see backends.bwrap LAUNCH_NET): bwrap writes the
sandbox's pid to one (--info-fd) and waits on the other (--block-fd). The path is
`/proc/<this process>/fd/<n>`: no sandbox can open it (each has its own /proc, of its own pid
namespace, and sees no process of the host), nor another user (the kernel's ptrace rules),
and it names nothing in any directory a sandbox may see. (Review r28b and r29b took FIFOs in
corral's state directory and then in /tmp: a sandbox with direct writes, or one whose
workspace is /tmp, could write a forged pid there.)

The hub lives in the editor's Python host, which outlives every job: for each wrapped argv
it holds the pipes and a thread that, once the job starts, checks the pid it is given (pid 1
of a pid namespace of its own, holding this run's block pipe open: see _ours), makes the
listeners inside the sandbox's network (corral.net.bridge), serves them with a proxy, lets
the command start, and when the sandbox's pid 1 is gone closes the proxy and keeps what it
refused for `report()`.

An argv nobody starts costs a sleeping thread and four descriptors for NEVER_STARTED_AFTER
(two minutes); a job whose launcher finds no such process (the host restarted) fails to open
the path and does not start.
"""

from __future__ import annotations

import os
import select
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.net.proxy import Proxy

NEVER_STARTED_AFTER = 120.0  # seconds a wrapped argv may wait to be started (jobstart starts
# it at once; an argv wrapped and then not run, as a refused call's, must not keep a thread)
KEPT_REPORTS = 100
REPORT_WAIT = 2.0
POLL_GONE = 0.5  # seconds between looks at a sandbox without a pidfd (kernels before 5.3)


# the launcher's ends of each wrapped argv's pipes, by the info path, until expect() takes them
_PENDING: dict[str, tuple[bytes, tuple[int, int, int, int]]] = {}


def fifo_pair() -> tuple[str, str, str]:
    """(info, block, token): the paths by which a launcher opens two pipes of this process
    (see the module): bwrap's info goes into the first, its block byte comes out of the
    second; the launcher writes the token first. A path names a descriptor number, which a
    later run may get again: the token tells this argv's launcher from one started late or
    twice (review r30b)."""
    info_r, info_w = os.pipe()
    block_r, block_w = os.pipe()
    pid = os.getpid()
    token = os.urandom(16).hex()
    paths = (f"/proc/{pid}/fd/{info_w}", f"/proc/{pid}/fd/{block_r}", token)
    _PENDING[paths[0]] = (token.encode(), (info_r, info_w, block_r, block_w))
    return paths


def _pid_one(pid: int) -> bool:
    """Whether `pid` is the first process of the pid namespace it lives in."""
    with open(f"/proc/{pid}/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith("NSpid:"):
                return line.split()[-1] == "1"
    return False


def _ours(pid: int, namespace: int, block_fd: int) -> None:
    """Raise unless `pid` is the sandbox our launcher started: pid 1 of the pid namespace
    bwrap named, not ours, holding this run's block pipe open (bwrap's child keeps it until it
    reads our byte), matched by the pipe itself, not by a path's text. A number that fails
    this is never used, nor killed."""
    from corral.errors import CorralError

    pipe = os.fstat(block_fd)
    try:
        own = os.readlink(f"/proc/{pid}/ns/pid")
        if pid <= 1 or own != f"pid:[{namespace}]" or own == os.readlink("/proc/self/ns/pid"):
            raise OSError("not the first process of the sandbox bwrap made")
        if not _pid_one(pid):
            raise OSError("not the first process of its pid namespace")
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError as e:
        raise CorralError(f"bwrap's pid {pid} is not this run's sandbox ({e})") from None
    for name in names:
        try:
            held = os.stat(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue  # (closed meanwhile: bwrap closes its info descriptor, r29b)
        if (held.st_dev, held.st_ino) == (pipe.st_dev, pipe.st_ino):
            return
    raise CorralError(f"bwrap's pid {pid} is not this run's sandbox")


def _wait_gone(pid: int) -> None:
    """Until process `pid` (the sandbox's pid 1) has exited."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        import time

        while os.path.exists(f"/proc/{pid}") and not _zombie(pid):
            time.sleep(POLL_GONE)
        return
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.poll()  # (not select(): descriptors past 1023, review r28b)
    finally:
        os.close(pidfd)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except OSError:
        return True


class Hub:
    """The network of every wrapped argv of one long-lived process (see the module)."""

    def __init__(self) -> None:
        self._reports: dict[str, list[str]] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def expect(
        self,
        fifos: tuple[str, str, str],
        network: tuple[tuple[str, ...], tuple[str, ...]],
        stage: str | None,
    ) -> str:
        """Serve the run whose launcher opens `fifos` (from fifo_pair); its id for report()."""
        token, (info_r, info_w, block_r, block_w) = _PENDING.pop(fifos[0])
        os.set_blocking(info_r, False)
        run_id = f"{info_r}-{block_w}-{os.urandom(4).hex()}"
        thread = threading.Thread(
            target=self._serve,
            args=(run_id, token, (info_r, info_w, block_r, block_w), network, stage),
            daemon=True,
        )
        with self._lock:
            self._threads[run_id] = thread
        thread.start()
        return run_id

    def report(self, run_id: str) -> list[str]:
        """What the proxy of that run refused, a line each. Asked when the job has exited,
        which its thread sees at the same moment: it gets REPORT_WAIT to close the proxy."""
        with self._lock:
            thread = self._threads.get(run_id)
        if thread is not None:
            thread.join(REPORT_WAIT)
        with self._lock:
            return self._reports.pop(run_id, [])

    def _serve(
        self,
        run_id: str,
        token: bytes,
        fds: tuple[int, int, int, int],
        network: tuple[tuple[str, ...], tuple[str, ...]],
        stage: str | None,
    ) -> None:
        from corral.changes.stage import info_number
        from corral.errors import CorralError
        from corral.net.run import read_info, record_sandbox, start_proxy

        info_r, _, _, block_w = fds  # (the launcher's ends: held until the end)
        proxy: Proxy | None = None
        pid = 0
        lines: list[str] = []
        try:
            info = read_info(info_r, NEVER_STARTED_AFTER)
            if not info:
                return  # (never started, or bwrap failed first: its message says why)
            said, _, info = info.partition(b"\n")
            if said != token:
                raise CorralError(
                    "the run was started by another launcher (started late, or twice)"
                )
            text = info.decode("utf-8", errors="replace")
            claimed = info_number(text, "child-pid")
            _ours(claimed, info_number(text, "pid-namespace"), block_w)
            pid = record_sandbox(info, stage)  # (the checked pid)
            proxy = start_proxy(network, pid)
            os.write(block_w, b"1")
            _wait_gone(pid)
        except Exception as e:  # said after the run; the sandbox must not start without it
            lines.append(f"corral's network proxy could not be set up: {e}")
            if pid:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
        finally:
            with self._lock:
                self._threads.pop(run_id, None)
            for fd in fds:
                os.close(fd)
            if proxy is not None:
                proxy.close()
                lines += proxy.refused()
            if lines:
                with self._lock:
                    self._reports[run_id] = lines
                    for old in list(self._reports)[:-KEPT_REPORTS]:  # nobody asked for them
                        del self._reports[old]
