"""Guarded HTTP fetch: the lookup and the request, after the rules of
corral.toolguard.ops.url_rules.

The connection goes to an address that was checked, never to a fresh lookup of the name: a
second lookup would let a hostile DNS server answer "public" for the check and "127.0.0.1" for the
connection (DNS rebinding). TLS still verifies the certificate against the host name (SNI), so
pinning the address costs nothing in authenticity.

Redirects are not followed: the caller gets the status and `location` and may fetch that URL,
which goes through the same checks as any other.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time

from corral.frozen import Frozen
from corral.net.hosts import ip_of as _ip
from corral.toolguard.ops import url_rules
from corral.toolguard.ops.url_rules import HttpRefused, Refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    Resolver = Callable[..., Iterable[tuple[Any, ...]]]

# No setting gives these (:help corral-ops says them): a body past MAX_BYTES is cut with a
# notice; TIMEOUT seconds bound the whole request, the body's last byte included.
MAX_BYTES = 1_000_000
TIMEOUT = 20
CHUNK = 65536
# identity: the size limit then counts the bytes that arrive, and no decompressor runs on what
# a server chose to send.
REQUEST_HEADERS = {"User-Agent": "corral", "Accept": "*/*", "Accept-Encoding": "identity"}
# codecs Python accepts as a charset that are no text's encoding (r54c CHATBYTES)
NOT_CHARSETS = frozenset({"unicode-escape", "raw-unicode-escape", "punycode", "idna", "utf-7"})


class Checked(Frozen):
    """A URL that passed the guard, with the addresses a connection may use."""

    __slots__ = ("addresses", "host", "path", "port", "scheme")
    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[str, ...]

    def __init__(
        self, scheme: str, host: str, port: int, path: str, addresses: tuple[str, ...]
    ) -> None:
        self._set(scheme=scheme, host=host, port=port, path=path, addresses=addresses)


def _resolve(host: str, port: int, resolve: Resolver) -> list[str]:
    if _ip(host) is not None:
        return [host]  # a literal address: nothing to look up
    try:
        infos = list(resolve(host, port, socket.AF_UNSPEC, socket.SOCK_STREAM))
    except (OSError, UnicodeError, ValueError) as e:
        raise Refused(
            "resolve-failed", f"cannot resolve {host}: {e}", host, "check the host name"
        ) from None
    found: list[str] = []
    for family, _type, _proto, _name, sockaddr in infos:
        text = str(sockaddr[0])
        if family in (socket.AF_INET, socket.AF_INET6) and text not in found:
            found.append(text)
    if not found:
        raise Refused(
            "resolve-failed", f"{host} has no IPv4 or IPv6 address", host, "check the host name"
        )
    return found


def _check(
    url: str, allow_hosts: Sequence[str], allow_private: Sequence[str], resolve: Resolver
) -> Checked:
    scheme, host, port, path = url_rules.split(url)
    url_rules.check_listed(host, allow_hosts)
    addresses = _resolve(host, port, resolve)
    url_rules.check_addresses(host, addresses, allow_private)
    return Checked(scheme, host, port, path, tuple(addresses))


def _connect(
    addresses: Sequence[str], port: int, timeout: float | None
) -> tuple[socket.socket, str]:
    """A TCP connection to the first checked address that answers (and which one it was)."""
    last: OSError = OSError("no address to connect to")
    for address in addresses:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect((address, port))
            return sock, address
        except OSError as e:
            sock.close()
            last = e
    raise last


class _PinnedHTTP(http.client.HTTPConnection):
    """Connects to the checked addresses; `host` only names the server in the Host header."""

    def __init__(self, checked: Checked, timeout: float) -> None:
        super().__init__(checked.host, checked.port, timeout=timeout)
        self.addresses = checked.addresses
        self.address = ""

    def connect(self) -> None:
        self.sock, self.address = _connect(self.addresses, self.port, self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """As _PinnedHTTP, with TLS verified against the host name, not the address."""

    def __init__(self, checked: Checked, timeout: float, context: ssl.SSLContext) -> None:
        super().__init__(checked.host, checked.port, timeout=timeout, context=context)
        self.addresses = checked.addresses
        self.address = ""
        self.tls = context

    def connect(self) -> None:
        raw, self.address = _connect(self.addresses, self.port, self.timeout)
        try:
            self.sock = self.tls.wrap_socket(raw, server_hostname=self.host)
        except BaseException:
            raw.close()
            raise


def _read(
    response: http.client.HTTPResponse, sock: socket.socket | None, limit: int, deadline: float
) -> tuple[bytes, bool]:
    """At most `limit` bytes of the body (and whether there was more), within `deadline`.

    The socket timeout alone bounds each read, not the whole body: a server sending one byte a
    second would never time out. The deadline bounds the total.
    """
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the response took longer than the timeout")
        if sock is not None:
            sock.settimeout(remaining)
        chunk = response.read1(min(CHUNK, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    return data[:limit], len(data) > limit


def _failure(
    url: str, code: str, error: str, refusal: dict[str, str] | None = None
) -> dict[str, Any]:
    return {"ok": False, "url": url, "code": code, "error": error, "refusal": refusal}


def fetch(
    url: str,
    allow_hosts: Sequence[str],
    allow_private: Sequence[str] = (),
    resolve: Resolver = socket.getaddrinfo,
    *,
    layer: str = "",
    private_layer: str = "",
    context: ssl.SSLContext | None = None,
) -> dict[str, Any]:
    """GET `url` through the guard. Never raises for a refused or failed request.

    `allow_hosts` and `allow_private` are patterns as expand_hosts returns them; `layer` and
    `private_layer` name the configuration layers they came from, for a refusal.
    Success: ok, url, http_status, reason, headers (lowercased names), body (text, cut at
    MAX_BYTES with a notice), truncated, address (the IP connected to), location (absolute,
    for a redirect; None otherwise). Failure: ok=False, url, code, error, and refusal
    (HttpRefused.as_dict(): the Refusal's fields and host) when the guard refused rather than
    the network failing.
    `context` replaces the default TLS context (certificate and host name verification on).
    """
    try:
        try:
            checked = _check(url, allow_hosts, allow_private, resolve)
        except Refused as refused:
            raise url_rules.refusal(url, refused, layer, private_layer) from None
    except HttpRefused as e:
        return _failure(url, e.refusal.code, str(e), e.as_dict())
    deadline = time.monotonic() + TIMEOUT
    conn: _PinnedHTTP | _PinnedHTTPS
    if checked.scheme == "https":
        conn = _PinnedHTTPS(checked, TIMEOUT, context or ssl.create_default_context())
    else:
        conn = _PinnedHTTP(checked, TIMEOUT)
    try:
        conn.request("GET", checked.path, headers=REQUEST_HEADERS)
        response = conn.getresponse()
        data, truncated = _read(response, conn.sock, MAX_BYTES, deadline)
    except TimeoutError as e:
        return _failure(url, "timeout", f"timed out after {TIMEOUT} s: {e}")
    except ssl.SSLError as e:  # before OSError: it is one
        return _failure(url, "tls", f"TLS failed for {checked.host}: {e}")
    except http.client.LineTooLong as e:
        return _failure(url, "too-large", f"response headers too large: {e}")
    except OSError as e:
        return _failure(url, "connect-failed", f"cannot reach {checked.host}:{checked.port}: {e}")
    except (http.client.HTTPException, ValueError) as e:
        return _failure(url, "bad-response", f"invalid HTTP response: {e!r}")
    finally:
        conn.close()
    return _success(url, response, data, truncated, conn.address)


def _success(
    url: str,
    response: http.client.HTTPResponse,
    data: bytes,
    truncated: bool,
    address: str,
) -> dict[str, Any]:
    from urllib.parse import urljoin

    charset = response.headers.get_content_charset() or "utf-8"
    import codecs

    try:
        if codecs.lookup(charset).name in NOT_CHARSETS:
            charset = "utf-8"  # (a server's `charset=unicode_escape` made lone surrogates)
    except LookupError:
        pass
    try:
        body = data.decode(charset, errors="replace")
    except LookupError:  # a charset Python does not know
        body = data.decode("utf-8", errors="replace")
    if truncated:
        body += f"\n[corral: response truncated at {len(data)} bytes]"
    found: dict[str, str] = {}
    for name, value in response.getheaders():
        key = name.lower()
        found[key] = f"{found[key]}, {value}" if key in found else value
    location = found.get("location") if 300 <= response.status < 400 else None
    return {
        "ok": True,
        "url": url,
        "http_status": response.status,
        "reason": response.reason,
        "headers": found,
        "body": body,
        "truncated": truncated,
        "address": address,
        "location": urljoin(url, location) if location else None,
    }
