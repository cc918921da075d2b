"""What the host runs or writes through later, by itself, is not changed from a sandbox: git's
files, start-up files (also linked into the workspace from $HOME), what an .envrc sources or
puts on PATH, and the links on the way to them.

Each test writes from inside real bwrap with change sets on (the default), then looks at what
the host holds afterwards, or lets the host's ordinary action (git commit) happen.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import pytest

from .sandbox_support import DONE, q, run

if TYPE_CHECKING:
    from .conftest import Host

pytestmark = pytest.mark.sandbox


def test_a_symlink_in_the_git_directory_is_held(host: Host) -> None:
    """F7: links in .git to a file outside the writable area were applied; the host's next
    `git commit` wrote the commit message through one and appended the reflog through the
    other."""
    host.git("init", "-q", str(host.ws))
    victim = host.outside / "victim.txt"
    held = run(
        host,
        f"ln -sf {q(victim)} .git/COMMIT_EDITMSG\nmkdir -p .git/logs\n"
        f"ln -sf {q(victim)} .git/logs/HEAD\n",
    )
    assert "held" in held and "symlink in a git directory" in held, held
    assert not (host.ws / ".git" / "COMMIT_EDITMSG").is_symlink()
    assert not (host.ws / ".git" / "logs" / "HEAD").is_symlink()
    host.git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--allow-empty",
             "-m", "user message", cwd=host.ws)  # fmt: skip
    assert victim.read_text() == "original\n"


def test_programs_in_a_workspace_directory_on_the_hosts_path_are_held(host: Host) -> None:
    """F1: with an activated venv (its bin first on the PATH corral runs with), a sandboxed
    command wrote .venv/bin/ls and .venv/bin/git, and the user's next `ls` ran one."""
    bindir = host.ws / ".venv" / "bin"
    bindir.mkdir(parents=True)
    (bindir / "python3").write_text("#!/bin/sh\n")
    host.env["PATH"] = f"{bindir}:{host.env['PATH']}"
    held = run(
        host,
        "printf '#!/bin/sh\\n' > .venv/bin/ls; chmod +x .venv/bin/ls\n"
        "printf '#!/bin/sh\\n' > .venv/bin/python3\n",
    )
    assert not (bindir / "ls").exists(), held
    assert (bindir / "python3").read_text() == "#!/bin/sh\n"
    status = host.corral("status")
    assert ".venv/bin" in status.stdout and "PATH" in status.stdout, status.stdout


def test_what_an_envrc_runs_as_a_plain_command_is_protected(host: Host) -> None:
    """F2: `./scripts/env.sh` or `bash tools/setup.sh` in a root .envrc were neither protected
    nor named in status; direnv runs them at the next prompt."""
    host.git("init", "-q", str(host.ws))
    (host.ws / "scripts").mkdir()
    (host.ws / "tools").mkdir()
    for name in ("scripts/env.sh", "tools/setup.sh", "tools/gen.py"):
        (host.ws / name).write_text("# the project's own\n")
    (host.ws / ".envrc").write_text(
        './scripts/env.sh\nbash tools/setup.sh\neval "$(python3 tools/gen.py)"\nsome-tool --flag\n'
    )
    run(
        host,
        "for f in scripts/env.sh tools/setup.sh tools/gen.py; do echo 'touch CANARY' > $f; done\n",
    )
    for name in ("scripts/env.sh", "tools/setup.sh", "tools/gen.py"):
        assert (host.ws / name).read_text() == "# the project's own\n", name
    status = host.corral("status")
    assert "some-tool" in status.stdout, status.stdout  # what cannot be followed is named


@pytest.mark.parametrize("name", ["mise.toml", ".mise.toml", ".mise/config.toml",
                                  ".vscode/tasks.json", ".lfsconfig"])  # fmt: skip
