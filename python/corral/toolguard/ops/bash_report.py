"""What the sandbox visibly refused during a bash run, read from its output, with hints.

The sandbox itself says nothing when it refuses: the command's own error messages do
("Read-only file system", "Permission denied", "Network is unreachable"). Each recognised
message becomes a Refusal (see corral.results): the line as its message, the setting that
decides as its rule, and how to allow it.
"""

from __future__ import annotations

import os

from corral.shown import shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from corral.sandbox.policy import Policy

# (code, phrases that show it, hint, the setting that decides, what it is in plain words)
SIGNS = (
    (
        "read-only-file-system",
        ("Read-only file system",),
        "outside the writable roots: add the directory to sandbox.policy.rw_paths",
        "sandbox.policy.rw_paths",
        "a write outside the writable area",
    ),
    (
        "permission-denied",
        ("Permission denied", "Operation not permitted"),
        "the path may be hidden (sandbox.policy.deny_read, or a tools.permissions.deny glob "
        "such as .env) or kept read-only (sandbox.policy.protected, sandbox.policy.deny_write); "
        "see :Sandbox status",
        "sandbox.policy.protected",
        "a hidden or protected path",
    ),
    (
        # (r51c: `mv x A.chat` over the open chat, kept read-only by a mount of its own, says
        # EBUSY; `ln A.chat y` EXDEV: neither was told as the sandbox's)
        "mount",
        ("Device or resource busy", "Invalid cross-device link"),
        "the sandbox mounts that path on its own (a protected file, an open chat, a hidden "
        "path, its private /tmp): it cannot be replaced, moved or hard-linked across; copy it "
        "instead, or change it yourself outside the sandbox",
        "sandbox.policy.protected",
        "a move or link across a path the sandbox mounts",
    ),
    (
        # (r52c HIDDENENOENT: ~/.ssh/id_rsa was "No such file or directory", and a user or
        # model took it as not there; said only of a path the host has and the sandbox hides)
        "hidden",
        ("No such file or directory",),
        "the sandbox hides it on purpose (a credential store, or your home outside what "
        "sandbox.policy.home_allow shows); the user decides what commands may see",
        "sandbox.policy.home",
        "a read of a path it hides",
    ),
    (
        "network",
        (
            "Network is unreachable",
            "Temporary failure in name resolution",
            "Could not resolve host",
            "Name or service not known",
            # (Node's and npm's words for the same, r77d NPMNETPIPE)
            "getaddrinfo EAI_AGAIN",
            "getaddrinfo ENOTFOUND",
            "Connection refused",
        ),
        "no network in this sandbox: allow the hosts the command needs with "
        "sandbox.policy.network_allow (the CLI: --allow-host HOST), or all of it with mode "
        '"workspace-write-network"',
        "sandbox.policy.network",
        "network access",
    ),
)
MAX_REPORTED = 20
# programs that fetch from a registry or a host, named in a command: a failure of one in a
# sandbox without network is likely that (r46c, r48c: `pip install -q`, `npm install
# --silent` said nothing of it)
NETWORK_TOOLS = frozenset({
    "pip", "pip3", "npm", "npx", "yarn", "pnpm", "bun", "cargo", "go", "gem", "bundle",
    "poetry", "uv", "uvx", "pipx", "conda", "mamba", "micromamba", "curl", "wget", "composer",
})  # fmt: skip


def names_a_network_tool(words: list[str]) -> bool:
    """Whether a command's words run one of NETWORK_TOOLS (by its basename, or `python -m
    pip`): cheap, no parse, for a note after a failure, never for a decision."""
    for i, word in enumerate(words):
        for part in word.replace(";", " ").replace("&", " ").replace("|", " ").split():
            name = part.rsplit("/", 1)[-1]
            if name in NETWORK_TOOLS:
                return True
            if name == "-m" and i + 1 < len(words) and words[i + 1] in NETWORK_TOOLS:
                return True
    return False


# failures that say they are not the network's: no guess after them (r52c NETGUESS: pip
# stopped by PEP 668 before any download was told to the model as a network refusal)
NOT_NETWORK = (
    "externally-managed-environment", "command not found", "No module named",
    "No such file or directory", "Read-only file system", "Permission denied",
)  # fmt: skip
# a command that says it works offline: its failure is not the network's (r64c NETGUESSCLI:
# `pip install --no-index` failing on a missing wheel was told as a network refusal)
OFFLINE = ("--no-index", "--offline")
# the message of a guessed network refusal: corral's words, never quoted as the command's
GUESSED = "the command runs a program that fetches (its output did not say so)"


