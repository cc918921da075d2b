"""corral's network proxy: HTTP CONNECT, plain-HTTP forwarding and SOCKS5 CONNECT to the hosts on
the allowlist.

Every request names a host. The proxy checks the name against the allowlist, resolves it itself,
refuses it when any address it resolves to is loopback, private, link-local, unique-local or
otherwise not public (unless `network_private` names the host; the fetch tool's address
rules, see corral.net.rules), and connects to an address it checked, never to a second lookup
(no DNS rebinding). TLS passes through untouched: the proxy never sees inside it.

Plain HTTP requests go out with the Host header set to the checked host and `Connection:
close`. That is hygiene, not a boundary: what is enforced is the checked address and port. A
tunnel (CONNECT, to port 80 too), or a second request on the same connection, may carry any
Host to that address, so an allowed host on servers it shares with other sites (a CDN) reaches
those sites too.

A refusal answers 403 with a body that names the host and the setting that would allow it, and
is kept (`events`) for the report after the run and the audit log. Connections are bounded: past
`max_connections`, a new one gets 503 at once. The proxy's threads are daemons of its owner
(`corral run`), and `close()` ends every connection.
"""

from __future__ import annotations

import _socket as socket  # the C module: `socket` imports enum, ~10 ms of a corral run
import contextlib
import threading

from corral.net.allowlist import BLOCKED, RULE, RULE_PRIVATE, UNRESOLVED
from corral.net.hosts import ip_of, normal_host, valid_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from corral.net.allowlist import Allowlist

    Resolver = Callable[..., Iterable[tuple[Any, ...]]]

HEAD_LIMIT = 16384  # request line and headers
HEAD_TIMEOUT = 30.0  # seconds a client gets to send them
CONNECT_TIMEOUT = 10.0
MAX_CONNECTIONS = 64
BUFFER = 262144  # bytes read at a time, each way (64 connections: 32 MiB at most)
MAX_HOST = 253  # characters of a DNS name
LOGGED_PER_HOST = 20  # connections to one host:port (allowed or not) written to the audit log
LOGGED = 1000  # and in all, per proxy; past either, counted and said once at close()
REPORTED = 20  # refused host:port lines after the run
REASON_CHARS = 400
KEPT_EVENTS = 1000
HOP_BY_HOP = frozenset(
    {
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-authenticate",
        "te",
        "trailer",
        "upgrade",
        "host",
    }
)


class Refused(Exception):
    """Answer the client `status` with `message`; `host` and `port` say what was asked for."""

    def __init__(self, status: int, message: str, host: str = "", port: int = 0) -> None:
        super().__init__(message)
        self.status, self.message, self.host, self.port = status, message, host, port


REASONS = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway", 503: "Service Unavailable"}


