"""A stand-in for a terminal coding agent (tests/sandbox/test_terminal_agent.py): it writes
its state directory, reads its API key, and runs commands of its own, as one would."""

import json
import os
import subprocess
import sys

home = os.path.expanduser("~")
report = {
    "key": bool(os.environ.get("ANTHROPIC_API_KEY")),
    "other_key": bool(os.environ.get("OPENAI_API_KEY")),
}
with open(os.path.join(home, ".claude", "session.json"), "w") as f:
    json.dump({"turns": 1}, f)
with open(os.path.join(home, ".claude.json"), "w") as f:
    f.write('{"numStartups": 2}\n')
for command in (
    "echo made > made.txt",
    "cat ~/.ssh/id_ed25519 ~/.ssh/id_rsa",
    "echo 'touch CANARY' > .git/hooks/pre-commit",
):
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True)
    report[command] = done.returncode
    sys.stderr.write(done.stdout + done.stderr)
print(json.dumps(report))
