"""A getopt-like reading of a command's arguments, enough to find risky options.

GNU tools accept unambiguous abbreviations of long options (`sort --out=f` is `--output`),
so a given long name matches every option it is a prefix of; an ambiguous abbreviation is an
error at run time, and counting it as the risky option only errs on the safe side.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from corral.toolguard.classify.simple_command import Word


class Opt:
    """One option: `name` without dashes, `long` for `--name`, its `value` if it takes one."""

    __slots__ = ("long", "name", "value", "value_word", "word")

    def __init__(
        self, name: str, long: bool, value: str | None, word: Word, value_word: Word | None = None
    ) -> None:
        self.name, self.long, self.value, self.word = name, long, value, word
        self.value_word = value_word  # the next word, when the value was taken from it

    def is_(self, long: str = "", short: str = "") -> bool:
        if self.long:
            return bool(long) and bool(self.name) and long.startswith(self.name)
        return bool(short) and self.name == short

    def __repr__(self) -> str:
        return f"Opt({'--' if self.long else '-'}{self.name}={self.value!r})"


class Parsed:
    __slots__ = ("opaque", "opts", "positionals", "rest")

    def __init__(self) -> None:
        self.opts: list[Opt] = []
        self.positionals: list[Word] = []
        self.opaque: list[Word] = []  # words that may expand into options at run time
        self.rest: list[Word] = []  # with stop_at_positional: the first positional onwards

    def has(self, long: str = "", short: str = "") -> bool:
        return any(o.is_(long, short) for o in self.opts)

    def values(self, long: str = "", short: str = "") -> list[str]:
        return [o.value for o in self.opts if o.value is not None and o.is_(long, short)]


def parse(
    args: Sequence[Word],
    short_values: str = "",
    long_values: Sequence[str] = (),
    optional_short: str = "",
    stop_at_positional: bool = False,
) -> Parsed:
    """Read `args` like getopt_long with permutation (GNU) or, with `stop_at_positional`,
    like POSIX getopt (wrappers: the first positional is the command they run).

    `short_values` lists short options that take a value (attached or the next word);
    `optional_short` those whose value can only be attached (`sed -i.bak`, `xargs -i{}`)."""
    out = Parsed()
    i, n = 0, len(args)
    while i < n:
        word = args[i]
        text = word.text
        i += 1
        if not word.static:
            if word.may_be_option:
                out.opaque.append(word)
            if stop_at_positional:
                out.rest = list(args[i - 1 :])
                return out
            out.positionals.append(word)
            continue
        if text == "--":
            tail = list(args[i:])
            if stop_at_positional:
                out.rest = tail
            else:
                out.positionals.extend(tail)
            return out
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if eq:
                out.opts.append(Opt(name, True, value, word))
            elif any(v.startswith(name) for v in long_values) and name and i < n:
                value_word = args[i]
                i += 1
                _note_value(out, value_word)
                out.opts.append(Opt(name, True, value_word.text, word, value_word))
            else:
                out.opts.append(Opt(name, True, None, word))
            continue
        if text.startswith("-") and text != "-":
            i = _bundle(text, word, args, i, short_values, optional_short, out)
            continue
        if stop_at_positional:
            out.rest = list(args[i - 1 :])
            return out
        out.positionals.append(word)
    return out


def _bundle(
    text: str,
    word: Word,
    args: Sequence[Word],
    i: int,
    short_values: str,
    optional_short: str,
    out: Parsed,
) -> int:
    """Read `-abc`; returns the index after any value word it consumed."""
    j = 1
    while j < len(text):
        letter = text[j]
        j += 1
        if letter in optional_short:
            out.opts.append(Opt(letter, False, text[j:], word))
            return i
        if letter in short_values:
            if j < len(text):
                out.opts.append(Opt(letter, False, text[j:], word))
            elif i < len(args):
                _note_value(out, args[i])
                out.opts.append(Opt(letter, False, args[i].text, word, args[i]))
                i += 1
            else:
                out.opts.append(Opt(letter, False, "", word))
            return i
        out.opts.append(Opt(letter, False, None, word))
    return i


def _note_value(out: Parsed, value: Word) -> None:
    # A value that splits can smuggle extra words (`sort -k $X`, X='1 --compress-program=sh').
    if value.spelling.splits:
        out.opaque.append(value)
