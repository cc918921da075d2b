"""The running editor's own configuration and data are never writable from the sandbox, and it
loads no Lua module from the workspace.

DESIGN.md: a writable ~/.local/share lets a sandboxed command rewrite the user's Neovim plugins.
Where XDG_CONFIG_HOME / XDG_DATA_HOME / XDG_STATE_HOME move those directories (a dotfiles
repository opened as the workspace, say), the protection must follow them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from .conftest import Editor

KINDS = ("config", "data", "state")

WRITABLE = """
local out = {}
for _, kind in ipairs({ 'config', 'data', 'state' }) do
  out[kind] = require('corral.sandbox').is_path_writable(vim.fn.stdpath(kind) .. '/init.lua', 0)
end
return out
"""


def test_nvim_dirs_inside_the_workspace_stay_read_only(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    env = {
        "XDG_CONFIG_HOME": str(workspace / "config"),
        "XDG_DATA_HOME": str(workspace / "share"),
        "XDG_STATE_HOME": str(workspace / "state"),
    }
    editor = spawn(cwd=workspace, env=env)
    files = {}
    for kind in KINDS:
        directory = editor.lua("return vim.fn.stdpath(...)", kind)
        assert directory.startswith(str(workspace) + "/"), directory
        files[kind] = f"{directory}/init.lua"
        editor.lua("vim.fn.mkdir(..., 'p')", directory)
        with open(files[kind], "w") as f:
            f.write("-- the user's own\n")

    editor.run_job(
        ["sh", "-c", 'for f; do echo "os.execute([[evil]])" >> "$f"; done', "sh", *files.values()]
    )
    changed = [kind for kind in KINDS if Path(files[kind]).read_text() != "-- the user's own\n"]
    writable = editor.lua(WRITABLE)
    assert changed == [], f"a sandboxed command rewrote Neovim's {changed} files"
    assert writable == dict.fromkeys(KINDS, False)


def test_lua_modules_are_not_looked_for_in_the_workspace(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r7a A6: Lua's search falls back to ./?.lua: a module a sandboxed command wrote to the
    workspace ran in the editor when a config asked for one that is not installed."""
    canary = workspace.parent / (workspace.name + "-CANARY-lua")
    (workspace / "corral_absent_module.lua").write_text(
        f"vim.fn.writefile({{'x'}}, {str(canary)!r})\n"
    )
    ed = spawn(cwd=workspace)
    assert ed.lua("return (pcall(require, 'corral_absent_module'))") is False
    assert not canary.exists()
    assert "./?.lua" not in ed.lua("return package.path")
