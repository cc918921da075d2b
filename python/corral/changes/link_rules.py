"""Change-set rules for symlinks: judged where a link leads once applied, never by following
a link the sandbox made. A link out of the writable roots is held (a file of that name open
in your editor would write there at its next save), but for a venv's link to an interpreter
you cannot write; so are links into /proc, into hidden areas or above them, to protected
paths, and links put where a protected path's directory is.
"""

from __future__ import annotations

import os
import stat

from corral.changes.ruleset import RuleSet
from corral.paths import is_within, self_or_parent_in
from corral.toolguard.ops.refusal import BUILTIN, PROTECTED, Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry

MAGIC_LINK_AREAS = ("/proc", "/dev/fd")  # other spellings of any path: /proc/self/root/...
MAX_BELOW = 20_000  # host entries looked at below a directory a new link leads to


def climbs_back(target: str) -> bool:
    """Whether a link target has `..` after a named directory (`a/../b`); leading `..`s
    (`../lib/x`) climb from the link's own place, which is checked."""
    seen_name = False
    for part in target.split("/"):
        if part == "..":
            if seen_name:
                return True
        elif part not in ("", "."):
            seen_name = True
    return False


def _unwritable(path: str) -> bool:
    """A regular file you cannot write (a system interpreter a venv links to): a save that
    reaches it through links fails, whatever the links."""
    return os.path.isfile(path) and not os.access(path, os.W_OK)


def _interpreter_name(name: str) -> bool:
    """What a venv's bin links to its base interpreter: python, python3, python3.12, pypy3,
    python3.13t."""
    for stem in ("python", "pypy"):
        if name.startswith(stem):
            version = name[len(stem) :].removesuffix("t")
            return version == "" or version.replace(".", "", 1).isdigit()
    return False


