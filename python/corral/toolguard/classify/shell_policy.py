"""The user's allow and deny lists for shell commands, and paths outside the workspace.

Patterns are case-insensitive. Deny patterns are substrings, checked first, against the command
as written and as bashlex reads it (quotes removed, words single-spaced), so `r''m  -rf` still
matches `rm -rf`. Allow patterns are leading words: every simple command must begin with the
words of one (`git status` allows `git status --short`, not `rm -rf ~ 'git status'` nor
`git status; curl x | sh`), and nothing may ride along: no substitution, no redirection into a
file (also of a group or an `if`: `{ git status; } > ~/.bashrc`), no assignment, no word that
may expand into an option. A command that cannot be parsed is never allowed. Empty patterns
are ignored: an empty allow entry would otherwise match everything. An allow verdict approves
only what `allow_may_approve` accepts of the command's classification.
"""

from __future__ import annotations

import os

from corral.frozen import Frozen
from corral.paths import is_within
from corral.toolguard.classify.result import DYNAMIC, PRIVILEGED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any, Literal

    from corral.toolguard.classify.result import Classification

EXEMPT_PREFIXES = ("/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin", "/sbin", "/usr/lib",
                   "/usr/share", "/dev/null", "/dev/stdout", "/dev/stderr")  # fmt: skip
_SPLIT = str.maketrans({c: " " for c in ";&|<>()`\"'\n\t"})


class ShellVerdict(Frozen):
    __slots__ = ("decision", "flagged", "rule")
    decision: Literal["deny", "allow", "pass"]
    rule: str  # e.g. "tools.shell.deny: 'rm -rf'"; "" for pass
    flagged: tuple[str, ...]  # absolute paths outside the workspace the command names

    def __init__(
        self, decision: Literal["deny", "allow", "pass"], rule: str, flagged: tuple[str, ...] = ()
    ) -> None:
        self._set(decision=decision, rule=rule, flagged=flagged)


def shell_policy(
    command: str, allow: Sequence[str], deny: Sequence[str], workspace: str
) -> ShellVerdict:
    segments = _segments(command)
    words = _words(command, segments)
    flagged = _outside(words, workspace)
    texts = [command.lower()]
    if segments is not None:
        texts.append(" ".join(" ".join(ws) for _, ws in segments).lower())
    for pattern in deny:
        if pattern.strip() and any(pattern.lower() in t for t in texts):
            return ShellVerdict("deny", f"tools.shell.deny: {pattern!r}", flagged)
    patterns = [p for p in allow if p.strip()]
    if patterns and segments:
        used = _allowed(command, patterns)
        if used:
            rule = "tools.shell.allow: " + ", ".join(map(repr, used))
            return ShellVerdict("allow", rule, flagged)
    return ShellVerdict("pass", "", flagged)


def allow_may_approve(classification: Classification | None, workspace: str) -> bool:
    """May an allow verdict approve a command classified so? An allow entry names a tool, not
    everything its options and environment can make it do: it approves only when the
    classifier understood the command, or found nothing worse than programs it does not know
    (`./run-tests`, a project tool). Not when a loop variable, an option or the environment
    makes it run something else (`for HOME in d; do git status; done`, `git diff --ext-diff`,
    `find -exec`), nor when it writes a file outside `workspace` or one whose path is built at
    run time (`sort -o ~/.bashrc f`, `git log --output=/tmp/x`)."""
    if classification is None or classification.kind == PRIVILEGED:
        return False
    if classification.kind == DYNAMIC and not classification.unknown_only:
        return False
    root = os.path.normpath(workspace) if workspace else ""
    for path in classification.writes:
        if not root or any(c in path for c in "$`*?[{\\"):
            return False
        full = os.path.normpath(os.path.join(root, os.path.expanduser(path)))
        # and where it lands: `notes.txt` may be a link to ~/.bashrc
        if not is_within(full, root) or not is_within(os.path.realpath(full), root):
            return False
    return True


# Redirections that open a file for writing (`>&` and `<&` only when not duplicating an fd).
_WRITING = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