def test_project_config_other_tools_obey_is_held(host: Host, name: str) -> None:
    """F3: mise runs hooks and sources scripts from its project config at every prompt;
    VS Code runs folderOpen tasks; git-lfs takes its server from .lfsconfig."""
    held = run(host, f'mkdir -p "$(dirname {q(name)})"; echo x > {q(name)}\n')
    assert not (host.ws / name).exists(), held
    assert "held" in held, held


def test_with_home_as_the_workspace_every_dotfile_is_held(host: Host) -> None:
    """F4: with $HOME writable, ~/.bash_aliases, a user-site .pth, ~/.config/environment.d
    and many more start-up files were applied: only a fixed list was protected."""
    names = (".bash_aliases", ".local/lib/python3.11/site-packages/evil.pth",
             ".config/environment.d/x.conf", ".tmux.conf", ".config/starship.toml",
             ".xsessionrc", ".direnvrc")  # fmt: skip
    body = "".join(f'mkdir -p "$(dirname {q(n)})"; echo x > {q(n)}\n' for n in names)
    body += "echo plain > notes.txt\n"
    done = host.corral("run", "--cwd", str(host.home), "--", "sh", "-c",
                       f'cd {q(host.home)}\n{body}echo {DONE}')  # fmt: skip
    assert DONE in done.stdout, done.stdout + done.stderr
    for n in names:
        assert not (host.home / n).exists(), (n, done.stderr)
    assert (host.home / "notes.txt").read_text() == "plain\n"


def test_a_held_names_terminal_escapes_do_not_reach_the_terminal(host: Host) -> None:
    """F6: `corral changes ID --diff` printed a sandbox-chosen directory name raw in the diff
    header: OSC 52 sets the clipboard in many terminals, CR and erase-line rewrite the screen."""
    name = "x\x1b]52;c;Q0FOQVJZ\x07\x1b[2K\rCANARY"
    held = run(host, f"mkdir {q(name)} && echo x > {q(name + '/.envrc')}\n")
    assert "held" in held, held
    listing = host.corral("changes")
    change_id = next(w.rstrip(":") for w in listing.stdout.split() if len(w) > 16 and "-" in w)
    shown = host.corral("changes", change_id, "--diff")
    assert shown.returncode == 0, shown.stderr
    assert "diff --corral" in shown.stdout
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout and "\r" not in shown.stdout


def _hook_body(canary: object) -> str:
    return f"#!/bin/sh\ntouch {q(canary)}\n"


def test_a_hooks_path_set_in_git_config_under_xdg_config_home_is_protected(host: Host) -> None:
    """F8 (a): git reads its global config from $XDG_CONFIG_HOME/git/config; corral read only
    ~/.config/git/config, so a core.hooksPath set there was not protected."""
    xdg = host.base / "xdg"
    (xdg / "git").mkdir(parents=True)
    (xdg / "git" / "config").write_text("[core]\n\thooksPath = .githooks\n")
    host.env["XDG_CONFIG_HOME"] = str(xdg)
    host.git("init", "-q", str(host.ws))
    canary = host.outside / "canary-xdg-hook"
    held = run(host, f"mkdir -p .githooks && printf %s {q(_hook_body(canary))} > "
                     ".githooks/pre-commit && chmod +x .githooks/pre-commit\n")  # fmt: skip
    assert not (host.ws / ".githooks" / "pre-commit").exists(), held


def test_gits_global_config_inside_the_workspace_is_protected(host: Host) -> None:
    """F8 (b): with $XDG_CONFIG_HOME inside the workspace, git's global config and direnv's
    direnvrc were writable; a planted core.fsmonitor ran on the host's `git status`."""
    host.env["XDG_CONFIG_HOME"] = str(host.ws / ".config")
    host.git("init", "-q", str(host.ws))
    run(host, 'mkdir -p .config/git .config/direnv\n'
              'printf "[core]\\n\\tfsmonitor = true\\n" > .config/git/config\n'
              "echo x > .config/direnv/direnvrc\n")  # fmt: skip
    assert not (host.ws / ".config" / "git" / "config").exists()
    assert not (host.ws / ".config" / "direnv" / "direnvrc").exists()


