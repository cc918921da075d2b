"""corral's reader of git's object store (changes/git_objects.py), against what git says."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest

from corral.changes.git_objects import (
    Budget,
    GitUnreadable,
    ObjectStore,
    changed_paths,
    index_paths,
    read_index,
    tree_of,
)

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
ID = ["-c", "user.name=u", "-c", "user.email=u@x"]


def _git(repo: Path, *args: str, input_text: str | None = None) -> str:
    done = subprocess.run(
        ["git", *ID, *args], cwd=repo, capture_output=True, text=True, check=True,
        input=input_text,
    )  # fmt: skip
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Thirty commits, packed with deltas, then one loose commit on top."""
    r = tmp_path / "r"
    r.mkdir()
    _git(r, "init", "-q")
    for i in range(30):
        d = r / f"d{i % 5}" / "e"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text("".join(f"{n}\n" for n in range(i * 50)))
        _git(r, "add", "-A")
        _git(r, "commit", "-qm", f"c{i}")
    _git(r, "gc", "-q", "--aggressive")
    (r / "sub").mkdir()
    (r / "sub" / ".envrc").write_text("x\n")
    _git(r, "add", "-A")
    _git(r, "commit", "-qm", "new")
    return r


def test_trees_are_read_from_packs_with_deltas_and_loose_objects(repo: Path) -> None:
    store = ObjectStore([str(repo / ".git" / "objects")])
    head = tree_of(store, _git(repo, "rev-parse", "HEAD").strip())
    every = _git(repo, "ls-tree", "-r", "-t", "--name-only", "HEAD").split()
    assert sorted(p for p, *_ in changed_paths(store, None, head, Budget(10_000))) == sorted(every)
    old = tree_of(store, _git(repo, "rev-parse", "HEAD~5").strip())
    diff = _git(repo, "diff-tree", "-r", "-t", "--name-only", "HEAD~5", "HEAD").split()
    assert sorted(p for p, *_ in changed_paths(store, old, head, Budget(10_000))) == sorted(diff)
    with pytest.raises(GitUnreadable, match="more than 20 tree entries"):
        list(changed_paths(store, None, head, Budget(20)))


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_index_entries_in_each_version(repo: Path, version: str) -> None:
    _git(repo, "update-index", "--index-version", version)
    found = index_paths(str(repo / ".git" / "index"))
    assert sorted(found) == sorted(_git(repo, "ls-files").split())


def test_what_cannot_be_read_is_an_error_not_a_guess(repo: Path, tmp_path: Path) -> None:
    store = ObjectStore([str(repo / ".git" / "objects")])
    with pytest.raises(GitUnreadable, match="not in the repository"):
        store.read("0" * 40)
    with pytest.raises(GitUnreadable, match="not an object name"):
        store.read("../../x")
    bad = tmp_path / "objects" / "ab"
    bad.mkdir(parents=True)
    (bad / ("c" * 38)).write_bytes(b"not zlib")
    with pytest.raises(GitUnreadable, match="corrupt"):
        ObjectStore([str(tmp_path / "objects")]).read("ab" + "c" * 38)
    (tmp_path / "index").write_bytes(b"DIRC\0\0\0\2\0\0\0\5")
    with pytest.raises(GitUnreadable, match="malformed index"):
        index_paths(str(tmp_path / "index"))


def _loose(objects: Path, kind: str, body: bytes) -> str:
    import hashlib
    import zlib

    data = f"{kind} {len(body)}".encode() + b"\0" + body
    sha = hashlib.sha1(data).hexdigest()
    (objects / sha[:2]).mkdir(parents=True, exist_ok=True)
    (objects / sha[:2] / sha[2:]).write_bytes(zlib.compress(data))
    return sha


def test_a_tree_named_again_and_again_is_bounded_by_entries(tmp_path: Path) -> None:
    """r32a TREEBOMB: the budget counted trees: 20,000 names of one tree of 1,000 entries
    made 20 million paths (10 minutes, 1.9 GB, the user's lock held)."""
    objects = tmp_path / "objects"
    blob = bytes.fromhex(_loose(objects, "blob", b"x"))
    inner = _loose(objects, "tree", b"".join(b"100644 f%04d\0" % i + blob for i in range(1000)))
    outer = _loose(
        objects, "tree", b"".join(b"40000 d%05d\0" % i + bytes.fromhex(inner) for i in range(500))
    )
    store = ObjectStore([str(objects)])
    with pytest.raises(GitUnreadable, match="more than 200000 tree entries"):
        for _ in changed_paths(store, None, outer, Budget(200_000)):
            pass


