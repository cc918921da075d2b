"""The way into a sandbox's network: a listening socket on its own loopback, held by the host.

The sandbox keeps `--unshare-net` (its loopback and nothing else). Before the command starts
(bwrap waits on `--block-fd`), a short-lived fork of corral enters the sandbox's user and network
namespaces, binds 127.0.0.1:3128 (HTTP) and :1080 (SOCKS5) there, and hands the listening sockets
back over a socket pair;
corral's proxy then accepts the command's connections on it from the host's side. No process
runs inside the sandbox for this, and nothing inside can reach anything but that one port.

Entering the network namespace needs CAP_SYS_ADMIN over it: the fork first joins the user
namespace that owns it (bwrap's, made by this user, so the fork has every capability there). It
joins neither the sandbox's mounts nor its pid namespace, and exits once the socket is sent.
"""

from __future__ import annotations

import _socket as socket  # the C module: `socket` imports enum, ~10 ms of a corral run
import ctypes
import fcntl
import os
import struct

from corral.errors import CorralError
from corral.sandbox.environment import PROXY_PORT, SOCKS_PORT

# Loaded here, in the parent, while bwrap is still setting up: the fork only makes calls.
LIBC = ctypes.CDLL(None, use_errno=True)

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
NS_GET_USERNS = 0xB701  # ioctl: the user namespace owning a namespace
# inside the sandbox's own loopback, where nothing else listens: HTTP, then SOCKS5
PORTS = (PROXY_PORT, SOCKS_PORT)
BACKLOG = 128


class BridgeFailed(CorralError):
    """The listener could not be made inside the sandbox's network namespace."""


def _setns(fd: int, kind: int) -> None:
    if LIBC.setns(fd, kind) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _in_child(pid: int, ports: tuple[int, ...], channel: socket.socket) -> None:
    """Runs in the fork: never returns to the caller's code."""
    code = 1
    try:
        net = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        owner = fcntl.ioctl(net, NS_GET_USERNS)
        if os.readlink(f"/proc/{pid}/ns/user") != os.readlink("/proc/self/ns/user"):
            _setns(owner, CLONE_NEWUSER)
        _setns(net, CLONE_NEWNET)
        listeners = []  # (kept: a socket object closes its descriptor when it goes)
        for port in ports:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", port))
            listener.listen(BACKLOG)
            listeners.append(listener)
        fds = [listener.fileno() for listener in listeners]
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))]
        channel.sendmsg([b"1"], rights)
        code = 0
    except BaseException as e:  # said to the parent, which raises it
        try:
            channel.sendall(f"0{e}".encode(errors="replace")[:512])
        except OSError:
            pass
    finally:
        os._exit(code)


def listeners_in(pid: int, ports: tuple[int, ...] = PORTS) -> list[socket.socket]:
    """Sockets listening on 127.0.0.1 at each of `ports` in the network namespace of process
    `pid` (the sandbox's pid 1, from bwrap's --info-fd), or BridgeFailed saying why not."""
    import warnings

    ours, theirs = socket.socketpair()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns about fork() in a process with threads; the fork runs only
            # system calls and exits.
            warnings.simplefilter("ignore", DeprecationWarning)
            child = os.fork()
        if child == 0:
            ours.close()
            _in_child(pid, ports, theirs)
        theirs.close()
        ours.settimeout(10.0)
        try:
            message, ancillary, _flags, _addr = ours.recvmsg(
                1024, socket.CMSG_SPACE(4 * len(ports))
            )
        except OSError as e:
            raise BridgeFailed(f"no answer from the namespace helper: {e}") from None
        finally:
            os.waitpid(child, 0)
        fds = [
            fd
            for level, kind, data in ancillary
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS
            for fd in struct.unpack(f"{len(data) // 4}i", data[: len(data) // 4 * 4])
        ]
        if len(fds) != len(ports):
            for fd in fds:
                os.close(fd)
            why = message[1:].decode(errors="replace") or "it exited"
            raise BridgeFailed(f"cannot listen inside the sandbox's network namespace: {why}")
        return [socket.socket(fileno=fd) for fd in fds]
    finally:
        ours.close()
        theirs.close()
