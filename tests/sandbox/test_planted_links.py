"""A link a sandboxed command made must never decide what a later run mounts, what the host
deletes, or where a later save writes: a link out of the roots, into or above a hidden area, or
one that makes a protected name, is held, also when it is built over several runs (second
outside review, C5 and H2, and later rounds).

C5: a writable path that did not exist yet (named by an untrusted chat's frontmatter, which
counts as narrowing, or by --allow-write) was made a link to a host directory by one command;
the next command got the link's target as a writable root.
H2: a protected path under a missing directory: the command made the directory a link to a
host directory holding a file of that name, and the post-run sweep deleted the host's file.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import pytest

from corral.paths import planted_link

from .conftest import corral_runs_as_root
from .sandbox_support import q, run

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Host

pytestmark = pytest.mark.sandbox


@pytest.mark.parametrize("writes", ["apply", "direct"])
def test_a_writable_path_made_a_link_is_refused_not_followed(host: Host, writes: str) -> None:
    later = host.ws / "later"
    target = host.outside
    # The first command makes the missing writable path a link to a host directory (direct
    # writes, so the link is there whatever the change-set check thinks of it).
    first = host.corral(
        "run", "--writes", "direct", "--allow-write", str(later), "--",
        "ln", "-s", str(target), str(later),
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert later.is_symlink()
    second = host.corral(
        "run", "--writes", writes, "--allow-write", str(later), "--",
        "sh", "-c", f"echo planted > {q(later / 'canary.txt')}",
    )  # fmt: skip
    assert not (target / "canary.txt").exists(), "the link's target was writable"
    assert second.returncode != 0
    assert f"is the symlink {later}" in second.stderr, second.stderr


def test_the_sweep_deletes_nothing_through_a_link_made_inside(host: Host) -> None:
    # $HOME as the workspace, no ~/.m2 yet: ~/.m2/settings.xml (a credential file) is watched
    # and removed if a command creates it. The command makes ~/.m2 a link to a host directory
    # that holds a settings.xml of its own.
    home = host.home
    shutil.rmtree(home / ".m2", ignore_errors=True)
    victim = host.outside / "m2"
    victim.mkdir()
    (victim / "settings.xml").write_text("the host's own\n")
    done = host.corral(
        "run", "--writes", "direct", "--cwd", str(home), "--",
        "ln", "-s", str(victim), str(home / ".m2"),
        cwd=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (victim / "settings.xml").read_text() == "the host's own\n"
    assert "nothing removed" in done.stderr, done.stderr


def test_planted_link_finds_only_links_inside_the_areas(tmp_path: Path) -> None:
    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    (elsewhere / "real").mkdir(parents=True)
    ws.mkdir()
    (ws / "link").symlink_to(elsewhere)
    (tmp_path / "users-link").symlink_to(ws)
    assert planted_link(str(ws / "link" / "real"), [str(ws)]) == str(ws / "link")
    assert planted_link(str(ws / "link"), [str(ws)]) == str(ws / "link")
    assert planted_link(str(ws / "missing" / "x"), [str(ws)]) is None
    # a link of the user's own, outside the areas, is followed and the rest checked there
    assert planted_link(str(tmp_path / "users-link" / "link"), [str(ws)]) == str(ws / "link")
    assert planted_link(str(elsewhere / "real"), [str(ws)]) is None


def test_a_link_target_through_another_link_is_resolved_before_it_is_judged(host: Host) -> None:
    # Third review, N3: `ua -> /usr` passes; `key -> ua/../<home>/.ssh/...` is folded by normpath
    # into the workspace, but the host resolves it through /usr into the private home.
    secret = host.home / ".ssh" / "id_ed25519"
    rel = os.path.relpath(secret, "/")
    held = run(host, f"ln -s /usr ua; ln -s ua/../{q(rel)} key; ln -s ua/../proc/self/root pr")
    assert not os.path.lexists(host.ws / "key"), "a link into the private home reached the host"
    assert not os.path.lexists(host.ws / "pr")
    assert "held" in held


@pytest.mark.parametrize(
    "target", ["//{home}/.ssh", "/proc/self/root{home}/.ssh", "/proc/1/root{home}"]
)
def test_links_spelled_around_the_hidden_areas_are_held(host: Host, target: str) -> None:
    # Second review, F2: "//x" and /proc/self/root/x are /x on the host; the check compared strings.
    held = run(host, f"ln -s {target.format(home=host.home)} keys")
    assert "held" in held, held
    assert not os.path.lexists(host.ws / "keys")


def test_a_link_above_a_hidden_area_is_held(host: Host) -> None:
    """r7c F12: links into a hidden area were held, links to one of its parents were not
    (`ln -s / root` made root/<home>/.ssh a path in the workspace)."""
    run(host, "ln -s / rootlink; mkdir -p v/bin; touch v/pyvenv.cfg\n"
              "ln -s /usr/bin/python3 v/bin/python\n")  # fmt: skip
    assert not (host.ws / "rootlink").is_symlink()
    # a venv's interpreter passes where you cannot write it (as root you can: held)
    assert (host.ws / "v" / "bin" / "python").is_symlink() == (not corral_runs_as_root())


def test_links_out_of_the_roots_are_held_wherever_they_lead(host: Host) -> None:
    """r9c H2, H3: toolchains the home shows (~/.local/lib, ~/.cargo) and, for root, /usr
    were let through as "not yours to write": a :write through a link planted there made a
    .pth that every Python ran. Only a venv's interpreter may link out."""
    run(host, "ln -s /usr/local/lib ulib; ln -s /usr/bin/env env-link\n")
    assert not (host.ws / "ulib").is_symlink()
    assert not (host.ws / "env-link").is_symlink()


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


