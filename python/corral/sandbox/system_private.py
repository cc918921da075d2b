"""The host's system files that the user corral runs as may read and others may not.

The deny list names system secrets one by one (/etc/shadow, three ssh host keys), and a
list misses their siblings: shadow-utils keeps the password hashes as they were before the
last change in /etc/shadow- and /etc/gshadow-, pam_pwhistory old ones in
/etc/security/opasswd, debconf answers in /var/cache/debconf/passwords.dat (r77c
SHADOWBACKUP). Run as root, a sandbox's uid 0 is the host's (capabilities dropped, but root
owns those files), so a sandboxed command read them. What marks a system secret is its mode,
not its name: a file that the user may read (by owner, else by group, as the kernel checks
without CAP_DAC_OVERRIDE) and everyone else may not, below the directories where the system
keeps its configuration and state. Such a file is hidden, and such a directory (the user may
list and enter it, others may not enter it) is hidden whole.

The walk is remembered between runs in corral's cache (with the secrets walk's answers) and
trusted while every directory it looked in is as it was: a file made private in place (a
chmod of a file that was readable by everyone) is seen at the next change in its directory.
"""

from __future__ import annotations

import os
import stat

from corral.paths import is_within, outermost
from corral.sandbox import kernel_mounts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

# what of / is not walked: the kernel's and the packages' files (read-only, everyone's),
# the users' homes (rules of their own: other homes hidden, yours by sandbox.policy.home),
# the stores of Nix, Guix and snaps (everyone's, and too large), the sandbox's own /tmp
NOT_WALKED = frozenset({
    "proc", "sys", "dev", "tmp", "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32",
    "nix", "gnu", "snap",
})  # fmt: skip
EXTRA_TOPS = ("/usr/local",)  # (of /usr: what the administrator put there)
# below the tops, not looked in: /var/tmp, shared and ever changing (a temporary directory
# made and removed between the walk and the sandbox's start failed the run, r79a BWRAPFLAKE)
NOT_WALKED_BELOW = frozenset({"/var/tmp"})
# the levels looked in below a top: all of the system's configuration and state; installed
# software's trees (deep, read by everyone) and mounted media to a few; any other directory
# of / (a disk of data, projects) to its own entries. Every run stats each directory looked
# in (the walk is remembered while they are as they were): this bounds that.
TOP_DEPTHS = {
    "/etc": 1 << 16, "/var": 1 << 16, "/run": 1 << 16, "/srv": 1 << 16, "/root": 1 << 16,
    "/boot": 1 << 16, "/opt": 3, "/usr/local": 3, "/mnt": 2, "/media": 2,
    # (the homes: their own rules, yours by sandbox.policy.home, the others' hidden; what is
    # directly in /home, a file of root's, here, r79c SYSPRIVHOMEFILE)
    "/home": 1,
}  # fmt: skip
OTHER_TOP_DEPTH = 1


def system_tops() -> list[str]:
    """Every directory of / but NOT_WALKED (r78c SYSPRIVTOPS: /opt, /var/log, /run, /mnt,
    /media and /nonexistent held private files the first list of tops left out), and
    EXTRA_TOPS; "/" itself for what is directly in it."""
    try:
        names = sorted(os.listdir("/"))
    except OSError:
        names = []
    return [
        *(f"/{n}" for n in names if n not in NOT_WALKED and os.path.isdir(f"/{n}")),
        *EXTRA_TOPS,
    ]  # (the files directly in /: _top_files)


MAX_ENTRIES = 20_000  # of one top: past that, what was not looked at is hidden whole
MAX_HIDDEN = 100  # directories hidden for not being looked at, of one top
KEY = "system-private:"  # the cache key's prefix (the secrets walk's keys are directories)
KEPT = 256  # answers kept in the cache, the newest (one per top and workspace inside it)

State = tuple[int, int, int, int, int]
# (the directories looked in and their states, the private paths, whether all was looked at)
Answer = tuple[list[tuple[str, State]], list[tuple[str, bool]], bool]


RULE = "sandbox: system files only you may read"
HINT = (
    "only the user can read it, outside the sandbox: it never shows a system file that others "
    "on the host may not read, a secret such as a backup of the password hashes"
)


# where the system keeps its own state and secrets: a read-only workspace there is looked
# in for private files (/etc/ssh as a workspace still hides the host keys); elsewhere a
# workspace is the user's project, whose files are theirs to read
SYSTEM_STATE = ("/etc", "/var", "/run", "/boot", "/root")


