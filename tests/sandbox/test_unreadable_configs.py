"""Host-run configs corral cannot read ahead hold every change set for review (issue 7, the
class of review rounds 12 to 16: a host tool's config names a file the sandbox wrote).

corral reads an .envrc, mise, cargo and Mercurial configs for the files they have the host run.
What it cannot read ahead (a command the .envrc runs, a path built at run time) used to be a
note in status while the write landed; now the change set is held, with the reason, unless
`sandbox.unreadable_configs = "apply"`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import corral_runs_as_root
from .sandbox_support import DONE, ignore_less, run, run_wrapped
from .test_change_sets import held_ids

if TYPE_CHECKING:
    from .conftest import Host


def _write(host: Host, files: dict[str, str]) -> None:
    """The project's files, made on the host before the run."""
    for name, text in files.items():
        (host.ws / name).parent.mkdir(parents=True, exist_ok=True)
        (host.ws / name).write_text(text)


def _loader_built_at_run_time(host: Host) -> None:
    """An .envrc whose NODE_OPTIONS names tools/trace.js through a command substitution:
    every host `node`/`npm` at that prompt would load what a command writes there."""
    (host.ws / ".envrc").write_text('export NODE_OPTIONS="--require ./$(echo tools)/trace.js"\n')


def test_a_write_where_an_envrc_cannot_be_read_ahead_is_held_with_the_reason(
    host: Host,
) -> None:
    _loader_built_at_run_time(host)
    stderr = run(host, "mkdir tools; echo 'planted()' > tools/trace.js; echo x > notes.txt\n")
    assert not (host.ws / "tools").exists()
    assert not (host.ws / "notes.txt").exists()
    (change_id,) = held_ids(host)
    assert "held for review" in stderr and ".envrc" in stderr, stderr
    assert "cannot be read ahead" in stderr, stderr
    shown = host.corral("changes", change_id).stdout
    assert "tools/trace.js" in shown
    assert "held for review: corral cannot read ahead" in shown, shown  # (new-user trial)
    # the user's review: applying it is theirs to do, and it then lands
    applied = host.corral("apply", change_id)
    assert applied.returncode == 0, applied.stderr
    assert (host.ws / "notes.txt").read_text() == "x\n"
    status = host.corral("status").stdout
    assert "every change set here is held for review" in status, status
    assert 'sandbox.unreadable_configs = "apply"' in status, status  # how to choose otherwise


@pytest.mark.parametrize(
    "envrc",
    [
        "some-env-tool activate\n",  # a command direnv runs: what it reaches is unknown
        'export NODE_OPTIONS="--require ${ROOT}/tools/trace.js"\n',  # a path from a variable
        "use asdf\n",  # a `use` corral does not know
    ],
    ids=["command", "variable-path", "unknown-use"],
)
def test_every_kind_of_unreadable_envrc_holds(host: Host, envrc: str) -> None:
    (host.ws / ".envrc").write_text(envrc)
    run(host, "echo x > notes.txt\n")
    assert not (host.ws / "notes.txt").exists()
    assert len(held_ids(host)) == 1


def test_the_user_can_choose_to_apply_what_passes(host: Host) -> None:
    config = host.home / ".config" / "corral" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[sandbox]\nunreadable_configs = "apply"\n')
    _loader_built_at_run_time(host)
    run(host, "echo x > notes.txt\n")
    assert (host.ws / "notes.txt").read_text() == "x\n"
    assert held_ids(host) == []
    assert "not protected" in host.corral("status").stdout


def test_a_fully_read_envrc_does_not_hold(host: Host) -> None:
    (host.ws / ".envrc").write_text("dotenv\nPATH_add bin\nlayout python3\nexport A=1\n")
    run(host, "echo x > notes.txt\n")
    assert (host.ws / "notes.txt").read_text() == "x\n"
    assert held_ids(host) == []


def test_values_of_mise_cargo_and_mercurial_configs_corral_has_no_rule_for_are_kept(
    host: Host,
) -> None:
    """r16a leads: Mercurial's `[alias] x = !tools/x.sh`, `[ui] editor`, `[merge-tools]`;
    cargo's `[env] CC` (relative); mise's `[[watch_files]] run` and a `{{config_root}}`
    in an [env] value: no rule named them, so what they run was applied."""
    ws = host.ws
    for d in ("tools", ".hg", ".cargo"):
        (ws / d).mkdir(parents=True, exist_ok=True)
    (ws / ".hg" / "hgrc").write_text(
        "[alias]\nx = !tools/x.sh\n[ui]\neditor = tools/ed.sh\n"
        "[merge-tools]\nm.executable = tools/m.sh\n"
    )
    (ws / ".cargo" / "config.toml").write_text(
        '[env]\nCC = { value = "tools/cc.sh", relative = true }\n'
    )
    (ws / "mise.toml").write_text(
        '[[watch_files]]\npatterns = ["src/*.rs"]\nrun = "./tools/w.sh"\n'
        '[env]\nNODE_OPTIONS = "--require {{config_root}}/tools/t.js"\n'
    )
    kept = ("tools/x.sh", "tools/ed.sh", "tools/m.sh", "tools/cc.sh", "tools/w.sh", "tools/t.js")
    for name in kept:
        (ws / name).write_text("# the project's\n")
    run(host, "".join(f"echo x >> {n}\n" for n in kept) + "echo x > tools/new.txt\n")
    for name in kept:
        assert (ws / name).read_text() == "# the project's\n", name
    assert (ws / "tools" / "new.txt").exists()  # all of it read: the rest lands


def test_a_mise_directive_corral_does_not_know_holds(host: Host) -> None:
    (host.ws / "mise.toml").write_text('[env]\n_.newthing = "tools/x.sh"\n')
    run(host, "echo x > notes.txt\n")
    assert not (host.ws / "notes.txt").exists()
    assert len(held_ids(host)) == 1


def test_configs_below_the_top_of_the_workspace_are_read_when_the_run_ends(host: Host) -> None:
    """r17a N1: `app/.envrc` with `PATH_add bin` and `svc/mise.toml` sourcing `env.sh` were
    not read (only the top's): a planted app/bin/ls ran at `ls` there, env.sh at the
    prompt. An unreadable one below the top holds, as at the top."""
    ws = host.ws
    (ws / "app").mkdir()
    (ws / "svc").mkdir()
    (ws / "app" / ".envrc").write_text("PATH_add bin\n")
    (ws / "svc" / "mise.toml").write_text('[env]\n_.source = "./env.sh"\n')
    (ws / "svc" / "env.sh").write_text("# the project's\n")
    run(host, "mkdir -p app/bin; echo x > app/bin/ls; echo x >> svc/env.sh\n"
              "echo x > app/notes.txt\n")  # fmt: skip
    assert not (ws / "app" / "bin").exists()
    assert (ws / "svc" / "env.sh").read_text() == "# the project's\n"
    assert (ws / "app" / "notes.txt").exists()
    for change_id in held_ids(host):
        host.corral("discard", change_id)
    (ws / "app" / ".envrc").write_text("some-env-tool activate\n")
    run(host, "echo x > notes2.txt\n")
    assert not (ws / "notes2.txt").exists()


def test_a_directory_any_variable_names_is_kept(host: Host) -> None:
    """r17a X2: `XDG_CONFIG_HOME=$PWD/conf` in the .env direnv loads: conf/ was not kept (a
    directory, under a variable not known to load code), and a planted conf/git/config with
    core.fsmonitor ran at the host's `git status`."""
    ws = host.ws
    (ws / "conf").mkdir()
    (ws / ".envrc").write_text("dotenv\n")
    (ws / ".env").write_text(f"XDG_CONFIG_HOME={ws}/conf\n")
    run(host, "mkdir -p conf/git; echo '[core]' > conf/git/config\n")
    assert not (ws / "conf" / "git").exists()


def test_an_envrc_function_used_as_a_layout_holds(host: Host) -> None:
    """r17a U1: `use_tools() { PATH_add "$1"; }` then `use tools bin2`: status said it could
    not be known, and a planted bin2/ls was applied all the same."""
    (host.ws / ".envrc").write_text('use_tools() {\n  PATH_add "$1"\n}\nuse tools bin2\n')
    run(host, "mkdir bin2; echo x > bin2/ls\n")
    assert not (host.ws / "bin2").exists()


# -- round 18 (r18a): configs above the root, deeper, in tools' trees; what readers misread --


def _run_in(host: Host, cwd: Path, body: str) -> None:
    done = host.sh(host.vars() + f"\ncd {cwd}\n" + body, cwd=cwd)
    assert DONE in done.stdout, done.stdout + done.stderr


def _clear(host: Host) -> None:
    for change_id in held_ids(host):
        host.corral("discard", change_id)


@pytest.mark.parametrize(
    ("name", "text"),
    [(".envrc", "PATH_add tools\n"), ("mise.toml", '[env]\n_.path = ["tools"]\n')],
    ids=["envrc", "mise"],
)
def test_a_config_above_the_workspace_naming_it_holds(host: Host, name: str, text: str) -> None:
    """PAR: the editor opened in the project's tools/, whose .envrc (or mise.toml) one level
    up puts tools/ on PATH: a planted tools/ls ran at the next `ls`. Configs above a root are
    read now; one naming the whole root holds every change set."""
    tools = host.ws / "tools"
    tools.mkdir()
    (host.ws / name).write_text(text)
    _run_in(host, tools, "echo x > ls\n")
    assert not (tools / "ls").exists()
    assert len(held_ids(host)) == 1


def test_configs_deeper_than_the_walk_that_direnv_or_mise_run_are_read(host: Host) -> None:
    """D5: a/b/c/d/e/.envrc (five levels down) was never found; B1: build/.envrc, in a
    directory the walk skips. direnv's own records of what it may run, and mise's, find
    them at any depth; the top of a tool's tree is looked at."""
    ws = host.ws
    deep = ws / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    (deep / ".envrc").write_text("PATH_add bin\n")
    allow = host.home / ".local" / "share" / "direnv" / "allow"
    allow.mkdir(parents=True)
    (allow / "0123abcd").write_text(f"{deep / '.envrc'}\n")
    deep2 = ws / "p" / "q" / "r" / "s" / "t"
    deep2.mkdir(parents=True)
    (deep2 / "mise.toml").write_text('[env]\n_.path = ["bin"]\n')
    tracked = host.home / ".local" / "state" / "mise" / "tracked-configs"
    tracked.mkdir(parents=True)
    (tracked / "t-0123").symlink_to(deep2 / "mise.toml")
    (ws / "build").mkdir()
    (ws / "build" / ".envrc").write_text("PATH_add bin\n")
    run(host, "mkdir -p a/b/c/d/e/bin p/q/r/s/t/bin build/bin\n"
              "echo x > a/b/c/d/e/bin/ls; echo x > p/q/r/s/t/bin/ls; echo x > build/bin/ls\n"
              "echo x > notes.txt\n")  # fmt: skip
    for planted in ("a/b/c/d/e/bin", "p/q/r/s/t/bin", "build/bin"):
        assert not (ws / planted).exists(), planted
    assert (ws / "notes.txt").exists()


@pytest.mark.parametrize(
    ("envrc", "planted", "holds"),
    [
        ("PATH_add \\\n  bin\n", "bin/ls", False),  # LC: a continued line
        ("PATH_add packages/*/bin\n", "packages/a/bin/ls", True),  # GL: a glob
        ("PATH_add {scripts,bin}\n", "scripts/ls", True),  # BR: a brace list
        ("layout ruby\n", ".direnv/ruby-3.3/bin/ls", False),  # RB: .direnv/ruby-*/bin
        ("export APP=$PWD\nPATH_add $APP/bin\n", "bin/ls", False),  # its own variable
        # GOPATH naming the workspace: Go's module cache and bin there, any file of it
        ("export GOPATH=$PWD\nPATH_add $GOPATH/bin\n", "bin/ls", True),
    ],
    ids=["continued-line", "glob", "braces", "layout-ruby", "own-variable", "gopath"],
)
def test_what_the_shell_expands_in_an_envrc_is_kept_or_holds(
    host: Host, envrc: str, planted: str, holds: bool
) -> None:
    (host.ws / ".envrc").write_text(envrc)
    run(host, f"mkdir -p {Path(planted).parent}; echo x > {planted}; echo x > notes.txt\n")
    assert not (host.ws / planted).exists()
    assert (host.ws / "notes.txt").exists() is not holds


def test_common_envrc_lines_read_whole_do_not_hold(host: Host) -> None:
    """r18a's usability list: these held every change set."""
    (host.ws / ".envrc").write_text(
        "source_up\nif [ -f .env.local ]; then dotenv .env.local; fi\n"
        "test -f .env && dotenv\nuse mise\nuse node\nlayout poetry\n"
    )
    run(host, "echo x > notes.txt\n")
    assert (host.ws / "notes.txt").exists()
    assert held_ids(host) == []


@pytest.mark.parametrize(
    ("files", "planted", "holds"),
    [
        # T11: TOML Python's parser does not take (an inline table over lines)
        ({"mise.toml": '[env]\nX = { value = "a",\n  redact = false }\n'}, "notes2.txt", True),
        # EJ: `_.file` naming JSON
        ({"mise.toml": '[env]\n_.file = "env.json"\n',
          "env.json": '{"NODE_OPTIONS": "--require ./tools/t.js"}'}, "tools/t.js", False),
        # EF: [settings] env_file
        ({"mise.toml": '[settings]\nenv_file = ".env.mise"\n',
          ".env.mise": "NODE_OPTIONS=--require ./tools/t.js\n"}, "tools/t.js", False),
        # LT: a hook in mise.toml, its task in mise.local.toml
        ({"mise.toml": '[hooks]\nenter = { task = "setup" }\n',
          "mise.local.toml": '[tasks.setup]\nrun = "sh scripts/t.sh"\n'}, "scripts/t.sh", False),
        # TI: the task a hook runs lives in a [task_config] includes directory
        ({"mise.toml": '[hooks]\nenter = { task = "setup" }\n'
                       '[task_config]\nincludes = ["tasks"]\n'}, "tasks/setup", False),
        # MK: a hook running a program from PATH that reads the workspace (a Makefile)
        ({"mise.toml": '[hooks]\nenter = "make -s env"\n'}, "notes2.txt", True),
        # HG1: the same in an hgrc hook; HG2: an extension relative to where hg runs
        ({".hg/hgrc": "[hooks]\npre-status = make -s env\n"}, "notes2.txt", True),
        ({".hg/hgrc": "[extensions]\nlint = hgext/lint.py\n"}, "notes2.txt", True),
    ],
    ids=["T11-toml", "EJ-json-env", "EF-env-file", "LT-task-elsewhere", "TI-includes",
         "MK-make", "HG1-hook", "HG2-relative-extension"],
)  # fmt: skip
def test_what_mise_and_mercurial_configs_run_is_kept_or_holds(
    host: Host, files: dict[str, str], planted: str, holds: bool
) -> None:
    _write(host, files)
    target = host.ws / planted
    if not holds:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("# the project's\n")
    run(host, f"mkdir -p {Path(planted).parent}; echo x >> {planted}; echo x > notes.txt\n")
    if holds:
        assert not target.exists() and not (host.ws / "notes.txt").exists()
        assert len(held_ids(host)) == 1
    else:
        assert target.read_text() == "# the project's\n"
        assert (host.ws / "notes.txt").exists()


