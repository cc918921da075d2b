"""An untrusted chat's frontmatter counts only for what narrows, judged on every use (issue 7,
fourth review, F1 and F5): it was judged once, against the layers and the cwd of that moment,
and what narrowed then stayed in force after they changed.

F1: `sandbox.enabled = false` read while `:Sandbox disable` was on counted as no change, and
after `:Sandbox reset` it switched the sandbox off: commands ran on the host.
F5: `rw_paths = {"~/.cargo/bin", ...}` read while the cwd was ~ counted as inside the
workspace; after `:cd ~/proj` a sandboxed command planted an executable on the host's PATH.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .test_execute import execute, result
from .test_frontmatter import lua_block, write_chat

if TYPE_CHECKING:
    from collections.abc import Callable

    from .conftest import Editor


def test_disabling_frontmatter_read_while_disabled_does_not_outlive_the_reset(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    ed = spawn(cwd=workspace)
    chat = write_chat(workspace, lua_block("corral.opt.sandbox.enabled = false"))
    buf = ed.edit(chat)
    assert ed.lua("return require('corral.sandbox').is_enabled(...)", buf) is True
    ed.cmd("Sandbox", "disable")
    ed.lua("vim.cmd('silent write')")  # the chat is read again while the sandbox is off
    ed.cmd("Sandbox", "reset")
    assert ed.lua("return require('corral.sandbox').is_enabled(...)", buf) is True
    config = ed.config(buf)
    assert config["origins"]["sandbox.enabled"] != "buffer", config["origins"]
    execute(ed, "bash", command="cat /proc/1/comm")
    r = result(ed)
    assert r["sandboxed"] is True and r["exit"] == 0, r


def test_paths_that_narrowed_before_a_cd_do_not_widen_after_it(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    home = workspace / "home"
    project = home / "proj"
    target = home / ".cargo" / "bin"
    project.mkdir(parents=True)
    target.mkdir(parents=True)
    chat = write_chat(
        project,
        lua_block("corral.opt.sandbox.policy.rw_paths = { '~/.cargo/bin', 'urn:corral:cwd' }"),
    )
    ed = spawn(cwd=home, env={"HOME": str(home)})  # started in ~, as users often do
    buf = ed.edit(chat)
    ed.cd(project)
    roots = ed.lua("return require('corral.sandbox').get_policy(...).rw_roots", buf)
    assert str(target) not in roots, roots
    execute(ed, "bash", command="touch ~/.cargo/bin/CANARY-planted")
    result(ed)
    assert not (target / "CANARY-planted").exists()
    assert "buffer" not in ed.config(buf)["origins"]["sandbox.policy.rw_paths"]
    ed.cd(home)  # back where it narrows: it counts again
    assert "buffer" in ed.config(buf)["origins"]["sandbox.policy.rw_paths"]


def test_a_rollback_to_once_trusted_bytes_needs_a_new_trust(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """F2: with direct writes, a sandboxed command wrote back the bytes the user had once
    trusted (then narrowed and saved); the trust database still held their hash, and the
    widening came back while corral said the file was no longer trusted."""
    ed = spawn(cwd=workspace)
    ed.lua("require('corral').setup({ sandbox = { writes = 'direct' } }) vim.o.autoread = true")
    trusted = lua_block("corral.opt.sandbox.policy.network = true")
    chat = write_chat(workspace, trusted)
    buf = ed.edit(chat)
    assert ed.lua("return { vim.secure.trust({ action = 'allow', bufnr = ... }) }", buf)[0]
    ed.cmd("Sandbox", "reload")
    assert ed.config(buf)["values"]["sandbox.policy.network"] is True
    # the user narrows it again and saves, without trusting anything
    ed.lua(
        "vim.api.nvim_buf_set_lines(..., 1, 2, false,"
        " { 'corral.opt.sandbox.policy.network = false' }) vim.cmd('silent write')",
        buf,
    )
    assert ed.config(buf)["values"]["sandbox.policy.network"] is False
    chat.write_text(trusted)  # what a sandboxed command can do with direct writes
    ed.cmd("checktime")
    ed.wait_for(
        lambda: (
            "network = true"
            in "".join(ed.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf))
        ),
        what="autoread to reload the chat",
    )
    assert ed.config(buf)["values"]["sandbox.policy.network"] is False
    # trusting it again, as the user, restores it
    assert ed.lua("return { vim.secure.trust({ action = 'allow', bufnr = ... }) }", buf)[0]
    ed.wait_for(
        lambda: ed.config(buf)["values"]["sandbox.policy.network"] is True,
        what="the new trust to apply",
    )


def test_trust_takes_effect_without_a_reload(ed: Editor, workspace: Path) -> None:
    """Issue 9: :trust did nothing until the undocumented :Sandbox reload."""
    chat = write_chat(workspace, lua_block("corral.opt.sandbox.policy.network = true"))
    buf = ed.edit(chat)
    assert ed.config(buf)["values"]["sandbox.policy.network"] is False
    ed.lua("vim.cmd('trust')")
    ed.wait_for(
        lambda: ed.config(buf)["values"]["sandbox.policy.network"] is True,
        what="the trusted frontmatter to apply",
    )


def test_edit_bang_reads_the_frontmatter_again(ed: Editor, workspace: Path) -> None:
    """Issue 9: :e! after the file changed on disk kept the old frontmatter."""
    chat = write_chat(workspace, lua_block('corral.opt.sandbox.mode = "workspace-write"'))
    buf = ed.edit(chat)
    chat.write_text(lua_block('corral.opt.sandbox.mode = "read-only"'))
    ed.lua("vim.cmd('edit!')")
    assert ed.config(buf)["values"]["sandbox.mode"] == "read-only"


def said_read_again(ed: Editor) -> list[str]:
    return [m for m in ed.messages() if "read again" in m]


def test_trust_edit_bang_and_reload_say_what_is_in_force(ed: Editor, workspace: Path) -> None:
    """r89 audit N8: a reload that succeeded said nothing, so it could not be told from one
    that did nothing."""
    chat = write_chat(workspace, lua_block("corral.opt.sandbox.policy.network = true"))
    ed.edit(chat)
    ed.clear_messages()
    ed.lua("vim.cmd('trust')")
    (said,) = ed.wait_for(lambda: said_read_again(ed), what="the confirmation")
    assert said == (
        "corral: frontmatter of talk.chat read again: sandbox.policy.network = true (trusted)"
    ), said

    chat.write_text(lua_block('corral.opt.sandbox.mode = "read-only"'))
    ed.clear_messages()
    ed.lua("vim.cmd('edit!')")
    (said,) = ed.wait_for(lambda: said_read_again(ed), what="the confirmation")
    assert said.endswith('read again: sandbox.mode = "read-only"'), said

    chat.write_text(lua_block("corral.opt.sandbox.policy.network = true") + "more\n")
    ed.clear_messages()
    ed.lua("vim.cmd('edit!')")
    (said,) = ed.wait_for(lambda: said_read_again(ed), what="the confirmation")
    assert said.endswith(
        "read again: nothing; refused, as it is not trusted: 1 that would widen the sandbox"
    ), said

    ed.clear_messages()
    ed.cmd("Sandbox", "reload")
    assert said_read_again(ed) == [said]
    plain = workspace / "plain.txt"
    plain.write_text("no block\n")
    ed.edit(plain)
    ed.clear_messages()
    ed.cmd("Sandbox", "reload")  # (a file of any name becomes a chat)
    assert said_read_again(ed) == [
        "corral: plain.txt read again: no frontmatter settings, yours apply"
    ]


def test_a_frontmatter_gone_when_the_chat_is_read_again_is_said(
    ed: Editor, workspace: Path
) -> None:
    """r51c: a chat saved so that it read back without its block (a command's .editorconfig
    made Neovim write it with CR line ends) dropped its narrowing at :e! without a word."""
    chat = write_chat(workspace, lua_block('corral.opt.sandbox.mode = "read-only"'))
    buf = ed.edit(chat)
    assert ed.config(buf)["values"]["sandbox.mode"] == "read-only"
    ed.clear_messages()
    chat.write_text("@You: the block is gone\n")
    ed.lua("vim.cmd('edit!')")
    ed.wait_for(lambda: any("has no frontmatter" in m for m in ed.messages()), what="the warning")
    (said,) = [m for m in ed.messages() if "has no frontmatter" in m]
    assert "sandbox.mode" in said and "no longer apply" in said, said
    # (a chat you open that never had one says nothing)
    plain = workspace / "plain.chat"
    plain.write_text("@You: hi\n")
    ed.clear_messages()
    ed.edit(plain)
    ed.lua("vim.cmd('edit!')")
    ed.lua("vim.wait(50)")
    assert not [m for m in ed.messages() if "has no frontmatter" in m]


def test_a_modeline_in_a_chat_never_changes_how_it_is_saved(ed: Editor, workspace: Path) -> None:
    """r52c CHATMODELINE: a command printed `vim: set ff=mac :`, the chat plugin put the
    output in the chat; opened again, the modeline set CR line ends, and the next :write
    saved the chat so that it read back as one line, its read-only frontmatter gone."""
    chat = write_chat(workspace, lua_block('corral.opt.sandbox.mode = "read-only"'))
    with chat.open("a") as f:
        f.write("tool: vim: set ff=mac :\n")
    ed.lua("vim.o.modeline = true")  # (the default but for root)
    buf = ed.edit(chat)
    assert ed.lua("return vim.bo[...].fileformat", buf) == "unix"
    ed.lua("vim.api.nvim_buf_set_lines(..., -1, -1, false, { 'more' }) vim.cmd('write')", buf)
    assert b"\r" not in chat.read_bytes()
    # set by hand (or a plugin), the write is refused, saying how to go on
    ed.lua("vim.bo[...].fileformat = 'mac'", buf)
    failed = ed.lua("return { pcall(vim.cmd, 'write') }")
    assert failed[0] is False and "fileformat=unix" in failed[1], failed
    assert b"\r" not in chat.read_bytes()
    assert ed.config(buf)["values"]["sandbox.mode"] == "read-only"


def test_a_verdict_that_followed_a_link_is_not_kept_after_the_link_moves(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """Fifth review, G1: the verdict on an untrusted chat's rw_paths entry was remembered by
    its text, though it had followed a link a sandboxed command can re-point: once the link
    led out, the entry stayed accepted and made a directory outside every writable area
    writable. (The link is in a writable root the user set up through a symlink.)"""
    base = workspace.parent / f"{workspace.name}-g1"
    real, victim = base / "real", base / "victim" / "x"
    (workspace / "in" / "x").mkdir(parents=True)
    real.mkdir(parents=True)
    victim.mkdir(parents=True)
    (base / "lnroot").symlink_to(real)
    (real / "L").symlink_to(workspace / "in")
    chat = write_chat(
        workspace, lua_block(f"corral.opt.sandbox.policy.rw_paths:append('{real}/L/x')")
    )
    ed = spawn(cwd=workspace)
    ed.lua(
        "require('corral').setup({ sandbox = { policy ="
        " { rw_paths = { 'urn:corral:cwd', ... } } } })",
        str(base / "lnroot"),
    )
    buf = ed.edit(chat)
    ed.lua("return require('corral.sandbox').get_policy(...)", buf)
    (real / "L").unlink()
    (real / "L").symlink_to(base / "victim")  # what a command in the writable root can do
    got = ed.lua(
        "local p, err = require('corral.sandbox').get_policy(...) return p and p.rw_roots or err",
        buf,
    )
    assert str(victim) not in (got if isinstance(got, list) else [got]), got


def test_a_rollback_no_buffer_saw_is_not_trusted_either(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """Fifth review, G2: the trust database went on vouching for the bytes trusted first
    after the user narrowed and saved them; written back while no buffer watched the file
    (wiped, or the editor quit), they were trusted again, silently."""
    ed = spawn(cwd=workspace)
    ed.lua("require('corral').setup({ sandbox = { writes = 'direct' } })")
    trusted = lua_block("corral.opt.sandbox.policy.network = true")
    chat = write_chat(workspace, trusted)
    buf = ed.edit(chat)
    assert ed.lua("return { vim.secure.trust({ action = 'allow', bufnr = ... }) }", buf)[0]
    ed.wait_for(lambda: ed.config(buf)["values"]["sandbox.policy.network"] is True, what="trust")
    ed.lua(
        "vim.api.nvim_buf_set_lines(..., 1, 2, false,"
        " { 'corral.opt.sandbox.policy.network = false' }) vim.cmd('silent write')",
        buf,
    )
    ed.lua("vim.cmd('bwipeout!')")
    chat.write_text(trusted)  # written back while no buffer watches it
    buf = ed.edit(chat)
    assert ed.config(buf)["values"]["sandbox.policy.network"] is False


def test_a_chat_opened_under_any_name_is_kept_like_one(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """Fifth review, G2 (second form): a file made a chat with :Sandbox reload whose name
    matches no chat pattern was not held when a command rewrote it. An open chat is kept
    read-only in the sandbox now (r31c: with direct writes nothing else kept it)."""
    # (r32b BRACERW: a name with `{...}` or `$VAR` was spelled out as a pattern, and another
    # path was kept)
    notes = workspace / "notes{1,2}$HOME [x].txt"
    notes.write_text(lua_block('corral.opt.sandbox.mode = "workspace-write"'))
    ed = spawn(cwd=workspace)
    ed.edit(notes)
    ed.cmd("Sandbox", "reload")  # a chat now, though *.txt is no chat pattern
    execute(ed, "bash", command="echo hijacked > 'notes{1,2}$HOME [x].txt'")
    r = result(ed)
    assert notes.read_text().startswith("```lua"), r
    assert r["exit"] != 0 and "Read-only file system" in r["output"], r


def test_a_write_to_an_open_chat_is_told_as_one(ed: Editor, workspace: Path) -> None:
    """r51c CHATROHINT: a write to an open chat was told as one to "a git hook or config, a
    start-up file", with the hint to remove an entry of sandbox.policy.protected that does
    not exist."""
    chat = workspace / "talk.chat"
    chat.write_text("@You: hi\n")
    ed.edit(chat)
    execute(ed, "bash", command="echo hijacked >> talk.chat")
    (seen,) = result(ed)["sandbox_refusals"]
    assert (seen["rule"], seen["what"]) == ("chat.patterns", "a write to an open chat's file")
    assert "sandbox keeps it read-only" not in seen["hint"] and "open in the editor" in seen["hint"]
    # (r51c: a move over it said EBUSY, a hard link of it EXDEV, neither told as the sandbox's)
    execute(ed, "bash", command="echo x > other; mv -f other talk.chat; ln talk.chat hl")
    seen = result(ed)["sandbox_refusals"]
    assert [r["code"] for r in seen] == ["mount", "mount"], seen
    assert all(r["rule"] == "chat.patterns" for r in seen), seen
    execute(ed, "write", path=str(chat), content="hijacked\n")
    refusal = result(ed)["refusal"]
    assert refusal["rule"] == "chat.patterns" and "protected" not in refusal["hint"], refusal
    assert chat.read_text() == "@You: hi\n"


def test_a_chat_swapped_for_a_link_is_neither_written_through_nor_trusted(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """Sixth review, R1: a command swapped the (trusted) chat file for a link to a file you
    once trusted (an exrc outside the workspace); the chat's save wrote through it, and the
    trust update that followed your own write trusted the target with the chat's bytes."""
    outside = workspace.parent / f"{workspace.name}-proj2"
    outside.mkdir()
    exrc = outside / ".nvimrc"
    exrc.write_text('echo "mine"\n')
    ed = spawn(cwd=workspace)
    ed.lua("require('corral').setup({ sandbox = { writes = 'direct' } })")
    trust_db = ed.lua("return vim.fn.stdpath('state') .. '/trust'")
    chat = write_chat(workspace, lua_block("corral.opt.sandbox.policy.network = false"))
    buf = ed.edit(chat)
    assert ed.lua("return { vim.secure.trust({ action = 'allow', bufnr = ... }) }", buf)[0]
    exrc_buf = ed.edit(exrc)
    assert ed.lua("return { vim.secure.trust({ action = 'allow', bufnr = ... }) }", exrc_buf)[0]
    ed.lua("vim.cmd('buffer ' .. ...)", buf)
    before = Path(trust_db).read_text()
    chat.unlink()
    chat.symlink_to(exrc)  # what a command with direct writes can do
    ed.lua("vim.api.nvim_buf_set_lines(..., -1, -1, false, { 'call writefile([], \"x\")' })", buf)
    failed = ed.lua("local ok = pcall(vim.cmd, 'write!') return not ok")
    assert failed, "the chat was written through the link"
    assert exrc.read_text() == 'echo "mine"\n'
    assert Path(trust_db).read_text() == before


