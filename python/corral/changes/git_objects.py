"""A reader of git's object store, enough to list the paths a commit or an index would put
in a work tree: loose objects and packs (version 2 index, deltas), SHA-1 only. No git
process is started. Everything read was possibly written by a sandboxed command: sizes,
depths and counts are bounded, and whatever cannot be read is GitUnreadable (its caller
holds the change set).
"""

from __future__ import annotations

import os
import struct
import zlib

from corral.paths import open_regular, read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from mmap import mmap as Buffer
    from typing import BinaryIO

MAX_OBJECT = 64 << 20  # bytes of one inflated object
MAX_DELTA_DEPTH = 64
MAX_INDEX_ENTRIES = 2_000_000


class GitUnreadable(Exception):
    """An object that is missing, malformed, too large, or in a format not read here."""


NOT_THERE = "is not in the repository"  # (said of an object git pruned: see finish.settle)


class ObjectStore:
    """The objects of a repository as a change set would leave them: its object directories
    in order (the staging area's first, then the host's)."""

    def __init__(self, directories: list[str]) -> None:
        self.directories = directories
        self._packs: list[tuple[str, Buffer]] | None = None  # (pack path, its .idx mapped)
        # trees read, by name (what a name holds never changes: each walk of a check reads
        # the same top trees again)
        self.trees: dict[str, dict[bytes, tuple[int, str]]] = {}

    def read(self, sha: str, depth: int = 0) -> tuple[str, bytes]:
        """(type, data) of an object: commit, tree, blob or tag (`depth`: of the delta chain
        that asked for it)."""
        if len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha):
            raise GitUnreadable(f"not an object name: {sha[:60]!r}")
        for directory in self.directories:
            path = os.path.join(directory, sha[:2], sha[2:])
            try:
                raw = read_regular(path, MAX_OBJECT, follow=False)
            except FileNotFoundError:
                continue
            except OSError as e:
                raise GitUnreadable(f"object {sha}: {e.strerror}") from None
            return _loose(raw, sha)
        for pack, index in self._pack_indexes():
            offset = _find(index, bytes.fromhex(sha))
            if offset is not None:
                with os.fdopen(open_regular(pack, follow=False), "rb") as f:
                    kind_, data_ = _pack_object(f, offset, self, depth)
                if _hash(kind_, data_) != sha:
                    raise GitUnreadable(f"packed object {sha} holds another object")
                return kind_, data_
        raise GitUnreadable(f"object {sha} {NOT_THERE}")

    def _pack_indexes(self) -> list[tuple[str, Buffer]]:
        if self._packs is None:
            self._packs = []
            for directory in self.directories:
                pack_dir = os.path.join(directory, "pack")
                try:
                    names = sorted(os.listdir(pack_dir))
                except OSError:
                    continue
                for name in names:
                    if name.endswith(".idx"):
                        index = _map(os.path.join(pack_dir, name))
                        if index is None:
                            continue
                        if index[:8] != b"\377tOc\0\0\0\2":
                            raise GitUnreadable(f"a pack index of another version: {name}")
                        self._packs.append((os.path.join(pack_dir, name[:-4] + ".pack"), index))
        return self._packs


def _map(path: str) -> Buffer | None:
    """A pack index mapped, not read: what a lookup touches is all that is loaded (review
    r32a IDXBOMB: eight sparse 256 MiB indexes read whole took 2 GB)."""
    import mmap

    try:
        with os.fdopen(open_regular(path, follow=False), "rb") as f:
            if os.fstat(f.fileno()).st_size < 8 + 256 * 4:
                return None
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def _inflate(raw: bytes) -> bytes:
    d = zlib.decompressobj()
    try:
        data = d.decompress(raw, MAX_OBJECT + 64)
    except zlib.error as e:
        raise GitUnreadable(f"a corrupt object: {e}") from None
    if d.unconsumed_tail:
        raise GitUnreadable("an object too large to read")
    return data