def test_with_direct_writes_status_does_not_promise_a_hold(host: Host) -> None:
    """r18a DIR: with `--writes direct` nothing can be held, but the warning said every
    change set was held for review."""
    _loader_built_at_run_time(host)
    status = host.corral("status", "--writes", "direct").stdout
    assert "not protected" in status and "held for review" not in status, status


# -- round 19 (r19a) --


@pytest.mark.parametrize(
    ("files", "holds"),
    [
        # TKDIR, TSH, TENV: what a hooked task says of where and how it runs
        ({"mise.toml": '[hooks]\nenter = { task = "s" }\n'
                       '[tasks.s]\ndir = "tools"\nrun = "./setup.sh"\n'}, True),
        ({"mise.toml": '[hooks]\nenter = { task = "s" }\n'
                       '[tasks.s]\nshell = "tools/tasksh -c"\nrun = "true"\n'}, True),
        ({"mise.toml": '[hooks]\nenter = { task = "s" }\n[tasks.s]\nrun = "true"\n'
                       'env = { NODE_OPTIONS = "--require ./tools/t.js" }\n'}, True),
        # DE, CR: a variable a dotenv or a branch may set otherwise
        ({".envrc": "export BIN_DIR=.tools/bin\ndotenv\nPATH_add \"$BIN_DIR\"\n",
          ".env": "BIN_DIR=bin\n"}, True),
        ({".envrc": 'BIN_DIR=bin\nif [ -n "$CI" ]; then BIN_DIR=ci/bin; fi\n'
                    'PATH_add "$BIN_DIR"\n'}, True),
        # usability: these are read whole
        ({".envrc": "export NODE_PATH=$PWD/lib:$NODE_PATH\nexport PROJECT_DIR=$PWD\n"
                    "export REPO_ROOT=$(git rev-parse --show-toplevel)\nuse nvm\n"}, False),
        ({"mise.toml": '[hooks]\nenter = "mise install --quiet"\n'}, False),
        ({".envrc": "nvm use\n"}, False),  # (new-user trial: .nvmrc is a protected name)
    ],
    ids=["TKDIR-task-dir", "TSH-task-shell", "TENV-task-env", "DE-dotenv-variable",
         "CR-branch-variable", "usability-envrc", "usability-mise-install", "nvm-use"],
)  # fmt: skip
def test_tasks_and_variables_that_cannot_be_read_ahead_hold(
    host: Host, files: dict[str, str], holds: bool
) -> None:
    _write(host, files)
    run(host, "echo x > notes.txt\n")
    assert (host.ws / "notes.txt").exists() is not holds
    assert len(held_ids(host)) == int(holds)


def test_configs_at_any_depth_are_read_with_no_record_of_them(host: Host) -> None:
    """CG5, WL5, MT5: cargo needs no trust and leaves no record; direnv's whitelist and mise's
    trusted paths run a config with none: a `.cargo/config.toml` and an `.envrc` six levels
    down were not read."""
    deep = host.ws / "a" / "b" / "c" / "d" / "e" / "f"
    (deep / ".cargo").mkdir(parents=True)
    (deep / ".cargo" / "config.toml").write_text('[build]\nrustc-wrapper = "tools/rw"\n')
    (deep / "tools").mkdir()
    (deep / "tools" / "rw").write_text("# the project's\n")
    (deep / ".envrc").write_text("PATH_add bin\n")
    run(host, "cd a/b/c/d/e/f; echo x >> tools/rw; mkdir bin; echo x > bin/ls\n")
    assert (deep / "tools" / "rw").read_text() == "# the project's\n"
    assert not (deep / "bin").exists()


def test_your_own_mise_config_naming_where_you_are_holds(host: Host) -> None:
    """GMCWD: your own mise config's `_.path = ["{{cwd}}/bin"]` puts every workspace's bin/
    first on PATH: it was read only for venv_auto."""
    own = host.home / ".config" / "mise"
    own.mkdir(parents=True)
    (own / "config.toml").write_text('[env]\n_.path = ["{{cwd}}/bin"]\n')
    run(host, "mkdir bin; echo x > bin/ls\n")
    assert not (host.ws / "bin").exists()
    assert len(held_ids(host)) == 1


def test_a_held_file_says_which_config_has_the_host_run_it(host: Host) -> None:
    """New-user trial: `flake.nix` under `use flake` was held as "protected: the host runs or
    obeys it by itself, or it is hidden or corral's own", naming no reason."""
    (host.ws / ".envrc").write_text("use flake\n")
    stderr = run(host, "echo '{ }' > flake.nix\n")
    assert f"named by {host.ws / '.envrc'}" in stderr, stderr
    app = host.ws / "app"
    app.mkdir()
    (app / ".envrc").write_text("PATH_add bin\n")
    stderr = run(host, "mkdir app/bin; echo x > app/bin/ls\n")
    assert "named by a host-run config around the workspace" in stderr, stderr


# -- round 20 (r20a) --


@pytest.mark.parametrize(
    ("files", "planted", "holds"),
    [
        # HASH, HGHASH: a `#` inside a word is no comment (it hid the next line)
        ({".envrc": "log_status build#42\nPATH_add bin\n"}, "bin/ls", False),
        ({".hg/hgrc": "[hooks]\npre-status = echo check#1; sh tools/st.sh\n",
          "tools/st.sh": "# the project's\n"}, "tools/st.sh", False),
        # DSP: direnv's dotenv takes `KEY = value`
        ({".envrc": "dotenv\n", ".env": 'NODE_OPTIONS = "--require ./tools/t.js"\n',
          "tools/t.js": "// the project's\n"}, "tools/t.js", False),
        # RELPATH: a relative PATH entry is looked up from wherever you are
        ({".envrc": 'export PATH="./node_modules/.bin:$PATH"\n'}, "notes2.txt", True),
        # LAYOUTDIR: layouts put their venv elsewhere
        ({".envrc": "direnv_layout_dir=.cache\nlayout python3\n"}, "notes2.txt", True),
        # CSUB: a command substitution in a harmless command's words
        ({".envrc": 'log_status "v: $(./tools/version)"\n'}, "notes2.txt", True),
        # PRINTFV: printf -v sets a variable (PATH)
        ({".envrc": "printf -v PATH '%s:%s' \"$PWD/bin\" \"$PATH\"\n"}, "notes2.txt", True),
        # SOURCEUP: source_up with a name searches the directories above
        ({"web/.envrc": "source_up shared-env.sh\n"}, "notes2.txt", True),
        # MVARS, MVSRC, MTPATH: a mise template in a word without a `/`
        ({"mise.toml": '[vars]\nbin_dir = "bin"\n[env]\n_.path = ["{{vars.bin_dir}}"]\n'},
         "notes2.txt", True),
        ({"mise.toml": '[tools]\nnode = "path:{{config_root}}/toolchain/node"\n'},
         "toolchain/node/bin/node", False),
        # TINC: the tasks of a file [task_config] includes
        ({"mise.toml": '[hooks]\nenter = { task = "s" }\n[task_config]\nincludes = ["t.toml"]\n',
          "t.toml": '[s]\nrun = "sh tools/s.sh"\n', "tools/s.sh": "# the project's\n"},
         "tools/s.sh", False),
        # a tool's postinstall runs at `mise install`
        ({"mise.toml": '[tools]\nnode = { version = "20", postinstall = "sh tools/p.sh" }\n',
          "tools/p.sh": "# the project's\n"}, "tools/p.sh", False),
    ],
    ids=["HASH", "HGHASH", "DSP", "RELPATH", "LAYOUTDIR", "CSUB", "PRINTFV", "SOURCEUP",
         "MVARS", "MTPATH", "TINC", "postinstall"],
)  # fmt: skip
def test_round_20_spellings_are_kept_or_hold(
    host: Host, files: dict[str, str], planted: str, holds: bool
) -> None:
    _write(host, files)
    existed = (host.ws / planted).exists()
    before = (host.ws / planted).read_text() if existed else None
    run(host, f"mkdir -p {Path(planted).parent}; echo x >> {planted}; echo x > notes.txt\n")
    if holds:
        assert not (host.ws / "notes.txt").exists() and len(held_ids(host)) == 1
    else:
        assert (host.ws / "notes.txt").exists()
        after = (host.ws / planted).read_text() if (host.ws / planted).exists() else None
        assert after == before, planted  # kept: the write was held, the rest applied


def test_a_crate_in_build_is_read(host: Host) -> None:
    """CGBUILD: the walk looked only at the top of build/: build/xtask's .cargo was missed."""
    crate = host.ws / "build" / "xtask"
    (crate / ".cargo").mkdir(parents=True)
    (crate / ".cargo" / "config.toml").write_text('[build]\nrustc-wrapper = "tools/rw"\n')
    (crate / "tools").mkdir()
    (crate / "tools" / "rw").write_text("# the project's\n")
    run(host, "echo x >> build/xtask/tools/rw\n")
    assert (crate / "tools" / "rw").read_text() == "# the project's\n"


def test_a_directory_for_scratch_a_variable_names_stays_writable(host: Host) -> None:
    """r20a usability: TMPDIR=$PWD/tmp, CARGO_TARGET_DIR=$PWD/target made those directories
    read-only (cargo build failed); a config directory stays kept."""
    for d in ("tmp", "target", "conf"):
        (host.ws / d).mkdir()
    (host.ws / ".envrc").write_text(
        "export TMPDIR=$PWD/tmp\nexport CARGO_TARGET_DIR=$PWD/target\n"
        "export XDG_CONFIG_HOME=$PWD/conf\n"
    )
    run(host, "echo x > tmp/a; echo x > target/b; mkdir -p conf/git; echo x > conf/git/config\n")
    assert (host.ws / "tmp" / "a").exists() and (host.ws / "target" / "b").exists()
    assert not (host.ws / "conf" / "git").exists()


# -- round 21 (r21a, r21b) --


@pytest.mark.parametrize(
    ("files", "planted", "holds"),
    [
        # CBS: a comment ending in `\` (joined before, it hid the next line)
        ({".envrc": "# C:\\\\dev\\\\tools\\\\\nPATH_add bin\n"}, "bin/ls", False),
        # ANSIC: $'...' quoting folded the next lines into a harmless command's word
        ({".envrc": "log_status $'team\\'s tools'\nPATH_add bin\n"}, "bin/ls", False),
        # ESCSP: a `#` after an escaped space is no comment
        ({".envrc": "log_status build\\ #42; PATH_add bin\n"}, "bin/ls", False),
        # HGESC, MISEESC: the same in a hook's command
        ({".hg/hgrc": "[hooks]\npre-status = echo a\\ #1; sh tools/st.sh\n",
          "tools/st.sh": "# the project's\n"}, "tools/st.sh", False),
        ({"mise.toml": '[hooks]\nenter = "echo a\\\\ #1; make -s env"\n'}, "notes2.txt", True),
        # DCOLON, DTAB: dotenv's `KEY: value` and `export<TAB>KEY=value`
        ({".envrc": "dotenv\n", ".env": 'NODE_OPTIONS: "--require ./tools/t.js"\n',
          "tools/t.js": "// the project's\n"}, "tools/t.js", False),
        ({".envrc": "dotenv\n", ".env": 'export\tNODE_OPTIONS="--require ./tools/t.js"\n',
          "tools/t.js": "// the project's\n"}, "tools/t.js", False),
        # HGCONT: Mercurial joins a continued hook line with a newline: a second command
        ({".hg/hgrc": "[hooks]\npre-status = echo a\n  make -s env\n"}, "notes2.txt", True),
        # PLUSEQ: `PATH+=` is no assignment corral reads
        ({".envrc": 'export PATH+=":./node_modules/.bin"\n'}, "notes2.txt", True),
        # XDD: XDG_DATA_DIRS names where Neovim finds plugins (no scratch)
        ({".envrc": "export XDG_DATA_DIRS=$PWD/share\n", "share/x": "x\n"},
         "share/nvim/site/plugin/p.lua", False),
    ],
    ids=["CBS", "ANSIC", "ESCSP", "HGESC", "MISEESC", "DCOLON", "DTAB", "HGCONT", "PLUSEQ",
         "XDD"],
)  # fmt: skip
def test_round_21_spellings_are_kept_or_hold(
    host: Host, files: dict[str, str], planted: str, holds: bool
) -> None:
    test_round_20_spellings_are_kept_or_hold(host, files, planted, holds)


def test_a_walk_pushed_past_its_limit_checks_nothing_and_holds_even_with_apply(
    host: Host,
) -> None:
    """r21b N1: a command made 20,001 directories; the walk for configs below the top then
    stopped before svc/api/.cargo, a readable config naming tools/wrap, and with
    unreadable_configs = "apply" the planted wrapper was applied (with "hold", `corral
    changes` said it passed the check)."""
    config = host.home / ".config" / "corral" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[sandbox]\nunreadable_configs = "apply"\n')
    api = host.ws / "svc" / "api"
    (api / ".cargo").mkdir(parents=True)
    (api / ".cargo" / "config.toml").write_text('[build]\nrustc-wrapper = "tools/wrap"\n')
    (api / "tools").mkdir()
    (api / "tools" / "wrap").write_text("# the project's\n")
    many = host.ws / "aaa"
    for i in range(20_001):
        (many / str(i)).mkdir(parents=True)
    run(host, "echo x >> svc/api/tools/wrap\n")
    assert (api / "tools" / "wrap").read_text() == "# the project's\n"
    (change_id,) = held_ids(host)
    shown = host.corral("changes", change_id).stdout
    assert "not checked" in shown and "passes the check" not in shown, shown


@pytest.mark.as_root  # as nobody, this machine's test Python (under /root) cannot be run
def test_the_check_an_argv_runs_itself_reads_the_configs_as_corral_run_does(host: Host) -> None:
    """r22b: the check a wrapped argv runs (`python -I -S`, the editor's path) could not
    import bashlex; the failure was cached by the script's text, the nested .envrc read as
    unreadable everywhere, and with unreadable_configs = "apply" a planted app/bin/ls was
    applied."""
    config = host.home / ".config" / "corral" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[sandbox]\nunreadable_configs = "apply"\n')
    (host.ws / "app").mkdir()
    (host.ws / "app" / ".envrc").write_text("PATH_add bin\n")
    done = run_wrapped(host, "mkdir -p app/bin; echo x > app/bin/ls")
    assert not (host.ws / "app" / "bin").exists(), done.stderr
    assert "named by a host-run config" in done.stderr, done.stderr
    # ... and nothing was left cached that makes another run read it otherwise
    run(host, "mkdir -p app/bin; echo x > app/bin/ls\n")
    assert not (host.ws / "app" / "bin").exists()


# -- round 22 (r22a) --


