"""What the hook managers' installed hooks run, as corral finds it (sandbox.protect)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from corral.sandbox.protect import hookmanagers

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_a_prek_walk_cut_short_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """r68a PREKWALK: prek's nested projects were looked for in the first 4,000 entries, and
    past them nothing was said: a command's 4,100 files hid a nested project's `entry:`
    script, rewritten in its next run. Past the walk it is unknown (the workspace's change
    sets are then held, as for any config corral cannot read ahead)."""
    hooks = tmp_path / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "pre-commit").write_text("#!/bin/sh\nexec prek hook-impl --hook-type=pre-commit\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "prek.toml").write_text("")
    found = hookmanagers.detect(str(tmp_path), [str(hooks)])
    assert found.unknown == [] and str(tmp_path / "pkg" / "prek.toml") in found.files
    monkeypatch.setattr(hookmanagers, "MAX_WALK", 3)
    for i in range(4):
        (tmp_path / "data" / str(i)).mkdir(parents=True)
    found = hookmanagers.detect(str(tmp_path), [str(hooks)])
    [(config, runs, _)] = found.unknown
    assert config == str(tmp_path / "prek.toml") and "every project below" in runs, runs


def test_hks_config_is_found_from_its_installed_hook(tmp_path: Path) -> None:
    """r69a HKPKL: hk's installed hook (`hk run pre-commit`) names no file, and its Pkl
    config, whose steps it runs, was not kept."""
    hooks = tmp_path / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "pre-commit").write_text('#!/bin/sh\n"$HOME/.local/bin/hk" run pre-commit "$@"\n')
    found = hookmanagers.detect(str(tmp_path), [str(hooks)])
    assert str(tmp_path / "hk.pkl") in found.files, found.files


def test_the_words_of_hooks_name_venv_runners_modules_and_path_dirs() -> None:
    """r75a VENVRUNNEROPT (`uv -q run`: an option between), PYMODMAIN (a package's
    __main__.py), HOOKPATHSPELL (a PATH value with `$(...)` before the directory)."""
    from corral.sandbox.protect.hookwords import _module_files, _path_dirs, _runs_venv

    assert _runs_venv("uv -q run pytest") and _runs_venv("poetry --no-ansi run x")
    assert _runs_venv("uv run --directory backend pytest") and not _runs_venv("uv pip list")
    assert "tools/lint/__main__.py" in _module_files("tools.lint")
    text = 'export PATH="$(git rev-parse --show-toplevel)/tools/bin:${PWD}/b2:$PATH"\n'
    assert _path_dirs(text) == ["tools/bin", "b2"]
    assert _path_dirs("PATH=$(pwd)/c:$PATH; x") == ["c"]


def test_venv_runners_with_any_options_and_path_values_after_any_substitution() -> None:
    """r76a VENVOPTWINDOW (`uv --directory backend --offline --quiet run`: `run` five words
    on), HOOKPATHDIRNAME (`$(cd "$(dirname "$0")/../.." && pwd)/tools/bin`)."""
    from corral.sandbox.protect.hookwords import _path_dirs, _runs_venv

    assert _runs_venv("uv --directory backend --offline --quiet run pytest")
    assert _runs_venv("poetry --no-interaction --no-ansi -C backend run x")
    assert not _runs_venv("uv pip list\nrun something")
    text = 'export PATH="$(cd "$(dirname "$0")/../.." && pwd)/tools/bin:$PATH"\n'
    assert _path_dirs(text) == ["tools/bin"]
    assert _path_dirs('PATH="$PWD/b/bin${PATH:+:$PATH}"') == ["b/bin"]
    assert _path_dirs("export PATH=/srv/ws/tools/bin:$PATH") == ["/srv/ws/tools/bin"]
    assert _path_dirs("PATH=.:./x:$PATH") == ["./x"]


def test_shebangs_are_read_by_the_interpreters_name_and_nothing_keeps_the_tree() -> None:
    """Session 29 review: `#!/bin/bash -e` and `#!/usr/bin/env -S bash -eu` were no shell
    scripts to _reached (what they source was not kept), `#!/opt/ubuntu/bin/sh` was a node
    one ("bun" in "ubuntu"); `UV_PROJECT_ENVIRONMENT=.` and `../` kept the work tree or the
    directory above it read-only."""
    from corral.sandbox.protect.hookwords import _interpreter, _tree_or_above

    assert _interpreter(b"#!/bin/bash -e") == b"bash"
    assert _interpreter(b"#!/usr/bin/env -S bash -eu") == b"bash"
    assert _interpreter(b"#!/opt/ubuntu/bin/sh") == b"sh"
    assert _interpreter(b"#!/usr/bin/env FOO=1 node") == b"node"
    assert _tree_or_above("/w/t", "/w/t") and _tree_or_above("/w/t/..", "/w/t")
    assert not _tree_or_above("/w/t/.venv", "/w/t")