def quiet_network(
    words: list[str], code: int | None, policy: Policy, seen: list[dict[str, str]],
    output: str = "",
) -> list[dict[str, str]]:  # fmt: skip
    """The network refusal for a failed command that runs a NETWORK_TOOLS program in a sandbox
    without any network, when its output (`seen`: what report found in it) said nothing of
    it, nor of another cause (NOT_NETWORK)."""
    if policy.network or policy.network_allow or code in (0, None):
        return []
    if any(r.get("code") == "network" for r in seen) or any(m in output for m in NOT_NETWORK):
        return []
    if not names_a_network_tool(words) or any(f in w for w in words for f in OFFLINE):
        return []
    _code, _phrases, hint, rule, what = next(s for s in SIGNS if s[0] == "network")
    return [{
        "code": "network", "rule": rule, "layer": "",
        "message": GUESSED,
        "hint": hint, "what": what,
    }]  # fmt: skip


DISCARDED = "discarded"


def discarded(command: str, policy: Policy) -> list[dict[str, str]]:
    """What the command writes where the sandbox keeps nothing after it: its private /tmp, a
    private home. Such a write succeeds and is gone with the sandbox, and a model took a
    report written to /tmp/out.txt as kept (r89t SILENTDISCARD). Read off the classifier's
    list of what the command names as written (redirections, tee, cp, mkdir, ...): a write
    a program makes on its own (`pip install --user`) is not told."""
    from corral.paths import is_within

    if not policy.enabled or not any(w in command for w in ("~", *policy.hidden)):
        return []  # (no such place named: the classifier, and bashlex, are not even loaded)
    from corral.toolguard.classify import classify

    found: list[dict[str, str]] = []
    for spelled in classify(command).writes:
        path = policy.home + spelled[1:] if spelled == "~" or spelled.startswith("~/") else spelled
        if not os.path.isabs(path):
            continue  # (below the directory it runs in: the workspace, or said by report)
        path = os.path.normpath(path)
        if any(is_within(path, kept) for kept in (*policy.rw_roots, *policy.visible)):
            continue
        area = next((h for h in policy.hidden if is_within(path, h)), None)
        if area is not None and len(found) < MAX_REPORTED:
            found.append({
                "code": DISCARDED, "rule": "sandbox.policy.rw_paths", "layer": "",
                "message": f"{shown(spelled)} was written in the sandbox's own {shown(area)}, "
                "which is gone when the command ends",
                "hint": "write it inside the workspace, or add its directory to "
                "sandbox.policy.rw_paths",
                "what": "a write that does not outlive the command",
            })  # fmt: skip
    return found


def proxy_refusals(repairs: object) -> list[dict[str, str]]:
    """corral's proxy's lines after a run (a host not on the allowlist, a private address, a
    name it cannot resolve) as refusals: the model was told only "exit 56", the reason was
    in what the user reads (r61c PROXYREASON, r64c PROXYREFUSAL)."""
    from corral.net.allowlist import BLOCKED, RULE, UNRESOLVED

    found = []
    for line in repairs if isinstance(repairs, list) else []:
        if isinstance(line, str) and line.startswith((BLOCKED, UNRESOLVED)):
            message, _, hint = line.partition("; ")
            found.append({
                "code": "network", "rule": RULE, "layer": "", "message": message,
                "hint": hint.removeprefix("to allow it, ") or "check the host name",
                "what": "a connection through corral's proxy",
            })  # fmt: skip
    return found


def _paths_in(line: str, cwd: str) -> list[str]:
    """The paths an error message names (quoted, or before its `: reason`)."""
    import re

    # (GNU tools quote a name with ' or with U+2018/U+2019; a bare word that starts the line
    # is the program's name, `bwrap: Can't mkdir /x: ...`, not a path in the workspace)
    found = re.findall("['\u2018`]([^'\u2019`]+)['\u2019`]|(\\S+): [A-Z][a-z]", line)
    program = line.split(":", 1)[0].strip()
    return [
        os.path.normpath(os.path.join(cwd, a or b))
        for a, b in found
        if a or not (b == program and "/" not in b)
    ]