@pytest.mark.parametrize(
    ("files", "planted", "holds"),
    [
        # HDOC: an unquoted here-document's body is expanded: its backquotes run
        ({".envrc": ": <<DOC\nrun `sh scripts/bootstrap.sh`\nDOC\n"}, "notes2.txt", True),
        # SRCIN: what a command reads from a file given as its input
        ({".envrc": "source /dev/stdin < tools/env.sh\n", "tools/env.sh": "# x\n"},
         "notes2.txt", True),
        # HGSECT, HGCOMM, HGBOM: what Mercurial takes for a section, a comment, a file start
        ({".hg/hgrc": "[hooks]  ; ours\npre-status = make -s env\n"}, "notes2.txt", True),
        ({".hg/hgrc": "[hooks]\npre-status = echo a\n# note\n  sh tools/st.sh\n",
          "tools/st.sh": "# the project's\n"}, "tools/st.sh", False),
        ({".hg/hgrc": "\ufeff[hooks]\npre-status = make -s env\n"}, "notes2.txt", True),
        # MTERA: an exec() whose command is built from an expression
        ({"mise.toml": "[env]\nB = \"{{ exec(command=config_root ~ '/tools/id.sh') }}\"\n"},
         "notes2.txt", True),
    ],
    ids=["HDOC", "SRCIN", "HGSECT", "HGCOMM", "HGBOM", "MTERA"],
)  # fmt: skip
def test_round_22_spellings_are_kept_or_hold(
    host: Host, files: dict[str, str], planted: str, holds: bool
) -> None:
    test_round_20_spellings_are_kept_or_hold(host, files, planted, holds)


def test_direnvs_own_idioms_do_not_hold(host: Host) -> None:
    """r22a usability: `[[ ]]` (bashlex cannot parse it) and `command -v` held everything."""
    (host.ws / ".envrc").write_text(
        "[[ -f .envrc.local ]] && source_env .envrc.local\n"
        "if command -v nvm >/dev/null; then use nvm; fi\n"
    )
    run(host, "echo x > notes.txt\n")
    assert (host.ws / "notes.txt").exists() and held_ids(host) == []


def test_the_git_top_of_a_package_in_a_monorepo_is_the_repositorys(host: Host) -> None:
    """GITTOP: `PATH_add "$(git rev-parse --show-toplevel)/tools/bin"` in a package's .envrc
    was read as the package's own directory: the repository's tools/bin stayed writable."""
    (host.ws / "tools" / "bin").mkdir(parents=True)  # (the workspace is a repository)
    pkg = host.ws / "packages" / "web"
    pkg.mkdir(parents=True)
    (pkg / ".envrc").write_text('PATH_add "$(git rev-parse --show-toplevel)/tools/bin"\n')
    run(host, "echo x > tools/bin/ls\n")
    assert not (host.ws / "tools" / "bin" / "ls").exists()


def test_where_nix_evaluates_the_project_everything_is_held(host: Host) -> None:
    """r22a, r23b NIXHOOK, NIXRC: `use flake` evaluates flake.nix, which may import any .nix
    file of its tree; what direnv then runs is the dev shell's shellHook (it may source any
    project file: scripts/dev-env.sh); nix-direnv evals its cache in .direnv at the next
    prompt. All were applied. Now every change set there is held, and no .nix file, nor
    .direnv, changes even when you apply it."""
    (host.ws / ".envrc").write_text("use flake\n")
    (host.ws / "nix").mkdir()
    (host.ws / "nix" / "shell.nix").write_text("{ }\n")
    (host.ws / ".direnv").mkdir()
    (host.ws / ".direnv" / "flake-profile-x.rc").write_text("# cache\n")
    app = host.ws / "app"
    app.mkdir()
    (app / ".envrc").write_text("use nix dev.nix\n")
    run(host, "echo x >> nix/shell.nix; echo '{ }' > app/dev.nix; echo '{ }' > new.nix;"
              " echo x >> .direnv/flake-profile-x.rc; echo x > notes.txt\n")  # fmt: skip
    assert not (host.ws / "notes.txt").exists()
    (change_id,) = held_ids(host)
    assert host.corral("apply", change_id).returncode == 0
    assert (host.ws / "notes.txt").exists()  # your review: what passes lands
    assert (host.ws / "nix" / "shell.nix").read_text() == "{ }\n"
    assert not (app / "dev.nix").exists() and not (host.ws / "new.nix").exists()
    assert (host.ws / ".direnv" / "flake-profile-x.rc").read_text() == "# cache\n"


# -- round 23 (r23a) --


@pytest.mark.parametrize(
    ("files", "planted", "holds"),
    [
        # HSTR: a here-document fed to `source /dev/stdin`
        ({".envrc": "source /dev/stdin <<'EOF'\nPATH_add tools/bin\nEOF\n"}, "notes2.txt", True),
        # LESSOPEN: a path glued to `|` (or `;`) in a value
        ({".envrc": 'export LESSOPEN="|$PWD/tools/lesspipe.sh %s"\n',
          "tools/lesspipe.sh": "# the project's\n"}, "tools/lesspipe.sh", False),
        # the interpreter `layout python` is given
        ({".envrc": "layout python tools/py\n", "tools/py": "# the project's\n"},
         "tools/py", False),
    ],
    ids=["HSTR", "LESSOPEN", "layout-python-interpreter"],
)  # fmt: skip
def test_round_23_spellings_are_kept_or_hold(
    host: Host, files: dict[str, str], planted: str, holds: bool
) -> None:
    test_round_20_spellings_are_kept_or_hold(host, files, planted, holds)


def test_where_layout_python_runs_python_no_new_module_is_taken(host: Host) -> None:
    """LAYPY: `layout python3` runs `python3 -c "import pkgutil, platform ..."` in the
    .envrc's directory, first on its path: a platform.py planted beside a nested
    services/api/.envrc ran on the host."""
    api = host.ws / "services" / "api"
    api.mkdir(parents=True)
    (api / ".envrc").write_text("layout python3\n")
    run(host, "echo 'print(1)' > services/api/platform.py; echo x > services/api/notes.txt\n")
    assert not (api / "platform.py").exists()
    assert (api / "notes.txt").exists()


def test_tests_and_mkdir_in_an_envrc_do_not_hold(host: Host) -> None:
    """r23a usability: `[[ -f .env && -f .env.local ]]` (split at its `&&` when read as
    `[ ]`) and `mkdir -p` held every change set."""
    (host.ws / ".envrc").write_text(
        "if [[ -f .env && -f .env.local ]]; then dotenv .env.local; fi\n"
        "[[ -d tools/bin ]] || mkdir -p tools/bin\n"
    )
    run(host, "echo x > notes.txt\n")
    assert (host.ws / "notes.txt").exists() and held_ids(host) == []


# -- round 24 (r24a) --


def _venv(root: Path, name: str = ".venv") -> Path:
    """A venv's shape: pyvenv.cfg, bin/activate, a site-packages with setuptools' .pth."""
    venv = root / name
    site = venv / "lib" / "python3.11" / "site-packages"
    (site / "_distutils_hack").mkdir(parents=True)
    (site / "_distutils_hack" / "__init__.py").write_text("# setuptools'\n")
    (site / "distutils-precedence.pth").write_text(  # (setuptools' own text)
        "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local')"
        " == 'local'; enabled and __import__('_distutils_hack').add_shim(); \n"
    )
    (venv / "bin").mkdir()
    (venv / "bin" / "activate").write_text(
        "deactivate () { unset -f deactivate; }\nVIRTUAL_ENV=x\n"
    )
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return site


@pytest.mark.parametrize(
    "config",
    [
        {".envrc": 'export VIRTUAL_ENV="$PWD/.venv"\nPATH_add "$VIRTUAL_ENV/bin"\n'},
        {"mise.toml": '[env]\n_.python.venv = { path = ".venv" }\n'},
        {".envrc": "source .venv/bin/activate\n"},
    ],
    ids=["VENVPTH", "MISEVENV", "activate"],
)
def test_a_venv_a_config_activates_takes_no_start_up_code(
    host: Host, config: dict[str, str]
) -> None:
    """VENVPTH, MISEVENV, DHACK (r24a), DHACK2, PTHPYC, PTHEXT (r25a): only the venv's bin
    was kept: a new .pth in its site-packages, a rewritten _distutils_hack (which setuptools'
    .pth imports at every start), its .pyc or an extension beside it, ran at the next
    python3. (And `source .venv/bin/activate` held everything: the
    venv's own script was read as the project's.)"""
    site = _venv(host.ws)
    _write(host, config)
    rel = site.relative_to(host.ws)
    run(host, f"echo 'import os' > {rel}/evil.pth; echo x >> {rel}/_distutils_hack/__init__.py;"
              f" mkdir -p {rel}/_distutils_hack/__pycache__ {rel}/__pycache__;"
              f" echo x > {rel}/_distutils_hack/__pycache__/__init__.cpython-311.pyc;"
              f" echo x > {rel}/_distutils_hack.cpython-311-x86_64-linux-gnu.so;"
              " echo x > notes.txt\n")  # fmt: skip
    assert not (site / "evil.pth").exists()
    assert (site / "_distutils_hack" / "__init__.py").read_text() == "# setuptools'\n"
    # r25a PTHPYC, PTHEXT: what Python takes before the source
    assert not (site / "_distutils_hack" / "__pycache__").exists()
    assert not (site / "_distutils_hack.cpython-311-x86_64-linux-gnu.so").exists()
    assert (host.ws / "notes.txt").exists()


def test_what_layout_nodes_programs_lead_to_is_kept(host: Host) -> None:
    """LAYNODE: node_modules/.bin/prettier -> ../prettier/bin/prettier.cjs: the file the link
    leads to was not kept, and a rewritten one ran at the next `prettier`."""
    target = host.ws / "node_modules" / "prettier" / "bin" / "prettier.cjs"
    target.parent.mkdir(parents=True)
    target.write_text("// prettier's\n")
    (host.ws / "node_modules" / ".bin").mkdir()
    (host.ws / "node_modules" / ".bin" / "prettier").symlink_to("../prettier/bin/prettier.cjs")
    (host.ws / ".envrc").write_text("layout node\n")
    # r25a PNPMSHIM, WSLINK: pnpm's scripts, a workspace package's link replaced
    store = host.ws / "node_modules" / ".pnpm" / "p@1" / "node_modules" / "p" / "bin.cjs"
    store.parent.mkdir(parents=True)
    store.write_text("// p's\n")
    (host.ws / "packages" / "cli").mkdir(parents=True)
    (host.ws / "node_modules" / "@me").mkdir()
    (host.ws / "node_modules" / "@me" / "cli").symlink_to("../../packages/cli")
    run(host, "echo x >> node_modules/prettier/bin/prettier.cjs;"
              " echo x >> node_modules/.pnpm/p@1/node_modules/p/bin.cjs;"
              " rm node_modules/@me/cli; mkdir -p node_modules/@me/cli/bin;"
              " echo x > node_modules/@me/cli/bin/cli.js\n")  # fmt: skip
    assert target.read_text() == "// prettier's\n"
    assert store.read_text() == "// p's\n"
    assert (host.ws / "node_modules" / "@me" / "cli").is_symlink()


# -- round 26 (r26a): what a program directory brings is its whole installation --


def _conda(root: Path, name: str = "env") -> Path:
    """A conda environment's shape: conda-meta, bin, its own standard library."""
    prefix = root / name
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "bin").mkdir()
    stdlib = prefix / "lib" / "python3.11"
    (stdlib / "encodings").mkdir(parents=True)
    (stdlib / "encodings" / "__init__.py").write_text("# the standard library's\n")
    (stdlib / "site-packages").mkdir()
    return prefix


def _on_path(host: Host, *dirs: Path) -> None:
    host.env["PATH"] = ":".join([*(str(d) for d in dirs), host.env["PATH"]])


def test_a_node_modules_bin_on_the_editors_path_keeps_its_packages(host: Host) -> None:
    """ONPATHNODE: with node_modules/.bin on the PATH corral runs with (no .envrc), only
    .bin was kept: a rewritten prettier.cjs ran at the user's `prettier`."""
    target = host.ws / "node_modules" / "prettier" / "bin" / "prettier.cjs"
    target.parent.mkdir(parents=True)
    target.write_text("// prettier's\n")
    (host.ws / "node_modules" / ".bin").mkdir()
    (host.ws / "node_modules" / ".bin" / "prettier").symlink_to("../prettier/bin/prettier.cjs")
    (host.ws / "node_modules" / "prettier" / "index.js").write_text("// its code\n")
    _on_path(host, host.ws / "node_modules" / ".bin")
    run(host, "echo x >> node_modules/prettier/index.js; echo x > notes.txt\n")
    assert (host.ws / "node_modules" / "prettier" / "index.js").read_text() == "// its code\n"
    assert (host.ws / "notes.txt").exists()


@pytest.mark.parametrize("how", ["editor PATH", "envrc"])
def test_a_conda_environment_is_kept_whole(host: Host, how: str) -> None:
    """CONDAPTH, CONDASTD: a conda environment kept only its bin (and site-packages): a .pth
    there, or its own standard library's encodings/__init__.py, ran at `python`."""
    prefix = _conda(host.ws)
    if how == "envrc":
        (host.ws / ".envrc").write_text("PATH_add env/bin\n")
    else:
        _on_path(host, prefix / "bin")
    run(host, "echo 'import os' > env/lib/python3.11/site-packages/x.pth;"
              " echo x >> env/lib/python3.11/encodings/__init__.py;"
              " echo x > notes.txt\n")  # fmt: skip
    assert not (prefix / "lib" / "python3.11" / "site-packages" / "x.pth").exists()
    encodings = prefix / "lib" / "python3.11" / "encodings" / "__init__.py"
    assert encodings.read_text() == "# the standard library's\n"
    assert (host.ws / "notes.txt").exists()


def test_a_venv_is_kept_whole_its_configs_and_a_pypy_one_too(host: Host) -> None:
    """PIPCONF, IPYCFG, PYPYVENV: $VIRTUAL_ENV/pip.conf (pointing pip at a planted sdist),
    etc/ipython/ipython_config.py, and a PyPy venv's lib/pypy3.9/site-packages were not
    kept."""
    _venv(host.ws)
    pypy = host.ws / "pypy-venv"
    (pypy / "lib" / "pypy3.9" / "site-packages").mkdir(parents=True)
    (pypy / "bin").mkdir()
    (host.ws / ".envrc").write_text(
        'export VIRTUAL_ENV="$PWD/.venv"\nPATH_add "$VIRTUAL_ENV/bin"\nPATH_add pypy-venv/bin\n'
    )
    run(host, "printf '[global]\\nindex-url = file:///x\\n' > .venv/pip.conf;"
              " mkdir -p .venv/etc/ipython; echo x > .venv/etc/ipython/ipython_config.py;"
              " echo 'import os' > pypy-venv/lib/pypy3.9/site-packages/x.pth;"
              " echo x > notes.txt\n")  # fmt: skip
    assert not (host.ws / ".venv" / "pip.conf").exists()
    assert not (host.ws / ".venv" / "etc" / "ipython" / "ipython_config.py").exists()
    assert not (pypy / "lib" / "pypy3.9" / "site-packages" / "x.pth").exists()
    assert (host.ws / "notes.txt").exists()


