"""The undo journal: what each applied change set replaced, so it can be put back.

`<state>/journal/<id>/` holds `log.jsonl` (one record per operation, written right after it)
and `files/<n>`: the originals moved aside (renamed when on the same file system, copied
otherwise). Undo goes newest first, checks every path before touching any (a file changed since
the apply is a conflict, and nothing is undone), then reverses the records in order. The journal
keeps the newest change sets whose saved originals fit in `sandbox.limits.undo_mb`.
"""

from __future__ import annotations

import json
import os

from corral.changes import stage as stages
from corral.changes import tree

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

LOG = "log.jsonl"
FILES = "files"
MAX_ENTRIES = 100


def move(source: str, destination: str) -> None:
    """Rename, or copy then remove across file systems; links are moved as links."""
    try:
        os.rename(source, destination)
        return
    except OSError as e:
        if e.errno != 18:  # EXDEV
            raise
    tree.copy(source, destination)
    tree.remove(source)


class Journal:
    """The journal of one change set being applied."""

    def __init__(self, change_id: str, base: str | None = None) -> None:
        import time

        # Named by when it was applied: a held change set applied later undoes in that order.
        name = f"{time.time_ns():x}-{change_id}"
        self.path = os.path.join(base or stages.journal_dir(), name)
        self._log: Any = None
        self._saved = 0
        self.saved_bytes = 0

    def _open(self) -> None:
        if self._log is None:
            # The user's alone: it names workspace paths and holds what was replaced
            # (makedirs gives only the last directory its mode).
            base = os.path.dirname(self.path)
            os.makedirs(base, mode=0o700, exist_ok=True)
            os.chmod(base, 0o700)
            os.makedirs(os.path.join(self.path, FILES), mode=0o700, exist_ok=True)
            os.chmod(self.path, 0o700)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(os.path.join(self.path, LOG), flags, 0o600)
            self._log = os.fdopen(fd, "a", encoding="utf-8")

    def record(self, **fields: object) -> None:
        self._open()
        self._log.write(json.dumps(fields) + "\n")
        self._log.flush()

    def save(self, path: str) -> str:
        """Move what is at `path` aside; returns its name in the journal."""
        self._open()
        self._saved += 1
        name = str(self._saved)
        self.saved_bytes += tree.size(path)
        move(path, os.path.join(self.path, FILES, name))
        return name

    def discard(self) -> None:
        """Drop this entry: nothing of the change set was applied (apply reversed it all)."""
        if self._log is not None:
            self._log.close()
            self._log = None
        tree.remove(self.path)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
            with open(os.path.join(self.path, "size"), "w", encoding="ascii") as f:
                f.write(str(self.saved_bytes))


def entries(base: str | None = None) -> list[str]:
    """Journal entries, oldest first."""
    base = base or stages.journal_dir()
    try:
        return sorted(n for n in os.listdir(base) if not n.startswith("."))
    except OSError:
        return []


def records(entry: str, base: str | None = None) -> list[dict[str, Any]]:
    path = os.path.join(base or stages.journal_dir(), entry, LOG)
    found = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                found.append(json.loads(line))
    return found


def _matches(record: dict[str, Any]) -> bool:
    try:
        st = os.lstat(record["path"])
    except OSError:
        return False
    if [st.st_ino, st.st_size, st.st_mtime_ns] == record["stat"]:
        return True
    # (git rewrites its index at a mere `git status`, with the stat data it caches: the same
    # entries are no change, r51c UNDOGITINDEX: a commit could not be undone after one)
    return record.get("index") is not None and index_entries(record["path"]) == record["index"]


def index_kept(path: str, plan: dict[str, Any]) -> bool:
    """Whether the host's git index at `path` holds the entries it held when the change
    set's command started (see stage.create): `git status` rewrote it, nothing else."""
    before = (plan.get("indexes") or {}).get(path)
    if before is None:
        return False
    now = index_entries(path)
    return now is not None and now == index_entries(before, named=False)


def index_entries(path: str, named: bool = True) -> str | None:
    """A digest of what a git index holds (path, mode, object of each entry, not the stat
    data git caches), for a file named `index` in a `.git` (any file, not `named`); else
    None."""
    if named and not path.endswith("/.git/index"):
        return None
    import hashlib

    from corral.changes.git_objects import GitUnreadable, read_index

    try:
        index = read_index(path)
    except (GitUnreadable, OSError, ValueError):
        return None
    # (with the flags the user sets: a `git update-index --skip-worktree` since the run is a
    # change of theirs, r59a INDEXFLAGS)
    listed = (sorted(index.entries.items()), sorted(index.flags.items()))
    return hashlib.sha256(repr(listed).encode()).hexdigest()