def system_state(path: str) -> bool:
    """Whether `path` is / or lies in one of the system's own state directories."""
    return path == "/" or (
        any(is_within(path, top) for top in SYSTEM_STATE)
        and not any(is_within(path, d) for d in NOT_WALKED_BELOW)
    )


def hides(path: str, own: Iterable[str] = ()) -> bool:
    """Whether the walk hides `path`, by its mode and place (for a refusal's words, not for a
    decision: the policy's deny list is that); never below `own` (your home, the writable
    roots: rules of their own, a deny list's)."""
    if not any(is_within(path, top) for top in system_tops()) or any(
        is_within(path, o) for o in own
    ):
        return False
    who = Who()
    parts = path.split("/")
    try:
        # (itself, or a directory above it others may not enter)
        return any(
            who.private(p, os.lstat(p))
            for p in ("/".join(parts[:i]) for i in range(2, len(parts) + 1))
        )
    except OSError:
        return False


def readable_without_caps(path: str) -> bool:
    """Whether root without capabilities (the sandbox's root) could read `path`: every
    directory on the way searchable and the file readable by the mode bits for uid 0 and its
    groups (where an ACL is, no: it may say either). The host's file tools, run by root with
    its capabilities, read more than the sandbox does (r79c ROOTTOOLCAPS: another user's 0600
    file, a root file of mode 0000, Fedora's /etc/shadow-)."""
    who = Who()
    parts = path.split("/")
    try:
        for i in range(1, len(parts)):
            directory = "/".join(parts[:i]) or "/"
            info = os.stat(directory)
            if not who.bits(info) & 1 or (info.st_mode & 0o007 != 0o005 and _acl(directory)):
                return False
        info = os.stat(path)
    except OSError:
        return True  # (not there, or not reachable to stat: the tool's own error says it)
    need = 5 if stat.S_ISDIR(info.st_mode) else 4
    return who.bits(info) & need == need and not (not info.st_mode & 4 and _acl(path))


def reached_without_caps(path: str) -> bool:
    """Whether the sandbox's processes could come to `path` at all: no directory on the way
    that another user owns refuses them a search by its mode bits (and none has an ACL that
    might let them; one of their own they could chmod). One
    that cannot needs no mask, and bwrap, which runs as they do, cannot make one there: as
    root, another user's 0700 directory in the workspace holding a credential's name had
    every run fail (r86b)."""
    who = Who()
    parts = path.split("/")
    for i in range(2, len(parts)):
        directory = "/".join(parts[:i])
        try:
            info = os.stat(directory)
        except OSError:
            return True  # (bwrap's own error, if any, says it)
        if info.st_uid == who.uid:
            continue  # (bwrap reaches it, and a command could chmod it back: r87b DENYCHMOD)
        if not who.bits(info) & 1 and not _acl(directory):
            return False
    return True


ACL = "system.posix_acl_access"


def _acl(path: str) -> bool:
    """Whether a POSIX ACL may let someone the mode bits do not name read `path` (r78c
    SYSPRIVACL: a file the bits kept to its owner was read by a user an ACL named)."""
    try:
        return ACL in os.listxattr(path, follow_symlinks=False)
    except OSError:
        return False


class Who:
    """The user a sandbox's processes are on the host, for the kernel's permission check."""

    def __init__(self) -> None:
        self.uid = os.geteuid()
        self.gids = frozenset({os.getegid(), *os.getgroups()})

    def key(self) -> str:
        return f"{KEY}{self.uid}:{','.join(map(str, sorted(self.gids)))}:"

    def bits(self, info: os.stat_result) -> int:
        """The permission bits that apply to this user (owner first, then group)."""
        if info.st_uid == self.uid:
            return (info.st_mode >> 6) & 7
        if info.st_gid in self.gids:
            return (info.st_mode >> 3) & 7
        return info.st_mode & 7

    def private(self, path: str, info: os.stat_result) -> bool:
        """Whether the user may read it and others may not: a file, or a directory hidden
        whole, where the user may enter and others may not, or where the user may open what
        is in it by name but not list it (r78c SYSPRIVXDIR: /etc/ssl/private, 0710 in the
        user's group). Where an ACL may name the user, the mode bits' "may" counts as yes."""
        mode, bits = info.st_mode, self.bits(info)
        if stat.S_ISDIR(mode):
            if mode & 5 == 5 and bits & 5 == 5:
                return False  # (everyone lists and enters it: looked in, see enters)
            enters = bool(bits & 1) or (not mode & 1 and _acl(path))
            return enters and (not mode & 1 or not bits & 4)
        if not stat.S_ISREG(mode) or mode & 4:
            return False
        return bool(bits & 4) or _acl(path)

    def enters(self, info: os.stat_result) -> bool:
        return stat.S_ISDIR(info.st_mode) and self.bits(info) & 5 == 5


