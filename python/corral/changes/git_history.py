"""Change-set rule for what git on the host would write into the work tree later. A commit on
another branch holding `.pdbrc`, `.envrc` and a pre-commit config passed as plain objects
and refs, and `git checkout master` then wrote them (review r31b); so did a stash's
untracked-files parent, history below a tip, a split index, a reflog's message, a cache
tree, a conflict stage, capitals, NULs and `ref:` without a space (r32a to r36a), a
submodule's commit and a committed symlink (r37a).

So a git directory takes from a change set only what git writes in everyday work: objects
(each what its name says), refs and reflogs, HEAD and its kin, packed-refs, the index and a
few plain files, each read as strictly as git reads it. Every commit a change makes
reachable (walked back to the host's own branches and tags or HEAD's ancestors, bounded)
and every index entry has the paths it adds or changes against the host's HEAD put through
the protected names and paths, its symlinks through the work tree's rules for links and its
submodule commits through the same. What cannot be read is held. So is history shaped
for git to move files to places of its own at a later merge (_reshapes): a new commit that
removes a directory of a parent's, a root commit where there is history, an index that
removes a directory; what lands keeps every directory, so a file is judged where its
commit puts it (r44a DIRVENV).
"""

from __future__ import annotations

import os
import stat
import struct
from functools import partial

from corral.changes import words
from corral.changes.git_objects import (
    Budget,
    GitUnreadable,
    Index,
    ObjectStore,
    blob_id,
    cache_tree_disagrees,
    changed_paths,
    entry_at,
    gone_directories,
    gone_directory,
    in_packs,
    mapped_indexes,
    pack_names,
    parents,
    read_index,
    subtree,
    verify_loose,
    verify_pack,
)
from corral.changes.git_objects import tree_of as _tree_of
from corral.changes.link_rules import climbs_back
from corral.changes.ruleset import RuleSet
from corral.changes.scan import same_bytes
from corral.changes.words import HELD_GIT_WHY, HELD_WITH_GIT, HISTORY_WAITS
from corral.paths import read_regular, self_or_parent_in
from corral.toolguard.ops.refusal import PROTECTED, Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from mmap import mmap as Buffer
    from typing import Any

    from corral.changes.scan import Entry

ENTRY_BUDGET = 200_000  # tree entries looked at for one change
COMMIT_BUDGET = 500  # commits walked back from what a change names
ANCESTORS = 200  # of the host's HEAD, first parents, that count as known
HOST_TIPS = 64  # of the host's refs, looked in for a protected file it has already
HOST_CONFIGS = 4096  # configs of the host's index a new commit must keep (_lacks_config)
REF_BYTES = 16 << 20


def _bytes(path: str) -> bytes | None:
    """A small regular file, not through a link and never blocking (a FIFO named as a ref
    hung the check, r32a), read whole (a ref past the first 4 KiB was missed, r32a); None
    where there is none. Anything else there is GitUnreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise GitUnreadable(f"{path}: {e.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise GitUnreadable(f"{path} is not a regular file")
        data = b""
        while chunk := os.read(fd, REF_BYTES + 1 - len(data)):
            data += chunk
            if len(data) > REF_BYTES:
                raise GitUnreadable(f"{path} is larger than corral reads")
        return data
    finally:
        os.close(fd)


def _text(path: str) -> str | None:
    """A file of a git directory as text (see _bytes). git reads a ref as a C string:
    `<id>NUL junk` is `<id>` (r35a NULREF); a NUL is a line end here, so what follows it is
    read too, never hidden."""
    data = _bytes(path)
    # (bytes that are not UTF-8 kept as they are: `ref: refs/heads/master\xa0` resolved to
    # nothing for corral and to a branch for git, r55a HEADUTF)
    return None if data is None else data.replace(b"\0", b"\n").decode("utf-8", "surrogateescape")


NULL = "0" * 40  # (a reflog's "none")


HEX = frozenset("0123456789abcdefABCDEF")


def _is_sha(word: str) -> bool:
    """A whole object name, in either case (git reads `ABCD...` as `abcd...`, r34a)."""
    return len(word) == 40 and word != NULL and all(c in HEX for c in word)


def moved_names(text: str | None, before: str | None) -> set[str]:
    """The names a reflog's new lines say HEAD moved from or to (`git checkout -` reads them
    back and looks each up as git looks up a name, r35a: a file of the git directory too);
    whole object names are left to _named."""
    found = set()
    old = set((before or "").splitlines())
    for line in (text or "").splitlines():
        if line not in old and "checkout: moving from " in line:
            for word in line.split("checkout: moving from ", 1)[1].split(" to "):
                word = word.strip()
                if word and not _is_sha(word):
                    found.add(word)
    return found


# where git looks a name up (`git rev-parse X`), in order
NAME_RULES = ("{}", "refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}",
              "refs/remotes/{}/HEAD")  # fmt: skip


def _merged_text(git_dirs: list[str], name: str) -> str | None:
    """A file of a git directory as git will see it once the change set is applied:
    `git_dirs` is the staging area's then the host's; a whiteout in the first deletes the
    host's (r39a WHITEOUTREF: reading one failed, and `git branch -d` held everything)."""
    for git_dir in git_dirs:
        path = os.path.join(git_dir, name)
        if _gone(path):
            return None
        text = _text(path)
        if text is not None:
            return text
    return None


def _merged_packed(git_dirs: list[str]) -> dict[str, str]:
    """packed-refs as git will see it: the staging area's whole, else the host's."""
    for git_dir in git_dirs:
        path = os.path.join(git_dir, "packed-refs")
        if _gone(path):
            return {}
        if os.path.lexists(path):
            return _packed(git_dir)
    return {}


def _look_up(git_dirs: list[str], name: str) -> str | None:
    """The object a name resolves to as git resolves it, in the merged view of `git_dirs`:
    a loose ref hides a packed entry, valid or not, as in git."""
    if ".." in name.split("/") or name.startswith("/") or "\0" in name:
        raise GitUnreadable(f"a reflog naming {name!r}")
    packed: dict[str, str] | None = None
    for rule in NAME_RULES:
        ref = rule.format(name)
        text = _merged_text(git_dirs, ref)
        if text is not None:
            if _as_ref(text) is not None:
                return _resolve(git_dirs, text)
            continue
        if packed is None:
            packed = _merged_packed(git_dirs)
        if ref in packed:
            return packed[ref]
    return None


def _named(text: str | None, log: bool = False, before: str | None = None) -> set[str]:
    """The objects a ref-like file names, lowercased: a ref, packed-refs (peeled `^` lines
    too), FETCH_HEAD; in a reflog (`log`) every object name in a line, its message's too
    (`git checkout -` takes its target from "checkout: moving from X to Y", r33a REFLOGMSG;
    the other names there: moved_names). Only the lines not in `before` (the host's copy)
    are read: a reflog grows at its end (r34a: the host's own old `checkout 4805f01` held
    every later commit)."""
    found = set()
    old = set((before or "").splitlines())
    for line in (text or "").splitlines():
        if line in old:
            continue
        words = line.replace("\t", " ").split()
        for word in words if log else words[:2]:
            word = word.lstrip("^")
            if _is_sha(word):
                found.add(word.lower())
    return found


def _as_ref(text: str | None) -> str | None:
    """What a file says when git reads it as a ref: `ref:NAME` (spaces after the colon are
    optional, r34a SYMREF), or an object name first on its first line; None if neither.
    Any file at the top of a git directory resolves as a ref by its name."""
    first = (text or "").split("\n", 1)[0].strip()
    if first.startswith("ref:"):
        return first
    word = first.split()[0] if first else ""
    return word.lower() if _is_sha(word) else None


def staged_names(name: str, source: str, host_git: str, upper_git: str) -> set[str]:
    """The object names a staged file of a git directory (`name`, relative to it: a ref, a
    reflog, HEAD or its kin, packed-refs, info/refs) makes git reach that the host's copy
    does not: its ids, where a symbolic ref leads, the names a reflog's "moving from" lines
    give `git checkout -`. The check and the listing of held history read the same (r60a
    LISTSYMREF: the listing missed a branch made `ref: AGENT_HEAD`)."""
    text = _text(source)
    log = name.startswith("logs/")
    host_text = _text(os.path.join(host_git, name))
    new = _named(text, log, host_text if log else None)
    new |= {r for r in [_resolve([upper_git, host_git], text)] if r}
    if log:
        for moved in moved_names(text, host_text):
            found_sha = _look_up([upper_git, host_git], moved)
            if found_sha is None and len(moved) >= 4 and set(moved) <= HEX:
                # (git takes a ref by the name first, then a part of an object name of four
                # or more digits: a branch named `b` is no object)
                raise GitUnreadable(f"a reflog naming {moved!r}, part of an object name")
            new |= {found_sha} if found_sha else set()
    if name == "packed-refs":
        new = _packed_changes(host_git, upper_git)
    elif name == "info/refs":  # (`sha TAB ref` lines, for dumb transports)
        pairs = [line.split("\t", 1) for line in (text or "").splitlines()]
        listed = {p[1].strip(): p[0].strip().lower() for p in pairs if len(p) == 2}
        new = _listed_changes(host_git, listed) | (_named(text) - set(listed.values()))
    return new - _named(host_text, log)


def _packed_records(git_dir: str) -> list[tuple[str, str, str]]:
    """(ref name, object, peeled object or "") of a packed-refs file, read only as git writes
    it: the header, then `<id> SP <name> LF` with `^<id> LF` after a tag's, names in git's
    order, each once. git reads other shapes otherwise than a line reader: a TAB after the
    id is a separator to it (r51a PACKTAB: the branch behind one was never seen), and with
    `sorted` in the header it looks a name up by bisection, finding the middle one of three
    lines naming one ref (r51a PACKDUP: a dict kept the last). Anything else: GitUnreadable."""
    data = _bytes(os.path.join(git_dir, "packed-refs")) or b""
    if data and not data.endswith(b"\n"):
        raise GitUnreadable("a packed-refs line without its end")
    records: list[tuple[str, str, str]] = []
    last = b""
    for i, line in enumerate(data.split(b"\n")[:-1]):
        if i == 0 and line.startswith(b"# pack-refs with:"):
            continue
        if line[:1] == b"^" and records and not records[-1][2] and _packed_id(line[1:]):
            records[-1] = (*records[-1][:2], line[1:].decode())
            continue
        name = line[41:]
        if not (
            _packed_id(line[:40]) and line[40:41] == b" " and name.startswith(b"refs/")
            and all(c > 0x20 and c != 0x7F for c in name)
            and name > last  # (byte order, as git's strcmp)
        ):  # fmt: skip
            raise GitUnreadable(f"packed-refs line {i + 1} is not as git writes one")
        last = name
        records.append((name.decode("utf-8", "surrogateescape"), line[:40].decode(), ""))
    return records