def _hidden(line: str, policy: Policy) -> str | None:
    """The setting that hides a path a "No such file or directory" line names, when the
    host has it and the sandbox does not show it; None otherwise."""
    from corral.paths import is_within
    from corral.sandbox import system_private

    own = (policy.home, *policy.rw_roots)
    for path in _paths_in(line, policy.cwd):
        if not os.path.lexists(path):
            continue
        denied = next((d for d, _ in policy.deny_read if is_within(path, d)), None)
        if denied is not None:
            # (a system file or directory only you may read: its own words, r82c AREAWORDS2)
            return system_private.RULE if system_private.hides(denied, own) else DENY_READ
        shown = (*policy.rw_roots, *policy.visible)
        # (not /tmp: the sandbox's own is another directory, not a hidden one)
        area = next((h for h in policy.hidden if h != "/tmp" and is_within(path, h)), None)
        if area is not None and not any(is_within(path, v) for v in shown):
            return "sandbox.policy.home" if is_within(area, policy.home) else system_private.RULE
    return None


DENY_READ = "sandbox.policy.deny_read"


# what chmod, cp -p, install and tar say when a mode is refused (see SET_ID)
MODE_REFUSED = (
    "changing permissions of", "preserving permissions", "Cannot change mode",
    "cannot change permissions",
)  # fmt: skip
SET_ID = (
    "the sandbox refuses the setuid bit, and the setgid bit with direct writes (a program "
    "any local user could run as you): set modes without them (chmod u-s), or set them "
    "yourself outside the sandbox; or the file is not the command's to change"
)


def _denied(line: str, policy: Policy, rule: str, hint: str, what: str) -> tuple[str, ...]:
    """A "Permission denied" for a path a deny list hides says so (not "protected"); an
    "Operation not permitted" of a mode change is the seccomp filter's (r66c EXPLAINWRONG:
    told as a hidden or protected path)."""
    from corral.paths import is_within
    from corral.sandbox import system_private

    if "Operation not permitted" in line and any(m in line for m in MODE_REFUSED):
        return "sandbox seccomp filter", SET_ID, "a setuid or setgid mode"

    for path in _paths_in(line, policy.cwd):
        hidden = next((d for d, _ in policy.deny_read if is_within(path, d)), None)
        if hidden is not None and system_private.hides(hidden, (policy.home, *policy.rw_roots)):
            return system_private.RULE, system_private.HINT, "a system file only you may read"
        if hidden is not None:
            return (
                "sandbox.policy.deny_read",
                f"{hidden} is hidden by sandbox.policy.deny_read (see :Sandbox status)",
                "a hidden path",
            )
    return rule, hint, what


def _beside(paths: list[str], policy: Policy) -> list[list[str]]:
    """The paths a refusal names, each as the paths it stands for: a temporary file's as the
    read-only ones beside it. `sed -i`, an editor's or a formatter's write renames a new file
    over the one it changes, and the rename onto a read-only mount says EBUSY naming the new
    file only (r68c SEDTEMPPATH: "'./sedntKQxv' is kept read-only on purpose")."""
    kept = set(policy.read_only)
    out: list[list[str]] = []
    for path in paths:
        near = sorted(p for p in kept if os.path.dirname(p) == os.path.dirname(path))
        gone = path not in kept and not os.path.lexists(path)
        out.append(near[:3] if near and gone else [path])
    return out


