"""`corral run -- true` of this tree against another commit's, side by side in one run.

    .venv/bin/python bench/bench_versions.py BASE [--runs N] [--cwd DIR]

BASE's `python/` is taken with `git archive` into a temporary directory; both trees run from
the same interpreter, alternating in every round (so machine noise hits both alike), with the
user's own HOME and caches: what a user's `corral run` costs, the shown tool homes and their
secrets walk included. Prints each median and p90 and the ratio. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(pythonpath: str, cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "corral", "run", "--", "true"],
        env={**os.environ, "PYTHONPATH": pythonpath},
        cwd=cwd,
        check=True,
        capture_output=True,
    )
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cwd", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as ws:
        archive = subprocess.run(
            ["git", "-C", HERE, "archive", args.base, "python"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        trees = {args.base: os.path.join(tmp, "python"), "this tree": os.path.join(HERE, "python")}
        cwd = args.cwd or ws
        for _ in range(5):  # (warm-up: bytecode, corral's caches)
            for path in trees.values():
                _run(path, cwd)
        times: dict[str, list[float]] = {name: [] for name in trees}
        for i in range(args.runs):
            order = list(trees.items()) if i % 2 == 0 else list(reversed(trees.items()))
            for name, path in order:
                times[name].append(_run(path, cwd))
    for name, values in times.items():
        p90 = sorted(values)[int(len(values) * 0.9)]
        print(f"{name:12} median {statistics.median(values):6.1f} ms  p90 {p90:6.1f} ms")
    base, this = (statistics.median(v) for v in times.values())
    print(f"ratio this tree / {args.base}: {this / base:.2f}")


if __name__ == "__main__":
    main()
