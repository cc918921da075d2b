"""awk: `system()`, pipes (`print | "cmd"`, `"cmd" | getline`, `|&`), gawk's indirect calls
(`@f(...)`, which reach `system` by name) and extensions run commands; `print > "file"` writes.
The program is tokenised (strings, regex literals, comments) so that `/a|b/` or `$1 > 5` are
not mistaken for a pipe or a redirection.

Where a `/` starts a regex and where it divides is where awks disagree: gawk's parser decides,
mawk looks at the previous token, and after `getline`, `exit`, `length`, `$` or the `)` of an
`if (...)` they answer differently. So the program is read every way an awk may read it: at
each such `/` both readings are followed, and with three rules for a `/` inside `[...]` of a
regex literal (gawk's, POSIX's, none). Whatever any reading finds counts; text a reading
cannot close ends that reading, and a program no reading completes (or with too many such
places) is dynamic.
"""

from __future__ import annotations

from corral.toolguard.classify.options import parse
from corral.toolguard.classify.readers import opaque
from corral.toolguard.classify.result import DYNAMIC
from corral.toolguard.classify.simple_command import names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.toolguard.classify.simple_command import Command

_RUNS = frozenset({"system", "@load", "@include", "@namespace"})
# Options that read the program from a file, load code, or write profiles and dumps.
_UNSAFE_LONG = (
    "file", "include", "load", "exec", "pretty-print", "profile", "dump-variables", "debug",
    "source-file",
)  # fmt: skip
# After these names an operand is expected: `/` starts a regex in every awk.
_REGEX_AFTER = frozenset({"print", "printf", "return", "in", "case", "do", "else"})
# After these keywords and built-in functions awks disagree, or the program is an error in
# one reading and not the other (`getline /1` divides, `exit /x/` matches, mawk reads a regex
# after `length` where gawk divides): both readings are followed.
_EITHER_AFTER = names(
    """getline exit length next nextfile delete BEGIN END BEGINFILE ENDFILE function func if
    while for break continue default switch substr index split sub gsub gensub match sprintf
    sin cos atan2 exp log sqrt int rand srand tolower toupper close fflush system systime
    strftime mktime and or xor compl lshift rshift asort asorti patsplit isarray typeof
    strtonum"""
)
_CONTROL = frozenset({"if", "while", "for"})  # `if (x) /re/`: a statement, so a regex in gawk
_MODELS = ("gawk", "posix", "plain")  # how a `/` inside `[...]` of a regex literal is read
MAX_READINGS = 32

Token = tuple[str, str]


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
    """Read the program every way an awk may (see the module's docstring) and keep what any
    reading finds: a program whose readings disagree cannot hide a pipe from all of them."""
    out = AwkProgram()
    for name in _RUNS:  # anywhere, even in a string: a reading we got wrong cannot hide it
        if name in text:
            out.runs.append(name)
    if "/inet" in text:
        out.runs.append("/inet network files")
    for model in _MODELS:
        try:
            found = readings(text, model)
        except ValueError as e:
            out.problem = str(e)
            return out
        for tokens in found:
            _scan(tokens, out)
    out.runs = list(dict.fromkeys(out.runs))
    out.writes = list(dict.fromkeys(out.writes))
    return out


def _scan(tokens: list[Token], out: AwkProgram) -> None:
    i = 0
    while i < len(tokens):
        kind, value = tokens[i]
        i += 1
        if kind == "op" and value in ("|", "|&"):
            out.runs.append(value)
        elif kind == "name" and value.startswith("@"):
            out.runs.append(f"{value}: a gawk directive or indirect call")
        elif kind == "name" and value in ("print", "printf"):
            i = _redirection(tokens, i, out)


def _redirection(tokens: list[Token], i: int, out: AwkProgram) -> int:
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


class _Reading:
    """One way of reading the program, up to `i`."""

    __slots__ = ("control", "force", "forked", "i", "parens", "tokens")

    def __init__(self) -> None:
        self.i = 0
        self.tokens: list[Token] = []
        self.parens: list[bool] = []  # open `(`: True for the condition of if/while/for
        self.control = False  # the last token is the `)` closing such a condition
        self.force = ""  # "div" or "re": how to read the `/` this reading stopped at
        self.forked = False

    def fork(self, force: str) -> _Reading:
        other = _Reading()
        other.i, other.tokens, other.parens = self.i, list(self.tokens), list(self.parens)
        other.control, other.force, other.forked = self.control, force, True
        return other


def readings(text: str, model: str = "gawk") -> list[list[Token]]:
    """Every tokenisation of `text` an awk may make: lists of (kind, value) with kinds name,
    number, string, regex, op, newline, end. Raises ValueError when there is none, or when
    there are too many to follow."""
    done: list[list[Token]] = []
    stack = [_Reading()]
    forks = 0
    while stack:
        reading = stack.pop()
        try:
            both = _advance(text, model, reading)
        except ValueError:
            if not reading.forked:
                raise
            continue  # an awk reading it this way refuses the program: nothing runs
        if both is None:
            done.append(reading.tokens)
            continue
        forks += 1
        if forks > MAX_READINGS:
            raise ValueError("too many places where `/` may divide or start a regex")
        stack.extend(both)
    if not done:
        raise ValueError("no reading of the program is complete")
    return done


