"""What a word's source text can turn into, read from the text itself.

bashlex removes quotes (`r''m` becomes `rm`, which is right) but mangles `$'\\x72m'` into
`$x72m` and keeps `{rm,-rf,x}` as one word, so the decisions that matter for safety are made
from the source: does the word expand at run time, can it split into several words (or into an
option), does it evaluate arithmetic (which can run `$(...)` hidden in a variable's value)?
"""

from __future__ import annotations

from corral.toolguard.classify.envvars import is_risky

PLAIN, SINGLE, DOUBLE, ANSI, HEREDOC = range(5)
_NAME_START = "_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SPECIAL_PARAMS = "@*#?-$!0123456789"


class Spelling:
    """Flags for one word; `static` words mean exactly what bashlex's text says."""

    __slots__ = ("evaluates", "expands", "first", "leading_literal", "splits", "substitutes")

    def __init__(self) -> None:
        self.expands = False  # any expansion: the value is only known at run time
        self.substitutes = False  # $(...), `...`, <(...), >(...): runs code
        self.splits = False  # unquoted expansion, glob or brace: may become 0..n words
        self.evaluates = False  # arithmetic or indirection that may run code from a value
        self.leading_literal: bool | None = None  # None until the first character is produced
        self.first = ""

    @property
    def static(self) -> bool:
        return not (self.expands or self.substitutes or self.splits or self.evaluates)

    @property
    def may_be_option(self) -> bool:
        """Could this word, at run time, be (or split into) something starting with `-`?"""
        if self.static:
            return False
        return self.splits or not self.leading_literal or self.first == "-"

    def _literal(self, c: str) -> None:
        if self.leading_literal is None:
            self.leading_literal, self.first = True, c

    def _expansion(self, state: int) -> None:
        self.expands = True
        if state == PLAIN:
            self.splits = True
        if self.leading_literal is None:
            self.leading_literal = False


def scan(raw: str, heredoc: bool = False) -> Spelling:
    """Scan a word's source (or, with `heredoc`, an unquoted here-document body)."""
    s = Spelling()
    state = HEREDOC if heredoc else PLAIN
    i, n = 0, len(raw)
    brace_end = _brace_end(raw)
    bracket_end = raw.rfind("]")  # a `[` before it may open a glob bracket
    while i < n:
        c = raw[i]
        if state == SINGLE:
            if c == "'":
                state = PLAIN
            else:
                s._literal(c)
            i += 1
            continue
        if state == ANSI:  # $'...': escapes decide the value, which we do not decode
            if c == "\\":
                i += 2
                continue
            if c == "'":
                state = PLAIN
            i += 1
            continue
        if c == "\\":
            nxt = raw[i + 1 : i + 2]
            if state in (DOUBLE, HEREDOC) and nxt not in ("$", "`", '"', "\\", "\n"):
                s._literal(c)
                i += 1
            elif nxt == "\n":
                i += 2
            else:
                s._literal(nxt or c)
                i += 2
            continue
        if c == "$":
            i, state = _dollar(raw, i, state, s)
            if s.substitutes:
                return s
            continue
        if c == "`":
            s.substitutes = True
            s._expansion(state)
            return s
        if state == HEREDOC:
            s._literal(c)
        elif state == DOUBLE:
            if c == '"':
                state = PLAIN
            else:
                s._literal(c)
        elif c == "'":
            state = SINGLE
        elif c == '"':
            state = DOUBLE
        elif c in "<>" and raw[i + 1 : i + 2] == "(":
            s.substitutes = True
            s._expansion(state)
            return s
        elif c in "*?" or (c == "[" and i < bracket_end) or (c == "{" and i < brace_end):
            s._expansion(PLAIN)  # a glob or brace expansion: any number of words, any text
        elif c == "~" and i == 0:
            s.expands = True  # a home directory: an absolute path, never an option
            s._literal("/")
        else:
            s._literal(c)
        i += 1
    if state in (SINGLE, DOUBLE, ANSI):
        s.evaluates = True  # unterminated quoting: we did not read it the way bash will
    return s


def _brace_end(raw: str) -> int:
    """A `{` before this index may open a brace expansion: bash needs a `}` after it with a
    comma or `..` in between (`{a,b}`, `{1..3}`); `{}` stays literal. Computed once per word."""
    close = raw.rfind("}")
    if close < 0:
        return -1
    return max(raw.rfind(",", 0, close), raw.rfind("..", 0, close))