def _packed_id(word: bytes) -> bool:
    return len(word) == 40 and all(c in b"0123456789abcdef" for c in word)


def _packed(git_dir: str) -> dict[str, str]:
    """ref name -> object of a packed-refs file (_packed_records)."""
    return {name: sha for name, sha, _peeled in _packed_records(git_dir)}


def _packed_changes(host_git: str, upper_git: str) -> set[str]:
    """The objects a new packed-refs names that the host's refs do not already name by the
    same ref, loose or packed (`git pack-refs` moves loose refs into it: a fetched branch
    packed as it was is no new commit, r38a PACKREFS), and peeled lines it did not have."""
    records, host_records = _packed_records(upper_git), _packed_records(host_git)
    listed = {name: sha for name, sha, _peeled in records}
    host_packed = {name: sha for name, sha, _peeled in host_records}
    for ref, sha in listed.items():
        if ref.startswith("refs/replace/") and host_packed.get(ref) != sha:
            # (git takes the object it names in place of another everywhere: a subtree in
            # place of tools/, judged here as a tree of its own, r41a REPLSUB)
            raise GitUnreadable(f"a replace ref in packed-refs ({ref})")
    new = _listed_changes(host_git, listed, host_packed)
    host_peeled = {peeled for _n, _s, peeled in host_records}
    return new | {peeled for _n, _s, peeled in records} - host_peeled - {""}


def _listed_changes(
    host_git: str, listed: dict[str, str], host_packed: dict[str, str] | None = None
) -> set[str]:
    """The objects of (ref -> object) pairs the host's same refs (`host_packed`: its
    packed-refs, when read already) do not name already (also info/refs, which `git gc`
    writes: r40a)."""
    if host_packed is None:
        host_packed = _packed(host_git)
    new = set()
    for ref, sha in listed.items():
        if sha == host_packed.get(ref):
            continue
        loose = None
        if ".." not in ref.split("/"):
            loose = _as_ref(_text(os.path.join(host_git, ref)))
        if sha != loose:
            new.add(sha)
    return new


def _resolve(git_dirs: list[str], text: str | None, depth: int = 0) -> str | None:
    """The object a ref's text names, following `ref: NAME` through `git_dirs` in order."""
    if text is None or depth > 5:
        return None
    text = text.split("\n", 1)[0].strip()  # (the first line: git stops at a NUL, r36a)
    if not text.startswith("ref:"):
        word = text.split()[0] if text else ""
        return word.lower() if _is_sha(word) else None
    name = text[4:].strip()
    if ".." in name.split("/") or name.startswith("/"):
        return None
    value = _merged_text(git_dirs, name)
    if value is not None:
        return _resolve(git_dirs, value, depth + 1)
    return _merged_packed(git_dirs).get(name)


def _ref_file(inside: list[str]) -> bool:
    """Whether a path in a git directory is one git reads commits from: refs, reflogs,
    packed-refs, HEAD and its kin at the top (ORIG_HEAD, FETCH_HEAD, MERGE_HEAD, AUTO_MERGE)."""
    name = inside[-1]
    if inside[0] in ("refs", "logs"):
        return True
    top = name in ("packed-refs", "AUTO_MERGE") or name.endswith("HEAD")
    return len(inside) == 1 and top


# what git writes that names no commit and changes no file it checks out
# (not MERGE_MSG, SQUASH_MSG: your next commit's message, forged trailers and all; nor
# info/exclude: it hides an untracked file from `git status`, r62a MSGTRAILER, HIDEFLAGS)
PLAIN = frozenset({
    "COMMIT_EDITMSG", "TAG_EDITMSG", "NOTES_EDITMSG", "MERGE_MODE",
    "description", "gc.log", "gc.pid", "info/refs",
})  # fmt: skip
PACK_FILES = (".pack", ".idx")
# what reading git's files may raise: all of it held as unreadable, never applied
# (RecursionError: a path 1,100 directories deep, r62a DEEPCRASH)
UNREADABLE = (
    GitUnreadable, OSError, ValueError, IndexError, MemoryError, RecursionError, struct.error,
)  # fmt: skip
HIDING = 0x8000 | 0x4000  # an index entry's assume-unchanged, skip-worktree (as read_index keeps)
# what a stopped merge, cherry-pick, revert or rebase leaves for the next commit to take
IN_PROGRESS = frozenset({"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD"})
# configs judged by what they say besides the shared ones (_as_applied)
CHAINED = frozenset({".gitattributes", "package.json"})


def staying_packs(host_git: str, upper_git: str) -> list[str]:
    """The pack indexes a change set leaves in place: the host's and its own, not those it
    deletes."""
    return [
        os.path.join(d, "objects", "pack", n) for d in (upper_git, host_git)
        for n in pack_names(os.path.join(d, "objects", "pack"))
        if not _gone(os.path.join(upper_git, "objects", "pack", n))
    ]  # fmt: skip


def _deleted_is_kept(
    rel: list[str], host_git: str, staying: Callable[[], list[Buffer | None]]
) -> None:
    """A loose object deleted is in a pack that stays; a pack deleted has each of its
    objects in a pack that stays (else GitUnreadable: held)."""
    if len(rel) == 2 and len(rel[0]) == 2 and _is_sha(rel[0] + rel[1]):
        wanted = [rel[0] + rel[1]]
    elif len(rel) == 2 and rel[0] == "pack" and rel[1].endswith(".idx"):
        wanted = pack_names(os.path.join(host_git, "objects", "pack"), listing=rel[1])
    elif len(rel) == 2 and rel[0] == "pack":
        return  # (a .pack, .rev or .keep goes with its .idx, judged there)
    else:
        return  # (objects/info/* and empty fan-out directories)
    missing = in_packs(staying(), wanted)
    if missing:
        raise GitUnreadable(f"deleting object {missing} that no pack left keeps")


def _gone(path: str) -> bool:
    """Whether the staging area deletes this path (an overlay whiteout: a 0:0 device)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


def _check_object(
    entry: Entry,
    inside: list[str],
    host_git: str,
    upper_git: str,
    store: ObjectStore,
    staying: Callable[[], list[Buffer | None]],
) -> None:
    """A loose object or a pack the command wrote is what its name says; anything else in
    objects/ (a commit-graph, a multi-pack index, alternates) is GitUnreadable."""
    rel = inside[1:]
    if entry.kind == "whiteout":
        # git deletes only what it has elsewhere (prune, repack): so must this change set
        # (r35a OBJWIPE: `rm .git/objects/??/*` lost every local commit)
        _deleted_is_kept(rel, host_git, staying)
        return
    if rel == ["info", "packs"]:
        if _as_ref(_text(entry.source)) is not None:  # (`P pack-x.pack` lines, not a ref)
            raise GitUnreadable("objects/info/packs that reads as a ref")
        return  # (the list of packs for dumb HTTP servers)
    if entry.kind != "file":
        raise GitUnreadable(f"a {entry.kind} among git's objects")
    if len(rel) == 2 and len(rel[0]) == 2 and _is_sha(rel[0] + rel[1]):
        verify_loose(entry.source, rel[0] + rel[1])
        return
    if len(rel) == 2 and rel[0] == "pack" and rel[1].endswith(PACK_FILES):
        stem = os.path.join("objects", "pack", rel[1].rsplit(".", 1)[0])

        def where(suffix: str) -> str:
            staged = os.path.join(upper_git, stem + suffix)
            return staged if os.path.lexists(staged) else os.path.join(host_git, stem + suffix)

        host_copy = os.path.join(host_git, "objects", "pack", rel[1])
        if same_bytes(entry.source, host_copy):
            return  # (git freshening a pack it has: only its time changed, r33b)
        if os.path.lexists(where(".idx")):
            verify_pack(where(".idx"), where(".pack"), store)
        return
    raise GitUnreadable(f"objects/{'/'.join(rel)} is no object or pack corral checks")


def _own_tips(host_git: str) -> set[str]:
    """The commits the host's own branches and tags name: not remote-tracking refs, the
    stash or FETCH_HEAD (someone else's work the user fetched, unreviewed, r34a; r60a
    FETCHEDHEAD: counted as known, `git reset --soft origin/x` moved your branch onto it
    unheld, and your next `git stash` wrote its files)."""
    kinds = ("refs/heads/", "refs/tags/")
    found = {sha for name, sha in _packed(host_git).items() if name.startswith(kinds)}
    for top in kinds:
        for directory, dirs, files in os.walk(os.path.join(host_git, top)):
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(directory, d))]
            for name in files[:HOST_TIPS]:
                found |= _named(_text(os.path.join(directory, name)))
    return found


FILE, TREE, SYMLINK, GITLINK = 0o100000, 0o040000, 0o120000, 0o160000
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_SUBMODULE_STORES = 64


class Trees:
    """Where the paths one check looks at come from: the repository (its host and staging
    git directories, their objects), the tree they were diffed against, the budget."""

    __slots__ = (
        "base", "budget", "head", "host_git", "on_head_line", "parent", "store", "upper_git",
    )  # fmt: skip

    def __init__(
        self,
        host_git: str,
        upper_git: str,
        store: ObjectStore,
        base: str | None,
        budget: Budget,
        parent: str | None = None,
        head: str | None = None,
        on_head_line: bool = True,
    ) -> None:
        self.host_git, self.upper_git, self.store = host_git, upper_git, store
        # (whether the commit is on the first-parent line of HEAD once applied: the index
        # is the next commit there)
        self.on_head_line = on_head_line
        self.base, self.budget = base, budget
        # the tree of the commit's own first parent (base is what its paths were diffed
        # against: HEAD's tree when the parent was not checked first)
        self.parent = parent if parent is not None else base
        self.head = head if head is not None else base  # (the host HEAD's tree)


def _reshapes(
    store: ObjectStore, commit: str, above: list[str], budget: Budget, head: str | None
) -> str | None:
    """What makes a new commit more than files added, changed or deleted on its parents: a
    root, a directory of a parent's gone. Each is what git's rename detection needs to move
    files to places of its own at a merge with it: a directory emptied on one side sends
    the other side's new files in it to where its files went (r44a DIRVENV put a branch's
    `D/python` at `.venv/bin/python`); a root commit makes an unrelated tree a merge base
    (r45a RENCOMBO4; in a repository without a commit yet there is none to merge with).
    With every new commit keeping its parents' directories, so does every stretch of
    history a merge looks at from its base. None for AUTO_MERGE's tree (judged whole)."""
    if not above:
        root = head is not None and store.read(commit)[0] != "tree"
        return "is a root commit" if root else None
    tree = _tree_of(store, commit)
    for parent in above:
        gone = gone_directory(store, _tree_of(store, parent), tree, budget)
        if gone is not None:
            return f"removes the directory {gone}" + (
                f" its parent {parent[:12]} has" if len(above) > 1 else ""
            )
    return None


