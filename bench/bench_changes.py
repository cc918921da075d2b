"""What change sets cost: per command, and to apply a large one.

A benchmark, not a test: it prints numbers and ratios and exits 0 once it could measure (2 when
the set-up failed, e.g. no bwrap with overlay support). Run it as

    .venv/bin/python bench/bench_changes.py [--runs N] [--files N]

Per command, measured side by side, round-robin (each round runs every measurement once,
starting at a different one each round), from a temp workspace that is a git repository:

  run, direct writes     `corral run --writes direct -- true`
  run, change set        `corral run -- true`: the overlay, and an empty change set at the end
  argv, direct writes    the argv `corral wrap --writes direct -- true` prints, as jobstart runs it
  argv, change set       the argv `corral wrap -- true` prints: the overlay, and the launcher's
                         empty-change-set test (no Python starts)

The wrapped argvs are made before the rounds (each change-set argv names its own staging area,
so each is run once).

Apply: a change set of N files (default 10,000) in an `npm install`-like tree (N/10 directories,
three levels) is written straight into a staging area's upper directory, then checked and
applied in-process with `corral.changes.finish.finish`, against the floor: os.rename of the
same files into an empty tree on the same file system, with the directories made first.

Targets: a change set adds <= 3 ms per command; applying 10,000 files takes <= 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

TARGET_ADDED_MS = 3.0
TARGET_APPLY_S = 1.0
DEVNULL = subprocess.DEVNULL


def timed(argv: list[str], cwd: str, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    rc = subprocess.run(argv, cwd=cwd, env=env, stdin=DEVNULL, stdout=DEVNULL, stderr=DEVNULL)
    elapsed = time.perf_counter() - t0
    if rc.returncode != 0:
        raise RuntimeError(f"{argv[:4]}... exited with {rc.returncode}")
    return elapsed


def tree(base: str, files: int) -> list[str]:
    """Relative paths of an npm-like tree: package/lib/file-N.js, ten files a directory."""
    paths = []
    for i in range(files):
        d = i // 10
        paths.append(f"node_modules/pkg-{d // 100}/lib-{d % 100}/file-{i}.js")
    return paths


def write_tree(base: str, paths: list[str]) -> None:
    for rel in paths:
        path = os.path.join(base, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("module.exports = 1;\n")


def measure_apply(root: str, files: int, env: dict[str, str]) -> tuple[float, float]:
    """(apply seconds, rename-floor seconds) for `files` files."""
    from corral import config
    from corral.changes import stage as stages
    from corral.changes.finish import finish
    from corral.sandbox import policy

    os.environ.update(env)  # corral's state directory: the temp one
    ws = os.path.join(root, "apply-ws")
    os.mkdir(ws)
    pol = policy.resolve(config.resolve([]), ws, os.environ)
    stage = stages.create(pol)
    paths = tree(ws, files)
    write_tree(stages.upper(stage, 0), paths)
    t0 = time.perf_counter()
    report = finish(stage)
    apply_s = time.perf_counter() - t0
    if report["held"] or report["counts"]["added"] < files:
        counts, held = report["counts"], report["held"][:3]
        raise RuntimeError(f"apply did not apply everything: {counts}, held {held}")

    src, dst = os.path.join(root, "floor-src"), os.path.join(root, "floor-dst")
    write_tree(src, paths)
    t0 = time.perf_counter()
    for d in sorted({os.path.dirname(p) for p in paths}):
        os.makedirs(os.path.join(dst, d), exist_ok=True)
    for rel in paths:
        os.rename(os.path.join(src, rel), os.path.join(dst, rel))
    floor_s = time.perf_counter() - t0
    return apply_s, floor_s


def p90(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=10, method="inclusive")[8]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40, help="measured rounds (default 40)")
    ap.add_argument("--warmup", type=int, default=3, help="unmeasured rounds first (default 3)")
    ap.add_argument("--files", type=int, default=10_000, help="files to apply (default 10000)")
    args = ap.parse_args()
    if args.runs < 2:
        ap.error("--runs must be at least 2")
    corral = os.path.join(os.path.dirname(sys.executable), "corral")
    root = tempfile.mkdtemp(prefix="corral-bench-changes-", dir="/var/tmp")
    try:
        ws = os.path.join(root, "workspace")
        os.mkdir(ws)
        subprocess.run(["git", "init", "-q", ws], check=True)
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("CORRAL_", "XDG_"))
        }  # fmt: skip
        for name in ("CONFIG", "CACHE", "STATE", "DATA"):
            env[f"XDG_{name}_HOME"] = os.path.join(root, name.lower())
        env["PYTHONPYCACHEPREFIX"] = os.path.join(root, "pycache")  # filled by the warm-up
        env.pop("PYTHONDONTWRITEBYTECODE", None)

        def wrapped(*flags: str) -> list[str]:
            out = subprocess.run(
                [corral, "wrap", *flags, "--", "true"], cwd=ws, env=env, check=True,
                capture_output=True, text=True,
            ).stdout  # fmt: skip
            return list(json.loads(out))

        total = args.runs + args.warmup
        try:
            direct_argvs = [wrapped("--writes", "direct") for _ in range(total)]
            change_argvs = [wrapped() for _ in range(total)]
        except subprocess.CalledProcessError as e:
            print(f"bench: corral wrap failed: {e.stderr}", file=sys.stderr)
            return 2
        if not any("--overlay" in a for a in change_argvs[0]):
            print("bench: no overlay in the wrapped argv (no change sets here)", file=sys.stderr)
            return 2

        # The runs get a state directory of their own: the argvs' pending staging areas would
        # make every run's garbage collection look at dozens of them.
        run_env = {**env, "XDG_STATE_HOME": os.path.join(root, "state-runs")}
        measures: dict[str, Callable[[int], float]] = {
            "run, direct writes": lambda i: timed(
                [corral, "run", "--writes", "direct", "--", "true"], ws, run_env
            ),
            "run, change set": lambda i: timed([corral, "run", "--", "true"], ws, run_env),
            "argv, direct writes": lambda i: timed(direct_argvs[i], ws, env),
            "argv, change set": lambda i: timed(change_argvs[i], ws, env),
        }
        names = list(measures)
        times: dict[str, list[float]] = {n: [] for n in names}
        for i in range(total):
            for k in range(len(names)):
                name = names[(i + k) % len(names)]
                elapsed = measures[name](i)
                if i >= args.warmup:
                    times[name].append(elapsed)

        print(f"per command ({args.runs} rounds):")
        for name in names:
            median, high = statistics.median(times[name]) * 1e3, p90(times[name]) * 1e3
            print(f"  {name:22} median {median:7.2f} ms   p90 {high:7.2f} ms")
        for kind in ("run", "argv"):
            added = statistics.median(times[f"{kind}, change set"]) - statistics.median(
                times[f"{kind}, direct writes"]
            )
            ratio = statistics.median(times[f"{kind}, change set"]) / statistics.median(
                times[f"{kind}, direct writes"]
            )
            verdict = "within" if added * 1e3 <= TARGET_ADDED_MS else "OVER"
            print(
                f"  {kind}: a change set adds {added * 1e3:.2f} ms ({ratio:.3f}x), {verdict} the "
                f"{TARGET_ADDED_MS:.0f} ms target"
            )

        apply_s, floor_s = measure_apply(root, args.files, env)
        verdict = "within" if apply_s <= TARGET_APPLY_S else "OVER"
        print(f"apply {args.files} files:")
        per_file = apply_s / args.files * 1e6
        print(f"  check + apply  {apply_s * 1e3:8.1f} ms  ({per_file:.1f} us a file)")
        print(f"  rename floor   {floor_s * 1e3:8.1f} ms  ({apply_s / floor_s:.1f}x the floor)")
        print(f"  {verdict} the {TARGET_APPLY_S:.0f} s target")
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