def _find(index: Buffer, sha: bytes) -> int | None:
    """The offset in its pack of an object, from a version 2 pack index."""
    try:
        first = sha[0]
        lo = struct.unpack_from(">I", index, 8 + 4 * (first - 1))[0] if first else 0
        hi = struct.unpack_from(">I", index, 8 + 4 * first)[0]
        count = struct.unpack_from(">I", index, 8 + 4 * 255)[0]
        names = 8 + 256 * 4
        while lo < hi:
            mid = (lo + hi) // 2
            here = index[names + 20 * mid : names + 20 * mid + 20]
            if here == sha:
                offsets = names + count * 24  # past the names and their CRCs
                offset = struct.unpack_from(">I", index, offsets + 4 * mid)[0]
                if offset & 0x80000000:
                    large = offsets + count * 4 + 8 * (offset & 0x7FFFFFFF)
                    offset = struct.unpack_from(">Q", index, large)[0]
                return int(offset)
            if here < sha:
                lo = mid + 1
            else:
                hi = mid
    except struct.error:
        raise GitUnreadable("a malformed pack index") from None
    return None


TYPES = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}


def _pack_object(f: BinaryIO, offset: int, store: ObjectStore, depth: int) -> tuple[str, bytes]:
    if depth > MAX_DELTA_DEPTH:
        raise GitUnreadable("a delta chain too long")
    f.seek(offset)
    head = f.read(32)
    if not head:
        raise GitUnreadable("an offset past the end of a pack")
    kind = (head[0] >> 4) & 7
    size = head[0] & 15
    i, shift = 1, 4
    while head[i - 1] & 0x80:
        if i >= len(head) or shift > 60:
            raise GitUnreadable("a malformed pack entry")
        size |= (head[i] & 0x7F) << shift
        shift += 7
        i += 1
    if size > MAX_OBJECT:
        raise GitUnreadable("an object too large to read")
    base: tuple[str, bytes] | None = None
    if kind == 6:  # a delta on an object earlier in this pack
        back, i = _offset_varint(head, i)
        if back <= 0 or back > offset:
            raise GitUnreadable("a delta base outside its pack")
        base = _pack_object(f, offset - back, store, depth + 1)
    elif kind == 7:  # a delta on an object named by its hash
        name = head[i : i + 20].hex()
        i += 20
        base = store.read(name, depth + 1)
    elif kind not in TYPES:
        raise GitUnreadable(f"a pack entry of type {kind}")
    f.seek(offset + i)
    d = zlib.decompressobj()
    chunks, total = [], 0
    while not d.eof:
        block = f.read(65536)
        if not block:
            raise GitUnreadable("a pack entry cut short")
        try:
            out = d.decompress(block, MAX_OBJECT + 1 - total)
        except zlib.error as e:
            raise GitUnreadable(f"a corrupt pack entry: {e}") from None
        chunks.append(out)
        total += len(out)
        if total > MAX_OBJECT:
            raise GitUnreadable("an object too large to read")
    data = b"".join(chunks)
    if base is None:
        return TYPES[kind], data
    return base[0], _apply_delta(base[1], data)


def _offset_varint(data: bytes | memoryview, i: int) -> tuple[int, int]:
    """(value, where it ends) of git's other varint (varint.c, a pack's delta offsets and an
    index v4's strip counts): big-endian 7-bit groups, each continuation adding one, so
    `80 01` is 129 (r37a V4STRIP: read as the little-endian kind, 128 to corral, 129 to
    git, named another file)."""
    if i >= len(data):
        raise GitUnreadable("a malformed number")
    byte = data[i]
    value = byte & 0x7F
    while byte & 0x80:
        i += 1
        if i >= len(data) or value >= 1 << 56:
            raise GitUnreadable("a malformed number")
        byte = data[i]
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, i + 1


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if i >= len(data) or shift > 60:
            raise GitUnreadable("a malformed delta")
        byte = data[i]
        value |= (byte & 0x7F) << shift
        shift += 7
        i += 1
        if not byte & 0x80:
            return value, i


