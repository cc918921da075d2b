"""policy.resolve: protected files, .git pinning and worktrees, deny lists, private home."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from corral import dirs
from corral.errors import ConfigError
from corral.sandbox.policy import Policy

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

RW = "sandbox.policy.rw_paths"
DENY = "sandbox.policy.deny_read"


def entries(path: Path) -> set[str]:
    return {p.name for p in path.iterdir()}


# --- writable roots ------------------------------------------------------------------------


def test_workspace_write_makes_the_workspace_writable(
    make_policy: Callable[..., Policy], ws: Path, home: Path
) -> None:
    p = make_policy(ws)
    assert p.enabled and p.mode == "workspace-write"
    assert p.rw_roots == (str(ws),)
    assert p.cwd == str(ws)
    assert p.home == str(home)
    assert p.network is False
    assert p.hidden == ("/tmp", str(home))  # home = "private" by default


def test_read_only_mode_has_no_writable_roots(make_policy: Callable[..., Policy], ws: Path) -> None:
    p = make_policy(ws, {"sandbox.mode": "read-only"})
    assert p.rw_roots == ()
    assert not p.is_writable(str(ws / "f"))
    assert p.is_writable("/tmp/scratch")


def test_missing_writable_path_is_a_note_not_a_root(
    make_policy: Callable[..., Policy], ws: Path, base: Path
) -> None:
    missing = base / "missing" / "dir"
    p = make_policy(ws, {RW: {"append": [str(missing)]}})
    assert p.rw_roots == (str(ws),)
    assert any(str(missing) in n and "does not exist" in n for n in p.notes)
    assert not missing.exists()


def test_writable_roots_are_outermost_and_resolved(
    make_policy: Callable[..., Policy], ws: Path, base: Path
) -> None:
    (ws / "sub").mkdir()
    real = base / "real"
    real.mkdir()
    (base / "link").symlink_to(real)  # the user's own link, outside the workspace: followed
    p = make_policy(ws, {RW: {"append": ["sub", str(base / "link") + "/", str(ws) + "/"]}})
    assert p.rw_roots == tuple(sorted([str(ws), str(real)], key=lambda s: s.split("/")))


def test_a_writable_path_through_a_link_in_the_workspace_is_an_error(
    make_policy: Callable[..., Policy], ws: Path, base: Path
) -> None:
    # A sandboxed command could have made the link: its target must not become writable.
    (base / "real").mkdir()
    (ws / "link").symlink_to(base / "real")
    with pytest.raises(ConfigError, match=r"link is the symlink .*could have made it point"):
        make_policy(ws, {RW: {"append": ["link"]}})
    with pytest.raises(ConfigError, match="is reached through the symlink"):
        make_policy(ws, {RW: {"append": ["link/below"]}})


def test_writable_file_root(make_policy: Callable[..., Policy], ws: Path, base: Path) -> None:
    f = base / "single.txt"
    f.write_text("x")
    p = make_policy(ws, {"sandbox.mode": "read-only", RW: [str(f)]})
    assert p.rw_roots == (str(f),)
    assert p.is_writable(str(f))
    assert not p.is_writable(str(base / "other.txt"))


def test_buffer_path_root(make_policy: Callable[..., Policy], ws: Path, base: Path) -> None:
    chats = base / "chats"
    chats.mkdir()
    with_buffer = make_policy(
        ws, {RW: {"append": ["urn:corral:buffer:path"]}}, buffer_path=str(chats / "a.chat")
    )
    assert str(chats) in with_buffer.rw_roots
    without = make_policy(ws, {RW: {"append": ["urn:corral:buffer:path"]}})
    assert without.rw_roots == (str(ws),)


def test_bad_entries_are_all_reported_with_their_origin(
    make_policy: Callable[..., Policy], ws: Path
) -> None:
    with pytest.raises(ConfigError) as info:
        make_policy(
            ws,
            {RW: {"append": ["urn:corral:nope"]}, DENY: ["${UNTERMINATED"]},
            {"sandbox.policy.env": ["NVIM", "OK=1", "bad-name"]},
        )
    found = [(p.key, p.layer) for p in info.value.problems]
    assert (RW, "mode workspace-write+global") in found
    assert (DENY, "global") in found
    assert found.count(("sandbox.policy.env", "buffer")) == 2


def test_workspace_must_be_a_directory(make_policy: Callable[..., Policy], base: Path) -> None:
    with pytest.raises(ConfigError) as info:
        make_policy(base / "nope")
    assert [p.key for p in info.value.problems] == ["cwd"]


# --- protected files and git -----------------------------------------------------------------


def test_protected_files_listed_only_when_they_exist(
    make_policy: Callable[..., Policy], ws: Path, home: Path, git: Callable[..., str]
) -> None:
    git("init", "-q", cwd=ws, home=home)
    (ws / ".envrc").write_text("export X=1\n")
    (ws / ".nvim.lua").write_text("")
    before = entries(ws)
    p = make_policy(ws)
    assert set(p.read_only) == {
        str(ws / ".git" / "hooks"),
        str(ws / ".git" / "config"),
        str(ws / ".envrc"),
        str(ws / ".nvim.lua"),
    }
    # .git, and the directories above .git/objects/info/alternates (protected, missing)
    objects = ws / ".git" / "objects"
    assert set(p.pinned) == {str(ws / ".git"), str(objects), str(objects / "info")}
    # No placeholders: resolving created nothing.
    assert entries(ws) == before
    assert not (ws / ".exrc").exists()


def test_no_git_no_pins(make_policy: Callable[..., Policy], ws: Path) -> None:
    p = make_policy(ws)
    assert p.pinned == ()
    assert p.read_only == ()


def test_git_dir_stays_writable_except_hooks_and_config(
    make_policy: Callable[..., Policy], ws: Path, home: Path, git: Callable[..., str]
) -> None:
    git("init", "-q", cwd=ws, home=home)
    p = make_policy(ws)
    assert p.is_writable(str(ws / ".git" / "index"))  # commits must work
    assert p.is_writable(str(ws / ".git" / "objects" / "ab"))
    assert not p.is_writable(str(ws / ".git" / "hooks" / "pre-commit"))
    assert not p.is_writable(str(ws / ".git" / "config"))
    assert not p.is_writable(".git/config")  # relative to the workspace


def test_protected_inside_every_writable_root(
    make_policy: Callable[..., Policy], ws: Path, base: Path, home: Path, git: Callable[..., str]
) -> None:
    other = base / "other"
    other.mkdir()
    git("init", "-q", cwd=other, home=home)
    (other / ".exrc").write_text("")
    p = make_policy(ws, {RW: {"append": [str(other)]}})
    assert str(other / ".git") in p.pinned
    assert str(other / ".git" / "hooks") in p.read_only
    assert str(other / ".exrc") in p.read_only


def test_symlinked_protected_file_pointing_outside_is_not_listed(
    make_policy: Callable[..., Policy], ws: Path, base: Path
) -> None:
    (ws / ".envrc").symlink_to("/etc/passwd")
    p = make_policy(ws)
    # It is outside every writable root: already read-only, nothing to bind.
    assert p.read_only == ()
    assert not p.is_writable(str(ws / ".envrc"))


def test_worktree_dot_git_file(
    make_policy: Callable[..., Policy], base: Path, home: Path, git: Callable[..., str]
) -> None:
    repo, wt = base / "repo", base / "wt"
    repo.mkdir()
    git("init", "-q", cwd=repo, home=home)
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=repo, home=home)
    git("worktree", "add", "-q", str(wt), cwd=repo, home=home)
    git("config", "extensions.worktreeConfig", "true", cwd=repo, home=home)
    git("config", "--worktree", "user.name", "wt", cwd=wt, home=home)
    assert (wt / ".git").is_file()
    gitdir = repo / ".git" / "worktrees" / "wt"
    assert (gitdir / "config.worktree").is_file()

    only_wt = make_policy(wt)
    assert only_wt.rw_roots == (str(wt),)
    assert only_wt.pinned == ()  # the pointer file is not a directory to pin
    assert str(wt / ".git") in only_wt.read_only
    assert not only_wt.is_writable(str(wt / ".git"))
    assert only_wt.is_writable(str(wt / "file.txt"))
    # The shared repository is outside the writable roots: read-only anyway.
    assert not only_wt.is_writable(str(repo / ".git" / "hooks" / "pre-commit"))

    both = make_policy(wt, {RW: {"append": [str(repo)]}})
    assert str(repo / ".git") in both.pinned
    for path in (
        wt / ".git",
        repo / ".git" / "hooks",
        repo / ".git" / "config",
        gitdir / "config.worktree",
    ):
        assert str(path) in both.read_only, path
        assert not both.is_writable(str(path))
    assert both.is_writable(str(gitdir / "HEAD"))


# --- deny lists ------------------------------------------------------------------------------


def denied(p: Policy) -> tuple[tuple[str, bool], ...]:
    """The deny masks of the test's own directory (the workspace's parent, holding its home):
    not corral's state directory, nor what the host has elsewhere (the system's files only
    the user may read, see system_private, which other work on the host changes)."""
    from corral.paths import is_within

    state_dir = os.path.realpath(dirs.user_state_dir())
    base = os.path.dirname(p.cwd)
    return tuple(d for d in p.deny_read if d[0] != state_dir and is_within(d[0], base))


def test_deny_read_only_existing_paths(
    make_policy: Callable[..., Policy], ws: Path, home: Path
) -> None:
    (home / ".ssh").mkdir()
    (home / ".netrc").write_text("machine x")
    before = entries(home)
    p = make_policy(ws, {DENY: ["~/.ssh", "~/.aws", "~/.netrc", "$NOPE/x"]})
    assert denied(p) == ((str(home / ".netrc"), False), (str(home / ".ssh"), True))
    assert entries(home) == before  # nothing created for ~/.aws


def test_deny_read_skips_dangling_symlinks(
    make_policy: Callable[..., Policy], ws: Path, home: Path, base: Path
) -> None:
    # ~/.netrc -> a target that does not exist: nothing to hide, and a mask on the missing
    # target would make bwrap try to create it on the read-only root (every command fails).
    (home / ".netrc").symlink_to(base / "missing-netrc")
    (home / ".ssh").mkdir()
    p = make_policy(ws, {DENY: ["~/.netrc", "~/.ssh"]})
    assert denied(p) == ((str(home / ".ssh"), True),)


def test_home_allow_skips_dangling_symlinks(
    make_policy: Callable[..., Policy], ws: Path, home: Path
) -> None:
    (home / ".npm").symlink_to(home / "missing")
    (home / ".cargo").mkdir()
    p = make_policy(ws, {"sandbox.policy.home": "private"})
    assert str(home / ".cargo") in p.visible
    # a --ro-bind of a missing source is a bwrap set-up failure
    assert all(os.path.exists(v) for v in p.visible), p.visible


def test_default_deny_read_hides_existing_credentials(
    make_policy: Callable[..., Policy], ws: Path, home: Path
) -> None:
    (home / ".ssh").mkdir()
    (home / ".aws").mkdir()
    p = make_policy(ws)
    denied = dict(p.deny_read)
    assert denied[str(home / ".ssh")] is True
    assert denied[str(home / ".aws")] is True
    assert str(home / ".gnupg") not in denied
    assert all(os.path.lexists(d) for d in denied)


def test_deny_read_inside_workspace_is_not_writable(
    make_policy: Callable[..., Policy], ws: Path
) -> None:
    (ws / "secrets").mkdir()
    p = make_policy(ws, {DENY: ["secrets"]})
    assert denied(p) == ((str(ws / "secrets"), True),)
    assert not p.is_writable(str(ws / "secrets" / "x"))
    assert p.is_writable(str(ws / "secretsx"))


def test_workspace_inside_a_denied_path_is_noted(
    make_policy: Callable[..., Policy], home: Path
) -> None:
    proj = home / ".ssh" / "proj"
    proj.mkdir(parents=True)
    p = make_policy(proj, {DENY: ["~/.ssh"]})
    assert any("inside denied path" in n for n in p.notes)


def test_deny_write_inside_a_writable_home(make_policy: Callable[..., Policy], home: Path) -> None:
    (home / ".config" / "nvim").mkdir(parents=True)
    (home / ".bashrc").write_text("")
    (home / ".local" / "share" / "nvim").mkdir(parents=True)
    p = make_policy(home)  # the workspace is the home itself

    def kept(path: Path) -> bool:  # read-only itself, or inside a read-only dot directory
        return any(str(path) == r or str(path).startswith(r + "/") for r in p.read_only)

    assert kept(home / ".config" / "nvim")
    assert kept(home / ".bashrc")
    assert kept(home / ".local" / "share" / "nvim")
    assert not p.is_writable(str(home / ".config" / "nvim" / "init.lua"))
    assert not p.is_writable(str(home / ".local" / "share" / "nvim" / "lazy" / "x.lua"))
    assert p.is_writable(str(home / "notes.txt"))
    assert len(p.read_only) == len(set(p.read_only))


# --- private home ---------------------------------------------------------------------------


def test_private_home_hides_home_and_shows_the_allowlist(
    make_policy: Callable[..., Policy], home: Path
) -> None:
    proj = home / "proj"
    proj.mkdir()
    (home / ".gitconfig").write_text("[user]\n")
    (home / ".cargo").mkdir()
    p = make_policy(proj, {"sandbox.policy.home": "private"})
    assert p.hidden == ("/tmp", str(home))
    assert str(home / ".gitconfig") in p.visible
    assert str(home / ".cargo") in p.visible
    assert str(home / ".npm") not in p.visible  # does not exist
    assert str(proj) not in p.visible  # writable root: bound writable instead
    assert p.rw_roots == (str(proj),)
    assert not p.is_writable(str(home / ".gitconfig"))


def test_private_home_read_only_workspace_inside_home_is_shown(
    make_policy: Callable[..., Policy], home: Path
) -> None:
    proj = home / "proj"
    proj.mkdir()
    p = make_policy(proj, {"sandbox.mode": "read-only", "sandbox.policy.home": "private"})
    assert str(proj) in p.visible
    assert not p.is_writable(str(proj / "f"))


def test_private_home_allowlist_outside_home_is_ignored(
    make_policy: Callable[..., Policy], home: Path, ws: Path, base: Path
) -> None:
    outside = base / "opt"
    outside.mkdir()
    (home / ".cargo").mkdir()
    p = make_policy(
        ws,
        {"sandbox.policy.home": "private", "sandbox.policy.home_allow": [str(outside), "~/.cargo"]},
    )
    assert str(outside) not in p.visible
    assert str(home / ".cargo") in p.visible


def test_private_home_when_workspace_is_home(
    make_policy: Callable[..., Policy], home: Path
) -> None:
    p = make_policy(home, {"sandbox.policy.home": "private"})
    assert p.hidden == ("/tmp",)
    assert any("hides nothing" in n for n in p.notes)


def test_visible_home_hides_only_tmp(make_policy: Callable[..., Policy], ws: Path) -> None:
    assert make_policy(ws, {"sandbox.policy.home": "visible"}).hidden == ("/tmp",)


# --- is_writable, off, environment -----------------------------------------------------------


def test_is_writable_component_boundaries(make_policy: Callable[..., Policy], ws: Path) -> None:
    p = make_policy(ws)
    assert p.is_writable(str(ws))
    assert p.is_writable("relative/file")
    assert not p.is_writable(str(ws) + "2/file")
    assert not p.is_writable(str(ws) + "-b/file")
    assert not p.is_writable("/etc/passwd")
    assert not p.is_writable("../outside")
    assert p.is_writable("/tmp")  # the private /tmp
    assert p.is_writable("/tmp/scratch/x")
    assert not p.is_writable("/tmpx/file")


def test_is_writable_with_synthetic_roots(make_policy: Callable[..., Policy], ws: Path) -> None:
    fields = dict(make_policy(ws)._fields())
    p = Policy(**{**fields, "rw_roots": ("/work/app",), "read_only": ("/work/app/.git/hooks",)})
    assert p.is_writable("/work/app/x")
    assert not p.is_writable("/work/app2/x")
    assert not p.is_writable("/work/ap")
    assert not p.is_writable("/work/app/.git/hooks/pre-commit")
    assert p.is_writable("/work/app/.git/hooksx")


def test_is_writable_respects_read_only_reexposure_in_private_tmp(
    make_policy: Callable[..., Policy], tmp_path: Path
) -> None:
    # A read-only workspace under /tmp is bound read-only over the private /tmp: the sandbox
    # cannot write it, even though the rest of /tmp is a writable tmpfs.
    ws = tmp_path / "ws"
    ws.mkdir()
    p = make_policy(ws, {"sandbox.mode": "read-only"})
    assert str(ws) in p.visible
    assert p.is_writable(str(tmp_path / "elsewhere"))
    assert not p.is_writable(str(ws / "f"))


def test_is_writable_follows_symlinks_out_of_the_workspace(
    make_policy: Callable[..., Policy], ws: Path
) -> None:
    (ws / "etc-link").symlink_to("/etc")
    p = make_policy(ws)
    assert not p.is_writable(str(ws / "etc-link" / "passwd"))


def test_mode_off_is_disabled_and_everything_writable(
    make_policy: Callable[..., Policy], ws: Path
) -> None:
    p = make_policy(ws, {"sandbox.mode": "off"})
    assert p.enabled is False
    assert p.is_writable("/etc/passwd")
    q = make_policy(ws, {"sandbox.enabled": False})
    assert q.enabled is False and q.mode == "workspace-write"


def test_policy_env_is_scrubbed_and_sorted(
    make_policy: Callable[..., Policy], ws: Path, home: Path
) -> None:
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin",
        "GITHUB_TOKEN": "t",
        "FOO": "x",
        "HTTPS_PROXY": "http://p",
    }
    p = make_policy(ws, {"sandbox.policy.env": ["FOO", "BAR=1"]}, env=env)
    assert p.env == (("BAR", "1"), ("FOO", "x"), ("HOME", str(home)), ("PATH", "/usr/bin"))
    q = make_policy(ws, {"sandbox.mode": "workspace-write-network"}, env=env)
    assert ("HTTPS_PROXY", "http://p") in q.env
    assert q.network is True


def test_policy_is_immutable(make_policy: Callable[..., Policy], ws: Path) -> None:
    p = make_policy(ws)
    with pytest.raises(AttributeError):
        p.network = True  # type: ignore[misc]
    assert isinstance(p.rw_roots, tuple)


@pytest.mark.parametrize("name", ["../outside.txt", "/etc/passwd", "a/../../b", "/"])
def test_a_protected_name_must_stay_inside_the_roots(
    make_policy: Callable[..., Policy], ws: Path, name: str
) -> None:
    # Final review lead: names are joined to each root; `../x` named a path outside it.
    with pytest.raises(ConfigError, match="not a name inside a writable root"):
        make_policy(ws, {"sandbox.policy.protected": {"append": [name]}})


def test_a_checkout_of_corral_in_the_workspace_keeps_all_neovim_sources(
    make_policy: Callable[..., Policy],
) -> None:
    """Fourth review, F15: with corral's own checkout inside the workspace, its lua/ and
    plugin/ were read-only, but ftdetect/, after/plugin/, ftplugin/, autoload/ and syntax/
    were writable, and Neovim ran what was planted there at its next start."""
    import corral
    from corral.sandbox.resolution import RUNTIME_DIRS

    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(corral.__file__))))
    p = make_policy(checkout)
    kept = {*p.read_only, *p.watch}
    for name in ("ftdetect", "after", "ftplugin", "autoload", "syntax", "python", "doc",
                 "filetype.lua", "ftplugin.vim", "indent.vim"):  # fmt: skip
        assert os.path.join(checkout, name) in kept or any(
            os.path.join(checkout, name).startswith(k + "/") for k in kept
        ), name
    assert "after" in RUNTIME_DIRS


@pytest.mark.parametrize(
    ("pattern", "name"),
    [(p, n) for p in (".env", ".env.*", "*.pem", "id_rsa*", "a*b*c", "?x", "*", "a?c", "**x")
     for n in (".env", ".env.local", "a.pem", "pem", "id_rsa.pub", "axxbyyc", "acb", "ax", "x",
               "abc", "")],
)  # fmt: skip
def test_name_patterns_match_as_fnmatch_does(pattern: str, name: str) -> None:
    import fnmatch

    from corral.sandbox.resolution import _name_matches

    assert _name_matches(pattern, name) == fnmatch.fnmatchcase(name, pattern)


def test_files_the_file_tools_deny_are_hidden_from_commands_too(
    make_policy: Callable[..., Policy], ws: Path
) -> None:
    """Issue 9: `cat .env` in bash handed the model what the read tool refuses."""
    (ws / ".env").write_text("SECRET=1\n")
    (ws / "app" / "keys").mkdir(parents=True)
    (ws / "app" / "keys" / "server.pem").write_text("x")
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "node_modules" / "pkg" / ".env").write_text("x")
    (ws / "notes.txt").write_text("x")
    hidden = {p for p, _ in make_policy(ws).deny_read}
    assert str(ws / ".env") in hidden and str(ws / "app" / "keys" / "server.pem") in hidden
    assert str(ws / "notes.txt") not in hidden
    assert str(ws / "node_modules" / "pkg" / ".env") not in hidden  # not searched: bulky


def test_a_workspace_too_large_to_search_for_denied_files_is_refused(
    make_policy: Callable[..., Policy], ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seventh review r7a A7: past the search's limit, `.env` files further down were left
    visible with a warning: a command that planted enough files read them in the next run."""
    from corral.sandbox import resolution

    monkeypatch.setattr(resolution, "DENY_SEARCH_LIMIT", 50)
    (ws / "app").mkdir()
    (ws / "app" / ".env").write_text("API_KEY=x\n")
    assert str(ws / "app" / ".env") in [p for p, _ in make_policy(ws).deny_read]
    for i in range(60):
        (ws / f"o{i}.tmp").write_text("")
    with pytest.raises(ConfigError) as info:
        make_policy(ws)
    assert [p.key for p in info.value.problems] == ["tools.permissions.deny"]


