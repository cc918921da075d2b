"""The HTTP fetch guard: allowlist, address checks after DNS, pinned connections, limits.

Every name is resolved by a fake resolver and every connection goes to a server the test itself
started on 127.0.0.1 or ::1: nothing here may send a packet anywhere else, so the "public"
addresses below only ever pass through blocked_address, never through a socket.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from corral.net import hosts as host_rules
from corral.net import rules
from corral.toolguard.ops import http as guard
from corral.toolguard.ops import url_rules
from corral.toolguard.ops.refusal import OpError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path
    from typing import Any


def fake_resolver(table: dict[str, Sequence[str]]) -> Callable[..., list[tuple[Any, ...]]]:
    """getaddrinfo over a fixed table; `calls` records the names asked for."""
    calls: list[str] = []

    def resolve(host: str, port: int, *_args: object, **_kw: object) -> list[tuple[Any, ...]]:
        calls.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        out: list[tuple[Any, ...]] = []
        for address in table[host]:
            if ":" in address:
                out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)))
            else:
                out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)))
        return out

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


def no_dns(*_args: object, **_kw: object) -> list[tuple[Any, ...]]:
    raise AssertionError("an address literal must not be looked up")


def refusal_of(url: str, *args: Any, **kw: Any) -> dict[str, str]:
    """The refusal fetch() reports, having sent nothing."""
    got = guard.fetch(url, *args, **kw)
    assert got["ok"] is False and got["refusal"], got
    assert got["code"] == got["refusal"]["code"]
    return got["refusal"]  # type: ignore[no-any-return]


# ---- addresses ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("8.8.8.8", None),
        ("93.184.216.34", None),
        ("172.32.0.1", None),
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),  # cloud instance metadata
        ("169.254.1.1", "link-local"),
        ("100.64.0.1", "cgnat"),
        ("100.100.100.200", "cgnat"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("192.0.2.1", "reserved"),  # documentation
        ("192.0.0.192", "reserved"),  # IETF protocol range (a metadata address)
        ("198.18.0.1", "reserved"),  # benchmarking
        ("2001:4860:4860::8888", None),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("fc00::1", "unique-local"),
        ("fd00:ec2::254", "unique-local"),  # EC2 metadata over IPv6
        ("fec0::1", "reserved"),
        ("ff02::1", "multicast"),
        ("2001:db8::1", "reserved"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"),  # Teredo
        ("::10.0.0.1", "reserved"),  # deprecated IPv4-compatible
        # Forms that carry an IPv4 address are judged by it.
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:8.8.8.8", None),
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        ("64:ff9b::7f00:1", "loopback"),
        ("64:ff9b::a9fe:a9fe", "link-local"),  # NAT64 of 169.254.169.254
        ("64:ff9b::808:808", None),
        ("64:ff9b:1::a00:1", "reserved"),  # local-use NAT64: site-defined layout
        ("2002:a00:1::1", "private"),  # 6to4 of 10.0.0.1
        ("2002:7f00:1::", "loopback"),
        ("2002:808:808::1", None),
    ],
)
def test_blocked_address(address: str, reason: str | None) -> None:
    assert rules.blocked_address(ipaddress.ip_address(address)) == reason


# ---- allowlist ----------------------------------------------------------------------------------


def test_expand_hosts_variables_wildcards_and_normalisation() -> None:
    env = {"API_HOST": "Api.Example.com", "EMPTY": ""}
    got = host_rules.expand_hosts(
        [
            "${API_HOST}",
            "*.Example.ORG",
            "$UNSET_HOST",
            "${MISSING}.example.net",
            "${EMPTY}",
            "${broken",
            "docs.python.org.",
            "api.example.com",
            "[::1]",
            "Bücher.example",
        ],
        env,
    )
    assert got == (
        "api.example.com",
        "*.example.org",
        "docs.python.org",
        "::1",
        "xn--bcher-kva.example",
    )


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("example.com", True),
        ("EXAMPLE.com.", True),
        ("www.example.com", False),
        ("api.example.org", True),
        ("a.b.example.org", True),
        ("example.org", False),  # *.x is subdomains only
        ("evilexample.org", False),
        ("example.org.evil.com", False),
        ("::1", True),
        ("[::1]", True),
        ("0:0:0:0:0:0:0:1", True),
        ("bücher.example", True),
        ("", False),
    ],
)
def test_host_allowed(host: str, allowed: bool) -> None:
    patterns = ("example.com", "*.example.org", "::1", "xn--bcher-kva.example", "ex*ple.net")
    assert host_rules.host_allowed(host, patterns) is allowed


def test_star_allows_any_host_and_the_empty_list_none() -> None:
    assert host_rules.host_allowed("anything.example", ["*"])
    assert not host_rules.host_allowed("anything.example", [])


# ---- the URL's rules, as fetch() and the guard's check_host() apply them ------------------------

PUBLIC = fake_resolver({"example.com": ["93.184.216.34", "2606:2800:220:1::1"]})


def test_the_request_line_is_ascii_and_names_the_host(server: Server) -> None:
    resolve = fake_resolver({"example.com": ["127.0.0.1"]})
    url = f"http://Example.COM:{server.port}/a%20b/ü?q=1&r=ä"
    got = guard.fetch(url, ["example.com"], ["example.com"], resolve=resolve)
    assert got["ok"], got
    assert guard.fetch(f"http://example.com:{server.port}", ["example.com"], ["example.com"],
                       resolve=resolve)["ok"]  # fmt: skip
    assert [s["path"] for s in server.seen] == ["/a%20b/%C3%BC?q=1&r=%C3%A4", "/"]
    assert server.seen[0]["host"] == f"example.com:{server.port}"


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("ftp://example.com/x", "bad-url"),
        ("file:///etc/passwd", "bad-url"),
        ("javascript:alert(1)", "bad-url"),
        ("example.com/x", "bad-url"),
        ("http://user:pw@example.com/", "userinfo"),
        ("http://example.com@evil.example/", "userinfo"),
        ("http://example.com\\@evil.example/", "userinfo"),
        ("http://evil.example#@example.com", "host-not-allowed"),
        ("http://evil.example?@example.com", "host-not-allowed"),
        ("http://exam\nple.com/", "bad-url"),
        ("http://example.com/ a", "bad-url"),
        ("http://example.com:99999/", "bad-url"),
        ("http://example.com:0/", "bad-url"),
        ("http:///nohost", "bad-url"),
        ("http://exa$mple.com/", "bad-url"),
        ("http://a..example.com/", "bad-url"),
        ("http://unknown.example/", "host-not-allowed"),
    ],
)
def test_refused_urls(url: str, code: str) -> None:
    assert refusal_of(url, ["example.com"], resolve=PUBLIC, layer="buffer")["code"] == code
    if code != "userinfo":  # (the guard's check before asking: no DNS, so no addresses)
        with pytest.raises(url_rules.HttpRefused) as caught:
            url_rules.check_host(url, ["example.com"], layer="buffer")
        assert caught.value.refusal.code == code


def test_host_not_allowed_names_the_rule_and_the_fix() -> None:
    with pytest.raises(url_rules.HttpRefused) as caught:
        url_rules.check_host("https://api.other.example/x", ["example.com"], layer="global")
    error = caught.value
    assert isinstance(error, OpError)  # one exception type for every guarded operation
    expected = {
        "code": "host-not-allowed",
        "path": "https://api.other.example/x",
        "host": "api.other.example",
        "rule": "tools.fetch.allow_hosts",
        "layer": "global",
        "hint": "add api.other.example to tools.fetch.allow_hosts, or to "
        "sandbox.policy.network_allow, which lets the shell's commands reach it too",
        "message": "api.other.example is not in tools.fetch.allow_hosts",
    }
    assert error.as_dict() == expected
    got = guard.fetch("https://api.other.example/x", ["example.com"], layer="global")
    assert got["refusal"] == expected
    said = (
        "https://api.other.example/x: api.other.example is not in tools.fetch.allow_hosts "
        "[tools.fetch.allow_hosts, from global]; add api.other.example to tools.fetch.allow_hosts"
        ", or to sandbox.policy.network_allow, which lets the shell's commands reach it too"
    )
    assert got["error"] == str(error) == said


def test_only_the_settings_carry_the_callers_layer() -> None:
    scheme = refusal_of("ftp://example.com/", ["example.com"], layer="buffer")
    assert (scheme["rule"], scheme["layer"]) == ("fetch: http and https only", "builtin")
    bad = refusal_of("http://exa$mple.com/", ["example.com"], layer="buffer")
    assert (bad["rule"], bad["layer"]) == ("", "")


def test_empty_allowlist_refuses_everything() -> None:
    assert "empty" in refusal_of("https://example.com/", [], resolve=PUBLIC)["message"]


def test_dns_rebinding_to_a_private_address_is_refused() -> None:
    resolve = fake_resolver({"api.example.com": ["10.0.0.5"]})
    refusal = refusal_of("https://api.example.com/", ["api.example.com"], resolve=resolve)
    assert refusal["code"] == "private-address"
    assert refusal["rule"] == "tools.fetch.allow_private"
    assert "api.example.com" in refusal["hint"]
    for other in ((), ["other.example"]):
        refusal = refusal_of("https://api.example.com/", ["*.example.com"], other, resolve)
        assert "10.0.0.5 (private)" in refusal["message"]
    for allow in (["api.example.com"], ["*.example.com"]):  # (a connection would leave)
        url_rules.check_addresses("api.example.com", ["10.0.0.5"], allow)


@pytest.mark.parametrize(
    "answers",
    [
        ["93.184.216.34", "127.0.0.1"],
        ["127.0.0.1", "93.184.216.34"],
        ["93.184.216.34", "::ffff:192.168.0.1"],
        ["2606:2800:220:1::1", "fd00::1"],
        ["93.184.216.34", "169.254.169.254"],
    ],
)
def test_one_private_answer_among_public_ones_is_refused(answers: list[str]) -> None:
    resolve = fake_resolver({"mixed.example": answers})
    assert refusal_of("http://mixed.example/", ["mixed.example"], resolve=resolve)["code"] == (
        "private-address"
    )


def test_address_literals_are_checked_without_dns() -> None:
    for url, host in (
        ("http://127.0.0.1:8080/", "127.0.0.1"),
        ("http://[::1]/", "::1"),
        ("http://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1"),
    ):
        refusal = refusal_of(url, [host], resolve=no_dns)
        assert refusal["code"] == "private-address"
        # (not "127.0.0.1 resolves to 127.0.0.1")
        assert refusal["message"].startswith(f"{refusal['host']} is a ")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    got = guard.fetch(f"http://127.0.0.1:{port}/", ["127.0.0.1"], ["127.0.0.1"], no_dns)
    assert got["code"] == "connect-failed" and f"127.0.0.1:{port}" in got["error"]


def test_unspecified_and_multicast_are_refused_even_with_allow_private() -> None:
    resolve = fake_resolver({"zero.example": ["0.0.0.0"], "multi.example": ["ff02::1"]})
    for host in ("zero.example", "multi.example"):
        refusal = refusal_of(f"http://{host}/", [host], [host], resolve)
        assert (refusal["code"], refusal["layer"]) == ("private-address", "builtin")
        assert "never" in refusal["hint"]


def test_resolution_failures_are_refusals() -> None:
    resolve = fake_resolver({"empty.example": []})
    for host in ("empty.example", "missing.example"):
        assert refusal_of(f"http://{host}/", [host], resolve=resolve)["code"] == "resolve-failed"


# ---- fetch from servers the test starts ---------------------------------------------------------


class Recorder(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[dict[str, str]]

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def _send(self, status: int, body: bytes, **headers: str) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
        if self.path == "/hello":
            self._send(200, "héllo wörld".encode(), Content_Type="text/plain; charset=utf-8")
        elif self.path == "/big":
            self._send(200, b"x" * (guard.MAX_BYTES + 5000))
        elif self.path == "/whole":
            self._send(200, b"x" * guard.MAX_BYTES)
        elif self.path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"y" * 50000
            for _ in range(guard.MAX_BYTES // len(chunk) + 1):
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        elif self.path == "/redirect":
            self._send(302, b"", Location="/target")
        elif self.path == "/slow":
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            with contextlib.suppress(OSError):
                for _ in range(100):
                    self.wfile.write(b"z")
                    self.wfile.flush()
                    time.sleep(0.1)
        else:
            self._send(404, b"not found")


class Server:
    def __init__(self, httpd: ThreadingHTTPServer, seen: list[dict[str, str]]) -> None:
        self.httpd = httpd
        self.seen = seen
        self.port = httpd.server_address[1]


class HTTPServer6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


@contextlib.contextmanager
def serve(address: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> Iterator[Server]:
    seen: list[dict[str, str]] = []
    handler = type("Handler", (Recorder,), {"seen": seen})
    httpd = (HTTPServer6 if ":" in address else ThreadingHTTPServer)((address, 0), handler)
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield Server(httpd, seen)
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    with serve() as s:
        yield s


LOCAL = fake_resolver({"localhost": ["127.0.0.1"]})


def test_fetch_returns_the_body(server: Server) -> None:
    url = f"http://localhost:{server.port}/hello"
    got = guard.fetch(url, ["localhost"], ["localhost"], resolve=LOCAL)
    assert got["ok"], got
    assert (got["http_status"], got["body"], got["truncated"]) == (200, "héllo wörld", False)
    assert got["headers"]["content-type"] == "text/plain; charset=utf-8"
    assert (got["address"], got["location"]) == ("127.0.0.1", None)
    assert server.seen[0]["accept-encoding"] == "identity"


def test_fetch_with_the_system_resolver_and_an_address_literal(server: Server) -> None:
    got = guard.fetch(f"http://127.0.0.1:{server.port}/hello", ["127.0.0.1"], ["127.0.0.1"])
    assert got["ok"] and got["body"] == "héllo wörld"


def test_fetch_over_ipv6_loopback() -> None:
    try:
        ctx = serve("::1")
        s = ctx.__enter__()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    try:
        got = guard.fetch(f"http://[::1]:{s.port}/hello", ["::1"], ["::1"], resolve=no_dns)
        assert got["ok"] and got["address"] == "::1"
        assert s.seen[0]["host"] == f"[::1]:{s.port}"
    finally:
        ctx.__exit__(None, None, None)


@pytest.mark.parametrize("path", ["/big", "/chunked"])
def test_fetch_truncates_at_max_bytes(server: Server, path: str) -> None:
    url = f"http://localhost:{server.port}{path}"
    got = guard.fetch(url, ["localhost"], ["localhost"], resolve=LOCAL)
    assert got["ok"] and got["truncated"]
    content, notice = got["body"].split("\n", 1)
    assert len(content) == guard.MAX_BYTES and set(content) <= {"x", "y"}
    assert f"truncated at {guard.MAX_BYTES} bytes" in notice
    url = f"http://localhost:{server.port}/whole"
    whole = guard.fetch(url, ["localhost"], ["localhost"], resolve=LOCAL)
    assert not whole["truncated"] and len(whole["body"]) == guard.MAX_BYTES


def test_fetch_connects_to_the_checked_address_not_a_new_lookup(server: Server) -> None:
    resolve = fake_resolver({"example.test": ["127.0.0.1"]})
    url = f"http://example.test:{server.port}/hello"
    got = guard.fetch(url, ["example.test"], ["example.test"], resolve=resolve)
    assert got["ok"] and got["address"] == "127.0.0.1"
    assert server.seen[0]["host"] == f"example.test:{server.port}"
    assert resolve.calls == ["example.test"]  # type: ignore[attr-defined]


def test_fetch_refuses_loopback_without_allow_private(server: Server) -> None:
    for url, hosts, resolve in (
        (f"http://127.0.0.1:{server.port}/hello", ["127.0.0.1"], no_dns),
        (f"http://localhost:{server.port}/hello", ["localhost"], LOCAL),
    ):
        got = guard.fetch(url, hosts, resolve=resolve, layer="buffer")
        assert not got["ok"]
        assert got["code"] == "private-address"
        assert got["refusal"]["rule"] == "tools.fetch.allow_private"
        assert got["refusal"]["layer"] == "buffer"
        assert got["refusal"]["host"] == hosts[0]
    assert server.seen == []


def test_fetch_reports_a_redirect_without_following_it(server: Server) -> None:
    url = f"http://localhost:{server.port}/redirect"
    got = guard.fetch(url, ["localhost"], ["localhost"], resolve=LOCAL)
    assert got["ok"] and got["http_status"] == 302
    assert got["location"] == f"http://localhost:{server.port}/target"
    assert [s["path"] for s in server.seen] == ["/redirect"]


def test_fetch_total_timeout_bounds_a_slow_body(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(guard, "TIMEOUT", 0.5)  # (the real 20 s, for a test)
    started = time.monotonic()
    url = f"http://localhost:{server.port}/slow"
    got = guard.fetch(url, ["localhost"], ["localhost"], resolve=LOCAL)
    assert got["code"] == "timeout"
    assert time.monotonic() - started < 3


def test_fetch_connection_failure_is_a_result() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    got = guard.fetch(f"http://localhost:{port}/", ["localhost"], ["localhost"], resolve=LOCAL)
    assert (got["ok"], got["code"], got["refusal"]) == (False, "connect-failed", None)


def test_fetch_refusals_are_results() -> None:
    got = guard.fetch("gopher://example.com/", ["example.com"])
    assert got["ok"] is False and got["code"] == "bad-url" and got["refusal"]["code"] == "bad-url"


# ---- TLS: verified against the host name while connecting to the pinned address ----------------


@pytest.fixture(scope="module")
def cert() -> tuple[Path, Path]:
    """A committed self-signed certificate for example.test (tests/unit/data/README)."""
    from pathlib import Path

    data = Path(__file__).parent / "data"
    return data / "example-test.key", data / "example-test.crt"


@pytest.fixture
def tls_server(cert: tuple[Path, Path]) -> Iterator[tuple[Server, list[str | None]]]:
    names: list[str | None] = []
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(cert[1]), str(cert[0]))

    def record(_sock: ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext) -> None:
        names.append(name)

    ctx.sni_callback = record
    with serve(tls=ctx) as s:
        yield s, names


def trusting(cert: tuple[Path, Path]) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert[1]))


TLS_NAMES = fake_resolver({"example.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})


def test_https_sends_sni_and_verifies_the_host_name(
    tls_server: tuple[Server, list[str | None]], cert: tuple[Path, Path]
) -> None:
    server, names = tls_server
    url = f"https://example.test:{server.port}/hello"
    got = guard.fetch(url, ["*.test"], ["*.test"], resolve=TLS_NAMES, context=trusting(cert))
    assert got["ok"] and got["body"] == "héllo wörld", got
    assert names == ["example.test"]
    assert server.seen[0]["host"] == f"example.test:{server.port}"


def test_https_refuses_an_untrusted_or_mismatched_certificate(
    tls_server: tuple[Server, list[str | None]], cert: tuple[Path, Path]
) -> None:
    server, _names = tls_server
    untrusted = guard.fetch(
        f"https://example.test:{server.port}/", ["*.test"], ["*.test"], resolve=TLS_NAMES
    )
    assert untrusted["code"] == "tls"
    mismatched = guard.fetch(
        f"https://other.test:{server.port}/",
        ["*.test"],
        ["*.test"],
        resolve=TLS_NAMES,
        context=trusting(cert),
    )
    assert mismatched["code"] == "tls"
    assert server.seen == []


# ---- the guard, with the sandbox's network off --------------------------------------------------


def offline(ws: Path, url: str, **fetch: Any) -> dict[str, Any]:
    """The guard's answer to a fetch in a sandbox without network, and its summary."""
    from corral.results import shape
    from corral.service import Service

    layers = {"global": {"sandbox": {"mode": "workspace-write"}, "tools": {"fetch": fetch}}}
    request = {"layers": layers, "cwd": str(ws), "tool": "fetch", "input": {"url": url}}
    got: dict[str, Any] = Service().call("guard", {**request, "dry_run": True})
    assert got["decision"] == "deny", got
    got["summary"] = shape("fetch", {"refusal": got["refusal"]}, got, False)["summary"]
    return got


