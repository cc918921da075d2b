"""corral's network proxy, served on a loopback listener of the test process, with upstream servers
on loopback. Test host names reach those servers through the proxy's resolver (the only part
replaced: there is no outbound network here), and are allowed private addresses, as a user's
mirror on their own network would be."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest

from corral.net import proxy as proxymod
from corral.net.allowlist import RULE, RULE_PRIVATE, Allowlist
from corral.net.proxy import Proxy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


class Upstream:
    """A loopback server: `echo` sends back what it gets; `http` records each request head and
    answers 200 with a fixed body."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.heads: list[bytes] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            if self.kind == "echo":
                while data := conn.recv(65536):
                    conn.sendall(data)
                return
            data = b""
            while b"\r\n\r\n" not in data and (chunk := conn.recv(4096)):
                data += chunk
            self.heads.append(data.partition(b"\r\n\r\n")[0])
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nUPSTREAM")


def resolver(names: dict[str, str]):  # type: ignore[no-untyped-def]
    calls: list[str] = []

    def resolve(host: str, port: int, *_: object) -> list[tuple[object, ...]]:
        calls.append(host)
        if host not in names:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in names[host].split(",")
        ]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


@contextlib.contextmanager
def serving(allow: list[str], private: list[str], names: dict[str, str], **kw: object) -> Iterator:
    listener = socket.create_server(("127.0.0.1", 0))
    proxy = Proxy(Allowlist.parse(allow, private), resolve=resolver(names), **kw)  # type: ignore[arg-type]
    proxy.serve(listener)
    try:
        yield proxy, listener.getsockname()[1]
    finally:
        proxy.close()


def ask(port: int, request: bytes, timeout: float = 5.0) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    client.sendall(request)
    return client


