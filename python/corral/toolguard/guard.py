"""The guard: every tool call is decided here before anything runs.

In order, the first rule that speaks decides:
1. unknown tools, and tools not in `tools.available` (frontmatter may remove some): refused;
2. bash: privileged commands (sudo, su, doas, pkexec) always refused; `tools.shell.deny`;
3. the sandbox mode itself: in mode read-only, write tools and bash commands the classifier
   does not find read-only are refused; without network, fetch is refused;
4. the approval preset (`tools.approval`): full, auto, read-only, or ask; read-only and auto
   approve bash only inside a working sandbox (the classifier alone never approves a command
   that would run on the host);
5. with "ask": `tools.shell.allow`, then the approval chain (corral.toolguard.approval).
A call must pass both the sandbox and the approval layer.
"""

from __future__ import annotations

import os

from corral.paths import is_within
from corral.toolguard import approval
from corral.toolguard.approval import APPROVE, DENY, Decision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from corral.sandbox.policy import Policy
    from corral.toolguard.classify.result import Classification

GUARD = "urn:corral:guard:"
SANDBOXED = "can_auto_approve_if_sandboxed"
# Capabilities are data: the approval chain asks them, never a tool's name.
CAPABILITIES: dict[str, frozenset[str]] = {
    "bash": frozenset({"can_auto_approve_if_sandboxed", "shell"}),
    "read": frozenset({"read-only"}),
    "ls": frozenset({"read-only"}),
    "write": frozenset({"writes"}),
    "edit": frozenset({"writes"}),
    "delete": frozenset({"writes"}),
    "fetch": frozenset({"network"}),
}

# Each tool's input: name -> (type, required). A call with a misspelt or missing field is
# refused before anything runs: `{cmd = "ls"}` must not become `bash -c ""`.
INPUTS: dict[str, dict[str, tuple[type, bool]]] = {
    "bash": {"command": (str, True), "cwd": (str, False)},
    "read": {"path": (str, True), "max_bytes": (int, False), "offset": (int, False)},
    "ls": {"path": (str, False)},
    "write": {"path": (str, True), "content": (str, True), "create_dirs": (bool, False)},
    "edit": {
        "path": (str, True), "old": (str, True), "new": (str, True),
        "expected": (int, False), "preview": (bool, False),
    },
    "delete": {"path": (str, True)},
    "fetch": {"url": (str, True)},
}  # fmt: skip


MAX_COMMAND = 120 * 1024  # bytes of a bash command: one argument, which Linux caps at 128 KiB
MAX_PATH = 4095  # bytes of a path: Linux's PATH_MAX, its NUL included
# (r77d SMALLWORDS: "must be a int")
KIND_WORDS = {str: "a string", int: "an integer", bool: "true or false"}


def _kind_of(value: object) -> str:
    """What `value` is, in the words of the Lua tables it came from: never Python's type
    names ("not a str", "not list": r89 MODELTEXTVOICE)."""
    if isinstance(value, bool):  # (an int to Python)
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    return "a table" if isinstance(value, dict) else "another kind of value"


def _utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def invalid_input(tool: str, tool_input: Mapping[str, Any]) -> str | None:
    """Why `tool_input` is not a valid input of `tool`, naming the field; None when it is."""
    if not isinstance(tool_input, dict):
        # (an OpenAI-style API hands the arguments over as JSON text, r77d STRINPUT: a string
        # gave the model a traceback, or "input.  is not an input of read")
        # (the chat plugin's bug, not the model's: said so, to either reader, r89
        # MODELTEXTVOICE)
        return (
            f"the chat plugin passed corral the call's input as {_kind_of(tool_input)}, not "
            f"a table of {tool}'s inputs: the plugin must decode the model's JSON arguments "
            "with vim.json.decode first"
        )
    fields = INPUTS.get(tool, {})
    unknown = sorted(k for k in tool_input if k not in fields)
    if unknown:
        known = ", ".join(f"input.{k}" for k in fields)
        return f"input.{unknown[0]} is not an input of {tool} (it takes {known})"
    for name, (kind, required) in fields.items():
        value = tool_input.get(name)
        if value is None:
            if required:
                return f"input.{name} ({KIND_WORDS[kind]}) is required"
            continue
        # bool is an int to Python; an int field takes no true/false
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return f"input.{name} must be {KIND_WORDS[kind]}, not {_kind_of(value)}"
        if kind is str and required and name in ("command", "path", "url") and not value:
            return f"input.{name} is empty"
        if isinstance(value, str) and not _utf8(value):
            # (a lone surrogate from JSON's `\ud800`, bytes not UTF-8: r79c MALFORMEDWORDS)
            return f"input.{name} is not UTF-8 text"
        if name == "command" and isinstance(value, str) and len(value.encode()) > MAX_COMMAND:
            # (`bash -c COMMAND` is one argument: the kernel takes 128 KiB, and jobstart
            # failed past it, r78c BASHARGMAX)
            return (
                f"input.command is {len(value.encode()) // 1024} KiB, more than a command "
                f"line takes ({MAX_COMMAND // 1024} KiB): write long contents with the write "
                "tool, then run a short command"
            )
        if name == "path" and isinstance(value, str) and len(value.encode()) > MAX_PATH:
            # (no file has one: refused before any rule reads it, r88c GUARDQUADRATIC)
            return f"input.path is {len(value.encode())} bytes, more than a path takes ({MAX_PATH})"
        if isinstance(value, str) and "\0" in value:
            # no shell, path or URL holds one, and the editor shows none of what follows it
            return f"input.{name} contains a NUL byte"
    return None


