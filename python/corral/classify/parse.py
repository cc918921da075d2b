"""bashlex, imported late, plus a narrow fix for quoted here-document delimiters.

bashlex rejects `cat <<'EOF' > file` (it looks for the line `'EOF'`), which is how most
generated commands write a file. When the text does not parse as it is, each quoted delimiter
after `<<` is rewritten without its quotes, padded with spaces so that every position stays
the same, and the result is accepted only if each rewritten spot really is a here-document in
the parse. The text before a real `<<` operator is unchanged, so its quoting (and hence the
operator itself) is the same as in the original; the body is literal either way, and whether
it expands is decided from the original text (`Tree.literal_heredocs`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_DELIMITER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_ENDS_WORD = frozenset(" \t\n;&|<>()")


def parse(text: str) -> list[Any]:
    """bashlex's trees for `text`; raises whatever bashlex raises when it cannot parse."""
    import bashlex  # type: ignore[import-untyped]  # slow to import; most callers never need it

    try:
        return list(bashlex.parse(text))
    except Exception:
        rewritten, delimiters = _unquote_delimiters(text)
        if not delimiters:
            raise
    trees = list(bashlex.parse(rewritten))
    found = {}
    for node in _heredoc_redirects(trees):
        found[node.output.pos[0]] = node.output.word
    for start, word in delimiters.items():
        if found.get(start) != word:
            raise ValueError("a quoted here-document delimiter could not be placed")
    return trees


def _unquote_delimiters(text: str) -> tuple[str, dict[int, str]]:
    """The text with quoted `<<` delimiters unquoted, and {delimiter position: delimiter}."""
    out = list(text)
    delimiters: dict[int, str] = {}
    i = text.find("<<")
    while i >= 0:
        j = i + 2
        if text[j : j + 1] == "<":  # a here-string
            i = text.find("<<", j + 1)
            continue
        if text[j : j + 1] == "-":
            j += 1
        while j < len(text) and text[j] in " \t":
            j += 1
        start = j
        word, end = _delimiter(text, start)
        if word is not None and end - start != len(word):
            out[start:end] = list(word.ljust(end - start))
            delimiters[start] = word
        i = text.find("<<", max(end, i + 2))
    return "".join(out), delimiters


def _delimiter(text: str, start: int) -> tuple[str | None, int]:
    """Read a delimiter word made of plain characters, quoted or escaped; None otherwise."""
    chars: list[str] = []
    j = start
    while j < len(text) and text[j] not in _ENDS_WORD:
        c = text[j]
        if c in "'\"":
            end = text.find(c, j + 1)
            inside = text[j + 1 : end] if end > 0 else "?"
            if not inside or not set(inside) <= _DELIMITER_CHARS:
                return None, j + 1
            chars.append(inside)
            j = end + 1
        elif c == "\\":
            nxt = text[j + 1 : j + 2]
            if not nxt or nxt not in _DELIMITER_CHARS:
                return None, j + 1
            chars.append(nxt)
            j += 2
        elif c in _DELIMITER_CHARS:
            chars.append(c)
            j += 1
        else:
            return None, j + 1
    word = "".join(chars)
    return (word or None), j


def _heredoc_redirects(nodes: list[Any]) -> list[Any]:
    found: list[Any] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if getattr(node, "kind", None) == "redirect" and getattr(node, "heredoc", None):
            found.append(node)
        for attr in ("parts", "list", "redirects"):
            stack.extend(getattr(node, attr, None) or ())
        for attr in ("command", "output"):
            child = getattr(node, attr, None)
            if hasattr(child, "kind"):
                stack.append(child)
    return found


def heredoc_is_literal(text: str, redirect: Any) -> bool:
    """Is the here-document's delimiter quoted in the original text (so its body is literal)?"""
    start, end = redirect.output.pos
    return any(c in text[start:end] for c in "'\"\\")
