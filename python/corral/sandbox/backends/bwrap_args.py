"""Which `sandbox.backends.bwrap.extra_args` are safe: an allowlist, checked on the final value.

Extra arguments go after corral's own, so any bind among them lands on top of the masks and the
read-only mounts: `--bind / /` makes the whole host writable, `--ro-bind ~/.ssh /x` shows a hidden
key again, `--cap-add` and `--share-net` undo what the mode set. Only options that narrow the
sandbox or change nothing the host can see are accepted; for the rest there is a setting that
widens it in the open, shown in status with its origin.
"""

from __future__ import annotations

# option -> how many values follow it
ALLOWED: dict[str, int] = {
    "--unshare-all": 0,
    "--unshare-user": 0,
    "--unshare-user-try": 0,
    "--unshare-ipc": 0,
    "--unshare-pid": 0,
    "--unshare-net": 0,
    "--unshare-uts": 0,
    "--unshare-cgroup": 0,
    "--unshare-cgroup-try": 0,
    "--die-with-parent": 0,
    "--new-session": 0,
    "--as-pid-1": 0,
    "--disable-userns": 0,
    "--assert-userns-disabled": 0,
    "--clearenv": 0,
    "--hostname": 1,
    "--unsetenv": 1,
    "--cap-drop": 1,
    "--tmpfs": 1,  # hides a path inside the sandbox; writes stay in memory
    "--remount-ro": 1,
    "--perms": 1,
    "--size": 1,
    "--chdir": 1,
    "--setenv": 2,
}

INSTEAD = {
    "--bind": "make a path writable with sandbox.policy.rw_paths",
    "--bind-try": "make a path writable with sandbox.policy.rw_paths",
    "--dev-bind": "make a path writable with sandbox.policy.rw_paths",
    "--dev-bind-try": "make a path writable with sandbox.policy.rw_paths",
    "--ro-bind": "a bind after corral's masks can show a hidden path again; "
    'use sandbox.policy.home_allow with home = "private"',
    "--ro-bind-try": "a bind after corral's masks can show a hidden path again; "
    'use sandbox.policy.home_allow with home = "private"',
    "--share-net": "allow the network with sandbox.policy.network or mode "
    '"workspace-write-network"',
    "--cap-add": "capabilities stay dropped; sandbox.policy.allow_privileged keeps them",
}


def refused(args: tuple[str, ...] | list[str]) -> list[str]:
    """Every reason `args` cannot be used, naming the argument and what to do instead."""
    reasons = []
    i = 0
    while i < len(args):
        arg = args[i]
        arity = ALLOWED.get(arg)
        if arity is None:
            hint = INSTEAD.get(arg, "only options that narrow the sandbox are accepted")
            reasons.append(
                f"{arg!r} (argument {i + 1}) is not accepted: it could undo the sandbox; {hint}. "
                f"Accepted: {', '.join(sorted(ALLOWED))}"
            )
            return reasons  # what follows cannot be told apart from values of the refused one
        if i + arity >= len(args):
            reasons.append(f"{arg!r} (argument {i + 1}) needs {arity} value(s) after it")
        i += 1 + arity
    return reasons