def test_a_venv_a_config_names_before_it_exists_is_watched_whole(host: Host) -> None:
    """FRESHVENV: the .envrc's venv did not exist yet; only .venv/bin was watched, and a
    .pth a command made in .venv/lib was applied, for the user's `python3 -m venv .venv`
    to keep and run."""
    (host.ws / ".envrc").write_text(
        'export VIRTUAL_ENV="$PWD/.venv"\nPATH_add "$VIRTUAL_ENV/bin"\n'
    )
    run(host, "mkdir -p .venv/lib/python3.11/site-packages;"
              " echo 'import os' > .venv/lib/python3.11/site-packages/x.pth\n")  # fmt: skip
    assert not (host.ws / ".venv").exists()
    assert held_ids(host)


def test_every_link_on_the_way_from_a_path_dir_is_kept_and_a_missing_target_watched(
    host: Host,
) -> None:
    """LINKCHAIN, DANGLING: bin/mytool -> ../tools/current/mytool with tools/current -> v1:
    replacing the directory link tools/current redirected mytool; bin/fmt -> ../build/fmt,
    whose target did not exist, was created by a command and shadowed /usr/bin/fmt."""
    (host.ws / "tools" / "v1").mkdir(parents=True)
    (host.ws / "tools" / "v1" / "mytool").write_text("#!/bin/sh\necho mine\n")
    (host.ws / "tools" / "current").symlink_to("v1")
    (host.ws / "bin").mkdir()
    (host.ws / "bin" / "mytool").symlink_to("../tools/current/mytool")
    (host.ws / "bin" / "fmt").symlink_to("../build/fmt")
    (host.ws / ".envrc").write_text("PATH_add bin\n")
    run(host, "rm -f tools/current; mkdir -p tools/current; echo planted > tools/current/mytool;"
              " mkdir -p build; echo planted > build/fmt; echo x > notes.txt\n")  # fmt: skip
    assert (host.ws / "tools" / "current").is_symlink()
    assert not (host.ws / "build" / "fmt").exists()


def test_node_modules_above_a_bin_on_path_are_kept(host: Host) -> None:
    """HOISTED: with packages/web/node_modules/.bin on PATH, the dependencies hoisted to the
    root node_modules, which its packages load, were writable."""
    (host.ws / "packages" / "web" / "node_modules" / ".bin").mkdir(parents=True)
    dep = host.ws / "node_modules" / "dep" / "index.js"
    dep.parent.mkdir(parents=True)
    dep.write_text("// hoisted\n")
    (host.ws / ".envrc").write_text("PATH_add packages/web/node_modules/.bin\n")
    run(host, "echo x >> node_modules/dep/index.js; echo x > notes.txt\n")
    assert dep.read_text() == "// hoisted\n"


def test_composers_vendor_is_kept_whole(host: Host) -> None:
    """COMPOSERPROXY (by reading): vendor/bin's entries are PHP proxies that include
    vendor/<package>/...: all of vendor/ is kept."""
    tool = host.ws / "vendor" / "acme" / "tool" / "bin" / "tool.php"
    tool.parent.mkdir(parents=True)
    tool.write_text("<?php // acme's\n")
    (host.ws / "vendor" / "bin").mkdir()
    (host.ws / ".envrc").write_text("PATH_add vendor/bin\n")
    run(host, "echo x >> vendor/acme/tool/bin/tool.php; echo x > notes.txt\n")
    assert tool.read_text() == "<?php // acme's\n"


def test_a_tilde_on_path_is_read_as_bash_reads_it(host: Host) -> None:
    """TILDE: `PATH="~/dotfiles/bin:$PATH"` works in bash, which expands the tilde when it
    looks a program up; corral read it as relative and kept nothing."""
    from corral import config
    from corral.sandbox import policy

    (host.ws / "bin").mkdir()
    env = {"HOME": str(host.work), "PATH": "~/app/bin:/usr/bin"}
    resolved = policy.resolve(config.resolve([]), str(host.ws), env)
    assert str(host.ws / "bin") in resolved.read_only


def test_the_plugin_a_luarc_names_and_editor_lsp_settings_are_kept(host: Host) -> None:
    """r26b (by reading): .luarc.json was protected, but the runtime.plugin file it names,
    which lua-language-server runs when a Lua file is opened, was not; r26a (open since
    r7a): neoconf's and coc's workspace settings, which set a language server's command."""
    plugin = host.ws / "tools" / "plugin.lua"
    plugin.parent.mkdir()
    plugin.write_text("-- the user's\n")
    (host.ws / ".luarc.jsonc").write_text(
        '{\n  // the project\'s\n  "runtime.plugin": "tools/plugin.lua",\n}\n'
    )
    run(host, "echo 'os.execute(1)' >> tools/plugin.lua; echo '{}' > .neoconf.json;"
              " mkdir -p .vim; echo '{}' > .vim/coc-settings.json;"
              " echo x > notes.txt\n")  # fmt: skip
    assert plugin.read_text() == "-- the user's\n"
    assert not (host.ws / ".neoconf.json").exists()
    assert not (host.ws / ".vim" / "coc-settings.json").exists()
    assert (host.ws / "notes.txt").exists()


def test_links_in_a_library_dir_on_ld_library_path_are_kept(host: Host) -> None:
    """r26a (by reading): links inside LD_LIBRARY_PATH directories were not followed."""
    real = host.ws / "vendor-libs" / "v1" / "libx.so"
    real.parent.mkdir(parents=True)
    real.write_text("the library\n")
    (host.ws / "lib").mkdir()
    (host.ws / "lib" / "libx.so").symlink_to("../vendor-libs/v1/libx.so")
    host.env["LD_LIBRARY_PATH"] = str(host.ws / "lib")
    run(host, "echo planted > vendor-libs/v1/libx.so; echo x > notes.txt\n")
    assert real.read_text() == "the library\n"


# -- round 27 (r27a): an installation found by where it lies; the environment corral runs with --


def test_a_nodeenv_and_a_package_bin_on_path_keep_their_installation(host: Host) -> None:
    """NODEENV, PKGBIN: `PATH_add .nenv/bin` (a nodeenv) kept only bin/ and what its links
    lead to: npm's lib/cli.js ran at `npm`; `PATH_add node_modules/typescript/bin` left
    lib/tsc.js writable, and it ran at `tsc`."""
    cli = host.ws / ".nenv" / "lib" / "node_modules" / "npm" / "lib" / "cli.js"
    cli.parent.mkdir(parents=True)
    cli.write_text("// npm's\n")
    (host.ws / ".nenv" / "bin").mkdir()
    tsc = host.ws / "node_modules" / "typescript" / "lib" / "tsc.js"
    tsc.parent.mkdir(parents=True)
    tsc.write_text("// typescript's\n")
    (host.ws / "node_modules" / "typescript" / "bin").mkdir()
    (host.ws / ".envrc").write_text("PATH_add .nenv/bin\nPATH_add node_modules/typescript/bin\n")
    run(host, "echo x >> .nenv/lib/node_modules/npm/lib/cli.js;"
              " echo x >> node_modules/typescript/lib/tsc.js;"
              " echo x > notes.txt\n")  # fmt: skip
    assert cli.read_text() == "// npm's\n"
    assert tsc.read_text() == "// typescript's\n"
    assert (host.ws / "notes.txt").exists()


def test_a_link_on_path_brings_the_installation_it_leads_into(host: Host) -> None:
    """LINKPREFIX: bin/tool -> ../.venv/bin/tool kept the target file, not the venv it lies
    in: a .pth in that venv's site-packages ran at `tool`."""
    site = _venv(host.ws)
    (host.ws / ".venv" / "bin" / "tool").write_text("#!/usr/bin/env python3\n")
    (host.ws / "bin").mkdir()
    (host.ws / "bin" / "tool").symlink_to("../.venv/bin/tool")
    (host.ws / ".envrc").write_text("PATH_add bin\n")
    rel = site.relative_to(host.ws)
    run(host, f"echo 'import os' > {rel}/x.pth; echo x > notes.txt\n")
    assert not (site / "x.pth").exists()
    assert (host.ws / "notes.txt").exists()


