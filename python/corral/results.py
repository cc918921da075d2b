"""The result of a tool call as a chat plugin gets it: one shape for every tool.

    status     ran | refused | denied_by_user | failed | timed_out | cancelled
    ok         the call ran and, for bash, exited 0
    tool       the tool's name
    sandboxed  whether corral's sandbox confined the call (bash: a working backend ran it;
               file tools: the sandbox's rules applied; fetch: false, its host list confines it)
    decision   {decision, source, reason}: who let it run, or refused it
    summary    one plain-language line a chat can pass to the model as it is
    refusal    (refused, denied_by_user) a Refusal: {code, rule, layer, message, hint} and the
               path or host it concerns
    error      (failed) what went wrong
    bash:      exit, output, truncated, timed_out, sandbox_refusals (Refusals read from the
               command's own error messages), changes (corral-changes), repairs
    the others: the tool's own fields (content, diff, entries, bytes, status_code, ...)

The codes of refusals that come from the guard are in GUARD_REFUSALS; the file tools' and
fetch's codes are their own (ops.refusal, ops.http). `lua/corral/types.lua` types all of it.
"""

from __future__ import annotations

import json

from corral.changes.words import HISTORY_WAITS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

STATUSES = ("ran", "refused", "denied_by_user", "failed", "timed_out", "cancelled")

# The guard's rule (a decision's source, or its prefix) -> (code, the setting it reads, hint).
GUARD_REFUSALS: dict[str, tuple[str, str, str]] = {
    "urn:corral:guard:unknown-tool": (
        "unknown-tool", "", "use one of the tools corral knows: bash, read, write, edit, "
        "delete, ls, fetch",
    ),
    "tools.available": (
        "tool-not-available", "tools.available",
        "add the tool to tools.available (or drop the frontmatter line that removes it)",
    ),
    "urn:corral:guard:plugin-input": (
        "invalid-input", "", "ask the user to report it to the chat plugin's author: the same "
        "call sent again fails the same way",
    ),
    "urn:corral:guard:invalid-input": (
        "invalid-input", "", "send the inputs the tool takes, as the message says",
    ),
    "urn:corral:guard:privileged": (
        "privileged", "", "privileged commands never run from a chat: run it yourself in a "
        "terminal if it is needed",
    ),
    "tools.shell.deny": (
        "shell-deny", "tools.shell.deny", "remove the matching entry from tools.shell.deny",
    ),
    "sandbox.mode": (
        "read-only-mode", "sandbox.mode",
        'set sandbox.mode = "workspace-write"; :Sandbox status shows where "read-only" '
        "comes from",
    ),
    "sandbox.policy.network": (
        "no-network", "sandbox.policy.network",
        "add the host to sandbox.policy.network_allow (that host only; the CLI: --allow-host "
        'HOST), or set sandbox.mode = "workspace-write-network" and add it to '
        "tools.fetch.allow_hosts",
    ),
    "tools.approval": (
        "approval-preset", "tools.approval",
        'set tools.approval = "ask" to be asked about calls like this one',
    ),
    "urn:corral:approval:": (
        "denied-by-resolver", "", "the approval resolver named in rule refused it: see its "
        "configuration (tools.auto_approve, or the plugin that registered it)",
    ),
}  # fmt: skip
DENIED = (
    "denied", "", "the rule named in rule refused it: :Sandbox status (corral status) shows the "
    "settings in force and where each comes from",
)  # fmt: skip


def guard_refusal(decision: Mapping[str, Any], origins: Mapping[str, str]) -> dict[str, str]:
    """The Refusal for a guard's "deny": which rule, from which layer, and how to allow it."""
    source = str(decision.get("source", ""))
    key = next((k for k in GUARD_REFUSALS if source == k or source.startswith(k)), None)
    # (a rule with no entry above still says where to look: a refusal always has a hint)
    code, setting, hint = GUARD_REFUSALS[key] if key else DENIED
    return {
        "code": code,
        "rule": source,
        "layer": origins.get(setting, "") if setting else "builtin",
        "message": str(decision.get("reason", "")),
        "hint": hint,
    }


def without_own_lines(output: str, repairs: Any) -> str:
    """A command's output as valid UTF-8, without the lines corral's check printed after
    it (`corral: held ...`, `:Sandbox apply ...`): they are for the user, and in `repairs`
    for the chat to show; in the output the model would read the user's commands as its
    own to run, beside lines a command can print the same (r51c MODELTEXT). The summary
    says what is held."""
    # (bytes that are not UTF-8 become U+FFFD: a chat taking the output in would be read
    # as latin1 next time, its frontmatter garbled, r53c CHATLATIN1)
    output = output.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if not isinstance(repairs, list) or not repairs or not output:
        return output
    own = {f"corral: {line}" for line in repairs if isinstance(line, str)}
    lines = output.split("\n")
    end = len(lines)
    while end > 0 and (lines[end - 1] in own or (lines[end - 1] == "" and end == len(lines))):
        end -= 1  # (from the end only: the check runs after the command)
    kept = "\n".join(lines[:end])
    return kept + ("\n" if kept and output.endswith("\n") else "")


