"""Does this bwrap really work here? Start a trivial hardened sandbox once and remember.

The binary existing proves little: user namespaces can be disabled by sysctl, AppArmor or a
container runtime. The answer is cached on disk (a `corral run` is a new process each time) and
keyed on everything it depends on: the binary's identity, the boot, the user and the sysctls
that gate user namespaces. A stale "available" only makes a run fail closed (exit 125).
"""

from __future__ import annotations

import marshal
import os

from corral import dirs
from corral.sandbox import hostbin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable

SYSCTLS = (
    "/proc/sys/kernel/random/boot_id",
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
)
CACHE_NAME = "bwrap-probe.marshal"
CACHE_VERSION = 2
MAX_ENTRIES = 16

# The flags every wrapped command uses that older kernels or bwraps may refuse.
PROBE_FLAGS = (
    "--unshare-user",
    "--unshare-pid",
    "--as-pid-1",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--disable-userns",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
)

_memory: dict[Hashable, tuple[str | None, str]] = {}


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return ""


def cache_key(binary: str) -> Hashable:
    st = os.stat(binary)
    return (
        CACHE_VERSION,
        os.path.realpath(binary),
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
        os.getuid(),
        tuple(_read(p) for p in SYSCTLS),
    )


def _cache_path() -> str:
    return os.path.join(dirs.user_cache_dir(), CACHE_NAME)


def _load() -> dict[Hashable, tuple[str | None, str]]:
    try:
        with open(_cache_path(), "rb") as f:
            data = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


def _store(entries: dict[Hashable, tuple[str | None, str]]) -> None:
    path = _cache_path()
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            marshal.dump(entries, f)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs a probe next time


def _true_argv() -> list[str] | None:
    """A command that only succeeds, from a system directory: one found on PATH could be a
    planted `true` that fails, and a failing probe switches the sandbox off under "auto"."""
    true = hostbin.find("true")
    if true:
        return [true]
    sh = hostbin.find("sh")
    return [sh, "-c", ":"] if sh else None


def run_probe(binary: str) -> tuple[str | None, str]:
    """(None or the reason it fails, version string), by really starting a sandbox."""
    import subprocess

    command = _true_argv()
    if command is None:
        return "no true or sh owned by root in a system directory to probe it with", ""
    env = {"PATH": "/usr/bin:/bin"}
    try:
        version = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10, env=env
        ).stdout.strip()
        done = subprocess.run(
            [binary, *PROBE_FLAGS, "--", *command],
            capture_output=True,
            text=True,
            timeout=10,
            env=env,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return f"{binary} could not be started: {e}", ""
    if done.returncode != 0:
        message = done.stderr.strip().replace("\n", " ") or f"exit status {done.returncode}"
        return f"{binary} cannot create a sandbox here: {message}", version
    return None, version


def probe(binary: str) -> tuple[str | None, str]:
    """Cached `run_probe`: in memory for this process, on disk across processes."""
    try:
        key = cache_key(binary)
    except OSError as e:
        return f"{binary}: {e.strerror}", ""
    if key in _memory:
        return _memory[key]
    entries = _load()
    result = entries.get(key)
    if not (isinstance(result, tuple) and len(result) == 2 and result[0] is None):
        result = run_probe(binary)
        # Only successes go to disk: a planted "unavailable" must not turn the sandbox off (a
        # planted "available" only makes runs fail closed, with exit status 125).
        if result[0] is None:
            entries[key] = result
            while len(entries) > MAX_ENTRIES:
                entries.pop(next(iter(entries)))
            _store(entries)
    _memory[key] = result
    return result


def run_overlay_probe(binary: str, base: str) -> str | None:
    """None when `binary` can mount an overlay with its upper layer under `base` (corral's
    staging directory); otherwise why not (bwrap older than 0.10, a kernel without overlayfs
    in user namespaces, a file system that cannot hold an upper layer)."""
    import shutil
    import subprocess
    import tempfile

    command = _true_argv()
    if command is None:
        return "no true or sh owned by root in a system directory to probe it with"
    tmp = tempfile.mkdtemp(prefix=".probe-", dir=base)
    try:
        lower, upper, work = (os.path.join(tmp, n) for n in ("l", "u", "w"))
        for d in (lower, upper, work):
            os.mkdir(d)
        done = subprocess.run(
            [binary, *PROBE_FLAGS, "--overlay-src", lower, "--overlay", upper, work, lower,
             "--", *command],
            capture_output=True, text=True, timeout=10, env={"PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        if done.returncode != 0:
            message = done.stderr.strip().replace("\n", " ") or f"exit status {done.returncode}"
            return f"{binary} cannot mount an overlay here: {message}"
        return None
    except (OSError, subprocess.SubprocessError) as e:
        return f"{binary} could not be started: {e}"
    finally:
        inner = os.path.join(tmp, "w", "work")
        if os.path.isdir(inner):
            os.chmod(inner, 0o700)  # the kernel makes it with mode 000
        shutil.rmtree(tmp, ignore_errors=True)


def overlay(binary: str, base: str) -> str | None:
    """Cached `run_overlay_probe`; only successes go to disk, as for `probe`."""
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        key = ("overlay", cache_key(binary), os.stat(base).st_dev)
    except OSError as e:
        return f"{binary}: {e.strerror}"
    if key in _memory:
        return _memory[key][0]
    entries = _load()
    if entries.get(key) != (None, ""):
        reason = run_overlay_probe(binary, base)
        if reason is None:
            entries[key] = (None, "")
            while len(entries) > MAX_ENTRIES:
                entries.pop(next(iter(entries)))
            _store(entries)
        _memory[key] = (reason, "")
    else:
        _memory[key] = (None, "")
    return _memory[key][0]


def forget() -> None:
    """Drop the in-memory answers (tests; `:Sandbox enable` re-validating)."""
    _memory.clear()
