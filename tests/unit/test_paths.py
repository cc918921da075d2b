"""Path entry expansion, symlink resolution and component-boundary comparisons."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corral import paths
from corral.paths import (
    ExpandError,
    PathContext,
    RealPaths,
    expand,
    expand_all,
    is_within,
    outermost,
)

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def ctx(ws: Path, home: Path) -> PathContext:
    env = {"HOME": str(home), "DATA": "/srv/data", "EMPTY": "", "SUB": "sub"}
    return PathContext(str(ws), env)


def test_tilde(ctx: PathContext, home: Path) -> None:
    assert expand("~", ctx) == [str(home)]
    assert expand("~/.ssh", ctx) == [str(home / ".ssh")]


def test_tilde_user_is_not_the_home(ctx: PathContext, ws: Path) -> None:
    # Only `~` and `~/...` mean the home; `~x` is an ordinary (relative) name.
    assert expand("~x", ctx) == [str(ws / "~x")]


def test_home_comes_from_the_given_environment(ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-home"
    other.mkdir()
    assert expand("~/a", PathContext(str(ws), {"HOME": str(other)})) == [str(other / "a")]


def test_cwd_urn(ctx: PathContext, ws: Path) -> None:
    assert expand("urn:corral:cwd", ctx) == [str(ws)]
    assert expand("urn:corral:cwd/build/out", ctx) == [str(ws / "build" / "out")]


def test_buffer_path_urn_is_the_buffers_directory(ws: Path, home: Path, tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    ctx = PathContext(str(ws), {"HOME": str(home)}, buffer_path=str(chats / "talk.chat"))
    assert expand("urn:corral:buffer:path", ctx) == [str(chats)]
    assert expand("urn:corral:buffer:path/notes", ctx) == [str(chats / "notes")]


def test_buffer_path_urn_is_dropped_without_a_buffer(ctx: PathContext) -> None:
    assert expand("urn:corral:buffer:path", ctx) == []
    assert expand("urn:corral:buffer:path/x", ctx) == []


def test_other_homes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    homes = tmp_path / "homes"
    for name in ("alice", "bob", "me"):
        (homes / name).mkdir(parents=True)
    (homes / "not-a-dir").write_text("")
    (homes / "link").symlink_to(homes / "alice")
    monkeypatch.setattr(paths, "HOMES_ROOTS", (str(homes),))
    monkeypatch.setattr(paths, "PASSWD", str(tmp_path / "no-passwd"))
    ctx = PathContext(str(homes / "me"), {"HOME": str(homes / "me")})
    assert sorted(expand("urn:corral:other-homes", ctx)) == [
        str(homes / "alice"),
        str(homes / "bob"),
    ]


def test_other_homes_never_hides_the_workspace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    homes = tmp_path / "homes"
    for name in ("alice", "bob", "me"):
        (homes / name).mkdir(parents=True)
    (homes / "bob" / "proj").mkdir()
    monkeypatch.setattr(paths, "HOMES_ROOTS", (str(homes),))
    monkeypatch.setattr(paths, "PASSWD", str(tmp_path / "no-passwd"))
    ctx = PathContext(str(homes / "bob" / "proj"), {"HOME": str(homes / "me")})
    assert expand("urn:corral:other-homes", ctx) == [str(homes / "alice")]


def test_other_homes_are_also_where_passwd_puts_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """r64b OTHERHOMES: postgres's /var/lib/postgresql, jenkins's, /srv/git were shown;
    system directories given as homes (/bin, /dev, /) are not hidden for it."""
    (tmp_path / "srv" / "git").mkdir(parents=True)
    (tmp_path / "me").mkdir()
    passwd = tmp_path / "passwd"
    passwd.write_text(
        f"git:x:998:998::{tmp_path}/srv/git:/bin/sh\nbin:x:2:2:bin:/bin:/usr/sbin/nologin\n"
        "systemd-network:x:997:997::/:/usr/sbin/nologin\nnobody:x:65534:65534::/nonexistent:"
        "/usr/sbin/nologin\nbroken line\n"
    )
    monkeypatch.setattr(paths, "HOMES_ROOTS", ())
    monkeypatch.setattr(paths, "PASSWD", str(passwd))
    ctx = PathContext(str(tmp_path / "me"), {"HOME": str(tmp_path / "me")})
    assert expand("urn:corral:other-homes", ctx) == [str(tmp_path / "srv" / "git")]


def test_other_homes_takes_no_suffix(ctx: PathContext) -> None:
    with pytest.raises(ExpandError):
        expand("urn:corral:other-homes/x", ctx)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("$DATA/x", "/srv/data/x"),
        ("${DATA}/x", "/srv/data/x"),
        ("${DATA}x", "/srv/datax"),
        ("${DATA:-/fallback}/x", "/srv/data/x"),
        ("${NOPE:-/fallback}/x", "/fallback/x"),
        ("${EMPTY:-/fallback}", "/fallback"),
        ("/a/$SUB/b", "/a/sub/b"),
        ("/cost$", "/cost$"),
        ("/a$-b", "/a$-b"),
    ],
)
def test_variables(ctx: PathContext, entry: str, expected: str) -> None:
    assert expand(entry, ctx) == [expected]


@pytest.mark.parametrize("entry", ["$NOPE/x", "${NOPE}/x", "$EMPTY/x", "${EMPTY}", "/a/$NOPE"])
def test_unset_or_empty_variable_drops_the_entry(ctx: PathContext, entry: str) -> None:
    # Never widen `$DATA/x` to `/x`.
    assert expand(entry, ctx) == []


@pytest.mark.parametrize(
    "entry", ["urn:corral:nope", "urn:corral:buffer", "urn:corral:CWD", "${DATA", "/a/${X", "${1X}"]
)
def test_errors(ctx: PathContext, entry: str) -> None:
    with pytest.raises(ExpandError):
        expand(entry, ctx)


def test_expand_all_reports_every_bad_entry(ctx: PathContext, ws: Path) -> None:
    found, errors = expand_all(["urn:corral:nope", "a", "${X", "$NOPE", "urn:corral:cwd"], ctx)
    assert found == [str(ws / "a"), str(ws)]
    assert len(errors) == 2
    assert "urn:corral:nope" in errors[0]
    assert "unterminated" in errors[1]


def test_relative_entries_resolve_against_the_workspace(ctx: PathContext, ws: Path) -> None:
    assert expand("build", ctx) == [str(ws / "build")]
    assert expand("./build/../dist", ctx) == [str(ws / "dist")]
    assert expand("../sibling", ctx) == [str(ws.parent / "sibling")]


def test_trailing_slash_and_dots_are_normalised(ctx: PathContext, ws: Path) -> None:
    (ws / "d").mkdir()
    assert expand(str(ws / "d") + "/", ctx) == [str(ws / "d")]
    assert expand(str(ws) + "//d/./", ctx) == [str(ws / "d")]


def test_symlinks_are_resolved(ws: Path, home: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "inner").mkdir(parents=True)
    (ws / "link").symlink_to(real)
    ctx = PathContext(str(ws), {"HOME": str(home)})
    assert expand("link", ctx) == [str(real)]
    assert expand("link/", ctx) == [str(real)]
    assert expand("link/inner", ctx) == [str(real / "inner")]


def test_symlinked_workspace_and_home_are_resolved(tmp_path: Path) -> None:
    real_ws, real_home = tmp_path / "real-ws", tmp_path / "real-home"
    real_ws.mkdir()
    real_home.mkdir()
    (tmp_path / "ws-link").symlink_to(real_ws)
    (tmp_path / "home-link").symlink_to(real_home)
    ctx = PathContext(str(tmp_path / "ws-link"), {"HOME": str(tmp_path / "home-link")})
    assert ctx.cwd == str(real_ws)
    assert ctx.home == str(real_home)
    assert expand("urn:corral:cwd", ctx) == [str(real_ws)]
    assert expand("~/x", ctx) == [str(real_home / "x")]


# --- is_within and outermost ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "root", "inside"),
    [
        ("/work/app", "/work/app", True),
        ("/work/app/src", "/work/app", True),
        ("/work/app2", "/work/app", False),
        ("/work/app-b", "/work/app", False),
        ("/work/ap", "/work/app", False),
        ("/work", "/work/app", False),
        ("/anything", "/", True),
        ("/", "/", True),
    ],
)
def test_is_within(path: str, root: str, inside: bool) -> None:
    assert is_within(path, root) is inside


def test_outermost_component_boundaries() -> None:
    assert outermost(["/a", "/a/c", "/a-b"]) == ("/a", "/a-b")
    assert outermost(["/a-b", "/a/c", "/a"]) == ("/a", "/a-b")
    assert outermost(["/a/c", "/a/c", "/a/c/d"]) == ("/a/c",)
    assert outermost(["/x/y", "/x"]) == ("/x",)
    assert outermost(["/work/app2", "/work/app"]) == ("/work/app", "/work/app2")
    assert outermost(["/", "/etc", "/a-b"]) == ("/",)
    assert outermost([]) == ()


def _parts(path: str) -> list[str]:
    return [p for p in path.split("/") if p]


names = st.sampled_from(["a", "b", "a-b", "a.b", "ab", "a b", "-", "aa", "b0"])
abs_paths = st.one_of(
    st.just("/"), st.lists(names, min_size=1, max_size=4).map(lambda ps: "/" + "/".join(ps))
)


@given(abs_paths, abs_paths)
def test_is_within_matches_component_prefix(path: str, root: str) -> None:
    p, r = _parts(path), _parts(root)
    assert is_within(path, root) is (p[: len(r)] == r)


@given(st.lists(abs_paths, max_size=12))
def test_outermost_properties(items: list[str]) -> None:
    kept = outermost(items)
    # unique, drawn from the input
    assert len(set(kept)) == len(kept)
    assert set(kept) <= set(items)
    # every input is covered by something kept
    for p in items:
        assert any(is_within(p, k) for k in kept), (p, kept)
    # nothing kept lies below another kept path
    for a in kept:
        for b in kept:
            if a != b:
                assert not is_within(a, b), (a, b, kept)
    # order of the input does not matter
    assert outermost(reversed(items)) == kept


def test_context_keeps_the_raw_environment(ws: Path, home: Path) -> None:
    env = {"HOME": str(home), "X": "1"}
    ctx = PathContext(str(ws), env)
    assert ctx.env is env
    assert os.path.isabs(ctx.cwd)


def test_chat_patterns_are_read_as_neovim_reads_them() -> None:
    """Fourth review, F13: `*.{chat,chatmd}` and `~/chats/*.md` are Neovim file patterns; the
    change-set check read them with fnmatch, so b.chatmd was applied though Neovim treats it
    as a chat file."""
    from corral.paths import file_patterns

    got = file_patterns(
        ["*.{chat,chatmd}", "~/chats/*.md", "$NOTES/*.{a,b{c,d}}", "odd{"], "/h", {"NOTES": "/n"}
    )
    assert got == ["*.chat", "*.chatmd", "/h/chats/*.md", "/n/*.a", "/n/*.bc", "/n/*.bd", "odd{"]


@pytest.mark.parametrize(
    ("name", "pattern", "matches"),
    [
        ("mise.dev.toml", "mise.*.toml", True),
        ("mise.dev.local.toml", "mise.*.toml", True),
        ("mise.toml", "mise.*.toml", False),  # the dots around `*` are its own
        ("mise.tomlx", "mise.*.toml", False),
        ("config.local.toml", "*.toml", True),
        ("a-b-c", "a*b*c", True),
        ("a-c-b", "a*b*c", False),
        ("exact", "exact", True),
        ("exactly", "exact", False),
    ],
)
def test_a_protected_names_star_matches_any_run_within_one_component(
    name: str, pattern: str, matches: bool
) -> None:
    assert paths.name_matches(name, pattern) is matches


def test_a_tilde_on_path_is_expanded_as_bash_does() -> None:
    """r27a TILDE: `~user/bin` was read as relative; bash expands it."""
    import pwd

    from corral.sandbox.resolution import _tilde

    me = pwd.getpwuid(os.getuid())
    assert _tilde("~", "/h") == "/h" and _tilde("~/bin", "/h") == "/h/bin"
    assert _tilde(f"~{me.pw_name}/bin", "/h") == me.pw_dir + "/bin"
    assert _tilde("~no-such-user-corral/bin", "/h") == "~no-such-user-corral/bin"


def test_the_secrets_walk_cache_does_not_carry_one_calls_deny_list_to_the_next(
    tmp_path: Path,
) -> None:
    """r29a CACHEPOISON: the walk left out what the call's deny list covered and was cached
    so: a chat's frontmatter adding `~/.nvm/versions` (a narrowing) filled the cache without
    the npmrc below, which later calls then showed."""
    from corral import config
    from corral.sandbox.resolution import PathContext, Resolution

    tool = tmp_path / ".nvm"
    npmrc = tool / "versions" / "node" / "v20" / "etc" / "npmrc"
    npmrc.parent.mkdir(parents=True)
    npmrc.write_text("//r/:_authToken=x\n")
    build = Resolution(
        config.resolve([]), PathContext(str(tmp_path), {"HOME": str(tmp_path)}, None)
    )
    assert build._secrets_inside([str(tool)], [(str(tool / "versions"), True)]) == []
    assert build._secrets_inside([str(tool)], []) == [(str(npmrc), False)]


def test_an_open_chats_path_is_one_pattern_whatever_its_name() -> None:
    """r32b BRACE: a chat named `{,,}` thirteen times was spelled out into 3**13 patterns on
    every request (the editor froze); BRACERW: `n{o}tes` and `$HOME` in a name were read as
    pattern syntax, so another path was kept read-only."""
    import fnmatch

    from corral.paths import file_patterns, literal_pattern

    for path in ("/w/" + "{,,}" * 13 + "x.chat", "/w/a$HOME.chat", "/w/t [1]*?.md", "~x/y"):
        (pattern,) = file_patterns([literal_pattern(path)], "/home/u", {"HOME": "/home/u"})
        assert fnmatch.fnmatchcase(path, pattern), (path, pattern)
    with pytest.raises(ValueError, match="more than 256 alternatives"):
        file_patterns(["{,,}" * 6], "/home/u", {})
    assert file_patterns(["*.{chat,md}", "[{]x"], "/h", {}) == ["*.chat", "*.md", "[{]x"]


def test_real_paths_answer_as_realpath_does(tmp_path: Path) -> None:
    """RealPaths remembers directories; its answers must be realpath's for every shape of
    path: links relative and absolute, chains, dangling, loops, a file on the way, missing
    parts, `..`, doubled and trailing slashes, relative paths."""
    t = tmp_path
    (t / "d" / "e").mkdir(parents=True)
    (t / "d" / "e" / "f").write_text("x")
    (t / "file").write_text("x")
    (t / "rel").symlink_to("d/e")
    (t / "abs").symlink_to(t / "d")
    (t / "chain").symlink_to("rel")
    (t / "d" / "up").symlink_to("../abs/e")
    (t / "dangling").symlink_to("nowhere/deeper")
    (t / "loop1").symlink_to("loop2")
    (t / "loop2").symlink_to("loop1")
    (t / "d" / "e" / "back").symlink_to(t)
    names = [
        "", "d", "d/e/f", "file", "file/below", "rel", "rel/f", "abs/e/f", "chain/f",
        "d/up/f", "d/up/missing/x", "dangling", "dangling/x", "loop1", "loop1/x", "missing",
        "missing/a/b", "d/e/back/rel/back/abs", "d/../rel", "./d", "d//e", "d/e/", "rel/../file",
    ]  # fmt: skip
    spellings = [str(t / n) if n else str(t) for n in names]
    spellings += ["/", "//", "relative/x", "/proc/self", "/proc/self/cwd"]
    real = RealPaths()
    for _ in range(2):  # remembered the second time round
        for path in spellings:
            assert real(path) == os.path.realpath(path), path


def test_the_secrets_walk_sees_a_file_changed_in_place(tmp_path: Path) -> None:
    """The walk's answers were trusted while no directory changed: a token appended to a
    shown git config, or a file made private, in place (the directory's time stays) stayed
    shown to every later run of the editor's long-lived engine. Its answers now rest on each
    file's state too, and are kept in corral's cache between runs."""
    from corral import config
    from corral.sandbox import resolution
    from corral.sandbox.resolution import Resolution

    tool = tmp_path / ".tool"
    (tool / "git").mkdir(parents=True)
    config_file = tool / "git" / "config"
    config_file.write_text("[core]\n")
    notes = tool / "notes.txt"
    notes.write_text("x\n")
    tool.chmod(0o755)
    build = Resolution(
        config.resolve([]), PathContext(str(tmp_path), {"HOME": str(tmp_path)}, None)
    )
    assert build._secrets_inside([str(tool)], []) == []
    stamp = os.stat(tool / "git").st_mtime_ns
    with open(config_file, "a") as f:
        f.write('[remote "o"]\n\turl = https://u:tok@example.invalid/x\n')
    notes.chmod(0o600)
    assert os.stat(tool / "git").st_mtime_ns == stamp  # (in place)
    found = build._secrets_inside([str(tool)], [])
    assert sorted(found) == [(str(config_file), False), (str(notes), False)]
    resolution._SECRETS.clear()  # (a new process: the answers come from the cache file)
    resolution._SECRETS_STATE["loaded"] = False
    assert sorted(build._secrets_inside([str(tool)], [])) == sorted(found)