@pytest.mark.parametrize("how", ["editor PATH", "envrc"])
def test_a_workspace_that_is_a_venv_keeps_its_python_parts(host: Host, how: str) -> None:
    """ROOTVENV: the workspace itself made with `python -m venv .`: only bin/ was kept (the
    prefix had to lie strictly inside the root), and an append to _distutils_hack, or a new
    .pth, ran at the user's `python`."""
    site = host.ws / "lib" / "python3.11" / "site-packages"
    (site / "_distutils_hack").mkdir(parents=True)
    (site / "_distutils_hack" / "__init__.py").write_text("# setuptools'\n")
    (host.ws / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (host.ws / "bin").mkdir()
    (host.ws / "bin" / "activate").write_text("VIRTUAL_ENV=x\n")
    if how == "envrc":
        (host.ws / ".envrc").write_text("source bin/activate\n")
    else:
        _on_path(host, host.ws / "bin")
    run(host, "echo x >> lib/python3.11/site-packages/_distutils_hack/__init__.py;"
              " echo 'import os' > lib/python3.11/site-packages/x.pth;"
              " echo x > notes.txt\n")  # fmt: skip
    assert (site / "_distutils_hack" / "__init__.py").read_text() == "# setuptools'\n"
    assert not (site / "x.pth").exists()
    assert (host.ws / "notes.txt").exists()


def test_what_the_environment_corral_runs_with_names_is_kept(host: Host) -> None:
    """ENVLIB: only PATH, LD_LIBRARY_PATH and PYTHONPATH of corral's own environment were
    read: with PERL5LIB=$W/local/lib/perl5, a planted strict.pm ran at every host `perl`
    (NODE_PATH, RUBYLIB, CLASSPATH, NODE_OPTIONS alike)."""
    perl = host.ws / "local" / "lib" / "perl5"
    perl.mkdir(parents=True)
    node = host.ws / "tools" / "node"
    node.mkdir(parents=True)
    host.env["PERL5LIB"] = str(perl)
    host.env["NODE_OPTIONS"] = f"--require {host.ws}/tools/trace.js"
    host.env["NODE_PATH"] = str(node)
    run(host, "echo 'print 1' > local/lib/perl5/strict.pm; echo x > tools/trace.js;"
              " echo x > tools/node/x.js; echo x > notes.txt\n")  # fmt: skip
    assert not (perl / "strict.pm").exists()
    assert not (host.ws / "tools" / "trace.js").exists()
    assert not (node / "x.js").exists()
    assert (host.ws / "notes.txt").exists()


# -- round 28 (r28a): by position, not by marker; every variable of the environment --


@pytest.mark.parametrize(
    ("prefix", "loaded"),
    [("lua_modules", "share/lua/5.1/fennel.lua"), ("jdk-25", "lib/libjli.so")],
    ids=["LUAROCKS", "JDKLIB"],
)
def test_any_prefix_of_a_bin_on_path_is_kept_whole(host: Host, prefix: str, loaded: str) -> None:
    """LUAROCKS, JDKLIB: a luarocks tree of pure-Lua rocks and an unpacked JDK carried no
    marker corral knew: only bin/ was kept, and fennel.lua / libjli.so ran at the user's
    `fennel` / `java`."""
    target = host.ws / prefix / loaded
    target.parent.mkdir(parents=True)
    target.write_text("the installation's\n")
    (host.ws / prefix / "bin").mkdir()
    (host.ws / ".envrc").write_text(f"PATH_add {prefix}/bin\n")
    run(host, f"echo x >> {prefix}/{loaded}; echo x > notes.txt\n")
    assert target.read_text() == "the installation's\n"
    assert (host.ws / "notes.txt").exists()


def test_the_projects_own_bin_stays_the_projects(host: Host) -> None:
    """Where the config that puts a bin on PATH lies is the project, not an installation:
    `app/.envrc` with `PATH_add bin` keeps app/bin, and app stays writable."""
    (host.ws / "app" / "bin").mkdir(parents=True)
    (host.ws / "app" / ".envrc").write_text("PATH_add bin\n")
    run(host, "echo x > app/notes.txt\n")
    assert (host.ws / "app" / "notes.txt").exists()


def test_every_variable_of_the_environment_is_read(host: Host) -> None:
    """ENVNAMES: only loader variables and names ending like PATH or DIR were read from the
    environment corral runs with: GIT_CONFIG_KEY_0=core.fsmonitor with
    GIT_CONFIG_VALUE_0=$W/tools/fsmonitor.sh ran at `git status`; LUA_INIT=@$W/init.lua at
    `lua`."""
    host.env.update(
        GIT_CONFIG_COUNT="1",
        GIT_CONFIG_KEY_0="core.fsmonitor",
        GIT_CONFIG_VALUE_0=f"{host.ws}/tools/fsmonitor.sh",
        LUA_INIT=f"@{host.ws}/init.lua",
        MAVEN_OPTS=f"-javaagent:{host.ws}/agent.jar",
    )
    run(host, "mkdir -p tools; echo x > tools/fsmonitor.sh; echo x > init.lua;"
              " echo x > agent.jar; echo x > notes.txt\n")  # fmt: skip
    for name in ("tools/fsmonitor.sh", "init.lua", "agent.jar"):
        assert not (host.ws / name).exists(), name
    assert (host.ws / "notes.txt").exists()


# -- round 29 (r29a) --


def test_python_start_up_code_is_held_at_any_depth(host: Host) -> None:
    """USERPTH: an editable install into a Python corral does not know of (the user site,
    pyenv's, pipx's) puts src/ on its module path: a src/usercustomize.py written by a
    command was applied and ran at the user's python3."""
    (host.ws / "src").mkdir()
    run(host, "echo 'import os' > src/usercustomize.py; mkdir -p lib/sitecustomize;"
              " echo 'import os' > lib/sitecustomize/__init__.py;"
              " echo x > src/notes.txt\n")  # fmt: skip
    assert not (host.ws / "src" / "usercustomize.py").exists()
    assert not (host.ws / "lib" / "sitecustomize" / "__init__.py").exists()
    assert (host.ws / "src" / "notes.txt").exists()


def test_a_new_lua_module_at_the_top_is_held(host: Host) -> None:
    """LUACWD: Lua 5.1, LuaJIT and Neovim look in the current directory first: a planted
    luacheck/main.lua ran at the user's `luacheck .`, impatient.lua at Neovim's start
    (`pcall(require, "impatient")` in init.lua)."""
    (host.ws / "lua" / "mine").mkdir(parents=True)
    (host.ws / "lua" / "mine" / "init.lua").write_text("return {}\n")
    (host.ws / "main.lua").write_text("-- the project's\n")
    run(host, "echo 'os.exit(1)' > impatient.lua; mkdir -p luacheck;"
              " echo 'os.exit(1)' > luacheck/main.lua; echo '-- edit' >> main.lua;"
              " echo 'return 1' > lua/mine/new.lua\n")  # fmt: skip
    assert not (host.ws / "impatient.lua").exists()
    assert not (host.ws / "luacheck" / "main.lua").exists()
    assert (host.ws / "main.lua").read_text() == "-- the project's\n-- edit\n"  # its own
    assert (host.ws / "lua" / "mine" / "new.lua").exists()  # below its own directories


def test_a_value_reaching_the_workspace_through_a_link_is_read(host: Host) -> None:
    """ENVLINK: the environment's values were matched against the workspace's real path as
    text: GIT_CONFIG_VALUE_0=<link to the workspace>/tools/fsmonitor.sh passed."""
    link = host.base / "code-link"
    link.symlink_to(host.ws)
    host.env.update(
        GIT_CONFIG_COUNT="1",
        GIT_CONFIG_KEY_0="core.fsmonitor",
        GIT_CONFIG_VALUE_0=f"{link}/tools/fsmonitor.sh",
    )
    run(host, "mkdir -p tools; echo x > tools/fsmonitor.sh; echo x > notes.txt\n")
    assert not (host.ws / "tools" / "fsmonitor.sh").exists()
    assert (host.ws / "notes.txt").exists()


def test_the_dependency_trees_a_projects_own_bin_loads_are_kept(host: Host) -> None:
    """ROOTBIN (by reading): `PATH_add bin` keeps the project's bin, but bundler's binstubs
    there load vendor/bundle, Composer's proxies vendor/, Carton's scripts local/."""
    gem = host.ws / "vendor" / "bundle" / "ruby" / "3.3.0" / "gems" / "rspec" / "lib" / "r.rb"
    gem.parent.mkdir(parents=True)
    gem.write_text("# rspec's\n")
    (host.ws / "bin").mkdir()
    (host.ws / ".envrc").write_text("PATH_add bin\n")
    run(host, f"echo x >> {gem.relative_to(host.ws)}; echo x > notes.txt\n")
    assert gem.read_text() == "# rspec's\n"
    assert (host.ws / "notes.txt").exists()


def test_lua_modules_by_a_link_or_in_two_steps_are_held(host: Host) -> None:
    """r30a LUALINK, LUATWOSTEP: a top-level link `luacheck -> lua/.x` with lua/.x/main.lua
    passed; and a held luacheck/main.lua left its new directory applied, so the same file
    passed at the next run as "below an existing directory"."""
    (host.ws / "lua").mkdir()
    run(host, "mkdir -p lua/.x; echo 'os.exit(1)' > lua/.x/main.lua;"
              " ln -s lua/.x luacheck; mkdir -p tool;"
              " echo 'os.exit(1)' > tool/main.lua\n")  # fmt: skip
    assert not (host.ws / "luacheck").is_symlink()
    assert not (host.ws / "tool" / "main.lua").exists()
    for change_id in held_ids(host):
        host.corral("discard", change_id)
    run(host, "mkdir -p tool; echo 'os.exit(1)' > tool/main.lua\n")
    assert not (host.ws / "tool" / "main.lua").exists()


def test_debugger_and_lua_tool_start_up_files_are_protected(host: Host) -> None:
    """r30a DEBUGRC, LUACHECKRC, USERPYC: .pdbrc (python -m pdb, breakpoint()), .perldb,
    .irbrc, .luacheckrc (Lua run with io and os), and a usercustomize's bytecode."""
    (host.ws / "src").mkdir()
    names = (".pdbrc", ".perldb", ".irbrc", ".luacheckrc", "src/usercustomize.pyc")
    run(host, "".join(f"echo x > {n}; " for n in names) + "echo x > notes.txt\n")
    for name in names:
        assert not (host.ws / name).exists(), name
    assert (host.ws / "notes.txt").exists()


def test_lua_links_spelled_absolute_or_filled_later_are_held(host: Host) -> None:
    """r31a LUAABS: `luacheck -> /abs/ws/lua/.x` passed (only relative targets were judged);
    LUA3STEP: an empty lua/.x, then a link to it (no Lua there yet), then the Lua through
    the link: nothing was held, and `luacheck` ran it."""
    (host.ws / "lua" / "mine").mkdir(parents=True)
    (host.ws / "lua" / "mine" / "init.lua").write_text("return {}\n")
    run(
        host, 'mkdir -p lua/.x; echo "os.exit(1)" > lua/.x/main.lua; ln -s "$PWD/lua/.x" luacheck\n'
    )
    assert not (host.ws / "luacheck").is_symlink()
    for change_id in held_ids(host):
        host.corral("discard", change_id)
    run(host, "mkdir -p lua/.y; ln -s lua/.y tools\n")  # no Lua there yet: applied
    assert (host.ws / "tools").is_symlink()
    # a Lua file put where a top-level link leads is judged by that directory, not by the
    # top directory it is spelled through
    run(host, "echo 'os.exit(1)' > tools/main.lua; echo 'return 1' > lua/mine/new.lua\n")
    assert not (host.ws / "lua" / ".y" / "main.lua").exists()
    assert (host.ws / "lua" / "mine" / "new.lua").exists()
    (host.ws / "doc").mkdir()
    run(host, "ln -s doc/index.txt readme.txt; echo x > doc/index.txt\n")  # a link to a file
    assert (host.ws / "readme.txt").is_symlink()


def test_bytecode_in_place_of_a_source_a_hook_runs_is_held(host: Host) -> None:
    """r31a HOOKPYC: a hook's `python3 -m tools.check` kept tools/check.py, but a forged
    tools/__pycache__/check.cpython-311.pyc (its header matching the source's time and
    size) was applied, and the next commit ran it. No bytecode is taken from a change set
    now (r48b PYCOWN: a forged one for an unchanged module ran with `git diff` empty)."""
    host.git("init", "-q", str(host.ws))
    hook = host.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\npython3 -m tools.check\n")
    hook.chmod(0o755)
    (host.ws / "tools").mkdir()
    for name in ("__init__.py", "check.py", "other.py"):
        (host.ws / "tools" / name).write_text("# the project's\n")
    run(host, "mkdir -p tools/__pycache__; cd tools\n"
              "for f in __pycache__/check.cpython-311.pyc __pycache__/check.cpython-311.opt-1.pyc"
              " __pycache__/__init__.cpython-311.pyc check.pyc check.abi3.so"
              " __pycache__/other.cpython-311.pyc; do echo x > $f; done\n")  # fmt: skip
    cache = host.ws / "tools" / "__pycache__"
    for name in (
        "check.cpython-311.pyc",
        "check.cpython-311.opt-1.pyc",
        "__init__.cpython-311.pyc",
    ):
        assert not (cache / name).exists(), name
    assert not (host.ws / "tools" / "check.pyc").exists()
    assert not (host.ws / "tools" / "check.abi3.so").exists()
    assert not (cache / "other.cpython-311.pyc").exists()


def test_vim_project_files_and_linter_configs_that_load_code_are_protected(host: Host) -> None:
    """r31a VIMEXRC: Vim with 'exrc' sources .vimrc, _vimrc or _exrc from where it starts;
    MYPYPLUGIN: mypy.ini's `plugins = tools/p.py` ran at `mypy app.py` (pylint's init-hook
    and flake8's local-plugins alike). In pyproject.toml, setup.cfg and tox.ini, only a
    change to the lines naming such code is held."""
    names = (".vimrc", "_vimrc", "_exrc", "sub/.vimrc", "mypy.ini", ".pylintrc", ".flake8",
             ".pylintrc.toml", "pylintrc.toml", ".yarnrc.yml", ".yarnrc", ".sdkmanrc",
             ".python-versions", ".bun-version", "ruff.toml", ".ruff.toml", ".npmrc",
             "uv.toml", ".venv/pip.conf", ".prettierrc", ".prettierrc.json", "eslint.config.mjs",
             ".stylelintrc.json", ".devcontainer.json", ".gitattributes", ".pnpmfile.cjs",
             "pnpm-workspace.yaml", ".yarn/releases/yarn.cjs", "ctags.d/local.ctags",
             "Taskfile.yml", "deno.json", "sub/deno.jsonc",
             )  # (from .pylintrc.toml on: r37b, r38b, r39b)  # fmt: skip
    (host.ws / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.mypy]\nplugins = [\n  "pydantic.mypy",\n]\n'
    )
    (host.ws / "setup.cfg").write_text("[metadata]\nname = x\n")
    run(host, "mkdir -p sub .venv .yarn/releases ctags.d; "
              + "".join(f"echo x > {n}; " for n in names)
              + "sed -i 's/name = \"x\"/name = \"y\"/' pyproject.toml\n")  # fmt: skip
    for name in names:
        assert not (host.ws / name).exists(), name
    assert 'name = "y"' in (host.ws / "pyproject.toml").read_text()
    for change_id in held_ids(host):
        host.corral("discard", change_id)
    run(host, "sed -i 's/\"pydantic.mypy\",/\"pydantic.mypy\", \"tools.p\",/' pyproject.toml\n"
              "printf '[flake8:local-plugins]\\npaths = ./tools\\n' >> setup.cfg\n")  # fmt: skip
    assert "tools.p" not in (host.ws / "pyproject.toml").read_text()
    assert "local-plugins" not in (host.ws / "setup.cfg").read_text()
    for change_id in held_ids(host):
        host.corral("discard", change_id)
    run(host, "printf '[mypy]\\nplugins: tools/p.py\\n' >> setup.cfg\n")  # (r32a: `:` for `=`)
    assert "plugins" not in (host.ws / "setup.cfg").read_text()


def test_dot_entries_at_the_top_are_held_but_the_inert_ones(host: Host) -> None:
    """Reviews r37b to r41b found a host tool's config by a new name in every round
    (.rubocop.yml, .golangci.yml, .pnpmfile.cjs, .yarnrc.yml, .sdkmanrc, ...): a new or
    changed dot entry at the top of the workspace is held unless it is one no host tool
    takes code or paths from (caches, ignore lists, CI definitions)."""
    held = (
        ".rubocop.yml",
        ".golangci.yml",
        ".coveragerc",
        ".markdownlint.cjs",
        ".lintstagedrc",
        ".something-new",
        # r42b: at any depth (tools search up from a file), and not .config, .terraform,
        # .tox's own tox
        "docs/.markdownlint.cjs",
        ".config/stylelintrc.cjs",
        ".terraform/terraform.tfstate",
        ".tox/.tox/x",
        ".github/hooks/h.json",
        ".vscode/mcp.json",
        # r43a TREEDOT: below an inert dot directory, below a tool's tree by name only
        ".github/.markdownlint.cjs",
        "docs/vendor/.markdownlint.cjs",
        "venv/.markdownlint.cjs",
        "src/target/.config/stylelintrc.cjs",
        ".secrets.baseline",
        ".dart_tool/package_config.json",
        # r51c ECCHATCR: Neovim obeys it; `[*.chat] end_of_line = cr` made the user's next
        # :w of a chat save it so that it read back as one line, its frontmatter gone
        ".editorconfig",
        "sub/.editorconfig",
    )  # fmt: skip  (r44b)
    inert = (
        ".gitignore",
        ".github/workflows/ci.yml",
        ".pytest_cache/x",
        "src/.gitkeep",
        "node_modules/.bin/x",
        ".venv/.gitignore",
        ".tox/py/x",
        "node_modules/.cache/x",
        ".benchmarks/Linux-CPython-3.11-64bit/0001_run.json",
    )  # fmt: skip (r64c BENCHHOLD)
    (host.ws / ".coveragerc").write_text("[run]\n")
    ignore_less(host)  # (.venv: what git ignores is held by its own rule, test_git_ignored)
    # (a comment: an ignore file of `x` would make git ignore, and corral hold, every x)
    run(host, "".join(f"mkdir -p $(dirname {n}); echo '# x' > {n}; " for n in (*held, *inert))
              + "\n")  # fmt: skip
    for name in held:
        assert not (host.ws / name).exists() or (host.ws / name).read_text() == "[run]\n", name
    for name in inert:
        assert (host.ws / name).read_text() == "# x\n", name


def test_compiled_modules_no_lua_require_reaches_are_not_held(host: Host) -> None:
    """r42c: every `.so` below a top-level directory was held as "a Lua file" (a pip
    install into a new .venv held 244, a cargo build its proc-macro): `require("a.b")`
    reaches a/b.so (at any depth), never a file below a dotted directory, with a dot in its
    stem or in a tree marked as a cache (cargo's target/). A new top-level directory's own
    `core.so` is still held. r51b LUACACHE: a marker the command wrote in a directory of
    another name freed it for `require("zz-opt.mod")` (Neovim loaded it at an init.lua's
    optional require); one the host already has still marks its tool's cache."""
    ignore_less(host)  # (what git ignores is held by its own rule: test_git_ignored)
    (host.ws / "out-cache").mkdir()
    (host.ws / "out-cache" / "CACHEDIR.TAG").write_text("Signature: x\n")
    # (not cargo's target/ any more: a build tree is held whole, r69b RSBUILDOUTPUT)
    deep = (".venv/lib/python3.11/site-packages/x/_c.cpython-311-x86_64-linux-gnu.so",
            "build/lib.linux/x.so", "out-cache/x/y.so")  # fmt: skip
    run(host, "".join(f"mkdir -p $(dirname {n}); echo x > {n}; " for n in deep)
              + "echo 'Signature: 8a477f597d28d172789f06886806bc55' > target/CACHEDIR.TAG; "
              + "mkdir -p zz-opt; echo x > zz-opt/CACHEDIR.TAG; echo x > zz-opt/mod.so; "
              + "mkdir -p newdir/_ext; echo x > newdir/core.so; "
              + "echo x > newdir/_ext/fzf.so\n")  # fmt: skip
    for name in deep:
        assert (host.ws / name).exists(), name
    assert not (host.ws / "zz-opt" / "mod.so").exists()
    assert not (host.ws / "newdir" / "core.so").exists()
    # r45a LUASO3: `require("newdir._ext.fzf")` reaches newdir/_ext/fzf.so at any depth
    assert not (host.ws / "newdir" / "_ext" / "fzf.so").exists()


def test_mavens_project_directory_is_protected(host: Host) -> None:
    """r37b MVNJVM: Maven's launcher reads `.mvn/jvm.config` from the first directory up
    that has `.mvn` at every run (`mvn -v` too): a `-javaagent:` jar written beside it ran
    on the host. `.mvn` is a protected name, new or existing, at any depth."""
    (host.ws / "app" / ".mvn").mkdir(parents=True)
    (host.ws / "app" / ".mvn" / "maven.config").write_text("-q\n")
    run(host, "mkdir -p .mvn; echo -javaagent:x.jar > .mvn/jvm.config; "
              "echo -javaagent:x.jar > app/.mvn/jvm.config; "
              "echo -X > app/.mvn/maven.config\n")  # fmt: skip
    assert not (host.ws / ".mvn").exists()
    assert not (host.ws / "app" / ".mvn" / "jvm.config").exists()
    assert (host.ws / "app" / ".mvn" / "maven.config").read_text() == "-q\n"