def walk(
    top: str,
    who: Who,
    state: Callable[[os.stat_result], State],
    skip: tuple[str, ...] = (),
    depth: int = 1 << 16,
    shown: tuple[str, ...] = (),
) -> tuple[list[tuple[str, State]], list[tuple[str, bool]], bool]:
    """(the directories looked in and their states, the private paths (path, is a directory),
    whether all was looked at: past MAX_ENTRIES what was not is among the private paths).
    Not looked in: `skip` (the writable roots: the command's own files, which its deny list
    and globs decide, and which change at every run); a private directory above one of them
    is looked through rather than hidden whole. `depth`: the levels below `top` looked in
    (what is deeper is not looked at, and not hidden: see TOP_DEPTHS). `shown`: paths looked
    in (a read-only workspace at /etc still has /etc/shadow- hidden) that no directory
    holding them is hidden for (an area instead, see around)."""
    seen: list[tuple[str, State]] = []
    found: list[tuple[str, bool]] = []
    stack: list[tuple[str, bool]] = []  # (a directory to look in, whether it is private)
    looked = 0
    deepest = top.rstrip("/").count("/") + depth
    kernel_points = frozenset(kernel_mounts.elsewhere())

    def judge(path: str, info: os.stat_result, in_private: bool) -> None:
        if (
            stat.S_ISLNK(info.st_mode)
            or path in NOT_WALKED_BELOW
            or any(is_within(path, s) for s in skip)
            or path in kernel_points
        ):
            # (and a kernel filesystem mounted here, masked whole in the sandbox: a chroot's
            # proc under /srv made the walk pass its budget at once, r81c PROCELSEWHERE; a
            # link is no secret, and bwrap, masking it, followed it and failed, r82c
            # PRIVLINKS: what it leads to is judged where it is)
            return
        holds = any(is_within(s, path) for s in (*skip, *shown))
        # (in the workspace, by its own mode only: a private directory above it made every
        # file of a read-only workspace private, r81c ROPRIVWS)
        inherited = in_private and not any(is_within(path, s) for s in shown)
        private = inherited or who.private(path, info)
        if holds and private and path.count("/") >= deepest:
            found.append((path, True))  # (past the depth: an area around what it holds)
        elif private and not holds:
            # (in a private directory looked through, everything is as private as it)
            found.append((path, stat.S_ISDIR(info.st_mode)))
        elif (who.enters(info) or (holds and stat.S_ISDIR(info.st_mode))) and (
            path.count("/") < deepest
        ):
            if path != top:
                seen.append((path, state(info)))
            stack.append((path, private))
        elif stat.S_ISDIR(info.st_mode) and path != top:
            # (not looked in: remembered all the same, so that a chmod opening it is a
            # change, r80c STALEDIRENTER)
            seen.append((path, state(info)))

    try:
        info = os.lstat(top)
    except OSError:
        return [(top, (-1, -1, -1, -1, -1))], [], True
    seen.append((top, state(info)))  # (also when it is hidden whole: until it changes)
    judge(top, info, False)
    while stack:
        directory, private = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except PermissionError:
            # (one the bits said may be listed, and an ACL says may not; or one above the
            # workspace that may be entered, not listed: its other entries cannot be told,
            # so it is hidden, the workspace shown again, r80c XDIRACL, XDIRHOLDS)
            found.append((directory, True))
            continue
        except OSError:
            continue
        looked += len(entries)
        if looked > MAX_ENTRIES:
            # (a directory holding the workspace among them: hidden with the workspace shown
            # again, see private_paths, never dropped, r80c COLLAPSEWS)
            return seen, found + _collapsed([directory, *(d for d, _ in stack)], top), False
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            judge(entry.path, info, private)
    return seen, found, True


def _collapsed(directories: list[str], top: str) -> list[tuple[str, bool]]:
    """The directories not looked in, hidden whole: by their parents past MAX_HIDDEN (each is
    a mount of its own)."""
    kept = outermost(directories)
    while len(kept) > MAX_HIDDEN:
        kept = outermost(top if d == top else os.path.dirname(d) for d in kept)
    return [(d, True) for d in kept]


