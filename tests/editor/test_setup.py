"""setup(): optional, validated by the engine on first use, idempotent, chat patterns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .conftest import ERROR

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Editor

HOSTS = (
    "return #vim.tbl_filter(function(c) return c.stream == 'job' end, vim.api.nvim_list_chans())"
)


def test_invalid_options_reported_once_and_dropped(fresh: Editor) -> None:
    fresh.lua("require('corral').setup({ sandbox = { mode = 'bogus', polcy = {} } })")
    # setup() itself neither complains nor starts the Python host.
    assert fresh.messages() == []
    assert fresh.lua(HOSTS) == 0

    # The first use: the options are checked, reported, and set aside whole for a
    # read-only sandbox (r72d SETUPFALLBACK: a typo in `mode = "read-only"` left the
    # default, writable mode, said as "safe defaults")
    first = fresh.lua("return { require('corral.sandbox').resolve_config(0) }")
    errors = fresh.messages(ERROR)
    assert len(errors) == 1, fresh.messages()
    assert "sandbox.mode" in errors[0] and "bogus" in errors[0]
    assert "sandbox.polcy" in errors[0]
    assert "setup()" in errors[0] and "read-only sandbox" in errors[0]
    config = fresh.config()
    assert config["values"]["sandbox.mode"] == "read-only"
    assert config["origins"]["sandbox.mode"] == "setup"

    # Later calls neither repeat the message nor pick the options up again.
    fresh.config()
    fresh.lua("return require('corral.sandbox').get_policy(0)")
    assert len(fresh.messages(ERROR)) == 1
    assert fresh.lua("return require('corral.sandbox').is_enabled(0)") is True
    # ... and that first call already gets them instead of failing on the options.
    assert first == [config], f"the first call after an invalid setup() failed: {first[1:]}"


def test_setup_twice_is_idempotent(fresh: Editor) -> None:
    opts = {"sandbox": {"mode": "read-only", "policy": {"env": ["LANG"]}}}
    autocmds = "return #vim.api.nvim_get_autocmds({ group = 'corral_chat' })"
    fresh.lua("require('corral').setup(...)", opts)
    once_config = fresh.config()
    once_autocmds = fresh.lua(autocmds)
    fresh.lua("require('corral').setup(...)", opts)
    assert fresh.config() == once_config
    assert fresh.lua(autocmds) == once_autocmds
    assert once_config["values"]["sandbox.mode"] == "read-only"
    assert once_config["origins"]["sandbox.mode"] == "setup"
    assert once_config["values"]["sandbox.policy.env"] == ["LANG"]
    assert fresh.messages() == []


def test_chat_patterns(fresh: Editor, workspace: Path) -> None:
    fresh.lua("require('corral').setup({ chat = { patterns = { '*.md' } } })")
    frontmatter = '```lua\ncorral.opt.sandbox.mode = "read-only"\n```\n'
    (workspace / "notes.md").write_text(frontmatter + "# notes\n")
    (workspace / "old.chat").write_text(frontmatter)
    md = fresh.edit(workspace / "notes.md")
    assert fresh.lua("return require('corral.chat').is_attached(...)", md) is True
    config = fresh.config(md)
    assert config["values"]["sandbox.mode"] == "read-only"
    assert config["origins"]["sandbox.mode"] == "buffer"
    # The patterns replace the default: *.chat is no longer a chat buffer.
    old = fresh.edit(workspace / "old.chat")
    assert fresh.lua("return require('corral.chat').is_attached(...)", old) is False
    assert fresh.config(old)["values"]["sandbox.mode"] == "workspace-write"
    assert fresh.messages() == []


def test_the_chat_files_watched_before_setup_are_the_schemas_default(
    fresh: Editor, workspace: Path
) -> None:
    """One default, the schema's: plugin/corral.lua and setup() without patterns watch the
    same chat files (the pattern was written out in three places)."""
    from corral.schema import defaults

    lua_default = fresh.lua("return require('corral.chat_files').DEFAULT_PATTERNS")
    assert lua_default == list(defaults()["chat.patterns"])
    watched = (
        "return vim.tbl_map(function(a) return a.pattern end, "
        "vim.api.nvim_get_autocmds({ group = 'corral_chat' }))"
    )
    before = fresh.lua(watched)
    fresh.lua("require('corral').setup({})")
    assert fresh.lua(watched) == before == [*lua_default, *lua_default]
    (workspace / "a.chat").write_text("hello\n")
    buf = fresh.edit(workspace / "a.chat")
    assert fresh.lua("return require('corral.chat').is_attached(...)", buf) is True
