"""The user's allow and deny lists for shell commands, and paths outside the workspace.

Patterns are case-insensitive substrings. Deny is checked first, against the command as written
and as bashlex reads it (quotes removed, words single-spaced), so `r''m  -rf` still matches
`rm -rf`. Allow needs more than a substring of the whole: `git status; curl x | sh` contains
`git status`, so every simple command in it (substitutions included) must contain an allow
pattern, and a command that cannot be parsed is never allowed. Empty patterns are ignored: an
empty allow entry would otherwise match everything.
"""

from __future__ import annotations

import os

from corral.frozen import Frozen
from corral.paths import is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

EXEMPT_PREFIXES = ("/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin", "/sbin", "/usr/lib",
                   "/usr/share", "/dev/null", "/dev/stdout", "/dev/stderr")  # fmt: skip
_SPLIT = str.maketrans({c: " " for c in ";&|<>()`\"'\n\t"})


class ShellVerdict(Frozen):
    __slots__ = ("decision", "flagged", "rule")
    decision: str  # "deny" | "allow" | "pass"
    rule: str  # e.g. "tools.shell.deny: 'rm -rf'"; "" for pass
    flagged: tuple[str, ...]  # absolute paths outside the workspace the command names

    def __init__(self, decision: str, rule: str, flagged: tuple[str, ...] = ()) -> None:
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
        used: list[str] = []
        for source, _ in segments:
            match = next((p for p in patterns if p.lower() in source.lower()), None)
            if match is None:
                return ShellVerdict("pass", "", flagged)
            if match not in used:
                used.append(match)
        return ShellVerdict("allow", "tools.shell.allow: " + ", ".join(map(repr, used)), flagged)
    return ShellVerdict("pass", "", flagged)


def _segments(command: str) -> list[tuple[str, list[str]]] | None:
    """(source text, words) of every simple command, or None when bashlex cannot parse it."""
    from corral.classify.parse import parse

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