def conflicts(entry: str, base: str | None = None) -> list[str]:
    """What was changed since `entry` was applied; undo refuses while any is left."""
    found = []
    for r in reversed(records(entry, base)):
        op, path = r["op"], r["path"]
        if op in ("put", "mkdir") and _git_object(path):
            continue  # (kept by undo: see there)
        parent = os.path.dirname(path)
        if os.path.realpath(parent) != parent:
            # Journaled paths were real when applied: a link above one now (a later run with
            # direct writes made it) would have undo write or delete where it points.
            found.append(f"{path}: a directory above it is a symlink now")
        elif op == "put" and not _matches(r):
            found.append(f"{path}: changed since the command wrote it")
        elif op == "mkdir" and not (os.path.isdir(path) and not os.path.islink(path)):
            found.append(f"{path}: no longer the directory the command made")
        elif op == "remove" and os.path.lexists(path):
            found.append(f"{path}: made again since the command deleted it")
        elif op == "chmod" and not (os.path.isdir(path) and not os.path.islink(path)):
            # a link put there since would have undo change the mode of where it points
            found.append(f"{path}: no longer the directory whose mode the command changed")
    return found


def _git_object(path: str) -> bool:
    """Whether `path` is in a git directory's object store (a loose object, a pack)."""
    parts = path.split("/")
    return ".git" in parts and "objects" in parts[parts.index(".git") :]


def _held_place(change_id: str) -> Callable[[str], str | None]:
    """Where a path of a change set still held would be staged (see undo), or None."""
    stage = os.path.join(stages.root_dir(), change_id)
    try:
        roots = list(stages.read_plan(stage)["roots"])
    except (OSError, ValueError, EOFError, TypeError, KeyError):
        roots = []

    def place(path: str) -> str | None:
        for i, root in enumerate(roots):
            if path.startswith(root + os.sep):
                return os.path.join(stages.upper(stage, i), os.path.relpath(path, root))
        return None

    return place


def undo(entry: str, base: str | None = None) -> list[str]:
    """Reverse one applied change set; returns what was put back. Raises OSError when a step
    fails midway (the journal entry is then kept). A file of a change set still held (what
    was held and applied later, by name) goes back into it, to review and apply again (r72d
    UNDOHELD: it was deleted, and could not be applied again)."""
    base = base or stages.journal_dir()
    files = os.path.join(base, entry, FILES)
    held_place = _held_place(entry.split("-", 1)[1] if "-" in entry else entry)
    done = []
    for r in reversed(records(entry, base)):
        op, path = r["op"], r["path"]
        if op in ("put", "mkdir") and _git_object(path):
            # Objects stay: named by their contents, harmless unreached, and what a commit of
            # yours since may need (r60a UNDOBREAK: undone under a commit made on the held
            # history applied, the repository was broken for good)
            continue
        if op == "put":
            staged = held_place(path)
            if staged is not None and not os.path.lexists(staged) and os.path.isfile(path):
                os.makedirs(os.path.dirname(staged), exist_ok=True)
                move(path, staged)
                done.append(f"{path}: back in its held change set")
            else:
                os.unlink(path)
        elif op == "mkdir":
            try:
                os.rmdir(path)
            except OSError as e:
                if e.errno != 39:  # ENOTEMPTY: the host added files there; keep it
                    raise
                done.append(f"kept {path}: files were added there since")
        elif op == "chmod":
            # on the directory itself, never through a link that replaced it meanwhile
            tree.chmod_dir(path, r["old"])
            done.append(f"mode put back on {path}")
            continue
        if r.get("saved"):
            move(os.path.join(files, r["saved"]), path)
        done.append(f"{'restored' if r.get('saved') or op == 'remove' else 'removed'} {path}")
    tree.remove(os.path.join(base, entry))
    return done


def prune(limit_bytes: int, base: str | None = None) -> None:
    """Drop the oldest entries until the rest fit in `limit_bytes` (0: no limit). The newest
    stays whatever its size: it is what a user undoes first (a command that deleted more
    than the limit is still undone whole), and older ones go before it."""
    base = base or stages.journal_dir()
    names = entries(base)
    sizes = {}
    for name in names:
        try:
            with open(os.path.join(base, name, "size"), encoding="ascii") as f:
                sizes[name] = int(f.read() or 0)
        except (OSError, ValueError):
            sizes[name] = 0
    total = sum(sizes.values())
    while len(names) > 1 and (len(names) > MAX_ENTRIES or (limit_bytes and total > limit_bytes)):
        oldest = names.pop(0)
        total -= sizes[oldest]
        try:
            tree.remove(os.path.join(base, oldest))
        except OSError:
            # (a saved directory holding one the user cannot open): kept, and the apply that
            # pruned goes on; it was applied whatever became of an old entry
            continue