def as_text(value: Any) -> Any:
    """Every string of a result as valid UTF-8: a file name, a fetched body or a held path
    that is not (a lone surrogate here) would reach the chat as a raw byte, and the chat
    would be read as latin1 next time, its frontmatter garbled (r54c CHATBYTES)."""
    if isinstance(value, str):
        try:  # (a byte kept as U+DC80..U+DCFF: U+FFFD; any other lone surrogate: `?`)
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {as_text(k): as_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_text(v) for v in value]
    return value


def _status(tool: str, raw: Mapping[str, Any]) -> str:
    given = raw.get("status")
    if given in STATUSES:
        return str(given)
    refusal = raw.get("refusal")
    if refusal and not (isinstance(refusal, dict) and refusal.get("code") in FAILURES):
        return "refused"
    if raw.get("error") or refusal:
        return "failed"
    return "ran"


# what the world did, not corral: said "failed", to retry, with its refusal's words (r77d
# FETCHRESOLVE: a name that does not resolve was "refused", as if a setting had said no)
FAILURES = frozenset({"resolve-failed"})


def shape(
    tool: str, raw: Mapping[str, Any], decision: Mapping[str, Any], sandboxed: bool
) -> dict[str, Any]:
    """The result of a call from what ran (or did not): status, ok and summary added."""
    result = {k: v for k, v in raw.items() if k != "refused"}
    status = _status(tool, raw)
    result["status"] = status
    result["tool"] = tool
    # (a call that never ran was confined by nothing: refused, declined in its window, or
    # cancelled there, r46c F8)
    ran = status not in ("refused", "denied_by_user") and not (
        status == "cancelled" and "output" not in raw and "exit" not in raw
    )
    result["sandboxed"] = bool(sandboxed) and ran
    result["decision"] = {k: decision.get(k, "") for k in ("decision", "source", "reason")}
    if status == "ran" and tool == "bash":
        result["ok"] = raw.get("exit") == 0
    else:
        result["ok"] = status == "ran" and raw.get("ok", True) is not False
    result["summary"] = summary(result)
    return result


# refusals no setting lifts: their hint says what to do instead (to the model, most of them:
# "the user can allow it" before "re-read the file" misled it, r46c)
NEVER_ALLOWED = frozenset({
    "privileged", "unknown-tool", "invalid-input", "not-found", "is-directory",
    "not-a-directory", "not-a-file", "not-empty", "exists", "match-count", "not-text",
    "invalid-path", "invalid-content", "invalid-argument", "io-error", "bad-url",
    "resolve-failed",
})  # fmt: skip


# a hint that starts so is written to the model already, not "the user can allow it: ..."
FOR_MODEL = ("only the user ", "use ")


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _changes(changes: Mapping[str, Any] | None) -> str:
    if not changes:
        return ""
    counts = changes.get("counts") or {}
    total = sum(int(counts.get(k, 0)) for k in ("added", "modified", "deleted"))
    held = changes.get("held") or []
    held_count = int(counts.get("held", len(held)))  # (the list is cut, the count whole)
    state = changes.get("status")
    # (its commits: the model's own `git log` shows them, but the user's branch has them
    # not, until the user applies them, r61c HELDSUMMARY)
    commits = any(
        isinstance(h, dict) and str(h.get("why", "")).startswith(HISTORY_WAITS) for h in held
    )
    if commits:
        return (
            f"; {_count(total, 'change')} applied, and its git commits are held for the user's "
            "review: not on the user's branch until they apply them (do not commit them again)"
        )
    # (which, and not to write them again: a model told only "1 path held" wrote it again,
    # r68c MODELSUMMARY)
    names = [str(h.get("path", "")) for h in held if isinstance(h, dict)][:3]
    more = " and more" if held_count > len(names) else ""
    which = f": {', '.join(names)}{more}" if names and all(names) else ""
    again = "; do not write them again: the user applies them"
    if state == "held" and not total:
        paths = f" ({_count(held_count, 'path')})" if held_count else ""
        return (
            f"; its changes{paths} are held for the user's review and are not in the workspace "
            f"yet{which}{again if which else ''}"
        )
    if state in ("applied", "held") and held:  # (held: what passed was applied, r46c)
        return (
            f"; {_count(total, 'change')} applied, {_count(held_count, 'path')} held back for "
            f"the user's review (not in the workspace){which}{again}"  # (which: r48c U9)
        )
    return ""


