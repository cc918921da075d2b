"""Network and host sockets: listeners on the host must receive nothing from the sandbox.

Every listener is bound in the test process and checked after corral has exited; what the
sandboxed client prints is only there to make a failure readable.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile

import pytest

from .sandbox_support import DONE, NO_NETWORK, SANDBOXED

pytestmark = pytest.mark.sandbox

CLIENT = r"""
import socket, sys
kind, target = sys.argv[1], sys.argv[2]
try:
    if kind == "tcp":
        s = socket.create_connection(("127.0.0.1", int(target)), timeout=2)
        s.sendall(b"hello from the sandbox")
    elif kind == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(3):
            s.sendto(b"hello from the sandbox", ("127.0.0.1", int(target)))
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(target.replace("@", "\0", 1) if kind == "abstract" else target)
        s.sendall(b"hello from the sandbox")
    s.close()
    print("CONNECTED", kind)
except OSError as e:
    print("refused", kind, e)
print("CORRAL-SCRIPT-DONE")
"""
assert DONE in CLIENT


def _client(host, mode: str, kind: str, target: str):
    return host.corral("run", "--mode", mode, "--", "python3", "-c", CLIENT, kind, target)


def _received_stream(listener: socket.socket) -> bytes | None:
    """What a connection queued on `listener` sent, or None when nobody connected."""
    listener.setblocking(False)
    try:
        conn, _ = listener.accept()
    except BlockingIOError:
        return None
    with conn:
        conn.settimeout(2)
        try:
            return conn.recv(100)
        except OSError:
            return b""


def _received_datagram(sock: socket.socket) -> bytes | None:
    sock.setblocking(False)
    try:
        return sock.recv(100)
    except BlockingIOError:
        return None


@contextlib.contextmanager
def _listener(family: int, kind: int, address: object):
    sock = socket.socket(family, kind)
    try:
        sock.bind(address)
        if kind == socket.SOCK_STREAM:
            sock.listen(8)
        yield sock
    finally:
        sock.close()


@pytest.mark.parametrize("mode", NO_NETWORK)
def test_tcp_loopback_listener_receives_nothing(host, mode):
    with _listener(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0)) as srv:
        r = _client(host, mode, "tcp", str(srv.getsockname()[1]))
        assert DONE in r.stdout, r.stdout + r.stderr
        assert _received_stream(srv) is None, r.stdout


@pytest.mark.parametrize("mode", NO_NETWORK)
def test_udp_loopback_listener_receives_nothing(host, mode):
    with _listener(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0)) as srv:
        r = _client(host, mode, "udp", str(srv.getsockname()[1]))
        assert DONE in r.stdout, r.stdout + r.stderr
        assert _received_datagram(srv) is None, r.stdout


def test_loopback_is_reachable_with_network(host):
    """workspace-write-network shares the host network namespace by design; this also proves
    the listeners above would have seen a connection."""
    mode = "workspace-write-network"
    with _listener(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0)) as srv:
        r = _client(host, mode, "tcp", str(srv.getsockname()[1]))
        assert DONE in r.stdout, r.stdout + r.stderr
        assert _received_stream(srv) == b"hello from the sandbox", r.stdout
    with _listener(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0)) as srv:
        r = _client(host, mode, "udp", str(srv.getsockname()[1]))
        assert _received_datagram(srv) == b"hello from the sandbox", r.stdout


@pytest.mark.parametrize("mode", SANDBOXED)
def test_unix_socket_in_host_tmp_is_unreachable(host, mode):
    """Agent, editor and multiplexer sockets live under /tmp ($NVIM, $SSH_AUTH_SOCK, tmux)."""
    directory = tempfile.mkdtemp(prefix="corral-test-", dir="/tmp")
    path = f"{directory}/sock"
    try:
        with _listener(socket.AF_UNIX, socket.SOCK_STREAM, path) as srv:
            r = _client(host, mode, "unix", path)
            assert DONE in r.stdout, r.stdout + r.stderr
            assert _received_stream(srv) is None, r.stdout
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("mode", SANDBOXED)
def test_abstract_unix_socket_is_unreachable(host, mode):
    """Abstract sockets have no path to mask: only a network namespace (or seccomp) stops them."""
    name = f"corral-test-{host.tag}"
    with _listener(socket.AF_UNIX, socket.SOCK_STREAM, "\0" + name) as srv:
        r = _client(host, mode, "abstract", "@" + name)
        assert DONE in r.stdout, r.stdout + r.stderr
        assert _received_stream(srv) is None, r.stdout


def test_unix_socket_harness_detects_a_connection(host):
    """With the sandbox off, the same client reaches both listeners: the checks above can fail."""
    name = f"corral-test-{host.tag}"
    directory = tempfile.mkdtemp(prefix="corral-test-", dir="/tmp")
    try:
        with (
            _listener(socket.AF_UNIX, socket.SOCK_STREAM, "\0" + name) as abstract,
            _listener(socket.AF_UNIX, socket.SOCK_STREAM, f"{directory}/sock") as path,
        ):
            # reachable by the test user too (CORRAL_TEST_USER): mkdtemp makes it owner-only
            os.chmod(directory, 0o755)
            os.chmod(f"{directory}/sock", 0o777)
            r1 = _client(host, "off", "abstract", "@" + name)
            r2 = _client(host, "off", "unix", f"{directory}/sock")
            assert _received_stream(abstract) == b"hello from the sandbox", r1.stdout + r1.stderr
            assert _received_stream(path) == b"hello from the sandbox", r2.stdout + r2.stderr
    finally:
        shutil.rmtree(directory, ignore_errors=True)
