"""Three-way merges of a held file with what the host changed since its command ran.

An agent that edits one config twice before the user reviews the first edit leaves two held
change sets; the second command saw the file without the first edit, so applying it after the
first undid that edit, and `--overwrite` was the only way on (r68c HELDSTACK). Each held file
the host had unchanged while the command ran is kept here as the command saw it (its base),
and a later apply merges the command's change into the host's copy line by line, as
`git merge-file` would: taken only where the two changes do not touch the same or adjacent
lines, else held with the lines that conflict named.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry

BASES = "bases"  # in the staging area
MERGE_BYTES = 1 << 20  # text files up to this size are merged; larger ones never
MAX_BASES = 200  # files of one change set kept as their command saw them
MERGE_LINES = 20_000  # lines of a file merged, at most (the time of a merge grows faster)


def _base_name(stage: str, path: str) -> str:
    return os.path.join(stage, BASES, hashlib.sha256(path.encode()).hexdigest()[:40])


def _read_small(path: str) -> bytes | None:
    """A regular file's bytes when it is text of at most MERGE_BYTES (no link followed)."""
    from corral.paths import read_regular

    try:
        data = read_regular(path, MERGE_BYTES + 1, follow=False)
    except OSError:
        return None
    return None if len(data) > MERGE_BYTES or b"\0" in data else data


def keep_base(stage: str, entry: Entry) -> None:
    """Keep the host's copy of a held file as its command saw it (the caller has checked that
    the host did not change it since the command started); once, and for text only."""
    if entry.kind != "file":
        return
    where = _base_name(stage, entry.path)
    if os.path.lexists(where):
        return
    data = _read_small(entry.path)
    if data is None:
        return
    directory = os.path.dirname(where)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if len(os.listdir(directory)) >= MAX_BASES:
            return
        tmp = f"{where}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, where)
    except OSError:
        pass


def base_of(stage: str, path: str) -> str | None:
    """Where the base of a held file is kept, if it is."""
    where = _base_name(stage, path)
    return where if os.path.isfile(where) else None


def merge3(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """(the merge of the changes base->ours and base->theirs, the line ranges of `ours`,
    1-based and inclusive, where the two changed the same or adjacent lines). With any
    conflict the merged bytes mean nothing."""
    import difflib

    b, o, t = (x.splitlines(keepends=True) for x in (base, ours, theirs))
    # (autojunk: lines that are everywhere, padding, anchor no match; without it 120 KB of
    # blank lines took 73 s, r73c MERGETIME. The blocks are true matches either way: a
    # missed one is a conflict, never a wrong merge)
    to_ours = difflib.SequenceMatcher(None, b, o).get_matching_blocks()
    to_theirs = difflib.SequenceMatcher(None, b, t).get_matching_blocks()
    # Base lines both sides left as they were, with where they are in each: the merge
    # takes them as they are and decides what lies between.
    kept: list[tuple[int, int, int, int]] = []
    i = j = 0
    while i < len(to_ours) and j < len(to_theirs):
        a0, oa, alen = to_ours[i]
        c0, tc, clen = to_theirs[j]
        lo, hi = max(a0, c0), min(a0 + alen, c0 + clen)
        if lo < hi:
            kept.append((lo, oa + lo - a0, tc + lo - c0, hi - lo))
        if a0 + alen < c0 + clen:
            i += 1
        else:
            j += 1
    kept.append((len(b), len(o), len(t), 0))
    out: list[bytes] = []
    conflicts: list[tuple[int, int]] = []
    at_b = at_o = at_t = 0
    for kb, ko, kt, length in kept:
        was, mine, their = b[at_b:kb], o[at_o:ko], t[at_t:kt]
        if mine == was:
            out += their
        elif their in (was, mine):
            out += mine
        else:
            conflicts.append((at_o + 1, max(ko, at_o + 1)))
        out += b[kb : kb + length]
        at_b, at_o, at_t = kb + length, ko + length, kt + length
    return b"".join(out), conflicts


def _merged_bytes(stage: str, entry: Entry) -> tuple[bytes | None, str]:
    """(the command's change merged into the host's copy, or None and why not, "" where no
    merge was ever possible)."""
    where = base_of(stage, entry.path)
    if where is None or entry.kind != "file" or entry.nlink > 1:
        return None, ""
    base, ours, theirs = (_read_small(p) for p in (where, entry.path, entry.source))
    if base is None or ours is None or theirs is None:
        return None, ""
    if max(x.count(b"\n") for x in (base, ours, theirs)) > MERGE_LINES:
        return None, f"more than {MERGE_LINES} lines, which corral does not merge"
    data, conflicts = merge3(base, ours, theirs)
    if conflicts:
        spans = ", ".join(f"{a}" if a == z else f"{a}-{z}" for a, z in conflicts[:5])
        lines = "line" if len(conflicts) == 1 and conflicts[0][0] == conflicts[0][1] else "lines"
        return None, (
            f"merging it with the host's change conflicts (your copy's {lines} {spans}, "
            "changed by both)"
        )
    return data, ""


def mergeable(stage: str, entry: Entry) -> tuple[bool, str]:
    """(whether apply would merge the entry into the host's copy, why not): what a diff
    shows it against (r73c SHOWOVERWRITE: the base's diff, "apply merges", where apply
    could only overwrite)."""
    data, why = _merged_bytes(stage, entry)
    return data is not None, why


def merged_entry(stage: str, entry: Entry) -> tuple[Entry | None, str]:
    """(the entry with the command's change merged into the host's copy, the staged file
    rewritten; or None and why it cannot be)."""
    import tempfile

    from corral.changes.apply import _open_to_owner
    from corral.changes.scan import Entry

    data, why = _merged_bytes(stage, entry)
    if data is None:
        return None, why
    _open_to_owner(os.path.dirname(entry.source))
    # (made in the staging area's own directory: a name beside the file was the command's
    # to take, r73c MERGETMP)
    fd, tmp = tempfile.mkstemp(dir=stage, prefix=".merge-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), stat.S_IMODE(entry.mode))
        os.replace(tmp, entry.source)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    st = os.lstat(entry.source)
    fields = {n: getattr(entry, n) for n in Entry.__slots__ if n != "path"}
    fields.update(ino=st.st_ino, size=st.st_size, mtime_ns=st.st_mtime_ns, nlink=1)
    return Entry(**fields), ""
