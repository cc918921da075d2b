"""`corral explain`: what the guard would decide for a bash command, without running it."""

from __future__ import annotations

import os
import sys

from corral.cli import wants_help
from corral.cli.layers import resolve
from corral.cli.options import UsageError, parse
from corral.sandbox.backends import default_registry
from corral.toolguard import approval, guard

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from corral.sandbox.policy import Policy


def explanation(args: list[str]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the parsed options, what the guard decides), or None when help was printed."""
    opts, words = parse("explain", args)
    if wants_help(opts):
        return None
    if not words:
        raise UsageError("corral explain: no command given (corral explain -- 'COMMAND')")
    command = " ".join(words)
    config, policy = resolve(opts)
    registry = default_registry()
    backend, backend_note, _ = registry.outcome(policy)
    decision, classification = guard.decide(
        "bash", {"command": command}, config.values, policy, backend is not None,
        approval.Chain(), undoable=registry.staged(policy),  # (r90t EXPLAINWIPEASKS)
    )  # fmt: skip
    return opts, {
        "command": command,
        "decision": decision.decision,
        "source": decision.source,
        "reason": decision.reason,
        "class": classification.kind if classification else None,
        "reasons": list(classification.reasons) if classification else [],
        "writes": list(classification.writes) if classification else [],
        "approval": config["tools.approval"],
        "sandbox": {
            "enabled": policy.enabled,
            "mode": policy.mode,
            "backend": backend,
            "backend_note": backend_note,
            "network": policy.network,
            "network_allow": list(policy.network_allow),
            "hosts_outside_allowlist": _outside(command, policy),
            "hidden": _hidden(command, policy, config.origins),
            "held": _held(command, policy, classification.writes if classification else ()),
            "writable": [*policy.rw_roots, "/tmp (private)"],
            "read_only_inside_writable": list(policy.read_only),
        },
    }


def _words(command: str) -> list[str]:
    import shlex

    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return command.split()


HISTORY_VERBS = frozenset({"commit", "merge", "rebase", "stash", "cherry-pick", "revert", "am"})


def _hidden(command: str, policy: Policy, origins: Any) -> list[str]:
    """What the sandbox would hide of the paths a command names (r61c EXPLAINGAPS: `cat
    ~/.ssh/id_rsa` was "approve", and the command then met "No such file")."""
    import os

    from corral.toolguard.ops.refusal import check_read

    found = []
    for word in _words(command):
        if not word.startswith(("/", "~", ".")) and "/" not in word:
            continue
        path = policy.home + word[1:] if word == "~" or word.startswith("~/") else word
        path = os.path.normpath(os.path.join(policy.cwd, path))
        refusal = check_read(policy, path, os.path.realpath(path), {})
        if refusal is not None and refusal.message not in found:
            found.append(refusal.message)
    return found


def _held(command: str, policy: Policy, writes: Any) -> list[str]:
    """What the check after the run would hold of what the command names: a protected name
    it writes, a config file at the top (see project_top_rules), new git history
    (sandbox.git_history)."""
    names = {n for n in policy.protected_names if "/" not in n and "*" not in n}
    found = [
        f"{w}: protected name (held for your review after the run)"
        for w in writes
        if any(part in names for part in str(w).split("/"))
    ]
    from corral.changes.project_top_rules import config_format

    found += [
        f"{w}: a config file at the project's top (held for your review after the run)"
        for w in writes
        if os.path.dirname(str(w)) in ("", ".") and config_format(os.path.basename(str(w)))
        and not any(str(w) in f for f in found)
    ]  # fmt: skip
    words = _words(command)
    if policy.git_history == "hold" and any(
        w == "git" and any(v in HISTORY_VERBS for v in words[i + 1 : i + 4])
        for i, w in enumerate(words)
    ):
        found.append("new git history: its commits are held for your review after the run "
                     '(sandbox.git_history = "hold")')  # fmt: skip
    return found


def _outside(command: str, policy: Policy) -> list[str]:
    """host:port of each URL the command names that the sandbox's network would refuse."""
    if policy.network or not policy.enabled:
        return []
    from corral.net.allowlist import Allowlist, named_hosts

    allowlist = Allowlist.parse(policy.network_allow, policy.network_private)
    return [f"{h}:{p}" for h, p in named_hosts(command) if not allowlist.allows(h, p)]


def explain(args: list[str]) -> int:
    explained = explanation(args)
    if explained is None:
        return 0
    opts, data = explained
    if opts.get("json"):
        import json

        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    box = data["sandbox"]
    lines = [
        f"decision: {data['decision']}  (by {data['source']}: {data['reason']})",
        f"class:    {data['class']}",
        *(f"  - {r}" for r in data["reasons"]),
    ]
    if data["writes"]:
        import shlex  # (`{}` of find -exec, quoted, does not read as an empty set)

        lines.append(f"writes:   {', '.join(shlex.quote(w) for w in data['writes'])}")
    lines += [
        f"approval: {data['approval']}",
        f"sandbox:  {'enabled' if box['enabled'] else 'DISABLED'}, mode {box['mode']}, "
        f"backend {box['backend'] or 'none: ' + box['backend_note']}, "
        f"network {_network(box)}",
        f"  writable: {'  '.join(box['writable'])}",
    ]
    lines += [f"  hidden: {h}" for h in box["hidden"]]
    lines += [f"  held after the run: {h}" for h in box["held"]]
    if box["hosts_outside_allowlist"]:
        where = "sandbox.policy.network_allow" if box["network_allow"] else "the sandbox"
        lines.append(
            f"  refused by {where}: {', '.join(box['hosts_outside_allowlist'])} "
            "(--allow-host HOST, or sandbox.policy.network_allow)"
        )
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _network(box: dict[str, Any]) -> str:
    if box["network"]:
        return "allowed"
    if box["network_allow"]:
        return "only " + ", ".join(box["network_allow"]) + " (through corral's proxy)"
    return "off"