def test_a_submodules_hooks_path_is_protected(host: Host) -> None:
    """F11: a submodule's own config (.git/modules/sub/config) was never read for its
    core.hooksPath; a hook planted there ran on the host's `git commit` in the submodule."""
    upstream = host.base / "upstream"
    host.git("init", "-q", str(upstream))
    host.git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--allow-empty",
             "-m", "first", cwd=upstream)  # fmt: skip
    host.git("init", "-q", str(host.ws))
    host.git("-c", "protocol.file.allow=always", "submodule", "add", str(upstream), "extmod",
             cwd=host.ws)  # fmt: skip
    host.git("config", "core.hooksPath", ".githooks", cwd=host.ws / "extmod")
    canary = host.outside / "canary-submodule-hook"
    hook = "extmod/.githooks/pre-commit"
    held = run(host, f"mkdir -p extmod/.githooks && printf %s {q(_hook_body(canary))} > "
                     f"{hook} && chmod +x {hook}\n")  # fmt: skip
    assert not (host.ws / "extmod" / ".githooks" / "pre-commit").exists(), held
    assert "held" in held and "extmod/.githooks" in held, held


def test_a_folder_too_large_to_search_for_repositories_is_refused(host: Host) -> None:
    """F12: the search for repositories in a folder workspace stopped quietly after 256
    directories; one run made 3000, and the next run left a member repository unprotected."""
    from corral.sandbox.protect import gitguard

    folder = host.base / "folder"
    host.git("init", "-q", str(folder / "projA"))
    for i in range(gitguard.LIMIT + 1):
        (folder / f"pad{i:05}").mkdir()
    done = host.corral("run", "--cwd", str(folder), "--", "true", cwd=folder)
    assert done.returncode == 125, done.stderr
    assert "narrower workspace" in done.stderr, done.stderr


def test_a_separate_git_dirs_hooks_are_read_only_with_direct_writes(host: Host) -> None:
    """F14: `git init --separate-git-dir` inside the workspace: its hooks were not kept
    read-only, and with direct writes a hook landed on the host."""
    host.git("init", "-q", "--separate-git-dir", str(host.ws / "gitdata"), str(host.ws))
    canary = host.outside / "canary-separate-hook"
    done = host.corral("run", "--writes", "direct", "--", "sh", "-c",
                       f"printf %s {q(_hook_body(canary))} > gitdata/hooks/pre-commit; "
                       f"echo {DONE}", cwd=host.ws)  # fmt: skip
    assert DONE in done.stdout, done.stderr
    assert not (host.ws / "gitdata" / "hooks" / "pre-commit").exists(), done.stderr


def test_symlinks_on_the_way_to_a_path_directory_cannot_be_replaced(host: Host) -> None:
    """Fifth review, S1: the PATH fix kept the link's target, not the link: `bin -> /opt/x`
    replaced by a directory of programs, `tools -> venvdir` re-pointed at one."""
    outside = host.outside / "realbin"
    outside.mkdir()
    (host.ws / "bin").symlink_to(outside)
    (host.ws / "venvdir" / "bin").mkdir(parents=True)
    (host.ws / "tools").symlink_to("venvdir")
    host.env["PATH"] = f"{host.ws / 'bin'}:{host.ws / 'tools' / 'bin'}:{host.env['PATH']}"
    held = run(
        host,
        "rm -f bin && mkdir bin && printf '#!/bin/sh\\n' > bin/ls && chmod +x bin/ls\n"
        "mkdir -p evil/bin && printf '#!/bin/sh\\n' > evil/bin/git && chmod +x evil/bin/git\n"
        "rm -f tools && ln -s evil tools\n",
    )
    assert (host.ws / "bin").is_symlink(), held
    assert os.readlink(host.ws / "tools") == "venvdir", held
    assert not (outside / "ls").exists()