def _apply_delta(base: bytes, delta: bytes) -> bytes:
    source_size, i = _varint(delta, 0)
    target_size, i = _varint(delta, i)
    if source_size != len(base) or target_size > MAX_OBJECT:
        raise GitUnreadable("a delta that does not fit its base")
    out = bytearray()
    while i < len(delta):
        op = delta[i]
        i += 1
        if op & 0x80:  # copy from the base
            start = size = 0
            for bit in range(4):
                if op & (1 << bit):
                    start |= delta[i] << (8 * bit)
                    i += 1
            for bit in range(3):
                if op & (0x10 << bit):
                    size |= delta[i] << (8 * bit)
                    i += 1
            size = size or 0x10000
            if start + size > len(base):
                raise GitUnreadable("a delta copying past its base")
            out += base[start : start + size]
        elif op:  # insert the next op bytes
            out += delta[i : i + op]
            i += op
        else:
            raise GitUnreadable("a malformed delta")
        if len(out) > target_size:
            raise GitUnreadable("a delta longer than it says")
    if len(out) != target_size:
        raise GitUnreadable("a delta shorter than it says")
    return bytes(out)


def tree_of(store: ObjectStore, sha: str) -> str:
    """The tree a commit (or a tag of one, or a tree itself) names."""
    for _ in range(8):
        kind, data = store.read(sha)
        if kind == "tree":
            return sha
        if kind not in ("commit", "tag"):
            raise GitUnreadable(f"{sha} names a {kind}, not a commit")
        first = data.split(b"\n", 1)[0].split(b" ")
        if len(first) != 2 or first[0] not in (b"tree", b"object"):
            raise GitUnreadable(f"a malformed {kind} {sha}")
        sha = first[1].decode("ascii", "replace")
    raise GitUnreadable("tags on tags too deep")


INDEX_MODES = frozenset({0o100644, 0o100755, 0o120000, 0o160000, 0o040000})  # (040000: sparse)
# a tree entry's mode as git writes it; git reads any other as a file, a directory or, for
# every mode that is neither (150000, 170000), a submodule (r38a ODDMODE): held
TREE_MODES = {b"100644": 0o100644, b"100755": 0o100755, b"120000": 0o120000,
              b"40000": 0o40000, b"160000": 0o160000}  # fmt: skip
BAD_NAMES = frozenset({b"", b".", b"..", b".git"})


def _bad_name(name: bytes) -> bool:
    """A path component git's checks refuse when it adds an entry (verify_path, with the
    NTFS and HFS protections git turns on by default): `.`, `..`, `.git` however spelled
    (`.GIT`, `.git. `, `git~1`, `.git:x`), a backslash. git does not check an index it reads:
    `.git/./hooks/x` or `../x` in one is written where it says (r38a IDXPATH)."""
    lowered = name.lower()
    return (
        lowered in BAD_NAMES
        or lowered.rstrip(b" .") == b".git"
        or lowered == b"git~1"
        or lowered.startswith(b".git:")
        or b"\\" in name
        or b"\xe2\x80\x8c" in name  # (U+200C: HFS+ ignores it, `.g\u200cit`)
        or b"\xe2\x80\x8d" in name
    )


def check_path(path: bytes) -> None:
    """GitUnreadable for an index or resolve-undo path git would never have added."""
    if any(_bad_name(part) for part in path.split(b"/")):
        raise GitUnreadable("an index path git would not write")


def tree_entries(store: ObjectStore, sha: str) -> dict[bytes, tuple[int, str]]:
    """name -> (mode, object) of one tree, read only as git writes it: modes as git spells
    them, names in git's order (a directory's as if it ended in `/`), each once. Anything
    else (a name twice, of which git checks out both and a dict keeps one, r38a DUPTREE) is
    GitUnreadable, as `git fsck` would flag it."""
    known = store.trees.get(sha)
    if known is not None:
        return known
    kind, data = store.read(sha)
    if kind != "tree":
        raise GitUnreadable(f"{sha} is a {kind}, not a tree")
    entries: dict[bytes, tuple[int, str]] = {}
    i, previous = 0, b""
    while i < len(data):
        space = data.find(b" ", i)
        nul = data.find(b"\0", space)
        if space < 0 or nul < 0 or nul + 21 > len(data):
            raise GitUnreadable(f"a malformed tree {sha}")
        mode = TREE_MODES.get(data[i:space])
        name = data[space + 1 : nul]
        if mode is None or _bad_name(name) or b"/" in name or name in entries:
            raise GitUnreadable(f"a tree git would not write: {sha}")
        key = name + b"/" if mode == 0o40000 else name
        if key <= previous:
            raise GitUnreadable(f"a tree out of git's order: {sha}")
        previous = key
        entries[name] = (mode, data[nul + 1 : nul + 21].hex())
        i = nul + 21
    store.trees[sha] = entries
    return entries