def test_a_chat_changed_on_disk_into_a_block_corral_cannot_read_loses_its_trust(
    spawn: Callable[..., Editor], workspace: Path
) -> None:
    """r20b F1: trust was dropped only after corral read the new block; a block corral's
    evaluation refused (`("x"):rep(2)`) left the old trust standing, and the Flemma guard
    let the chat's host-acting Flemma keys through on it."""
    ed = spawn(cwd=workspace)
    ed.lua("require('corral').setup({ sandbox = { writes = 'direct' } })")
    chat = write_chat(workspace, lua_block("corral.opt.sandbox.policy.network = true"))
    buf = ed.edit(chat)
    assert ed.lua("return { vim.secure.trust({ action = 'allow', bufnr = ... }) }", buf)[0]
    ed.wait_for(lambda: ed.config(buf)["values"]["sandbox.policy.network"] is True, what="trust")
    assert ed.lua("return require('corral.state').buffers[...].trusted", buf) is True
    chat.write_text(lua_block('local x = ("x"):rep(2)\ncorral.opt.sandbox.policy.network = true'))
    ed.lua("vim.cmd('checktime') vim.cmd('edit!')")
    ed.wait_for(
        lambda: ed.lua("return require('corral.state').buffers[...].trusted", buf) is False,
        what="the trust to go",
    )


