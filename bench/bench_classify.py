"""How many bash commands per second does the classifier get through?

A benchmark, not a test: it prints numbers and always exits 0. Run it as

    .venv/bin/python bench/bench_classify.py [--runs N] [--size N]

The corpus is a fixed sample of the unit tests' commands (everyday reads, evasions of every
family, privileged commands; one to a few hundred characters each). Each round measures:

  cold    the LRU cache cleared, then every command classified once (bashlex parse + walk)
  cached  the same commands again, each answered from the cache

Printed: the median over the rounds of classifications per second and of microseconds per
classification, for each. The first classification in the process also imports bashlex and
the rules; that one-off cost is printed on its own, outside the rounds.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "tests", "unit")]

from test_classify import EVASIONS, EVERYDAY_READS, PRIVILEGED_COMMANDS  # noqa: E402

from corral.toolguard.classify import RISK, classify  # noqa: E402


def corpus(size: int) -> list[str]:
    commands = sorted(set(EVERYDAY_READS + EVASIONS + PRIVILEGED_COMMANDS))
    return random.Random(0).sample(commands, min(size, len(commands)))


def timed(commands: list[str]) -> float:
    t0 = time.perf_counter()
    for command in commands:
        classify(command)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="measured rounds (default 7)")
    ap.add_argument("--size", type=int, default=200, help="commands in the corpus (default 200)")
    args = ap.parse_args()
    commands = corpus(args.size)

    t0 = time.perf_counter()
    classify.__wrapped__("ls")  # imports bashlex and the rules
    first = time.perf_counter() - t0

    cold: list[float] = []
    cached: list[float] = []
    for _ in range(max(1, args.runs)):
        classify.cache_clear()
        cold.append(timed(commands))
        cached.append(timed(commands))

    kinds = {kind: 0 for kind in RISK}
    for command in commands:
        kinds[classify(command).kind] += 1
    n = len(commands)
    print(f"corpus: {n} commands, {sum(map(len, commands)) / n:.0f} characters on average")
    print("        " + ", ".join(f"{count} {kind}" for kind, count in kinds.items()))
    print(f"first use (imports bashlex and the rules): {first * 1e3:.1f} ms")
    print(f"{'':8} {'per second':>12} {'per command':>14}   (median of {len(cold)} rounds)")
    for name, times in (("cold", cold), ("cached", cached)):
        median = statistics.median(times)
        print(f"{name:8} {n / median:12,.0f} {median / n * 1e6:11.1f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