def test_no_network_names_the_host(tmp_path: Path) -> None:
    """r89 FETCHNOHOST: the refusal had no host, and its hint said "the host"."""
    got = offline(tmp_path, "https://Example.com/x")
    refusal = got["refusal"]
    assert (refusal["code"], refusal["host"]) == ("no-network", "example.com")
    assert "add example.com to sandbox.policy.network_allow" in refusal["hint"]
    assert "--allow-host example.com" in refusal["hint"]
    assert got["reason"] == refusal["message"]
    assert refusal["message"].endswith("cannot reach example.com")
    # (no parentheses in the summary, nested or not: r89 MODELTEXTVOICE, r90t MODELTEXTREST)
    assert got["summary"].count("(") == got["summary"].count(")") == 0, got["summary"]


@pytest.mark.parametrize(
    ("url", "code", "host"),
    [
        ("not a url", "bad-url", ""),
        ("ftp://example.com/", "bad-url", "example.com"),
        ("http://127.0.0.1:9/", "private-address", "127.0.0.1"),
        ("http://[::1]/", "private-address", "::1"),
        ("http://0.0.0.0/", "private-address", "0.0.0.0"),
    ],
)
def test_no_network_comes_after_what_is_wrong_with_the_url(
    tmp_path: Path, url: str, code: str, host: str
) -> None:
    """r89 FETCHNOHOST: a URL that could never work was refused as "no network", and its
    trouble learnt only once the user had opened the network."""
    got = offline(tmp_path, url)
    assert (got["refusal"]["code"], got["refusal"]["host"]) == (code, host), got
    assert got["reason"] == got["refusal"]["message"]
    assert got["source"] == (got["refusal"]["rule"] or "fetch")


def test_a_private_address_allowed_is_refused_for_want_of_network(tmp_path: Path) -> None:
    got = offline(tmp_path, "http://127.0.0.1:9/", allow_private=["127.0.0.1"])
    assert (got["refusal"]["code"], got["refusal"]["host"]) == ("no-network", "127.0.0.1")