def _allowed(command: str, patterns: Sequence[str]) -> list[str]:
    """The patterns that allow `command`, or [] when something in it is not allowed.

    Every simple command must start with the words of a pattern (`git status` allows
    `git status --short`, not `rm -rf ~ 'git status'`), its name read as the classifier reads
    it (`/usr/bin/git` is git). Nothing else may ride along: no substitution, no redirection
    into a file (of a simple command or of a group, `{ ...; } > f`), no assignment (`PAGER=`),
    no word that may expand into an option or into several words (`git log $X`)."""
    from corral.toolguard.classify.parse import parse
    from corral.toolguard.classify.result import SINKS
    from corral.toolguard.classify.rules_by_name import program_name
    from corral.toolguard.classify.spelling import scan

    try:
        trees = parse(command)
    except Exception:
        return []
    used: list[str] = []
    for node in _walk(trees):
        kind = getattr(node, "kind", None)
        if kind in ("commandsubstitution", "processsubstitution", "assignment"):
            return []
        if kind == "redirect" and node.type in _WRITING:
            target = node.output
            word = getattr(target, "word", None)
            duplicates = isinstance(target, int) or (
                node.type == ">&" and word is not None and (word.isdigit() or word == "-")
            )
            if not duplicates and word not in SINKS:
                return []
        if kind != "command":
            continue
        words: list[str] = []
        for part in node.parts:
            if part.kind != "word":
                continue
            spelling = scan(command[part.pos[0] : part.pos[1]])
            if spelling.may_be_option or spelling.substitutes or spelling.evaluates:
                return []
            words.append(part.word)
        match = _match(words, patterns, program_name)
        if match is None:
            return []
        if match not in used:
            used.append(match)
    return used


def _match(
    words: Sequence[str], patterns: Sequence[str], program_name: Callable[[str], str | None]
) -> str | None:
    """The first pattern whose words begin `words` (case-insensitively)."""
    if not words:
        return None
    name = program_name(words[0]) or words[0]
    have = [name.lower(), *(w.lower() for w in words[1:])]
    for pattern in patterns:
        want = pattern.lower().split()
        if have[: len(want)] == want:
            return pattern
    return None


def _segments(command: str) -> list[tuple[str, list[str]]] | None:
    """(source text, words) of every simple command, or None when bashlex cannot parse it."""
    from corral.toolguard.classify.parse import parse

    try:
        trees = parse(command)
    except Exception:
        return None
    found: list[tuple[str, list[str]]] = []
    for node in _walk(trees):
        if getattr(node, "kind", None) == "command":
            start, end = node.pos
            words = [p.word for p in node.parts if p.kind in ("word", "assignment")]
            words += [
                p.output.word
                for p in node.parts
                if p.kind == "redirect" and hasattr(p.output, "word")
            ]
            found.append((command[start:end], words))
    return found


def _walk(nodes: Sequence[Any]) -> Iterator[Any]:
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        children: list[Any] = []
        for attr in ("parts", "list", "redirects"):
            children.extend(getattr(node, attr, None) or ())
        for attr in ("command", "output"):
            child = getattr(node, attr, None)
            if hasattr(child, "kind"):
                children.append(child)
        stack.extend(reversed(children))


def _words(command: str, segments: list[tuple[str, list[str]]] | None) -> list[str]:
    if segments is not None:
        return [w for _, ws in segments for w in ws]
    return command.translate(_SPLIT).split()  # unparseable: every token counts


def _outside(words: Sequence[str], workspace: str) -> tuple[str, ...]:
    root = os.path.normpath(workspace) if workspace else ""
    flagged: list[str] = []
    for word in words:
        for candidate in (word, word.partition("=")[2]):
            path = _absolute(candidate)
            if path is None or (root and is_within(path, root)):
                continue
            if any(is_within(path, prefix) for prefix in EXEMPT_PREFIXES):
                continue
            if path not in flagged:
                flagged.append(path)
    return tuple(flagged)


def _absolute(word: str) -> str | None:
    if word == "~" or word.startswith("~/"):
        word = os.path.expanduser(word)
    if not word.startswith("/"):
        return None
    return os.path.normpath(word).replace("//", "/")