def test_a_link_where_an_earlier_run_deleted_a_directory_is_held(host: Host) -> None:
    """r13a L1: run 1 made `notes.txt -> q/python3` with q a directory, run 2 deleted q,
    run 3 made `q -> .venv/bin`: no run saw a link take a directory's place, and a save of
    notes.txt wrote the venv's interpreter outside the roots."""
    run(host, "mkdir q; echo x > q/python3; ln -s q/python3 notes.txt\n")
    run(host, "rm -rf q\n")
    run(host, "mkdir -p .venv/bin; ln -s .venv/bin q\n")
    assert not (host.ws / "q").is_symlink()


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
    # (`q.d`: a top-level link named like a module is held as one, r48b LINKFILL)
    run(host, "mkdir d; echo x > d/python3; ln -s d q.d; ln -s q.d/python3 notes.txt\n")
    assert (host.ws / "q.d").is_symlink()
    run(host, "rm q.d; ln -s .venv/bin q.d\n")
    assert os.readlink(host.ws / "q.d") == "d"
    (host.ws / "build").mkdir()
    (host.ws / "build" / "python3").write_text("x\n")
    run(host, "ln -s build/python3 out.txt\n")
    shutil.rmtree(host.ws / "build")  # the host's own `make clean`
    run(host, "ln -s .venv/bin build\n")
    assert not (host.ws / "build").is_symlink()
    run(host, "mkdir -p src/lib; echo x > src/lib/a.py; ln -s src/lib lib\n")
    assert (host.ws / "lib").is_symlink()  # an ordinary link to a directory lands
    assert mine.read_text() == "#!/bin/sh\n"


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
    # (the interpreter link passes alone, but the venv is held whole with its held paths)
    assert not (host.ws / "w" / "bin" / "python").is_symlink()
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


def test_a_link_cannot_move_a_protected_path_whose_directory_is_missing(host: Host) -> None:
    # Second review, F3: lefthook is installed, so .config/lefthook.yml is protected; .config does
    # not exist.
    hook = host.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n# installed by lefthook\nlefthook run pre-commit\n")
    hook.chmod(0o755)
    held = run(host, "mkdir cfg && echo 'pre-commit: {}' > cfg/lefthook.yml && ln -s cfg .config")
    assert "held" in held and ".config" in held, held
    assert not (host.ws / ".config").is_symlink()


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