class Moves:
    """Directories git's rename detection may move a new commit's files out of at a merge:
    one the merge base of a new tip and a ref of yours (any ref, FETCH_HEAD, HEAD) has and
    that ref has not, or one that base has and the work tree once applied has not. The
    merge base is found where the ref's history meets the new tip's (_meet; r46d OLDBASE: a
    branch from an old commit of yours adding `app/json.py`, merged after your own history
    had moved app/'s files to the top, wrote json.py there; r47a REMOTEMOVE: upstream had
    moved them in a branch you fetched; MERGEBASE: the agent's parent lacked app/ already;
    STALEBRANCH: a branch made before app/ existed lacks it without having moved it)."""

    def __init__(
        self, store: ObjectStore, hazards: dict[str, str], bases: list[str],
        work_tree: tuple[str, str],
    ) -> None:  # fmt: skip
        self.store, self.hazards, self.bases, self.work_tree = store, hazards, bases, work_tree
        self.memo: dict[str, str | None] = {}

    def lacking(self, directory: str) -> str | None:
        """What moved `directory` away since a merge base had it, or None."""
        if directory not in self.memo:
            found = self.hazards.get(directory)
            if found is None and any(subtree(self.store, b, directory) for b in self.bases):
                upper, host = (os.path.join(r, directory) for r in self.work_tree)
                there = os.path.isdir(upper) if os.path.lexists(upper) else (
                    not _gone(upper) and os.path.isdir(host)
                )  # fmt: skip
                found = None if there else "the work tree once applied"
            self.memo[directory] = found
        return self.memo[directory]

    def out_of(
        self, paths: list[tuple[str, int, str]], since: str | None
    ) -> tuple[str, str] | None:
        """(path, why) of the first path added inside a directory a merge may move (a
        changed one is where the other side moved it already: git moves the file, r48a
        EDITHOLD)."""
        for path, _mode, _sha in paths:
            if since and entry_at(self.store, since, path) is not None:
                continue
            parts = path.split("/")
            for i in range(1, len(parts)):
                lacking = self.lacking("/".join(parts[:i]))
                if lacking is not None:
                    return path, (
                        f"inside {'/'.join(parts[:i])}, which {lacking} does not have since "
                        "the merge base: at a merge, rebase, cherry-pick or stash pop with "
                        "it, git's rename detection moves it to where that directory's files "
                        "went, a place corral cannot judge it at"
                    )
        return None


EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # (never a rename at a merge)


def _size(store: ObjectStore, sha: str, memo: dict[Any, Any]) -> int:
    if ("size", sha) not in memo:
        memo[("size", sha)] = len(store.read(sha)[1])
    return memo[("size", sha)]  # type: ignore[no-any-return]


def _renamed_portion(old: str, new: str) -> tuple[str, str]:
    """(old directory, new directory) a rename of file `old` to `new` says was renamed:
    their directories less the components they end in alike (as git reads a rename for
    its directory-rename detection: src/pkg/a.py -> a.py renames src/pkg to the top)."""
    a, b = old.split("/")[:-1], new.split("/")[:-1]
    while a and b and a[-1] == b[-1]:
        a.pop()
        b.pop()
    return "/".join(a), "/".join(b)


def _renamed_dirs(
    store: ObjectStore, base: str, theirs: str, memo: dict[Any, Any], budget: Budget
) -> dict[str, set[str]]:
    """directory -> where tree `theirs` has its files: the directories of tree `base` that
    `theirs` has not, and the places git's rename detection at a merge with base `base` may
    pair their files with (a file `theirs` has where `base` has none: the same object, or
    the same name at a size within a factor of two, as a merge renames at 50% similarity;
    never an empty file, which a merge never takes for a rename)."""
    key = ("renamed", base, theirs)
    if key not in memo:

        def files(old: str, new: str) -> list[tuple[str, str]]:
            return [
                (path, sha)
                for path, mode, sha in changed_paths(store, old, new, budget, new_files=True)
                if sha != EMPTY_BLOB and mode & 0o170000 != GITLINK
            ]

        landed = files(base, theirs)
        gone = files(theirs, base) if landed else []  # (what base has alone)
        by_object: dict[str, list[str]] = {}
        for path, sha in gone:
            by_object.setdefault(sha, []).append(path)
        # (as git: exact renames first; only what they leave is paired by name and size)
        pairs = [(source, path) for path, sha in landed for source in by_object.get(sha, [])]
        taken = {source for source, _path in pairs}
        by_name: dict[str, list[tuple[str, str]]] = {}
        for path, sha in gone:
            if path not in taken:
                by_name.setdefault(path.rpartition("/")[2], []).append((path, sha))
        for path, sha in landed:
            if sha in by_object:
                continue
            for source, other in by_name.get(path.rpartition("/")[2], []):
                one, two = _size(store, sha, memo), _size(store, other, memo)
                if min(one, two) * 2 >= max(one, two):
                    pairs.append((source, path))
        found: dict[str, set[str]] = {}
        for source, path in pairs:
            old, new = _renamed_portion(source, path)
            if old and old != new and subtree(store, theirs, old) is None:
                found.setdefault(old, set()).add(new)
        memo[key] = found
    return memo[key]  # type: ignore[no-any-return]


MAX_TIPS = 20_000  # refs of the host's looked at for what they moved (r49a BUDGETHOLD)
ANCESTRY = 20_000  # ancestors of a new tip looked at
WALK_BUDGET = 50_000  # commits read walking every ref of one check, each once
# new tips times the commits the host's refs name, met pair by pair (a change set past it is
# held as unreadable: r51a REFSQUARE, 5,000 by 5,000 took 20 s with the user's lock held)
PAIR_BUDGET = 2_000_000


def _peeled(store: ObjectStore, sha: str) -> str | None:
    """The commit a ref's object is, or an annotated tag (on a tag ...) names; None for a
    tag of a tree or a blob, which no merge takes (r53a ANNOTTAG: a release tag's object
    was walked as a commit, and every new commit held)."""
    for _ in range(8):
        kind, data = store.read(sha)
        if kind == "commit":
            return sha
        if kind != "tag":
            return None
        first = data.split(b"\n", 1)[0].split(b" ")
        if len(first) != 2 or first[0] != b"object":
            raise GitUnreadable(f"a malformed tag {sha}")
        sha = first[1].decode("ascii", "replace")
    raise GitUnreadable("tags on tags too deep")


def _branch_tips(host_git: str) -> dict[str, str]:
    """name -> commit of everything of the host's a merge, pull, cherry-pick, rebase or
    stash pop may take: every ref (branches local and fetched, tags, the stash, a fetched
    `refs/pull/7`: r48a TOMLTAG, r49a PULLREF), what FETCH_HEAD, ORIG_HEAD and the other
    `*_HEAD` files name (r49a FETCHHEAD: `git merge FETCH_HEAD`), HEAD and the HEADs of
    linked worktrees (r48a WORKTREEHEAD). More than MAX_TIPS: GitUnreadable (r47a
    MANYBRANCHES: 64 were looked at, the rest dropped)."""
    found = {n: sha for n, sha in _packed(host_git).items() if n.startswith("refs/")}
    for directory, dirs, files in os.walk(os.path.join(host_git, "refs")):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(directory, d))]
        for name in files:
            path = os.path.join(directory, name)
            # (as git reads a loose ref: its first word, or where `ref:` leads; an element
            # of a set of both words was whichever came out, r54a REFTWO)
            sha = _resolve([host_git], _text(path))
            if sha:
                found[os.path.relpath(path, host_git)] = sha
        if len(found) > MAX_TIPS:
            raise GitUnreadable(f"more than {MAX_TIPS} refs to look at")
    for name in ("FETCH_HEAD", "ORIG_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"):
        for i, sha in enumerate(sorted(_named(_text(os.path.join(host_git, name))))):
            found[f"{name}:{i}"] = sha
    try:
        worktrees = sorted(os.listdir(os.path.join(host_git, "worktrees")))[:MAX_TIPS]
    except OSError:
        worktrees = []
    for name in ["", *(os.path.join("worktrees", w) for w in worktrees)]:
        head = _resolve([host_git], _text(os.path.join(host_git, name, "HEAD")))
        if head:
            found[os.path.join(name, "HEAD")] = head
    return found


def _first_parents(head: str | None, parents_of: Callable[[str], list[str]]) -> set[str]:
    """HEAD and its first ANCESTORS first parents: history the host has had checked out."""
    line: set[str] = set()
    for _ in range(ANCESTORS):
        if not head:
            break
        line.add(head)
        above = parents_of(head)
        head = above[0] if above else None
    return line


def _tagged(data: bytes) -> str:
    """What a tag object's first line (`object <id>`) names."""
    return data.split(b"\n", 1)[0][7:].decode("ascii", "replace").strip()


def _shallow(host_git: str) -> frozenset[str]:
    """The commits the host's `shallow` file names: their parents are not in the repository
    (a `--depth 1` clone held every commit as unreadable history, r49a SHALLOW)."""
    return frozenset(_named(_text(os.path.join(host_git, "shallow"))))


def _index_paths(
    before: Index, after: Index, store: ObjectStore, base: str | None, budget: Budget
) -> Iterable[tuple[str, int, str]]:
    """What an index would put in the work tree that the host's does not: its changed
    entries, the trees its cache-tree names (`git commit` takes them as they are, r33a
    CTREE) against the host HEAD's, and what its resolve-undo can bring back."""
    for key, value in after.entries.items():
        if before.entries.get(key) != value:
            yield key.split("\0", 1)[0], value[0], value[1]  # (a stage's too)
    for path, tree in after.trees.items():
        if before.trees.get(path) != tree:
            where = f"{path}/" if path else ""
            yield from changed_paths(store, subtree(store, base, path), tree, budget, where)
    for path, mode, sha in set(after.undo) - set(before.undo):
        yield path, mode, sha


