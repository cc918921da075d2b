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

from corral.paths import is_within

# what only the kernel writes, or what writes reach the kernel through
KERNEL_FILESYSTEMS = frozenset({
    "proc", "sysfs", "debugfs", "tracefs", "securityfs", "efivarfs", "pstore", "configfs",
    "bpf", "cgroup", "cgroup2", "binfmt_misc", "devtmpfs",
})  # fmt: skip
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


def elsewhere(table: list[tuple[str, str]] | None = None) -> list[str]:
    """The mount points of kernel filesystems outside /proc, /sys and /dev: masked whole in
    the sandbox."""
    found: list[str] = []
    for point, kind in mounts() if table is None else table:
        if (
            kind in KERNEL_FILESYSTEMS
            and not any(is_within(point, u) for u in USUAL)
            and not any(is_within(point, p) for p in found)
        ):
            found.append(point)
    return found


def kernel_filesystem(real: str, table: list[tuple[str, str]] | None = None) -> str | None:
    """The type of the kernel filesystem mounted outside /proc, /sys and /dev that `real` (a
    resolved path) lies on, or None."""
    best, kind = "", None
    for point, fstype in mounts() if table is None else table:
        if is_within(real, point) and len(point) >= len(best):
            best, kind = point, fstype
    if kind not in KERNEL_FILESYSTEMS or any(is_within(best, u) for u in USUAL):
        return None
    return kind
