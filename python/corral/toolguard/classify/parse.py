"""bashlex, imported late, checked against bash's own reading of here-documents.

bashlex and bash disagree on where a here-document ends, and a line one of them takes for the
body is a command to the other (review 2, C3):

- bashlex compares each line with the delimiter as written (`'EOF'`, `"E"OF`, `\\EOF`); bash
  removes the quotes first, so after `cat <<'EOF'` the line `EOF` ends the body for bash and
  the commands after it run, while bashlex reads on up to a line `'EOF'`;
- bashlex joins backslash-newline inside every body; bash only when the delimiter is
  unquoted, so for `<<'EOF'` a body line ending in `\\` followed by `EOF` ends it for bash;
- bashlex reads `((x<<EOF))` as subshells with a here-document; bash evaluates arithmetic and
  runs the lines bashlex took for a body.

So every here-document in bashlex's tree is read again the way bash reads it (bash's
`read_a_line` and `make_here_document`), from the original text: the delimiter with its quotes
removed, backslash-newline joined only for an unquoted delimiter, leading tabs stripped for
`<<-`. Unless that ends exactly where bashlex's body ends, the text is refused (the caller
fails closed); when it does, the body bash reads replaces bashlex's (`heredoc.bash_body`,
`heredoc.literal`).

bashlex rejects `cat <<'EOF' > file` outright when no line reads `'EOF'`, which is how most
generated commands write a file. Then each quoted delimiter after `<<` is rewritten without its
quotes, padded with spaces so that every position stays the same, and the result is accepted
only if each rewritten spot really is a here-document in the parse (and passes the check
above). The text before a real `<<` operator is unchanged, so its quoting (and hence the
operator itself) is the same as in the original.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_DELIMITER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_ENDS_WORD = frozenset(" \t\n;&|<>()")


def parse(text: str) -> list[Any]:
    """bashlex's trees for `text`; raises whatever bashlex raises when it cannot parse, and
    ValueError when bashlex does not read a here-document the way bash does."""
    import bashlex  # type: ignore[import-untyped]  # slow to import; most callers never need it

    try:
        trees = list(bashlex.parse(text))
        check_heredocs(text, trees)
        return trees
    except Exception:
        rewritten, delimiters = _unquote_delimiters(text)
        if not delimiters:
            raise
    trees = list(bashlex.parse(rewritten))
    found = {}
    for node, _ in _heredoc_redirects(rewritten, trees):
        found[node.output.pos[0]] = node.output.word
    for start, word in delimiters.items():
        if found.get(start) != word:
            raise ValueError("a quoted here-document delimiter could not be placed")
    check_heredocs(text, trees)
    return trees


def check_heredocs(text: str, trees: list[Any]) -> None:
    """Read every here-document in `trees` as bash does; raise ValueError where bashlex's body
    is not bash's. Sets `bash_body` (without the delimiter line) and `literal` on each."""
    for node, in_arithmetic in _heredoc_redirects(text, trees):
        if in_arithmetic:
            raise ValueError("`<<` inside ((...)) is arithmetic to bash, not a here-document")
        delimiter, quoted = bash_delimiter(text, node.output.pos[0])
        if delimiter is None:
            raise ValueError("a here-document delimiter that cannot be read for sure")
        start, end = node.heredoc.pos
        if start <= node.output.pos[0] or text[start - 1 : start] != "\n":
            raise ValueError("a here-document body that does not start on a line of its own")
        body, bash_end = _bash_body(text, start, delimiter, quoted, node.type == "<<-")
        if body is None or bash_end != end:
            raise ValueError("bash and the parser disagree on where a here-document ends")
        node.heredoc.bash_body = body
        node.heredoc.literal = quoted


def bash_delimiter(text: str, start: int) -> tuple[str | None, bool]:
    """The delimiter word at `text[start:]` as bash compares it (quotes removed, nothing
    expanded), and whether any part of it was quoted (the body is then literal). None for a
    spelling whose meaning is not certain ($'...', $"...", substitutions, unterminated quotes).
    """
    chars: list[str] = []
    quoted = False
    j = start
    while j < len(text) and text[j] not in _ENDS_WORD:
        c = text[j]
        nxt = text[j + 1 : j + 2]
        if c in "'\"":
            end = text.find(c, j + 1)
            inside = text[j + 1 : end]
            if end < 0 or (c == '"' and any(ch in inside for ch in "\\$`")):
                return None, False
            chars.append(inside)
            quoted = True
            j = end + 1
        elif c == "\\":
            if not nxt or nxt == "\n":
                return None, False
            chars.append(nxt)
            quoted = True
            j += 2
        elif c == "`" or (c == "$" and nxt in ("'", '"', "(", "{", "[")):
            return None, False
        else:
            chars.append(c)
            j += 1
    word = "".join(chars)
    return (word or None), quoted


def _bash_body(
    text: str, start: int, delimiter: str, quoted: bool, strip_tabs: bool
) -> tuple[str | None, int]:
    """(body, end) as bash reads it from `start`: end is the index of the newline after the
    delimiter line (or the end of the text); (None, -1) when the delimiter never comes."""
    lines: list[str] = []
    i = start
    while i < len(text):
        line, i, end = _bash_line(text, i, join=not quoted)
        # bash compares before stripping tabs too (make_here_document's compatibility hack)
        if strip_tabs and line == delimiter:
            return "\n".join(lines), end
        if strip_tabs:
            line = line.lstrip("\t")
        if line == delimiter:
            return "\n".join(lines), end
        lines.append(line)
    return None, -1


def _bash_line(text: str, i: int, join: bool) -> tuple[str, int, int]:
    """One line of a body as bash's read_a_line reads it: (line without its newline, index
    after it, index of its newline or the end of the text). With `join` (an unquoted
    delimiter) backslash-newline disappears and a backslash keeps the next character."""
    out: list[str] = []
    n = len(text)
    while i < n:
        c = text[i]
        i += 1
        if c == "\x00":
            continue  # bash ignores NUL bytes in its input
        if c == "\\" and join:
            if text[i : i + 1] == "\n":
                i += 1
                continue
            out.append(c)
            if i < n:  # the escaped character is taken as it is (it is not a newline)
                if text[i] != "\x00":
                    out.append(text[i])
                i += 1
            continue
        if c == "\n":
            return "".join(out), i, i - 1
        out.append(c)
    return "".join(out), n, n


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


def _heredoc_redirects(text: str, nodes: list[Any]) -> list[tuple[Any, bool]]:
    """Every here-document redirection, and whether it sits inside `((...))`, which bashlex
    reads as two subshells and bash as arithmetic."""
    found: list[tuple[Any, bool]] = []
    stack = [(node, False) for node in nodes]
    while stack:
        node, arithmetic = stack.pop()
        kind = getattr(node, "kind", None)
        if kind == "compound" and text[node.pos[0] : node.pos[0] + 2] == "((":
            arithmetic = True
        if kind == "redirect" and getattr(node, "heredoc", None):
            found.append((node, arithmetic))
        children: list[Any] = []
        for attr in ("parts", "list", "redirects"):
            children.extend(getattr(node, attr, None) or ())
        for attr in ("command", "output"):
            child = getattr(node, attr, None)
            if hasattr(child, "kind"):
                children.append(child)
        stack.extend((child, arithmetic) for child in children)
    return found