class Budget:
    """Entries of trees looked at, over every walk of one check: past `limit`, GitUnreadable
    (review r32a: 20,000 trees each naming one tree of 1,000 entries made 20 million paths)."""

    def __init__(self, limit: int) -> None:
        self.left = limit
        self.limit = limit

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise GitUnreadable(f"more than {self.limit} tree entries to look at")


def changed_paths(
    store: ObjectStore, old: str | None, new: str, budget: Budget, prefix: str = "",
    new_files: bool = False,
) -> Iterator[tuple[str, int, str]]:  # fmt: skip
    """(path, mode, object) of what the tree `new` adds or changes against `old` (None:
    every path of `new`), looking only into subtrees that differ, as they are found;
    `prefix`: where `new` stands. `new_files`: only files and links `old` has no file or
    link at (no directories, nothing changed in place)."""
    stack = [(prefix, old, new)]
    while stack:
        prefix, before, after = stack.pop()
        was = tree_entries(store, before) if before else {}
        now = tree_entries(store, after)
        budget.spend(len(now) + 1)
        for name, (mode, sha) in now.items():
            prior = was.get(name)
            if prior is not None and prior == (mode, sha):
                continue
            path = prefix + name.decode("utf-8", "surrogateescape")
            tree = mode & 0o170000 == 0o040000  # (as git reads it: 40755 too, r33a MODETREE)
            was_tree = prior is not None and prior[0] & 0o170000 == 0o040000
            if not new_files or not (tree or (prior is not None and not was_tree)):
                yield path, mode, sha
            if tree:
                stack.append((path + "/", prior[1] if was_tree and prior else None, sha))


def gone_directory(store: ObjectStore, old: str, new: str, budget: Budget) -> str | None:
    """The first directory of tree `old` that tree `new` has not (or has as something
    else), looking only into subtrees that differ; None when every one is still there."""
    return next(gone_directories(store, old, new, budget), None)


def gone_directories(store: ObjectStore, old: str, new: str, budget: Budget) -> Iterator[str]:
    """Each directory of tree `old` that tree `new` has not (or has as something else), not
    the ones below it, looking only into subtrees that differ."""
    stack = [("", old, new)]
    while stack:
        prefix, before, after = stack.pop()
        now = tree_entries(store, after)
        was = tree_entries(store, before)
        budget.spend(len(was) + 1)
        for name, (mode, sha) in was.items():
            if mode & 0o170000 != 0o040000:
                continue
            path = prefix + name.decode("utf-8", "surrogateescape")
            there = now.get(name)
            if there is None or there[0] & 0o170000 != 0o040000:
                yield path
            elif there[1] != sha:
                stack.append((path + "/", sha, there[1]))


def entry_at(store: ObjectStore, tree: str | None, path: str) -> tuple[int, str] | None:
    """(mode, object) of what `tree` has at `path`, or None."""
    directory, _, name = path.rpartition("/")
    below = subtree(store, tree, directory)
    if below is None:
        return None
    return tree_entries(store, below).get(name.encode("utf-8", "surrogateescape"))


def subtree(store: ObjectStore, tree: str | None, path: str) -> str | None:
    """The tree at `path` below `tree`, or None."""
    for name in [n for n in path.split("/") if n]:
        if tree is None:
            return None
        entry = tree_entries(store, tree).get(name.encode("utf-8", "surrogateescape"))
        tree = entry[1] if entry is not None and entry[0] & 0o170000 == 0o040000 else None
    return tree


def parents(store: ObjectStore, sha: str) -> list[str]:
    """The parents a commit names, read as git reads them: only the `parent <id>` lines
    right after its `tree` line. A `parent` line anywhere else in the header is held: git
    reads none there, and corral took one after `committer` for a parent (r52a HIDPARENT:
    a hidden parent naming your branch made a merge with it look done)."""
    kind, data = store.read(sha)
    if kind != "commit":
        raise GitUnreadable(f"{sha} is a {kind}, not a commit")
    lines = data.split(b"\n\n", 1)[0].split(b"\n")
    found, at = [], 1
    while at < len(lines) and lines[at].startswith(b"parent "):
        name = lines[at][7:]
        if len(name) != 40 or not all(c in b"0123456789abcdefABCDEF" for c in name):
            raise GitUnreadable(f"commit {sha[:12]} with a parent line git cannot read")
        found.append(name.decode("ascii").lower())
        at += 1
    if any(line.startswith(b"parent ") for line in lines[at:]):
        raise GitUnreadable(f"commit {sha[:12]} with a parent line where git reads none")
    return found


