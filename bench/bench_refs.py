"""What the git-history check costs when a command writes many refs.

A benchmark, not a test: it prints numbers and ratios and exits 0 once it could measure (2 when
the set-up failed). Run it as

    .venv/bin/python bench/bench_refs.py [--runs N] [--refs N]

A repository with N branches naming its one commit (made as an earlier change set would leave
them) is copied afresh for each measurement; the command then makes one new commit and N new
branches naming it (`git commit-tree`, then one file a ref). Measured side by side, alternating:

  direct writes   `corral run --writes direct -- sh -c ...`: the refs land, nothing is checked
  change set      `corral run -- sh -c ...`: each new ref file is checked, then applied

Review r51a REFSQUARE: each ref file met the new commit with every host ref again, so the
check grew with refs x refs (5,000 by 5,000: 20 s, the user's lock held meanwhile). Target:
the change set within 4x of direct writes at 3,000 refs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_RATIO = 4.0
MAKE = """set -e
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@e GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@e
B=$(printf 'hello\\n' | git hash-object -w --stdin)
T=$( (git ls-tree HEAD; printf '100644 blob %s\\tnotes.txt\\n' "$B") | git mktree)
C=$(git commit-tree -p HEAD -m c "$T")
i=0; while [ $i -lt {n} ]; do echo "$C" > .git/refs/heads/c$i; i=$((i+1)); done
"""


def template(root: str, refs: int, env: dict[str, str]) -> str:
    repo = os.path.join(root, "template")
    git = ["git", "-C", repo, "-c", "user.name=u", "-c", "user.email=u@e"]
    subprocess.run(["git", "init", "-q", repo], check=True, env=env)
    with open(os.path.join(repo, "README"), "w") as f:
        f.write("hello\n")
    subprocess.run([*git, "add", "-A"], check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "init"], check=True, env=env)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, env=env, capture_output=True, text=True
    ).stdout.strip()
    heads = os.path.join(repo, ".git", "refs", "heads")
    for i in range(refs):
        with open(os.path.join(heads, f"b{i}"), "w") as f:
            f.write(head + "\n")
    return repo


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="measured rounds (default 5)")
    ap.add_argument("--refs", type=int, default=3000, help="refs on each side (default 3000)")
    args = ap.parse_args()
    corral = os.path.join(os.path.dirname(sys.executable), "corral")
    root = tempfile.mkdtemp(prefix="corral-bench-refs-", dir="/var/tmp")
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CORRAL_", "XDG_"))}
        for name in ("CONFIG", "CACHE", "STATE", "DATA"):
            env[f"XDG_{name}_HOME"] = os.path.join(root, name.lower())
        try:
            repo = template(root, args.refs, env)
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"bench: set-up failed: {e}", file=sys.stderr)
            return 2
        body = MAKE.format(n=args.refs)
        kinds = {"direct writes": ["--writes", "direct"], "change set": []}
        times: dict[str, list[float]] = {k: [] for k in kinds}
        for i in range(args.runs):
            for k, kind in enumerate(kinds if i % 2 == 0 else reversed(kinds)):
                ws = os.path.join(root, f"ws-{i}-{k}")
                shutil.copytree(repo, ws, symlinks=True)
                t0 = time.perf_counter()
                rc = subprocess.run(
                    [corral, "run", *kinds[kind], "--", "sh", "-c", body], cwd=ws, env=env,
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE, text=True,
                )  # fmt: skip
                times[kind].append(time.perf_counter() - t0)
                landed = len(os.listdir(os.path.join(ws, ".git", "refs", "heads")))
                if rc.returncode != 0 or landed != 2 * args.refs + 1:  # (and the first branch)
                    print(f"bench: {kind}: rc {rc.returncode}, {landed} refs: {rc.stderr}")
                    return 2
                shutil.rmtree(ws)
        print(f"{args.refs} new refs to one new commit, as many on the host ({args.runs} runs):")
        for kind in kinds:
            print(f"  {kind:14} median {statistics.median(times[kind]):6.2f} s")
        ratio = statistics.median(times["change set"]) / statistics.median(times["direct writes"])
        verdict = "within" if ratio <= TARGET_RATIO else "OVER"
        print(f"  change set / direct {ratio:.2f}x, {verdict} the {TARGET_RATIO:.0f}x target")
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
