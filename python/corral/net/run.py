"""Open the network of one sandboxed run: the bridge into its namespace and the proxy behind it
(corral run; see corral.net.bridge and corral.net.proxy)."""

from __future__ import annotations

import os
import select

from corral.errors import CorralError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.net.proxy import Proxy

INFO_WAIT = 10.0  # seconds bwrap gets to say the sandbox's pid


def read_info(fd: int, timeout: float) -> bytes | None:
    """bwrap's --info-fd JSON from `fd` (blocking or not): empty when its writer closed it
    before the sandbox was made, None when nothing complete came within `timeout` seconds.
    (poll, not select: a long-lived process may hold descriptors past 1023.)"""
    import time

    deadline = time.monotonic() + timeout
    data = b""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    while b"}" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(left * 1000):
            return None
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            continue
        if not chunk:
            return b""
        data += chunk
    return data


def _audit(event: dict[str, object]) -> None:
    from corral.toolguard.audit import AuditLog

    AuditLog().log(
        {
            "tool": "network",
            "decision": "allow" if event["allowed"] else "deny",
            "host": event["host"],
            "port": event["port"],
            "sent": event["sent"],
            "received": event["received"],
            "reasons": [event["reason"]] if event["reason"] else None,
        }
    )


def record_sandbox(info: bytes, stage: str | None) -> int:
    """The sandbox's pid 1 from bwrap's info, written to `stage` first as the launcher does
    without a proxy (see stage.sandbox_alive)."""
    from corral.changes import stage as stages

    if stage is not None:
        fd = stages.open_sandbox_record(stage)
        try:
            os.write(fd, info)
        finally:
            os.close(fd)
    return stages.info_number(info.decode("utf-8", errors="replace"), "child-pid")


def start_proxy(
    network: tuple[tuple[str, ...], tuple[str, ...]], pid: int, proxy: Proxy | None = None
) -> Proxy:
    """A proxy (`proxy`, or a new one for `network`) serving a listener inside the network
    namespace of process `pid`."""
    from corral.net.allowlist import Allowlist
    from corral.net.bridge import listeners_in
    from corral.net.proxy import Proxy

    if proxy is None:
        proxy = Proxy(Allowlist.parse(*network), on_event=_audit)
    http, socks = listeners_in(pid)
    proxy.serve(http)
    proxy.serve(socks, socks=True)
    return proxy


def open_network(
    bridge: tuple[int, int],
    network: tuple[tuple[str, ...], tuple[str, ...]],
    stage: str | None,
) -> Proxy | None:
    """Wait for the sandbox, record it in `stage` (see stage.sandbox_alive), make the listener
    inside it, start the proxy on it and let the command start. None when bwrap exited first
    (its own message says why); CorralError when the way in could not be made."""
    from corral.net import bridge as _bridge  # noqa: F401 (ctypes loaded while bwrap works)
    from corral.net.allowlist import Allowlist
    from corral.net.proxy import Proxy

    info_r, block_w = bridge
    try:
        # All of this while bwrap sets the sandbox up (it waits for us only at the end).
        proxy = Proxy(Allowlist.parse(*network), on_event=_audit)
        info = read_info(info_r, INFO_WAIT)
        if info is None:
            raise CorralError(f"bwrap did not start the sandbox within {INFO_WAIT:.0f} s")
        if not info:
            return None
        start_proxy(network, record_sandbox(info, stage), proxy)
        os.write(block_w, b"1")
        return proxy
    finally:
        os.close(info_r)
        os.close(block_w)
