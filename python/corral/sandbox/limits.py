"""Resource limits of a sandboxed command: the `sandbox.limits.*` settings as concrete numbers.

rlimits are applied inside the sandbox, after bwrap made the user namespace (by `prlimit`, from
a system directory): RLIMIT_NPROC then counts only the sandbox's own processes. Set before the
namespace exists, the kernel would also compare every process the user already has on the
host (a desktop session's hundreds) with it.
"""

from __future__ import annotations

from corral.errors import Problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.config import Config

MIB = 1024 * 1024
_memory: list[int] = []


def physical_memory() -> int:
    """Bytes of physical memory (MemTotal), read once per process; 0 when unknown."""
    if not _memory:
        total = 0
        try:
            with open("/proc/meminfo", encoding="ascii") as f:
                for line in f:
                    if line.startswith("MemTotal:"):
                        total = int(line.split()[1]) * 1024
                        break
        except (OSError, ValueError, IndexError):
            pass
        _memory.append(total)
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
