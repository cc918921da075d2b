"""Seventh review: what the host runs or reads later, reached another way (r7b, r7c).

Each test writes from inside real bwrap, then looks at what the host holds afterwards.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import pytest

from .conftest import corral_runs_as_root
from .sandbox_support import corral_run_on_a_terminal
from .test_change_sets_review2 import run

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Host

pytestmark = pytest.mark.sandbox


def test_start_up_files_linked_into_the_workspace_are_kept(host: Host) -> None:
    """r7b F1: the workspace is a dotfiles repository linked from $HOME (stow's layout:
    ~/.bashrc -> ~/dotfiles/bashrc). deny_write names ~/.bashrc, but only its own path was
    looked at: the link's target in the workspace was writable, and the next host shell ran
    what a sandboxed command appended."""
    ws = host.ws
    (ws / "bashrc").write_text("# mine\n")
    (ws / "nvim").mkdir()
    (ws / "nvim" / "init.lua").write_text("-- mine\n")
    (ws / "stow").mkdir()
    (ws / "stow" / "fish").mkdir()
    os.symlink("stow/fish", ws / "fish")  # a link inside the workspace on the way
    (host.home / ".config").mkdir(parents=True, exist_ok=True)
    for name, target in (
        (".bashrc", "bashrc"),
        (".config/nvim", "nvim"),
        (".config/fish", "fish"),
        (".profile", "profile"),  # its target does not exist yet
    ):
        link = host.home / name
        if link.is_dir() and not link.is_symlink():
            shutil.rmtree(link)
        else:
            link.unlink(missing_ok=True)
        os.symlink(ws / target, link)
    run(
        host,
        "echo 'touch CANARY' >> bashrc; echo 'x' >> nvim/init.lua; echo x > nvim/plugin.lua\n"
        "echo x > profile; echo x > fish/config.fish\n"
        "rm fish; mkdir -p evil; echo x > evil/config.fish; ln -s evil fish\n",
    )
    assert (ws / "bashrc").read_text() == "# mine\n"
    assert (ws / "nvim" / "init.lua").read_text() == "-- mine\n"
    assert not (ws / "nvim" / "plugin.lua").exists()
    assert not (ws / "profile").exists()
    assert not (ws / "stow" / "fish" / "config.fish").exists()
    assert os.readlink(ws / "fish") == "stow/fish"


def test_with_home_as_the_workspace_and_direct_writes_its_dot_directories_stay_read_only(
    host: Host,
) -> None:
    """r7b F3: a dot directory holding a hidden one (~/.config with ~/.config/gh) was left out
    of the read-only dot entries: with $HOME as the workspace and direct writes, tmux.conf,
    environment.d and desktop entries under it were written."""
    (host.home / ".config" / "tmux").mkdir(parents=True, exist_ok=True)
    (host.home / ".local" / "share").mkdir(parents=True, exist_ok=True)
    assert (host.home / ".config" / "gh").exists()  # hidden: the layout's credentials
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):  # (the defaults: kept whole when set)
        del host.env[name]
    body = (
        "echo 'run-shell x' > .config/tmux/tmux.conf; mkdir -p .config/environment.d; "
        "mkdir -p .local/share/applications && echo x > .local/share/applications/x.desktop; "
        "echo done-writing"
    )
    done = host.corral("run", "--writes", "direct", "--", "sh", "-c", body, cwd=host.home)
    assert "done-writing" in done.stdout, done.stdout + done.stderr
    assert not (host.home / ".config" / "tmux" / "tmux.conf").exists()
    assert not (host.home / ".config" / "environment.d").exists()
    assert not (host.home / ".local" / "share" / "applications").exists()


def test_files_and_directories_the_command_locked_up_are_applied_whole(host: Host) -> None:
    """r7c F1, F5 (as an unprivileged user): a hard-linked file made unreadable (it is
    copied) and a new directory made unwritable (mode 555, with a file in it) stopped the
    apply midway: one file lost, another half applied, nothing said."""
    (host.ws / "important.txt").write_text("original\n")
    run(
        host,
        "echo new > important.txt; ln important.txt important.link; chmod 000 important.txt\n"
        "mkdir z; echo zf > z/f; chmod 555 z\n"
        "mkdir -p y/w; echo yf > y/w/f; chmod 500 y/w\n",
    )
    assert os.stat(host.ws / "important.txt").st_mode & 0o777 == 0
    assert (host.ws / "important.link").read_text() == "new\n"
    assert (host.ws / "z" / "f").read_text() == "zf\n"
    assert os.stat(host.ws / "z").st_mode & 0o777 == 0o555
    assert (host.ws / "y" / "w" / "f").read_text() == "yf\n"
    assert not [n for n in os.listdir(host.ws) if n.startswith(".corral-apply")]
    undone = host.corral("undo")
    assert undone.returncode == 0, undone.stderr
    assert (host.ws / "important.txt").read_text() == "original\n"
    assert not (host.ws / "z").exists() and not (host.ws / "y").exists()


def test_a_default_acl_on_a_new_directory_does_not_reach_the_host(host: Host) -> None:
    """r7c F4: a directory moved in whole kept its extended attributes: a default ACL made
    every file the user later created in it writable by every local user."""
    acl = (  # system.posix_acl_default, version 2: user::rwx group::rwx other::rwx
        "bytes([2,0,0,0, 1,0,7,0,255,255,255,255, 4,0,7,0,255,255,255,255,"
        " 32,0,7,0,255,255,255,255])"
    )
    body = (
        "python3 -c \"import os; os.makedirs('acldir/sub'); "
        f"[os.setxattr(d, 'system.posix_acl_default', {acl}) for d in ('acldir', 'acldir/sub')]; "
        "os.setxattr('acldir', 'user.r7c', b'x')\"\n"
    )
    run(host, body)
    for d in ("acldir", "acldir/sub"):
        path = host.ws / d
        assert path.is_dir()
        assert "system.posix_acl_default" not in os.listxattr(path), d


def test_the_owners_own_access_to_a_directory_is_kept(host: Host) -> None:
    """r7c F7: `chmod 000 .git/objects` inside was applied: every git command failed after."""
    host.git("init", "-q", str(host.ws))
    run(host, "chmod 000 .git/objects .git/refs\n")
    for d in (".git/objects", ".git/refs"):
        assert os.stat(host.ws / d).st_mode & 0o700 == 0o700, d


def test_a_module_named_like_a_standard_one_cannot_be_planted_in_two_runs(host: Host) -> None:
    """r7c F11: a new json.py where Python looks first is held, but an earlier run's directory
    named json.py made the file "existing": `python3 app.py` on the host imported it."""
    canary = host.base / "CANARY-json"
    (host.ws / "app.py").write_text("import json\n")
    run(host, "mkdir json.py textwrap.py\n")
    assert (host.ws / "json.py").is_dir()
    run(host, f"rmdir json.py textwrap.py; echo 'open({str(canary)!r}, \"w\")' > json.py\n")
    assert (host.ws / "json.py").is_dir()  # the file in its place is held
    run(host, "rmdir json.py; ln -s app.py json.py\n")
    assert (host.ws / "json.py").is_dir() and not (host.ws / "json.py").is_symlink()


def test_corrals_own_config_through_a_config_directory_linked_into_the_workspace(
    host: Host,
) -> None:
    """r7b F9: with ~/.config a link into the workspace (stow's default) and XDG_CONFIG_HOME
    unset, a sandboxed command wrote corral's own config.toml: sandbox off for the next call."""
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        del host.env[name]
    config = host.home / ".config"
    shutil.rmtree(config)
    (host.ws / "config").mkdir()
    os.symlink(host.ws / "config", config)
    run(
        host,
        "mkdir -p config/corral\n"
        "printf '[sandbox]\\nenabled = false\\n' > config/corral/config.toml\n",
    )
    assert not (host.ws / "config" / "corral" / "config.toml").exists()


def test_a_file_turned_into_a_link_out_of_the_roots_over_two_runs_is_held(host: Host) -> None:
    """r7c F10: held when done in one run; deleted in one run and linked in the next, it was
    applied, and the editor that had the file open saved into the link's target."""
    (host.ws / "notes.md").write_text("mine\n")
    target = host.outside / "target.txt"
    target.write_text("outside\n")
    run(host, "rm notes.md\n")
    assert not (host.ws / "notes.md").exists()
    run(host, f"ln -s {target} notes.md\n")
    assert not (host.ws / "notes.md").is_symlink()


def test_a_link_above_a_hidden_area_is_held(host: Host) -> None:
    """r7c F12: links into a hidden area were held, links to one of its parents were not
    (`ln -s / root` made root/<home>/.ssh a path in the workspace)."""
    run(host, "ln -s / rootlink; mkdir -p v/bin; touch v/pyvenv.cfg\n"
              "ln -s /usr/bin/python3 v/bin/python\n")  # fmt: skip
    assert not (host.ws / "rootlink").is_symlink()
    # a venv's interpreter passes where you cannot write it (as root you can: held)
    assert (host.ws / "v" / "bin" / "python").is_symlink() == (not corral_runs_as_root())


def test_a_relative_pythonpath_holds_start_up_modules_at_any_depth(host: Host) -> None:
    """r7a A13: PYTHONPATH=. was resolved once, against the workspace: tests/sitecustomize.py
    was applied, and a Python started in tests/ (corral's own too) ran it."""
    host.env["PYTHONPATH"] = ":".join(filter(None, (host.env.get("PYTHONPATH"), ".")))
    run(host, "mkdir -p tests; echo x > tests/sitecustomize.py; echo y > tests/test_a.py\n")
    assert not (host.ws / "tests" / "sitecustomize.py").exists()
    assert (host.ws / "tests" / "test_a.py").exists()


def _hooked_repo(host: Host) -> None:
    host.git("init", "-q", str(host.ws))
    (host.ws / "scripts").mkdir()
    for name in ("lint.sh", "post.sh", "check.sh", "shared.sh"):
        (host.ws / "scripts" / name).write_text("# the project's\n")


def test_scripts_a_hook_runs_relative_to_itself_or_a_variable_are_kept(host: Host) -> None:
    """r7a A10: `"$(dirname "$0")/../scripts/lint.sh"` and `"$ROOT/scripts/post.sh"` were
    placed outside the tree or under a directory named `$ROOT`: the scripts were applied,
    and host `git commit` ran them."""
    _hooked_repo(host)
    hooks = host.ws / ".githooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_text('#!/bin/sh\nexec "$(dirname "$0")/../scripts/lint.sh"\n')
    (hooks / "post-commit").write_text(
        '#!/bin/sh\nROOT="$(git rev-parse --show-toplevel)"\n"$ROOT/scripts/post.sh"\n'
    )
    host.git("config", "core.hooksPath", ".githooks", cwd=host.ws)
    run(host, "echo 'touch CANARY' > scripts/lint.sh; echo 'touch CANARY' > scripts/post.sh\n")
    assert (host.ws / "scripts" / "lint.sh").read_text() == "# the project's\n"
    assert (host.ws / "scripts" / "post.sh").read_text() == "# the project's\n"


def test_what_husky_and_lefthook_hooks_run_is_kept(host: Host) -> None:
    """r7a A11, A12: husky's own hook (.husky/pre-commit running ./scripts/check.sh) and
    lefthook's `run:` and `extends:` were not read: the scripts and the extended config were
    applied and ran at the next host `git commit`."""
    _hooked_repo(host)
    husky = host.ws / ".husky"
    (husky / "_").mkdir(parents=True)
    (husky / "_" / "h").write_text('#!/bin/sh\nsh ".husky/$(basename "$0")"\n')
    (husky / "_" / "pre-commit").write_text('#!/bin/sh\n. "$(dirname "$0")/h"\n')
    (husky / "pre-commit").write_text("./scripts/check.sh\n")
    host.git("config", "core.hooksPath", ".husky/_", cwd=host.ws)
    (host.ws / ".git" / "hooks" / "pre-push").write_text(
        "#!/bin/sh\n# lefthook\nexec lefthook run pre-push\n"
    )
    (host.ws / "ci").mkdir()
    (host.ws / "ci" / "lefthook-shared.yml").write_text("pre-push: {}\n")
    (host.ws / "lefthook.yml").write_text(
        "extends:\n  - ci/lefthook-shared.yml\npre-push:\n  commands:\n"
        "    lint:\n      run: ./scripts/lint.sh {staged_files}\n"
        "    shared:\n      run: bash scripts/shared.sh\n"
    )
    run(
        host,
        "for f in check lint shared; do echo 'touch CANARY' > scripts/$f.sh; done\n"
        "echo 'post-commit: {commands: {x: {run: touch CANARY}}}' > ci/lefthook-shared.yml\n",
    )
    for name in ("check.sh", "lint.sh", "shared.sh"):
        assert (host.ws / "scripts" / name).read_text() == "# the project's\n", name
    assert (host.ws / "ci" / "lefthook-shared.yml").read_text() == "pre-push: {}\n"


def test_a_package_named_like_the_module_a_hook_runs_is_held(host: Host) -> None:
    """r7a A2: pre-commit's hook runs `python -mpre_commit` from the top of the work tree,
    where a `pre_commit/` package a command wrote is imported in place of pre-commit."""
    host.git("init", "-q", str(host.ws))
    hook = host.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
        'exec python3 -mpre_commit hook-impl --config=.pre-commit-config.yaml "$@"\n'
    )
    run(host, "mkdir pre_commit; echo 'x' > pre_commit/__main__.py; echo x > pre_commit.py\n")
    assert not (host.ws / "pre_commit").exists() and not (host.ws / "pre_commit.py").exists()