def test_a_home_reached_through_a_symlink_keeps_change_sets(host: Host) -> None:
    """Fifth review, S2: with $HOME spelled through a symlink (/home -> /var/home), the
    staging area was named to bwrap by that spelling, which does not exist in the sandbox's
    root: the overlay could not be mounted and every run fell back to direct writes."""
    link = host.base / "homelink"
    link.symlink_to(host.home)
    host.env["HOME"] = str(link)
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        host.env.pop(name, None)
    held = run(host, "echo x > made.txt\necho y > .nvim.lua\n")
    assert "WRITES GO STRAIGHT" not in held, held
    assert (host.ws / "made.txt").read_text() == "x\n"
    assert "held" in held and not (host.ws / ".nvim.lua").exists(), held


def test_undo_never_changes_a_mode_through_a_link(host: Host) -> None:
    """Fifth review, S12: undo put a directory's old mode back with chmod, which follows a
    symlink put there since (by a run with direct writes): a file outside the writable area
    went from 600 to 755."""
    victim = host.outside / "victim.txt"
    victim.chmod(0o600)
    (host.ws / "d").mkdir(mode=0o755)
    (host.ws / "d" / "f").write_text("x")
    run(host, "chmod 700 d\n")
    assert (host.ws / "d").stat().st_mode & 0o777 == 0o700
    done = host.corral("run", "--writes", "direct", "--", "sh", "-c",
                       f"rm -rf d && ln -s {q(victim)} d")  # fmt: skip
    assert done.returncode == 0, done.stderr
    undo = host.corral("undo")
    assert victim.stat().st_mode & 0o777 == 0o600, undo.stdout + undo.stderr
    assert undo.returncode != 0 and "no longer the directory" in undo.stdout + undo.stderr


def test_what_git_runs_from_the_work_tree_is_protected(host: Host) -> None:
    """Fifth review, S4 and S5: scripts named by core.fsmonitor or a filter in .git/config,
    a hook that is a link into the work tree, and a hook that runs a tracked script were all
    writable; host `git status` / `git commit` ran them."""
    host.git("init", "-q", str(host.ws))
    (host.ws / "tools").mkdir()
    (host.ws / "scripts").mkdir()
    names = ("tools/fsmon.sh", "tools/clean.sh", "scripts/pre-commit.sh", "scripts/commit-msg.sh")
    for name in names:
        (host.ws / name).write_text("#!/bin/sh\nexit 0\n")
        (host.ws / name).chmod(0o755)
    (host.ws / "tools" / "extdiff.sh").write_text("#!/bin/sh\nexit 0\n")
    names += ("tools/extdiff.sh",)
    host.git("config", "core.fsmonitor", "tools/fsmon.sh")
    host.git("config", "filter.x.clean", "./tools/clean.sh")
    host.git("config", "diff.external", "tools/extdiff.sh")  # sixth review, R4
    hooks = host.ws / ".git" / "hooks"
    (hooks / "pre-commit").symlink_to("../../scripts/pre-commit.sh")
    # sixth review, R3: the top of the work tree spelled by git itself, and an optional
    # script that does not exist yet
    (hooks / "commit-msg").write_text(
        '#!/bin/sh\nexec ./scripts/commit-msg.sh "$@"\n'
        '"$(git rev-parse --show-toplevel)/scripts/top.sh"\n'
        "[ -x scripts/local.sh ] && ./scripts/local.sh\n"
    )
    (host.ws / "scripts" / "top.sh").write_text("#!/bin/sh\nexit 0\n")
    names += ("scripts/top.sh",)
    run(
        host,
        "".join(f"echo 'touch CANARY' > {n}\n" for n in names)
        + "echo 'touch CANARY' > scripts/local.sh\n",
    )
    for name in names:
        assert (host.ws / name).read_text() == "#!/bin/sh\nexit 0\n", name
    assert not (host.ws / "scripts" / "local.sh").exists()