def test_pack_indexes_are_mapped_not_read(tmp_path: Path) -> None:
    """r32a IDXBOMB: eight sparse 256 MiB pack indexes (32 KB on disk) were read whole
    for one lookup: 2.1 GB of memory."""
    import resource

    pack = tmp_path / "objects" / "pack"
    pack.mkdir(parents=True)
    for i in range(8):
        with open(pack / f"pack-{i}.idx", "wb") as f:
            f.write(b"\377tOc\0\0\0\2")
            f.truncate(256 << 20)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(GitUnreadable):
        ObjectStore([str(tmp_path / "objects")]).read("ab" * 20)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024, grown_kib


def test_an_index_entry_whose_length_and_name_disagree_is_unreadable(repo: Path) -> None:
    """r32a (by reading): git takes an entry's name by the length in its flags; corral read
    it to the NUL. A longer name before the NUL was another path to corral than to git."""
    index = repo / ".git" / "index"
    _git(repo, "update-index", "--index-version", "2")
    data = bytearray(index.read_bytes())
    flags = int.from_bytes(data[12 + 60 : 12 + 62], "big")
    data[12 + 60 : 12 + 62] = ((flags & ~0xFFF) | ((flags & 0xFFF) - 1)).to_bytes(2, "big")
    index.write_bytes(bytes(data))
    with pytest.raises(GitUnreadable, match="name length"):
        index_paths(str(index))