def test_a_package_named_like_the_module_a_git_filter_runs_is_held(host: Host) -> None:
    """r7a A16: nbstripout's filter is `python3 -m nbstripout`, run from the top of the work
    tree at a plain `git status`: a `nbstripout/` package there ran in its place."""
    host.git("init", "-q", str(host.ws))
    host.git("config", "filter.nbstripout.clean", '"python3" -m nbstripout', cwd=host.ws)
    run(host, "mkdir nbstripout; echo x > nbstripout/__main__.py\n")
    assert not (host.ws / "nbstripout").exists()


def test_a_directory_link_named_like_a_standard_module_is_held(host: Host) -> None:
    """r7a A1: `json -> pkgdir` imports as the package it leads to, first on sys.path."""
    run(host, "mkdir pkgdir; echo x > pkgdir/__init__.py; ln -s pkgdir json\n")
    assert (host.ws / "pkgdir").is_dir()
    assert not (host.ws / "json").is_symlink()


def test_empty_worktree_entries_cannot_push_a_linked_worktree_out(host: Host) -> None:
    """r7a A8: 256 empty directories in .git/worktrees were applied and pushed the real
    linked worktree past a silent cap: its relative core.hooksPath hook was then writable."""
    host.git("init", "-q", str(host.ws))
    host.git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--allow-empty",
             "-m", "x", cwd=host.ws)  # fmt: skip
    host.git("worktree", "add", "-q", ".worktrees/feat", "-b", "feat", cwd=host.ws)
    host.git("config", "core.hooksPath", ".githooks", cwd=host.ws)
    run(host, "for i in $(seq 100 355); do mkdir .git/worktrees/aa$i; done\n")
    assert not (host.ws / ".git" / "worktrees" / "aa100").exists()
    (host.ws / ".git" / "worktrees" / "aa100").mkdir()  # made anyway (as before this fix)
    run(host, "mkdir -p .worktrees/feat/.githooks; echo x > .worktrees/feat/.githooks/pre-commit\n")
    assert not (host.ws / ".worktrees" / "feat" / ".githooks" / "pre-commit").exists()


def test_a_library_directory_on_ld_library_path_is_kept(host: Host) -> None:
    """r7a A14: LD_LIBRARY_PATH into the workspace (build/lib) was not looked at: a library
    built there was loaded by the host's next `ls`."""
    (host.ws / "build" / "lib").mkdir(parents=True)
    host.env["LD_LIBRARY_PATH"] = str(host.ws / "build" / "lib")
    run(host, "echo x > build/lib/libselinux.so.1\n")
    assert not (host.ws / "build" / "lib" / "libselinux.so.1").exists()


