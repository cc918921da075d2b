"""The remote plugin finds its own engine whatever the first call is (issue 9, the blocker):
a personal install puts the plugin on the runtimepath and gives the host Python only the
dependencies, so `corral` is importable only from the plugin's python/ directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A host Python without corral installed: the editable install's path entry removed first.
PROBE = """
import json, sys
engine = {engine!r}
sys.path[:] = [p for p in sys.path if p.rstrip("/") != engine]
sys.path.insert(0, {rplugin!r})
try:
    import corral
    raise SystemExit("corral importable before the plugin loaded it: the probe means nothing")
except ModuleNotFoundError:
    pass
from corral_rplugin import CorralPlugin
print(json.dumps(CorralPlugin(None).call(["engine_info", {{}}])))
"""


def test_engine_info_as_the_first_call_finds_the_plugins_engine() -> None:
    code = PROBE.format(engine=str(ROOT / "python"), rplugin=str(ROOT / "rplugin" / "python3"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["path"] == str(ROOT / "python" / "corral")