def bash_command(tool_input: Mapping[str, Any], policy: Policy) -> tuple[str, str | None]:
    """(the command text bash runs, why `cwd` is refused or None). With `cwd`, the command
    starts with a `cd` there: the classifier reads and bash runs one and the same text. `cwd`
    is a directory inside the writable roots (the workspace when the sandbox is off),
    relative to the workspace."""
    command = str(tool_input.get("command", ""))
    cwd = tool_input.get("cwd")
    if not cwd:
        return command, None
    import shlex

    real = os.path.realpath(os.path.join(policy.cwd, os.path.expanduser(cwd)))
    roots = policy.rw_roots if policy.enabled else (policy.cwd,)
    where = "the writable roots" if policy.enabled else "the workspace"
    if not any(is_within(real, r) for r in roots):
        return command, f"input.cwd {cwd!r} is not inside {where}"
    if not os.path.isdir(real):
        # (not "send the inputs the tool takes" alone: it was a directory yet to make, r61c
        # CWDHINT)
        return command, (
            f"input.cwd {cwd!r} is not a directory inside {where}: make it first "
            f"(mkdir -p {shlex.quote(str(cwd))}) or pass one that exists"
        )
    if real == policy.cwd:
        return command, None
    return f"cd -- {shlex.quote(real)} || exit 1\n{command}", None


def _is_read_only(tool: str, classification: Classification | None) -> bool:
    if tool == "bash":
        from corral.toolguard.classify import READ_ONLY

        return classification is not None and classification.kind == READ_ONLY
    return "read-only" in CAPABILITIES.get(tool, frozenset())


def _git_elsewhere(classification: Classification, policy: Policy) -> Classification:
    """A read-only git command is read-only only when the repository it works on keeps its
    config out of a sandboxed command's reach (see gitrepo)."""
    from corral.sandbox.protect import gitrepo
    from corral.toolguard.classify import DYNAMIC
    from corral.toolguard.classify.result import Classification

    if gitrepo.config_is_safe(policy.cwd, policy):
        return classification
    reason = (
        "git here works on a repository whose config a sandboxed command can write "
        "(or a bare repository inside the workspace): its config can run programs"
    )
    return Classification(
        DYNAMIC, (*classification.reasons, reason), classification.writes,
        classification.commands,
    )  # fmt: skip


def _capabilities(
    tool: str,
    tool_input: Mapping[str, Any],
    classification: Classification | None,
    policy: Policy,
    undoable: bool,
) -> frozenset[str]:
    """What the approval chain may rely on for this call (r89 audit C8: one rule for what
    runs unasked in a working sandbox). A command that deletes or discards work wholesale is
    approved for the sandbox only where a change set can undo it; with direct writes it is
    asked about (or approved by your own tools.auto_approve or resolvers). A read or listing
    inside the workspace is approved where a sandboxed `cat` of it would run unasked: the
    file tools refuse what the sandbox hides (see the pre-check), so it reads no more. Not
    with your home or / as the workspace: a read there is asked, in a window that warns."""
    from corral.status_report import workspace_warning

    found = CAPABILITIES[tool]
    if classification is not None and classification.destroys and not undoable:
        return found - {SANDBOXED}
    if tool in ("read", "ls") and not workspace_warning(policy):
        # (not with your home or / as the workspace: the window warns of that, r89 C9)
        from corral.toolguard.ops.files import locate
        from corral.toolguard.ops.refusal import OpError

        try:  # (the path as the tool reads it: `~/x` is your home's, r90a TILDEUNASKED)
            where = locate(policy, str(tool_input.get("path") or "."))
        except OpError:
            return found  # (refused before asking: see the service's pre-check)
        tops = (policy.cwd, *policy.rw_roots)
        if all(any(is_within(p, top) for top in tops) for p in where):
            return found | {SANDBOXED}
    return found