def test_a_chat_not_read_as_utf8_keeps_no_garbled_frontmatter(ed: Editor, workspace: Path) -> None:
    """r53c CHATLATIN1: a byte that is not UTF-8 in a command's output went into the chat;
    opened again, Neovim read it as latin1, and a deny_read path with a `ü` in the block
    became `Ã¼`: it hid nothing, and nothing was said. The output is valid UTF-8 now, and a
    block Neovim read in another encoding is not read, with an error."""
    execute(ed, "bash", command="printf 'a\\377b\\n'")
    assert result(ed)["output"] == "a\ufffdb\n", result(ed)
    # r54c CHATBYTES: a file name that is not UTF-8, through `ls` and corral.text()
    (workspace / "names").mkdir()
    (workspace / "names").joinpath(os.fsdecode(b"x\xffy")).write_text("")
    execute(ed, "ls", path=str(workspace / "names"))  # (in the workspace: unasked, r89 C8)
    assert [e["name"] for e in result(ed)["entries"]] == ["x\ufffdy"], result(ed)
    text = ed.lua("return require('corral').text(...)", result(ed))
    assert "\ufffd" in text and "\udcff" not in text, text
    chat = workspace / "enc.chat"
    block = lua_block('corral.opt.sandbox.policy.deny_read:append("urn:corral:cwd/geheim-ü.txt")')
    chat.write_bytes(block.encode() + b"tool: a\xffb\n")
    ed.clear_messages()
    buf = ed.edit(chat)
    assert ed.lua("return vim.bo[...].fileencoding", buf) == "latin1"
    ed.wait_for(lambda: any("is not UTF-8" in m for m in ed.messages()), what="the error")
    denied = ed.config(buf)["values"]["sandbox.policy.deny_read"]
    assert not any("Ã" in d for d in denied), denied
