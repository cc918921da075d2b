"""The kernel's filesystems mounted outside their usual places (r81c PROCELSEWHERE,
PROCINROOT): a chroot's `/mnt/gentoo/proc`, a build root's `/var/lib/mock/*/root/sys`, a
rootfs being built in the project with its own proc mounted.

The sandbox has its own /proc and /dev, and the deny list hides the parts of /sys only root
may read; a second procfs shows every host process's command line (and, to the file tools,
the editor's environment), a second sysfs the firmware tables, and one in a writable root
takes writes to kernel settings (kernel.core_pattern runs a program as root at the next
crash; a cgroup v1 release_agent too). Judged by the filesystem, never by the path: each
such mount is masked in the sandbox, and the file tools never read a file on one.
"""

from __future__ import annotations

import os

from corral.paths import is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

_STATFS: Any

# what only the kernel writes, or what writes reach the kernel through
KERNEL_FILESYSTEMS = frozenset({
    "proc", "sysfs", "debugfs", "tracefs", "securityfs", "efivarfs", "pstore", "configfs",
    "bpf", "cgroup", "cgroup2", "binfmt_misc", "devtmpfs",
    # (and an automount point: a command that looks in it has the host mount what it
    # stands for, /boot's or /efi's partition, and that mount reaches the sandbox as the
    # host made it, read-write: see the threat model, r82c LATEMOUNT)
    "autofs",
})  # fmt: skip
# statfs(2)'s f_type of the ones a file tool could read (devtmpfs says tmpfs's): what a
# path reaches, whatever mount order hid what (r82c SHADOWMOUNT)
MAGIC = {
    0x9FA0: "proc", 0x62656572: "sysfs", 0x64626720: "debugfs", 0x74726163: "tracefs",
    0x73636673: "securityfs", 0xDE5E81E4: "efivarfs", 0x6165676C: "pstore",
    0x62656570: "configfs", 0xCAFE4A11: "bpf", 0x27E0EB: "cgroup", 0x63677270: "cgroup2",
    0x42494E4D: "binfmt_misc", 0x0187: "autofs",
}  # fmt: skip
# where the sandbox shows them as it means to: its own /proc and /dev, the host's /sys
# with the deny list's entries hidden
USUAL = ("/proc", "/sys", "/dev")
MOUNTINFO = "/proc/self/mountinfo"


def _unescaped(field: str) -> str:
    """A mountinfo path: space, tab, newline and backslash are written as octal escapes."""
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def mounts() -> list[tuple[str, str]]:
    """(mount point, filesystem type) of every mount this process sees, in mount order."""
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        before, _, after = line.partition(" - ")
        fields = before.split(" ")
        if len(fields) < 5 or not after:
            continue
        found.append((_unescaped(fields[4]), after.split(" ", 1)[0]))
    return found


def elsewhere(
    table: list[tuple[str, str]] | None = None,
    shown_again: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """The mount points of kernel filesystems outside /proc, /sys and /dev that this user
    can reach: masked whole in the sandbox, automount points too, mounted on or not (the
    sandbox's copy of one still asks the host to mount, and that mount arrives
    read-write, r85c AUTOMOUNTRW; what the host mounted there is shown again over the
    mask, see automounted: `shown_again`, whose kernel mounts are masked on their own); not
    one a later mount hid, nor one in a directory this user cannot enter (bwrap could not
    make the mask, and every run failed, r83c SHADOWMASK, KERNELUNREACH)."""
    from corral.sandbox.system_private import reached_without_caps

    table = mounts() if table is None else table
    shown_again = shown_again or {}
    found: list[str] = []
    for point, kind in table:
        if (
            kind not in KERNEL_FILESYSTEMS
            or any(is_within(point, u) for u in USUAL)
            or any(
                is_within(point, p) and not any(is_within(point, m) for m in shown_again.get(p, ()))
                for p in found
            )
            or not os.path.lexists(point)
            or not reached_without_caps(point)
        ):
            continue
        found.append(point)
    return found


def automounted(
    table: list[tuple[str, str]] | None = None, keep: Sequence[str] = ()
) -> dict[str, list[str]]:
    """For each automount point, the filesystems the host has mounted on it or below it
    (the outermost ones, no kernel filesystem) that hold a path of `keep` (see
    shown_paths): bound back, read-only, over its mask, so a workspace on an automounted
    /home runs (r83c AUTOMOUNTWS), while the sandbox's copy of the automount point itself
    stays out of reach. No other: the system walk never looks below an automount point,
    and an automounted /boot's root-only files were shown to a sandbox of root's (r87b
    AUTOMOUNTPRIV)."""
    table = mounts() if table is None else table
    found: dict[str, list[str]] = {}
    for point, kind in table:
        if kind == "autofs":
            if not any(is_within(point, m) for ms in found.values() for m in ms):
                found.setdefault(point, [])
            continue
        holder = next((a for a in found if is_within(point, a)), None)
        if (
            holder is None
            or kind in KERNEL_FILESYSTEMS
            or any(is_within(point, m) for m in found[holder])
        ):
            continue
        found[holder].append(point)
    # (one this user cannot reach stays under the mask: bwrap could not bind it)
    from corral.sandbox.system_private import reached_without_caps

    def reached(path: str) -> bool:
        return os.path.lexists(path) and reached_without_caps(path)

    kept = {
        a: [m for m in ms if reached(m) and any(is_within(k, m) for k in keep)]
        for a, ms in found.items()
        if reached(a)
    }
    return {a: ms for a, ms in kept.items() if ms}


def shown_paths(policy: Any) -> tuple[str, ...]:
    """What the sandbox shows that an automounted filesystem may hold: the writable roots,
    the workspace, the home and what is shown of it."""
    return (*policy.rw_roots, policy.cwd, policy.home, *policy.visible)


def automount_hidden(real: str, keep: Sequence[str]) -> str | None:
    """The automount point `real` lies below, where the sandbox masks it (not in a
    filesystem bound back: see automounted), or None."""
    table = mounts()
    points = [p for p, kind in table if kind == "autofs" and is_within(real, p)]
    if not points:
        return None
    shown = [m for ms in automounted(table, keep).values() for m in ms]
    return None if any(is_within(real, m) for m in shown) else points[0]


def kernel_filesystem(real: str) -> str | None:
    """The kernel filesystem `real` (a resolved path outside /proc, /sys and /dev) lies on,
    by what statfs(2) says of it (or of the nearest directory above it that exists), or
    None."""
    if any(is_within(real, u) for u in USUAL):
        return None
    path = real
    while True:
        magic = _statfs_type(path)
        if magic is not None:
            return MAGIC.get(magic & 0xFFFFFFFF)
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _statfs_type(path: str) -> int | None:
    """statfs(2)'s f_type (the first field, a C long on Linux), or None where it fails."""
    import ctypes

    global _STATFS
    if _STATFS is None:
        _STATFS = ctypes.CDLL(None, use_errno=True).statfs
    buf = ctypes.create_string_buffer(256)  # (struct statfs is 120 bytes on x86_64)
    if _STATFS(os.fsencode(path), buf) != 0:
        return None
    return ctypes.c_long.from_buffer(buf).value


_STATFS = None