class Index:
    """What an index file says: its entries (path -> (mode, object)), the trees its
    cache-tree extension names (path of a directory -> tree: `git commit` writes these as
    they are, r33a CTREE) and the paths its resolve-undo extension can bring back
    (`git checkout -m`)."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[int, str]] = {}
        self.trees: dict[str, str] = {}
        self.tree_counts: dict[str, int] = {}  # the entries each valid cached tree covers
        # each entry's stat data git compares with the work tree's file before its content:
        # (mtime seconds, nanoseconds, size)
        self.stats: dict[str, tuple[int, int, int]] = {}
        # the untracked cache and fsmonitor data, as they are (see HARMLESS_EXTENSIONS)
        self.caches: dict[bytes, bytes] = {}
        self.undo: list[tuple[str, int, str]] = []
        # the flags an entry keeps through git's rewrites of the index (assume-unchanged,
        # skip-worktree, intent-to-add), where any is set: the user's, as its entries are
        self.flags: dict[str, int] = {}


# extensions that change no content git writes (the untracked cache, the fsmonitor token),
# but what `git status` shows: kept to compare (a command's own is held, r66a UNTRHIDE); the
# offset tables (EOIE, IEOT) are checked against the entries; any other is read below, or
# the index is unreadable
HARMLESS_EXTENSIONS = frozenset({b"UNTR", b"FSMN"})


def _cache_tree(data: bytes, out: dict[str, str], counts: dict[str, int]) -> None:
    """The valid entries of a TREE extension: depth first, each node `name NUL entries SP
    subtrees LF`, then its tree's 20 bytes when `entries` is not -1, then its subtrees."""
    i = 0
    stack: list[tuple[str, int]] = []  # (a directory's path, its subtrees still to come)
    while i < len(data):
        nul = data.index(b"\0", i)
        if stack and (_bad_name(data[i:nul]) or b"/" in data[i:nul]):
            raise GitUnreadable("a cache tree path git would not write")
        name = data[i:nul].decode("utf-8", "surrogateescape")
        eol = data.index(b"\n", nul)
        count, _, subtrees = data[nul + 1 : eol].partition(b" ")
        # (as git's strtol reads them: an optional minus and ASCII digits; Python's int()
        # read `0_1` as 1 where git reads 0, r51a CTREEINT)
        if not (_decimal(count.removeprefix(b"-")) and _decimal(subtrees)) or not (
            -(2**31) <= int(count) < 2**31 and int(subtrees) < 2**31
        ):
            # (git keeps strtol's long in an int: -4294967295 is 1 to it, r52a CTREEWRAP)
            raise GitUnreadable("a cache tree count git would read otherwise")
        i = eol + 1
        parent = stack[-1][0] if stack else None
        path = "" if parent is None else f"{parent}/{name}" if parent else name
        if int(count) >= 0:
            out[path] = data[i : i + 20].hex()
            counts[path] = int(count)
            i += 20
        if stack:
            above, left = stack.pop()
            if left > 1:
                stack.append((above, left - 1))
        if int(subtrees) > 0:
            stack.append((path, int(subtrees)))
        if len(stack) > 4096:
            raise GitUnreadable("a cache tree too deep")
        if not stack and i < len(data):
            # git reads one root and its subtrees; a second top node was corral's root and
            # not git's (r38a CTROOT)
            raise GitUnreadable("a cache tree with more than one root")
    if stack:  # (subtrees still to come: git drops such a cache tree, r51a CTREEINT)
        raise GitUnreadable("a cache tree that ends before its subtrees")


def _decimal(word: bytes) -> bool:
    return bool(word) and all(48 <= c <= 57 for c in word)