def _advance(text: str, model: str, r: _Reading) -> list[_Reading] | None:
    """Tokenise from `r.i` to the end (None) or to a `/` awks read two ways (the two
    readings, to be followed separately)."""
    tokens = r.tokens
    n = len(text)
    while r.i < n:
        i = r.i
        c = text[i]
        if c in " \t\r" or (c == "\\" and text[i + 1 : i + 2] == "\n"):
            r.i += 1 if c != "\\" else 2
            continue
        control = False
        if c == "\n":
            tokens.append(("newline", c))
            r.i += 1
        elif c == "#":
            end = text.find("\n", i)
            r.i = n if end < 0 else end
            continue
        elif c == '"':
            r.i, value = _string(text, i)
            tokens.append(("string", value))
        elif c == "/":
            how = r.force or _slash(tokens, r.control)
            r.force = ""
            if how == "both":
                return [r.fork("div"), r.fork("re")]
            if how == "re":
                r.i, value = _regex(text, i, model)
                tokens.append(("regex", value))
            else:
                tokens.append(("op", "/"))
                r.i += 1
        elif c.isalpha() or c in "_@":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(("name", text[i:j]))
            r.i = j
        elif c.isdigit() or (c == "." and text[i + 1 : i + 2].isdigit()):
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "."):
                j += 1
            tokens.append(("number", text[i:j]))
            r.i = j
        else:
            two = text[i : i + 2]
            if two in ("|&", "||", ">>", "&&", "==", "!=", "<=", ">=", "++", "--", "**"):
                tokens.append(("op", two))
                r.i += 2
            else:
                if c == "(":
                    r.parens.append(bool(tokens) and tokens[-1][1] in _CONTROL)
                elif c == ")":
                    control = r.parens.pop() if r.parens else False
                tokens.append(("op", c))
                r.i += 1
        r.control = control
    tokens.append(("end", ""))
    return None


def _slash(tokens: list[Token], control: bool) -> str:
    """How awks read a `/` after these tokens: "div", "re", or "both"."""
    if not tokens:
        return "re"
    kind, value = tokens[-1]
    if kind in ("number", "string", "regex"):
        return "div"
    if kind == "name":
        if value in _REGEX_AFTER:
            return "re"
        return "both" if value in _EITHER_AFTER or value.startswith("@") else "div"
    if kind == "op":
        if value == ")":
            return "both" if control else "div"
        if value in ("]", "++", "--"):
            return "div"
        if value == "$":
            return "both"
    return "re"


def _string(text: str, i: int) -> tuple[int, str]:
    """Read a string literal starting at `text[i]`; returns (next index, value)."""
    j = i + 1
    out: list[str] = []
    while j < len(text):
        c = text[j]
        if c == "\\" and j + 1 < len(text):
            out.append(_unescape(text[j + 1]))
            j += 2
            continue
        if c == "\n":
            break
        if c == '"':
            return j + 1, "".join(out)
        out.append(c)
        j += 1
    raise ValueError("an unterminated string")


def _regex(text: str, i: int, model: str) -> tuple[int, str]:
    """Read a regex literal starting at `text[i]`, with `model`'s rule for a `/` inside a
    bracket expression; returns (next index, value)."""
    j = i + 1
    out: list[str] = []  # characters, as gawk's token buffer holds them
    depth = 0  # gawk's in_brack
    start = -1  # gawk's b_index: where the `[` that opened the bracket is in `out`
    posix_end = -1  # posix: the index in `text` of the `]` closing the open bracket
    while j < len(text):
        c = text[j]
        if c == "\\" and j + 1 < len(text) and posix_end < 0:
            out.extend(text[j : j + 2])
            j += 2
            continue
        if c == "\n":
            break
        if model == "posix":  # a backslash inside a bracket is an ordinary character
            if posix_end < 0 and c == "[":
                posix_end = _posix_bracket_end(text, j)
            elif j == posix_end:
                posix_end = -1
        elif model == "gawk":  # awkgram.y yylex, as written
            if c == "[":
                if text[j + 1 : j + 2] == ":" or depth == 0:
                    depth += 1
                if depth == 1:
                    start = len(out)
            elif c == "]":
                first = start >= 0 and (
                    len(out) == start + 1 or (len(out) == start + 2 and out[start + 1] == "^")
                )
                if not first:
                    depth -= 1
                    if depth == 0:
                        start = -1
        inside = posix_end >= 0 or depth > 0
        if c == "/" and not inside:
            return j + 1, "".join(out)
        out.append(c)
        j += 1
    raise ValueError("an unterminated regex")


def _posix_bracket_end(text: str, j: int) -> int:
    """The index of the `]` closing the bracket expression opened at `text[j]`, or -1."""
    k = j + 1
    if text[k : k + 1] == "^":
        k += 1
    if text[k : k + 1] == "]":
        k += 1
    line_end = text.find("\n", k)
    line_end = len(text) if line_end < 0 else line_end
    while k < line_end:
        if text[k] == "[" and text[k + 1 : k + 2] in (":", ".", "="):
            close = text.find(text[k + 1] + "]", k + 2, line_end)
            if close < 0:
                return -1
            k = close + 2
            continue
        if text[k] == "]":
            return k
        k += 1
    return -1


def _unescape(c: str) -> str:
    return {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "/": "/"}.get(c, "\\" + c)