def test_a_pack_git_only_freshened_is_not_checked_again(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """r33b: git re-creating an object it has packed only touches the pack's time, which
    copies the whole pack into the change set: it was verified again each time (3.4 s for
    28,000 objects) or, past the object bound, held as unreadable."""
    import shutil
    import time

    from corral.changes import git_objects
    from corral.changes.rules import Checker, verdicts
    from corral.changes.scan import scan

    monkeypatch.setattr(git_objects, "MAX_PACK_OBJECTS", 1)
    upper = tmp_path / "upper"
    packs = sorted((repo / ".git" / "objects" / "pack").glob("pack-*.pack"))
    staged = upper / ".git" / "objects" / "pack"
    staged.mkdir(parents=True)
    shutil.copy2(packs[0], staged / packs[0].name)
    plan = {
        "roots": [str(repo)], "hidden": [], "visible": [], "protected": [],
        "protected_names": [".envrc"], "chat_patterns": [], "max_file_bytes": 0,
        "created_ns": time.time_ns(),
    }  # fmt: skip
    entries, problems = scan(str(repo), str(upper))
    assert problems == []
    found = {e.rel: r for e, r in verdicts(Checker(plan, "corral apply ID"), entries)}
    assert found[f".git/objects/pack/{packs[0].name}"] is None
    (staged / packs[0].name).write_bytes(packs[0].read_bytes()[:-1] + b"\0")
    entries, _ = scan(str(repo), str(upper))
    found = {e.rel: r for e, r in verdicts(Checker(plan, "corral apply ID"), entries)}
    assert found[f".git/objects/pack/{packs[0].name}"] is not None


def test_index_offset_tables_must_agree_with_the_entries(repo: Path) -> None:
    """r34a EOIE: git reading an index with threads starts its extensions where EOIE says
    and parses entries from IEOT's offsets: a cache tree hidden in another extension's body
    was read by git, not by corral. Offsets that disagree with the entries are unreadable."""
    import hashlib

    _git(
        repo, "-c", "index.recordEndOfIndexEntries=true", "-c", "index.recordOffsetTable=true",
        "-c", "index.threads=2", "update-index", "--index-version", "2", "--really-refresh",
    )  # fmt: skip
    index = repo / ".git" / "index"
    data = index.read_bytes()
    assert b"EOIE" in data and b"IEOT" in data, "git wrote no offset tables"
    read_index(str(index))  # agreeing tables: read
    at = data.rindex(b"EOIE") + 8
    forged = bytearray(data[:-20])
    forged[at : at + 4] = (int.from_bytes(forged[at : at + 4], "big") + 8).to_bytes(4, "big")
    index.write_bytes(bytes(forged) + hashlib.sha1(bytes(forged)).digest())
    with pytest.raises(GitUnreadable, match="not where it says"):
        read_index(str(index))


def test_each_stage_of_a_conflicted_path_is_an_entry(repo: Path) -> None:
    """r34a STAGES: entries were keyed by path, so stage 3 hid stage 2 (`git checkout
    --ours` writes stage 2)."""
    blob = _git(repo, "rev-parse", "HEAD:sub/.envrc").strip()
    other = _git(repo, "hash-object", "-w", "--stdin", input_text="other\n").strip()
    lines = [f"0 {'0' * 40}\tsub/.envrc"] + [
        f"100644 {b} {stage}\tsub/.envrc" for stage, b in ((1, blob), (2, other), (3, blob))
    ]
    _git(repo, "update-index", "--index-info", input_text="\n".join(lines) + "\n")
    found = read_index(str(repo / ".git" / "index")).entries
    assert found["sub/.envrc\0" + "2"] == (0o100644, other)
    assert found["sub/.envrc\0" + "3"] == (0o100644, blob)


def _v4_index(entries: list[tuple[str, bytes, bytes, int]], ieot: list[tuple[int, int]]) -> bytes:
    """A version 4 index of (object, strip count as written, name suffix, length flag)
    entries; with `ieot`, an offset table of (first entry, count) blocks."""
    import hashlib
    import struct

    data, starts = bytearray(b"DIRC" + struct.pack(">II", 4, len(entries))), []
    for sha, strip, suffix, length in entries:
        starts.append(len(data))
        stat = struct.pack(">IIIIIIIIII", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0)
        data += stat + bytes.fromhex(sha) + struct.pack(">H", length) + strip + suffix + b"\0"
    if ieot:
        body = struct.pack(">I", 1) + b"".join(
            struct.pack(">II", starts[first], count) for first, count in ieot
        )
        data += b"IEOT" + struct.pack(">I", len(body)) + body
    return bytes(data) + hashlib.sha1(bytes(data)).digest()


def test_a_v4_index_names_what_git_names(repo: Path) -> None:
    """r37a V4STRIP: an index v4 strip count is git's own varint (`80 01` is 129, not 128):
    corral read `zz/-.pdbrc` where git read and `git checkout -- .` wrote `zz/.pdbrc`. A
    strip past the name before is unreadable, and so is an offset table whose block starts
    with a name that takes from the one before (git with threads starts each block fresh)."""
    blob = _git(repo, "hash-object", "-w", "--stdin", input_text="x\n").strip()
    long = b"zz/" + b"-" * 129
    index = repo / ".git" / "index"
    index.write_bytes(_v4_index([
        (blob, b"\x00", b"a.py", 4),
        (blob, b"\x04", long, len(long)),
        (blob, b"\x80\x01", b".pdbrc", 0xFFF),
        (blob, b"\x06", b"b", 4),  # (zz/b)
    ], []))  # fmt: skip
    git_reads = [line.split("\t", 1)[1] for line in _git(repo, "ls-files", "-s").splitlines()]
    assert "zz/.pdbrc" in git_reads
    assert sorted(read_index(str(index)).entries) == sorted(git_reads)
    index.write_bytes(_v4_index([(blob, b"\x00", b"a", 1), (blob, b"\x05", b"b", 1)], []))
    with pytest.raises(GitUnreadable, match="strips more"):
        read_index(str(index))
    fresh = [(blob, b"\x00", b"aa", 2), (blob, b"\x02", b"b", 1), (blob, b"\x00", b"c", 2)]
    index.write_bytes(_v4_index(fresh, [(0, 1), (1, 2)]))
    read_index(str(index))  # (each block's first name takes nothing: read)
    index.write_bytes(_v4_index(fresh, [(0, 2), (2, 1)]))
    with pytest.raises(GitUnreadable, match="offsets disagree"):
        read_index(str(index))  # (sequentially `bc`, with threads `c`)


def test_resolve_undo_stages_are_read_with_their_objects(repo: Path) -> None:
    """r37a: only the paths of a REUC extension were compared, so a stage's object changed
    for a path the host's already listed passed (`git checkout -m` brings it back)."""
    import hashlib
    import struct

    blob = _git(repo, "hash-object", "-w", "--stdin", input_text="x\n").strip()
    index = repo / ".git" / "index"
    data = index.read_bytes()[:-20]
    body = b"sub/.envrc\x00100644\x000\x00100644\x00" + bytes.fromhex(blob) * 2
    data += b"REUC" + struct.pack(">I", len(body)) + body
    index.write_bytes(data + hashlib.sha1(data).digest())
    assert read_index(str(index)).undo == [("sub/.envrc", 0o100644, blob)] * 2
    short = data[: -len(body) - 8]
    body = body[:-20]  # (two stages with a mode, one object)
    short += b"REUC" + struct.pack(">I", len(body)) + body
    index.write_bytes(short + hashlib.sha1(short).digest())
    with pytest.raises(GitUnreadable, match="resolve-undo"):
        read_index(str(index))


@pytest.mark.parametrize(
    "entries",
    [
        [(b"150000", b"lib")],  # r38a ODDMODE: git reads it as a submodule
        [(b"100664", b"a")],
        [(b"40755", b"d")],
        [(b"40000", b"zz"), (b"40000", b"zz")],  # r38a DUPTREE: git checks out both
        [(b"100644", b"zz"), (b"40000", b"zz")],
        [(b"100644", b"b"), (b"100644", b"a")],  # (out of git's order)
        [(b"40000", b"a"), (b"100644", b"a.b")],  # (a directory sorts as `a/`, after `a.b`)
        [(b"100644", b".GIT")],
        [(b"100644", b"..")],
    ],
    ids=[
        "150000",
        "100664",
        "40755",
        "dup-dir",
        "file-and-dir",
        "order",
        "dir-order",
        "git",
        "dotdot",
    ],
)
def test_a_tree_git_would_not_write_is_unreadable(
    tmp_path: Path, entries: list[tuple[bytes, bytes]]
) -> None:
    """Modes as git spells them, names once each in git's order: anything else is read by
    git otherwise than by a dictionary of names (r38a ODDMODE, DUPTREE)."""
    from corral.changes.git_objects import tree_entries

    objects = tmp_path / "objects"
    blob = bytes.fromhex(_loose(objects, "blob", b"x"))
    tree = _loose(objects, "tree", b"".join(m + b" " + n + b"\0" + blob for m, n in entries))
    with pytest.raises(GitUnreadable):
        tree_entries(ObjectStore([str(objects)]), tree)
    ok = [(b"100644", b"a"), (b"40000", b"a.b"), (b"100644", b"a0"), (b"160000", b"lib")]
    fine = _loose(objects, "tree", b"".join(m + b" " + n + b"\0" + blob for m, n in ok))
    assert list(tree_entries(ObjectStore([str(objects)]), fine)) == [n for _, n in ok]


def test_an_index_is_read_as_git_reads_it_extended_flags_and_one_cache_tree_root(
    repo: Path,
) -> None:
    """r38a EXTV2: git skips an entry's extended flags in a version 2 index too, corral read
    the name two bytes early; CTROOT: a TREE extension with a second top node was corral's
    root and not git's."""
    import hashlib
    import struct

    blob = _git(repo, "hash-object", "-w", "--stdin", input_text="x\n").strip()
    stat = struct.pack(">IIIIIIIIII", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0)
    entry = stat + bytes.fromhex(blob) + struct.pack(">H", 0x4000 | 6) + b"\0\0" + b".pdbrc"
    entry += b"\0" * (8 - (len(entry) % 8))
    data = b"DIRC" + struct.pack(">II", 2, 1) + entry
    index = repo / ".git" / "index"
    index.write_bytes(data + hashlib.sha1(data).digest())
    git_reads = [line.split("\t", 1)[1] for line in _git(repo, "ls-files", "-s").splitlines()]
    assert git_reads == [".pdbrc"] == list(read_index(str(index)).entries)
    tree = _git(repo, "write-tree").strip()
    node = b"\0" + b"1 0\n" + bytes.fromhex(tree)
    body = node + node
    with_tree = data + b"TREE" + struct.pack(">I", len(body)) + body
    index.write_bytes(with_tree + hashlib.sha1(with_tree).digest())
    with pytest.raises(GitUnreadable, match="more than one root"):
        read_index(str(index))


@pytest.mark.parametrize(
    "name",
    [
        b".git/./hooks/post-checkout",
        b"../x",
        b"a//b",
        b"/abs",
        b"a/.GIT/config",
        b".git. /x",
        b"git~1/config",
        b"a\\b",
        b"x/./y",
        b".g\xe2\x80\x8cit/hooks/x",
    ],
)
def test_an_index_path_git_would_not_add_is_unreadable(repo: Path, name: bytes) -> None:
    """r39a IDXPATH: git checks a path when it adds it, not when it reads an index: an entry
    `.git/./hooks/post-checkout` or `../.local/bin/ls` was written where it says at the
    user's `git checkout -- .`, and corral compared it unnormalised."""
    import hashlib
    import struct

    blob = _git(repo, "hash-object", "-w", "--stdin", input_text="x\n").strip()
    stat = struct.pack(">IIIIIIIIII", 0, 0, 0, 0, 0, 0, 0o100755, 0, 0, 0)
    entry = stat + bytes.fromhex(blob) + struct.pack(">H", len(name)) + name
    entry += b"\0" * (8 - (len(entry) % 8))
    data = b"DIRC" + struct.pack(">II", 2, 1) + entry
    index = repo / ".git" / "index"
    index.write_bytes(data + hashlib.sha1(data).digest())
    with pytest.raises(GitUnreadable, match="path git would not write"):
        read_index(str(index))


@pytest.mark.parametrize("node", [
    b"\x000_1 0\n", b"\x00-1 1\n", b"\x00-1 +0\n",
    # r52a CTREEWRAP: git keeps strtol's long in an int, -4294967295 is 1 to it
    b"\x00-1 2\njson\x00-4294967295 0\n" + b"t" * 20 + b"docs\x00-1 0\n",
    b"\x004294967295 0\n" + b"t" * 20,
    b"\x00-1 4294967297\n",
])  # fmt: skip
def test_a_cache_tree_is_read_only_as_git_reads_it(node: bytes) -> None:
    """r51a CTREEINT: int() read a count `0_1` as 1 where git's strtol reads 0, and a cache
    tree ending before the subtrees it announced passed: a subtree corral judged at
    docs/json was json/ to git's commit."""
    from corral.changes.git_objects import GitUnreadable, _cache_tree

    with pytest.raises(GitUnreadable):
        _cache_tree(node, {}, {})
    found: dict[str, str] = {}
    _cache_tree(b"\x00-1 0\n", found, {})
    assert found == {}


@pytest.mark.parametrize("names", [[b"pyproject.toml", b"pyproject.toml"], [b"b", b"a"]])
def test_an_index_is_read_only_in_gits_order(repo: Path, names: list[bytes]) -> None:
    """r55a DUPIDX: a path listed twice kept the last entry for corral, where `git restore`
    writes the first (a pyproject.toml with a mypy plugin); entries out of git's order are
    another index to git than to corral."""
    import hashlib
    import struct

    blob = _git(repo, "hash-object", "-w", "--stdin", input_text="x\n").strip()
    stat = struct.pack(">IIIIIIIIII", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0)
    entries = b""
    for name in names:
        entry = stat + bytes.fromhex(blob) + struct.pack(">H", len(name)) + name
        entries += entry + b"\0" * (8 - (len(entry) % 8))
    data = b"DIRC" + struct.pack(">II", 2, len(names)) + entries
    index = repo / ".git" / "index"
    index.write_bytes(data + hashlib.sha1(data).digest())
    with pytest.raises(GitUnreadable, match="not in git's order"):
        read_index(str(index))


def test_a_ref_name_that_is_not_utf8_resolves_as_git_resolves_it(tmp_path: Path) -> None:
    """r55a HEADUTF: `ref: refs/heads/master<0xA0>` was decoded with "replace" and led
    nowhere for corral (no HEAD: the index's moves and the root-commit check skipped); git
    follows it to the branch."""
    from corral.changes.git_history import _resolve, _text

    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_bytes(b"ref: refs/heads/master\xa0\n")
    (git / "refs" / "heads").joinpath(os.fsdecode(b"master\xa0")).write_text("a" * 40 + "\n")
    assert _resolve([str(git)], _text(str(git / "HEAD"))) == "a" * 40