# characters git allows in a ref's name that a prompt expands (r67a REFMETA: `git checkout
# -b '$(touch${IFS}x)'` ran at a prompt that builds PS1 from the branch name); not `()`, `!`
# or `{}`, which prompts leave as they are (r68c BRANCHCHARS: `fix(ui)` was held)
SHELL_CHARS = frozenset("$`")


def _escapes(path: str) -> bool:
    """Whether a file holds a control character other than a tab or a line end (C1 ones
    too, as UTF-8: r73a HEADC1)."""
    import re

    data = _bytes(path) or b""
    return re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", data) is not None


def _shell_ref_name(inside: list[str], source: str) -> str | None:
    """The first ref name with SHELL_CHARS or a control character that a staged ref,
    reflog, packed-refs or HEAD file gives (by its path, or in its text), or None: git's
    own prompt (`__git_ps1`) reads HEAD and prints the name as it is (r72a HEADESC: an OSC
    sequence at every prompt), and git refuses such a name everywhere else."""
    names = ["/".join(inside)] if inside[0] in ("refs", "logs") else []
    if inside == ["packed-refs"] or (len(inside) == 1 and inside[0].endswith("HEAD")):
        text = _text(source) or ""
        # (the rest of each line after its first word: split() would cut a name at the
        # control characters it counts as spaces, \x1c to \x1f)
        names += [line.partition(" ")[2].strip(" \r") for line in text.split("\n")]
    return next((n for n in names if SHELL_CHARS & set(n) or _controls(n)), None)


def _controls(name: str) -> bool:
    """Whether a name holds a control character: C0, DEL, or C1 (U+0080 to U+009F, which
    git accepts in a ref name and a UTF-8 terminal may act on: r73a HEADC1)."""
    return any(c < " " or "\x7f" <= c <= "\x9f" for c in name)


STAT_CHECK_BYTES = 256 << 20  # file bytes hashed to see what an index's stat data hides


def _stat_hides(before: Index, after: Index, host_tree: str, upper_tree: str) -> str | None:
    """The first path whose index entry has the mtime (whole seconds: git built without
    USE_NSEC compares no more, r66a NSECHIDE) and size of the work tree's file as the change
    set leaves it, but another object than that file, where the entry is new or changed or
    the change set writes that file (r66a STATKEEP: the payload at the old size, the old
    mtime put back, only ctime and inode changed in the entry): git takes such a file for
    unchanged without reading it, so `git status`, `git diff` and `commit -a` would pass
    over what it holds (r63a STATHIDE). GitUnreadable past STAT_CHECK_BYTES."""
    left = STAT_CHECK_BYTES
    for key, stat_data in after.stats.items():
        mode, sha = after.entries[key]
        if "\0" in key or mode not in (0o100644, 0o100755, 0o120000):
            continue
        staged = os.path.join(upper_tree, key)
        written = os.path.lexists(staged)
        own = before.stats.get(key) == stat_data and before.entries.get(key) == (mode, sha)
        if own and not written:
            continue  # (the host's own entry, of a file the change set leaves alone)
        path = staged if written else os.path.join(host_tree, key)
        try:
            st = os.lstat(path)
        except OSError:
            continue  # (no file: git shows it as deleted)
        seconds = st.st_mtime_ns // 1_000_000_000
        if (seconds & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF) != (stat_data[0], stat_data[2]):
            continue  # (git reads the file: what differs shows)
        left -= st.st_size
        if left < 0:
            raise GitUnreadable("an index whose stat data names more file bytes than corral reads")
        try:
            if stat.S_ISLNK(st.st_mode):
                data = os.readlink(path).encode("utf-8", "surrogateescape")
            else:
                data = read_regular(path, 1 << 40, follow=False)
        except OSError:
            return key
        if blob_id(data) != sha:
            return key
    return None


def _gone_from_index(
    before: dict[str, tuple[int, str]], after: dict[str, tuple[int, str]]
) -> str | None:
    """The first directory the host's index has entries in and the new one has none in."""

    def directories(entries: dict[str, tuple[int, str]]) -> set[str]:
        found: set[str] = set()
        for key in entries:
            path = key.split("\0", 1)[0]
            while "/" in path:
                path = path.rpartition("/")[0]
                if path in found:
                    break
                found.add(path)
        return found

    if before.keys() == after.keys():
        return None
    gone = directories(before) - directories(after)
    return min(gone) if gone else None


def _submodule_stores(host_git: str, upper_git: str, path: str) -> list[str]:
    """The object directories a submodule's commit may be in: every git directory below
    `modules/` of the repository's (a submodule's name need not be its path; nested ones
    are modules/a/modules/b) and an old-style `path/.git` in the work tree, the staging
    area's first."""
    found: list[str] = []
    for git_dir in (upper_git, host_git):
        for directory, dirs, _files in os.walk(os.path.join(git_dir, "modules")):
            if "objects" in dirs:
                found.append(os.path.join(directory, "objects"))
            dirs[:] = sorted(
                d for d in dirs
                if d not in ("objects", "refs", "logs", "hooks", "info")
                and not os.path.islink(os.path.join(directory, d))
            )  # fmt: skip
            if len(found) > MAX_SUBMODULE_STORES:
                raise GitUnreadable(f"more than {MAX_SUBMODULE_STORES} submodule repositories")
        found.append(os.path.join(os.path.dirname(git_dir), path, ".git", "objects"))
    return found