def _interpreter(path: str) -> bool:
    """An executable regular file named like a Python interpreter."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (
        stat.S_ISREG(st.st_mode)
        and st.st_mode & 0o111 != 0
        and _interpreter_name(os.path.basename(path))
    )


class LinkRules(RuleSet):
    def _link_at(self, path: str, entry: Entry) -> str | None:
        """The target of a symlink at `path` as the host will see it after applying: the
        change set's own entry where it has one (a file or directory there hides the host's
        link), else the host's; None when `path` is no link."""
        if is_within(path, entry.root):
            upper_root = entry.upper_root()
            shadow = os.path.join(upper_root, os.path.relpath(path, entry.root))
            if os.path.lexists(shadow):
                return os.readlink(shadow) if os.path.islink(shadow) else None
        return os.readlink(path) if os.path.islink(path) else None

    def _resolved(self, entry: Entry) -> str | None:
        """Where the link `entry` leads once applied, resolved component by component as the
        kernel will (a target `ua/../home/x` goes through `ua`, which may be a link to /usr:
        normpath would fold it away); None after too many links. Stops at /proc."""
        parts = os.path.join(os.path.dirname(entry.path), entry.target).split("/")
        current, hops, i = "/", 40, 0
        while i < len(parts):
            part = parts[i]
            i += 1
            if part in ("", "."):
                continue
            if part == "..":
                current = os.path.dirname(current)
                continue
            candidate = os.path.join(current, part)
            if any(is_within(candidate, m) for m in MAGIC_LINK_AREAS):
                return candidate
            link = self._link_at(candidate, entry) if candidate != entry.path else entry.target
            if link is None:
                current = candidate
                continue
            hops -= 1
            if hops < 0:
                return None
            parts = [*os.path.join(current, link).split("/"), *parts[i:]]
            current, i = "/", 0
        return current

    def _symlink(self, entry: Entry) -> Refusal | None:
        if entry.kind != "link":
            return None
        base = os.path.dirname(entry.path)
        # normpath keeps a leading "//" (POSIX leaves its meaning open; Linux reads "/")
        lexical = "/" + os.path.normpath(os.path.join(base, entry.target)).lstrip("/")
        resolved = self._resolved(entry)
        if resolved is None:
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN, "a symlink through too many links"
            )
        if climbs_back(entry.target):
            # `p/sub/../x`: where `..` leads depends on what p/sub is when the link is used,
            # and a later run can make p/sub a link elsewhere: judged now, it means nothing
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN,
                f"a symlink to {entry.target}, which goes into a directory and back out "
                "of it: where it leads changes when that directory becomes a link",
            )  # fmt: skip
        for target in dict.fromkeys((lexical, resolved)):
            refusal = self._link_target(entry, target)
            if refusal is not None:
                return refusal
        if any(is_within(resolved, r) for r in self.roots):
            return self._in_roots(entry, resolved)
        host = os.path.lexists(entry.path) and not os.path.islink(entry.path)
        if host or entry.path in self._recently_applied():
            # A file (perhaps open in your editor) turned into a link out of the writable
            # roots: the next save of it would write there. Also when an earlier change set
            # deleted or wrote it (the file gone in one run, the link made in the next).
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN,
                f"{entry.path} replaced by a symlink to {entry.target}, outside the writable "
                "roots: saving the file would write there",
            )  # fmt: skip
        if self._venv_interpreter(entry, resolved):
            if os.access(resolved, os.W_OK):
                # Links in the workspace made while they dangled (`notes.txt -> p/python3`,
                # later `p -> .venv/bin`) can come to lead here: a save through them would
                # rewrite an interpreter you run. Passes only where no save can.
                return self.refusal(
                    "symlink-outside", entry.path, BUILTIN,
                    f"a venv's link to {resolved}, an interpreter you can write (as root, "
                    "every file): a file that comes to lead here would rewrite it when saved; "
                    "if you made this venv, apply it",
                )  # fmt: skip
            return None
        # A link out of the writable roots: a file of that name open in your editor, or a
        # program writing to it, would write there at its next save, however the link came
        # to be (a file deleted in one run and a link made in the next, a directory on its
        # way made a link later), and wherever it leads (a toolchain of yours, or /usr for
        # root, where a .pth runs code). Only a venv's interpreter passes.
        return self.refusal(
            "symlink-outside", entry.path, BUILTIN,
            f"a symlink to {entry.target}, outside the writable roots: saving or writing "
            "through it would change what is there",
        )  # fmt: skip

    def _in_roots(self, entry: Entry, resolved: str) -> Refusal | None:
        """A link that stays in the writable roots is judged once, now; what comes to exist at
        its end, or below a directory it replaced, later is not. So it must lead to what is
        there (`notes.txt -> q/python3` before q exists becomes, with a later `q ->
        .venv/bin`, a path to an interpreter outside the roots), and must not take the place
        of a directory (the paths below it, held by your editor or by links, would lead
        wherever it does)."""
        was_directory = self._was_directory(entry.path)  # `rm -rf q` a run before
        if (os.path.isdir(entry.path) and not os.path.islink(entry.path)) or was_directory:
            return self.refusal(
                "symlink-replaces-directory", entry.path, BUILTIN,
                f"the directory {entry.path} replaced by a symlink to {entry.target}: the "
                "paths below it would lead there",
            )  # fmt: skip
        if not self._exists_after(resolved, entry):
            return self.refusal(
                "symlink-dangling", entry.path, BUILTIN,
                f"a symlink to {entry.target}, which does not exist: where it leads depends "
                "on what a later command puts there",
            )  # fmt: skip
        try:
            st = os.stat(resolved)
        except OSError:
            st = None
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            # a file with other names (uv and pnpm hard-link packages from their caches): a
            # save through the link writes in place, and every name of it changes
            return self.refusal(
                "symlink-hard-linked", entry.path, BUILTIN,
                f"a symlink to {entry.target}, a file with {st.st_nlink} names (hard links, "
                "perhaps outside the writable roots): saving through it would change them all",
            )  # fmt: skip
        out = self._leads_out_below(resolved)
        if out is not None:
            # `q -> .venv/bin`: a path through q (a link made earlier, `notes.txt ->
            # q/python3`, a file your editor holds) would reach what leads out of the roots
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN, f"a symlink to {entry.target}, {out}"
            )
        return None

    def _leads_out_below(self, directory: str) -> str | None:
        """What in the host directory `directory` (links in it followed, inside the roots)
        leads out of the writable roots, as a phrase; None when nothing does. Links out of
        the roots there (a venv's interpreter links, links you made) are the only way a
        chain of links made inside the roots, run after run, can end outside."""
        if directory in self._below_verdicts:  # (once per check: r31b, 1,000 links there)
            return self._below_verdicts[directory]
        verdict = self._below_verdicts[directory] = self._look_below(directory)
        return verdict

    def _look_below(self, directory: str) -> str | None:
        if not os.path.isdir(directory) or os.path.islink(directory):
            return None
        stack, seen, count = [directory], {directory}, 0
        while stack:
            current = stack.pop()
            if current in self._clean_below:
                continue  # (looked at for another link of this change set: pnpm makes many)
            try:
                items = list(os.scandir(current))
            except OSError:
                continue
            count += len(items)
            if count > MAX_BELOW:
                return (
                    f"a directory with more than {MAX_BELOW} entries below it: too many to "
                    "check that none leads out of the writable roots"
                )
            for item in items:
                if item.is_symlink():
                    real = os.path.realpath(item.path)
                    if not any(is_within(real, r) for r in self.roots) and not _unwritable(real):
                        return (
                            f"where {item.path} leads to {real}: a path through it would lead "
                            "out of the writable roots"
                        )
                    if os.path.isdir(real) and real not in seen:
                        seen.add(real)
                        stack.append(real)
                elif item.is_dir(follow_symlinks=False):
                    stack.append(item.path)
        self._clean_below.update(seen)
        return None

    def _exists_after(self, path: str, entry: Entry) -> bool:
        """Whether `path` (resolved, no link at its end) is there once the change set is
        applied: in the change set (not deleted there), or on the host."""
        for root in self.roots:
            if is_within(path, root):
                upper_root = entry.upper_root()
                if entry.root == root:
                    shadow = os.path.join(upper_root, os.path.relpath(path, root))
                    try:
                        st = os.lstat(shadow)
                    except OSError:
                        break
                    # an overlay whiteout (a character device 0/0) is a deletion
                    return not (stat.S_ISCHR(st.st_mode) and st.st_rdev == 0)
        return os.path.lexists(path)

    def _venv_interpreter(self, entry: Entry, resolved: str) -> bool:
        """`.venv/bin/python -> /usr/bin/python3.11`: a link named like an interpreter in a
        venv's bin directory (its pyvenv.cfg beside bin, in the change set or on the host) to
        an executable file named like one. Any other name or target would let a file the
        editor holds (`src/app.py`, reached through `src -> w/bin`) write out of the roots."""
        directory = os.path.dirname(entry.path)
        if os.path.basename(directory) != "bin" or not _interpreter(resolved):
            return False
        if not _interpreter_name(os.path.basename(entry.path)):
            return False
        venv = os.path.dirname(directory)
        cfg_rel = os.path.join(os.path.dirname(os.path.dirname(entry.rel)), "pyvenv.cfg")
        upper_root = entry.upper_root()
        staged = os.path.join(upper_root, cfg_rel)
        return os.path.isfile(staged) or os.path.isfile(os.path.join(venv, "pyvenv.cfg"))

    def _read_journal(self) -> None:
        """What the undo journal's change sets did, read once for every rule that asks: the
        paths they deleted or wrote, the directories they made, and those they deleted (with
        the journal's copy, to tell what was a directory inside one)."""
        if self._journaled is not None:
            return
        from corral.changes import journal
        from corral.changes.stage import journal_dir

        applied: set[str] = set()
        made: set[str] = set()
        deleted: dict[str, str] = {}  # deleted directory -> its copy in the journal
        for name in journal.entries():
            saved_in = os.path.join(journal_dir(), name, journal.FILES)
            try:
                for r in journal.records(name):
                    if r["op"] != "chmod":
                        applied.add(r["path"])
                    if r["op"] == "mkdir":
                        made.add(r["path"])
                    copy = os.path.join(saved_in, r["saved"]) if r.get("saved") else ""
                    if copy and os.path.isdir(copy) and not os.path.islink(copy):
                        deleted[r["path"]] = copy
            except (OSError, ValueError, KeyError):
                continue
        self._journaled = frozenset(applied)
        self._journaled_dirs = frozenset(made)
        self._journaled_deleted = deleted

    def _recently_applied(self) -> frozenset[str]:
        """Paths the undo journal's change sets deleted or wrote (read when a link out of the
        writable roots is judged where the host has nothing now)."""
        self._read_journal()
        return self._journaled or frozenset()

    def _was_directory(self, path: str) -> bool:
        """Whether the undo journal says `path` was a directory: one a change set made, or
        one it deleted, or one inside a directory it deleted (`rm -rf docs` takes docs/api
        along): a link put there in a later run takes a directory's place as surely as one
        put over it."""
        self._read_journal()
        if path in self._journaled_dirs:
            return True
        for directory, copy in self._journaled_deleted.items():
            if is_within(path, directory):
                inside = os.path.join(copy, os.path.relpath(path, directory))
                if os.path.isdir(inside) and not os.path.islink(inside):
                    return True
        return False

    def _link_target(self, entry: Entry, target: str) -> Refusal | None:
        magic = next((m for m in MAGIC_LINK_AREAS if is_within(target, m)), None)
        if magic is not None:
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN,
                f"a symlink into {magic}, where a path names any other path "
                "(/proc/self/root/...): where it leads cannot be checked",
            )  # fmt: skip
        named = self.protected_name_in(target.split("/"))
        if named is not None:
            # `notes.txt -> sub/.envrc`: a save of notes.txt writes what the host runs
            return self.refusal(
                "protected", entry.path, PROTECTED, f"a symlink to protected name {named}"
            )
        hit = self_or_parent_in(target, self.protected_set)
        if hit is not None:
            return self.refusal("protected", entry.path, PROTECTED, f"a symlink to protected {hit}")
        if any(is_within(target, h) for h in self.hidden) and not any(
            is_within(target, v) for v in self.visible
        ):
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN,
                f"a symlink to {entry.target}, outside the writable roots and hidden from "
                "the sandbox",
            )  # fmt: skip
        above = next((h for h in self.hidden if is_within(h, target) and h != target), None)
        if above is not None:  # `ln -s / root`: root/home/me/.ssh is a path in the workspace
            return self.refusal(
                "symlink-outside", entry.path, BUILTIN,
                f"a symlink to {entry.target}, above {above}, which is hidden from the sandbox",
            )  # fmt: skip
        below = self.above_protected.get(target)
        if below is not None:
            # `memories -> .git`: a tool that writes memories/config writes .git/config
            return self.refusal(
                "protected", entry.path, PROTECTED, f"a symlink above protected {below}"
            )
        return None