def test_files_an_envrc_points_variables_at_are_protected(host: Host) -> None:
    """Fifth review, S8 and S15: `export BASH_ENV=.bashenv` and
    `export FOO="$(python3 tools/x.py)"` left both files writable."""
    host.git("init", "-q", str(host.ws))
    (host.ws / "tools").mkdir()
    (host.ws / ".bashenv").write_text("# mine\n")
    (host.ws / "tools" / "x.py").write_text("# mine\n")
    (host.ws / ".envrc").write_text(
        'export BASH_ENV=.bashenv\nexport FOO="$(python3 tools/x.py)"\n'
    )
    run(host, "echo 'touch CANARY' > .bashenv\necho 'import os' > tools/x.py\n")
    assert (host.ws / ".bashenv").read_text() == "# mine\n"
    assert (host.ws / "tools" / "x.py").read_text() == "# mine\n"


def test_a_repository_under_a_dot_directory_of_a_folder_is_found(host: Host) -> None:
    """Fifth review, S6: `.worktrees/feature` two levels down was never searched."""
    folder = host.base / "folder"
    repo = folder / ".worktrees" / "feature"
    host.git("init", "-q", str(repo))
    host.git("config", "core.hooksPath", ".githooks", cwd=repo)
    done = host.corral("run", "--cwd", str(folder), "--", "sh", "-c",
                       "mkdir -p .worktrees/feature/.githooks && "
                       "echo x > .worktrees/feature/.githooks/pre-commit", cwd=folder)  # fmt: skip
    assert not (repo / ".githooks" / "pre-commit").exists(), done.stderr


def test_git_global_config_named_by_git_config_global_is_protected(host: Host) -> None:
    """Fifth review, S7: $GIT_CONFIG_GLOBAL pointing into the workspace was read for
    hooksPath but stayed writable; a planted core.fsmonitor ran on host `git status`."""
    host.git("init", "-q", str(host.ws))
    (host.ws / "gitconfig").write_text("[user]\n\tname = me\n")
    host.env["GIT_CONFIG_GLOBAL"] = str(host.ws / "gitconfig")
    run(host, "printf '[core]\\n\\tfsmonitor = true\\n' >> gitconfig\n")
    assert (host.ws / "gitconfig").read_text() == "[user]\n\tname = me\n"


def test_xdg_config_home_inside_the_workspace_is_kept_whole(host: Host) -> None:
    """Fifth review, S13: with $XDG_CONFIG_HOME in the workspace (a dotfiles repository),
    fish, systemd user units, autostart, environment.d, tmux and pip config were applied."""
    config = host.ws / "dot-config"
    (config / "fish").mkdir(parents=True)
    host.env["XDG_CONFIG_HOME"] = str(config)
    run(host, "mkdir -p dot-config/tmux dot-config/systemd/user\n"
              "echo 'run-shell x' > dot-config/tmux/tmux.conf\n"
              "echo x > dot-config/fish/config.fish\n")  # fmt: skip
    assert not (config / "tmux").exists() and not (config / "fish" / "config.fish").exists()


def test_repositories_three_levels_down_a_folder_are_protected(host: Host) -> None:
    """Sixth review, R1: clones kept as host/owner/repo (ghq, GOPATH) were not searched."""
    folder = host.base / "src"
    repo = folder / "github.com" / "owner" / "repo"
    host.git("init", "-q", str(repo))
    host.git("config", "core.hooksPath", ".githooks", cwd=repo)
    hooks = "github.com/owner/repo/.githooks"
    done = host.corral("run", "--cwd", str(folder), "--", "sh", "-c",
                       f"mkdir -p {hooks} && echo x > {hooks}/pre-commit", cwd=folder)  # fmt: skip
    assert not (repo / ".githooks" / "pre-commit").exists(), done.stderr


