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
