"""Guarded HTTP fetch: a host allowlist, and no requests into private networks.

Two rules hold every request. The host must be on `tools.fetch.allow_hosts` (an empty list allows
nothing: fail closed). Every address the name resolves to must be public unless the user allowed
private addresses for that host: one private answer among public ones is enough to refuse, since
which one a connection would use is not ours to predict.

The connection then goes to an address that was checked, never to a fresh lookup of the name: a
second lookup would let a hostile DNS server answer "public" for the check and "127.0.0.1" for the
connection (DNS rebinding). TLS still verifies the certificate against the host name (SNI), so
pinning the address costs nothing in authenticity.

Redirects are not followed: the caller gets the status and `location` and may fetch that URL,
which goes through the same checks as any other.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import time

from corral.frozen import Frozen
from corral.net.hosts import host_allowed
from corral.net.hosts import ip_of as _ip
from corral.net.hosts import normal_host as _normal_host
from corral.net.hosts import valid_name as _valid_name
from corral.net.rules import NEVER_ALLOWED, blocked_address
from corral.toolguard.ops.refusal import BUILTIN, OpError, Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    Address = ipaddress.IPv4Address | ipaddress.IPv6Address
    Resolver = Callable[..., Iterable[tuple[Any, ...]]]

RULE_HOSTS = "tools.fetch.allow_hosts"
RULE_PRIVATE = "tools.fetch.allow_private"
DEFAULT_PORTS = {"http": 80, "https": 443}
CHUNK = 65536


class HttpRefused(OpError):
    """A URL the guard refuses: `refusal` (path = the URL) says why and how to allow it,
    `host` which host it was about."""

    def __init__(self, refusal: Refusal, host: str) -> None:
        self.host = host
        super().__init__(refusal)

    def as_dict(self) -> dict[str, str]:
        """The refusal as data, with the host a frontend would offer to allow."""
        return {**self.refusal.as_dict(), "host": self.host}


class _Refused(Exception):
    """Raised inside check(); check() adds the URL and layer and raises HttpRefused."""

    def __init__(self, code: str, message: str, host: str, hint: str, rule: str = "") -> None:
        self.code, self.message, self.host, self.hint, self.rule = code, message, host, hint, rule
        super().__init__(message)


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


# ---- check --------------------------------------------------------------------------------------


# codecs Python accepts as a charset that are no text's encoding (r54c CHATBYTES)
NOT_CHARSETS = frozenset({"unicode-escape", "raw-unicode-escape", "punycode", "idna", "utf-7"})


def _split(url: str) -> tuple[str, str, int, str]:
    from urllib.parse import quote, urlsplit

    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        # urlsplit silently deletes tabs and newlines; refusing keeps one reading of the URL.
        raise _Refused(
            "bad-url",
            "the URL contains whitespace or control characters",
            "",
            "percent-encode spaces and control characters",
        )
    try:
        parts = urlsplit(url)
        port_given = parts.port
    except ValueError as e:
        raise _Refused("bad-url", f"cannot parse the URL: {e}", "", "check the URL") from None
    scheme = parts.scheme.lower()
    hostname = _normal_host(parts.hostname or "")
    if scheme not in DEFAULT_PORTS:
        raise _Refused(
            "bad-url",  # (as :help corral-refusal-codes says, r64c FETCHCODE)
            f"only http and https URLs can be fetched, not {scheme or 'a relative URL'}",
            hostname,
            "use an http:// or https:// URL",
            "fetch: http and https only",
        )
    if "@" in parts.netloc:
        # Also catches the parser tricks (http://allowed\@evil/) that hinge on userinfo.
        raise _Refused(
            "userinfo",
            "URLs with user:password@ are refused",
            hostname,
            # (fetch takes a URL and nothing else: no header to carry them, r89 C1)
            "remove the user:password@ part: fetch sends no credentials (a command can, with "
            "the host in sandbox.policy.network_allow)",
            "fetch: no credentials in URLs",
        )
    if (
        "\\" in parts.netloc
        or not hostname
        or (_ip(hostname) is None and not _valid_name(hostname))
    ):
        raise _Refused("bad-url", "the URL has no valid host", hostname, "check the URL")
    if port_given == 0:
        raise _Refused("bad-url", "port 0 is not a port", hostname, "check the URL")
    # Requests go out as ASCII; quote only what is not already a legal URL character.
    path = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    if parts.query:
        path += "?" + quote(parts.query, safe="/%:@!$&'()*+,;=-._~?")
    return scheme, hostname, port_given or DEFAULT_PORTS[scheme], path


def _resolve(host: str, port: int, resolve: Resolver) -> list[str]:
    if _ip(host) is not None:
        return [host]  # a literal address: nothing to look up
    try:
        infos = list(resolve(host, port, socket.AF_UNSPEC, socket.SOCK_STREAM))
    except (OSError, UnicodeError, ValueError) as e:
        raise _Refused(
            "resolve-failed", f"cannot resolve {host}: {e}", host, "check the host name"
        ) from None
    found: list[str] = []
    for family, _type, _proto, _name, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        text = str(sockaddr[0])
        if _ip(text) is None:
            raise _Refused(
                "resolve-failed",
                f"{host} resolved to a non-address {text!r}",
                host,
                "check the host name",
            )
        if text not in found:
            found.append(text)
    if not found:
        raise _Refused(
            "resolve-failed", f"{host} has no IPv4 or IPv6 address", host, "check the host name"
        )
    return found


def _private_allowed(host: str, allow_private: bool | Sequence[str]) -> bool:
    if isinstance(allow_private, bool):
        return allow_private
    if isinstance(allow_private, str):  # a lone string is one host, not a list of letters
        return host_allowed(host, [allow_private])
    return host_allowed(host, allow_private)


def _check_host(host: str, allow_hosts: Sequence[str]) -> None:
    if not host_allowed(host, allow_hosts):
        empty = " (the list is empty, so nothing may be fetched)" if not allow_hosts else ""
        raise _Refused(
            "host-not-allowed",
            f"{host} is not in {RULE_HOSTS}{empty}",
            host,
            f"add {host} to {RULE_HOSTS}, or to sandbox.policy.network_allow (the shell's "
            "commands then reach it too)",
            RULE_HOSTS,
        )


def check_host(url: str, allow_hosts: Sequence[str], *, layer: str = "") -> None:
    """HttpRefused when the URL is malformed or its host is not allowed: what can be known
    without a DNS lookup (the guard asks it before asking you)."""
    try:
        _check_host(_split(url)[1], allow_hosts)
    except _Refused as refused:
        raise _raise(url, refused, layer) from None


def _check(
    url: str,
    allow_hosts: Sequence[str],
    allow_private: bool | Sequence[str],
    resolve: Resolver,
) -> Checked:
    scheme, host, port, path = _split(url)
    _check_host(host, allow_hosts)
    private_ok = _private_allowed(host, allow_private)
    addresses = _resolve(host, port, resolve)
    for text in addresses:
        ip = _ip(text)
        assert ip is not None  # _resolve only returns parseable addresses
        reason = blocked_address(ip)
        if reason is None or (private_ok and reason not in NEVER_ALLOWED):
            continue
        message = f"{host} resolves to {text} ({reason}); requests to such addresses are refused"
        if reason in NEVER_ALLOWED:
            raise _Refused(
                "private-address",
                message,
                host,
                f"a {reason} address is never a fetch destination",
                f"fetch: no {reason} addresses",
            )
        raise _Refused(
            "private-address",
            message,
            host,
            f"add {host} to {RULE_PRIVATE} if it is meant to reach your own network",
            RULE_PRIVATE,
        )
    return Checked(scheme, host, port, path, tuple(addresses))


def _raise(url: str, refused: _Refused, layer: str, private_layer: str = "") -> HttpRefused:
    # Only the settings come from a layer (allow_private its own: it said allow_hosts', r72d
    # REFUSALLAYER); the fixed rules are the builtin ones.
    where = (
        (private_layer or layer) if refused.rule == RULE_PRIVATE
        else layer if refused.rule == RULE_HOSTS
        else BUILTIN if refused.rule
        else ""
    )  # fmt: skip
    refusal = Refusal(refused.code, url, refused.rule, where, refused.hint, refused.message)
    return HttpRefused(refusal, refused.host)


def check(
    url: str,
    allow_hosts: Sequence[str],
    allow_private: bool | Sequence[str] = False,
    resolve: Resolver = socket.getaddrinfo,
    *,
    layer: str = "",
    private_layer: str = "",
) -> Checked:
    """The URL's parts and resolved addresses, or HttpRefused saying which rule refused it.

    `allow_hosts` and `allow_private` are patterns as expand_hosts returns them; `layer` and
    `private_layer` name the configuration layers they came from, for the refusal.
    """
    try:
        return _check(url, allow_hosts, allow_private, resolve)
    except _Refused as refused:
        raise _raise(url, refused, layer, private_layer) from None


# ---- fetch --------------------------------------------------------------------------------------


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


# identity: the size limit then counts the bytes that arrive, and no decompressor runs on what
# a server chose to send. Fixed: no tool input sets a header (r89 C1: a check of caller headers
# no call could reach).
REQUEST_HEADERS = {"User-Agent": "corral", "Accept": "*/*", "Accept-Encoding": "identity"}


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


def _prepare(
    url: str,
    allow_hosts: Sequence[str],
    allow_private: bool | Sequence[str],
    resolve: Resolver,
    layer: str,
    private_layer: str,
) -> Checked:
    try:
        return _check(url, allow_hosts, allow_private, resolve)
    except _Refused as refused:
        raise _raise(url, refused, layer, private_layer) from None


def fetch(
    url: str,
    allow_hosts: Sequence[str],
    allow_private: bool | Sequence[str] = False,
    max_bytes: int = 1_000_000,
    timeout: float = 20,
    resolve: Resolver = socket.getaddrinfo,
    *,
    layer: str = "",
    private_layer: str = "",
    context: ssl.SSLContext | None = None,
) -> dict[str, Any]:
    """GET `url` through the guard. Never raises for a refused or failed request.

    Success: ok, url, http_status, reason, headers (lowercased names), body (text, cut at max_bytes
    with a notice), truncated, address (the IP connected to), location (absolute, for a
    redirect; None otherwise). Failure: ok=False, url, code, error, and refusal
    (HttpRefused.as_dict(): the Refusal's fields and host) when the guard refused rather than
    the network failing.
    `context` replaces the default TLS context (certificate and host name verification on).
    """
    if max_bytes < 1 or timeout <= 0:
        return _failure(url, "bad-limit", "max_bytes and timeout must be positive")
    try:
        checked = _prepare(url, allow_hosts, allow_private, resolve, layer, private_layer)
    except HttpRefused as e:
        return _failure(url, e.refusal.code, str(e), e.as_dict())
    deadline = time.monotonic() + timeout
    conn: _PinnedHTTP | _PinnedHTTPS
    if checked.scheme == "https":
        conn = _PinnedHTTPS(checked, timeout, context or ssl.create_default_context())
    else:
        conn = _PinnedHTTP(checked, timeout)
    try:
        conn.request("GET", checked.path, headers=REQUEST_HEADERS)
        response = conn.getresponse()
        data, truncated = _read(response, conn.sock, max_bytes, deadline)
    except TimeoutError as e:
        return _failure(url, "timeout", f"timed out after {timeout} s: {e}")
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
    return _success(url, response, data, truncated, max_bytes, conn.address)


def _success(
    url: str,
    response: http.client.HTTPResponse,
    data: bytes,
    truncated: bool,
    max_bytes: int,
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
        body += f"\n[corral: response truncated at {max_bytes} bytes]"
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