def _read_only(line: str, policy: Policy, rule: str, hint: str, what: str) -> tuple[str, ...]:
    """A "Read-only file system" line in its own words: a path kept read-only inside a
    writable root is protected on purpose (a git hook, a start-up file), not outside the
    writable area; and "workspace-write" helps only where the mode is read-only."""
    from corral.changes import words
    from corral.paths import is_within
    from corral.sandbox.resolution import OPEN_CHAT

    groups = _beside(_paths_in(line, policy.cwd), policy)
    paths = [p for group in groups for p in group]
    for path in paths:  # (`ln A.chat hl` names the link first)
        if dict(policy.protected_why).get(path) == OPEN_CHAT:
            return (
                "chat.patterns",
                f"{path} is {OPEN_CHAT}: the user changes it in the editor",
                "a write to an open chat's file",
            )  # (r51c CHATROHINT: told as "a git hook or config, a start-up file")
    for group in groups:
        if any(is_within(path, r) for path in group for r in policy.rw_roots):
            return (
                "sandbox.policy.protected",
                # (the path is the command's text: quoted, never corral's words, r53c
                # SUMMARYHINT)
                f"{' or '.join(map(repr, group))} is kept read-only on purpose: the host runs or "
                "obeys it (a git hook or config, a start-up file); change it yourself outside the "
                f"sandbox if you mean to, or see {words.command('status')}",
                "a write to a protected path",
            )
    if (
        policy.mode == "read-only"
        and rule == "sandbox.policy.rw_paths"
        and (not paths or any(is_within(p, policy.cwd) for p in paths))
    ):
        # (in the workspace, in a read-only sandbox: not "outside the writable roots", and
        # in a terminal's words, not a chat's, r72d CLICHATWORD)
        how = (
            "--mode workspace-write" if words.frontend() == "cli"
            else 'sandbox.mode = "workspace-write"'
        )  # fmt: skip
        return (
            "sandbox.mode",
            f"the sandbox is read-only: {how} makes the workspace writable",
            ("a write in a read-only sandbox"),
        )
    return rule, hint, what


def report(
    output: str, policy: Policy | None = None, origins: Mapping[str, str] | None = None
) -> list[dict[str, str]]:
    """One Refusal per output line that shows one, at most MAX_REPORTED."""
    found: list[dict[str, str]] = []
    for line in output.splitlines():
        for code, phrases, hint, rule, what in SIGNS:
            if any(p in line for p in phrases):
                if code == "network" and policy is not None and policy.network:
                    continue  # with network allowed, a failure is the network's, not ours
                if code == "network" and policy is not None and policy.network_allow:
                    continue  # corral's proxy says what it refused, by host
                if code == "network" and any(f["code"] == "network" for f in found):
                    break  # (one refusal: a traceback says it twice, r72d NETCOUNT)
                if code == "hidden":
                    found_hidden = _hidden(line, policy) if policy is not None else None
                    if found_hidden is None:
                        break  # (a file that is not there: the command's own business)
                    rule, what = found_hidden, "a read of a path it hides"
                    from corral.sandbox import system_private

                    if rule == system_private.RULE:
                        hint, what = system_private.HINT, "a system file only you may read"
                if code in ("read-only-file-system", "mount") and policy is not None:
                    rule, hint, what = _read_only(line, policy, rule, hint, what)
                elif code == "permission-denied" and policy is not None:
                    rule, hint, what = _denied(line, policy, rule, hint, what)
                found.append({
                    "code": code, "rule": rule, "layer": (origins or {}).get(rule, ""),
                    # (escaped: the command chose it, and corral repeats it in its own line,
                    # after the terminal's reset, r64b ESCEXPLAIN)
                    "message": shown(line.strip()[:300]), "hint": hint, "what": what,
                })  # fmt: skip
                break
        if len(found) >= MAX_REPORTED:
            break
    return found


def explain(refusals: list[dict[str, str]]) -> list[str]:
    """The refusals in corral's words, one line per kind, for after a command's own output:
    "corral: the sandbox refused a write outside the writable area (2 times, first: touch:
    cannot touch '/etc/x': Read-only file system) [sandbox.policy.rw_paths, from default];
    to allow: ..."."""
    lines = []
    for code in dict.fromkeys(r["code"] for r in refusals):
        same = [r for r in refusals if r["code"] == code]
        first = same[0]
        times = f"{len(same)} times, first: " if len(same) > 1 else ""
        where = f" [{first['rule']}, from {first['layer']}]" if first.get("layer") else ""
        if code == DISCARDED:  # (not refused: kept nowhere; each named, up to three)
            lines += [f"corral: {r['message']}" for r in same[:3]]
            more = f" ({len(same) - 3} more like them)" if len(same) > 3 else ""
            lines.append(f"corral: to keep such a file{more}: {first['hint']}")
            continue
        if first["message"] == GUESSED:  # (a guess, not a refusal seen: said as one)
            lines.append(f"corral: the sandbox has no network, and {GUESSED}; if that is why "
                         f"it failed, to allow: {first['hint']}")  # fmt: skip
            continue
        lines.append(
            f"corral: the sandbox refused {first['what']} ({times}{first['message']}){where}; "
            f"to allow: {first['hint']}"
        )
    return lines