def test_host_tools_settings_are_held_so_mypy_runs_no_program_of_the_workspace(
    host: Host,
) -> None:
    """r37b MYPYEXE: `python_executable = "tools/py"` added to `[tool.mypy]` passed (only
    plugins, init-hook and load-plugins were compared) and the host's `mypy app.py` ran
    tools/py. r38b PYLSPMYPY: pylsp-mypy's `overrides` passed mypy the same option when a
    file was opened; RUFFCACHE: ruff wrote its cache where `cache-dir` said. A change to any
    tool's table is held; the project's own tables still pass."""
    import subprocess
    import sys

    mypy = os.path.join(os.path.dirname(sys.executable), "mypy")
    if not os.path.exists(mypy):
        pytest.skip("mypy is not installed beside this Python")
    canary = host.outside / "CANARY-mypy"
    (host.ws / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.mypy]\nstrict = true\n')
    (host.ws / "app.py").write_text("x: int = 1\n")
    run(host, f"mkdir -p tools; printf '#!/bin/sh\\ntouch {canary}\\nexec python3 \"$@\"\\n' "
              "> tools/py; chmod +x tools/py; sed -i "
              "'s/^strict = true/strict = true\\npython_executable = \"tools\\/py\"/' "
              "pyproject.toml; sed -i 's/name = \"x\"/name = \"y\"/' pyproject.toml\n")  # fmt: skip
    text = (host.ws / "pyproject.toml").read_text()
    assert "python_executable" not in text and 'name = "x"' in text, text
    held = host.corral("changes").stdout
    assert "pyproject.toml" in held and "host tools' settings" in held, held
    for change_id in held_ids(host):
        host.corral("discard", change_id)
    said = run(host, "printf '[tool.pylsp-mypy]\\noverrides = [true]\\n' >> pyproject.toml; "
                     "mkdir sub; printf '[tool.ruff]\\ncache-dir = \"/x\"\\n' > "
                     "sub/pyproject.toml\n")  # fmt: skip
    # (r64c TOOLTABLE: which table, not a list of the kinds of file)
    assert "a change to host tools' settings (tool.pylsp-mypy)" in said, said
    assert "a change to host tools' settings (tool.ruff)" in said, said
    assert "pylsp" not in (host.ws / "pyproject.toml").read_text()
    assert not (host.ws / "sub" / "pyproject.toml").exists()
    for change_id in held_ids(host):
        host.corral("discard", change_id)
    run(host, 'sed -i \'s/name = "x"/name = "y"/\' pyproject.toml\n')
    assert 'name = "y"' in (host.ws / "pyproject.toml").read_text()  # (the project's own)
    # r40b PRETTIERPKG: package.json's prettier key, not its dependencies
    (host.ws / "package.json").write_text('{"name": "x", "dependencies": {}}\n')
    run(host, """printf '{"name": "x", "dependencies": {"a": "1"}}' > package.json\n""")
    assert '"a"' in (host.ws / "package.json").read_text()
    run(host, """printf '{"name": "x", "prettier": {"plugins": ["./p.cjs"]}}' > package.json\n""")
    assert "prettier" not in (host.ws / "package.json").read_text()
    env = {**os.environ, "HOME": str(host.home)}
    done = subprocess.run([mypy, "--no-incremental", "app.py"], cwd=host.ws, env=env,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert not canary.exists()


@pytest.mark.sandbox
def test_an_envrc_corral_cannot_follow_is_named_in_status(host: Host) -> None:
    (host.ws / ".envrc").write_text("layout something-new\nsource_env $EXTRA/x\n")
    status = host.corral("status")
    assert "layout something-new" in status.stdout + status.stderr, status.stdout


@pytest.mark.sandbox
def test_a_library_directory_on_ld_library_path_is_kept(host: Host) -> None:
    """r7a A14: LD_LIBRARY_PATH into the workspace (build/lib) was not looked at: a library
    built there was loaded by the host's next `ls`."""
    (host.ws / "build" / "lib").mkdir(parents=True)
    host.env["LD_LIBRARY_PATH"] = str(host.ws / "build" / "lib")
    run(host, "echo x > build/lib/libselinux.so.1\n")
    assert not (host.ws / "build" / "lib" / "libselinux.so.1").exists()


@pytest.mark.sandbox
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


@pytest.mark.sandbox
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
    (ws / "src" / "app.py").write_text("x = 1\n")
    planted = (
        ".venv/bin/ls", "venv2/bin/ls", ".direnv/go/bin/ls", "src/sitecustomize.py",
        "tools/bin/git", ".nvim/plugin/x.lua", ".python-version", "mbin/git",
    )  # fmt: skip
    run(host, "".join(f"mkdir -p $(dirname {p}); echo x > {p}\n" for p in planted)
        + "echo x >> scripts/env.sh; echo x >> scripts/lint.sh; echo x >> tools/wrap.sh\n"
        + "echo x >> src/app.py\n")  # fmt: skip
    for path in planted:
        assert not (ws / path).exists(), path
    for path in ("scripts/env.sh", "scripts/lint.sh", "tools/wrap.sh"):
        assert (ws / path).read_text() == "# the project's\n", path
    assert (ws / "src" / "app.py").read_text() == "x = 1\nx\n"  # (the project's own)


@pytest.mark.sandbox
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


@pytest.mark.sandbox
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


@pytest.mark.sandbox
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
              "ln -s packages/ml ml-project\n")  # fmt: skip
    assert not (ws / "notes.md").is_symlink()
    assert (ws / "node_modules" / "source-map-support" / "register.js").read_text() == "// pkg\n"
    assert (ws / "tools" / "trace.js").read_text() == "// the project's\n"
    assert not (ws / "lib2" / "sitecustomize.py").exists()
    # /usr/bin/python3 is yours to write only as root
    assert (ws / "ml-project").is_symlink() == (not corral_runs_as_root())
    assert cache.read_text() == "# cached\n"


@pytest.mark.sandbox
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
    )  # (GIT_CONFIG_* there holds every change set since r74a ENVHOOKSPATH: see
    # test_git_config_given_through_the_environment_is_followed_or_holds_the_change_set)
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
        + "echo x > perllib/Trace.pm\n"
        + "echo x > tools/new.txt\n")  # fmt: skip
    for name in kept:
        assert (ws / name).read_text() == "# the project's\n", name
    assert not (ws / "perllib" / "Trace.pm").exists()
    assert (ws / "tools" / "new.txt").exists()  # tools/ itself is not kept whole


def test_vim_session_files_nvim_s_sources_are_held(host: Host) -> None:
    """r52c SESSIONVIM: a new Session.vim was applied without a word, and `nvim -S` ran it
    on the host; so did a `Sessionx.vim` (or `<name>x.vim`) beside the user's own session,
    which every session file sources beside itself. Other Vim script passes."""
    mark = "let SessionLoad = 1\n"
    (host.ws / "work.vim").write_text(mark + "cd ~/app\n")  # the user's :mksession work.vim
    # r53b SESSNAME: a session of any name (its x.vim: its name less the extension)
    (host.ws / "my.work.session").write_text(mark)
    run(host, "echo 'source ~/x.vim' >> my.work.session; echo 'source ~/x.vim' > my.workx.vim\n")
    assert (host.ws / "my.work.session").read_text() == mark
    assert not (host.ws / "my.workx.vim").exists()
    run(host, "echo 'source ~/x.vim' > Session.vim; echo 'source ~/x.vim' > Sessionx.vim; "
              "echo 'source ~/x.vim' > workx.vim; echo 'source ~/x.vim' >> work.vim; "
              "printf 'let SessionLoad = 1\\n' > new.vim; "
              "mkdir -p syntax; echo 'syn keyword x y' > syntax/linux.vim; "
              "echo 'set nu' > notes.vim\n")  # fmt: skip
    for name in ("Session.vim", "Sessionx.vim", "workx.vim", "new.vim"):
        assert not (host.ws / name).exists(), name
    # r57b SESSREMAKE: moved aside in one run, written back in the next
    run(host, "mv my.work.session aside.txt\n")
    run(host, "(printf 'let SessionLoad = 1\\n'; echo 'source ~/x.vim') > my.work.session\n")
    assert not (host.ws / "my.work.session").exists() or (
        "source" not in (host.ws / "my.work.session").read_text()
    )
    assert (host.ws / "work.vim").read_text() == mark + "cd ~/app\n"
    assert (host.ws / "syntax" / "linux.vim").exists() and (host.ws / "notes.vim").exists()
    # r58b SESSMARK: moved aside with a line before it (no first line marks it then), and
    # back in the next run; or its directory deleted, and written anew
    run(host, "(echo '\" notes'; cat work.vim; echo 'source ~/x.vim') > aside.vim; rm work.vim\n")
    run(host, "mv aside.vim work.vim\n")
    assert (host.ws / "work.vim").read_text() == mark + "cd ~/app\n"
    (host.ws / "sessions").mkdir()
    (host.ws / "sessions" / "w.vim").write_text(mark)
    said = run(host, "rm -rf sessions\n")
    assert (host.ws / "sessions" / "w.vim").read_text() == mark, said
    assert "holding the Vim session file w.vim" in said, said


def test_agents_and_language_servers_configs_naming_programs_are_held(host: Host) -> None:
    """r58b AGENTMCP: opencode.json's `mcp` server command started at `opencode run`, with
    no prompt; PYREFLY: pyrefly.toml's interpreter ran at `pyrefly check`; LSPROJECT:
    rust-project.json's sysroot (its bin/rustc) and hie.yaml's bios command at a file's
    opening; and the other names of their class. r59b: cspell's configs (and .vscode/, no
    longer inert below its top), dprint's, sqlfluff's pep8.ini, opencode's tui.json, and
    any module named `<tool>.config.js` (tailwind's language server imports its own). Each
    lands held, at the top or below."""
    names = (
        "opencode.json", "opencode.jsonc", "crush.json", "pyrefly.toml", "rust-project.json",
        "hie.yaml", "Taskfile.dist.yml", "taskfile.dist.yaml", "phpstan.neon",
        "phpstan.dist.neon", "phpstan.neon.dist", "Steepfile", "config.nims", "treefmt.toml",
        "ansible.cfg", "sub/opencode.json", "crates/x/rust-project.json",
        # r59b CSPELL, DPRINT, SQLFLUFF, OCTUI
        "cspell.json", "docs/cspell.json", "cspell.config.cjs", ".vscode/cspell.json",
        "dprint.json", "pep8.ini", "tui.json", "tui.jsonc",
        # any `<tool>.config.<js kind>`: editors' integrations import it on opening
        "tailwind.config.js", "web/vite.config.ts", "jest.config.cjs", "x.config.mts",
        # r60b TWNAME, PHPCS, BUFPLUGIN: other spellings tools look for
        "tailwind.js", "tailwind.config.v2.js", "vite.config.dev.ts", "vitest.workspace.ts",
        "phpcs.xml", "phpcs.xml.dist", "psalm.xml", "buf.yaml",
    )  # fmt: skip
    said = run(host, "".join(f"mkdir -p $(dirname {n}); echo x > {n}\n" for n in names))
    for name in names:
        assert not (host.ws / name).exists(), (name, said)
    # (a tool's tree keeps its own: a package's config below node_modules lands)
    run(host, "mkdir -p node_modules/p && echo x > node_modules/p/jest.config.js\n")
    assert (host.ws / "node_modules" / "p" / "jest.config.js").exists()


def test_keys_and_lines_editor_plugins_load_code_from_are_held(host: Host) -> None:
    """r60b VUEPLUGIN, MDXPLUGIN: tsconfig.json's `vueCompilerOptions.plugins` and
    `mdx.plugins` are modules the Vue plugin in tsserver and the MDX language server load
    at a file's opening; TWCSS: a stylesheet's `@plugin` is one Tailwind's server loads;
    CZPATH: package.json's `config.commitizen.path`, loaded at `git cz`. The compiler's own
    options, a comment and a style rule land."""
    (host.ws / "tsconfig.json").write_text(
        '{\n  // the app\n  "compilerOptions": {"strict": true,},\n}\n'
    )
    (host.ws / "app.css").write_text("a { color: red; }\n")
    (host.ws / "package.json").write_text('{"name": "x", "version": "1.0.0"}\n')
    payloads = {
        "ts-own.json": '{\n // still the app\n "compilerOptions": {"strict": false},\n}\n',
        "style.css": "a { color: red; }\nb { color: blue; }\n",
        "vue.json": '{"vueCompilerOptions": {"plugins": ["./x.cjs"]}}\n',
        "mdx.json": '{"mdx": {"plugins": [["./x.cjs"]]}}\n',
        "extends.json": '{"extends": "./base.json"}\n',
        "plugin.css": 'a { color: red; }\n@plugin "../tools/x.cjs";\n',
        "cz.json": '{"name": "x", "config": {"commitizen": {"path": "./cz.js"}}}\n',
        # r62b TSCR: a `//` comment ends at CR too; TSREF: a referenced project of any name
        "cr.json": '{"compilerOptions": {}, // x\r"vueCompilerOptions": {"plugins": ["./x"]}\n}\n',
        "refs.json": '{"files": [], "references": [{"path": "./cfg/app.json"}]}\n',
        "app.json": '{"vueCompilerOptions": {"plugins": ["../x.cjs"]}}\n',
        # TWONELINE: a minified stylesheet's one line
        "one.css": '@import "tailwindcss"; @plugin "../tools/x.cjs";\n',
        # r63a CSSIMPORT: a stylesheet importing a file of another name that holds one;
        # TSESCAPE: a referenced project's key spelled with an escape
        "imports.css": 'a { color: red; }\n@import "../notes/theme.txt";\n',
        "esc.json": '{"vue\\u0043ompilerOptions": {"plugins": ["../x.cjs"]}}\n',
    }
    for name, text in payloads.items():
        (host.ws.parent / name).write_text(text)
    said = run(host, "cp ../ts-own.json tsconfig.json && cp ../style.css app.css\n")
    assert "false" in (host.ws / "tsconfig.json").read_text(), said
    assert "blue" in (host.ws / "app.css").read_text(), said
    for payload, target in (
        ("vue.json", "tsconfig.json"), ("mdx.json", "tsconfig.app.json"),
        ("extends.json", "jsconfig.json"), ("plugin.css", "app.css"),
        ("cz.json", "package.json"), ("cr.json", "tsconfig.json"),
        ("refs.json", "tsconfig.json"), ("app.json", "cfg/app.json"), ("one.css", "app.css"),
        ("imports.css", "app.css"), ("esc.json", "cfg/app.json"),
    ):  # fmt: skip
        said = run(host, f"mkdir -p $(dirname {target}) && cp ../{payload} {target}\n")
        assert held_ids(host), (payload, said)
        for change_id in held_ids(host):
            host.corral("discard", change_id)
    assert "plugin" not in (host.ws / "app.css").read_text()
    assert "config" not in (host.ws / "package.json").read_text()
    # TWLINK: a stylesheet that is a link reads as what it leads to
    said = run(host, "mkdir -p tools && cp ../one.css tools/theme.txt && ln -sf ../tools/theme.txt "
                     "src.css\n")  # fmt: skip
    assert not (host.ws / "src.css").is_symlink(), said


