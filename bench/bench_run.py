"""How much does `corral run -- true` cost over starting bwrap directly?

A benchmark, not a test: it prints numbers and ratios and always exits 0 once it could measure
(2 when the set-up itself failed, e.g. no working bwrap). Run it as

    .venv/bin/python bench/bench_run.py [--runs N] [--warmup N] [--as-is]

Measured side by side, round-robin (each round runs every measurement once, starting at a
different one each round) so machine noise hits them all alike:

  corral run -- true   the console script next to sys.executable, from a temp workspace
  env -i bwrap         the exact argv `corral wrap -- true` prints (env -i K=V ... sh launcher
                       ... bwrap ...)
  bare bwrap           bwrap itself with the same arguments (without the launcher and its
                       --seccomp), its environment passed by the spawn call instead
  python -c pass       the interpreter's own start-up (context: corral's floor)
  resolve + argv       in-process: config.resolve + policy.resolve + BwrapBackend().argv
  resolve + wrap       what `corral run` does in-process: the same plus a fresh registry's
                       backend selection (probe answer cached), status pipe, seccomp program

The bare bwrap argv is the one `corral run` builds minus `--json-status-fd` and `--seccomp`
(both cost bwrap next to nothing). Config and cache dirs point at a
temp dir (the first corral call probes bwrap once and caches it there; warm-up absorbs it), and
bytecode is cached under a temp PYTHONPYCACHEPREFIX unless --as-is.

Targets: resolve + argv <= 1 ms median; `corral run -- true` within 6x of bare bwrap.
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

TARGET_RESOLVE_MS = 1.0
TARGET_RATIO = 6.0
DEVNULL = subprocess.DEVNULL

failures: dict[str, int] = {}  # argv[0] -> non-zero exits while measuring


def spawner(argv: list[str], cwd: str, env: dict[str, str]) -> Callable[[], float]:
    """A callable that runs `argv` once and returns its wall time in seconds."""

    def once() -> float:
        t0 = time.perf_counter()
        rc = subprocess.run(
            argv, cwd=cwd, env=env, stdin=DEVNULL, stdout=DEVNULL, stderr=DEVNULL
        ).returncode
        elapsed = time.perf_counter() - t0
        if rc != 0:
            failures[argv[0]] = failures.get(argv[0], 0) + 1
        return elapsed

    return once


def split_env_prefix(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """`env -i K=V ... CMD ...` -> ({K: V}, [CMD, ...])."""
    if len(argv) < 2 or os.path.basename(argv[0]) != "env" or argv[1] != "-i":
        raise ValueError(f"expected an `env -i ...` argv, got {argv[:3]!r}")
    env: dict[str, str] = {}
    i = 2
    while i < len(argv) and "=" in argv[i] and not argv[i].startswith("/"):
        key, _, value = argv[i].partition("=")
        env[key] = value
        i += 1
    return env, argv[i:]


def resolver(cwd: str) -> tuple[Callable[[], float], Callable[[], float]]:
    """In-process timers: resolve + argv (warmed backend), and resolve + wrap as `run` does."""
    from corral import config
    from corral.sandbox import policy
    from corral.sandbox.backends import default_registry
    from corral.sandbox.backends.bwrap import BwrapBackend

    backend = BwrapBackend()
    warm = policy.resolve(config.resolve([]), cwd, os.environ)
    reason = backend.available(warm)  # the probe (disk-cached by now), outside the timing
    if reason is not None:
        raise RuntimeError(f"bwrap backend unavailable: {reason}")

    def resolve_argv() -> float:
        t0 = time.perf_counter()
        resolved = config.resolve([])
        pol = policy.resolve(resolved, cwd, os.environ)
        backend.argv(pol, ["true"])
        return time.perf_counter() - t0

    def resolve_wrap() -> float:
        # What `corral run` does per process past its imports: a new registry and backend (so
        # candidate lookup and the probe's cache key are paid; the probe answer is in memory),
        # the status pipe and the seccomp program.
        t0 = time.perf_counter()
        resolved = config.resolve([])
        pol = policy.resolve(resolved, cwd, os.environ)
        wrapped = default_registry().wrap(pol, ["true"], launcher_fds=True)
        elapsed = time.perf_counter() - t0
        for fd in (*wrapped.fds, wrapped.status_fd):
            if fd is not None:
                os.close(fd)
        return elapsed

    return resolve_argv, resolve_wrap


def p90(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=10, method="inclusive")[8]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=60, help="measured rounds (default 60)")
    ap.add_argument("--warmup", type=int, default=5, help="unmeasured rounds first (default 5)")
    ap.add_argument(
        "--as-is",
        action="store_true",
        help="keep the environment's bytecode settings (PYTHONDONTWRITEBYTECODE & co) instead "
        "of caching bytecode in a temp PYTHONPYCACHEPREFIX",
    )
    args = ap.parse_args()
    if args.runs < 2:
        ap.error("--runs must be at least 2")

    corral = os.path.join(os.path.dirname(sys.executable), "corral")
    if not os.access(corral, os.X_OK):
        print(f"bench: no corral console script at {corral}", file=sys.stderr)
        return 2

    root = tempfile.mkdtemp(prefix="corral-bench-")
    try:
        ws = os.path.join(root, "workspace")
        os.mkdir(ws)
        # Fresh config and cache dirs: the user's config.toml and probe cache stay out of it.
        # The first corral call then probes bwrap once (~10 ms) and caches the answer there.
        xdg = {
            "XDG_CONFIG_HOME": os.path.join(root, "config"),
            "XDG_CACHE_HOME": os.path.join(root, "cache"),
        }
        os.environ.update(xdg)  # the in-process resolution sees what the CLI sees
        os.environ.pop("CORRAL_MODE", None)
        env = dict(os.environ)
        if not args.as_is:
            # An installed corral runs from compiled bytecode; a dev shell with
            # PYTHONDONTWRITEBYTECODE=1 and an editable install recompiles every corral module
            # on each start (~20 ms). Cache bytecode under the temp dir (python/ stays
            # untouched); the warm-up rounds fill it.
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = os.path.join(root, "pycache")

        done = subprocess.run(
            # --writes direct: the plain bwrap argv (a change-set argv names a staging area
            # that is used once); `corral run` below keeps the default, its cost included.
            [corral, "wrap", "--writes", "direct", "--", "true"],
            cwd=ws, env=env, capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0:
            print(f"bench: `corral wrap -- true` failed: {done.stderr.strip()}", file=sys.stderr)
            return 2
        wrapped = json.loads(done.stdout)
        bwrap_env, bwrap_argv = split_env_prefix(wrapped)
        # `corral wrap` puts a small sh launcher before bwrap (it opens the seccomp filter on
        # descriptor 3), behind a guard that closes inherited descriptors (`sh -c GUARD
        # PYTHON`): bare bwrap is bwrap itself, without them and its --seccomp.
        if os.path.basename(bwrap_argv[0]) == "sh" and "exec 3>&-" in bwrap_argv[2]:
            bwrap_argv = bwrap_argv[4:]
        if os.path.basename(bwrap_argv[0]) == "sh" and bwrap_argv[1] == "-c":
            bwrap_argv = bwrap_argv[4:]
            at = bwrap_argv.index("--seccomp")
            del bwrap_argv[at : at + 2]
        # ... and without the prlimit that sets the resource limits inside the sandbox: its
        # cost is corral's, and shows in the ratio.
        end = bwrap_argv.index("--")
        if os.path.basename(bwrap_argv[end + 1]) == "prlimit":
            del bwrap_argv[end + 1 : bwrap_argv.index("--", end + 1) + 1]
        if os.path.basename(bwrap_argv[0]) != "bwrap":
            print(f"bench: not a bwrap argv (sandbox off?): {bwrap_argv[:3]}", file=sys.stderr)
            return 2

        resolve_argv, resolve_wrap = resolver(ws)
        measures: dict[str, Callable[[], float]] = {
            "corral run -- true": spawner([corral, "run", "--", "true"], ws, env),
            "env -i bwrap -- true": spawner(wrapped, ws, env),
            "bare bwrap -- true": spawner(bwrap_argv, ws, bwrap_env),
            "python -c pass": spawner([sys.executable, "-c", "pass"], ws, env),
            "resolve + argv": resolve_argv,
            "resolve + wrap (as run)": resolve_wrap,
        }
        names = list(measures)
        samples: dict[str, list[float]] = {n: [] for n in names}
        for rnd in range(args.warmup + args.runs):
            if rnd == args.warmup:
                failures.clear()
            for k in range(len(names)):
                name = names[(rnd + k) % len(names)]  # rotate who goes first
                elapsed = measures[name]()
                if rnd >= args.warmup:
                    samples[name].append(elapsed)

        probe_cache = os.path.join(xdg["XDG_CACHE_HOME"], "corral", "bwrap-probe.marshal")
        report(samples, args, bwrap_argv[0], os.path.exists(probe_cache))
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


def report(samples: dict[str, list[float]], args: argparse.Namespace, bwrap: str, cached: bool):
    ms = {n: [x * 1000 for x in xs] for n, xs in samples.items()}
    med = {n: statistics.median(xs) for n, xs in ms.items()}
    print(
        f"corral bench: {args.runs} rounds (+{args.warmup} warm-up), "
        f"{os.cpu_count()} CPUs, python {sys.version.split()[0]}, "
        f"bytecode {'as the environment has it' if args.as_is else 'cached (temp prefix)'}"
    )
    print(f"bwrap {bwrap}")
    for name, xs in ms.items():
        if name.startswith("resolve"):
            print(f"{name:<24}median {med[name]:5.2f} ms  p90 {p90(xs):5.2f} ms")
        else:
            print(f"{name:<24}median {med[name]:5.1f} ms  p90 {p90(xs):5.1f} ms")
    ratio = med["corral run -- true"] / med["bare bwrap -- true"]
    run, python, bare = (
        med[n] for n in ("corral run -- true", "python -c pass", "bare bwrap -- true")
    )
    resolve = med["resolve + argv"]

    def verdict(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    print(
        f"ratio run/bwrap         {ratio:4.1f}x  (target <= {TARGET_RATIO:g}x)  "
        f"{verdict(ratio <= TARGET_RATIO)}"
    )
    print(
        f"resolve + argv          {resolve:4.2f} ms (target <= {TARGET_RESOLVE_MS:g} ms)  "
        f"{verdict(resolve <= TARGET_RESOLVE_MS)}"
    )
    print(
        f"run = python {python:.1f} + bwrap {bare:.1f} + corral {run - python - bare:.1f} ms "
        "(medians; corral = imports + resolve + spawn)"
    )
    if failures:
        print(f"WARNING: non-zero exits during measurement: {failures}")
    if not cached:
        print("WARNING: no bwrap probe cache was written; every corral run may have probed")


if __name__ == "__main__":
    sys.exit(main())