def _check_offsets(data: bytes, starts: list[int], copied: list[int]) -> None:
    """An IEOT extension's blocks (offset, count) start at entries, in order, and cover them
    all: else git reading it with threads would see other entries than corral (r34a). In a
    v4 index (`copied`: what each name takes of the one before), a block's first name takes
    nothing: git reading it with threads starts each block without a previous name (r37a)."""
    at = 0
    for k in range(4, len(data) - 7, 8):
        offset, count = struct.unpack_from(">II", data, k)
        if at >= len(starts) or starts[at] != offset or (copied and copied[at]):
            raise GitUnreadable("an index whose entry offsets disagree")
        at += count
    if at != len(starts):
        raise GitUnreadable("an index whose entry offsets disagree")


def _resolve_undo(data: bytes) -> list[tuple[str, int, str]]:
    """(path, mode, object) of each stage a REUC extension keeps: `path NUL mode1 NUL mode2
    NUL mode3 NUL`, then an object name for each stage with a mode (`git checkout -m`
    brings them back, so each is checked, not only the paths: r37a)."""
    found, i = [], 0
    while i < len(data):
        nul = data.index(b"\0", i)
        check_path(data[i:nul])
        path = data[i:nul].decode("utf-8", "surrogateescape")
        i = nul + 1
        modes = []
        for _ in range(3):
            end = data.index(b"\0", i)
            modes.append(int(data[i:end] or b"0", 8))
            i = end + 1
        for mode in modes:
            if mode:
                if i + 20 > len(data):
                    raise GitUnreadable("a malformed resolve-undo extension")
                found.append((path, mode, data[i : i + 20].hex()))
                i += 20
    return found


def index_paths(path: str) -> dict[str, tuple[int, str]]:
    """path -> (mode, object) of the entries of an index file (versions 2 to 4)."""
    return read_index(path).entries