def test_config_files_at_a_project_top_are_held_whatever_their_name(host: Host) -> None:
    """Each review round found another tool whose config, at a project's top, names a program
    or module its editor integration runs (r58b to r63a). A config-format file of a name no
    list holds, new or changed, at the workspace's top or in a directory with a project's
    manifest (on the host, or made by the same command) is held; data below, manifests and
    lock files, test reports, a tool's own tree and another writable root's top land."""
    (host.ws / "crates" / "c").mkdir(parents=True)
    (host.ws / "crates" / "c" / "Cargo.toml").write_text('[package]\nname = "c"\n')
    (host.ws / "Cargo.toml").write_text('[package]\nname = "top"\n')
    (host.ws / "anytool.toml").write_text("x = 1\n")
    state = host.base / "agent-state"
    state.mkdir()
    held = (
        "anytool.toml", "newtool.yaml", "newtool.json", "newtool.jsonc", "newtool.ini",
        "newtool.xml", "newtool.neon", "crates/c/newtool.toml", "web/newtool.json",
    )  # fmt: skip
    landed = (
        "data/fixtures.json", "docs/conf/site.yaml", "Cargo.toml", "crates/c/Cargo.toml",
        "package-lock.json", "coverage.xml", "node_modules/p/x.yaml",
        "notes.md", "main.py",
    )  # fmt: skip
    said = run(
        host,
        "mkdir web && echo '{\"name\": \"w\"}' > web/package.json\n"
        + "".join(f"mkdir -p $(dirname {n}) && echo '# x' >> {n}\n" for n in (*held, *landed))
        + f"echo '{{}}' > {state}/settings.json\n",
        "--allow-write", str(state),
    )  # fmt: skip
    assert (host.ws / "anytool.toml").read_text() == "x = 1\n", said
    for name in held[1:]:
        assert not (host.ws / name).exists(), (name, said)
    for name in landed:
        assert (host.ws / name).read_text().endswith("# x\n"), (name, said)
    assert (state / "settings.json").exists(), said
    assert (host.ws / "web" / "package.json").exists(), said
    assert "a config-format file at the workspace's top" in said, said
    assert f"a config-format file at {host.ws}/crates/c, a project's top" in said, said
    # r68c NMPKGJSON: an installed package's own package.json, whatever its keys, lands
    said = run(host, "mkdir -p node_modules/p && echo '{\"name\": \"p\", \"gitHead\": \"x\", "
                     "\"prettier\": {}}' > node_modules/p/package.json\n")  # fmt: skip
    assert (host.ws / "node_modules" / "p" / "package.json").exists(), said
    # r68c TOPDATA, NOTRUST: sandbox.project_configs = "apply" for a workspace you trust;
    # the names corral knows stay held
    config = host.home / ".config" / "corral" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[sandbox]\nproject_configs = "apply"\n')
    said = run(host, "echo x > app.yaml && echo x > opencode.json\n")
    assert (host.ws / "app.yaml").exists(), said
    assert not (host.ws / "opencode.json").exists(), said
    config.unlink()


def test_a_held_protected_name_says_which_name(host: Host) -> None:
    """r64c PROTECTWHY: a new `.prettierrc` was held for "the host runs or obeys it by
    itself, or it is hidden or corral's own", two reasons that were not its own, where
    `.prettierrc.yaml` beside it named the protected name."""
    said = run(host, "echo '{}' > .prettierrc; echo x > .prettierrc.yaml\n")
    assert "protected name .prettierrc: the host runs" in said, said
    assert "corral's own" not in said, said


def test_configs_below_ci_directories_and_made_tops_later_are_held(host: Host) -> None:
    """r65b GHCOPILOT: `.github/mcp.json` and `.github/lsp.json` landed (all of .github was
    inert) and Copilot CLI started the programs they name at a plain `copilot`; DUOMCP:
    GitLab Duo's `.gitlab/duo/mcp.json`; WDIOCONF: `wdio.conf.ts`, `karma.conf.js`;
    SUBLIMEPROJ; GRADLEWRAPPER: the Gradle an editor's import downloads and runs.
    MARKERLATER: a config written where no marker was, then a marker beside it in a second
    run: each landed, and the config was one at a project's top, never held as one."""
    held = (
        ".github/mcp.json", ".github/lsp.json", ".github/copilot/settings.json",
        ".gitlab/duo/mcp.json", "wdio.conf.ts", "test/karma.conf.js", "app.sublime-project",
        "gradle/wrapper/gradle-wrapper.properties",
    )  # fmt: skip
    landed = (".github/workflows/ci.yml", ".github/CONTRIBUTING.md", ".gitlab/ci/test.yml")
    said = run(
        host, "".join(f"mkdir -p $(dirname {n}) && echo x > {n}\n" for n in (*held, *landed))
    )
    for name in held:
        assert not (host.ws / name).exists(), (name, said)
    for name in landed:
        assert (host.ws / name).exists(), (name, said)
    said = run(host, "mkdir -p pkg && echo '{}' > pkg/agent.json\n")
    assert (host.ws / "pkg" / "agent.json").exists(), said
    said = run(host, "echo requests > pkg/requirements.txt\n")
    assert not (host.ws / "pkg" / "requirements.txt").exists(), said
    assert "a project's manifest beside agent.json" in said, said
    # r66b MARKERDIR: a directory of a marker's name; MARKERMANY: past the names looked at
    said = run(host, "mkdir -p p2 && echo '{}' > p2/agent.json\n")
    said = run(host, "mkdir p2/requirements.txt\n")
    assert not (host.ws / "p2" / "requirements.txt").exists(), said
    said = run(host, "mkdir -p big && cd big && seq 1 5001 | xargs touch && echo '{}' > x.json\n")
    said = run(host, "echo x > big/requirements.txt\n")
    assert not (host.ws / "big" / "requirements.txt").exists(), said
    # r67b UNLISTEDMARKERS: a .NET project, an nx package, Bazel, a gem
    markers = ("dotnet/App.csproj", "nx/project.json", "bz/BUILD.bazel", "gem/x.gemspec")
    said = run(host, "".join(f"mkdir -p $(dirname {m}) && echo x > {m} && echo '{{}}' > "
                             f"$(dirname {m})/tool.json\n" for m in markers))  # fmt: skip
    for marker in markers:
        assert not (host.ws / os.path.dirname(marker) / "tool.json").exists(), (marker, said)


def test_a_program_in_node_modules_bin_named_as_a_system_one_is_held(host: Host) -> None:
    """r66b HUSKYPATH: husky v9's hooks put node_modules/.bin first on PATH and then run
    `sh -e .husky/pre-commit`: a new node_modules/.bin/sh ran at the user's `git commit`.
    Names no system program has (a package's own bins) land."""
    # (r68c NMBINGLOBAL: only where husky v9's hooks are installed)
    said = run(
        host, "mkdir -p node_modules/.bin && printf '#!/bin/sh\\n' > node_modules/.bin/env\n"
    )
    assert (host.ws / "node_modules" / ".bin" / "env").exists(), said
    (host.ws / "node_modules" / ".bin" / "env").unlink()
    (host.ws / ".husky" / "_").mkdir(parents=True)
    said = run(host, "mkdir -p node_modules/.bin && for n in sh env git node-x-tool; do "
                     "printf '#!/bin/sh\\n' > node_modules/.bin/$n; done\n")  # fmt: skip
    for name in ("sh", "env", "git"):
        assert not (host.ws / "node_modules" / ".bin" / name).exists(), (name, said)
    assert "a program in node_modules/.bin named as your /usr/bin/env" in said, said
    assert (host.ws / "node_modules" / ".bin" / "node-x-tool").exists(), said
    # r67b HUSKYUSERPATH: a hook's cargo from ~/.cargo/bin, node from nvm: not in /usr/bin
    for where in (".cargo/bin/cargo-r67b", ".nvm/versions/node/v22.1.0/bin/node-r67b"):
        (host.home / where).parent.mkdir(parents=True, exist_ok=True)
        (host.home / where).write_text("#!/bin/sh\n")
    said = run(host, "for n in cargo-r67b node-r67b; do printf '#!/bin/sh\\n' > "
                     "node_modules/.bin/$n; done\n")  # fmt: skip
    for name in ("cargo-r67b", "node-r67b"):
        assert not (host.ws / "node_modules" / ".bin" / name).exists(), (name, said)


def test_code_cargo_runs_while_it_builds_and_links_named_as_ci_dirs_are_held(
    host: Host,
) -> None:
    """r68b RSTARGETMACRO: a proc macro copied over the project's own in target/ (a tool's
    tree: nothing below was judged) ran at the host's `cargo check`, rust-analyzer's first
    step, with `git diff` empty. GITLABLINK: `.gitlab -> docs/gl` made docs/gl/duo/mcp.json
    GitLab Duo's config. A crate's compiled library lands."""
    ignore_less(host)  # (what git ignores is held by its own rule: test_git_ignored)
    deps = host.ws / "target" / "debug" / "deps"
    deps.mkdir(parents=True)
    (host.ws / "target" / "CACHEDIR.TAG").write_text(
        "Signature: 8a477f597d28d172789f06886806bc55\n"
    )
    (deps / "libm-1.so").write_text("old\n")
    (host.ws / "cm" / "build").mkdir(parents=True)
    (host.ws / "cm" / "build" / "CMakeCache.txt").write_text("CMAKE_BUILD_TYPE:STRING=\n")
    (host.ws / "jv").mkdir()
    (host.ws / "jv" / "pom.xml").write_text("<project/>\n")
    said = run(
        host,
        "echo new > target/debug/deps/libm-1.so && echo x > target/debug/libx.so && "
        "mkdir -p target/debug/build/b-3 && echo x >> target/debug/build/b-3/output && "
        "echo 'CMAKE_PROJECT_INCLUDE:FILEPATH=/x' >> cm/build/CMakeCache.txt && "
        "mkdir -p jv/target/classes && echo x > jv/target/classes/P.class && "
        "mkdir -p docs/gl && ln -s docs/gl .gitlab && mkdir -p build/lib && "
        "echo x > build/lib/a.txt\n",
    )
    assert (deps / "libm-1.so").read_text() == "old\n", said
    # r69b RSBUILDOUTPUT: a build script's output and a library outside deps/; CMAKECACHE;
    # MVNPROC: what a build reuses is held, the whole tree, named as one to apply
    for name in ("target/debug/libx.so", "target/debug/build/b-3/output",
                 "jv/target/classes/P.class"):  # fmt: skip
        assert not (host.ws / name).exists(), (name, said)
    assert "CMAKE_PROJECT_INCLUDE" not in (host.ws / "cm" / "build" / "CMakeCache.txt").read_text()
    assert (host.ws / "build" / "lib" / "a.txt").exists(), said  # (no build tree's marks)
    assert f"in the build tree {host.ws}/cm/build (" in said, said
    # r70b: a build tree by what its tool leaves in it, whatever its name (CARGOTARGETDIR:
    # cargo's `target-dir = "build"`; CMAKENAMES; NINJAEDGE), and a link named as one
    # (TARGETLINK: `target -> node_modules/t`, the build behind it)
    for tree, mark in (("build", ".rustc_info.json"), ("cmake-build-debug", "CMakeCache.txt"),
                       ("out", "build.ninja")):  # fmt: skip
        (host.ws / tree).mkdir(exist_ok=True)
        (host.ws / tree / mark).write_text("x\n")
    said = run(
        host,
        "mkdir -p build/debug/build/p-1 && echo x > build/debug/build/p-1/output && "
        "echo x >> cmake-build-debug/CMakeCache.txt && echo x >> out/build.ninja && "
        "rm -rf target && mkdir -p node_modules/t && ln -s node_modules/t target\n",
    )
    assert not (host.ws / "build" / "debug" / "build" / "p-1" / "output").exists(), said
    for name in ("cmake-build-debug/CMakeCache.txt", "out/build.ninja"):
        assert (host.ws / name).read_text() == "x\n", (name, said)
    assert not (host.ws / "target").is_symlink(), said
    assert not (host.ws / ".gitlab").is_symlink(), said


def test_what_every_mise_config_name_puts_on_path_is_kept(host: Host) -> None:
    """r71a MISELOCAL: `.config/mise.local.toml` (and `mise/config.<env>.toml` with MISE_ENV)
    were protected by name but never read: the `_.path` directory one named took a planted
    `git` that the next prompt put first on PATH."""
    ws = host.ws
    (ws / ".config").mkdir(exist_ok=True)
    (ws / ".config" / "mise.local.toml").write_text('[env]\n_.path = ["tools/lbin"]\n')
    (ws / "mise").mkdir()
    (ws / "mise" / "config.dev.toml").write_text('[env]\n_.path = ["tools/dbin"]\n')
    said = run(host, "mkdir -p tools/lbin tools/dbin && echo x > tools/lbin/git && "
                     "echo x > tools/dbin/git\n")  # fmt: skip
    assert not (ws / "tools" / "lbin" / "git").exists(), said
    assert not (ws / "tools" / "dbin" / "git").exists(), said


def test_cabal_msbuild_gradle_and_nuget_configs_are_held(host: Host) -> None:
    """r74b CABALLOCAL: `cabal.project.local` (git-ignored) naming `with-compiler:
    dist-newstyle/cache/ghc` landed, and HLS's `cabal exec -- ghc --print-libdir` ran it;
    MSBUILDHIDDEN: MSBuild's `obj/<proj>.nuget.g.props` and `<proj>.csproj.user`, imported at
    every project load; GRADLEDAEMONJVM: `gradle/gradle-daemon-jvm.properties`, the JVM
    Gradle downloads and runs; CONFIGEXT: NuGet.Config and phpunit.xml.dist at the top."""
    (host.ws / "app.cabal").write_text("name: app\n")
    (host.ws / "app.csproj").write_text("<Project/>\n")
    (host.ws / "gradle").mkdir()
    names = ("cabal.project.local", "dist-newstyle/cache/ghc", "obj/app.csproj.nuget.g.props",
             "app.csproj.user", "gradle/gradle-daemon-jvm.properties", "NuGet.Config",
             "phpunit.xml.dist")  # fmt: skip
    said = run(host, "".join(f"mkdir -p $(dirname {n}); echo x > {n}; " for n in names) + "\n")
    for name in names:
        assert not (host.ws / name).exists(), (name, said)