def test_a_global_hooks_path_in_a_folder_without_repositories_is_kept(host: Host) -> None:
    """r7a A15: the global core.hooksPath was followed per repository found only: in a folder
    with none, the hooks directory it names there was writable, and every other repository's
    next commit ran what was planted."""
    folder = host.base / "plain"
    hooks = folder / "githooks"
    hooks.mkdir(parents=True)
    with open(host.home / ".gitconfig", "a") as f:
        f.write(f"[core]\n\thooksPath = {hooks}\n")
    done = host.corral(
        "run", "--", "sh", "-c", "echo 'touch CANARY' > githooks/pre-commit; echo ran", cwd=folder
    )
    assert "ran" in done.stdout, done.stdout + done.stderr
    assert not (hooks / "pre-commit").exists()


def test_corrals_lines_after_a_run_are_not_hidden_by_the_commands_terminal_codes(
    host: Host,
) -> None:
    """r7a A9: a command left the terminal drawing concealed text (SGR 8), and corral's
    "held ..." lines after it were invisible."""
    _, seen = corral_run_on_a_terminal(host, "sh", "-c", "printf 'x\\033[8m' >&2; echo y > .envrc")
    assert b"\x1b[8m" in seen and b"corral: held" in seen, seen
    assert seen.rindex(b"\x1b[0m") > seen.rindex(b"\x1b[8m")
    assert seen.rindex(b"\x1b[0m") < seen.index(b"corral: held")


def test_a_denied_name_that_is_a_link_hides_its_target_and_runs_go_on(host: Host) -> None:
    """r7b F6, and what its fix met: `.env -> config/prod.env` is hidden where it leads
    (bwrap cannot mount over a link with an absolute target: a planted `key.pem` link to a file
    failed every later run)."""
    (host.ws / "config").mkdir()
    (host.ws / "config" / "prod.env").write_text("API_KEY=CANARY-prodenv\n")
    os.symlink("config/prod.env", host.ws / ".env")
    run(host, 'echo readme > README; ln -s "$WS/README" key.pem\n')
    assert (host.ws / "key.pem").is_symlink()
    out = host.sh("cat config/prod.env .env; echo after")
    assert "after" in out.stdout, out.stdout + out.stderr
    assert "CANARY-prodenv" not in out.stdout + out.stderr


def test_a_link_out_of_the_roots_to_what_you_can_write_is_held(host: Host) -> None:
    """r8c G1, G2: the two-run check remembered exact paths only: deleting the file's
    directory in one run (or pushing the journal's record out) let a link to a file outside
    the roots through, and the editor's next :write changed that file."""
    (host.ws / "docs").mkdir()
    (host.ws / "docs" / "notes.txt").write_text("mine\n")
    target = host.outside / "target.txt"
    target.write_text("outside\n")
    run(host, "rm -rf docs\n")
    run(host, f"mkdir docs; ln -s {target} docs/notes.txt; ln -s {host.outside} elsewhere\n")
    assert not (host.ws / "docs" / "notes.txt").is_symlink()
    assert not (host.ws / "elsewhere").is_symlink()
    assert target.read_text() == "outside\n"


def test_a_directory_the_command_locked_is_undone_and_names_are_shown_escaped(
    host: Host,
) -> None:
    """r8c G3 (as an unprivileged user): undo opened a new 000 directory for reading and
    crashed, and no change set before it could be undone; G9: undo printed journaled names
    raw (a name with a newline forged a line of corral's)."""
    run(host, "mkdir locked; echo x > locked/f; chmod 000 locked; touch 'a\nundid all'\n")
    assert os.stat(host.ws / "locked").st_mode & 0o777 == 0
    undone = host.corral("undo")
    assert undone.returncode == 0, undone.stderr
    assert not (host.ws / "locked").exists() and not (host.ws / "a\nundid all").exists()
    assert "a\\x0aundid all" in undone.stdout and "\nundid all" not in undone.stdout


def test_a_config_directory_linked_into_the_workspace_is_kept_whole(host: Host) -> None:
    """r8a B3: with ~/.config a link into a dotfiles workspace and XDG_CONFIG_HOME unset (the
    default), only deny_write's names were kept: tmux.conf and gdbinit there were applied."""
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        del host.env[name]
    shutil.rmtree(host.home / ".config")
    (host.ws / "config" / "tmux").mkdir(parents=True)
    os.symlink(host.ws / "config", host.home / ".config")
    run(host, "echo 'run-shell x' > config/tmux/tmux.conf; mkdir -p config/gdb\n")
    assert not (host.ws / "config" / "tmux" / "tmux.conf").exists()
    assert not (host.ws / "config" / "gdb").exists()


def test_a_pythonpath_entry_reached_through_a_link_keeps_its_link(host: Host) -> None:
    """r8a B6: PYTHONPATH=src with `src -> lib`: the link was re-pointed at a new directory
    holding a sitecustomize.py, which every Python then ran."""
    (host.ws / "lib").mkdir()
    os.symlink("lib", host.ws / "src")
    host.env["PYTHONPATH"] = ":".join(filter(None, (host.env.get("PYTHONPATH"), "src")))
    run(host, "mkdir evil; echo x > evil/sitecustomize.py; ln -sfn evil src\n")
    assert os.readlink(host.ws / "src") == "lib"


def test_an_activated_venvs_configuration_is_kept(host: Host) -> None:
    """r8a B7: pyvenv.cfg's `home` re-pointed at a standard library planted in the venv;
    the venv's python (on PATH) imported its encodings from there."""
    venv = host.ws / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    host.env["PATH"] = f"{venv / 'bin'}:{host.env['PATH']}"
    run(host, "echo 'home = /tmp/evil' > .venv/pyvenv.cfg\n")
    assert (venv / "pyvenv.cfg").read_text() == "home = /usr/bin\n"


def test_scripts_a_hook_runs_through_a_glob_or_after_cd_are_kept(host: Host) -> None:
    """r8a B4: `for f in .githooks/pre-commit.d/*.sh` and `(cd tools && ./lint.sh)` named
    scripts corral did not place: both were rewritten and ran at the next commit."""
    host.git("init", "-q", str(host.ws))
    (host.ws / "hooks.d").mkdir()
    (host.ws / "hooks.d" / "10-lint.sh").write_text("# the project's\n")
    (host.ws / "tools").mkdir()
    (host.ws / "tools" / "lint.sh").write_text("# the project's\n")
    hook = host.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text('#!/bin/sh\nfor f in hooks.d/*.sh; do sh "$f"; done\n(cd tools && ./lint.sh)\n')
    run(host, "echo x > hooks.d/10-lint.sh; echo x > hooks.d/20-new.sh; echo x > tools/lint.sh\n")
    assert (host.ws / "hooks.d" / "10-lint.sh").read_text() == "# the project's\n"
    assert not (host.ws / "hooks.d" / "20-new.sh").exists()
    assert (host.ws / "tools" / "lint.sh").read_text() == "# the project's\n"


def test_what_a_pre_commit_config_names_in_any_yaml_form_is_kept(host: Host) -> None:
    """r8a B5: the config was read line by line: an entry in a flow mapping, a folded block
    scalar, and `python3 -m tools.checker` were not kept, and all three ran at the commit."""
    host.git("init", "-q", str(host.ws))
    hook = host.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
        'exec python3 -mpre_commit hook-impl --config=.pre-commit-config.yaml "$@"\n'
    )
    (host.ws / "tools").mkdir()
    for name in ("a.sh", "b.sh", "__init__.py", "checker.py"):
        (host.ws / "tools" / name).write_text("# the project's\n")
    (host.ws / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n"
        "  - {id: a, name: a, entry: tools/a.sh, language: system}\n"
        "  - id: b\n    name: b\n    entry: >-\n      bash\n      tools/b.sh\n"
        "    language: system\n"
        "  - id: c\n    name: c\n    entry: python3 -m tools.checker\n    language: system\n"
    )
    run(host, "for f in a.sh b.sh __init__.py checker.py; do echo x > tools/$f; done\n")
    for name in ("a.sh", "b.sh", "__init__.py", "checker.py"):
        assert (host.ws / "tools" / name).read_text() == "# the project's\n", name