def read_index(path: str) -> Index:
    """An index file (versions 2 to 4), with the extensions that change what git writes;
    GitUnreadable for one it does not read (a split or sparse index, an unknown extension)."""
    index = Index()
    try:
        data = read_regular(path, MAX_OBJECT + 1, follow=False)
    except FileNotFoundError:
        return index
    except OSError as e:
        raise GitUnreadable(f"the index: {e}") from None
    if len(data) > MAX_OBJECT or data[:4] != b"DIRC" or len(data) < 12:
        raise GitUnreadable("an index too large or not an index")
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4):
        raise GitUnreadable(f"an index of version {version}")
    found = index.entries
    i, previous = 12, b""
    last: tuple[bytes, int] = (b"", 0)
    try:
        if count > MAX_INDEX_ENTRIES:
            raise GitUnreadable(f"an index of {count} entries")
        starts: list[int] = []  # where each entry begins (see IEOT below)
        copied: list[int] = []  # v4: how much of the previous name each name takes
        for n in range(count):
            starts.append(i)
            mode = struct.unpack_from(">I", data, i + 24)[0]
            sha = data[i + 40 : i + 60].hex()
            flags = struct.unpack_from(">H", data, i + 60)[0]
            j = i + 62
            kept = flags & 0x8000  # (assume-unchanged)
            if flags & 0x4000:  # (git skips extended flags in any version, r38a EXTV2)
                kept |= struct.unpack_from(">H", data, j)[0] & 0x6000  # (skip-worktree, i-t-a)
                j += 2
            if version == 4:
                strip, j = _offset_varint(data, j)
                end = data.index(b"\0", j)
                if n and strip > len(previous):
                    raise GitUnreadable("an index entry that strips more than the name before")
                copy = len(previous) - strip if n else 0  # (git: the first takes nothing)
                copied.append(copy)
                name = previous[:copy] + data[j:end]
                i = end + 1
            else:
                end = data.index(b"\0", j)
                name = data[j:end]
                i = i + ((end - i + 8) // 8) * 8  # entries are padded to 8 bytes with NULs
            if flags & 0xFFF < 0xFFF and len(name) != flags & 0xFFF:
                # git takes the name by this length: one that disagrees with the NUL would be
                # another name to git than to corral (r32a)
                raise GitUnreadable("an index entry whose name length disagrees")
            previous = name
            if not name or mode not in INDEX_MODES:
                raise GitUnreadable("an index entry git would not write")
            check_path(name)
            if mode & 0o170000 == 0o040000:  # a sparse index's directory: its tree stands in
                raise GitUnreadable("a sparse index")
            # each stage of a path counts: a conflict's "ours" is what `git checkout --ours`
            # writes (r34a STAGES: one entry per path hid stage 2)
            stage = (flags >> 12) & 3
            if n and (name, stage) <= last:
                # (git writes each path and stage once, in byte order: one listed twice was
                # the first to `git restore`, the last to corral, r55a DUPIDX)
                raise GitUnreadable("an index whose entries are not in git's order")
            last = (name, stage)
            key = name.decode("utf-8", "surrogateescape")
            found[key if not stage else f"{key}\0{stage}"] = (mode, sha)
            index.stats[key if not stage else f"{key}\0{stage}"] = struct.unpack_from(
                ">II", data, starts[-1] + 8
            ) + struct.unpack_from(">I", data, starts[-1] + 36)
            if kept:
                index.flags[key if not stage else f"{key}\0{stage}"] = kept
        entries_end = i
        while i + 8 <= len(data) - 20:  # extensions, then the checksum
            signature = data[i : i + 4]
            size = struct.unpack_from(">I", data, i + 4)[0]
            body = data[i + 8 : i + 8 + size]
            if signature == b"EOIE":  # (git reading with threads starts the extensions here)
                if struct.unpack_from(">I", body, 0)[0] != entries_end:
                    raise GitUnreadable("an index whose extensions are not where it says")
            elif signature == b"IEOT":  # (and parses the entries in blocks from these offsets)
                _check_offsets(body, starts, copied)
            elif signature == b"TREE":
                _cache_tree(body, index.trees, index.tree_counts)
            elif signature == b"REUC":
                index.undo += _resolve_undo(body)
            elif signature in HARMLESS_EXTENSIONS:
                index.caches[signature] = body
            else:
                # (`link`: a split index, its entries in sharedindex.*; `sdir`: sparse)
                raise GitUnreadable(f"an index extension corral does not read: {signature!r}")
            i += 8 + size
    except (struct.error, ValueError, IndexError):
        raise GitUnreadable("a malformed index") from None
    return index


INTENT_TO_ADD = 0x2000  # (an entry's extended flag, as read_index keeps it)


def cache_tree_disagrees(index: Index) -> str | None:
    """The deepest directory whose tree the cache-tree extension names as valid is not the tree
    the index's entries below it make, or covers another number of them; None when each
    agrees. git only writes one that agrees, and trusts it: `git commit` takes the cached
    tree in place of the entries, `git status` and `git stash` skip comparing the entries
    of a directory whose cached tree is HEAD's (r64a CTSMUGGLE: a payload in the cached tree
    went into the user's next commit, unseen; CTHIDE: an edit staged below HEAD's cached
    tree showed nowhere). A conflict or an intent-to-add entry below a valid tree is one
    git never leaves."""
    if not index.trees:
        return None
    files: dict[str, list[tuple[bytes, bytes]]] = {}  # directory -> (sort key, tree entry)
    below: dict[str, int] = {}  # directory -> entries below it
    unfit: set[str] = set()  # directories git would have no valid tree for
    subdirs: dict[str, set[str]] = {}
    for key, (mode, sha) in index.entries.items():
        path, _, stage = key.partition("\0")
        directory, _, name = path.rpartition("/")
        bad = bool(stage) or bool(index.flags.get(key, 0) & INTENT_TO_ADD)
        raw = name.encode("utf-8", "surrogateescape")
        files.setdefault(directory, []).append((raw, b"%o %s\0" % (mode, raw) + bytes.fromhex(sha)))
        up = directory
        while True:
            below[up] = below.get(up, 0) + 1
            if bad:
                unfit.add(up)
            if not up:
                break
            parent = up.rpartition("/")[0]
            subdirs.setdefault(parent, set()).add(up)
            up = parent
    made: dict[str, bytes] = {}
    for directory in sorted(below, key=lambda d: -d.count("/") - bool(d)):  # deepest first
        items = list(files.get(directory, []))
        for sub in subdirs.get(directory, ()):
            raw = sub.rpartition("/")[2].encode("utf-8", "surrogateescape")
            items.append((raw + b"/", b"40000 %s\0" % raw + made[sub]))
        body = b"".join(entry for _, entry in sorted(items))
        made[directory] = bytes.fromhex(_hash("tree", body))
    for path in sorted(index.trees, key=lambda p: (-p.count("/") - bool(p), p)):  # (deepest)
        if (
            path in unfit
            or index.tree_counts.get(path) != below.get(path, 0 if not path else -1)
            or made.get(path, bytes.fromhex(_hash("tree", b""))).hex() != index.trees[path]
        ):
            return path
    return None


def _hash(kind: str, data: bytes) -> str:
    import hashlib

    return hashlib.sha1(f"{kind} {len(data)}".encode() + b"\0" + data).hexdigest()


def blob_id(data: bytes) -> str:
    """The object name git gives a file of these bytes."""
    return _hash("blob", data)


def _loose(raw: bytes, sha: str) -> tuple[str, bytes]:
    """(type, data) of a loose object's bytes, which must be the object `sha` names (review
    r32a SHADOW: corral read a fake loose object of the same name while git read the real
    one from a pack)."""
    data = _inflate(raw)
    header, _, body = data.partition(b"\0")
    kind, _, size = header.partition(b" ")
    if kind not in (b"commit", b"tree", b"blob", b"tag") or size != str(len(body)).encode():
        raise GitUnreadable(f"a malformed loose object {sha}")
    if _hash(kind.decode(), body) != sha:
        raise GitUnreadable(f"loose object {sha} holds another object")
    return kind.decode(), body


def verify_loose(path: str, sha: str) -> None:
    """A loose object a command wrote holds what its name says: else GitUnreadable."""
    try:
        raw = read_regular(path, MAX_OBJECT, follow=False)
    except OSError as e:
        raise GitUnreadable(f"object {sha}: {e.strerror}") from None
    _loose(raw, sha)


MAX_PACK_OBJECTS = 50_000


def _listed(index: Buffer | None, where: str) -> list[str]:
    """The object names a version 2 pack index lists (at most MAX_PACK_OBJECTS)."""
    if index is None or index[:8] != b"\377tOc\0\0\0\2":
        raise GitUnreadable(f"a pack index corral cannot read: {where}")
    count = struct.unpack_from(">I", index, 8 + 4 * 255)[0]
    if count > MAX_PACK_OBJECTS:
        raise GitUnreadable(f"a pack of {count} objects, more than corral checks")
    names = 8 + 256 * 4
    return [index[names + 20 * i : names + 20 * i + 20].hex() for i in range(count)]


def verify_pack(index_path: str, pack_path: str, store: ObjectStore) -> None:
    """Every object a pack index names is, at its offset in the pack, the object of that name:
    git reads packed objects before loose ones, by the index, and checks neither (a forged
    pack or index would stand in for objects the host's refs name). Else GitUnreadable."""
    index = _map(index_path)
    listed = _listed(index, index_path)
    assert index is not None  # (_listed raised otherwise)
    try:
        with os.fdopen(open_regular(pack_path, follow=False), "rb") as f:
            for sha in listed:
                offset = _find(index, bytes.fromhex(sha))
                if offset is None:
                    raise GitUnreadable(f"a pack index out of order: {index_path}")
                kind, data = _pack_object(f, offset, store, 0)
                if _hash(kind, data) != sha:
                    raise GitUnreadable(f"packed object {sha} holds another object")
    except OSError as e:
        raise GitUnreadable(f"{pack_path}: {e.strerror}") from None
    except (struct.error, IndexError, ValueError):
        raise GitUnreadable(f"a malformed pack: {pack_path}") from None


def pack_names(pack_dir: str, listing: str = "") -> list[str]:
    """The .idx files of a pack directory; with `listing` (one .idx there), the object names
    that index lists instead."""
    if listing:
        return _listed(_map(os.path.join(pack_dir, listing)), listing)
    try:
        return sorted(n for n in os.listdir(pack_dir) if n.endswith(".idx"))
    except OSError:
        return []


def mapped_indexes(paths: list[str]) -> list[Buffer | None]:
    """Pack index files mapped (see _map), for in_packs."""
    return [_map(path) for path in paths]


def in_packs(indexes: list[Buffer | None], wanted: list[str]) -> str | None:
    """The first of `wanted` that none of the pack `indexes` holds, or None."""
    for sha in wanted:
        key = bytes.fromhex(sha)
        if not any(ix is not None and _find(ix, key) is not None for ix in indexes):
            return sha
    return None
