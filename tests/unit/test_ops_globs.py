"""ops.globs: gitignore-like pattern semantics, the order of checks, validation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral import config
from corral.errors import ConfigError
from corral.toolguard.ops.globs import Permissions, check, covers, invalid, matches


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        # * stays within one component
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/sub/a.py", False),
        ("*", "a", True),
        # ** spans any number of components, including none
        ("**/x", "x", True),
        ("**/x", "a/b/x", True),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/x/y/c", False),
        ("a/**", "a/x/y", True),
        ("a/**", "a", False),
        ("**", "any/thing/at/all", True),
        # ? is one character, never /
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file10.txt", False),
        ("a?b", "a/b", False),
        # sets and ranges, negated with ! or ^, never matching /
        ("[abc].txt", "b.txt", True),
        ("[abc].txt", "d.txt", False),
        ("[a-c]x", "bx", True),
        ("[!a-c]x", "dx", True),
        ("[!a-c]x", "ax", False),
        ("[^a]x", "bx", True),
        ("a[!x]b", "a/b", False),
        ("[]]x", "]x", True),
        # a pattern without / matches the name at any depth
        (".env", ".env", True),
        (".env", "deep/down/.env", True),
        ("*.pem", "certs/server.pem", True),
        ("*.pem", "certs/server.pem.txt", False),
        # a pattern with / (leading or in the middle) is anchored at the workspace
        ("/build", "build", True),
        ("/build", "sub/build", False),
        ("docs/*.md", "docs/a.md", True),
        ("docs/*.md", "x/docs/a.md", False),
        # a trailing / names a directory and everything in it, at any depth
        ("build/", "build", True),
        ("build/", "x/build/out/a.o", True),
        # escapes and regex metacharacters are literal
        ("a\\*b", "a*b", True),
        ("a\\*b", "axb", False),
        ("a+b(c).txt", "a+b(c).txt", True),
        ("a.b", "axb", False),
    ],
)
def test_matches(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


def test_covers_also_matches_the_directories_above() -> None:
    assert covers("secrets", "secrets/key")
    assert covers("/config", "config/deep/file")
    assert not matches("secrets", "secrets/key")
    assert not covers("secrets", "not-secrets/key")


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("", "empty"),
        ("/", "empty"),
        ("!keep.txt", "negation"),
        ("../x", "'..'"),
        ("a/./b", "'..'"),
        ("[abc", "unterminated"),
        ("[z-a]", "invalid glob"),
    ],
)
def test_invalid_patterns_are_named(pattern: str, why: str) -> None:
    found = invalid(pattern)
    assert found is not None and why in found


def test_permissions_collect_every_invalid_pattern_with_key_and_layer() -> None:
    with pytest.raises(ConfigError) as e:
        Permissions(deny=["[x"], write=["!a"], layers={"deny": "global", "write": "buffer"})
    keys = {(p.key, p.layer) for p in e.value.problems}
    assert keys == {("tools.permissions.deny", "global"), ("tools.permissions.write", "buffer")}


def test_no_patterns_allow_everything() -> None:
    perms = Permissions()
    for op in ("read", "write", "list"):
        assert check(perms, "any/file", op) is None
        assert check(perms, "/outside/file", op) is None


def test_deny_wins_over_allow_lists() -> None:
    perms = Permissions(deny=["**/.env"], write=["**"], read=["**"], envelope=["**"])
    for op in ("read", "write", "list"):
        refused = check(perms, "app/.env", op)
        assert refused is not None and refused.code == "denied-by-glob"


def test_deny_covers_a_whole_directory() -> None:
    perms = Permissions(deny=["secrets"], layers={"deny": "global"})
    refused = check(perms, "secrets/deep/key", "read")
    assert refused is not None
    assert refused.as_dict() == {
        "code": "denied-by-glob",
        "path": "secrets/deep/key",
        "rule": "tools.permissions.deny: 'secrets'",
        "layer": "global",
        "hint": "remove 'secrets' from tools.permissions.deny",
        "message": "secrets/deep/key matches the deny pattern 'secrets'",
    }


def test_write_globs_then_envelope() -> None:
    perms = Permissions(write=["src/**", "docs/**"], envelope=["src/**"])
    assert check(perms, "src/a.py", "write") is None
    refused = check(perms, "README.md", "write")
    assert refused is not None and refused.code == "not-in-write-globs"
    assert "tools.permissions.write" in refused.hint
    refused = check(perms, "docs/a.md", "write")
    assert refused is not None and refused.code == "outside-envelope"
    # reads ignore write globs and the envelope
    assert check(perms, "README.md", "read") is None


def test_read_globs_apply_to_content_not_to_listing() -> None:
    perms = Permissions(read=["src/**"])
    refused = check(perms, "notes.txt", "read")
    assert refused is not None and refused.code == "not-in-read-globs"
    assert check(perms, "notes.txt", "list") is None
    assert check(perms, "notes.txt", "write") is None


def test_allow_patterns_match_the_path_itself_only() -> None:
    # "src" allows writing src (a file of that name), not everything below a directory src:
    # an allow list never widens by a rule the user did not write.
    perms = Permissions(write=["src"])
    assert check(perms, "src", "write") is None
    assert check(perms, "src/a.py", "write") is not None


def test_paths_outside_the_workspace() -> None:
    perms = Permissions(deny=["*.pem", "**/.ssh/**", "/config/**", "keys/*"])
    # any-depth patterns reach outside the workspace...
    assert check(perms, "/etc/ssl/server.pem", "read") is not None
    assert check(perms, "/home/u/.ssh/id_rsa", "read") is not None
    # ...anchored ones do not
    assert check(perms, "/config/x", "read") is None
    assert check(perms, "/srv/keys/a", "read") is None
    # allow lists never match outside the workspace
    refused = check(Permissions(write=["**"]), "/elsewhere/file", "write")
    assert refused is not None and refused.code == "not-in-write-globs"
    assert "outside the workspace" in refused.message


def test_workspace_itself_is_not_denied_by_a_name_pattern() -> None:
    assert check(Permissions(deny=[".*"]), ".", "list") is None
    assert check(Permissions(deny=[".*"]), ".git/config", "list") is not None


def test_unknown_operation_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown operation"):
        check(Permissions(), "a", "delete")


def test_from_config_takes_the_lists_and_their_layers() -> None:
    layer = {"sandbox": {"mode": "read-only"}, "tools": {"permissions": {"write": ["src/**"]}}}
    cfg = config.resolve([config.Layer("global", layer)])
    perms = Permissions.from_config(cfg)
    assert perms.write == ("src/**",) and perms.deny == tuple(cfg["tools.permissions.deny"])
    assert perms.layers["write"] == "global"
    assert perms.layers["deny"] == "default"
    assert perms.layers["sandbox.policy.rw_paths"] == "mode read-only"
    refused = check(perms, "README", "write")
    assert refused is not None and refused.layer == "global"


def test_many_stars_against_a_long_name_answer_at_once() -> None:
    """r32b REDOS: `*a*a*a*a*a*a*a*a*b` from an untrusted chat's deny list (narrowing, so
    kept) against a model-chosen path of 60 `a`s: Python's backtracking regex took 102 s,
    the editor blocked. The matcher is linear in each component."""
    from corral.toolguard.ops import globs

    assert not globs.matches("*a*a*a*a*a*a*a*a*a*a*b", "a" * 300)
    assert not globs.covers("**/*a*a*a*a*a*a*a*a*b/**", "/".join(["a" * 60] * 20))
    assert globs.matches("*a*a*a*b", "xaxaxab")


def _regex_oracle(pattern: str) -> str:
    """The regular expression the matcher replaced, as the oracle of its meaning."""
    import re

    tree = pattern.endswith("/")
    segments = [s for s in pattern.strip("/").split("/") if s]
    if "/" not in pattern.rstrip("/"):
        segments.insert(0, "**")
    segments = [
        s for i, s in enumerate(segments) if not (s == "**" and segments[i - 1 : i] == ["**"])
    ]
    out = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "**":
            out.append(".+" if last else "(?:[^/]+/)*")
            continue
        text = "".join(
            "[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in segment
        )
        out.append(text + ("" if last else "/"))
    return "".join(out) + ("(?:/.+)?" if tree else "")


@settings(max_examples=400, deadline=None)
@given(
    pattern=st.lists(st.sampled_from(["a", "b", "*", "?", "/", "**/"]), min_size=1, max_size=7),
    path=st.lists(st.sampled_from(["a", "b", "ab", "ba", "aa"]), min_size=1, max_size=4),
)
def test_the_matcher_means_what_the_regex_meant(pattern: list[str], path: list[str]) -> None:
    import re

    from corral.toolguard.ops import globs

    glob = "".join(pattern)
    if globs.invalid(glob):
        return
    relpath = "/".join(path)
    expected = re.fullmatch(_regex_oracle(glob), relpath) is not None
    assert globs.matches(glob, relpath) == expected, (glob, relpath)


COMPONENTS = st.sampled_from(["a", "b", "ab", ".env", "x.pem", "**", "*", "a*", "?b", "[ab]"])


@settings(max_examples=400, deadline=None)
@given(
    pattern=st.lists(COMPONENTS, min_size=1, max_size=5).map("/".join),
    path=st.lists(st.sampled_from(["a", "b", "ab", ".env", "x.pem", "c"]), min_size=1,
                  max_size=7).map("/".join),
)  # fmt: skip
def test_covers_is_a_match_of_the_path_or_a_directory_above(pattern: str, path: str) -> None:
    """r88c GUARDQUADRATIC: covers() became one pass over the components; it must say what
    matching each prefix on its own said."""
    from corral.toolguard.ops.globs import _compile, _match, covers_compiled

    found = _compile(pattern)
    parts = path.split("/")
    expected = any(_match(found, parts[:i]) for i in range(len(parts), 0, -1))
    assert covers_compiled(found, path) == expected


def test_covers_takes_a_path_of_thousands_of_components() -> None:
    """r88c GUARDQUADRATIC: a 4 KiB path of `a/a/...` held the editor 30 s in the guard."""
    path = "/".join(["a"] * 8000)
    assert not covers("**/a/**/a/**/b/**/c", path)
    assert covers("**/a/**/a", path)