def test_a_workspace_inside_a_repository_keeps_what_its_config_names(host: Host) -> None:
    """Sixth review, R2: a monorepo package opened alone; the enclosing repository's
    core.hooksPath (husky's `frontend/.husky/_`) lies in the workspace and was writable."""
    mono = host.base / "mono"
    host.git("init", "-q", str(mono))
    host.git("config", "core.hooksPath", "frontend/.husky/_", cwd=mono)
    frontend = mono / "frontend"
    frontend.mkdir()
    body = "mkdir -p .husky/_ && echo x > .husky/_/pre-commit"
    done = host.corral("run", "--cwd", str(frontend), "--", "sh", "-c", body, cwd=frontend)
    assert not (frontend / ".husky" / "_" / "pre-commit").exists(), done.stderr


def test_a_file_replaced_by_a_link_out_of_the_workspace_is_held(host: Host) -> None:
    """Sixth review (editor) R2: a change set turned notes.txt, open in the editor, into a
    link to a file outside every writable area; the user's next :write went through it."""
    notes = host.ws / "notes.txt"
    notes.write_text("my notes\n")
    victim = host.outside / "victim.txt"
    held = run(host, f"ln -s {q(victim)} l && mv -T l notes.txt\n")
    assert not notes.is_symlink(), held
    assert "held" in held and "saving the file would write there" in held, held


def test_every_link_of_a_chain_to_a_protected_path_is_kept(host: Host) -> None:
    """Sixth review R7: `.git/hooks -> ../hooklink -> tools/hooks` and `.venv ->
    venvs/current -> py312` on PATH: only the first link was kept; the middle one was
    re-pointed at a directory of the command's making."""
    host.git("init", "-q", str(host.ws))
    (host.ws / "tools" / "hooks").mkdir(parents=True)
    (host.ws / "hooklink").symlink_to("tools/hooks")
    hooks = host.ws / ".git" / "hooks"
    for entry in hooks.iterdir():
        entry.unlink()
    hooks.rmdir()
    hooks.symlink_to("../hooklink")
    (host.ws / "venvs" / "py312" / "bin").mkdir(parents=True)
    (host.ws / "venvs" / "current").symlink_to("py312")
    (host.ws / ".venv").symlink_to("venvs/current")
    host.env["PATH"] = f"{host.ws / '.venv' / 'bin'}:{host.env['PATH']}"
    held = run(
        host,
        "mkdir -p evil/bin && echo x > evil/pre-commit && echo x > evil/bin/ls\n"
        "rm -f hooklink && ln -s evil hooklink\n"
        "rm -f venvs/current && ln -s ../evil venvs/current\n",
    )
    assert os.readlink(host.ws / "hooklink") == "tools/hooks", held
    assert os.readlink(host.ws / "venvs" / "current") == "py312", held