def read_all(sock: socket.socket) -> bytes:
    data = b""
    with contextlib.suppress(TimeoutError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def read_head(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(1)
        assert chunk, data
        data += chunk
    return data


def test_connect_tunnels_to_an_allowed_host_and_counts_bytes() -> None:
    echo = Upstream("echo")
    with serving(["pkg.test"], ["pkg.test"], {"pkg.test": "127.0.0.1"}) as (proxy, port):
        client = ask(port, f"CONNECT pkg.test:{echo.port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        # the allowlist names no port: only 80 and 443 pass
        assert b" 403 " in read_head(client)
    with serving([f"pkg.test:{echo.port}"], ["pkg.test"], {"pkg.test": "127.0.0.1"}) as (
        proxy,
        port,
    ):
        client = ask(port, f"CONNECT pkg.test:{echo.port} HTTP/1.1\r\n\r\nearly".encode())
        assert read_head(client).startswith(b"HTTP/1.1 200 ")
        client.sendall(b" and late")
        time.sleep(0.2)
        client.shutdown(socket.SHUT_WR)
        assert read_all(client) == b"early and late"
        client.close()
        deadline = time.monotonic() + 5
        while not proxy.events and time.monotonic() < deadline:
            time.sleep(0.01)
        (event,) = proxy.events
        assert event["allowed"] and event["host"] == "pkg.test" and event["port"] == echo.port
        assert event["sent"] == len(b"early and late") == event["received"]


def test_a_host_not_on_the_list_is_refused_with_the_setting_named() -> None:
    with serving(["pkg.test"], [], {}) as (proxy, port):
        answer = read_all(ask(port, b"CONNECT evil.test:443 HTTP/1.1\r\n\r\n"))
    assert answer.startswith(b"HTTP/1.1 403 Forbidden")
    body = answer.partition(b"\r\n\r\n")[2].decode()
    assert "evil.test:443" in body and RULE in body and '"evil.test"' in body
    assert proxy.refused() == [proxy.events[0]["reason"]]
    assert not proxy.events[0]["allowed"]
    with serving(["pkg.test"], [], {}) as (proxy, port):  # r37c HINT6: as the setting spells it
        answer = read_all(ask(port, b"CONNECT [::1]:28372 HTTP/1.1\r\n\r\n"))
    assert '"[::1]:28372" for that port alone' in answer.decode(), answer


@pytest.mark.parametrize("answer", ["127.0.0.1", "93.184.216.34,10.0.0.8", "169.254.169.254"])
def test_a_name_resolving_to_a_private_address_is_refused(answer: str) -> None:
    names = {"pkg.test": answer}
    with serving(["pkg.test"], [], names) as (_proxy, port):
        reply = read_all(ask(port, b"CONNECT pkg.test:443 HTTP/1.1\r\n\r\n"))
    assert reply.startswith(b"HTTP/1.1 403 ")
    assert RULE_PRIVATE in reply.decode() and "resolves to" in reply.decode()


def test_multicast_is_refused_even_when_private_is_allowed() -> None:
    with serving(["pkg.test"], ["pkg.test"], {"pkg.test": "224.0.0.1"}) as (_proxy, port):
        reply = read_all(ask(port, b"CONNECT pkg.test:443 HTTP/1.1\r\n\r\n"))
    assert reply.startswith(b"HTTP/1.1 403 ") and b"never allowed" in reply


def test_the_name_is_resolved_once_and_the_checked_address_is_used() -> None:
    echo = Upstream("echo")
    names = {"pkg.test": "127.0.0.1"}
    with serving([f"pkg.test:{echo.port}"], ["pkg.test"], names) as (proxy, port):
        client = ask(port, f"CONNECT pkg.test:{echo.port} HTTP/1.1\r\n\r\n".encode())
        assert read_head(client).startswith(b"HTTP/1.1 200 ")
        client.close()
        assert proxy.resolve.calls == ["pkg.test"]  # type: ignore[attr-defined]


def test_plain_http_goes_out_with_the_checked_host_and_no_proxy_headers() -> None:
    up = Upstream("http")
    names = {"pkg.test": "127.0.0.1"}
    with serving([f"pkg.test:{up.port}"], ["pkg.test"], names) as (_proxy, port):
        request = (
            f"GET http://pkg.test:{up.port}/simple/x?y=1 HTTP/1.1\r\n"
            "Host: other-site.test\r\nProxy-Authorization: Basic c2VjcmV0\r\n"
            "Connection: keep-alive, X-Drop\r\nX-Drop: 1\r\nAccept: */*\r\n\r\n"
        )
        reply = read_all(ask(port, request.encode()))
    assert reply.endswith(b"UPSTREAM")
    (head,) = up.heads
    lines = head.decode().split("\r\n")
    assert lines[0] == "GET /simple/x?y=1 HTTP/1.1"
    assert f"Host: pkg.test:{up.port}" in lines
    assert "Connection: close" in lines and "Accept: */*" in lines
    assert not [line for line in lines if line.lower().startswith(("proxy-", "x-drop"))]
    assert not [line for line in lines if "other-site" in line]


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET https://pkg.test/ HTTP/1.1\r\n\r\n",
        b"GET /relative HTTP/1.1\r\nHost: pkg.test\r\n\r\n",
        b"GET http://user:pw@pkg.test/ HTTP/1.1\r\n\r\n",
        b"CONNECT pkg.test HTTP/1.1\r\n\r\n",
        b"CONNECT pkg.test:99999 HTTP/1.1\r\n\r\n",
        b"GET http://pkg.test/ HTTP/2\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
        b"GET http://pkg.test/ HTTP/1.1\r\nX: a\x01b\r\n\r\n",
        b"GET http://pkg.test/ HTTP/1.1\r\n folded\r\n\r\n",
        b"GET http://pkg.test/ HTTP/1.1\r\n" + b"X: " + b"a" * 20000 + b"\r\n\r\n",
    ],
)
def test_malformed_requests_get_400_and_the_proxy_goes_on(request_bytes: bytes) -> None:
    up = Upstream("http")
    names = {"pkg.test": "127.0.0.1"}
    with serving([f"pkg.test:{up.port}", "pkg.test"], ["pkg.test"], names) as (_proxy, port):
        reply = read_all(ask(port, request_bytes))
        assert reply.startswith(b"HTTP/1.1 400 "), reply[:100]
        good = f"GET http://pkg.test:{up.port}/ HTTP/1.1\r\n\r\n".encode()
        assert read_all(ask(port, good)).endswith(b"UPSTREAM")
    assert up.heads and len(up.heads) == 1  # nothing of the malformed one went out


def test_a_slow_client_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proxymod, "HEAD_TIMEOUT", 0.3)
    with serving(["pkg.test"], [], {}) as (_proxy, port):
        client = ask(port, b"CONNECT pkg.test:443 HTT")
        started = time.monotonic()
        reply = read_all(client)
    assert reply.startswith(b"HTTP/1.1 400 ") and time.monotonic() - started < 4