def _dollar(raw: str, i: int, state: int, s: Spelling) -> tuple[int, int]:
    """Handle the `$` at `raw[i]`; returns the next index and the quoting state there."""
    nxt = raw[i + 1 : i + 2]
    if state == PLAIN and nxt in ("'", '"'):
        s._expansion(DOUBLE)  # decoded or translated at run time (not split)
        return i + 2, ANSI if nxt == "'" else DOUBLE
    if nxt == "(":
        s.substitutes = True  # also $((...)): arithmetic, which can run code as well
        s._expansion(state)
        return i + 2, state
    if nxt == "[":
        s.evaluates = True
        s._expansion(state)
        end = raw.find("]", i)
        return (len(raw) if end < 0 else end + 1), state
    if nxt == "{":
        end = _closing_brace(raw, i + 1)
        s._expansion(state)
        if end < 0:
            s.evaluates = True
            return len(raw), state
        body = raw[i + 2 : end]
        if "$(" in body or "`" in body or "<(" in body or ">(" in body:
            s.substitutes = True
        if _body_evaluates(body):
            s.evaluates = True
        return end + 1, state
    if nxt and nxt in _SPECIAL_PARAMS:
        s._expansion(state)
        return i + 2, state
    if nxt and nxt in _NAME_START:
        j = i + 2
        while j < len(raw) and (raw[j].isalnum() or raw[j] == "_"):
            j += 1
        s._expansion(state)
        return j, state
    s._literal("$")
    return i + 1, state


def _closing_brace(raw: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(raw)):
        if raw[j] == "{":
            depth += 1
        elif raw[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return -1


def _body_evaluates(body: str) -> bool:
    """Does `${body}` evaluate text from a value as code?

    `${!x}` (indirection), `${a[i]}` (subscripts are arithmetic), `${x@P}` (prompt
    expansion runs `$(...)`) and `${x:off:len}` / `${a[0]:off}` (offsets and lengths are
    arithmetic) can each run a command substitution stored in a variable's value, e.g.
    `x='a[$(id)]'; echo ${!x}`; so can any of these nested in the word of `${x:-word}`.
    `${PATH:=dir}` assigns a variable that changes what runs."""
    if body.startswith(("!", "#!")) or "@P" in body:
        return True
    start = body.find("[")
    while start >= 0:
        end = body.find("]", start)
        subscript = body[start + 1 : end] if end > 0 else "x"
        if not (subscript.isdigit() or subscript in ("@", "*")):
            return True
        start = body.find("[", end)
    name, rest = _split_parameter(body)
    if rest.startswith(":") and rest[1:2] not in ("-", "=", "?", "+"):
        # an offset and length: arithmetic, safe only when it is a constant
        return not set(rest[1:]) <= _CONSTANT_ARITHMETIC
    if rest.startswith(("=", ":=")) and is_risky(name, exported=False):
        return True
    return _nested_evaluates(rest)


_CONSTANT_ARITHMETIC = frozenset("0123456789 :-+")


def _split_parameter(body: str) -> tuple[str, str]:
    """(`name`, what follows its subscript) for the body of `${...}`: `#` (length) aside, the
    name is a special parameter, a positional number or an identifier."""
    i = 1 if body[:1] == "#" and len(body) > 1 else 0
    if body[i : i + 1].isdigit():
        end = i
        while end < len(body) and body[end].isdigit():
            end += 1
    elif body[i : i + 1] and body[i] in _SPECIAL_PARAMS:
        end = i + 1
    else:
        end = i
        while end < len(body) and (body[end].isalnum() or body[end] == "_"):
            end += 1
    name = body[i:end]
    if body[end : end + 1] == "[":
        close = body.find("]", end)
        end = len(body) if close < 0 else close + 1
    return name, body[end:]


def _nested_evaluates(word: str) -> bool:
    """Any `${...}` inside the word of an operator (`${x:-${y:z}}`) that evaluates."""
    start = word.find("${")
    while start >= 0:
        end = _closing_brace(word, start + 1)
        if end < 0:
            return True
        if _body_evaluates(word[start + 2 : end]):
            return True
        start = word.find("${", end)
    return False