def test_a_linked_worktree_inside_the_workspace_keeps_its_hooks_path(host: Host) -> None:
    """Sixth review R5: with a relative core.hooksPath, git resolves it from the top of the
    worktree a commit runs in; `.worktrees/feat/.githooks` was writable."""
    host.git("init", "-q", str(host.ws))
    (host.ws / ".githooks").mkdir()
    (host.ws / ".githooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (host.ws / ".gitignore").write_text(".worktrees/\n")
    host.git("config", "core.hooksPath", ".githooks")
    host.git("add", "-A")
    host.git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-m", "one")
    host.git("worktree", "add", "-q", str(host.ws / ".worktrees" / "feat"))
    hook = host.ws / ".worktrees" / "feat" / ".githooks" / "pre-commit"
    held = run(host, "echo 'touch CANARY' > .worktrees/feat/.githooks/pre-commit\n")
    assert hook.read_text() == "#!/bin/sh\nexit 0\n", held


def test_a_protected_path_below_a_host_link_is_checked_where_the_write_lands(host: Host) -> None:
    # Third review, N1: `env` is a link to `envdir` (made by an earlier run, or the user's own); the
    # .envrc sources env/local.sh; the sandbox's write is recorded at envdir/local.sh.
    (host.ws / "envdir").mkdir()
    (host.ws / "env").symlink_to("envdir")
    (host.ws / ".envrc").write_text("source_env_if_exists env/local.sh\n")
    held = run(host, "echo 'touch /tmp/x' > env/local.sh")
    assert not (host.ws / "envdir" / "local.sh").exists(), "the sourced file reached the host"
    assert "held" in held, held


def test_what_an_envrc_puts_on_path_in_any_spelling_is_protected(host: Host) -> None:
    # Third review, N2 and N7: layouts, export PATH=$PWD/..., and commands after `then` / in `{ }`.
    (host.ws / ".envrc").write_text(
        "if has nvm; then use nvm; else source_env_if_exists .envrc.private; fi\n"
        'layout node\nexport PATH="$PWD/tools:$PATH"\n{ PATH_add scripts; }\n'
    )
    held = run(
        host,
        "mkdir -p node_modules/.bin tools scripts; for f in node_modules/.bin/ls tools/git "
        "scripts/make .envrc.private; do echo x > $f; done; echo ok > fine.txt",
    )  # (`use flake` holds every change set now: round 23)
    for name in ("node_modules/.bin/ls", "tools/git", "scripts/make", ".envrc.private"):
        assert not (host.ws / name).exists(), f"{name} reached the host"
    assert (host.ws / "fine.txt").read_text() == "ok\n"
    assert "held" in held


def test_a_link_on_the_way_to_a_protected_path_cannot_be_pointed_elsewhere(host: Host) -> None:
    # Final review, A2: `env -> envdir` is the user's; .envrc sources env/local.sh. The command
    # pointed `env` at a directory of its own holding a local.sh: every entry passed.
    (host.ws / "envdir").mkdir()
    (host.ws / "envdir" / "local.sh").write_text("export A=1\n")
    (host.ws / "env").symlink_to("envdir")
    (host.ws / ".envrc").write_text("source_env_if_exists env/local.sh\n")
    held = run(host, "mkdir evil && echo 'touch /tmp/x' > evil/local.sh && ln -sfn evil env")
    assert os.readlink(host.ws / "env") == "envdir", "the protected path's link was re-pointed"
    assert "held" in held and "/env" in held, held


def test_what_the_envrc_sources_is_protected_like_it(host: Host) -> None:
    # Second review, F5: direnv runs .envrc at the next prompt, and what it sources, loads or puts
    # on PATH.
    (host.ws / ".envrc").write_text(
        "source_env_if_exists .envrc.local\ndotenv\nPATH_add bin\nuse flake\n"
    )
    held = run(
        host,
        "echo 'touch /tmp/x' > .envrc.local; echo 'PROMPT_COMMAND=x' > .env; "
        "mkdir -p bin && printf '#!/bin/sh\\n' > bin/ls; echo '{}' > flake.nix; echo ok > fine.txt",
    )
    for name in (".envrc.local", ".env", "bin", "flake.nix"):
        assert not os.path.lexists(host.ws / name), f"{name} reached the host"
        assert name in held
    assert not (host.ws / "fine.txt").exists()  # `use flake`: all of it held (round 23)


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


def test_a_protected_name_with_a_star_is_read_only_with_direct_writes(host: Host) -> None:
    """`mise.*.toml`: the existing matches are kept read-only when writes go straight to the
    workspace, where nothing is held."""
    (host.ws / "mise.dev.toml").write_text("# mine\n")
    done = host.corral("run", "--writes", "direct", "--", "sh", "-c",
                       "echo x >> mise.dev.toml; echo done", cwd=host.ws)  # fmt: skip
    assert "done" in done.stdout, done.stderr
    assert (host.ws / "mise.dev.toml").read_text() == "# mine\n"
