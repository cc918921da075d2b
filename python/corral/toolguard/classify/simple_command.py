"""One simple command as the rules see it: its words, its environment prefix, its stdin."""

from __future__ import annotations

from corral.toolguard.classify.result import DYNAMIC
from corral.toolguard.classify.spelling import Spelling, scan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from corral.toolguard.classify.result import Findings


def names(text: str) -> frozenset[str]:
    """A table of names written as one whitespace-separated string."""
    return frozenset(text.split())


class Word:
    """A word as bash will see it: `text` with quotes removed (bashlex), `raw` as written."""

    __slots__ = ("raw", "spelling", "text")

    def __init__(self, text: str, raw: str | None = None) -> None:
        self.text = text
        self.raw = text if raw is None else raw
        self.spelling: Spelling = scan(self.raw)

    @property
    def static(self) -> bool:
        return self.spelling.static

    @property
    def may_be_option(self) -> bool:
        return self.spelling.may_be_option

    def __repr__(self) -> str:
        return f"Word({self.raw!r})"


class Command:
    """`words[0]` is the command name; `env` holds the NAME=value prefix assignments."""

    __slots__ = ("dispatch", "env", "found", "name", "stdin", "words")

    def __init__(
        self,
        words: Sequence[Word],
        found: Findings,
        dispatch: Callable[[Command], None],
        env: dict[str, str] | None = None,
        stdin: str | None = None,
    ) -> None:
        self.words = list(words)
        self.found = found
        self.dispatch = dispatch
        self.env = {} if env is None else env
        self.stdin = stdin  # the static text of a here-document or here-string, if any
        self.name = ""  # set by the dispatcher once the name is known to be static

    @property
    def args(self) -> list[Word]:
        return self.words[1:]

    def inner(self, words: Sequence[Word], env: dict[str, str] | None = None) -> None:
        """Classify a command this one runs (`timeout 5 CMD`, `find -exec CMD ;`)."""
        if words:
            merged = self.env if env is None else {**self.env, **env}
            self.dispatch(Command(words, self.found, self.dispatch, merged, self.stdin))

    def script(self, word: Word, what: str) -> None:
        """Classify shell code in `word` (an inline script) when it is static."""
        if word.static:
            self.found.script(word.text)
        else:
            self.found.flag(DYNAMIC, f"{what}: the script is built at run time")