def _earlier(changes: Mapping[str, Any] | None, failed: bool) -> str:
    """What earlier runs here left held: a command missing it fails in its own words."""
    found = [e for e in (changes or {}).get("earlier") or [] if isinstance(e, dict)]
    names = [str(p) for e in found for p in e.get("paths") or []]
    commits = (
        # (said every time: a commit now starts beside them, r58c DIVERGE, r61c EARLIERSILENT)
        "; earlier commands' git commits are held for the user's review and are not on the "
        "branch: a commit now would not build on them"
        if any(e.get("commits") for e in found)
        else ""
    )
    if not found or not failed:
        return commits  # (files only where they may be why: every call said it, r52c)
    count = sum(int(e.get("count", 0)) for e in found)
    more = " and more" if count > len(names[:3]) else ""
    listed = f": {', '.join(names[:3])}{more}" if names else ""
    held = "earlier commands' changes held for the user's review"
    # (both: a failed call was told of the commits and not of the module it missed, r64c
    # EARLIERCOMMITS)
    return f"{commits}; {held} are not in the workspace{listed}"


def summary(result: Mapping[str, Any]) -> str:
    """One plain line for the model: what happened, and what the sandbox refused."""
    status = result["status"]
    tool = result["tool"]
    refusal = result.get("refusal") or {}
    if status == "refused":
        text = f"not run: {refusal.get('message') or refusal.get('code', 'refused')}"
        # (after a "; ", never in parentheses: the message and the hint hold parentheses of
        # their own, and nested ones hid where the reason ended, r90t MODELTEXTREST)
        if refusal.get("code") == "denied-by-glob":
            # (not which pattern to drop: the user keeps such files (a private key, .env)
            # from tools on purpose, r51c MODELTEXT; the hint stays in the refusal for them)
            text += "; the user keeps files matching it from tools"
        elif refusal.get("hint") and (
            refusal.get("code") in NEVER_ALLOWED or str(refusal["hint"]).startswith(FOR_MODEL)
        ):
            text += f"; {refusal['hint']}"
        elif refusal.get("hint"):
            text += f"; the user can allow it: {refusal['hint']}"
        return text
    if status == "denied_by_user":
        return "not run: the user declined this call"
    if status == "cancelled":
        return "cancelled before it finished" + (
            f"; output so far: {len(result.get('output') or '')} bytes" if tool == "bash" else ""
        )
    if status == "failed":
        return f"could not run: {result.get('error', 'unknown error')}"
    if tool == "bash":
        text = (
            f"killed after {result.get('timeout', '?')} s (tools.bash.timeout)"
            if status == "timed_out"
            else f"exit {result.get('exit')}"
        )
        if result.get("truncated"):
            text += "; long output: only its end is included"
        from corral.toolguard.ops.bash_report import DISCARDED, GUESSED

        every = result.get("sandbox_refusals") or []
        seen = [r for r in every if r.get("code") != DISCARDED]
        gone = [r for r in every if r.get("code") == DISCARDED]
        if seen and seen[0].get("message") == GUESSED:
            # (corral's guess, not a line of the command's: not quoted as one, r52c NETGUESS)
            text += (
                "; the sandbox has no network, and the command runs a program that fetches "
                f"(to allow: {seen[0].get('hint', '')})"
            )
        elif seen:
            first = seen[0]
            # the line is the command's own output: quoted, so it cannot pass for corral's words
            quoted = json.dumps(str(first.get("message", ""))[:160], ensure_ascii=False)
            text += (
                f"; the sandbox refused {_count(len(seen), 'operation')}, first: "
                f"{quoted} ({first.get('what', first.get('code', ''))}"
                + (f"; to allow: {first['hint']})" if first.get("hint") else ")")
            )
        if gone:  # (kept nowhere: not a refusal, r89t SILENTDISCARD)
            more = f" ({len(gone) - 1} more like it)" if len(gone) > 1 else ""
            text += f"; {gone[0].get('message', '')}{more}: {gone[0].get('hint', '')}"
        failed = status == "timed_out" or result.get("exit") != 0
        return text + _changes(result.get("changes")) + _earlier(result.get("changes"), failed)
    if not result.get("ok"):
        return f"failed: {result.get('error', 'unknown error')}"
    path = result.get("path", "")
    if tool == "read":
        cut = f"; cut short: {result.get('notice', '')}" if result.get("truncated") else ""
        cut = cut or (f"; {result['notice']}" if result.get("notice") else "")
        return f"read {path}{cut}"
    # (not to write it again either: a model that rewrote a held file stacked held sets,
    # r72d WRITEHELDSUMMARY)
    held = (
        "; held for the user's review: not in the workspace yet; do not write it again: the "
        "user applies it"
        if result.get("held")
        else ""
    )
    if tool == "write":
        return f"wrote {_count(int(result.get('bytes', 0)), 'byte')} to {path}{held}"
    if tool == "edit":
        count = _count(int(result.get("count", 0)), "occurrence")
        if result.get("written") is False and not result.get("held"):
            # (a preview: it said "replaced", though nothing was, r72d PREVIEWSUMMARY)
            return f"would replace {count} in {path} (a preview: nothing written)"
        return f"replaced {count} in {path}{held}"
    if tool == "delete":
        return f"deleted {path}{held}"
    if tool == "ls":
        n = len(result.get("entries") or [])
        return f"listed {path}: {n} {'entry' if n == 1 else 'entries'}"
    if tool == "fetch":
        return f"HTTP {result.get('http_status', '?')} from {result.get('url', '')}"
    return "ran"
