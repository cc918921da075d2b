"""Network by allowlist for commands Neovim starts: the editor's Python host runs corral's
proxy for each job (corral.net.hub), through real bwrap and a real headless Neovim. The
upstream server listens on the host's loopback in the test process; what it received is
checked after the job ended."""

from __future__ import annotations

import socket
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .conftest import Editor

CLIENT = r"""
import os, sys, urllib.error, urllib.request
for name in ("NO_PROXY", "no_proxy"):
    os.environ.pop(name, None)
port = int(sys.argv[1])
print("BODY", urllib.request.urlopen(f"http://localhost:{port}/ok", timeout=10).read().decode())
try:
    urllib.request.urlopen("http://evil.test/x", timeout=10)
except urllib.error.HTTPError as e:
    print("REFUSED", e.code)
"""


def _upstream() -> tuple[socket.socket, list[bytes]]:
    sock = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data and (chunk := conn.recv(4096)):
                    data += chunk
                seen.append(data)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nUPSTREAM")

    threading.Thread(target=serve, daemon=True).start()
    return sock, seen


def test_a_job_reaches_the_allowed_host_and_the_refusal_is_reported(
    ed: Editor,
) -> None:
    sock, seen = _upstream()
    port = sock.getsockname()[1]
    try:
        ed.lua(
            "require('corral').setup({ sandbox = { policy = { network_allow = { ... }, "
            "network_private = { 'localhost' } } } })",
            f"localhost:{port}",
        )
        result = ed.run_job(["python3", "-c", CLIENT, str(port)], timeout=30)
    finally:
        sock.shutdown(socket.SHUT_RDWR)  # (wakes the accept(): closed alone, it listens on)
        sock.close()
        ed.lua("require('corral').setup({})")
    out = "\n".join(result["out"])
    assert "BODY UPSTREAM" in out, result
    assert "REFUSED 403" in out, result
    assert len(seen) == 1 and seen[0].startswith(b"GET /ok HTTP/1.1"), seen
    assert any("blocked connection to evil.test:80" in line for line in result["repairs"]), result


def test_the_model_is_told_what_the_proxy_refused(ed: Editor) -> None:
    """r61c PROXYREASON, r64c PROXYREFUSAL: a host not on the allowlist was "exit 56" to the
    model, the reason only in what the user reads (`repairs`)."""
    from .test_execute import call

    ed.lua(
        "require('corral').setup({ sandbox = { policy = { network_allow = { 'example.org' } } },"
        " tools = { approval = 'full' } })"
    )
    client = (
        "import urllib.error, urllib.request\n"
        'try:\n    urllib.request.urlopen("http://evil.test/x", timeout=10)\n'
        'except urllib.error.HTTPError as e:\n    print("REFUSED", e.code)\n'
    )
    try:
        r = call(ed, "bash", command=f"env -u NO_PROXY -u no_proxy python3 -c '{client}'")
    finally:
        ed.lua("require('corral').setup({})")
    assert "REFUSED 403" in r["output"], r
    [refusal] = r["sandbox_refusals"]
    assert refusal["code"] == "network", r
    blocked = "blocked connection to evil.test:80: not in sandbox.policy.network_allow"
    assert refusal["message"] == blocked, r
    assert blocked in r["summary"], r["summary"]
