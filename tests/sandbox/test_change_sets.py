"""Change sets: a sandboxed command's writes reach the workspace only through the check.

Each test runs real bwrap and looks at the host: while the command still runs (nothing of its
writes may be there yet) and afterwards (what passed is applied, what was refused is held and
never appears). The five ways an outside review broke the old post-run sweep each have a test.
Also: what an apply carries to the host (whole trees, modes, no ACLs or capabilities), what a
review shows before it, and undo.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import give_to_test_user, user_prefix
from .sandbox_support import DONE, q, run, run_wrapped

if TYPE_CHECKING:
    from .conftest import Host


def held_ids(host: Host) -> list[str]:
    out = host.corral("changes").stdout
    return [line.split(":")[0] for line in out.splitlines() if ": held" in line and line[0] != " "]


def take_history(host: Host) -> None:
    """Apply the git history each held change set holds, as a user does once `git log`
    showed it (sandbox.git_history = "hold" holds every new commit)."""
    for change_id in held_ids(host):
        done = host.corral("apply", change_id, ".git")
        assert done.returncode == 0, done.stdout + done.stderr


def stage_root(host: Host) -> Path:
    return host.home / ".local" / "state" / "corral" / "changes"


def test_writes_are_applied_after_the_run_with_the_exit_status(host: Host) -> None:
    body = (
        "echo new > added.txt\n"
        "echo more >> README.md\n"
        "rm movable.txt\n"
        "mkdir -p gen/out && echo o > gen/out/x\n"
        "mv sub sub2\n"  # a directory of the lower layer: overlayfs says EXDEV, mv copies
        "chmod 755 added.txt\n"
        "exit 7\n"
    )
    done = host.corral("run", "--", "sh", "-c", body)
    assert done.returncode == 7, done.stderr
    ws = host.ws
    assert (ws / "added.txt").read_text() == "new\n"
    assert (ws / "added.txt").stat().st_mode & 0o777 == 0o755
    assert (ws / "README.md").read_text() == "# app\nmore\n"
    assert not (ws / "movable.txt").exists()
    assert (ws / "gen" / "out" / "x").read_text() == "o\n"
    assert (ws / "sub2" / "keep.txt").read_text() == "sub\n" and not (ws / "sub").exists()
    # nothing held: only what was applied, and how to undo it
    assert done.stderr == "corral: applied 6 added, 1 modified, 2 deleted (undo: corral undo)\n"
    assert held_ids(host) == []
    assert sorted(os.listdir(stage_root(host))) in ([], [".lock"])  # no staging area left


class Background:
    """A sandboxed script that waits, after its `body`, until the test says go. The signal is
    a file beside the test's layout in /var/tmp: read-only in the sandbox, but not an overlay,
    so the sandbox sees the host create it."""

    def __init__(self, host: Host, body: str) -> None:
        self.go = Path(str(host.base) + "-go")
        give_to_test_user(host.base)
        wait = f"while [ ! -e {q(self.go)} ]; do sleep 0.05; done"
        self.proc = subprocess.Popen(
            [*user_prefix(), sys.executable, "-m", "corral", "run", "--", "sh", "-c",
             f"{host.vars()}\ncd \"$WS\"\n{body}\n{wait}\necho {DONE}"],
            cwd=str(host.ws), env=host.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        time.sleep(1.5)  # the body has long run by now
        assert self.proc.poll() is None, self.proc.communicate()

    def finish(self) -> tuple[str, str]:
        self.go.touch()
        try:
            out, err = self.proc.communicate(timeout=60)
        finally:
            self.go.unlink()
        assert self.proc.returncode == 0 and DONE in out, err
        return out, err


def test_while_the_command_runs_the_host_sees_none_of_its_writes(host: Host) -> None:
    # Review finding 1: host git (gitsigns, prompts) read a new .git/commondir during the run.
    run = Background(
        host, "echo ../../elsewhere > .git/commondir\necho during > during.txt\necho x > .nvim.lua"
    )
    try:
        assert not (host.ws / ".git" / "commondir").exists()
        assert not (host.ws / "during.txt").exists()
        assert not (host.ws / ".nvim.lua").exists()
        assert host.git("status", "--porcelain") == ""
    finally:
        _, err = run.finish()
    assert (host.ws / "during.txt").read_text() == "during\n"
    assert not (host.ws / ".git" / "commondir").exists()
    assert not (host.ws / ".nvim.lua").exists()
    assert "held" in err and ".nvim.lua" in err and "commondir" in err


def test_a_read_only_directory_cannot_keep_a_planted_file_in_place(host: Host) -> None:
    # Review finding 2: as a normal user, `chmod a-w .git .` made the sweep unable to delete.
    done = host.sh(
        host.vars() + '\ncd "$WS"\n'
        "echo ../x > .git/commondir\n"
        "echo 'vim.fn.system(\"touch pwned\")' > .nvim.lua\n"
        "chmod a-w .git .\n"
    )
    assert DONE in done.stdout, done.stderr
    assert not (host.ws / ".git" / "commondir").exists()
    assert not (host.ws / ".nvim.lua").exists()


def test_nothing_outside_is_deleted_through_a_planted_symlink(host: Host) -> None:
    # Review finding 3: the sweep rmtree'd through a symlinked parent the sandbox planted.
    canaries = host.outside / "canaries"
    for i in range(9):
        (canaries / f"c{i}").mkdir(parents=True)
        (canaries / f"c{i}" / ".nvim.lua").write_text("the user's own\n")
    give_to_test_user(host.base)
    done = host.sh(
        host.vars() + '\ncd "$WS"\n'
        'rm -rf sub && ln -s "$OUT/canaries/c0" sub\n'
        'mkdir -p deep && ln -s "$OUT/canaries" deep/link\n'
        'ln -s "$OUT" .envrc\n'
        'ln -s "$H/.config" home-link\n'
    )
    assert DONE in done.stdout, done.stderr
    for i in range(9):
        assert (canaries / f"c{i}" / ".nvim.lua").read_text() == "the user's own\n"
    # Links to what the sandbox can see anyway are applied; one at a protected name is not,
    # nor one into the hidden home.
    assert not os.path.lexists(host.ws / ".envrc")
    assert not os.path.lexists(host.ws / "home-link")
    assert "home-link: a symlink to" in done.stderr, done.stderr


def test_a_very_deep_tree_is_checked_without_crashing(host: Host) -> None:
    # Review finding 4: a 1500-level directory crashed the sweep with RecursionError.
    done = host.sh(
        host.vars() + '\ncd "$WS"\n'
        "i=0; while [ $i -lt 1500 ]; do mkdir d && cd d || exit 9; i=$((i+1)); done\n"
        "echo bottom > file.txt\n"
        "echo x > .nvim.lua\n",
        timeout=180,
    )
    assert DONE in done.stdout, done.stderr
    assert done.returncode == 0, done.stderr
    deep = host.ws.joinpath(*["d"] * 1500)
    assert (deep / "file.txt").read_text() == "bottom\n"
    assert not (deep / ".nvim.lua").exists()
    assert "held" in done.stderr
    (change_id,) = held_ids(host)
    assert host.corral("discard", change_id).returncode == 0  # as deep, no RecursionError
    subprocess.run(["rm", "-rf", str(host.ws / "d")], check=True)  # shutil would recurse


def test_a_repository_made_inside_is_held(host: Host) -> None:
    # Review finding 5: a repository created inside the sandbox brought config git obeys.
    canary = host.outside / "fsmonitor-ran"
    done = host.sh(
        host.vars() + '\ncd "$WS"\n'
        "mkdir -p vendor/lib && cd vendor/lib && git init -q . 2>/dev/null || mkdir -p .git\n"
        f"printf '[core]\\n\\tfsmonitor = touch {canary}\\n' >> .git/config\n"
        "echo code > main.c\n"
    )
    assert DONE in done.stdout, done.stderr
    assert not (host.ws / "vendor" / "lib" / ".git").exists()
    assert (host.ws / "vendor" / "lib" / "main.c").read_text() == "code\n"
    host.git("status", "--porcelain")
    host.git("-C", "vendor/lib", "status", check=False)
    assert not canary.exists()
    assert "new repository" in done.stderr


def test_a_conflicting_host_edit_is_kept(host: Host) -> None:
    run = Background(host, "echo sandbox > README.md\necho sandbox > other.txt")
    try:
        (host.ws / "README.md").write_text("edited on the host meanwhile\n")
    finally:
        _, err = run.finish()
    assert (host.ws / "README.md").read_text() == "edited on the host meanwhile\n"
    assert (host.ws / "other.txt").read_text() == "sandbox\n"
    assert "changed on the host while the command ran" in err


def test_undo_puts_the_workspace_back(host: Host) -> None:
    before = (host.ws / "README.md").read_text()
    done = host.sh(
        host.vars() + '\ncd "$WS"\necho changed > README.md\nrm -r sub\necho n > new.txt\n'
    )
    assert DONE in done.stdout, done.stderr
    assert not (host.ws / "sub").exists()
    # (r58c CHECKSILENT: what a run applied, and how to take it back, said after it)
    said = "corral: applied 1 added, 1 modified, 1 deleted (undo: corral undo)\n"
    assert done.stderr == said, done.stderr
    # (r52c UNDOLIST: what undo can take back, with the command, the time and the paths)
    listed = host.corral("undo", "--list").stdout.splitlines()
    assert host.corral("undo", "list").stdout.splitlines() == listed  # (Neovim's spelling)
    assert listed[0].startswith(f"applied change sets in {host.ws}, newest first"), listed
    assert re.match(r"  \S+, from `sh -c .*` at \d\d:\d\d: 1 added, 1 modified, 1 deleted: ",
                    listed[1]), listed  # fmt: skip
    assert "README.md" in listed[1] and "new.txt" in listed[1], listed
    undo = host.corral("undo")
    assert undo.returncode == 0, undo.stderr
    # (r58c UNDOID: it said "undid" a journal entry's name, which the list never showed)
    assert undo.stdout.splitlines()[-1] == f"undid {listed[1].split()[0].rstrip(',')}", undo
    assert (host.ws / "README.md").read_text() == before
    assert (host.ws / "sub" / "keep.txt").read_text() == "sub\n"
    assert not (host.ws / "new.txt").exists()
    assert host.git("status", "--porcelain") == ""
    assert "nothing to undo" in host.corral("undo").stdout
    assert "nothing to undo" in host.corral("undo", "--list").stdout
    # r90t UNDOUNKNOWNID: an unknown id was "nothing to undo", exit 0, with an empty journal
    unknown = host.corral("undo", "nosuchid")
    assert unknown.returncode == 125 and "no applied change set nosuchid" in unknown.stderr, unknown


def test_undo_refuses_when_the_file_changed_since(host: Host) -> None:
    host.sh(host.vars() + '\ncd "$WS"\necho changed > README.md\n')
    (host.ws / "README.md").write_text("the user's later edit\n")
    undo = host.corral("undo")
    assert undo.returncode == 1
    assert "changed since the command wrote it" in undo.stderr
    assert (host.ws / "README.md").read_text() == "the user's later edit\n"


def test_a_commit_is_undone_after_git_status_refreshed_the_index(host: Host) -> None:
    """r51c UNDOGITINDEX: `git status` on the host rewrites .git/index with the stat data it
    caches, and undo refused ("changed since the command wrote it"). The same entries are
    no change; a file you staged since is one."""
    head = host.git("rev-parse", "HEAD").strip()
    ident = "git -c user.name=a -c user.email=a@x"
    config = host.home / ".config" / "corral" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[sandbox]\ngit_history = "check"\n')  # (commits land at once)
    host.sh(host.vars() + f'\ncd "$WS"\necho n > n.txt; git add n.txt; {ident} commit -qm n\n')
    assert host.git("rev-parse", "HEAD").strip() != head
    host.git("status", "--porcelain")
    undo = host.corral("undo")
    assert undo.returncode == 0, undo.stderr
    assert host.git("rev-parse", "HEAD").strip() == head and not (host.ws / "n.txt").exists()
    host.sh(host.vars() + f'\ncd "$WS"\necho m > m.txt; git add m.txt; {ident} commit -qm m\n')
    (host.ws / "mine.txt").write_text("mine\n")
    host.git("add", "mine.txt")
    undo = host.corral("undo")
    assert undo.returncode == 1 and ".git/index: changed since" in undo.stderr, undo.stderr


def test_review_mode_holds_everything_until_applied(host: Host) -> None:
    config = host.home / ".config" / "corral" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[sandbox]\nwrites = "review"\n')
    done = host.sh(host.vars() + '\ncd "$WS"\necho r > reviewed.txt\necho x > .nvim.lua\n')
    assert DONE in done.stdout, done.stderr
    assert not (host.ws / "reviewed.txt").exists()
    (change_id,) = held_ids(host)
    shown = host.corral("changes", change_id).stdout
    assert "reviewed.txt: passes the check" in shown
    assert ".nvim.lua: held" in shown
    applied = host.corral("apply", change_id)
    assert applied.returncode == 0, applied.stderr
    assert (host.ws / "reviewed.txt").read_text() == "r\n"
    assert not (host.ws / ".nvim.lua").exists()  # refused stays held unless named
    assert held_ids(host) == [change_id]
    assert host.corral("discard", change_id).returncode == 0
    assert held_ids(host) == []


def test_a_named_refused_path_is_applied_when_the_user_says_so(host: Host) -> None:
    done = host.sh(host.vars() + '\ncd "$WS"\necho "-- mine" > .nvim.lua\n')
    (change_id,) = held_ids(host)
    assert DONE in done.stdout
    # (r58c CHANGESHINT: the details ended with `corral apply ID [PATH...]`, where the run's
    # own line named the path)
    shown = host.corral("changes", change_id).stdout.splitlines()
    assert shown[-1].startswith(f"apply: corral apply {change_id} {host.ws}/.nvim.lua "), shown
    applied = host.corral("apply", change_id, ".nvim.lua")
    assert applied.returncode == 0, applied.stderr
    assert (host.ws / ".nvim.lua").read_text() == "-- mine\n"


def test_undo_names_a_part_applied_later_apart(host: Host) -> None:
    """r89 UNDODUPID: a run's change set and its held file applied later were listed under
    one id, and `corral undo ID` said "undid ID" for either."""
    done = host.sh(host.vars() + '\ncd "$WS"\necho n > notes.txt\necho "-- mine" > .nvim.lua\n')
    assert DONE in done.stdout, done.stderr
    (change_id,) = held_ids(host)
    assert host.corral("apply", change_id, ".nvim.lua").returncode == 0
    listed = [ln.split()[0].rstrip(",") for ln in host.corral("undo", "--list").stdout.splitlines()]
    assert listed[1:] == [f"{change_id}.1", change_id], listed
    # the run's part waits for the part applied after it, and says how to undo that
    early = host.corral("undo", change_id)
    assert early.returncode != 0 and f"corral undo {change_id}.1" in early.stderr, early
    assert (host.ws / ".nvim.lua").exists() and (host.ws / "notes.txt").exists()
    later = host.corral("undo", f"{change_id}.1")
    assert later.stdout.splitlines()[-1] == f"undid {change_id}.1", later.stdout + later.stderr
    assert not (host.ws / ".nvim.lua").exists() and (host.ws / "notes.txt").exists()
    first = host.corral("undo", change_id)
    assert first.stdout.splitlines()[-1] == f"undid {change_id}", first.stdout + first.stderr
    assert not (host.ws / "notes.txt").exists()


def test_a_later_run_names_what_earlier_runs_there_left_held(host: Host) -> None:
    """A held file is in no later run's workspace: a script importing a held module failed
    with `ModuleNotFoundError` and nothing said why (r48c). Each run names the held change
    sets of its workspace, newest last; an applied one is no longer named."""
    host.sh(host.vars() + '\ncd "$WS"\necho "-- mine" > .nvim.lua\necho "# later" > .envrc\n')
    (change_id,) = held_ids(host)
    done = host.corral("run", "--", "sh", "-c", "test -e .nvim.lua || echo missing")
    assert done.stdout == "missing\n"
    said = (
        "corral: not in the workspace, held from an earlier run: .envrc, .nvim.lua "
        f"(corral changes {change_id})"
    )
    assert said in done.stderr.splitlines(), done.stderr
    assert f"  held: {said.removeprefix('corral: ')}" in host.corral("status").stdout
    elsewhere = host.base / "elsewhere"
    elsewhere.mkdir()
    other = host.corral("run", "--", "true", cwd=elsewhere)
    assert "earlier run" not in other.stderr, other.stderr  # (another workspace's)
    assert host.corral("apply", change_id, ".nvim.lua", ".envrc").returncode == 0
    assert "earlier run" not in host.corral("run", "--", "true").stderr


@pytest.mark.as_root  # as nobody, this machine's test Python (under /root) cannot be run
def test_an_argv_started_by_another_program_runs_the_check_itself(host: Host) -> None:
    # jobstart, a script: the wrapped argv ends with the check, no callback needed.
    done = run_wrapped(host, "echo w > wrapped.txt; echo x > .envrc; exit 5")
    assert done.returncode == 5, done.stderr
    assert (host.ws / "wrapped.txt").read_text() == "w\n"
    assert not os.path.lexists(host.ws / ".envrc")
    assert "held" in done.stderr and ".envrc" in done.stderr


def test_an_empty_change_set_leaves_nothing_behind(host: Host) -> None:
    argv = json.loads(host.corral("wrap", "--", "true").stdout)
    give_to_test_user(host.base)
    done = subprocess.run([*user_prefix(), *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    host.corral("changes")  # collects what ended empty
    assert sorted(os.listdir(stage_root(host))) in ([], [".lock"])


def test_an_interrupted_command_is_held_not_applied(host: Host) -> None:
    done = host.corral(
        "run", "--timeout", "2", "--", "sh", "-c", "echo partial > half.txt; sleep 30"
    )
    assert done.returncode == 124
    assert not (host.ws / "half.txt").exists()
    (change_id,) = held_ids(host)
    assert "did not finish" in host.corral("changes").stdout
    assert host.corral("apply", change_id).returncode == 0
    assert (host.ws / "half.txt").read_text() == "partial\n"


@pytest.mark.parametrize("writes", ["apply", "direct"])
def test_setuid_bits_do_not_reach_the_host(host: Host, writes: str) -> None:
    """r64b SUIDDIRECT: with direct writes a `chmod 4755` landed as it was (a setuid-root
    program any local user ran as root, with corral run as root)."""
    done = host.sh(
        host.vars() + '\ncd "$WS"\necho x > tool && { chmod 4755 tool; chmod 755 tool; }\n'
        "cp -p /bin/true t2 && { chmod u+s,g+s t2 || :; }\n",
        None, "--writes", writes,
    )  # fmt: skip
    assert DONE in done.stdout, done.stderr
    assert (host.ws / "tool").stat().st_mode & 0o7777 == 0o755
    assert (host.ws / "t2").stat().st_mode & 0o6000 == 0, oct((host.ws / "t2").stat().st_mode)
    # (r66c EXPLAINWRONG: the filter's EPERM was told as a hidden or protected path)
    assert "the sandbox refused a setuid or setgid mode" in done.stderr, done.stderr


def test_a_new_tree_is_moved_whole_checked_and_undone_file_by_file(host: Host) -> None:
    # A new directory with nothing held below goes over in one rename (an npm install); one
    # with a held entry below goes file by file, and the held entry stays behind.
    body = (
        'cd "$WS"\nmkdir -p tree/a/b mixed/c\n'
        "for i in 1 2 3; do echo $i > tree/a/b/f$i; echo $i > mixed/c/f$i; done\n"
        "echo x > tree/a/run.sh && chmod 4777 tree/a/run.sh\n"
        "echo x > mixed/.envrc\n"
    )
    done = host.sh(host.vars() + "\n" + body)
    assert DONE in done.stdout, done.stderr
    assert (host.ws / "tree" / "a" / "b" / "f3").read_text() == "3\n"
    mode = (host.ws / "tree" / "a" / "run.sh").stat().st_mode & 0o7777
    assert mode & 0o6002 == 0, oct(mode)  # cleaned before the move: no setuid, no o+w
    assert (host.ws / "mixed" / "c" / "f2").read_text() == "2\n"
    assert not (host.ws / "mixed" / ".envrc").exists()
    assert "held" in done.stderr and ".envrc" in done.stderr
    undo = host.corral("undo")
    assert undo.returncode == 0, undo.stderr
    assert not (host.ws / "tree").exists()
    assert not (host.ws / "mixed").exists()
    assert host.git("status", "--porcelain") == ""


def test_a_directory_the_command_left_unwritable_does_not_block_its_change_set(
    host: Host,
) -> None:
    """L1: `chmod 555 zz` after writing zz/new.txt (Go's module cache does it): as a user,
    the rename out of the staged zz failed, and the whole change set could never be applied,
    its other writes held with it."""
    (host.ws / "zz").mkdir()
    body = "echo new > zz/new.txt; chmod 555 zz; echo b > b.txt\n"
    done = host.sh(host.vars() + '\ncd "$WS"\n' + body)
    assert DONE in done.stdout, done.stderr
    assert (host.ws / "zz" / "new.txt").read_text() == "new\n"
    assert (host.ws / "b.txt").read_text() == "b\n"
    assert held_ids(host) == []


def fsmonitor_config(canary: str) -> str:
    lines = ["[core]", "repositoryformatversion = 0", "worktree = ..",
             f'fsmonitor = \\"touch {canary}; false\\"']  # fmt: skip
    return "printf '%s\\n' " + " ".join(f'"{line}"' for line in lines)


@pytest.mark.sandbox
@pytest.mark.parametrize(
    "body",
    [
        # Second review, F1: objects and refs as links to the workspace's own repository
        "mkdir src && echo 'ref: refs/heads/main' > src/HEAD && "
        "ln -s ../.git/objects src/objects && ln -s ../.git/refs src/refs && {config} > src/config",
        # Second review, F1: a commondir standing for objects and refs
        "mkdir src && echo 'ref: refs/heads/main' > src/HEAD && echo ../.git > src/commondir && "
        "{config} > src/config",
    ],
    ids=["linked-objects-and-refs", "commondir"],
)
def test_a_directory_made_a_repository_by_links_is_held(host: Host, body: str) -> None:
    canary = host.base / "canary-repository"
    held = run(host, body.format(config=fsmonitor_config(str(canary))))
    assert "held" in held and "repository" in held, held
    if (host.ws / "src").is_dir():
        host.git("status", cwd=host.ws / "src", check=False)
    assert not canary.exists(), "host git ran the sandbox's fsmonitor"
    assert not (host.ws / "src" / "HEAD").exists()


@pytest.mark.sandbox
def test_a_repository_assembled_over_two_runs_is_held(host: Host) -> None:
    canary = host.base / "canary-two-runs"
    first = run(host, "mkdir -p lib/refs/heads && echo x > lib/refs/heads/keep")
    assert "held" not in first, first
    assert (host.ws / "lib" / "refs").is_dir()
    second = run(
        host,
        "echo 'ref: refs/heads/main' > lib/HEAD && mkdir lib/objects && "
        f"{fsmonitor_config(str(canary))} > lib/config",
    )
    assert "held" in second, second
    host.git("status", cwd=host.ws / "lib", check=False)
    assert not canary.exists(), "host git ran the sandbox's fsmonitor"
    assert not (host.ws / "lib" / "HEAD").exists()


@pytest.mark.sandbox
def test_a_held_change_set_is_checked_against_what_is_protected_now(host: Host) -> None:
    # Third review, N5: held for review, then the user writes an .envrc that sources the held file.
    held = run(host, "echo 'touch /tmp/x' > .envrc.local", "--writes", "review")
    assert "held" in held
    listed = host.corral("changes").stdout
    change_id = next(line.split(":")[0] for line in listed.splitlines() if ": held" in line)
    # (which run made it, and when: r51c STALEHINT, six sets were six ids and reasons)
    assert re.search(r": held in .*, from `sh -c .*` at \d\d:\d\d$", listed, re.M), listed
    (host.ws / ".envrc").write_text("source_env_if_exists .envrc.local\n")
    shown = host.corral("changes", change_id).stdout
    assert re.match(r".*\(workspace .*, from `sh -c .*` at \d\d:\d\d\)$", shown, re.M), shown
    assert ".envrc.local: held" in shown, shown
    applied = host.corral("apply", change_id)
    # (nothing applied says so and fails: "applied 0 added" with status 0 read as done, r46c)
    assert applied.returncode == 1 and "nothing applied" in applied.stderr, applied.stderr
    # (r68c APPLYALL: `apply ID .` takes all of them, and nothing said so)
    assert f"corral apply {change_id} . takes all of them" in applied.stderr, applied.stderr
    assert not (host.ws / ".envrc.local").exists()


@pytest.mark.sandbox
def test_undo_does_not_write_through_a_link_made_since(host: Host) -> None:
    # Third review, N6: a change set replaced a/b/job; a later direct-writes run made a/b a link
    # elsewhere.
    (host.ws / "a" / "b").mkdir(parents=True)
    (host.ws / "a" / "b" / "job").write_text("the user's\n")
    host.git("add", "-A")
    host.git("commit", "-qm", "job")
    run(host, "echo changed > a/b/job")
    elsewhere = host.outside / "cron"
    elsewhere.mkdir()
    run(host, f"rm -r a/b && ln -s {q(elsewhere)} a/b", "--writes", "direct")
    undo = host.corral("undo")
    assert undo.returncode != 0
    assert "symlink now" in undo.stderr + undo.stdout
    assert list(elsewhere.iterdir()) == [], "undo restored a file through the link"


@pytest.mark.sandbox
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


@pytest.mark.sandbox
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


@pytest.mark.sandbox
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


@pytest.mark.sandbox
def test_nothing_is_applied_or_undone_while_a_command_writes_directly(host: Host) -> None:
    """r12c F2, F3: a command with direct writes in the same workspace swapped a directory
    for a link between corral's check and its renames: an apply (and an undo) wrote and
    deleted outside the roots. While such a command runs, both wait."""
    import signal

    from corral.changes.stage import direct_writers

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


@pytest.mark.sandbox
def test_a_replaced_directory_shows_and_counts_what_it_deletes(host: Host) -> None:
    """r11c D1: `rm -rf docs; mkdir docs; echo > docs/README.txt` showed and counted one file
    added; applying it (reviewed: "1 added, 0 deleted") took the host's whole docs/ away."""
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


@pytest.mark.sandbox
def test_showing_a_change_set_is_bounded_however_many_paths_and_lines_it_holds(
    host: Host,
) -> None:
    """r37c DIFFFLOOD: 200,000 files below a refused `sub/.git` and one file of 262,144
    newlines printed 462,154 lines (a 5.8 s freeze of the editor's `:Sandbox changes`): the
    diff budget was looked at only between files, and every path got a line."""
    host.corral("run", "--writes", "review", "--", "sh", "-c",
                "mkdir -p sub/.git; for i in $(seq 1 3000); do : > sub/.git/f$i; done; "
                "for i in $(seq 1 30); do mkdir d$i; : > d$i/.pdbrc; done; "
                "head -c 262144 /dev/zero | tr '\\0' '\\n' > nl.txt", cwd=host.ws)  # fmt: skip
    (change_id,) = held_ids(host)
    shown = host.corral("changes", change_id, "--diff").stdout.splitlines()
    assert len(shown) < 3500, len(shown)
    assert any("more paths not listed" in line and "held" in line for line in shown)
    assert any("(diffs cut after" in line for line in shown)
    listing = host.corral("changes").stdout.splitlines()
    assert len(listing) < 100 and any("more held" in line for line in listing), len(listing)


@pytest.mark.sandbox
def test_applying_a_held_path_names_it_and_never_undoes_a_later_change_unasked(
    host: Host,
) -> None:
    """r39c: the hint said `corral apply ID [PATH...]`, and `corral apply ID` left a refused
    path held ("applied 0"); a typo in a PATH applied nothing and said so as success; and a
    held pyproject.toml applied by name after the host changed it (the user, or another
    change set) silently undid that change."""
    (host.ws / "pyproject.toml").write_text('[project]\nname = "x"\n')
    done = host.corral("run", "--", "sh", "-c",
                       "printf '[tool.mypy]\\nstrict = true\\n' >> pyproject.toml",
                       cwd=host.ws)  # fmt: skip
    (change_id,) = held_ids(host)
    assert f"corral apply {change_id} {host.ws / 'pyproject.toml'}" in done.stderr, done.stderr
    typo = host.corral("apply", change_id, "pyprojct.toml")
    assert typo.returncode != 0 and "is not in change set" in typo.stderr, typo
    (host.ws / "pyproject.toml").write_text('[project]\nname = "mine"\n')  # the user's edit
    # r51c STALEHINT: the bare apply suggested `apply ID pyproject.toml`, then refused it as
    # changed since; it says so now, and suggests --overwrite
    bare = host.corral("apply", change_id)
    assert bare.returncode == 1 and "changed on the host since" in bare.stderr, bare.stderr
    hint = f"corral apply {change_id} --overwrite {host.ws / 'pyproject.toml'}"
    assert hint in bare.stderr, bare.stderr
    named = host.corral("apply", change_id, "pyproject.toml")
    assert "--overwrite" in named.stdout + named.stderr, named
    assert 'name = "mine"' in (host.ws / "pyproject.toml").read_text()
    host.corral("apply", change_id, "--overwrite", "pyproject.toml")
    assert "[tool.mypy]" in (host.ws / "pyproject.toml").read_text()
    assert held_ids(host) == []


@pytest.mark.sandbox
def test_a_second_held_edit_of_a_file_is_merged_into_the_first_once_that_is_applied(
    host: Host,
) -> None:
    """r68c HELDSTACK: an agent edits a config twice before the user reviews the first
    edit; the second command saw the file without the first edit, so applying it undid
    that edit or was refused, and `--overwrite` lost the first edit. The second change is
    now merged into the host's copy where the two do not meet, and refused where they do."""
    config = host.ws / "config.yaml"
    config.write_text("name: shop\nlow_stock: 5\ncurrency: EUR\n")
    host.corral("run", "--", "sed", "-i", "s/low_stock: 5/low_stock: 10/", "config.yaml",
                cwd=host.ws)  # fmt: skip
    (first,) = held_ids(host)
    host.corral("run", "--", "sh", "-c", "echo 'reorder: true' >> config.yaml", cwd=host.ws)
    (second,) = set(held_ids(host)) - {first}
    host.corral("run", "--", "sed", "-i", "s/low_stock: 5/low_stock: 7/", "config.yaml",
                cwd=host.ws)  # fmt: skip
    (third,) = set(held_ids(host)) - {first, second}
    assert config.read_text() == "name: shop\nlow_stock: 5\ncurrency: EUR\n"
    host.corral("apply", first, "config.yaml")
    assert config.read_text() == "name: shop\nlow_stock: 10\ncurrency: EUR\n"
    # the second one's diff is its own change, not the first one's undone
    diff = host.corral("changes", second, "--diff").stdout
    assert "+reorder: true" in diff and "-low_stock: 10" not in diff, diff
    assert "changed in your copy since the command ran" in diff, diff
    done = host.corral("apply", second, "config.yaml")
    assert done.returncode == 0, done
    assert config.read_text() == "name: shop\nlow_stock: 10\ncurrency: EUR\nreorder: true\n"
    assert f"merged {config}" in done.stderr, done.stderr
    # the third changed the line the first did: nothing is merged, the host's copy stays
    clash = host.corral("apply", third, "config.yaml")
    assert clash.returncode == 1, clash
    assert "conflicts (your copy's line 2, changed by both)" in clash.stderr, clash.stderr
    assert "--overwrite" in clash.stderr, clash.stderr
    assert config.read_text() == "name: shop\nlow_stock: 10\ncurrency: EUR\nreorder: true\n"
    # undo of the merge takes the host's copy back to what it was before it
    host.corral("undo")
    assert config.read_text() == "name: shop\nlow_stock: 10\ncurrency: EUR\n"
    assert not list((stage_root(host)).glob("*/u*/*.corral-merge.tmp"))


@pytest.mark.sandbox
def test_showing_diffs_never_opens_a_fifo_of_the_host(host: Host) -> None:
    """r40c FIFODIFF: a held change set replacing a FIFO of the host's (or a directory
    holding one) opened it for the diff, and waited for a writer: the editor froze."""
    os.mkfifo(host.ws / "pipe")
    (host.ws / "dir").mkdir()
    os.mkfifo(host.ws / "dir" / "pipe")
    host.corral("run", "--writes", "review", "--", "sh", "-c",
                "rm -f pipe; echo x > pipe; rm -rf dir; echo y > dir", cwd=host.ws)  # fmt: skip
    (change_id,) = held_ids(host)
    shown = host.corral("changes", change_id, "--diff", timeout=20)
    assert "special" in shown.stdout, shown


@pytest.mark.sandbox
def test_a_file_or_link_in_a_directorys_place_shows_what_it_deletes(host: Host) -> None:
    """r12c F1: a file put where the host had a directory took the directory away, shown as
    `file docs: passes the check`, "0 deleted". F1b: the listing of a replaced directory
    followed the command's own links (`docs/sub -> other`, with the same names in other):
    nothing was shown as deleted."""
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


@pytest.mark.sandbox
def test_a_review_shows_a_directorys_mode_change_and_where_links_lead(host: Host) -> None:
    """r11c L2: a mode change on an existing directory (`chmod 1777` of a 0700 one) was
    applied without being shown, and links were listed without their targets."""
    (host.ws / "priv").mkdir(mode=0o700)
    (host.ws / "priv").chmod(0o700)
    host.corral("run", "--writes", "review", "--", "sh", "-c",
                "chmod 1777 priv; ln -s README.md readme-link", cwd=host.ws)  # fmt: skip
    (change_id,) = held_ids(host)
    shown = host.corral("changes", change_id).stdout
    assert f"mode    {host.ws / 'priv'}: 0700 -> 1700" in shown, shown
    assert f"{host.ws / 'readme-link'} -> README.md" in shown, shown


@pytest.mark.sandbox
def test_no_write_for_others_reaches_the_host(host: Host) -> None:
    # Second review, F6: chmod 777 .git would let any local user replace the hooks.
    git_mode = stat.S_IMODE((host.ws / ".git").stat().st_mode)
    run(host, "chmod 777 .git && echo x > shared.txt && chmod 666 shared.txt && mkdir d && "
        "chmod 777 d")  # fmt: skip
    assert stat.S_IMODE((host.ws / ".git").stat().st_mode) == git_mode
    assert stat.S_IMODE((host.ws / "shared.txt").stat().st_mode) & 0o002 == 0
    assert stat.S_IMODE((host.ws / "d").stat().st_mode) & 0o002 == 0


@pytest.mark.sandbox
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


@pytest.mark.sandbox
def test_the_owners_own_access_to_a_directory_is_kept(host: Host) -> None:
    """r7c F7: `chmod 000 .git/objects` inside was applied: every git command failed after."""
    host.git("init", "-q", str(host.ws))
    run(host, "chmod 000 .git/objects .git/refs\n")
    for d in (".git/objects", ".git/refs"):
        assert os.stat(host.ws / d).st_mode & 0o700 == 0o700, d


@pytest.mark.sandbox
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
    run(host, body + "python3 -c \"import os; open('f', 'w'); os.setxattr('f', 'user.x', b'1')\"\n")
    for d in ("acldir", "acldir/sub"):
        path = host.ws / d
        assert path.is_dir()
        assert "system.posix_acl_default" not in os.listxattr(path), d
    # r37c XATTR: no `user.` attribute a command sets reaches the host
    assert os.listxattr(host.ws / "acldir") == [] and os.listxattr(host.ws / "f") == []


@pytest.mark.sandbox
@pytest.mark.skipif(os.getuid() != 0, reason="setting file capabilities needs root")
def test_file_capabilities_do_not_reach_the_host(tmp_path: Path) -> None:
    # Second review, F8: as root with allow_privileged, setcap inside; apply stripped setuid but
    # kept this.
    import struct

    from corral.changes import journal as journals
    from corral.changes.apply import apply
    from corral.changes.scan import Entry

    upper, root = tmp_path / "upper", tmp_path / "root"
    upper.mkdir()
    root.mkdir()
    tool = upper / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    # struct vfs_cap_data, revision 2: effective, CAP_SETUID (7) permitted
    os.setxattr(tool, "security.capability", struct.pack("<IIIII", 0x02000001, 1 << 7, 0, 0, 0))
    entry = Entry(
        root=str(root), rel="tool", source=str(tool), kind="file", mode=0o755, size=10,
        nlink=1, opaque=False, target="",
    )  # fmt: skip
    journal = journals.Journal.__new__(journals.Journal)
    journal.record = lambda **_: None  # type: ignore[method-assign]
    apply([entry], journal)
    assert (root / "tool").read_text() == "#!/bin/sh\n"
    assert "security.capability" not in os.listxattr(root / "tool")


def test_the_list_of_held_sets_puts_this_workspaces_first(host: Host) -> None:
    """r58c CHANGESGLOBAL: `corral changes` listed every workspace's held sets mixed, another
    one's above one's own."""
    other = host.ws.parent / "other"
    other.mkdir()
    give_to_test_user(other)
    done = host.corral("run", "--", "sh", "-c", "echo x > .exrc", cwd=other)
    assert done.returncode == 0, done.stderr
    done = host.corral("run", "--", "sh", "-c", "echo x > .exrc")
    assert done.returncode == 0, done.stderr
    listed = host.corral("changes").stdout.splitlines()
    firsts = [line for line in listed if not line.startswith(" ")]
    assert str(host.ws) in firsts[0] and firsts[1] == "held in other workspaces:", listed
    assert str(other) in firsts[2], listed


@pytest.mark.sandbox
def test_what_is_held_for_review_alone_is_applied_by_the_id_the_hint_gives(host: Host) -> None:
    """r72d REVIEWHINT: under `--writes review` the hint said `corral apply ID PATH...,
    naming the held paths you want`, though `corral apply ID` takes what is held for
    review whole."""
    done = host.corral("run", "--writes", "review", "--", "sh", "-c", "echo r > r.txt",
                       cwd=host.ws)  # fmt: skip
    (change_id,) = held_ids(host)
    assert f"(apply: corral apply {change_id}; drop:" in done.stderr, done.stderr
    assert "PATH..." not in done.stderr, done.stderr
    host.corral("apply", change_id)
    assert (host.ws / "r.txt").read_text() == "r\n"


@pytest.mark.sandbox
def test_naming_a_path_of_a_set_held_whole_applies_only_that_path(host: Host) -> None:
    """r73c APPLYSUBSET: in a change set held whole (`--writes review`, an `.envrc` corral
    cannot read ahead, an interrupted command), `corral apply ID want.txt` applied every
    passing path with it."""
    host.corral("run", "--writes", "review", "--", "sh", "-c",
                "echo w > want.txt; echo u > unnamed.txt", cwd=host.ws)  # fmt: skip
    (change_id,) = held_ids(host)
    done = host.corral("apply", change_id, "want.txt")
    assert (host.ws / "want.txt").read_text() == "w\n", done
    assert not (host.ws / "unnamed.txt").exists(), done
    assert held_ids(host) == [change_id]
    done = host.corral("run", "--timeout", "2", "--", "sh", "-c",
                       "echo k > keep.txt; echo o > other.txt; sleep 30", cwd=host.ws)  # fmt: skip
    (late,) = set(held_ids(host)) - {change_id}
    host.corral("apply", late, "keep.txt")
    assert (host.ws / "keep.txt").exists() and not (host.ws / "other.txt").exists(), done


@pytest.mark.sandbox
def test_a_diff_that_apply_cannot_merge_is_shown_against_the_hosts_copy(host: Host) -> None:
    """r73c SHOWOVERWRITE: after a change that conflicts with the host's, `corral changes
    ID --diff` showed the command's change against its base and said "apply merges", while
    apply could only `--overwrite`, which put back a host line the diff never showed."""
    config = host.ws / "config.yaml"
    config.write_text("a: 1\nb: 2\n")
    host.corral("run", "--", "sed", "-i", "s/a: 1/a: 3/", "config.yaml", cwd=host.ws)
    (change_id,) = held_ids(host)
    config.write_text("a: USER\nb: 2\n")
    diff = host.corral("changes", change_id, "--diff").stdout
    assert "-a: USER" in diff and "+a: 3" in diff, diff
    assert "what --overwrite would put there" in diff and "merges into" not in diff, diff


@pytest.mark.sandbox
def test_undoing_a_held_path_applied_later_puts_it_back_in_its_held_set(host: Host) -> None:
    """r72d UNDOHELD: `corral apply ID config.yaml` then `corral undo` deleted config.yaml
    for good: it was neither in the workspace nor held, and could not be applied again."""
    host.corral("run", "--", "sh", "-c", "echo 'k: 1' > config.yaml; echo x > .envrc",
                cwd=host.ws)  # fmt: skip
    (change_id,) = held_ids(host)
    host.corral("apply", change_id, "config.yaml")
    assert (host.ws / "config.yaml").read_text() == "k: 1\n"
    done = host.corral("undo", cwd=host.ws)
    assert not (host.ws / "config.yaml").exists(), done
    assert "back in its held change set" in done.stdout + done.stderr, done
    assert "config.yaml" in host.corral("changes", change_id).stdout
    host.corral("apply", change_id, "config.yaml")
    assert (host.ws / "config.yaml").read_text() == "k: 1\n"


def test_undo_of_a_large_change_set_says_it_in_a_few_lines(host: Host) -> None:
    """r77d UNDOVERBOSE: undoing an applied venv printed 949 "removed ..." lines."""
    said = run(host, "mkdir -p big/a && for i in $(seq 200); do echo $i > big/a/f$i; done\n")
    assert (host.ws / "big" / "a" / "f200").exists(), said
    undo = host.corral("undo")
    assert undo.returncode == 0, undo.stderr
    lines = undo.stdout.splitlines()
    assert len(lines) <= 25, lines
    assert any(f"more below {host.ws / 'big'}" in line for line in lines), lines
    assert not (host.ws / "big").exists()


def test_a_read_only_git_status_leaves_no_undo_entry(host: Host) -> None:
    """r77d GITSTATUSUNDO: `git status` after an edit refreshed the index's stat data: the
    run said "applied ... 1 of git's own files", and its undo entry came before the agent's
    real change, so `:Sandbox undo` took back the wrong thing."""
    host.git("init", "-q")
    (host.ws / "a.txt").write_text("a\n")
    host.git("add", "a.txt")
    host.git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "one")
    said = run(host, "echo b > b.txt\n")
    assert "applied 1 added" in said, said
    os.utime(host.ws / "a.txt")  # (an edit's stat change: git status refreshes the index)
    said = run(host, "git status --short >/dev/null\n")
    assert "applied" not in said, said
    listing = host.corral("undo", "--list").stdout
    assert listing.count("from ") == 1 and "b.txt" in listing, listing
    # what `git add` stages still lands, with its undo entry
    said = run(host, "git add b.txt\n")
    assert "git's own files" in said, said
    assert "b.txt" in host.git("ls-files"), said