def test_mix_and_dotnet_build_trees_dune_clangd_and_opam_files_are_held(host: Host) -> None:
    """r75b MIXBUILD: a rebuilt .beam in Mix's `_build`, which ElixirLS's compile loaded;
    OBJASSETS: .NET's `obj/project.assets.json` naming the analyzers a C# language server
    loads; DUNEWORKSPACE: `dune-workspace` setting the compiler's PATH; CLANGDCDB:
    `build/compile_commands.json` naming a compiler clangd runs; OPAMLOCAL: a program in a
    local opam switch's `_opam/bin`, first on PATH at every prompt."""
    (host.ws / "mix.exs").write_text("defmodule X.MixProject do\nend\n")
    (host.ws / "_build" / "dev" / "lib" / "x" / "ebin").mkdir(parents=True)
    (host.ws / "_opam" / "bin").mkdir(parents=True)
    (host.ws / "app.csproj").write_text("<Project/>\n")
    names = ("_build/dev/lib/x/ebin/Elixir.X.beam", "obj/project.assets.json",
             "obj/Analyzer.dll", "dune-workspace", "build/compile_commands.json",
             "_opam/bin/ls")  # fmt: skip
    said = run(host, "".join(f"mkdir -p $(dirname {n}); echo x > {n} 2>/dev/null; "
                             for n in names) + "\n")  # fmt: skip
    for name in names:
        assert not (host.ws / name).exists(), (name, said)


def test_build_caches_setuptools_builds_beams_at_the_top_and_opam_switches_are_held(
    host: Host,
) -> None:
    """r76b TURBOCACHE: a planted turbo cache archive (`.turbo` was inert) was restored and
    run at `turbo run start`, `git status` clean; SETUPBUILD: a newer file planted in
    setuptools' build/lib was installed; BEAMCWD: `httpc.beam` at the top, which Erlang
    loads from the current directory before OTP's own, ran at `rebar3 compile`; OPAMLIB:
    a local opam switch's lib/ (findlib.conf, topfind)."""
    (host.ws / "package.json").write_text('{"name": "x"}\n')
    (host.ws / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (host.ws / "rebar.config").write_text("{erl_opts, []}.\n")
    (host.ws / "_opam" / "lib").mkdir(parents=True)
    names = (".turbo/cache/abc.tar.zst", ".next/server/x.js", "build/lib/pkg/__init__.py",
             "httpc.beam", "_opam/lib/findlib.conf")  # fmt: skip
    said = run(host, "".join(f"mkdir -p $(dirname {n}); echo x > {n} 2>/dev/null; "
                             for n in names) + "\n")  # fmt: skip
    for name in names:
        assert not (host.ws / name).exists(), (name, said)


def test_what_tools_load_by_their_path_with_nothing_to_read_is_held(host: Host) -> None:
    """r77b: PCHSHADOW (a `util.h.gch` GCC took in place of util.h), RUBYLSPADDON (an
    add-on ruby-lsp loads from git-ignored tmp/), MAKEDEP (`$(shell ...)` in a `.d` file a
    Makefile includes ran at `make -n`), SPHINXPICKLE (Sphinx's pickled environment ran at
    the next build), TFMIRROR (a provider in `terraform.d/plugins` ran at `terraform
    plan`), CHANGESETCFG (`.changeset/config.json` named a module `changeset add` loads),
    BOOTSNAPCACHE (bootsnap's compile cache, loaded in place of an unchanged source): each
    was applied without a hold. What is everyday work next to them still lands."""
    ignore_less(host)  # (what git ignores is held by its own rule: test_git_ignored)
    _write(host, {
        "Makefile": "DEPS := $(wildcard build/*.d)\napp: main.c\n\tcc -MMD -o app main.c\n"
        "-include $(DEPS)\n",
        "main.c": "#include \"util.h\"\nint main(void) { return 0; }\n",
        "util.h": "int f(void);\n",
        "build/main.d": "build/main.o: main.c util.h\nutil.h:\n",
        "docs/conf.py": "project = 'x'\n",
        "docs/_build/doctrees/environment.pickle": "old\n",
        ".changeset/config.json": '{"commit": false}\n',
        "main.tf": 'terraform {}\n',
    })  # fmt: skip
    held = {
        "util.h.gch": "x",
        "tmp/ruby_lsp/x/addon.rb": "File.write('/tmp/x', '')",
        "build/main.d": "build/main.o: main.c util.h\\n_x := $(shell touch x)",
        "build/other.d": "-include notes.txt",
        "docs/_build/doctrees/environment.pickle": "cos\\nsystem",
        "terraform.d/plugins/registry.terraform.io/h/null/3.2.0/linux_amd64/p": "x",
        ".changeset/config.json": '{"commit": ["./c.cjs", null]}',
    }
    said = run(host, "".join(f"mkdir -p $(dirname {n}); printf -- '{t}\\n' > {n} 2>/dev/null; "
                             for n, t in held.items()) + "\n")  # fmt: skip
    for name in held:
        assert (
            name == "build/main.d"
            or name.startswith(("docs/", ".changeset/"))
            or not (host.ws / name).exists()
        ), (name, said)
    assert "shell" not in (host.ws / "build/main.d").read_text(), said
    assert (host.ws / "docs/_build/doctrees/environment.pickle").read_text() == "old\n", said
    assert "c.cjs" not in (host.ws / ".changeset/config.json").read_text(), said
    # bootsnap's cache is never taken (bootsnap writes it again); everyday work lands:
    # a changeset entry, a rebuilt dependency file
    said = run(host, "mkdir -p tmp/cache/bootsnap/compile-cache-iseq/3a && "
               "echo x > tmp/cache/bootsnap/compile-cache-iseq/3a/b && "
               "echo '# fix' > .changeset/brave-cats.md && "
               "printf 'build/main.o: main.c util.h \\\\\\n  other.h\\nutil.h:\\n' "
               "> build/main.d\n")  # fmt: skip
    assert not (host.ws / "tmp/cache/bootsnap/compile-cache-iseq/3a/b").exists(), said
    assert (host.ws / ".changeset/brave-cats.md").exists(), said
    assert "other.h" in (host.ws / "build/main.d").read_text(), said


@pytest.mark.parametrize(
    ("files", "path", "text"),
    [
        # MAKEINCLUDE: configure's output, included by name
        ({"Makefile": "include ffbuild/config.mak\nall: ; true\n",
          "ffbuild/config.mak": "CC=cc\n"}, "ffbuild/config.mak", "_x := $(shell touch x)"),
        # MAKESUBDIR: a sibling's Makefile includes the dependency files through a variable
        ({"Makefile": "all: ; $(MAKE) -C src\n",
          "src/Makefile": "DEPS := $(wildcard ../build/*.d)\n-include $(DEPS)\n",
          "build/main.d": "build/main.o: main.c\n"}, "build/main.d", "_x := $(shell touch x)"),
        # CMAKEINSOURCE: `cmake .` made the root a build tree
        ({"CMakeLists.txt": "project(x C)\n", "CMakeCache.txt": "x\n",
          "CMakeFiles/app.dir/flags.make": "C_FLAGS = -O2\n"},
         "CMakeFiles/app.dir/flags.make", "_x := $(shell touch x)"),
        ({"CMakeLists.txt": "project(x C)\n", "CMakeCache.txt": "x\n",
          "build.ninja": "rule cc\n"}, "build.ninja", "build x: phony"),
        # GCMMODULE: a compiled module interface GCC takes as it is
        ({"util.cpp": "export module util;\n"}, "gcm.cache/util.gcm", "x"),
        # GOWORK: a workspace file whose replace directives every go command obeys
        ({"go.mod": "module x\n"}, "go.work", "use .\\nreplace a => ./bin/a"),
    ],
)  # fmt: skip
def test_what_make_cmake_compilers_and_go_load_unread_is_held(
    host: Host, files: dict[str, str], path: str, text: str
) -> None:
    """r78b: MAKEINCLUDE, MAKESUBDIR, CMAKEINSOURCE, GCMMODULE, GOWORK: each was applied
    without a hold, `git status` empty, and ran at `make -n`, `ninja`, `make test` or a go
    command."""
    _write(host, files)
    before = (host.ws / path).read_text() if (host.ws / path).exists() else None
    said = run(host, f"mkdir -p $(dirname {path}); printf -- '{text}\\n' >> {path}\n")
    now = (host.ws / path).read_text() if (host.ws / path).exists() else None
    assert now == before, (path, said)


def test_a_makefile_the_project_tracks_stays_everyday_work(host: Host) -> None:
    """What git tracks of what a Makefile includes is the project's, read in review: an edit
    of it lands, as an edit of the Makefile does."""
    _write(host, {"Makefile": "include common.mk\nall: ; true\n", "common.mk": "CC=cc\n"})
    host.git("init", "-q")
    host.git("add", "Makefile", "common.mk")
    said = run(host, "echo 'CFLAGS=-O2' >> common.mk; echo 'x: ; true' >> Makefile\n")
    assert "CFLAGS" in (host.ws / "common.mk").read_text(), said


@pytest.mark.parametrize(
    ("files", "path", "text"),
    [
        # REBARCHECKOUTS: rebar3 compiles _checkouts/<app> in place of the locked dependency
        ({"rebar.config": "{deps, [mydep]}.\n"}, "_checkouts/mydep/rebar.config.script",
         "os:cmd(x), CONFIG."),
        # MAKEVARINC: an include through a variable, named as make's own files are
        ({"Makefile": "B := build\n-include $(B)/config.mk\nall: ; true\n",
          "build/config.mk": "CC=cc\n"}, "build/config.mk", "_x := $(shell touch x)"),
        # MAKENESTED: what an included makefile includes
        ({"Makefile": "include mk/rules.mk\n", "mk/rules.mk": "-include config.local.mk\n"},
         "config.local.mk", "_x := $(shell touch x)"),
        # AUTOTOOLSINSOURCE: configure's generated Makefile, in the source tree
        ({"configure.ac": "AC_INIT\n", "config.status": "#!/bin/sh\n", "Makefile": "all:\n"},
         "Makefile", "_x := $(shell touch x)"),
        # CMAKESUBDIR: an in-source build's CMakeFiles below the top
        ({"CMakeLists.txt": "project(x C)\n", "CMakeCache.txt": "x\n",
          "src/CMakeFiles/u.dir/flags.make": "C_FLAGS = -O2\n"},
         "src/CMakeFiles/u.dir/flags.make", "_x := $(shell touch x)"),
        # HSIFACE: GHC's interface file
        ({"Util.hs": "module Util where\n", "Util.hi": "x"}, "Util.hi", "y"),
        # RUBYLSPLINK: a link named ruby_lsp leads the add-on search elsewhere
        ({"Gemfile": "source 'x'\n"}, "tmp/ruby_lsp", None),
        # RUSHCACHE, GATSBYCACHE, WAFCACHE: build caches a tool restores and runs
        ({"rush.json": "{}\n", "common/temp/build-cache/a.tar.gz": "x"},
         "common/temp/build-cache/a.tar.gz", "y"),
        ({"gatsby-config.js": "1\n", ".cache/page-ssr/index.js": "1\n"},
         ".cache/page-ssr/index.js", "require(x)"),
        ({"wscript": "1\n", "build/c4che/_cache.py": "X = 1\n"}, "build/c4che/_cache.py",
         "import os"),
        # MAKESHADOW: a new GNUmakefile takes over from the Makefile
        ({"Makefile": "all: ; true\n"}, "GNUmakefile", "all: ; touch x"),
    ],
)  # fmt: skip
def test_what_rebar3_make_ghc_and_build_caches_reuse_is_held(
    host: Host, files: dict[str, str], path: str, text: str | None
) -> None:
    """r79b: each was applied without a hold (`git status` empty but for MAKESHADOW) and ran
    at `rebar3 compile`, `make -n`, `ghc --make`, a cache restore or an editor's start."""
    _write(host, files)
    before = (host.ws / path).read_text() if (host.ws / path).exists() else None
    if text is None:  # (a link)
        said = run(host, f"mkdir -p elsewhere $(dirname {path}); ln -s ../elsewhere {path}\n")
        assert not (host.ws / path).is_symlink(), said
        return
    said = run(host, f"mkdir -p $(dirname {path}); printf -- '{text}\\n' >> {path}\n")
    now = (host.ws / path).read_text() if (host.ws / path).exists() else None
    assert now == before, (path, said)


def test_deleting_a_build_trees_mark_is_held(host: Host) -> None:
    """r79b MARKDELETE: `rm CMakeCache.txt` was applied; the next run's plant in CMakeFiles
    then landed, the directory no longer a build tree."""
    _write(host, {"CMakeLists.txt": "project(x C)\n", "CMakeCache.txt": "x\n",
                  "CMakeFiles/app.dir/flags.make": "C_FLAGS = -O2\n"})  # fmt: skip
    said = run(host, "rm CMakeCache.txt\n")
    assert (host.ws / "CMakeCache.txt").exists(), said


@pytest.mark.parametrize(
    ("files", "path", "text"),
    [
        # MAKEVARSUFFIX: an include through a variable the Makefile sets itself
        ({"Makefile": "B := build\n-include $(B)/config.inc\n", "build/config.inc": "X=1\n"},
         "build/config.inc", "_x := $(shell touch x)"),
        # MAKECONT: an include line continued
        ({"Makefile": "-include config.mk \\\n  local.mk\nall: ; true\n"}, "local.mk",
         "_x := $(shell touch x)"),
        # MAKEFOPT, MAKEDEEP: makefiles a recipe runs with -f or -C
        ({"Makefile": "all: ; $(MAKE) -f build.mk\n", "build.mk": "-include out/o.mk\n"},
         "out/o.mk", "_x := $(shell touch x)"),
        ({"Makefile": "all: ; $(MAKE) -C a/b/c/d\n", "a/b/c/d/Makefile": "-include l.mk\n"},
         "a/b/c/d/l.mk", "_x := $(shell touch x)"),
        # AUTOTOOLSVPATH: an out-of-tree configure build
        ({"configure.ac": "AC_INIT\n", "build/config.status": "#!/bin/sh\n",
          "build/Makefile": "all:\n"}, "build/Makefile", "_x := $(shell touch x)"),
        # NINJAINSOURCE: a generated build.ninja git does not track
        ({"configure.py": "1\n", "build.ninja": "rule cc\n"}, "build.ninja", "build x: phony"),
        # CONFIGHINSOURCE, AMREGEN: what an in-source build made of its templates
        ({"CMakeLists.txt": "project(x C)\n", "CMakeCache.txt": "x\n", "config.h": "#define A\n"},
         "config.h", "__attribute__((constructor)) void x(void) {}"),
        ({"configure.ac": "AC_INIT\n", "config.status": "#!/bin/sh\n", "configure": "#!/bin/sh\n"},
         "configure", "touch x"),
        # LOWERMAKESHADOW: a GNUmakefile beside a lowercase makefile
        ({"makefile": "all: ; true\n"}, "GNUmakefile", "all: ; touch x"),
    ],
)  # fmt: skip
def test_what_make_reads_through_variables_recipes_and_generators_is_held(
    host: Host, files: dict[str, str], path: str, text: str
) -> None:
    """r80b: each was applied without a hold (`git status` empty but for the GNUmakefile)
    and ran at `make -n`, `ninja` or the next build."""
    _write(host, files)
    before = (host.ws / path).read_text() if (host.ws / path).exists() else None
    said = run(host, f"mkdir -p $(dirname {path}); printf -- '{text}\\n' >> {path}\n")
    now = (host.ws / path).read_text() if (host.ws / path).exists() else None
    assert now == before, (path, said)
