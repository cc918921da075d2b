"""Change sets: a sandboxed command's writes reach the workspace only through the check.

Each test runs real bwrap and looks at the host: while the command still runs (nothing of its
writes may be there yet) and afterwards (what passed is applied, what was refused is held and
never appears). The five ways an outside review broke the old post-run sweep each have a test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import give_to_test_user, user_prefix
from .sandbox_support import DONE, q, run_wrapped

if TYPE_CHECKING:
    from .conftest import Host


def held_ids(host: Host) -> list[str]:
    out = host.corral("changes").stdout
    return [line.split(":")[0] for line in out.splitlines() if ": held" in line and line[0] != " "]


def stage_root(host: Host) -> Path:
    return host.home / ".local" / "state" / "corral" / "changes"


def test_writes_are_applied_after_the_run_with_the_exit_status(host: Host) -> None:
    body = (
        "echo new > added.txt\n"
        "echo more >> README.md\n"
        "rm movable.txt\n"
        "mkdir -p build/out && echo o > build/out/x\n"
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
    assert (ws / "build" / "out" / "x").read_text() == "o\n"
    assert (ws / "sub2" / "keep.txt").read_text() == "sub\n" and not (ws / "sub").exists()
    assert "corral:" not in done.stderr  # nothing held, nothing to say
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
    undo = host.corral("undo")
    assert undo.returncode == 0, undo.stderr
    assert (host.ws / "README.md").read_text() == before
    assert (host.ws / "sub" / "keep.txt").read_text() == "sub\n"
    assert not (host.ws / "new.txt").exists()
    assert host.git("status", "--porcelain") == ""
    assert "nothing to undo" in host.corral("undo").stdout


def test_undo_refuses_when_the_file_changed_since(host: Host) -> None:
    host.sh(host.vars() + '\ncd "$WS"\necho changed > README.md\n')
    (host.ws / "README.md").write_text("the user's later edit\n")
    undo = host.corral("undo")
    assert undo.returncode == 1
    assert "changed since the command wrote it" in undo.stderr
    assert (host.ws / "README.md").read_text() == "the user's later edit\n"


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
    assert ".nvim.lua: refused" in shown
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
    applied = host.corral("apply", change_id, ".nvim.lua")
    assert applied.returncode == 0, applied.stderr
    assert (host.ws / ".nvim.lua").read_text() == "-- mine\n"


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


def test_setuid_bits_do_not_reach_the_host(host: Host) -> None:
    done = host.sh(host.vars() + '\ncd "$WS"\necho x > tool && chmod 4755 tool\n')
    assert DONE in done.stdout, done.stderr
    assert (host.ws / "tool").stat().st_mode & 0o7777 == 0o755


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
