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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

# where the system keeps its configuration and its state (not /usr, /proc or /home: packages'
# files, the kernel's, the users' homes with rules of their own)
SYSTEM_TOPS = (
    "/etc", "/var/backups", "/var/cache", "/var/lib", "/var/spool", "/var/mail",
    "/usr/local/etc", "/srv", "/boot",
)  # fmt: skip
MAX_ENTRIES = 20_000  # of one top: past that, what was not looked at is hidden whole
MAX_HIDDEN = 100  # directories hidden for not being looked at, of one top
KEY = "system-private:"  # the cache key's prefix (the secrets walk's keys are directories)

State = tuple[int, int, int, int, int]


RULE = "sandbox: system files only you may read"
HINT = (
    "read it yourself outside the sandbox: it never shows a system file that others on the "
    "host may not read (a secret, such as a backup of the password hashes)"
)


def hides(path: str) -> bool:
    """Whether the walk hides `path`, by its mode and place (for a refusal's words, not for a
    decision: the policy's deny list is that)."""
    if not any(is_within(path, top) for top in SYSTEM_TOPS):
        return False
    who = Who()
    parts = path.split("/")
    try:
        # (itself, or a directory above it others may not enter)
        return any(who.private(os.lstat("/".join(parts[:i]))) for i in range(3, len(parts) + 1))
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

    def private(self, info: os.stat_result) -> bool:
        """Whether the user may read it (list and enter a directory) and others may not."""
        if stat.S_ISDIR(info.st_mode):
            return self.bits(info) & 5 == 5 and not info.st_mode & 1
        return stat.S_ISREG(info.st_mode) and bool(self.bits(info) & 4) and not info.st_mode & 4

    def enters(self, info: os.stat_result) -> bool:
        return stat.S_ISDIR(info.st_mode) and self.bits(info) & 5 == 5


def walk(
    top: str, who: Who, state: Callable[[os.stat_result], State], skip: tuple[str, ...] = ()
) -> tuple[list[tuple[str, State]], list[tuple[str, bool]], bool]:
    """(the directories looked in and their states, the private paths (path, is a directory),
    whether all was looked at: past MAX_ENTRIES what was not is among the private paths).
    Not looked in: `skip` (the writable roots: the command's own files, which its deny list
    and globs decide, and which change at every run); a private directory above one of them
    is looked through rather than hidden whole."""
    seen: list[tuple[str, State]] = []
    found: list[tuple[str, bool]] = []
    stack: list[tuple[str, bool]] = []  # (a directory to look in, whether it is private)
    looked = 0

    def judge(path: str, info: os.stat_result, in_private: bool) -> None:
        if any(is_within(path, s) for s in skip):
            return
        holds = any(is_within(s, path) for s in skip)
        private = in_private or who.private(info)
        if private and not holds:
            # (in a private directory looked through, everything is as private as it)
            found.append((path, stat.S_ISDIR(info.st_mode)))
        elif who.enters(info) or (holds and stat.S_ISDIR(info.st_mode)):
            if path != top:
                seen.append((path, state(info)))
            stack.append((path, private))

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
        except OSError:
            continue
        looked += len(entries)
        if looked > MAX_ENTRIES:
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


def private_paths(
    cache: dict[str, tuple[list[tuple[str, State]], list[tuple[str, bool]], bool]],
    state: Callable[[os.stat_result], State],
    skip: Iterable[str],
) -> tuple[list[tuple[str, bool]], list[str], bool]:
    """(the private paths of SYSTEM_TOPS, the tops not looked through whole, whether `cache`
    was changed). `cache` maps a key to a walk's answer, reused while every directory it
    looked in is as it was."""
    who = Who()
    found: list[tuple[str, bool]] = []
    cut: list[str] = []
    changed = False
    for top in SYSTEM_TOPS:
        inside = tuple(sorted(s for s in skip if is_within(s, top)))
        key = who.key() + top + "|" + "|".join(inside)
        answer = cache.get(key)
        if answer is None or not _unchanged(answer[0], state):
            answer = walk(top, who, state, inside)
            cache[key] = answer
            changed = True
        found += answer[1]
        if not answer[2]:
            cut.append(top)
    return found, cut, changed


def _unchanged(seen: list[tuple[str, State]], state: Callable[[os.stat_result], State]) -> bool:
    for path, was in seen:
        try:
            now = state(os.lstat(path))
        except OSError:
            now = (-1, -1, -1, -1, -1)
        if now != was:
            return False
    return True