def decide(
    tool: str,
    tool_input: Mapping[str, Any],
    config: Mapping[str, Any],
    policy: Policy,
    sandboxed: bool,
    chain: approval.Chain,
    buffer_values: Mapping[str, Any] | None = None,
    lua_auto_approve: str | None = None,
    undoable: bool = False,
) -> tuple[Decision, Classification | None]:
    """(the decision, the bash classification or None). `undoable`: a command's writes here
    go through change sets, so each run can be undone whole."""
    if tool not in CAPABILITIES:
        return Decision(DENY, GUARD + "unknown-tool", f"corral knows no tool {tool!r}"), None
    if tool not in config["tools.available"]:
        return (
            Decision(DENY, "tools.available", f"{tool} is not in tools.available here"),
            None,
        )
    invalid = invalid_input(tool, tool_input)
    if invalid is not None:
        # (no table at all: the chat plugin's bug, which no call the model sends can mend)
        rule = "invalid-input" if isinstance(tool_input, dict) else "plugin-input"
        return Decision(DENY, GUARD + rule, invalid), None
    classification: Classification | None = None
    if tool == "bash":
        from corral.toolguard.classify import PRIVILEGED, READ_ONLY, classify, shell_policy

        command, bad_cwd = bash_command(tool_input, policy)
        if bad_cwd is not None:
            return Decision(DENY, GUARD + "invalid-input", bad_cwd), None
        classification = classify(command)
        if classification.kind == READ_ONLY and "git" in classification.commands:
            classification = _git_elsewhere(classification, policy)
        if classification.kind == PRIVILEGED:
            reason = "; ".join(classification.reasons) or "a privileged command"
            return Decision(DENY, GUARD + "privileged", reason), classification
        verdict = shell_policy(
            command, config["tools.shell.allow"], config["tools.shell.deny"], policy.cwd
        )
        if verdict.decision == "deny":
            return Decision(DENY, verdict.rule, "denied by the shell policy"), classification
    else:
        verdict = None

    # (fetch writes no file: what stops it is the network, in read-only mode too, r51c
    # FETCHRO: "fetch changes files", with a hint to a mode that has no network either)
    if tool == "fetch" and policy.enabled and not policy.network and not policy.network_allow:
        return (
            Decision(DENY, "sandbox.policy.network", "the sandbox allows no network here"),
            classification,
        )
    read_only = _is_read_only(tool, classification)
    if policy.enabled and policy.mode == "read-only" and not read_only:
        what = {"bash": "this command is not read-only", "fetch": "fetch reaches the network"}
        if classification is not None and classification.kind == "network":  # (NETWORK)
            what["bash"] = "this command uses the network"
        return (
            Decision(
                DENY, "sandbox.mode",
                f"the sandbox is read-only and {what.get(tool, f'{tool} changes files')}",
            ),
            classification,
        )  # fmt: skip

    preset = config["tools.approval"]
    # The classifier only advises: it may approve a command as read-only only where a working
    # sandbox would hold if it were wrong. On the host (mode off, no backend) a bash call is
    # never approved for what the classifier read in it; only "full" or the chain can run it.
    host_bash = tool == "bash" and not sandboxed
    if preset in ("read-only", "auto") and host_bash:
        return (
            Decision(
                DENY, "tools.approval",
                f"{preset}: bash runs unasked only inside a working sandbox, and none runs "
                "here (the classifier alone never approves a command on the host); "
                'with tools.approval = "ask" you are asked',
            ),
            classification,
        )  # fmt: skip
    if preset == "full":
        return Decision(APPROVE, "tools.approval", "full: no approval step"), classification
    if preset == "read-only":
        if read_only:
            return Decision(APPROVE, "tools.approval", "read-only: a read"), classification
        return (
            Decision(DENY, "tools.approval", "read-only: only read-only operations run"),
            classification,
        )
    if preset == "auto":
        if sandboxed or read_only:
            # Say which of the two it was: "confines" would be false without a sandbox.
            why = "the sandbox confines it" if sandboxed else "a read of a file tool"
            return Decision(APPROVE, "tools.approval", f"auto: {why}"), classification
        return (
            Decision(DENY, "tools.approval", "auto: no working sandbox, so nothing runs unasked"),
            classification,
        )

    if verdict is not None and verdict.decision == "allow":
        from corral.toolguard.classify.shell_policy import allow_may_approve

        if allow_may_approve(classification, policy.cwd):
            return Decision(APPROVE, verdict.rule, "allowed by the shell policy"), classification
    ctx = approval.CallContext(
        tool=tool,
        input=tool_input,
        capabilities=_capabilities(tool, tool_input, classification, policy, undoable),
        config=config,
        buffer_values=buffer_values or {},
        sandboxed=sandboxed,
        classification=classification,
        lua_auto_approve=lua_auto_approve,
    )
    decision = chain.decide(ctx)
    if (
        decision.source == approval.DEFAULT
        and sandboxed
        and ctx.config["tools.auto_approve_sandboxed"]
    ):
        why = _asked_because(tool, classification, policy, undoable)
        if why:  # (not the chain's generic words, r90t ASKEDBECAUSEGENERIC)
            return Decision(decision.decision, decision.source, why), classification
    return decision, classification


def _asked_because(
    tool: str, classification: Classification | None, policy: Policy, undoable: bool
) -> str:
    """Why a call the sandbox's resolver would approve elsewhere is asked about here."""
    from corral.status_report import workspace_warning

    if tool == "bash" and classification is not None and classification.destroys:
        if not undoable:
            return f"{classification.destroys[0]}, and with direct writes nothing undoes it"
    elif tool in ("read", "ls"):
        where = "your home or / is the workspace" if workspace_warning(policy) else (
            "it is outside the workspace"
        )  # fmt: skip
        return f"corral asks before {'a read' if tool == 'read' else 'an ls'} where {where}"
    return ""
