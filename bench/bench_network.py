"""What network by allowlist costs: a no-op `corral run` with corral's proxy against one with no
network, and a large download through the proxy against the same download direct.

    .venv/bin/python bench/bench_network.py [--runs N] [--mb N]

Prints medians and the ratios against the targets (start-up: at most +5 ms; throughput: at
least 80% of direct). Never fails: numbers, not assertions.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from corral.net.allowlist import Allowlist  # noqa: E402
from corral.net.proxy import Proxy  # noqa: E402

SERVER = r"""
import socket, sys
size = int(sys.argv[1])
srv = socket.create_server(("127.0.0.1", 0))
print(srv.getsockname()[1], flush=True)
chunk = b"\0" * 1048576
while True:
    conn, _ = srv.accept()
    with conn:
        conn.recv(4096)  # the CONNECT-forwarded or direct hello
        left = size
        while left > 0:
            conn.sendall(chunk[: min(left, len(chunk))])
            left -= len(chunk)
"""

CLIENT = r"""
import socket, sys, time
port, target = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port))
started = time.perf_counter()
if target != "direct":
    s.sendall(f"CONNECT {target} HTTP/1.1\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
s.sendall(b"hello")
total = 0
buf = bytearray(1048576)
while n := s.recv_into(buf):
    total += n
print(total, time.perf_counter() - started)
"""


def _run(argv: list[str], env: dict[str, str], cwd: str) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def startup(runs: int) -> tuple[float, float]:
    corral = [sys.executable, "-m", "corral", "run"]
    with tempfile.TemporaryDirectory(dir="/var/tmp") as base:
        ws = os.path.join(base, "ws")
        os.mkdir(ws)
        env = {
            **os.environ,
            "XDG_CONFIG_HOME": os.path.join(base, "config"),
            "XDG_CACHE_HOME": os.path.join(base, "cache"),
            "PYTHONPATH": os.path.join(HERE, "..", "python"),
            "PYTHONPYCACHEPREFIX": os.path.join(base, "pyc"),
        }
        env.pop("CORRAL_MODE", None)
        # bytecode cached under the prefix, as an installed corral has it (see bench_run.py)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        plain = [*corral, "--writes", "direct", "--", "true"]
        proxied = [*corral, "--writes", "direct", "--allow-host", "pypi.org", "--", "true"]
        for _ in range(3):
            _run(plain, env, ws)
            _run(proxied, env, ws)
        a, b = [], []
        for i in range(runs):
            pair = (plain, proxied) if i % 2 else (proxied, plain)
            for argv in pair:
                (a if argv is plain else b).append(_run(argv, env, ws))
    return statistics.median(a), statistics.median(b)


def _download(port: int, target: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", CLIENT, str(port), target],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return int(out[0]) / float(out[1]) / 1e6  # MB/s


def throughput(mb: int, runs: int) -> tuple[float, float]:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(mb * 1048576)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        upstream = int(server.stdout.readline())
        listener = socket.create_server(("127.0.0.1", 0))
        proxy = Proxy(Allowlist.parse([f"127.0.0.1:{upstream}"], ["127.0.0.1"]))
        proxy.serve(listener)
        port = listener.getsockname()[1]
        target = f"127.0.0.1:{upstream}"
        direct, proxied = [], []
        for i in range(runs):
            order = (("direct", upstream), (target, port))
            for kind, p in order if i % 2 else order[::-1]:
                (direct if kind == "direct" else proxied).append(_download(p, kind))
        proxy.close()
        return statistics.median(direct), statistics.median(proxied)
    finally:
        server.kill()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--mb", type=int, default=512)
    args = parser.parse_args()
    plain, proxied = startup(args.runs)
    print(f"corral run -- true, no network          median {plain:7.1f} ms")
    print(f"corral run -- true, --allow-host        median {proxied:7.1f} ms")
    delta = proxied - plain
    verdict = "within" if delta <= 5 else "MISSED"
    print(f"  the proxy adds {delta:+.1f} ms (target <= +5 ms: {verdict})")
    direct, through = throughput(args.mb, max(3, args.runs // 4))
    print(f"download {args.mb} MB direct               median {direct:7.0f} MB/s")
    print(f"download {args.mb} MB through the proxy    median {through:7.0f} MB/s")
    ratio = through / direct
    verdict = "within" if ratio >= 0.8 else "MISSED"
    print(f"  through the proxy: {ratio:.0%} of direct (target >= 80%: {verdict})")


if __name__ == "__main__":
    main()