def around(found: list[tuple[str, bool]], skip: Iterable[str]) -> tuple[list[str], list[str]]:
    """(the private paths to mask, the directories to hide as areas with what of `skip` is in
    them shown again): a directory holding the workspace, a writable root or the home cannot
    be masked (the mask would cover them), and it cannot be left shown (its other entries
    could not be told apart)."""
    skip = tuple(skip)
    masks: list[str] = []
    areas: list[str] = []
    for path, is_dir in found:
        (areas if is_dir and any(is_within(s, path) for s in skip) else masks).append(path)
    return masks, areas


def private_paths(
    cache: dict[str, tuple[list[tuple[str, State]], list[tuple[str, bool]], bool]],
    state: Callable[[os.stat_result], State],
    skip: Iterable[str],
    shown: Iterable[str] = (),
) -> tuple[list[tuple[str, bool]], list[str], bool]:
    """(the private paths of the system's tops, the tops not looked through whole, whether
    `cache` was changed). `cache` maps a key to a walk's answer, reused while every
    directory it looked in is as it was. `skip`: the writable roots and your home, which
    have rules of their own."""
    who = Who()
    skip = tuple(skip)
    shown = tuple(s for s in shown if s not in skip)
    found: list[tuple[str, bool]] = []
    cut: list[str] = []
    changed = False
    key = who.key() + "/"
    answer = cache.get(key)
    if answer is None or not _unchanged(answer[0], state):
        answer = _top_files(who, state)
        cache[key] = answer
        changed = True
    found += answer[1]
    for top in system_tops():
        inside = tuple(sorted(s for s in skip if is_within(s, top) and _reached_by(s)))
        looked = tuple(sorted(s for s in shown if is_within(s, top) and _reached_by(s)))
        key = who.key() + top + "|" + "|".join(inside) + "||" + "|".join(looked)
        answer = cache.pop(key, None)  # (put back last: the newest are kept, see KEPT)
        if answer is None or not _unchanged(answer[0], state):
            depth = TOP_DEPTHS.get(top, OTHER_TOP_DEPTH)
            answer = walk(top, who, state, inside, depth, looked)
            changed = True
        cache[key] = answer
        found += answer[1]
        if not answer[2]:
            cut.append(top)
    return _fewer(found, (*skip, *shown)), cut, changed


def _reached_by(path: str) -> bool:
    """Whether the walk can come to `path` (not below /var/tmp, see NOT_WALKED_BELOW): only
    those make a cache key of their own."""
    return not any(is_within(path, n) for n in NOT_WALKED_BELOW)


MAX_BESIDE = 20  # private files of one directory (not a top) masked one by one; past it, the
# directory is masked whole (see _fewer)


def _fewer(found: list[tuple[str, bool]], skip: tuple[str, ...] = ()) -> list[tuple[str, bool]]:
    """The private paths, a directory (below a top) holding more than MAX_BESIDE of them
    hidden whole instead: each is a bwrap argument, and 15,000 were more than one command
    line takes, which refused every run (r78c SYSPRIVARGS)."""
    by_dir: dict[str, int] = {}
    for path, _ in found:
        by_dir[os.path.dirname(path)] = by_dir.get(os.path.dirname(path), 0) + 1
    crowded = {
        d
        for d, n in by_dir.items()
        if n > MAX_BESIDE and d.count("/") > 1 and not any(is_within(s, d) for s in skip)
    }  # fmt: skip (never a directory holding the workspace: every run failed, r79c CROWDWS)
    kept = [(p, d) for p, d in found if os.path.dirname(p) not in crowded]
    return [*kept, *((d, True) for d in sorted(crowded))]


def _top_files(who: Who, state: Callable[[os.stat_result], State]) -> Answer:
    """What of the private files is directly in / (the directories there are tops)."""
    try:
        info = os.lstat("/")
        entries = list(os.scandir("/"))
    except OSError:
        return [("/", (-1, -1, -1, -1, -1))], [], True
    found = []
    for entry in entries:
        try:
            child = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(child.st_mode) and who.private(entry.path, child):
            found.append((entry.path, False))
    return [("/", state(info))], found, True


def _unchanged(seen: list[tuple[str, State]], state: Callable[[os.stat_result], State]) -> bool:
    for path, was in seen:
        try:
            now = state(os.lstat(path))
        except OSError:
            now = (-1, -1, -1, -1, -1)
        if now != was:
            return False
    return True
