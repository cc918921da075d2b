"""Resource limits of a sandboxed command: the `sandbox.limits.*` settings as concrete numbers.

rlimits are applied inside the sandbox, after bwrap made the user namespace (by `prlimit`, from
a system directory): RLIMIT_NPROC then counts only the sandbox's own processes. Set before the
namespace exists, the kernel would also compare every process the user already has on the
host (a desktop session's hundreds) with it.
"""

from __future__ import annotations

import os

from corral.errors import Problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.config import Config

MIB = 1024 * 1024
_memory: list[int] = []


def physical_memory() -> int:
    """Bytes of physical memory, asked once per process; 0 when unknown. (From sysconf, the
    kernel's sysinfo: no file is read, which the editor's policy reuse would have to trace.)"""
    if not _memory:
        try:
            total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            total = 0
        _memory.append(max(total, 0))
    return _memory[0]


def _percent(config: Config, key: str, problems: list[Problem]) -> int:
    """Bytes for a percentage of physical memory; 0 for no limit (or memory unknown)."""
    value = int(config[key])
    if value > 100:
        problems.append(
            Problem(key, config.origins[key], f"{value} is not a percentage from 1 to 100")
        )
        return 0
    return physical_memory() * value // 100


def resolve(config: Config, problems: list[Problem]) -> tuple[tuple[tuple[str, int], ...], int]:
    """(rlimits as (prlimit option, value) with 0s left out, tmpfs size in bytes or 0)."""
    rlimits = (
        ("nproc", int(config["sandbox.limits.processes"])),
        ("fsize", int(config["sandbox.limits.file_size_mb"]) * MIB),
        ("data", _percent(config, "sandbox.limits.memory_percent", problems)),
    )
    tmp_size = _percent(config, "sandbox.limits.tmp_percent", problems)
    return tuple((name, value) for name, value in rlimits if value), tmp_size
