"""Drives corral's engine as Neovim's Python host does (one persistent Service, argvs started
as jobstart starts them), for tests/sandbox/test_policy_reuse.py. Not a test itself.

Usage: python policy_reuse_driver.py WORKSPACE WRITES [WRITES ...]; prints JSON: for each
writes mode, what `cat` read after a command wrote a secret, and the reuse counters."""

from __future__ import annotations

import json
import subprocess
import sys

from corral.service import Service


def main() -> None:
    ws = sys.argv[1]
    service = Service(persistent=True)
    assert service.reuse is not None

    def run(command: str, writes: str) -> str:
        request = {
            "cwd": ws,
            "argv": ["sh", "-c", command],
            "layers": {"runtime": {"sandbox": {"writes": writes}}},
        }
        wrapped = service.call("wrap", request)
        assert "argv" in wrapped, wrapped
        done = subprocess.run(
            wrapped["argv"], cwd=ws, capture_output=True, text=True, stdin=subprocess.DEVNULL,
            timeout=60,
        )  # fmt: skip
        if wrapped["stage"]:
            service.call("stop_sandbox", {"stage": wrapped["stage"]})
            service.call("change_report", {"stage": wrapped["stage"], "cwd": ws})
        return done.stdout + done.stderr

    found = {}
    for writes in sys.argv[2:]:
        for _ in range(3):
            run("true", writes)
        kept = service.reuse.hits
        # (the word is put together in the sandbox: only a leak can show it whole)
        made = f'w=CORRAL; mkdir -p "{writes}/sub$$"; printf "${{w}}SECRET" | tee {writes}/.env'
        run(f'{made} "{writes}/sub$$/.env" >/dev/null', writes)
        seen = run(f"cat {writes}/.env {writes}/sub*/.env", writes)
        found[writes] = {
            "seen": seen, "kept": kept, "hits": service.reuse.hits - kept,
            "unsure": service.reuse.unsure,
        }  # fmt: skip
    print(json.dumps(found))


if __name__ == "__main__":
    main()
