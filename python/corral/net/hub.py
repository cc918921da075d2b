"""corral's proxy for commands another program starts: Neovim's jobs.

An argv handed to jobstart cannot carry descriptors, so its launcher opens two FIFOs instead
(see backends.bwrap LAUNCH_NET): bwrap writes the sandbox's pid to one (--info-fd) and waits
on the other (--block-fd). The hub lives in the editor's Python host, which outlives every
job: for each wrapped argv it holds the FIFOs' other ends and a thread that, once the job
starts, makes the listener inside the sandbox's network (corral.net.bridge), serves it with a
proxy, lets the command start, and when the sandbox's pid 1 is gone closes the proxy and
keeps what it refused for `report()`. The FIFOs live in a private directory in the host's /tmp,
which no sandbox sees, removed when the thread ends; the hub uses a pid only once it is sure
it is the sandbox its launcher started (see _ours).

An argv nobody starts costs a sleeping thread for NEVER_STARTED_AFTER (two minutes); a job
whose launcher finds no hub (the host restarted) waits on the FIFO until the tool call's
timeout kills it.
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


def fifo_base() -> str:
    """Where the FIFOs live: the host's /tmp, which no sandbox sees (each has a private /tmp,
    and /tmp can be no writable root nor shown inside one), in a directory of this user's. Not
    corral's state directory: a sandbox with direct writes could see it, and write another
    job's info FIFO before its bwrap (review r28b)."""
    return f"/tmp/corral-net-{os.getuid()}"  # (never $TMPDIR: that may be anywhere)


def fifo_pair() -> tuple[str, str]:
    """(info, block): two FIFOs in a new private directory (see fifo_base)."""
    import stat
    import tempfile

    base = fifo_base()
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(base)  # another user's, or a link there: refused, never followed
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        from corral.errors import CorralError

        raise CorralError(f"{base} is not a private directory of yours: remove it")
    _sweep(base)
    directory = tempfile.mkdtemp(dir=base)  # (0700)
    pair = (os.path.join(directory, "info"), os.path.join(directory, "block"))
    for path in pair:
        os.mkfifo(path, 0o600)
    return pair


def _sweep(base: str) -> None:
    """Directories of runs long over (an editor that quit while a wrapped argv waited):
    removing one in use is harmless, as the FIFOs stay open where they are open."""
    import shutil
    import time

    old = time.time() - 2 * NEVER_STARTED_AFTER
    try:
        with os.scandir(base) as it:
            stale = [e.path for e in it if e.stat(follow_symlinks=False).st_mtime < old]
    except OSError:
        return
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)


def _ours(pid: int, block_path: str) -> None:
    """Raise unless `pid` is the sandbox our launcher started: pid 1 of a pid namespace other
    than ours, blocked on this run's block FIFO (bwrap's child holds it open until it reads
    our byte). A number written by anything else (review r28b: a fake pid, a negative one
    meaning a process group) is never used, nor killed."""
    from corral.errors import CorralError

    try:
        if pid <= 1 or os.readlink(f"/proc/{pid}/ns/pid") == os.readlink("/proc/self/ns/pid"):
            raise OSError("not a sandbox's first process")
        held = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError as e:
        raise CorralError(f"bwrap's pid {pid} is not this run's sandbox ({e})") from None
    if block_path not in held:
        raise CorralError(f"bwrap's pid {pid} is not this run's sandbox")


def _read_info(fd: int, timeout: float) -> bytes:
    """bwrap's info JSON from the FIFO (opened non-blocking); empty when the launcher never
    opened it in time, or bwrap exited before it made the sandbox."""
    import time

    deadline = time.monotonic() + timeout
    data = b""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    while b"}" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(left * 1000):
            return b""
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            continue
        if not chunk:
            return data if b"}" in data else b""
        data += chunk
    return data


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
        fifos: tuple[str, str],
        network: tuple[tuple[str, ...], tuple[str, ...]],
        stage: str | None,
    ) -> str:
        """Serve the run whose launcher opens `fifos`; its id for report()."""
        info_path, block_path = fifos
        info = os.open(info_path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        # read-write: holds the FIFO open for writing without waiting for the launcher, so
        # its `6<` opens at once, and reads block until the byte below
        block = os.open(block_path, os.O_RDWR | os.O_CLOEXEC)
        run_id = os.path.basename(os.path.dirname(info_path))
        thread = threading.Thread(
            target=self._serve,
            args=(run_id, os.path.dirname(info_path), block_path, info, block, network, stage),
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
        directory: str,
        block_path: str,
        info_fd: int,
        block_fd: int,
        network: tuple[tuple[str, ...], tuple[str, ...]],
        stage: str | None,
    ) -> None:
        from corral.net.run import record_sandbox, start_proxy

        proxy: Proxy | None = None
        pid = 0
        lines: list[str] = []
        try:
            info = _read_info(info_fd, NEVER_STARTED_AFTER)
            if not info:
                return
            from corral.changes.stage import info_number

            _ours(info_number(info.decode("utf-8", errors="replace"), "child-pid"), block_path)
            pid = record_sandbox(info, stage)  # (the checked pid)
            proxy = start_proxy(network, pid)
            os.write(block_fd, b"1")
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
            os.close(info_fd)
            os.close(block_fd)
            if proxy is not None:
                proxy.close()
                lines += proxy.refused()
            import shutil

            shutil.rmtree(directory, ignore_errors=True)
            if lines:
                with self._lock:
                    self._reports[run_id] = lines
                    for old in list(self._reports)[:-KEPT_REPORTS]:  # nobody asked for them
                        del self._reports[old]
