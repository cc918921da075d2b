"""One configuration for both frontends (issue 9): Neovim reads ~/.config/corral/config.toml
as the CLI does, under setup(); a broken file is reported, never silently ignored."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .conftest import Editor


def editor_with_config(spawn: Callable[..., Any], workspace: Path, text: str) -> Editor:
    config_home = workspace.parent / f"config-{workspace.name}"
    (config_home / "corral").mkdir(parents=True)
    (config_home / "corral" / "config.toml").write_text(text)
    return spawn(cwd=workspace, env={"XDG_CONFIG_HOME": str(config_home)})


def test_the_config_file_is_the_editors_first_layer(spawn: Any, workspace: Path) -> None:
    ed = editor_with_config(spawn, workspace, '[sandbox]\nmode = "read-only"\n')
    config = ed.config()
    assert config["values"]["sandbox.mode"] == "read-only"
    assert config["origins"]["sandbox.mode"] == "config file"
    ed.lua("require('corral').setup({ sandbox = { policy = { network = true } } })")
    assert ed.config()["values"]["sandbox.mode"] == "read-only"  # setup() layers over it
    assert ed.config()["values"]["sandbox.policy.network"] is True
    # r89 audit N7: both layers were "global"; status tells them apart now
    origins = ed.config()["origins"]
    assert (origins["sandbox.mode"], origins["sandbox.policy.network"]) == ("config file", "setup")
    status = "\n".join(
        ed.lua(
            "return require('corral.engine').call('status_text', "
            "require('corral.engine').request(0))"
        ).splitlines()
    )
    assert "(config file)" in status and "(setup)" in status, status


def test_a_broken_config_file_is_an_error_naming_it(spawn: Any, workspace: Path) -> None:
    ed = editor_with_config(spawn, workspace, "[sandbox\nmode = ")
    result = ed.lua(
        "local c, err = require('corral.sandbox').resolve_config(0) return { c == nil, err }"
    )
    assert result[0] is True
    assert "config.toml" in result[1] and "not valid TOML" in result[1], result