def _answer(client: socket.socket, status: int, message: str) -> None:
    body = f"corral: {message}\n".encode("utf-8", errors="replace")
    head = (
        f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    try:
        client.sendall(head.encode("ascii") + body)
    except OSError:
        pass


def _pour(source: socket.socket, sink: socket.socket, counts: list[int]) -> None:
    """Copy `source` to `sink` until its end (or an error, or close() shutting both down),
    then end `sink`'s sending side; `counts` gets the size of each piece. (Through a buffer
    of this thread's: splice through a pipe was slower at the pipe's default 64 KiB, and a
    larger pipe counts against the user's pipe budget across the whole host; r27b.)"""
    buffer = bytearray(BUFFER)
    view = memoryview(buffer)
    try:
        while n := source.recv_into(buffer):
            sink.sendall(view[:n])
            counts.append(n)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


class _SocksError(Exception):
    """A SOCKS5 request refused before any host was checked; `code` is the reply's."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise OSError("the connection closed mid-request")
        data += chunk
    return data


def _drain_and_close(client: socket.socket) -> None:
    """Close after an answer without reading the request: what the client already sent is
    read first, or the kernel resets the connection and the answer may be lost."""
    client.setblocking(False)
    with contextlib.suppress(OSError):
        client.shutdown(socket.SHUT_WR)
        while client.recv(65536):
            pass
    client.close()


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    """(the request up to its blank line, whatever came after it)."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > HEAD_LIMIT:
            raise Refused(400, f"request headers longer than {HEAD_LIMIT} bytes")
        try:
            chunk = client.recv(4096)
        except TimeoutError:
            raise Refused(400, f"no complete request within {HEAD_TIMEOUT:.0f} s") from None
        if not chunk:
            raise Refused(400, "the connection closed before a complete request")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    if len(head) > HEAD_LIMIT:
        raise Refused(400, f"request headers longer than {HEAD_LIMIT} bytes")
    return head, rest


def _parse(head: bytes) -> tuple[str, str, str, list[tuple[str, str]]]:
    """(method, target, version, headers); Refused(400) for anything not plainly HTTP/1."""
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        raise Refused(400, "the request is not ASCII") from None
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or parts[2] not in ("HTTP/1.0", "HTTP/1.1"):
        raise Refused(400, "not an HTTP/1 request line")
    method, target, version = parts
    if not method.isalpha() or not method.isupper() or not target.isprintable():
        raise Refused(400, "not an HTTP/1 request line")
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or not name.isprintable() or " " in name or "\t" in name:
            raise Refused(400, "a malformed header line")  # (obsolete line folding too)
        if not all(c == "\t" or c.isprintable() for c in value):
            raise Refused(400, "a header with control characters")
        headers.append((name, value.strip()))
    return method, target, version, headers


def _authority(text: str, default_port: int | None) -> tuple[str, int]:
    """(host, port) of `host:port` or `[v6]:port`."""
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ("" if not rest else "x")
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep:
            host, port_text = text, ""
    if not port_text and default_port is not None:
        return host, default_port
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise Refused(400, f"{text!r} does not name a host and port")
    return host, int(port_text)


def _absolute(target: str) -> tuple[str, int, str]:
    """(host, port, path) of an absolute-form `http://` target."""
    scheme, sep, rest = target.partition("://")
    if not sep or scheme.lower() != "http":
        raise Refused(400, "a proxy request names an http:// URL (https goes through CONNECT)")
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        raise Refused(400, "URLs with user:password@ are refused")
    host, port = _authority(authority, 80)
    return host, port, slash + path if slash else "/"


class Proxy:
    """Serves one listening socket (see corral.net.bridge) until `close()`."""

    def __init__(
        self,
        allowlist: Allowlist,
        resolve: Resolver = socket.getaddrinfo,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.allowlist = allowlist
        self.resolve = resolve
        self.on_event = on_event
        self.events: list[dict[str, Any]] = []
        self._max = max_connections
        self._slots = threading.BoundedSemaphore(max_connections)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._listeners: list[socket.socket] = []
        self._closed = False
        self._counts: dict[tuple[str, int, bool], int] = {}
        self._logged = self._unlogged = 0

    # ---- life ---------------------------------------------------------------------------

    def serve(self, listener: socket.socket, socks: bool = False) -> None:
        """Accept on `listener` until close(): HTTP proxy requests, or with `socks`, SOCKS5."""
        listener.settimeout(None)
        self._listeners.append(listener)
        threading.Thread(target=self._accept, args=(listener, socks), daemon=True).start()

    def close(self) -> None:
        """Stop accepting and end every connection (the owner's command has exited)."""
        self._closed = True
        with self._lock:
            listeners, connections = list(self._listeners), list(self._open)
        # shutdown() wakes accept() and recv() in the threads; each connection's own thread
        # closes its sockets (closing one here would pull it from under a blocked call).
        for sock in (*listeners, *connections):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for sock in listeners:
            sock.close()
        with self._lock:
            unlogged, self._unlogged = self._unlogged, 0
        if unlogged:
            reason = f"{unlogged} more connections, not logged one by one"
            self._log({"host": "", "port": 0, "allowed": False, "reason": reason,
                       "sent": 0, "received": 0})  # fmt: skip

    def _accept(self, listener: socket.socket, socks: bool) -> None:
        while not self._closed:
            try:
                fd, _ = listener._accept()  # type: ignore[attr-defined]  # (accept() is socket.py's)
            except OSError:
                return  # closed
            client = socket.socket(fileno=fd)
            if not self._slots.acquire(blocking=False):
                client.settimeout(1.0)
                _answer(client, 503, "too many connections through the proxy at once")
                _drain_and_close(client)
                self._event("", 0, False, f"refused: more than {self._max} connections at once")
                continue
            with self._lock:
                self._open.add(client)
            threading.Thread(target=self._connection, args=(client, socks), daemon=True).start()

    def _connection(self, client: socket.socket, socks: bool) -> None:
        upstream = None
        try:
            upstream = self._handle_socks(client) if socks else self._handle(client)
        finally:
            with self._lock:
                self._open.discard(client)
                if upstream is not None:
                    self._open.discard(upstream)
            for sock in (client, upstream):
                if sock is not None:
                    sock.close()
            self._slots.release()

    # ---- one connection -----------------------------------------------------------------

    def _handle(self, client: socket.socket) -> socket.socket | None:
        host, port, upstream = "", 0, None
        try:
            client.settimeout(HEAD_TIMEOUT)
            head, rest = _read_head(client)
            method, target, version, headers = _parse(head)
            if method == "CONNECT":
                host, port = _authority(target, None)
                first = b""
            else:
                host, port, path = _absolute(target)
            host = normal_host(host)
            addresses = self._check(host, port)
            upstream = self._connect(host, port, addresses)
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                first = self._request(method, path, version, headers, host, port)
            sent, received = self._relay(client, upstream, first + rest)
            self._event(host, port, True, "", sent, received)
        except Refused as refused:
            _answer(client, refused.status, refused.message)
            self._event(refused.host or host, refused.port or port, False, refused.message)
        except OSError:
            pass  # the client went away
        return upstream

    def _handle_socks(self, client: socket.socket) -> socket.socket | None:
        """One SOCKS5 connection (RFC 1928): no authentication, CONNECT only, the same checks
        as CONNECT over HTTP. A refusal is a reply code (2: not allowed by the rules; 4: the
        host cannot be reached); its words go to the report after the run and the audit
        log, as for HTTP."""
        host, port, upstream = "", 0, None
        try:
            client.settimeout(HEAD_TIMEOUT)
            version, count = _exactly(client, 2)
            if version != 5 or 0 not in _exactly(client, count):
                client.sendall(b"\x05\xff")  # no acceptable method
                raise _SocksError(1, "not a SOCKS5 client without authentication")
            client.sendall(b"\x05\x00")
            version, command, _, kind = _exactly(client, 4)
            if version != 5 or command != 1:
                raise _SocksError(7, "SOCKS5: only CONNECT is offered")
            if kind == 1:
                host = socket.inet_ntop(socket.AF_INET, _exactly(client, 4))
            elif kind == 4:
                host = socket.inet_ntop(socket.AF_INET6, _exactly(client, 16))
            elif kind == 3:
                name = _exactly(client, _exactly(client, 1)[0])
                host = name.decode("ascii", errors="replace")
            else:
                raise _SocksError(8, "SOCKS5: an address of an unknown type")
            port = int.from_bytes(_exactly(client, 2), "big")
            host = normal_host(host)
            upstream = self._connect(host, port, self._check(host, port))
            client.sendall(b"\x05\x00\x00\x01" + bytes(6))
            sent, received = self._relay(client, upstream, b"")
            self._event(host, port, True, "", sent, received)
        except Refused as refused:
            code = {403: 2, 502: 4}.get(refused.status, 1)
            with contextlib.suppress(OSError):
                client.sendall(bytes((5, code, 0, 1)) + bytes(6))
            self._event(refused.host or host, refused.port or port, False, refused.message)
        except _SocksError as error:
            if error.code != 1:
                with contextlib.suppress(OSError):
                    client.sendall(bytes((5, error.code, 0, 1)) + bytes(6))
            self._event(host, port, False, str(error))
        except OSError:
            pass  # the client went away, or was too slow
        return upstream

    def _check(self, host: str, port: int) -> list[str]:
        if (
            not host
            or len(host) > MAX_HOST
            or "%" in host  # an IPv6 zone: a local interface, and text of any length
            or (ip_of(host) is None and not valid_name(host))
        ):
            raise Refused(400, "the request names no valid host", host[:MAX_HOST], port)
        if not self.allowlist.allows(host, port):
            entry = f"[{host}]" if ":" in host else host  # (an IPv6 address, as RULE spells it)
            raise Refused(
                403,
                f"{BLOCKED}{entry}:{port}: not in {RULE}; to allow it, add "
                f'"{entry}" (or "{entry}:{port}" for that port alone) to {RULE}',
                host,
                port,
            )
        if ip_of(host) is not None:
            addresses = [host]
        else:
            try:
                infos = self.resolve(host, port, socket.AF_UNSPEC, socket.SOCK_STREAM)
                addresses = list(
                    dict.fromkeys(
                        str(info[4][0])
                        for info in infos
                        if info[0] in (socket.AF_INET, socket.AF_INET6)
                    )
                )
            except (OSError, UnicodeError, ValueError) as e:
                raise Refused(502, f"{UNRESOLVED}{host} (port {port}): {e}", host, port) from None
            if not addresses:
                raise Refused(502, f"{host} has no IPv4 or IPv6 address", host, port)
        from corral.net.rules import NEVER_ALLOWED, blocked_address  # (off the start's path)

        private_ok = self.allowlist.private_allowed(host)
        for text in addresses:
            ip = ip_of(text)
            reason = "not an address" if ip is None else blocked_address(ip)
            if reason is None or (private_ok and reason not in NEVER_ALLOWED and ip is not None):
                continue
            hint = (
                f"a {reason} address is never allowed"
                if reason in NEVER_ALLOWED or ip is None
                else f"to allow it, add {host} to {RULE_PRIVATE}"
            )
            what = (
                f"{host} is a {reason} address"
                if host == text
                else f"it resolves to {text} ({reason})"
            )
            raise Refused(403, f"{BLOCKED}{host}:{port}: {what}; {hint}", host, port)
        return addresses

    def _connect(self, host: str, port: int, addresses: list[str]) -> socket.socket:
        last: OSError = OSError("no address")
        for address in addresses:
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.settimeout(CONNECT_TIMEOUT)
            try:
                sock.connect((address, port))
            except OSError as e:
                sock.close()
                last = e
                continue
            with self._lock:
                if self._closed:
                    sock.close()
                    raise OSError("the proxy is closing")
                self._open.add(sock)
            return sock
        raise Refused(502, f"cannot connect to {host}:{port}: {last}", host, port)

    @staticmethod
    def _request(
        method: str,
        path: str,
        version: str,
        headers: list[tuple[str, str]],
        host: str,
        port: int,
    ) -> bytes:
        named = set()
        for name, value in headers:
            if name.lower() == "connection":
                named |= {token.strip().lower() for token in value.split(",")}
        lines = [f"{method} {path} {version}"]
        authority = f"[{host}]" if ":" in host else host
        lines.append(f"Host: {authority}" if port == 80 else f"Host: {authority}:{port}")
        for name, value in headers:
            if name.lower() not in HOP_BY_HOP and name.lower() not in named:
                lines.append(f"{name}: {value}")
        lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")

    @staticmethod
    def _relay(client: socket.socket, upstream: socket.socket, first: bytes) -> tuple[int, int]:
        """Copy both ways until both sides are done; (bytes sent up, bytes received). One
        thread a direction (see _pour)."""
        for sock in (client, upstream):
            # Blocking, with no idle limit: a quiet direction is normal (a long download),
            # and close() ends every tunnel when the owner's command ends.
            sock.settimeout(None)
        if first:
            upstream.sendall(first)
        counts: list[int] = []
        up_counts: list[int] = []
        up = threading.Thread(target=_pour, args=(client, upstream, up_counts), daemon=True)
        up.start()
        _pour(upstream, client, counts)
        up.join()
        return len(first) + sum(up_counts), sum(counts)

    def _event(
        self, host: str, port: int, allowed: bool, reason: str, sent: int = 0, received: int = 0
    ) -> None:
        """Keep the event for refused() and log it: the first LOGGED_PER_HOST of each host,
        port and verdict, at most LOGGED in all; the rest are counted, said at close()
        (a command looping on refused connections must not fill the disk; r27b)."""
        host, reason = host[:MAX_HOST], reason[:REASON_CHARS]  # (a request's words in it)
        event = {
            "host": host,
            "port": port,
            "allowed": allowed,
            "reason": reason,
            "sent": sent,
            "received": received,
        }
        key = (host, port, allowed)
        with self._lock:
            if len(self.events) < KEPT_EVENTS:
                self.events.append(event)
            count = self._counts.get(key, 0) + 1
            if key in self._counts or len(self._counts) < KEPT_EVENTS:
                self._counts[key] = count
            log = count <= LOGGED_PER_HOST and self._logged < LOGGED and key in self._counts
            if log:
                self._logged += 1
            else:
                self._unlogged += 1
        if log:
            self._log(event)

    def _log(self, event: dict[str, Any]) -> None:
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:  # a failing log must not break a connection
                pass

    def refused(self) -> list[str]:
        """One line per refused host:port, at most REPORTED, for the report after the run."""
        seen: dict[str, str] = {}
        with self._lock:
            for event in self.events:
                if not event["allowed"]:
                    seen.setdefault(f"{event['host']}:{event['port']}", event["reason"])
        lines = list(seen.values())
        if len(lines) > REPORTED:
            lines[REPORTED:] = [f"and {len(lines) - REPORTED} more hosts refused (audit log)"]
        return lines
