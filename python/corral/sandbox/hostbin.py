"""The programs corral itself starts on the host: found in fixed system directories, never on PATH.

A workspace directory on PATH is common (an activated `.venv`, `node_modules/.bin`, direnv), and a
sandboxed command can write there: an `env` or `true` it planted would run on the host, and a
failing fake `true` would make the bwrap probe report "bwrap does not work" and switch the
sandbox off. So every program corral runs outside the sandbox (env, sh, the probe's command, the
shell of bash tool calls) comes from a fixed list of system directories, and only when the file
and every directory above it belong to root and cannot be changed by anyone else.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.sandbox.policy import Policy

# Where a distribution installs its base programs. /usr/local/bin is left out on purpose: Debian
# makes it writable by group staff. NixOS keeps everything but /bin/sh and /usr/bin/env in its
# system profile.
SYSTEM_BIN_DIRS = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/run/current-system/sw/bin")

_found: dict[str, str | None] = {}


def _safe_chain(path: str) -> bool:
    """Whether `path` (resolved) and every directory above it belong to root and nobody else can
    replace them. A group- or world-writable directory passes only with the sticky bit (as
    /nix/store has): then only an entry's owner, root here, can rename or delete it."""
    real = os.path.realpath(path)
    parts = real.split("/")
    current = "/"
    for i, part in enumerate(parts):
        current = os.path.join(current, part) if part else current
        if i and not part:
            continue
        try:
            st = os.lstat(current)
        except OSError:
            return False
        if st.st_uid != 0:
            return False
        shared = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if shared and not (stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX):
            return False
    return os.access(real, os.X_OK) and not os.path.isdir(real)


def find(name: str) -> str | None:
    """The first trustworthy `name` in SYSTEM_BIN_DIRS, looked up once per process."""
    if name not in _found:
        _found[name] = next(
            (
                candidate
                for d in SYSTEM_BIN_DIRS
                if os.path.lexists(candidate := os.path.join(d, name)) and _safe_chain(candidate)
            ),
            None,
        )
    return _found[name]


def require(name: str, policy: Policy | None = None) -> str:
    """`find(name)`, or a BackendError naming what is missing and what to do; also refused when
    the policy makes it writable (a writable root that holds a system directory)."""
    from corral.errors import BackendError

    path = find(name)
    if path is None:
        raise BackendError(
            f"no trustworthy {name} found: corral starts host programs only from "
            f"{', '.join(SYSTEM_BIN_DIRS)} (owned by root, writable by nobody else), never from "
            f"PATH; install {name} there"
        )
    if policy is not None and policy.could_have_written(path):
        raise BackendError(
            f"{path} is inside a writable root, so a sandboxed command could replace it; "
            "remove the writable root that holds it from sandbox.policy.rw_paths"
        )
    return path


def forget() -> None:
    """Look again on the next call (tests)."""
    _found.clear()