class GitHistoryRules(RuleSet):
    if TYPE_CHECKING:

        def _protected(self, entry: Entry) -> Refusal | None: ...  # (the Checker's)

    def hold_git_state_together(
        self, verdicts: list[tuple[Entry, Refusal | None]]
    ) -> list[tuple[Entry, Refusal | None]]:
        """HEAD, refs, reflogs and the index of one repository (their deletions too) are
        applied together or held together, a submodule's with its superproject's: a
        checkout whose index was held but whose HEAD moved showed the user a staged revert
        of what it changed (review r33b)."""
        held = {self._git_state[e.path] for e, v in verdicts if v and e.path in self._git_state}
        if not held:
            return verdicts
        # a submodule's held with its superproject's: a bump whose submodule refs are held
        # while the superproject's commit of it lands leaves the two apart (r38a)
        held |= {git.partition("/modules/")[0] for git in held if "/modules/" in git}
        out: list[tuple[Entry, Refusal | None]] = []
        for entry, verdict in verdicts:
            if verdict is None and self._git_state.get(entry.path) in held:
                verdict = self.refusal(
                    "protected", entry.path, PROTECTED,
                    f"{HELD_WITH_GIT} ({HELD_GIT_WHY})",
                )  # fmt: skip
            out.append((entry, verdict))
        return out

    def _git_history(self, entry: Entry, git_rel: str, inside: list[str]) -> Refusal | None:
        """For an entry `inside` the git directory at `git_rel` (relative to its root). Only
        what git writes in everyday work passes, checked: objects (each what its name says),
        refs and reflogs, HEAD and its kin, packed-refs, the index; the rest of a git
        directory is held (replace refs, BISECT_*, commit-graphs, a split index's shared
        file, sparse-checkout: each changes what git takes for a commit's files, r32a)."""
        if entry.kind == "whiteout" and inside[0] != "objects":
            if _ref_file(inside) or inside == ["index"]:
                # a ref, reflog or index deleted goes with the rest of the repository's git
                # state: `git pack-refs` deletes loose refs its held packed-refs keeps
                # (r38a PACKREFS: applied alone, every branch was gone)
                self._git_state[entry.path] = os.path.join(entry.root, git_rel)
            return None
        if entry.kind == "dir" and entry.opaque and inside[0] in ("refs", "logs"):
            # a directory of refs replaced whole deletes the host's refs in it: with the
            # rest of the state (r40a GCOPAQUE: applied alone, a fetched branch was gone)
            self._git_state[entry.path] = os.path.join(entry.root, git_rel)
            return None
        if entry.kind == "dir" and inside == ["rr-cache"] and not os.path.lexists(entry.path):
            # (r67a RRCACHE: an empty rr-cache turns git's rerere on where you never did)
            return self.refusal(
                "protected", entry.path, PROTECTED,
                "a new rr-cache: git would start recording and replaying conflict "
                "resolutions (rerere) at your merges; review it: git config rerere.enabled",
            )  # fmt: skip
        if entry.kind in ("dir", "link", "special"):
            return None  # (links and devices: the rules after this one refuse them)
        name = "/".join(inside)
        host_git = os.path.join(entry.root, git_rel)
        upper_root = entry.upper_root()
        upper_git = os.path.join(upper_root, git_rel)
        store = ObjectStore([os.path.join(upper_git, "objects"), os.path.join(host_git, "objects")])
        budget = Budget(ENTRY_BUDGET)
        is_index = name == "index"
        try:
            if inside[0] == "objects":  # (a whiteout too: git prunes what it packed)
                _check_object(
                    entry, inside, host_git, upper_git, store,
                    lambda: self._staying(host_git, upper_git),
                )  # fmt: skip
                return None
            if entry.kind != "file":
                raise GitUnreadable(f"a {entry.kind} where git keeps its files")
            if inside[0] == "logs" and entry.kind == "file" and _escapes(entry.source):
                # (r67a REFLOGESC: `git reflog` without a pager prints a message's bytes as they
                # are: a window title, a clipboard write, a line rewritten)
                self._git_state[entry.path] = host_git
                return self.refusal(
                    "protected", entry.path, PROTECTED,
                    "a reflog whose messages hold terminal escapes or other control characters "
                    "(`git reflog` prints them as they are); review it: cat -v",
                )  # fmt: skip
            shelly = _shell_ref_name(inside, entry.source)
            if shelly is not None:
                self._git_state[entry.path] = host_git
                return self.refusal(
                    "protected", entry.path, PROTECTED,
                    f"a branch or tag named {shelly!r}: a shell prompt or status line that puts "
                    "the branch's name into a command would run what it holds; review it: git "
                    "branch -a",
                )  # fmt: skip
            plain_ref = name in PLAIN and _as_ref(_text(entry.source)) is not None
            if name in PLAIN and not plain_ref:
                return None  # (git would not read it as a ref: `git checkout -` can't use it)
            if not (is_index or plain_ref or _ref_file(inside)) or inside[:2] == [
                "refs",
                "replace",
            ]:
                raise GitUnreadable(f"{name} is no file corral checks in a git directory")
            self._git_state[entry.path] = host_git
            if os.path.basename(host_git) != ".git":
                # (a linked worktree's or a submodule's: where its files land is not known
                # here, so neither are the protected paths there, r33a WTPATH)
                raise GitUnreadable("a git directory whose work tree corral does not know")
            head = _resolve([host_git], _text(os.path.join(host_git, "HEAD")))
            base = _tree_of(store, head) if head else None
            # HEAD as this change set leaves it, once per repository: moved (through the
            # HEAD file, a branch ref or packed-refs), the index as it will be stages against
            # it what that commit lacks; naming no commit where there is history, it would
            # take the index as a new history's first commit (r56a HEADONLY, UNBORN; r57a
            # SOFTRESET, NOOPIDX, UNBORNREF)
            staged = self._head_as_left(store, head, host_git, upper_git, budget)
            if staged is not None:
                return self.refusal(
                    "protected", entry.path, PROTECTED,
                    f"HEAD as this change set leaves it, with the index as it will be, stages "
                    f"{staged[0]} ({staged[1]}): host git would write it into the work tree "
                    "unchecked at your next commit and merge, or stash pop; review it: git "
                    "status",
                )  # fmt: skip
            if is_index:
                before = read_index(os.path.join(host_git, "index"))
                after = read_index(entry.source)
                cached = cache_tree_disagrees(after)
                if cached is not None:
                    return self.refusal(
                        "protected", entry.path, PROTECTED,
                        f"the index's cached tree of {cached + '/' if cached else 'the top'} "
                        "is not the tree its entries make: your next `git commit` would take "
                        "that tree, not what `git status` shows you; review it: git status",
                    )  # fmt: skip
                changed_caches = sorted(
                    name.decode() for name in {*before.caches, *after.caches}
                    if before.caches.get(name) != after.caches.get(name)
                )  # fmt: skip
                if changed_caches:
                    # (r66a UNTRHIDE: an untracked cache whose directories' times were set to
                    # the apply's second hid a new file from `git status`; the fsmonitor data
                    # marks entries as unchanged the same way)
                    return self.refusal(
                        "protected", entry.path, PROTECTED,
                        "the index's untracked cache or fsmonitor data changed "
                        f"({', '.join(changed_caches)}): git trusts them to say which files "
                        "changed, so `git status` could pass over what the command wrote; "
                        "review it: git status -uall",
                    )  # fmt: skip
                hides = _stat_hides(
                    before, after, os.path.dirname(host_git), os.path.dirname(upper_git)
                )
                if hides is not None:
                    return self.refusal(
                        "protected", entry.path, PROTECTED,
                        f"the index says {hides} is unchanged (its file's time and size) but "
                        "stages other contents: git would not look at the file, so `git "
                        "status` and `git diff` would not show what it holds; review it: git "
                        "status",
                    )  # fmt: skip
                gone = _gone_from_index(before.entries, after.entries)
                if gone is not None:
                    # (a `git commit` or `git stash` of it on the host makes the history the
                    # commit rule above holds: held here as there)
                    return self.refusal(
                        "protected", entry.path, PROTECTED,
                        f"the index removes the directory {gone}: a commit of it would be "
                        "history that removes a directory, which waits for your review (at "
                        "a merge, rebase, cherry-pick or stash pop with it, git's rename "
                        "detection moves another branch's files to places corral did not "
                        "judge them at); review it: git status",
                    )  # fmt: skip
                flagged = sorted(
                    k for k, v in after.flags.items() if v & ~before.flags.get(k, 0) & HIDING
                )
                if flagged:
                    # (r62a HIDEFLAGS: `git status`, `git diff` and `commit -a` then pass over
                    # what the command edited there)
                    return self.refusal(
                        "protected", entry.path, PROTECTED,
                        f"the index marks {flagged[0].split(chr(0))[0]} skip-worktree or "
                        "assume-unchanged: git would no longer show you what changes there; "
                        "review it: git ls-files -v",
                    )  # fmt: skip
                paths = list(_index_paths(before, after, store, base, budget))
                # (a file staged in a directory a branch of yours moved away goes where its
                # files went at `git stash pop` there, or a merge once committed: r54a
                # IDXMOVE, judged as a commit on HEAD would be)
                # (HEAD as the host has it and as this change set leaves it: a command that
                # checked out another branch stages against that one, r55a IDXHEAD)
                moved = _resolve([upper_git, host_git], _merged_text([upper_git, host_git], "HEAD"))
                # (each HEAD on its own: what either lacks is added there, r56a IDXHEAD2)
                found = self._staged_moves(store, paths, (head, moved), host_git, upper_git, budget)
                found = found or self._hit(paths, Trees(host_git, upper_git, store, base, budget))
                what, review = "the index", ""
            else:
                if name in IN_PROGRESS:
                    # (r61a MERGEHEAD: naming your own unmerged branch, nothing new, it
                    # made your next `git commit` a merge that dropped that branch's files,
                    # and `git branch -d` then took the branch for merged)
                    return self.refusal(
                        "protected", entry.path, PROTECTED,
                        f"{name}: a merge, cherry-pick or revert left in progress, which your "
                        "next commit would take as its own (its parents, what it leaves "
                        "out); review it: git status",
                    )  # fmt: skip
                new = staged_names(name, entry.source, host_git, upper_git)
                found = None
                clean = self._git_clean.setdefault(host_git, set())
                auto_merge = name == "AUTO_MERGE"
                commits = list(self._new_commits(store, new, host_git, head, auto_merge))
                if commits and self.git_history == "hold":
                    return self._history_held(entry.path)
                fresh = {commit for commit, _ in commits}
                # A commit is clean for the tips it was judged with: where files may move
                # depends on them (r52a CLEANMEMO: cleared under a merge of it with your
                # branch, named first, it was not judged again where a ref named it alone)
                # (a tag names its commit as a tip: r53a TAGTIP, a packed tag on X left X
                # judged only with a merge's tips)
                named = {c for c in (_peeled(store, n) for n in new) if c is not None}
                # ... and each new side of a new merge: a rebase drops the merge and replays
                # the merged branch's commits after that side's (r53a REBASEDROP: a merge of
                # the agent's commit with your branch made that branch look merged)
                sides = {p for _, a in commits if len(a) > 1 for p in a if p in fresh}
                tips = tuple(sorted(((named & fresh) or fresh) | sides))
                moves: Moves | None = None
                head_line = self._head_line(store, host_git, upper_git, fresh)
                # a stash's untracked files: its third parent, and never another parent of
                # a commit (r53a STASHBASE: such a root as the stash's first parent was the
                # merge base of `git stash pop`, exempt from every history check)
                third = {a[2] for _, a in commits if len(a) >= 3}
                other = {p for _, a in commits for p in a[:2]}
                for commit, above in reversed(commits):  # (oldest first: against its parent)
                    if (commit, tips) in clean:
                        continue  # (reached again by another ref or reflog of this change set)
                    # What a commit adds against HEAD is what its first parent adds against
                    # HEAD, or what it adds against that parent: with the parent checked
                    # clean, only the second is left to look at (r33b: a long rebase diffed
                    # every commit against HEAD)
                    parent = _tree_of(store, above[0]) if above else None
                    since = (
                        parent if above and above[0] in fresh and (above[0], tips) in clean
                        else base
                    )  # fmt: skip
                    what = f"commit {commit[:12]}, which {name} makes reachable,"
                    stash_root = (
                        name in ("refs/stash", "logs/refs/stash")
                        and not above
                        and commit in third
                        and commit not in other
                        and store.read(commit)[1]
                        .partition(b"\n\n")[2]
                        .startswith(b"untracked files on ")
                    )
                    # (`git stash -u` keeps the untracked files in a root commit that only
                    # the stash reaches: no merge base of anything but by name)
                    reshaped = None if stash_root else _reshapes(store, commit, above, budget, head)
                    if reshaped is not None:
                        return self.refusal(
                            "protected", entry.path, PROTECTED,
                            f"{what} {reshaped}: history that starts anew or removes a "
                            "directory waits for your review (at a merge, rebase, "
                            "cherry-pick or stash pop with it, git's rename detection moves "
                            "another branch's files to places corral did not judge them "
                            f"at); review it: git show --stat {commit[:12]}",
                        )  # fmt: skip
                    paths = list(changed_paths(store, since, _tree_of(store, commit), budget))
                    trees = Trees(
                        host_git, upper_git, store, since, budget, parent or "", base,
                        on_head_line=commit in head_line,
                    )  # fmt: skip
                    if moves is None:  # (only for a commit not checked clean yet)
                        moves = self._moves(store, tips, host_git, upper_git, budget)
                    found = (
                        moves.out_of(paths, since)
                        or self._hit(paths, trees)
                        or self._picked(store, commit, above, trees, budget)
                        or (None if stash_root else self._lacks_config(store, commit, host_git))
                    )
                    if found is not None:
                        # (which commit, and how to look at it: r41a)
                        review = f"; review it: git show {commit[:12]} -- {found[0]}"
                        break
                    if not stash_root:  # (another ref naming it judges it anew, r49a)
                        clean.add((commit, tips))
        except UNREADABLE as e:
            # (anything the reader did not foresee is unreadable too: held, never applied)
            return self.refusal(
                "protected", entry.path, PROTECTED,
                f"git history corral cannot read ({e}): what host git would write into the "
                "work tree from it is not known",
            )  # fmt: skip
        if found is None:
            return None
        path, hit = found
        return self.refusal(
            "protected", entry.path, PROTECTED,
            f"{what} holds {path} ({hit}): host git would write it into the work tree "
            f"unchecked at your next checkout, reset, restore, revert or stash pop{review}",
        )  # fmt: skip

    def _history_held(self, path: str) -> Refusal:
        """sandbox.git_history = "hold": new history waits for review, whatever is in it.
        Each review round of the reading of history (r31a to r57a) found another shape
        that git's rename detection moves to a place corral did not judge a file at (a
        later move of yours, a revert, a subtree merge, upstream's layout): what git will
        write there depends on commits not made yet, which no check here can read.
        `corral changes ID` lists each new commit, and its files as corral reads them
        (history_lines): git's own listing printed a message's escapes (r59a ESCREVIEW),
        left out a stash's new parent (STASHBASE), a merge's own files (r58a REVIEWMERGE)
        and, as suggested, all tips but one (MULTITIP). The same words for every ref of
        the repository: the user reads one line for them all (r58c HELDNOISE)."""
        see = words.command("changes", self.plan.get("id", "ID"),
                            frontend_name=self.plan.get("frontend"))  # fmt: skip
        return self.refusal(
            "protected", path, "sandbox.git_history",
            f"{HISTORY_WAITS} (see them: {see} lists each new commit's files; the objects "
            "are in); at a merge, rebase, cherry-pick or revert git's rename detection "
            "moves a commit's files to places no check made now foresees "
            "(sandbox.git_history)",
        )  # fmt: skip

    def _head_as_left(
        self, store: ObjectStore, head: str | None, host_git: str, upper_git: str,
        budget: Budget,
    ) -> tuple[str, str] | None:  # fmt: skip
        """(path, why) of what the index as it will be stages against HEAD as this change
        set leaves it, when that HEAD is another commit than the host's (see _git_history);
        once a check per repository. GitUnreadable for a HEAD that will name no commit in a
        repository with history."""
        key = ("head as left", upper_git)
        memo = self._git_walks.setdefault(host_git, {})
        if key in memo:
            return memo[key]  # type: ignore[no-any-return]
        memo[key] = None
        dirs = [upper_git, host_git]
        moved = _resolve(dirs, _merged_text(dirs, "HEAD"))
        if moved is None:
            if head is not None or self._refs(host_git).keys() - {"HEAD"}:
                raise GitUnreadable("HEAD naming no commit in a repository with history")
            return None
        if moved == head:
            return None
        path = os.path.join(upper_git, "index")
        index = read_index(path if os.path.lexists(path) else os.path.join(host_git, "index"))
        tree = _tree_of(store, moved)
        paths = [
            (p, mode, sha) for p, (mode, sha) in index.entries.items()
            if "\0" not in p and entry_at(store, tree, p) != (mode, sha)
        ]  # fmt: skip
        memo[key] = self._staged_moves(
            store, paths, (moved,), host_git, upper_git, budget
        ) or self._hit(paths, Trees(host_git, upper_git, store, tree, budget))
        return memo[key]  # type: ignore[no-any-return]

    def _staged_moves(
        self, store: ObjectStore, paths: list[tuple[str, int, str]],
        heads: tuple[str | None, ...], host_git: str, upper_git: str, budget: Budget,
    ) -> tuple[str, str] | None:  # fmt: skip
        """(path, why) of the first path an index stages in a directory a branch of yours
        moved away, judged against each HEAD it may be committed on: what that HEAD lacks
        is added there (r54a IDXMOVE, r55a IDXHEAD, r56a IDXHEAD2)."""
        for head in sorted({h for h in heads if h}):
            tree = _tree_of(store, head)
            added = [p for p in paths if entry_at(store, tree, p[0]) is None]
            if added:  # (only then: `git status` rewrites the index unchanged)
                moves = self._moves(store, (head,), host_git, upper_git, budget)
                found = moves.out_of(added, tree)
                if found is not None:
                    return found
        return None

    def _moves(
        self, store: ObjectStore, tips: tuple[str, ...], host_git: str, upper_git: str,
        budget: Budget,
    ) -> Moves:  # fmt: skip
        """The directories new history's files may be moved out of (Moves): for each new tip
        and each ref of the host's, their merge bases, where the ref's history first meets
        the new tip's ancestry through every parent (r48a PULLMERGE, SIDEBASE, BRANCHOFF: HEAD's
        first-parent line was the wrong place to meet when upstream came in as a merge's
        second parent or the agent worked on another branch), and the directories that
        base has and the ref has not. Walks are remembered for the whole check (r48a COST:
        the same walks ran once per changed ref file)."""
        work = (os.path.dirname(upper_git), os.path.dirname(host_git))
        memo = self._git_walks.setdefault(host_git, {})
        news = [n for n in tips if store.read(n)[0] == "commit"]  # (see _git_history)
        if ("moves", tuple(news)) in memo:
            return memo[("moves", tuple(news))]  # type: ignore[no-any-return]
        # (each commit the host's refs name once, by its first name and HEAD's: r51a
        # REFSQUARE, 5,000 refs naming one commit were each met with every new tip)
        names: dict[str, list[str]] = {}
        for name, ref in sorted(self._refs(host_git).items()):
            tip = _peeled(store, ref)
            if tip is not None:
                names.setdefault(tip, []).append(name)
        if len(news) * len(names) > PAIR_BUDGET:
            raise GitUnreadable(
                f"{len(news)} new tips to meet with {len(names)} commits your refs name"
            )
        hazards: dict[str, str] = {}
        bases: list[str] = []
        for new in news:
            self._ancestry(store, new, memo, host_git)
            for tip, named in names.items():
                met = self._meet(store, tip, new, memo, host_git)
                if "HEAD" in named:
                    bases += [_tree_of(store, m) for m in met]
                if met == [tip]:
                    continue  # (merged into the new tip: the base is the ref itself)
                tree = _tree_of(store, tip)
                name = "HEAD" if "HEAD" in named else named[0]
                what = "your HEAD" if name == "HEAD" else f"{name} ({tip[:12]})"
                for base in (_tree_of(store, m) for m in met):
                    if (base, tree) not in memo:
                        memo[(base, tree)] = list(gone_directories(store, base, tree, budget))
                    for gone in memo[(base, tree)]:
                        hazards.setdefault(gone, what)
        memo[("moves", tuple(news))] = moves = Moves(store, hazards, bases, work)
        return moves

    def _picked(
        self, store: ObjectStore, commit: str, above: list[str], trees: Trees, budget: Budget
    ) -> tuple[str, str] | None:
        """(path, why) of the first path `commit` adds that a cherry-pick or rebase of it
        onto a branch of yours would write elsewhere, where the work tree's rules hold it:
        a pick takes the commit's parent for the merge base, and git's rename detection
        sends a new file in a directory the branch has moved to where its files went (r50a
        BACKPORT: your main moved the top-level modules into src/pkg/ after `release` was
        made; a commit adding src/pkg/json.py, picked onto release, wrote json.py at the
        top). Branches local and fetched, HEAD and worktrees' HEADs: where a pick lands."""
        memo = self._git_walks.setdefault(trees.host_git, {})
        if "pickable" not in memo:
            memo["pickable"] = sorted({
                (name.removeprefix("refs/heads/"), _tree_of(store, tip))
                for name, tip in self._refs(trees.host_git).items()
                if name.startswith(("refs/heads/", "refs/remotes/")) or name.endswith("HEAD")
            })  # fmt: skip
        tree = _tree_of(store, commit)
        for parent in above:
            base = _tree_of(store, parent)
            added = list(changed_paths(store, base, tree, budget, new_files=True))
            # (a directory is renamed only on a side that has it no more)
            above_added = {
                p.rsplit("/", i)[0] for p, _m, _s in added for i in range(1, p.count("/") + 1)
            }
            for name, theirs in memo["pickable"]:
                if all(subtree(store, theirs, d) is not None for d in above_added):
                    continue
                renamed = _renamed_dirs(store, base, theirs, memo, budget)
                for path, mode, sha in added if renamed else []:
                    parts = path.split("/")
                    for i in range(len(parts) - 1, 0, -1):
                        for to in sorted(renamed.get("/".join(parts[:i]), ())):
                            moved = "/".join([*([to] if to else []), *parts[i:]])
                            found = self._hit([(moved, mode, sha)], trees)
                            if found is not None:
                                return path, (
                                    f"{found[1]}, where a cherry-pick or rebase of the commit "
                                    f"onto {name} moves it: {moved} (that branch has this "
                                    "directory's files there)"
                                )  # fmt: skip
        return None

    def _parents(
        self, store: ObjectStore, sha: str, memo: dict[Any, Any], host_git: str
    ) -> list[str]:
        if "shallow" not in memo:
            memo["shallow"] = _shallow(host_git)
        return [] if sha in memo["shallow"] else parents(store, sha)

    def _ancestry(
        self, store: ObjectStore, new: str, memo: dict[Any, Any], host_git: str
    ) -> set[str]:
        """A commit's ancestors (breadth first, every parent), at most ANCESTRY of them;
        memo[("whole", new)]: whether that was all of them."""
        key = ("in", new)
        if key not in memo:
            found: set[str] = set()
            queue, at = [new], 0
            while at < len(queue) and len(found) < ANCESTRY:
                sha = queue[at]
                at += 1
                if sha not in found:
                    found.add(sha)
                    queue += self._parents(store, sha, memo, host_git)
            memo[key] = found
            memo[("whole", new)] = at >= len(queue)  # (all of it looked at)
        return memo[key]  # type: ignore[no-any-return]

    def _meet(
        self, store: ObjectStore, tip: str, new: str, memo: dict[Any, Any], host_git: str
    ) -> list[str]:
        """The merge bases of `tip` and `new`, as far as they are found: the ancestors of
        `tip` that are ancestors of `new`, found breadth first over every parent and not
        looked past (r49a MERGEIN: a branch that merged master in and then moved app/ had
        its base through the merge's second parent, which first parents never reach). None
        found: unrelated history (a gh-pages branch), unless the new tip's ancestry was cut
        (r49a DEEP: a fork 20,010 commits down was taken for unrelated): GitUnreadable."""
        key = ("met", new, tip)
        if key in memo:
            return memo[key]  # type: ignore[no-any-return]
        inside: set[str] = memo[("in", new)]
        met: list[str] = []
        seen: set[str] = set()
        queue, at = [tip], 0
        while at < len(queue):
            sha = queue[at]
            at += 1
            if sha in seen:
                continue
            seen.add(sha)
            if sha in inside:
                met.append(sha)
                continue
            memo["walked"] = memo.get("walked", 0) + 1
            if memo["walked"] > WALK_BUDGET:
                raise GitUnreadable(f"more than {WALK_BUDGET} commits to walk")
            queue += self._parents(store, sha, memo, host_git)
        if not met and not memo[("whole", new)]:
            raise GitUnreadable(f"{tip[:12]} meets the new history past what is looked at")
        memo[key] = met
        return met

    def _refs(self, host_git: str) -> dict[str, str]:
        """The host's refs a merge may take (_branch_tips), once a check."""
        if host_git not in self._git_refs:
            self._git_refs[host_git] = _branch_tips(host_git)
        return self._git_refs[host_git]

    def _rival_version(self, trees: Trees, path: str) -> str | None:
        """A ref of the host's that HEAD has not merged (a branch, a fetched one, a tag, the
        stash) with another version of a config than HEAD's: a version made now on HEAD's
        would merge with it into a third (r47a TOMLRESET, r48a TOMLPUSH, TOMLTAG)."""
        refs = self._refs(trees.host_git)
        ours = entry_at(trees.store, trees.head, path) if trees.head else None
        memo = self._git_walks.setdefault(trees.host_git, {})
        merged: set[str] = set()
        if "HEAD" in refs:  # (HEAD's ancestors: a ref HEAD has merged keeps no rival version)
            merged = self._ancestry(trees.store, refs["HEAD"], memo, trees.host_git)
        for name, tip in sorted(refs.items()):
            # (any ref a merge may take: a fetched branch after a push, a tag, the stash,
            # r48a TOMLPUSH, TOMLTAG)
            if tip not in merged:
                theirs = entry_at(trees.store, _tree_of(trees.store, tip), path)
                if theirs is not None and theirs != ours:
                    return name
        return None

    def _head_line(
        self, store: ObjectStore, host_git: str, upper_git: str, fresh: set[str]
    ) -> set[str]:
        """The new commits on HEAD's first-parent line once the change set is applied."""
        line: set[str] = set()
        current = _resolve([upper_git, host_git], _merged_text([upper_git, host_git], "HEAD"))
        while current in fresh and current not in line:
            line.add(current)
            above = parents(store, current)
            current = above[0] if above else None
        return line

    def _staying(self, host_git: str, upper_git: str) -> list[Buffer | None]:
        """staying_packs, mapped, once per check (git gc deletes many loose objects)."""
        if host_git not in self._git_packs:
            self._git_packs[host_git] = mapped_indexes(staying_packs(host_git, upper_git))
        return self._git_packs[host_git]

    def _new_commits(
        self,
        store: ObjectStore,
        tips: set[str],
        host_git: str,
        head: str | None,
        root_trees: bool = False,
    ) -> Iterable[tuple[str, list[str]]]:
        """(commit, its parents) of the commits `tips` make reachable, newest first, down to
        the commits the host's own refs name or the first ANCESTORS of its HEAD (a tag as a
        tip: what it tags; a tree or blob: held, but AUTO_MERGE's tree with `root_trees`)."""
        if not tips:
            return
        if host_git not in self._git_known:
            # (the host's own branches and tags, not what it fetched: a remote-tracking
            # branch's commits are someone else's, unchecked, r35a REMOTEKNOWN)
            self._git_known[host_git] = (_own_tips(host_git), False)
        known, walked = self._git_known[host_git]
        seen: set[str] = set()
        stack = sorted(tips - known)
        while stack:
            sha = stack.pop()
            if sha in seen or sha in known:
                continue
            if not walked:  # (only when something new is there to walk)
                memo = self._git_walks.setdefault(host_git, {})
                known |= _first_parents(head, partial(self._parents, store, memo=memo,
                                                      host_git=host_git))  # fmt: skip
                walked = True
                self._git_known[host_git] = (known, True)
                if sha in known:
                    continue
            seen.add(sha)
            if len(seen) > COMMIT_BUDGET:
                raise GitUnreadable(f"more than {COMMIT_BUDGET} new commits")
            kind, data = store.read(sha)
            above = parents(store, sha) if kind == "commit" else []
            if kind == "tag":  # (what it tags, and that one's history)
                stack.append(_tagged(data))
                continue
            if kind != "commit" and not (kind == "tree" and root_trees):
                # (a ref naming a tree or blob is no checkout; where git would put it, as a
                # replacement or otherwise, is not known here, r41a; AUTO_MERGE names the
                # whole tree a merge left, judged as one)
                raise GitUnreadable(f"a ref naming a {kind} ({sha})")
            stack += above
            yield sha, above

    def _hit(
        self, paths: Iterable[tuple[str, int, str]], trees: Trees, submodule: bool = False
    ) -> tuple[str, str] | None:
        """(path, what is wrong with it) of the first path host git must not write: a
        protected name in it, a protected path at or below it, anything but a directory
        where a protected path's directory is (a link `tools -> elsewhere` over a hook's
        tools/), a symlink as the work tree's rules would refuse it, a submodule commit that
        holds any of these. Not one the host's own refs already have, the same, at that path
        (your branch's `.envrc`, which a rebase onto it brings along, r33b)."""
        host_git = trees.host_git
        work_tree = os.path.dirname(host_git) if os.path.basename(host_git) == ".git" else ""
        for path, mode, sha in paths:
            kind = mode & 0o170000
            hit = self.protected_name_in(path.split("/"))
            hit = f"protected {hit}" if hit is not None else None
            if hit is None and work_tree:
                there = os.path.join(work_tree, path)
                kept = self_or_parent_in(there, self.protected_set)
                # (not a submodule's: its checkout leaves the directory, and the submodule's
                # own git dir there is protected, r67a SUBINPLACE; what its commit holds is
                # judged below)
                if kept is None and kind not in (TREE, GITLINK):
                    kept = self.above_protected.get(there)
                hit = f"protected {os.path.relpath(kept, work_tree)}" if kept else None
            target = trees.store.read(sha)[1] if hit is None and kind == SYMLINK else b""
            if hit is None and kind == SYMLINK:
                hit = self._git_link(path, target, work_tree)
            if hit is None and work_tree and kind in (FILE, SYMLINK) and sha:
                hit = self._as_work_tree(path, mode, sha, trees, work_tree, target)
            if hit is None and kind != GITLINK:
                continue
            known = not submodule and sha and self._host_has(trees.store, host_git, path, mode, sha)
            if hit is None and not known and not submodule and self.git_history == "hold":
                # (a submodule commit the index stages: new history too, r58a SUBHIST: a
                # commit only the submodule's objects held landed, unheld, at `git add sm`)
                return path, f"a submodule commit your refs do not have there: {HISTORY_WAITS}"
            if hit is None and sha and not known:
                # A submodule's commit: `git submodule update`, and every checkout or reset
                # with submodule.recurse set, writes its files below `path` (r37a SUBGITLINK)
                if submodule:
                    raise GitUnreadable(f"a submodule inside the submodule at {path}")
                found = self._hit(*self._submodule_paths(trees, path, sha), submodule=True)
                if found is not None:
                    return found
            if hit is not None and not known:
                return path, hit
        return None

    def _placed(self, full: str) -> tuple[str, str] | None:
        """(the writable root a host path is in, the path relative to it), or None."""
        root = next((r for r in self.roots if full.startswith(r + "/")), None)
        return None if root is None else (root, full[len(root) + 1 :])

    def _as_work_tree(
        self, path: str, mode: int, sha: str, trees: Trees, work_tree: str, target_bytes: bytes
    ) -> str | None:
        """What the work tree's own rules say of a file or link git would write at `path`
        (r39a HISTRULES: a pyproject.toml naming a mypy plugin, a top-level `venv/` package
        or Lua module passed in a commit though the same file in the work tree is held):
        the same rules, by name, at every place a merge's rename detection may put it. A
        config judged by its content is not judged here: git writes other bytes than a
        blob's after a merge of two clean versions, a rename onto its name, or a
        `.gitattributes` encoding (r40a MERGECOMBO, RENAMECOMBO, WTENC), so one in history is
        held unless it is, where it already was, what the work tree holds once applied
        (_as_applied); package.json is judged by its keys. A path inside a directory where a
        protected name's goes is held (`rs/.cargo/a.txt`: directory-rename detection moves
        files into it at a merge or stash pop, r38a DIRRENAME)."""
        from corral.changes.scan import Entry
        from corral.changes.tool_settings_rules import SHARED_CONFIGS

        name = os.path.basename(path)
        if name == "pyvenv.cfg" or (
            path.rpartition("/")[0].endswith("bin") and name.startswith(("python", "pypy"))
        ):
            # (a committed venv: uv, Poetry and PDM run its python by themselves; what its
            # bin/python is cannot be told from one path of a tree, r41a HISTVENV)
            return f"a venv's {name} in history: tools run a project venv's python by themselves"
        elif (name in SHARED_CONFIGS or name in CHAINED) and not self._as_applied(
            path, sha, trees, work_tree
        ):
            return (
                f"a {name} in history: git's merges, renames and attributes change what it "
                "writes, so corral does not judge what it says there; review it"
            )
        parts = path.split("/")
        for i in range(1, len(parts)):
            above = self.protected_name_above(parts[:i])
            if above is not None:
                return (
                    f"a path inside {'/'.join(parts[:i])}, where the directory of protected "
                    f"name {above} goes (a merge's rename detection moves files into it)"
                )
        placed = self._placed(os.path.join(work_tree, path))
        if placed is None:
            return None
        root, rel = placed
        link = mode & 0o170000 == SYMLINK
        target = target_bytes.decode("utf-8", "surrogateescape") if link else ""
        # (where the tree puts it: the places git's rename detection may move it to at a
        # merge are set by history that removes directories, which waits for review, see
        # _reshapes; judging every suffix of the path held every new package's `types.py`
        # as a top-level module, r44a SUBPKG)
        # (the blob's own bytes, for the rules that judge a file by what it says: a
        # stylesheet's `@plugin`, a tsconfig key, a session's first line; judged as missing,
        # they passed as empty, r61a IDXCSS: `git restore .` wrote what they hold)
        source = os.path.join(self._blob_dir(), rel)
        if not link:
            kind, data = trees.store.read(sha)
            if kind != "blob":
                raise GitUnreadable(f"{path}: a {kind} where a file is")
            os.makedirs(os.path.dirname(source), mode=0o700, exist_ok=True)
            if os.path.isdir(source):  # (another path's directory, left from before)
                import shutil

                shutil.rmtree(source)
            fd = os.open(source, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        try:
            refusal = self._protected(Entry(
                root=root, rel=rel, source=source,
                kind="link" if link else "file", mode=mode & 0o777 or 0o777, size=0,
                nlink=1, opaque=False, target=target, ino=0, mtime_ns=0,
            ))  # fmt: skip
        finally:
            if not link:
                os.unlink(source)
        return None if refusal is None else refusal.message

    def _blob_dir(self) -> str:
        """A private directory for the blobs _as_work_tree judges, once a check, removed
        with the checker."""
        if not getattr(self, "_blobs", None):
            import shutil
            import tempfile
            import weakref

            self._blobs = tempfile.mkdtemp(prefix="corral-blobs-")
            weakref.finalize(self, shutil.rmtree, self._blobs, True)
        return self._blobs

    def _lacks_config(
        self, store: ObjectStore, commit: str, host_git: str
    ) -> tuple[str, str] | None:
        """A new commit without a config the host's index has (pyproject.toml, setup.cfg,
        tox.ini, .gitattributes, and every protected name: mypy.ini, .envrc, ...): as the
        base or a side of a merge it lets git rename the config and merge another branch's
        change of the renamed file into it, each version judged clean on its own (r45a
        RENCOMBO3/4: an agent-made merge base; r53a CFGRENAME: mypy.ini renamed away in a
        child of HEAD, the rename's target changed next, cherry-picked into mypy.ini)."""
        from corral.changes.tool_settings_rules import SHARED_CONFIGS

        if host_git not in self._git_configs:
            try:
                entries = read_index(os.path.join(host_git, "index")).entries
            except GitUnreadable:
                entries = {}
            names = {*SHARED_CONFIGS, ".gitattributes"}
            top = os.path.dirname(host_git)
            found = sorted(
                p for p in entries
                if "\0" not in p
                and (
                    p.rpartition("/")[2] in names
                    or self.protected_name_in(p.split("/"))
                    # (protected where it is: a script a hook runs, r54a CFGPATH)
                    or self_or_parent_in(os.path.join(top, p), self.protected_set) is not None
                )
            )  # fmt: skip
            if len(found) > HOST_CONFIGS:
                # (the first 64 were looked for, the rest passed unseen)
                raise GitUnreadable(f"more than {HOST_CONFIGS} configs a merge may rename")
            self._git_configs[host_git] = found
        tree = _tree_of(store, commit)
        for path in self._git_configs[host_git]:
            if entry_at(store, tree, path) is None:
                return path, (
                    f"commit {commit[:12]} has no {path}: a merge with it can rename the "
                    "config and merge another branch's change of the renamed file into it"
                )
        return None

    def _as_applied(self, path: str, sha: str, trees: Trees, work_tree: str) -> bool:
        """Whether a config's blob is, byte for byte, what the work tree holds once this
        change set is applied (the host's file, or the command's version of it when that
        passes the work tree's rules), made on the version the host's HEAD has (r42c: a
        dependency added and committed in one command was held every time). git writing it
        writes nothing the work tree has not."""
        import hashlib

        from corral.changes.scan import Entry

        if not trees.on_head_line:
            # (a version on another branch, or in a stash, is a side of a merge with the
            # next one made on HEAD's: two clean ones merged into a third, r46d TOMLMERGE)
            return False
        if not trees.parent:
            # The first commit of a repository with nothing else in it: no version to merge
            # it with (r48c U1: every new project's first commit was held)
            if trees.head is not None or self._refs(trees.host_git):
                return False
        else:
            was = entry_at(trees.store, trees.parent, path)
            if was is None:
                return False  # (only a change of a config the commit's parent has there: a
                # new one may be a rename's target, merged with the source's change, r44a)
            if self._rival_version(trees, path) is not None:
                return False
            if trees.head is None or was != entry_at(trees.store, trees.head, path):
                # (and only of the version the host's HEAD has: every version that lands
                # then follows the one before it, so no two of them are sides of a merge
                # whose result neither is, r40a MERGECOMBO across runs)
                return False
        staged = os.path.join(os.path.dirname(trees.upper_git), path)
        source = staged if os.path.lexists(staged) else os.path.join(work_tree, path)
        try:
            data = _bytes(source)
        except GitUnreadable:
            return False
        if data is None or hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() != sha:
            return False
        if source == staged:
            placed = self._placed(os.path.join(work_tree, path))
            if placed is None:
                return False
            root, rel = placed
            entry = Entry(
                root=root, rel=rel, source=staged, kind="file", mode=0o644, size=len(data),
                nlink=1, opaque=False, target="", ino=0, mtime_ns=0,
            )  # fmt: skip
            return self._protected(entry) is None
        return True

    def _git_link(self, path: str, target_bytes: bytes, work_tree: str) -> str | None:
        """What is wrong with a symlink at `path` that git would make (its blob is its
        target), as the work tree's own rules judge a link a command makes (r37a SYMDIR: a
        commit's `crate/.cargo -> c` made c/config.toml cargo's config)."""
        target = target_bytes.decode("utf-8", "surrogateescape")
        parts = path.split("/")
        above = self.protected_name_above(parts)
        if above is not None:
            return f"a symlink where the directory of protected name {above} goes"
        lexical = os.path.normpath(os.path.join(os.path.dirname(path), target))
        if (
            not target
            or "\0" in target
            or os.path.isabs(target)
            or lexical == ".."
            or lexical.startswith("../")
            or climbs_back(target)
        ):
            return f"a symlink to {target!r}, out of the work tree or through a directory"
        named = self.protected_name_in(lexical.split("/"))
        if named is not None:
            return f"a symlink to protected name {named}"
        if work_tree:
            there = os.path.join(work_tree, lexical)
            kept = self_or_parent_in(there, self.protected_set) or self.above_protected.get(there)
            if kept is not None:
                return f"a symlink to or above protected {os.path.relpath(kept, work_tree)}"
        return None

    def _submodule_paths(
        self, trees: Trees, path: str, sha: str
    ) -> tuple[Iterable[tuple[str, int, str]], Trees]:
        """What the submodule commit `sha` at `path` adds against the one the tree the
        paths were diffed against has there, as paths of the superproject's work tree, and
        where they are read; from the submodules' object stores (the staging area's and the
        host's). A commit found in none of them is held: nothing is known of what it holds."""
        store = ObjectStore(_submodule_stores(trees.host_git, trees.upper_git, path))
        before = entry_at(trees.store, trees.base, path) if trees.base else None
        old = None
        if before is not None and before[0] & 0o170000 == GITLINK:
            try:
                old = _tree_of(store, before[1])
            except GitUnreadable:
                old = None  # (the submodule was never checked out: everything counts)
        new = _tree_of(store, sha)
        paths = changed_paths(store, old, new, trees.budget, f"{path}/")
        return paths, Trees(trees.host_git, trees.upper_git, store, old, trees.budget)

    def _host_has(self, store: ObjectStore, host_git: str, path: str, mode: int, sha: str) -> bool:
        """Whether a commit the host's refs name holds (mode, sha) at `path`."""
        if host_git not in self._git_tips:  # (once per check, r35a)
            self._git_tips[host_git] = sorted(_own_tips(host_git))[:HOST_TIPS]
        for tip in self._git_tips[host_git]:
            if entry_at(store, _tree_of(store, tip), path) == (mode, sha):
                return True
        return False


# new commits `corral changes ID` lists with their files: all the check reads (r60a
# LISTCAP: the 41st, past a cap, was named nowhere); files named for each, against each
# parent (past that, git's own count, whose names it quotes)
HISTORY_LISTED = COMMIT_BUDGET
FILES_LISTED = 200


def history_lines(host_git: str, upper_git: str) -> list[str]:
    """Each new commit (and tree) the staged refs, reflogs, HEAD and its kin of one git
    directory would make reachable, newest first: its subject and the files it adds or
    changes against each parent, read by corral (r59a ESCREVIEW: `git log --stat` printed a
    commit message's escapes, which wrote over its file list; STASHBASE: `git stash show`
    showed a stash against a new parent of its own, which it did not list). The caller
    escapes what it prints."""
    store = ObjectStore([os.path.join(upper_git, "objects"), os.path.join(host_git, "objects")])
    budget = Budget(ENTRY_BUDGET)
    try:
        names: set[str] = set()
        # every file the check reads names from, read as it reads them (staged_names)
        for directory, dirs, files in os.walk(upper_git):
            dirs[:] = [d for d in dirs if not (directory == upper_git and d == "objects")]
            for file in files:
                path = os.path.join(directory, file)
                if not os.path.isfile(path) or os.path.islink(path):
                    continue  # (a whiteout is a deletion: nothing named)
                rel = os.path.relpath(path, upper_git)
                inside = rel.split("/")
                plain_ref = rel in PLAIN and _as_ref(_text(path)) is not None
                if plain_ref or (_ref_file(inside) and inside[:2] != ["refs", "replace"]):
                    names |= staged_names(rel, path, host_git, upper_git)
        shallow = _shallow(host_git)  # (as the check reads parents: _parents)

        def parents_of(sha: str) -> list[str]:
            return [] if sha in shallow else parents(store, sha)

        head = _resolve([host_git], _text(os.path.join(host_git, "HEAD")))
        known = _own_tips(host_git) | _first_parents(head, parents_of)
        found: list[str] = []
        queue, seen = sorted(names - known), set()
        while queue and len(found) <= HISTORY_LISTED:
            sha = queue.pop(0)
            if sha in seen or sha in known:
                continue
            seen.add(sha)
            kind, data = store.read(sha)
            if kind == "tag":
                queue.append(_tagged(data))
            elif kind in ("commit", "tree"):
                found.append(sha)
                queue += parents_of(sha) if kind == "commit" else []
        lines = []
        for sha in found[:HISTORY_LISTED]:
            kind, data = store.read(sha)
            if kind == "tree":
                lines.append(f"tree {sha[:12]} (a merge's result)")
                sides: list[str | None] = [None]
            else:
                subject = data.partition(b"\n\n")[2].split(b"\n", 1)[0]
                above = parents_of(sha)
                sides = list(above) or [None]
                what = f"merge of {', '.join(p[:12] for p in above)}" if len(above) > 1 else (
                    f"on {above[0][:12]}" if above else "a first commit"
                )  # fmt: skip
                text = subject.decode("utf-8", "replace")
                lines.append(f"commit {sha[:12]} ({what}): {text!r}")
            tree = sha if kind == "tree" else _tree_of(store, sha)
            for side in sides:
                base = _tree_of(store, side) if side else None
                files = [
                    p for p, mode, _ in changed_paths(store, base, tree, budget)
                    if mode & 0o170000 != TREE
                ]  # fmt: skip
                more = (
                    f" and {len(files) - FILES_LISTED} more (git diff --stat "
                    f"{(side or EMPTY_TREE)[:12]} {sha[:12]})"
                    if len(files) > FILES_LISTED
                    else ""
                )  # fmt: skip
                against = f"against {side[:12]}: " if len(sides) > 1 and side else ""
                # (r64a DELLIST: a commit that only deleted was "adds or changes no file")
                gone = [
                    p for p, mode, _ in (changed_paths(store, tree, base, budget) if base else ())
                    if mode & 0o170000 != TREE and entry_at(store, tree, p) is None
                ]  # fmt: skip
                listed = ", ".join(files[:FILES_LISTED]) or "no file"
                lines.append(f"  {against}adds or changes {listed}{more}")
                if gone:
                    rest = f" and {len(gone) - FILES_LISTED} more" * (len(gone) > FILES_LISTED)
                    lines.append(f"  {against}deletes {', '.join(gone[:FILES_LISTED])}{rest}")
        if len(found) > HISTORY_LISTED:
            lines.append(f"(more than {HISTORY_LISTED} new commits: not all listed)")
        return lines
    except UNREADABLE as e:
        return [f"new history corral cannot read ({e})"]