def test_a_workspace_that_is_the_configuration_directory_says_so(
    make_policy: Callable[..., Policy], home: Path, host_env: dict[str, str]
) -> None:
    """Ninth review r9a C3: with ~/.config itself as the workspace, programs' start-up files
    there are writable by choice, and nothing said so."""
    config = home / ".config"
    config.mkdir(exist_ok=True)
    env = {k: v for k, v in host_env.items() if k != "XDG_CONFIG_HOME"}
    p = make_policy(config, env=env)
    assert any("XDG_CONFIG_HOME" in n and "itself" in n for n in p.notes), p.notes


def test_a_deny_list_of_many_path_globs_is_refused_not_walked(
    make_policy: Callable[..., Policy], ws: Path
) -> None:
    """r32b DENYGLOBS: 1000 `tools.permissions.deny` globs with a `/` from a chat (narrowing,
    so accepted) were each recompiled and matched against every workspace entry on every
    request: 14 s a call in a workspace of 400 files, the editor blocked."""
    from corral.errors import ConfigError

    for i in range(400):
        (ws / f"f{i}.txt").write_text("")
    deny = [f"dir{i}/*.x" for i in range(1000)]
    with pytest.raises(ConfigError, match="too many for a workspace this size"):
        make_policy(ws, {"tools": {"permissions": {"deny": {"append": deny}}}})
    few = make_policy(ws, {"tools": {"permissions": {"deny": {"append": ["secret/*.x"]}}}})
    assert few is not None