def test_connections_are_bounded_and_close_ends_them() -> None:
    echo = Upstream("echo")
    names = {"pkg.test": "127.0.0.1"}
    allow = [f"pkg.test:{echo.port}"]
    with serving(allow, ["pkg.test"], names, max_connections=2) as (proxy, port):
        request = f"CONNECT pkg.test:{echo.port} HTTP/1.1\r\n\r\n".encode()
        held = [ask(port, request) for _ in range(2)]
        for client in held:
            assert read_head(client).startswith(b"HTTP/1.1 200 ")
        assert read_all(ask(port, request)).startswith(b"HTTP/1.1 503 ")
        proxy.close()
        for client in held:
            client.settimeout(3)
            assert read_all(client) == b""  # ended by close(), not by the timeout
        with pytest.raises(OSError):
            ask(port, request).recv(1)  # and nothing listens any more


def test_the_audit_log_and_the_report_are_bounded() -> None:
    """r27b HIGH: every connection, refused ones included, was a line of the audit log, with
    no bound: one command grew it by gigabytes an hour, and the report after the run by 48 MB
    (host names up to the 16 KiB header limit)."""
    logged: list[dict[str, object]] = []
    listener = socket.create_server(("127.0.0.1", 0))
    proxy = Proxy(Allowlist.parse(["pkg.test"]), resolve=resolver({}), on_event=logged.append)
    proxy.serve(listener)
    port = listener.getsockname()[1]
    try:
        for _ in range(proxymod.LOGGED_PER_HOST + 30):
            read_all(ask(port, b"CONNECT evil.test:443 HTTP/1.1\r\n\r\n"))
        for i in range(proxymod.REPORTED + 10):
            read_all(ask(port, f"CONNECT evil{i}.test:443 HTTP/1.1\r\n\r\n".encode()))
        long_name = "a" * 60 + ("." + "a" * 60) * 200  # valid labels, 12 KiB in all
        reply = read_all(ask(port, f"CONNECT {long_name}:443 HTTP/1.1\r\n\r\n".encode()))
        assert reply.startswith(b"HTTP/1.1 400 ")
        zoned = read_all(ask(port, b"CONNECT [fe80::1%" + b"x" * 5000 + b"]:443 HTTP/1.1\r\n\r\n"))
        assert zoned.startswith(b"HTTP/1.1 400 ")
    finally:
        proxy.close()
    to_evil = [e for e in logged if e["host"] == "evil.test"]
    assert len(to_evil) == proxymod.LOGGED_PER_HOST
    assert "more connections, not logged one by one" in str(logged[-1]["reason"])
    assert all(len(str(e["host"])) <= 253 and len(str(e["reason"])) <= 400 for e in logged)
    lines = proxy.refused()
    assert len(lines) == proxymod.REPORTED + 1 and lines[-1].startswith("and ")
    assert sum(len(line) for line in lines) < 20_000


def socks(port: int, host: bytes, dest_port: int, methods: bytes = b"\x00") -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=5)
    client.sendall(b"\x05" + bytes([len(methods)]) + methods)
    return client


def test_socks5_connect_reaches_an_allowed_host_and_refuses_the_rest() -> None:
    echo = Upstream("echo")
    names = {"pkg.test": "127.0.0.1"}
    listener = socket.create_server(("127.0.0.1", 0))
    proxy = Proxy(Allowlist.parse([f"pkg.test:{echo.port}"], ["pkg.test"]), resolve=resolver(names))
    proxy.serve(listener, socks=True)
    port = listener.getsockname()[1]

    def request(name: bytes, dest: int, command: int = 1) -> tuple[socket.socket, bytes]:
        client = socks(port, name, dest)
        assert client.recv(2) == b"\x05\x00"
        client.sendall(bytes((5, command, 0, 3, len(name))) + name + dest.to_bytes(2, "big"))
        return client, _exactly(client, 10)

    try:
        client, reply = request(b"pkg.test", echo.port)
        assert reply[:2] == b"\x05\x00"
        client.sendall(b"through socks")
        assert client.recv(100) == b"through socks"
        client.close()
        assert request(b"evil.test", 443)[1][1] == 2  # not allowed by the rules
        assert request(b"pkg.test", echo.port + 1)[1][1] == 2  # another port
        assert request(b"pkg.test", echo.port, command=2)[1][1] == 7  # BIND: not offered
        with_auth = socks(port, b"", 0, methods=b"\x02")
        assert with_auth.recv(2) == b"\x05\xff"
    finally:
        proxy.close()
    assert any("evil.test:443" in line for line in proxy.refused())


def _exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        assert chunk, data
        data += chunk
    return data
