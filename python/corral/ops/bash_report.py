"""What the sandbox visibly refused during a bash run, read from its output, with hints.

The sandbox itself says nothing when it refuses: the command's own error messages do
("Read-only file system", "Permission denied", "Network is unreachable"). Each recognised
message becomes a structured refusal saying how to allow it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.policy import Policy

# (code, phrases that show it, hint)
SIGNS = (
    (
        "read-only-file-system",
        ("Read-only file system",),
        "outside the writable roots: add the directory to sandbox.policy.rw_paths (or use mode "
        '"workspace-write" where this chat is read-only)',
    ),
    (
        "permission-denied",
        ("Permission denied", "Operation not permitted"),
        "the path may be hidden (sandbox.policy.deny_read) or kept read-only "
        "(sandbox.policy.protected, sandbox.policy.deny_write); see :Sandbox status",
    ),
    (
        "network",
        (
            "Network is unreachable",
            "Temporary failure in name resolution",
            "Could not resolve host",
            "Name or service not known",
            "Connection refused",
        ),
        'no network in this sandbox: use mode "workspace-write-network" '
        "(or sandbox.policy.network = true) if the command needs it",
    ),
)
MAX_REPORTED = 20


def report(output: str, policy: Policy | None = None) -> list[dict[str, str]]:
    """One refusal per output line that shows one, at most MAX_REPORTED."""
    found: list[dict[str, str]] = []
    for line in output.splitlines():
        for code, phrases, hint in SIGNS:
            if any(p in line for p in phrases):
                if code == "network" and policy is not None and policy.network:
                    continue  # with network allowed, a failure is the network's, not ours
                found.append({"code": code, "line": line.strip()[:300], "hint": hint})
                break
        if len(found) >= MAX_REPORTED:
            break
    return found