def test_where_a_hooks_python_looks_first_no_new_module_is_taken(host: Host) -> None:
    """r8a B1, B2: pre-commit's `python -mpre_commit` looks at the top of the work tree first
    for every module it imports (a `cfgv.py` there replaced pre-commit's own); a hook's
    `python3 scripts/check.py` looks in scripts/ first (a `scripts/json.py` ran)."""
    host.git("init", "-q", str(host.ws))
    (host.ws / "scripts").mkdir()
    (host.ws / "scripts" / "check.py").write_text("import json\n")
    hook = host.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
        'python3 scripts/check.py\nexec python3 -mpre_commit hook-impl "$@"\n'
    )
    run(host, "echo x > cfgv.py; echo x > scripts/json.py; echo x > scripts/helper.py\n")
    assert not (host.ws / "cfgv.py").exists()
    assert not (host.ws / "scripts" / "json.py").exists()
    assert not (host.ws / "scripts" / "helper.py").exists()


def _activated_venv_naming_src(host: Host, pth: str) -> Path:
    """A venv in the workspace, on the PATH corral runs with, whose site-packages has a .pth
    (an editable install's) naming the workspace's src/; returns its site-packages."""
    site = host.ws / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (host.ws / ".venv" / "bin").mkdir()
    (host.ws / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (host.ws / "src").mkdir()
    (site / pth).write_text(f"{host.ws / 'src'}\n")
    host.env["PATH"] = f"{host.ws / '.venv' / 'bin'}:{host.env['PATH']}"
    return site


def test_a_directory_a_pth_file_names_is_one_python_looks_in(host: Host) -> None:
    """r8a B8: an editable install's .pth names the project's src/ (here in an activated
    venv): a src/sitecustomize.py ran at every start of that Python."""
    _activated_venv_naming_src(host, "__editable__.proj.pth")
    run(host, "echo x > src/sitecustomize.py; echo x > src/app.py\n")
    assert not (host.ws / "src" / "sitecustomize.py").exists()
    assert (host.ws / "src" / "app.py").exists()


def test_links_out_of_the_roots_are_held_wherever_they_lead(host: Host) -> None:
    """r9c H2, H3: toolchains the home shows (~/.local/lib, ~/.cargo) and, for root, /usr
    were let through as "not yours to write": a :write through a link planted there made a
    .pth that every Python ran. Only a venv's interpreter may link out."""
    run(host, "ln -s /usr/local/lib ulib; ln -s /usr/bin/env env-link\n")
    assert not (host.ws / "ulib").is_symlink()
    assert not (host.ws / "env-link").is_symlink()


def test_a_command_cannot_open_a_private_file_to_other_users(host: Host) -> None:
    """r9c L1: `chmod 644` of a 0600 file (and 755 of a 0700 directory) was applied: a
    secret of the workspace became readable by every local account."""
    secret = host.ws / "private.txt"
    secret.write_text("k\n")
    secret.chmod(0o600)
    (host.ws / "privdir").mkdir(mode=0o700)
    (host.ws / "privdir").chmod(0o700)
    run(host, "chmod 644 private.txt; chmod 755 privdir; echo k2 > private.txt\n")
    assert os.stat(secret).st_mode & 0o777 == 0o600
    assert os.stat(host.ws / "privdir").st_mode & 0o777 == 0o700
    assert secret.read_text() == "k2\n"


def test_mercurial_config_and_a_prek_installed_config_are_kept(host: Host) -> None:
    """r9a C4: `.hg/hgrc` was writable (its hooks and extensions run at `hg status`, at a
    prompt); C6: prek's installed hook was not recognised as pre-commit's, so its config
    and scripts were writable."""
    (host.ws / ".hg").mkdir()
    (host.ws / ".hg" / "hgrc").write_text("[ui]\n")
    (host.ws / ".git" / "hooks" / "pre-commit").write_text(
        '#!/bin/sh\nexec /usr/local/bin/prek hook-impl --hook-type=pre-commit -- "$@"\n'
    )
    (host.ws / ".pre-commit-config.yaml").write_text("repos: []\n")
    run(
        host,
        "echo '[hooks]' >> .hg/hgrc; echo 'repos: [x]' > .pre-commit-config.yaml\n"
        "mkdir -p sub/.hg; echo '[hooks]' > sub/.hg/hgrc\n",
    )
    assert (host.ws / ".hg" / "hgrc").read_text() == "[ui]\n"
    assert (host.ws / ".pre-commit-config.yaml").read_text() == "repos: []\n"
    assert not (host.ws / "sub" / ".hg" / "hgrc").exists()


def test_directories_named_like_pth_files_do_not_hide_one(host: Host) -> None:
    """r9a C5: 4000 directories named x.pth in an activated venv's site-packages pushed an
    editable install's .pth past the 256 names read: src/ stopped counting, and a
    src/sitecustomize.py was applied."""
    site = _activated_venv_naming_src(host, "zz__editable__.proj.pth")
    for i in range(300):
        (site / f"a{i:04}.pth").mkdir()
    run(host, "echo x > src/sitecustomize.py\n")
    assert not (host.ws / "src" / "sitecustomize.py").exists()


def test_what_a_hook_runs_through_its_own_variable_or_run_parts_is_kept(host: Host) -> None:
    """r9a C1, C2: `HOOKS=tools/hooks; "$HOOKS/lint.sh"`, `D=ci/checks.d; for f in $D/*.sh`,
    and a pre-commit entry's `run-parts tools/pre-commit.d` or `ci/checks/*.sh` named scripts
    corral did not place: they were rewritten (or added) and ran at the next commit."""
    host.git("init", "-q", str(host.ws))
    for d in ("tools/hooks", "ci/checks.d", "tools/pre-commit.d", "ci/checks"):
        (host.ws / d).mkdir(parents=True)
        (host.ws / d / "a.sh").write_text("# the project's\n")
    (host.ws / ".git" / "hooks" / "post-commit").write_text(
        '#!/bin/sh\nHOOKS=tools/hooks\n"$HOOKS/a.sh"\nD="ci/checks.d"\n'
        'for f in ${D}/*.sh; do sh "$f"; done\n'
    )
    (host.ws / ".git" / "hooks" / "pre-commit").write_text(
        "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
        'exec python3 -mpre_commit hook-impl --config=.pre-commit-config.yaml "$@"\n'
    )
    (host.ws / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n"
        "  - {id: a, name: a, entry: run-parts tools/pre-commit.d, language: system}\n"
        "  - id: b\n    name: b\n    entry: bash -c 'for f in ci/checks/*.sh; do sh $f; done'\n"
        "    language: system\n"
    )
    run(host, "for d in tools/hooks ci/checks.d tools/pre-commit.d ci/checks; do "
              "echo x > $d/a.sh; echo x > $d/new.sh; done\n")  # fmt: skip
    for d in ("tools/hooks", "ci/checks.d", "tools/pre-commit.d", "ci/checks"):
        assert (host.ws / d / "a.sh").read_text() == "# the project's\n", d
    for d in ("ci/checks.d", "tools/pre-commit.d", "ci/checks"):
        assert not (host.ws / d / "new.sh").exists(), d


def test_only_an_interpreter_passes_as_a_venvs_link_out_of_the_roots(host: Host) -> None:
    """r10a F1: any name in a bin/ beside a pyvenv.cfg the same run made passed as a venv's
    interpreter, to any file: with `src -> w/bin`, the editor's next save of src/app.py
    wrote a file outside the roots."""
    (host.ws / "src").mkdir()
    (host.ws / "src" / "app.py").write_text("mine\n")
    target = host.outside / "target.txt"
    target.write_text("outside\n")
    target.chmod(0o755)
    run(
        host,
        "rm -rf src; mkdir -p w/bin; echo 'home = /usr/bin' > w/pyvenv.cfg\n"
        f"ln -s {target} w/bin/app.py; ln -s {target} w/bin/python3; ln -s w/bin src\n"
        "ln -s /usr/bin/python3 w/bin/python\n",
    )
    assert not (host.ws / "w" / "bin" / "app.py").is_symlink()
    assert not (host.ws / "w" / "bin" / "python3").is_symlink()  # named so, not one
    assert (host.ws / "w" / "bin" / "python").is_symlink() == (not corral_runs_as_root())
    assert target.read_text() == "outside\n"


def test_a_venvs_link_out_of_the_roots_leads_only_to_what_you_cannot_write(host: Host) -> None:
    """r11c D2: links in the workspace made while they dangled (`notes.txt -> p/sub/python3`,
    then `p/sub -> ../.venv/bin`) later led a file the editor holds to a venv's interpreter
    link out of the roots: a save wrote an interpreter the user runs. Only an interpreter
    the user cannot write passes, so a save through any path changes nothing."""
    mine = host.outside / "python3"
    mine.write_text("#!/bin/sh\n")
    mine.chmod(0o755)  # an interpreter of yours (pyenv's, uv's, ~/.local/bin)
    (host.ws / "notes.txt").write_text("notes\n")
    run(host, "rm notes.txt; mkdir -p p; ln -s p/sub/python3 notes.txt\n")
    run(host, "ln -s ../.venv/bin p/sub\n")
    run(host, f"mkdir -p .venv/bin; touch .venv/pyvenv.cfg; ln -s {mine} .venv/bin/python3\n")
    assert not (host.ws / ".venv" / "bin" / "python3").is_symlink()
    assert not os.path.exists(host.ws / "notes.txt") or not os.path.samefile(
        host.ws / "notes.txt", mine
    )


def test_every_config_mercurial_and_prek_read_is_kept(host: Host) -> None:
    """r10a F4, F5: only `.hg/hgrc` and `.pre-commit-config.yaml` were kept. Mercurial also
    reads `.hg/hgrc-not-shared` (its hooks ran at `hg status`); prek prefers `prek.toml`
    and runs every nested project's config, whose scripts are relative to that project."""
    (host.ws / ".hg").mkdir()
    (host.ws / ".hg" / "requires").write_text("store\n")
    (host.ws / ".git" / "hooks" / "pre-commit").write_text(
        '#!/bin/sh\nexec /usr/local/bin/prek hook-impl --hook-type=pre-commit -- "$@"\n'
    )
    pkg = host.ws / "pkg"
    pkg.mkdir()
    (pkg / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n"
        "  - {id: a, name: a, entry: ./check.sh, language: script}\n"
    )
    (pkg / "check.sh").write_text("# the project's\n")
    (host.ws / "sub").mkdir(exist_ok=True)
    run(
        host,
        "echo '[hooks]' > .hg/hgrc-not-shared; echo shared > .hg/requires\n"
        "echo /elsewhere > .hg/sharedpath; echo '[[repos]]' > prek.toml\n"
        "echo 'repos: []' > .pre-commit-config.yml\n"
        "echo 'repos: []' > sub/.pre-commit-config.yaml\n"
        "echo 'touch CANARY' > pkg/check.sh\n",
    )
    for name in (".hg/hgrc-not-shared", ".hg/sharedpath", "prek.toml", ".pre-commit-config.yml",
                 "sub/.pre-commit-config.yaml"):  # fmt: skip
        assert not (host.ws / name).exists(), name
    assert (host.ws / ".hg" / "requires").read_text() == "store\n"
    assert (pkg / "check.sh").read_text() == "# the project's\n"


def test_run_parts_directories_are_read_as_the_hook_runs_them(host: Host) -> None:
    """r10a F3: run-parts' directory was read from the raw hook text: `CHECKS=checks.d;
    run-parts "$CHECKS"`, `cd tools && run-parts pre-commit.d` and `run-parts --regex RE
    dir` kept nothing, and new scripts there ran at the next commit."""
    host.git("init", "-q", str(host.ws))
    for d in ("checks.d", "tools/pre-commit.d", "ci/parts"):
        (host.ws / d).mkdir(parents=True)
        (host.ws / d / "00-ok").write_text("# the project's\n")
    (host.ws / ".git" / "hooks" / "pre-commit").write_text(
        '#!/bin/sh\nset -e\nCHECKS=checks.d\nrun-parts --exit-on-error "$CHECKS"\n'
        "run-parts --regex '^[0-9]' ci/parts\ncd tools && run-parts pre-commit.d\n"
    )
    run(host, "for d in checks.d tools/pre-commit.d ci/parts; do echo x > $d/50-x; done\n")
    for d in ("checks.d", "tools/pre-commit.d", "ci/parts"):
        assert not (host.ws / d / "50-x").exists(), d


def test_where_a_python_hook_found_by_its_shebang_or_link_looks_no_module_is_taken(
    host: Host,
) -> None:
    """r10a F2: a Python hook that is a link into the work tree (Python looks in the
    target's directory first) and an extension-less Python script a shell hook runs were
    not seen as Python: tools/hooks/subprocess.py and scripts/json.py ran at `git commit`."""
    host.git("init", "-q", str(host.ws))
    for d in ("tools/hooks", "scripts"):
        (host.ws / d).mkdir(parents=True)
    (host.ws / "tools" / "hooks" / "pre-commit").write_text(
        "#!/usr/bin/env python3\nimport subprocess\n"
    )
    (host.ws / "scripts" / "check").write_text("#!/usr/bin/python3 -S\nimport json\n")
    hooks = host.ws / ".git" / "hooks"
    os.symlink("../../tools/hooks/pre-commit", hooks / "pre-commit")
    (hooks / "commit-msg").write_text('#!/bin/sh\nexec scripts/check "$1"\n')
    run(host, "echo x > tools/hooks/subprocess.py; echo x > scripts/json.py\n"
              "echo x > scripts/helper.py; echo x > tools/notes.md\n")  # fmt: skip
    assert not (host.ws / "tools" / "hooks" / "subprocess.py").exists()
    assert not (host.ws / "scripts" / "json.py").exists()
    assert not (host.ws / "scripts" / "helper.py").exists()
    assert (host.ws / "tools" / "notes.md").exists()


def test_a_new_mercurial_repository_or_subrepository_is_held(host: Host) -> None:
    """r11a T1: `sub/.hg -> ../hgx` with an hgrc in hgx and `.hgsub` naming sub: the
    protected `.hg/*` names never matched hgx/hgrc, and `hg commit` on the host loaded the
    subrepository's extension. An existing repository's store stays writable."""
    (host.ws / ".hg" / "store").mkdir(parents=True)
    run(
        host,
        "mkdir -p hgx sub new/.hg; echo '[extensions]' > hgx/hgrc; ln -s ../hgx sub/.hg\n"
        "echo 'sub = sub' > .hgsub; echo '[hooks]' > new/.hg/hgrc; echo x > .hg/store/data\n",
    )
    assert not (host.ws / "sub" / ".hg").is_symlink()
    assert not (host.ws / ".hgsub").exists()
    assert not (host.ws / "new" / ".hg").exists()
    assert (host.ws / ".hg" / "store" / "data").read_text() == "x\n"


def test_where_a_hook_starts_python_without_a_shebang_no_module_is_taken(host: Host) -> None:
    """r11a T2: `python3 tools/check` (no shebang) and `python3 -c '...'` (Python looks in
    the top first) were not seen as starting Python there: tools/json.py and a new module
    at the top ran at `git commit`."""
    host.git("init", "-q", str(host.ws))
    (host.ws / "tools").mkdir()
    (host.ws / "tools" / "check").write_text("import json\n")
    (host.ws / ".git" / "hooks" / "pre-commit").write_text(
        "#!/bin/sh\npython3 -X dev tools/check\npython3 -I -c 'import zzhelper'\n"
    )
    run(host, "echo x > tools/json.py; echo x > zzhelper.py; echo x > tools/notes.md\n")
    assert not (host.ws / "tools" / "json.py").exists()
    assert not (host.ws / "zzhelper.py").exists()
    assert (host.ws / "tools" / "notes.md").exists()


def test_every_lefthook_and_mise_config_name_is_kept(host: Host) -> None:
    """r11a T3, T4: the lists of lefthook's and mise's config names fell behind what they
    read (lefthook-local.toml, .config/lefthook-local.yaml; mise/config.local.toml,
    .miserc.toml, mise.dev.toml): written there, their commands ran on the host."""
    host.git("init", "-q", str(host.ws))
    (host.ws / ".git" / "hooks" / "pre-commit").write_text(
        '#!/bin/sh\n# lefthook\nexec lefthook run pre-commit "$@"\n'
    )
    names = (
        "lefthook-local.toml", ".config/lefthook-local.yaml", "lefthook.jsonc",
        "mise/config.local.toml", ".miserc.toml", "mise.dev.toml", "sub/.mise.dev.local.toml",
        ".config/mise.dev.toml",
    )  # fmt: skip
    run(host, "".join(f"mkdir -p $(dirname {n}); echo x > {n}\n" for n in names))
    for name in names:
        assert not (host.ws / name).exists(), name


def test_a_protected_name_with_a_star_is_read_only_with_direct_writes(host: Host) -> None:
    """`mise.*.toml`: the existing matches are kept read-only when writes go straight to the
    workspace, where nothing is held."""
    (host.ws / "mise.dev.toml").write_text("# mine\n")
    done = host.corral("run", "--writes", "direct", "--", "sh", "-c",
                       "echo x >> mise.dev.toml; echo done", cwd=host.ws)  # fmt: skip
    assert "done" in done.stdout, done.stderr
    assert (host.ws / "mise.dev.toml").read_text() == "# mine\n"


def test_a_replaced_directory_shows_and_counts_what_it_deletes(host: Host) -> None:
    """r11c D1: `rm -rf docs; mkdir docs; echo > docs/README.txt` showed and counted one file
    added; applying it (reviewed: "1 added, 0 deleted") took the host's whole docs/ away."""
    from .test_change_sets import held_ids

    (host.ws / "docs" / "sub").mkdir(parents=True)
    (host.ws / "docs" / "notes.txt").write_text("precious\n")
    (host.ws / "docs" / "sub" / "deep.txt").write_text("deep\n")
    (host.ws / "docs" / "keep.txt").write_text("old\n")
    done = host.corral("run", "--writes", "review", "--", "sh", "-c",
                       "rm -rf docs; mkdir docs; echo r > docs/README.txt; "
                       "echo new > docs/keep.txt", cwd=host.ws)  # fmt: skip
    assert "deleting 2 of its entries" in done.stderr, done.stderr
    (change_id,) = held_ids(host)
    shown = host.corral("changes", change_id, "--diff").stdout
    assert "replace" in shown and "deletes 2 of the host's entries" in shown, shown
    assert f"delete {host.ws / 'docs' / 'notes.txt'}" in shown
    assert "-precious" in shown  # the diff shows what goes
    applied = host.corral("apply", change_id)
    assert "1 added, 1 modified, 2 deleted" in applied.stdout + applied.stderr, applied
    assert not (host.ws / "docs" / "notes.txt").exists()
    host.corral("undo")
    assert (host.ws / "docs" / "notes.txt").read_text() == "precious\n"


def test_undo_undoes_this_workspaces_change_set_not_anothers(host: Host) -> None:
    """r11c L1: `corral undo` typed in one workspace undid the newest change set of any
    workspace (another project's), and said so only afterwards."""
    other = host.ws.parent / "other-ws"
    other.mkdir()
    (host.ws / "mine.txt").write_text("before\n")
    run(host, "echo after > mine.txt\n")
    done = host.corral("run", "--", "sh", "-c", "echo theirs > theirs.txt", cwd=other)
    assert (other / "theirs.txt").exists(), done.stderr
    undone = host.corral("undo")  # typed in host.ws
    assert undone.returncode == 0, undone.stderr
    assert (host.ws / "mine.txt").read_text() == "before\n"
    assert (other / "theirs.txt").exists()
    assert "nothing to undo" in host.corral("undo").stdout
    assert (other / "theirs.txt").exists()


def test_a_review_shows_a_directorys_mode_change_and_where_links_lead(host: Host) -> None:
    """r11c L2: a mode change on an existing directory (`chmod 1777` of a 0700 one) was
    applied without being shown, and links were listed without their targets."""
    from .test_change_sets import held_ids

    (host.ws / "priv").mkdir(mode=0o700)
    (host.ws / "priv").chmod(0o700)
    host.corral("run", "--writes", "review", "--", "sh", "-c",
                "chmod 1777 priv; ln -s README.md readme-link", cwd=host.ws)  # fmt: skip
    (change_id,) = held_ids(host)
    shown = host.corral("changes", change_id).stdout
    assert f"mode    {host.ws / 'priv'}: 0700 -> 1700" in shown, shown
    assert f"{host.ws / 'readme-link'} -> README.md" in shown, shown


def test_a_link_cannot_make_a_protected_name_out_of_another_path(host: Host) -> None:
    """r12c F4: `crate/.cargo -> ../buildcfg` with buildcfg/config.toml made
    crate/.cargo/config.toml (a rustc-wrapper that `cargo metadata` runs) out of paths no
    protected name matched; `notes-link.txt -> sub/.envrc` named a protected file too."""
    run(
        host,
        "mkdir -p buildcfg crate sub; echo '[build]' > buildcfg/config.toml\n"
        "ln -s ../buildcfg crate/.cargo; ln -s sub/.envrc notes-link.txt\n"
        "ln -s buildcfg plain-link\n",
    )
    assert not (host.ws / "crate" / ".cargo").is_symlink()
    assert not (host.ws / "notes-link.txt").is_symlink()
    assert (host.ws / "plain-link").is_symlink()  # an ordinary link still lands
    assert (host.ws / "buildcfg" / "config.toml").exists()


def test_links_made_to_lead_later_to_an_existing_venvs_interpreter_are_held(host: Host) -> None:
    """r12c F5: with a venv the user made (its python3 links out of the roots), run 1 made
    `notes.txt -> q/python3` (q missing), run 2 `q -> .venv/bin`: a save of notes.txt
    rewrote the interpreter. A dangling link, or a link in a directory's place, is held."""
    mine = host.outside / "python3"
    mine.write_text("#!/bin/sh\n")
    mine.chmod(0o755)
    (host.ws / ".venv" / "bin").mkdir(parents=True)
    (host.ws / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    os.symlink(mine, host.ws / ".venv" / "bin" / "python3")
    (host.ws / "p").mkdir()
    run(host, "ln -s q/python3 notes.txt; rm -rf p; ln -s .venv/bin p\n")
    assert not (host.ws / "notes.txt").is_symlink()
    assert not (host.ws / "p").is_symlink()
    assert mine.read_text() == "#!/bin/sh\n"


def test_a_file_or_link_in_a_directorys_place_shows_what_it_deletes(host: Host) -> None:
    """r12c F1: a file put where the host had a directory took the directory away, shown as
    `file docs: passes the check`, "0 deleted". F1b: the listing of a replaced directory
    followed the command's own links (`docs/sub -> other`, with the same names in other):
    nothing was shown as deleted."""
    from .test_change_sets import held_ids

    for d in ("docs", "data/sub"):
        (host.ws / d).mkdir(parents=True)
    (host.ws / "docs" / "a.txt").write_text("a\n")
    (host.ws / "data" / "sub" / "x.txt").write_text("x\n")
    host.corral("run", "--writes", "review", "--", "sh", "-c",
                "rm -rf docs data; echo f > docs; mkdir -p data other; echo y > other/x.txt; "
                "ln -s ../other data/sub", cwd=host.ws)  # fmt: skip
    (change_id,) = held_ids(host)
    shown = host.corral("changes", change_id).stdout
    assert f"replace {host.ws / 'docs'}" in shown, shown
    assert f"delete {host.ws / 'docs' / 'a.txt'}" in shown, shown
    assert f"delete {host.ws / 'data' / 'sub'}" in shown, shown


def test_what_a_protected_config_runs_or_puts_on_path_is_kept(host: Host) -> None:
    """r12a D1-D5, N1, M1, M3, H1, C1: protected start-up configs were kept, what they name
    was not: a venv's bin an .envrc activates (by `source`, or VIRTUAL_ENV without a slash),
    `layout go`'s .direnv/go/bin, PYTHONPATH=src, what a sourced .envrc.local puts on PATH;
    Neovim's .nvim runtime directory; a version file's `path:`; mise's `_.source` and
    `_.path`; an hgrc hook's script; cargo's rustc-wrapper. Planted there, each ran at the
    next prompt, `hg commit`, `cargo metadata` or Neovim start."""
    ws = host.ws
    for d in (".venv/bin", "venv2/bin", "src", "scripts", "tools/bin", ".hg", ".cargo"):
        (ws / d).mkdir(parents=True, exist_ok=True)
    (ws / ".venv" / "bin" / "activate").write_text("# venv\n")
    (ws / ".envrc").write_text(
        "source .venv/bin/activate\nexport VIRTUAL_ENV=venv2\nlayout python3\nlayout go\n"
        "export PYTHONPATH=src\nsource_env_if_exists .envrc.local\n"
    )
    (ws / ".envrc.local").write_text("PATH_add tools/bin\n")
    (ws / "mise.toml").write_text('[env]\n_.source = "./scripts/env.sh"\n_.path = ["./mbin"]\n')
    (ws / "scripts" / "env.sh").write_text("# the project's\n")
    (ws / "scripts" / "lint.sh").write_text("# the project's\n")
    (ws / ".hg" / "hgrc").write_text("[hooks]\nprecommit.lint = sh scripts/lint.sh\n")
    (ws / ".cargo" / "config.toml").write_text('[build]\nrustc-wrapper = "tools/wrap.sh"\n')
    (ws / "tools" / "wrap.sh").write_text("# the project's\n")
    planted = (
        ".venv/bin/ls", "venv2/bin/ls", ".direnv/go/bin/ls", "src/sitecustomize.py",
        "tools/bin/git", ".nvim/plugin/x.lua", ".python-version", "mbin/git",
    )  # fmt: skip
    run(host, "".join(f"mkdir -p $(dirname {p}); echo x > {p}\n" for p in planted)
        + "echo x >> scripts/env.sh; echo x >> scripts/lint.sh; echo x >> tools/wrap.sh\n"
        + "echo x > src/app.py\n")  # fmt: skip
    for path in planted:
        assert not (ws / path).exists(), path
    for path in ("scripts/env.sh", "scripts/lint.sh", "tools/wrap.sh"):
        assert (ws / path).read_text() == "# the project's\n", path
    assert (ws / "src" / "app.py").exists()  # the project's own modules are written


def test_nothing_is_applied_or_undone_while_a_command_writes_directly(host: Host) -> None:
    """r12c F2, F3: a command with direct writes in the same workspace swapped a directory
    for a link between corral's check and its renames: an apply (and an undo) wrote and
    deleted outside the roots. While such a command runs, both wait."""
    import signal
    import subprocess
    import sys
    import time

    from corral.changes.stage import direct_writers

    from .conftest import give_to_test_user, user_prefix
    from .test_change_sets import held_ids

    run(host, "echo a > applied.txt\n")  # something to undo
    give_to_test_user(host.base)
    writer = subprocess.Popen(
        [*user_prefix(), sys.executable, "-m", "corral", "run", "--writes", "direct", "--",
         "sleep", "60"],
        cwd=host.ws, env=host.env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not direct_writers([str(host.ws)]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert direct_writers([str(host.ws)]), "the direct-writes command did not start"
        stderr = run(host, "echo x > new.txt\n")
        assert "a command with direct writes runs in this workspace" in stderr, stderr
        assert not (host.ws / "new.txt").exists()
        assert "direct writes" in host.corral("undo").stderr
        assert (host.ws / "applied.txt").exists()
    finally:
        os.killpg(writer.pid, signal.SIGTERM)
        writer.wait(timeout=20)
    (change_id,) = held_ids(host)
    assert host.corral("apply", change_id).returncode == 0
    assert (host.ws / "new.txt").read_text() == "x\n"


def test_what_protected_configs_name_in_other_spellings_is_kept(host: Host) -> None:
    """r13a D1, D2, T1-T3, T5, T6: a variable before `source .venv/bin/activate`, a
    dotenv's PYTHONPATH, mise's `{{config_root}}`, exec() templates, table hooks, conf.d
    files, `[[env]]` and `path:` tools, Mercurial's `%include`, cargo's `include` and a
    rustup `path` toolchain: what they ran was not kept."""
    ws = host.ws
    for d in ("venv3/bin", "scripts", "tools", ".config/mise/conf.d", ".hg", "hgconf",
              ".cargo", "tc"):  # fmt: skip
        (ws / d).mkdir(parents=True, exist_ok=True)
    (ws / "venv3" / "bin" / "activate").write_text("# venv\n")
    (ws / ".envrc").write_text("VIRTUAL_ENV_DISABLE_PROMPT=1 source venv3/bin/activate\ndotenv\n")
    (ws / ".env").write_text("PYTHONPATH=lib\n")
    (ws / "mise.toml").write_text(
        '[env]\n_.source = "{{config_root}}/scripts/m.sh"\n'
        "X = \"{{ exec(command='sh tools/gen.sh') }}\"\n"
        '[hooks]\nenter = { script = "scripts/hook.sh" }\n'
    )
    (ws / ".config" / "mise" / "conf.d" / "a.toml").write_text(
        '[[env]]\n_.source = "scripts/c.sh"\n'
    )
    (ws / ".tool-versions").write_text("node path:./tv\n")
    (ws / ".hg" / "hgrc").write_text("%include ../hgconf/team.rc\n")
    (ws / "hgconf" / "team.rc").write_text("[ui]\n")
    (ws / ".cargo" / "config.toml").write_text('include = ["team.toml"]\n')
    (ws / "rust-toolchain.toml").write_text(f'[toolchain]\npath = "{ws / "tc"}"\n')
    kept = ("scripts/m.sh", "tools/gen.sh", "scripts/hook.sh", "scripts/c.sh")
    for name in kept:
        (ws / name).write_text("# the project's\n")
    planted = ("venv3/bin/ls", "lib/sitecustomize.py", "tv/bin/ls", "tc/bin/cargo",
               ".cargo/team.toml")  # fmt: skip
    run(host, "".join(f"mkdir -p $(dirname {p}); echo x > {p}\n" for p in planted)
        + "".join(f"echo x >> {n}\n" for n in kept)
        + "echo '[hooks]' >> hgconf/team.rc\n")  # fmt: skip
    for path in planted:
        assert not (ws / path).exists(), path
    for name in kept:
        assert (ws / name).read_text() == "# the project's\n", name
    assert (ws / "hgconf" / "team.rc").read_text() == "[ui]\n"


def test_a_link_where_an_earlier_run_deleted_a_directory_is_held(host: Host) -> None:
    """r13a L1: run 1 made `notes.txt -> q/python3` with q a directory, run 2 deleted q,
    run 3 made `q -> .venv/bin`: no run saw a link take a directory's place, and a save of
    notes.txt wrote the venv's interpreter outside the roots."""
    run(host, "mkdir q; echo x > q/python3; ln -s q/python3 notes.txt\n")
    run(host, "rm -rf q\n")
    run(host, "mkdir -p .venv/bin; ln -s .venv/bin q\n")
    assert not (host.ws / "q").is_symlink()


def test_more_spellings_of_what_direnv_and_mise_run_are_kept(host: Host) -> None:
    """r14a M1, M2, D1, D2: exec() in mise's [vars] or with `command=` not first, a hook
    naming a task, `python.uv_venv_auto` (the project's .venv/bin first on PATH); in an
    .envrc, a path joined to an option (`NODE_OPTIONS=--require=./tools/trace.js`) and an
    unquoted `$(pwd)/bin`: what they ran was not kept."""
    ws = host.ws
    for d in ("tools", "scripts", ".venv/bin"):
        (ws / d).mkdir(parents=True, exist_ok=True)
    (ws / "mise.toml").write_text(
        "[vars]\nX = \"{{ exec(command='sh scripts/v.sh') }}\"\n"
        "[env]\nY = \"{{ exec(cache_key='k', command='sh scripts/c.sh') }}\"\n"
        '[hooks]\nenter = { task = "setup" }\n[tasks.setup]\nrun = "sh scripts/setup.sh"\n'
        "[settings]\npython.uv_venv_auto = true\n"
    )
    (ws / ".envrc").write_text(
        "export NODE_OPTIONS=--require=./tools/trace.js\nexport PATH=$(pwd)/bin:$PATH\n"
    )
    kept = ("scripts/v.sh", "scripts/c.sh", "scripts/setup.sh", "tools/trace.js")
    for name in kept:
        (ws / name).write_text("# the project's\n")
    run(host, "".join(f"echo x >> {n}\n" for n in kept)
        + "mkdir -p bin; echo x > bin/ls; echo x > .venv/bin/ls\n")  # fmt: skip
    for name in kept:
        assert (ws / name).read_text() == "# the project's\n", name
    assert not (ws / "bin" / "ls").exists()
    assert not (ws / ".venv" / "bin" / "ls").exists()


def test_a_link_inside_where_an_earlier_run_deleted_a_tree_is_held(host: Host) -> None:
    """r14a L1: `rm -rf docs` is one journal entry: docs/api, a directory inside it, was
    not known, and `docs/api -> ../.venv/bin` a run later led notes.txt out of the roots."""
    (host.ws / "docs" / "api").mkdir(parents=True)  # the project's, made on the host
    (host.ws / "docs" / "api" / "python3").write_text("x\n")
    run(host, "ln -s docs/api/python3 notes.txt\n")
    run(host, "rm -rf docs\n")
    run(host, "mkdir -p docs .venv/bin; ln -s ../.venv/bin docs/api\n")
    assert not (host.ws / "docs" / "api").is_symlink()


def test_a_new_link_may_not_lead_where_links_out_of_the_roots_are(host: Host) -> None:
    """r14c H1-H3: a link re-pointed from one directory to another (`q -> d`, then `q ->
    .venv/bin`), or put where a directory was that the host deleted (`make clean`), led a
    link made earlier (`notes.txt -> q/python3`) to the venv's interpreter outside the
    roots: a save rewrote it. A link to a directory below which something leads out of
    the roots is held."""
    mine = host.outside / "python3"
    mine.write_text("#!/bin/sh\n")
    mine.chmod(0o755)
    (host.ws / ".venv" / "bin").mkdir(parents=True)
    os.symlink(mine, host.ws / ".venv" / "bin" / "python3")
    run(host, "mkdir d; echo x > d/python3; ln -s d q; ln -s q/python3 notes.txt\n")
    assert (host.ws / "q").is_symlink()
    run(host, "rm q; ln -s .venv/bin q\n")
    assert os.readlink(host.ws / "q") == "d"
    (host.ws / "build").mkdir()
    (host.ws / "build" / "python3").write_text("x\n")
    run(host, "ln -s build/python3 out.txt\n")
    shutil.rmtree(host.ws / "build")  # the host's own `make clean`
    run(host, "ln -s .venv/bin build\n")
    assert not (host.ws / "build").is_symlink()
    run(host, "mkdir -p src/lib; echo x > src/lib/a.py; ln -s src/lib lib\n")
    assert (host.ws / "lib").is_symlink()  # an ordinary link to a directory lands
    assert mine.read_text() == "#!/bin/sh\n"


def test_links_to_hard_linked_files_and_module_loaders_are_held(host: Host) -> None:
    """r15a H1, D1, M1, F1: a link to a file with other names (uv and pnpm hard-link from
    their caches) let a save change the cache outside the roots; `--require pkg/x` in an
    .envrc's NODE_OPTIONS, and mise's ordinary [env] variables, named what Node or Python
    loads at every start; and a link to a project whose venv leads only to an interpreter
    you cannot write was held for nothing."""
    ws = host.ws
    cache = host.outside / "six.py"
    cache.write_text("# cached\n")
    (ws / "site").mkdir()
    os.link(cache, ws / "site" / "six.py")
    (ws / "node_modules" / "source-map-support").mkdir(parents=True)
    (ws / "node_modules" / "source-map-support" / "register.js").write_text("// pkg\n")
    (ws / "tools").mkdir()
    (ws / "tools" / "trace.js").write_text("// the project's\n")
    (ws / ".envrc").write_text('export NODE_OPTIONS="--require source-map-support/register"\n')
    (ws / "mise.toml").write_text(
        '[env]\nNODE_OPTIONS = "--require ./tools/trace.js"\nPYTHONPATH = "lib2"\n'
    )
    (ws / "lib2").mkdir()
    (ws / "packages" / "ml" / ".venv" / "bin").mkdir(parents=True)
    os.symlink("/usr/bin/python3", ws / "packages" / "ml" / ".venv" / "bin" / "python3")
    run(host, "ln -s site/six.py notes.md\n"
              "echo x >> node_modules/source-map-support/register.js\n"
              "echo x >> tools/trace.js; echo x > lib2/sitecustomize.py\n"
              "ln -s packages/ml ml\n")  # fmt: skip
    assert not (ws / "notes.md").is_symlink()
    assert (ws / "node_modules" / "source-map-support" / "register.js").read_text() == "// pkg\n"
    assert (ws / "tools" / "trace.js").read_text() == "// the project's\n"
    assert not (ws / "lib2" / "sitecustomize.py").exists()
    # /usr/bin/python3 is yours to write only as root
    assert (ws / "ml").is_symlink() == (not corral_runs_as_root())
    assert cache.read_text() == "# cached\n"


def test_every_variable_a_runtime_loads_code_from_is_read_wherever_it_is_set(
    host: Host,
) -> None:
    """r16a D1, M1, M2, P1, J1, T1, G1, C1: a dotenv's NODE_OPTIONS, the variables of mise's
    `_.file` and its table values, PERL5OPT's `-Itools`, JAVA_TOOL_OPTIONS' `-javaagent:`,
    mise's file tasks a hook runs, GIT_CONFIG_VALUE_0 naming a hooks directory, and cargo's
    `-C linker=` in rustflags: what they load ran at the next prompt or commit."""
    ws = host.ws
    for d in ("tools", "perllib", "hooks", "mise-tasks", ".cargo", "envs"):
        (ws / d).mkdir(parents=True, exist_ok=True)
    (ws / ".envrc").write_text(
        "dotenv\nexport PERL5OPT='-Iperllib -MTrace'\n"
        "export JAVA_TOOL_OPTIONS=-javaagent:agent.jar\n"
        "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=hooks\n"
    )
    (ws / ".env").write_text('NODE_OPTIONS="--require ./tools/a.js"\n')
    (ws / "envs" / "m.env").write_text('NODE_OPTIONS="--require ./tools/b.js"\n')
    (ws / "mise.toml").write_text(
        '[env]\n_.file = "envs/m.env"\nX = { value = "--require ./tools/c.js" }\n'
        '[hooks]\nenter = { task = "setup" }\n'
    )
    (ws / ".cargo" / "config.toml").write_text(
        '[build]\nrustflags = ["-C", "linker=tools/ld.sh"]\n'
    )
    kept = ("tools/a.js", "tools/b.js", "tools/c.js", "agent.jar", "mise-tasks/setup",
            "tools/ld.sh")  # fmt: skip
    for name in kept:
        (ws / name).write_text("# the project's\n")
    run(host, "".join(f"echo x >> {n}\n" for n in kept)
        + "echo x > perllib/Trace.pm; echo x > hooks/pre-commit\n"
        + "echo x > tools/new.txt\n")  # fmt: skip
    for name in kept:
        assert (ws / name).read_text() == "# the project's\n", name
    assert not (ws / "perllib" / "Trace.pm").exists()
    assert (ws / "tools" / "new.txt").exists()  # tools/ itself is not kept whole
    assert not (ws / "hooks" / "pre-commit").exists()
