"""sed: `-i` writes its files; the script's `w`/`W` commands and `s///w` write, `e` and
`s///e` run commands. The script is parsed command by command (GNU syntax); anything this
parser does not recognise makes the command dynamic rather than guessing.
"""

from __future__ import annotations

from corral.toolguard.classify.options import parse
from corral.toolguard.classify.readers import opaque
from corral.toolguard.classify.result import DYNAMIC

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.toolguard.classify.simple_command import Command

_NO_ARGUMENT = set("=dDgGhHnNpPxzF")
_TO_END_OF_LINE = set("aic:bTtvrR#")  # text, labels, file names; nothing runs
_NUMBER = set("lLqQ")  # an optional number


class SedScript:
    """What a script does: files it writes, and whether it runs commands or is unreadable."""

    __slots__ = ("problem", "runs", "writes")

    def __init__(self) -> None:
        self.writes: list[str] = []
        self.runs = False
        self.problem = ""


def sed(cmd: Command) -> None:
    parsed = parse(
        cmd.args,
        short_values="efl",
        long_values=("expression", "file", "line-length"),
        optional_short="i",
    )
    if opaque(cmd, parsed):
        return
    scripts = parsed.values("expression", "e")
    files = parsed.positionals
    if parsed.has("file", "f"):
        cmd.found.flag(DYNAMIC, "sed -f: a script read from a file cannot be analysed")
        return
    if not scripts:
        if not files:
            return
        if not files[0].static:
            cmd.found.flag(DYNAMIC, f"sed: the script {files[0].raw} is built at run time")
            return
        scripts, files = [files[0].text], files[1:]
    if parsed.has("in-place", "i"):
        for word in files:
            cmd.found.write(word.text, f"sed -i writes {word.text}")
    if parsed.has("sandbox"):
        return  # GNU sed then refuses e, w and r itself
    script = analyse("\n".join(scripts))
    if script.problem:
        cmd.found.flag(DYNAMIC, f"sed script cannot be analysed: {script.problem}")
    if script.runs:
        cmd.found.flag(DYNAMIC, "sed script runs commands (e)")
    for path in script.writes:
        cmd.found.write(path, f"sed script writes {path}")


def analyse(text: str) -> SedScript:
    out = SedScript()
    try:
        _Parser(text, out).commands()
    except _Unreadable as e:
        out.problem = str(e) or "unexpected text"
    return out


class _Unreadable(Exception):
    pass


class _Parser:
    __slots__ = ("i", "out", "text")

    def __init__(self, text: str, out: SedScript) -> None:
        self.text, self.out, self.i = text, out, 0

    def peek(self) -> str:
        return self.text[self.i : self.i + 1]

    def take(self) -> str:
        c = self.peek()
        self.i += 1
        return c

    def skip_blanks(self, newlines: bool = False) -> None:
        while self.peek() and (self.peek() in " \t" or (newlines and self.peek() in "\n;")):
            self.i += 1

    def rest_of_line(self) -> str:
        end = self.text.find("\n", self.i)
        end = len(self.text) if end < 0 else end
        line = self.text[self.i : end]
        self.i = end
        return line

    def commands(self) -> None:
        while True:
            self.skip_blanks(newlines=True)
            if not self.peek():
                return
            self.address()
            self.skip_blanks()
            if self.peek() == "!":
                self.i += 1
                self.skip_blanks()
            self.command(self.take())

    def address(self) -> None:
        if self.one_address():
            self.skip_blanks()
            if self.peek() == ",":
                self.i += 1
                self.skip_blanks()
                if self.peek() in ("+", "~"):
                    self.i += 1
                if not self.one_address():
                    raise _Unreadable("a second address is missing")

    def one_address(self) -> bool:
        c = self.peek()
        if c.isdigit():
            while self.peek().isdigit() or self.peek() == "~":
                self.i += 1
            return True
        if c == "$":
            self.i += 1
            return True
        if c in ("/", "\\"):
            self.i += 1
            self.delimited("/" if c == "/" else self.take(), regex=True)
            while self.peek() in ("I", "M"):
                self.i += 1
            return True
        return False

    def delimited(self, delimiter: str, regex: bool = False) -> None:
        """Skip to an unescaped `delimiter`; in a regex, not one inside a bracket expression
        (GNU sed reads `s/[/]/x/` as one regex `[/]`)."""
        if not delimiter or delimiter in "\n\\":
            raise _Unreadable("a bad delimiter")
        while True:
            c = self.take()
            if not c:
                raise _Unreadable("an unterminated expression")
            if c == "\\":
                self.i += 1
            elif c == delimiter:
                return
            elif c == "[" and regex:
                self.bracket()

    def bracket(self) -> None:
        if self.peek() == "^":
            self.i += 1
        if self.peek() == "]":
            self.i += 1
        while True:
            c = self.take()
            if not c:
                raise _Unreadable("an unterminated bracket expression")
            if c == "]":
                return
            if c == "[" and self.peek() in (":", ".", "="):
                end = self.text.find(self.peek() + "]", self.i + 1)
                if end < 0:
                    raise _Unreadable("an unterminated character class")
                self.i = end + 2

    def command(self, c: str) -> None:
        if c in ("{", "}") or c in _NO_ARGUMENT:
            return
        if c in _TO_END_OF_LINE:
            if not self.text_argument(c):
                return
        elif c in _NUMBER:
            self.skip_blanks()
            while self.peek().isdigit():
                self.i += 1
        elif c in ("w", "W"):
            self.write_file()
        elif c == "e":
            self.out.runs = True
            self.rest_of_line()
        elif c == "s":
            self.substitute()
        elif c == "y":
            delimiter = self.take()
            self.delimited(delimiter)
            self.delimited(delimiter)
        else:
            raise _Unreadable(f"unknown command {c!r}")
        self.end_of_command()

    def text_argument(self, c: str) -> bool:
        """Skip a command's text; False when the command ends without `end_of_command`."""
        if c in "aic":
            # GNU read_text: a backslash escapes the next character, a newline included, and
            # the text ends at the first newline not escaped: `a x\\` + newline + `w f` is
            # the text `x\` and then a `w` command.
            self.skip_blanks()
            while self.peek() and self.peek() != "\n":
                self.i += 2 if self.peek() == "\\" else 1
            return True
        if c in ":bTtv":
            # GNU read_label: the label ends at a blank, `;` or a newline, and the next
            # command may follow directly (`b x w f` jumps to x, then `w f` is a command).
            # Older seds read the rest of the line as the label: then nothing runs from it.
            self.skip_blanks()
            while self.peek() and self.peek() not in " \t\n;":
                self.i += 1
            return False
        self.rest_of_line()
        return True

    def write_file(self) -> None:
        self.skip_blanks()
        path = self.rest_of_line()
        if not path:
            raise _Unreadable("w without a file name")
        self.out.writes.append(path)

    def substitute(self) -> None:
        delimiter = self.take()
        self.delimited(delimiter, regex=True)
        self.delimited(delimiter)
        while True:
            c = self.peek()
            if c and (c in "gpiImM" or c.isdigit()):
                self.i += 1
            elif c == "e":
                self.i += 1
                self.out.runs = True
            elif c == "w":
                self.i += 1
                self.write_file()
                return
            else:
                return

    def end_of_command(self) -> None:
        self.skip_blanks()
        c = self.peek()
        if c and c not in ";\n}#":
            raise _Unreadable(f"unexpected {c!r} after a command")
