"""awk: `system()`, pipes (`print | "cmd"`, `"cmd" | getline`, `|&`) and extensions run
commands; `print > "file"` writes. The program is tokenised (strings, regex literals,
comments) so that `/a|b/` or `$1 > 5` are not mistaken for a pipe or a redirection.

Where a `/` starts a regex and where it divides follows awk's own rule (after an operand it
divides); any text the tokeniser cannot close makes the command dynamic.
"""

from __future__ import annotations

from corral.classify.options import parse
from corral.classify.readers import opaque
from corral.classify.result import DYNAMIC

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.classify.command import Command

_RUNS = frozenset({"system", "@load", "@include", "@namespace"})
_OPERAND_END = frozenset(")]$")  # after these (and names, numbers, strings) `/` divides
# Options that read the program from a file, load code, or write profiles and dumps.
_UNSAFE_LONG = (
    "file", "include", "load", "exec", "pretty-print", "profile", "dump-variables", "debug",
    "source-file",
)  # fmt: skip


class AwkProgram:
    __slots__ = ("problem", "runs", "writes")

    def __init__(self) -> None:
        self.runs: list[str] = []
        self.writes: list[str] = []
        self.problem = ""


def awk(cmd: Command) -> None:
    parsed = parse(
        cmd.args,
        short_values="FvfeiElopdDW",
        long_values=("field-separator", "assign", "source", *_UNSAFE_LONG),
    )
    if opaque(cmd, parsed):
        return
    for opt in parsed.opts:
        if (not opt.long and opt.name in "fiElopdDW") or (
            opt.long and any(opt.is_(name) for name in _UNSAFE_LONG)
        ):
            shown = f"--{opt.name}" if opt.long else f"-{opt.name}"
            cmd.found.flag(DYNAMIC, f"{cmd.name} {shown} loads code or writes files")
            return
    programs = parsed.values("source", "e")
    if not programs:
        if not parsed.positionals:
            return
        first = parsed.positionals[0]
        if not first.static:
            cmd.found.flag(DYNAMIC, f"{cmd.name}: the program {first.raw} is built at run time")
            return
        programs = [first.text]
    program = analyse("\n".join(programs))
    if program.problem:
        cmd.found.flag(DYNAMIC, f"{cmd.name} program cannot be analysed: {program.problem}")
    for what in program.runs:
        cmd.found.flag(DYNAMIC, f"{cmd.name} program runs commands ({what})")
    for path in program.writes:
        cmd.found.write(path, f"{cmd.name} program writes {path}")


def analyse(text: str) -> AwkProgram:
    """Read the program twice, with and without treating `/` inside `[...]` of a regex
    literal as part of it (gawk does, other awks may not), and keep what either reading finds:
    a program where the two disagree cannot hide a pipe from both."""
    out = AwkProgram()
    for name in _RUNS:  # anywhere, even in a string: a reading we got wrong cannot hide it
        if name in text:
            out.runs.append(name)
    if "/inet" in text:
        out.runs.append("/inet network files")
    for brackets in (True, False):
        try:
            tokens = tokenize(text, brackets)
        except ValueError as e:
            out.problem = str(e)
            return out
        _scan(tokens, out)
    out.runs = list(dict.fromkeys(out.runs))
    out.writes = list(dict.fromkeys(out.writes))
    return out


def _scan(tokens: list[tuple[str, str]], out: AwkProgram) -> None:
    i = 0
    while i < len(tokens):
        kind, value = tokens[i]
        i += 1
        if kind == "op" and value in ("|", "|&"):
            out.runs.append(value)
        elif kind == "name" and value in ("print", "printf"):
            i = _redirection(tokens, i, out)


def _redirection(tokens: list[tuple[str, str]], i: int, out: AwkProgram) -> int:
    """Find an unparenthesised `>`/`>>` in the print statement starting at `tokens[i]`;
    returns where the statement ends (pipes in it are left for the caller to see)."""
    depth = 0
    while i < len(tokens):
        kind, value = tokens[i]
        if kind == "op" and value in ("(", "["):
            depth += 1
        elif kind == "op" and value in (")", "]"):
            depth -= 1
        elif kind == "op" and value in ("|", "|&"):
            return i
        elif kind in ("newline", "end") or (kind == "op" and value in (";", "}", "{")):
            if depth <= 0:
                return i
        elif kind == "op" and value in (">", ">>") and depth == 0:
            target = tokens[i + 1 : i + 2]
            end = tokens[i + 2 : i + 3]
            closes = not end or end[0][0] in ("newline", "end") or end[0][1] in (";", "}")
            if target and target[0][0] == "string" and closes:
                out.writes.append(target[0][1])
            else:
                out.runs.append("output redirected to a computed file name")
            return i + 1
        i += 1
    return i


def tokenize(text: str, brackets: bool = True) -> list[tuple[str, str]]:
    """(kind, value) pairs: name, number, string, regex, op, newline; raises ValueError."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r" or (c == "\\" and text[i + 1 : i + 2] == "\n"):
            i += 1 if c != "\\" else 2
        elif c == "\n":
            tokens.append(("newline", c))
            i += 1
        elif c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c == '"':
            i, value = _quoted(text, i, '"')
            tokens.append(("string", value))
        elif c == "/" and not _after_operand(tokens):
            i, value = _quoted(text, i, "/", brackets)
            tokens.append(("regex", value))
        elif c.isalpha() or c in "_@":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(("name", text[i:j]))
            i = j
        elif c.isdigit() or (c == "." and text[i + 1 : i + 2].isdigit()):
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "."):
                j += 1
            tokens.append(("number", text[i:j]))
            i = j
        else:
            two = text[i : i + 2]
            if two in ("|&", "||", ">>", "&&", "==", "!=", "<=", ">=", "++", "--", "**"):
                tokens.append(("op", two))
                i += 2
            else:
                tokens.append(("op", c))
                i += 1
    tokens.append(("end", ""))
    return tokens


def _after_operand(tokens: list[tuple[str, str]]) -> bool:
    if not tokens:
        return False
    kind, value = tokens[-1]
    if kind in ("number", "string", "regex"):
        return True
    if kind == "name":
        # After a keyword an operand is expected (`print /x/`), after a variable `/` divides.
        return value not in ("print", "printf", "return", "in", "getline", "case", "do", "else")
    return kind == "op" and (value in _OPERAND_END or value in ("++", "--"))


def _quoted(text: str, i: int, close: str, brackets: bool = False) -> tuple[int, str]:
    """Read a string or regex literal starting at `text[i]`; returns (next index, value)."""
    j = i + 1
    out: list[str] = []
    in_bracket = False
    while j < len(text):
        c = text[j]
        if c == "\\" and j + 1 < len(text):
            out.append(text[j : j + 2] if close == "/" else _unescape(text[j + 1]))
            j += 2
            continue
        if c == "\n":
            break
        if brackets and close == "/" and c == "[":
            in_bracket = True
        elif brackets and close == "/" and c == "]":
            in_bracket = False
        elif c == close and not in_bracket:
            return j + 1, "".join(out)
        out.append(c)
        j += 1
    raise ValueError("an unterminated string or regex")


def _unescape(c: str) -> str:
    return {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "/": "/"}.get(c, "\\" + c)
