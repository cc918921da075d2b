"""Walk bashlex's tree: lists, pipelines, compounds, functions, redirections, substitutions.

Every construct is visited and the riskiest part decides; a node kind this walker does not know
is a finding of its own (dynamic), never skipped.
"""

from __future__ import annotations

import re

from corral.toolguard.classify import rules_by_name
from corral.toolguard.classify.envvars import assignments_env, is_risky
from corral.toolguard.classify.parse import parse
from corral.toolguard.classify.result import DYNAMIC, MAX_DEPTH, NETWORK, PRIVILEGED
from corral.toolguard.classify.simple_command import Command, Word
from corral.toolguard.classify.spelling import scan
from corral.toolguard.classify.wrappers import PRIVILEGED_NAMES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from corral.toolguard.classify.result import Findings

_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_STRUCTURE = frozenset({"reservedword", "operator", "pipe"})


# Bash splits words at space and tab only, and lines at "\n" only. Python's str.split(),
# strip() and splitlines() also take these for blanks or line ends: "\f# ; touch X" is a comment
# to Python and a command named "\f#" followed by `touch X` to bash. The classifier uses bash's
# notion everywhere, and text holding any of these is never read-only.
BASH_BLANKS = " \t"
NOT_BASH_BLANKS = frozenset(
    c for c in map(chr, range(0x3001)) if (c.isspace() or c == "\u200b") and c not in " \t\n"
) | frozenset("\u200b\u200c\u200d\u2060\ufeff")


def _only_comments(text: str) -> bool:
    return all(
        not line.strip(BASH_BLANKS) or line.lstrip(BASH_BLANKS).startswith("#")
        for line in text.split("\n")
    )


def walk_text(text: str, found: Findings) -> None:
    if found.depth > MAX_DEPTH:
        found.flag(DYNAMIC, "shell code nested too deeply to analyse")
        return
    odd = next((c for c in text if c in NOT_BASH_BLANKS), None)
    if odd is not None:
        found.flag(
            DYNAMIC,
            f"contains U+{ord(odd):04X}, a blank or line end to some tools and part of a word "
            "to bash",
        )
    if _only_comments(text):
        return  # nothing runs
    try:
        trees = parse(text)
    except Exception as e:  # bashlex raises ParsingError, NotImplementedError, IndexError...
        found.flag(DYNAMIC, f"cannot parse: {_short(e)}")
        # (fails closed for the ask with direct writes too: `true; time rm -rf build`, r91c
        # WIPEUNPARSED)
        found.destroy("what it does cannot be read, so it may delete anything")
        _privileged_words(text, found)
        return
    walker = _Walker(text, found)
    for tree in trees:
        walker.node(tree)


_SEPARATORS = str.maketrans({c: " " for c in ";&|(){}`'\"\n\t<>!"})


def _privileged_words(text: str, found: Findings) -> None:
    """Text bashlex cannot parse may still be valid bash (`[[ ... ]] && sudo x`): any word
    that names a privilege tool makes it privileged, even where it might only be an argument."""
    for token in text.translate(_SEPARATORS).split():
        name = token.rpartition("/")[2].lstrip("\\")
        if name in PRIVILEGED_NAMES:
            found.seen(name)
            found.flag(PRIVILEGED, f"mentions {name} in text that cannot be parsed")
            return


_FD_VARIABLE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_NETWORK_FILES = ("/dev/tcp/", "/dev/udp/")


def _may_be_network(spelled: str) -> bool:
    """Can a redirection target built at run time turn out to be bash's /dev/tcp/HOST/PORT?
    Only if the text before its first expansion could start that path (`~` is a home)."""
    if spelled.startswith("~"):
        return False
    end = next((i for i, c in enumerate(spelled) if c in "$`*?[{~\\"), len(spelled))
    prefix = spelled[:end]
    return any(p.startswith(prefix) or prefix.startswith(p) for p in _NETWORK_FILES)


def _short(e: Exception) -> str:
    message = str(e).splitlines()[0] if str(e) else type(e).__name__
    return message if len(message) <= 120 else message[:117] + "..."


class _Walker:
    __slots__ = ("found", "text")

    def __init__(self, text: str, found: Findings) -> None:
        self.text = text
        self.found = found

    def raw(self, node: Any) -> str:
        start, end = node.pos
        return self.text[start:end]

    def node(self, node: Any) -> None:
        kind = node.kind
        if kind in _STRUCTURE:
            return
        if kind == "command":
            self.command(node)
        elif kind in ("list", "pipeline", "if", "while", "until", "function"):
            for part in node.parts:
                self.node(part)
        elif kind == "for":
            self.for_loop(node)
        elif kind == "compound":
            if self.raw(node).startswith("(("):
                # bashlex reads ((i=x)) as subshells; bash evaluates it, and x='a[$(id)]' runs id
                self.found.flag(DYNAMIC, "arithmetic command evaluates values as code")
            for part in node.list:
                self.node(part)
            for redirect in getattr(node, "redirects", ()):
                self.redirect(redirect)
        elif kind in ("word", "assignment"):
            self.substitutions(node)
        elif kind == "redirect":
            self.redirect(node)
        else:
            self.found.flag(DYNAMIC, f"unsupported shell construct: {kind}")

    def for_loop(self, node: Any) -> None:
        after_in = False
        for i, part in enumerate(node.parts):
            if part.kind == "word" and i == 1 and is_risky(part.word, exported=False):
                self.found.flag(DYNAMIC, f"loop variable {part.word} changes what runs")
            if part.kind == "reservedword" and part.word == "in":
                after_in = True
            elif part.kind == "word" and after_in:
                self.word(part)
            else:
                self.node(part)

    def substitutions(self, node: Any) -> bool:
        """Command and process substitutions anywhere under `node`: dynamic, and walked."""
        seen = False
        for part in getattr(node, "parts", ()):
            if part.kind in ("commandsubstitution", "processsubstitution"):
                what = "command" if part.kind == "commandsubstitution" else "process"
                self.found.flag(
                    DYNAMIC, f"{what} substitution: {self.raw(part)} cannot be analysed"
                )
                self.node(part.command)
                seen = True
            else:
                seen = self.substitutions(part) or seen
        return seen

    def word(self, node: Any) -> Word:
        walked = self.substitutions(node)
        word = Word(node.word, self.raw(node))
        spelling = word.spelling
        if spelling.substitutes and not walked:
            self.found.flag(DYNAMIC, f"substitution in {word.raw} cannot be analysed")
        if spelling.evaluates:
            self.found.flag(DYNAMIC, f"{word.raw} evaluates a value as code")
        return word

    def command(self, node: Any) -> None:
        words: list[Word] = []
        assignments: list[str] = []
        stdin: str | None = None
        if any(p.kind == "redirect" for p in node.parts):
            for part in node.parts:
                # `{NAME}>file` (bash 4.1+): the word is no argument but an assignment of a
                # file descriptor number to NAME (`: {PATH}>/dev/null; ls` runs ./10/ls);
                # bashlex reads it as a word.
                if part.kind == "word" and _FD_VARIABLE.fullmatch(self.raw(part)):
                    self.found.flag(
                        DYNAMIC, f"{self.raw(part)} before a redirection assigns a variable"
                    )
        for part in node.parts:
            if part.kind == "redirect":
                stdin = self.redirect(part) or stdin
            elif part.kind == "assignment" and not words:
                self.word(part)
                assignments.append(part.word)
            elif part.kind in ("word", "assignment"):
                words.append(self.word(part))
            else:
                self.node(part)
        env = assignments_env(
            assignments, self.found, "for the command" if words else "", exported=bool(words)
        )
        if words:
            rules_by_name.run(Command(words, self.found, rules_by_name.run, env, stdin))

    def redirect(self, node: Any) -> str | None:
        """Record what a redirection writes; return a here-document's or here-string's text."""
        kind = node.type
        target = node.output
        if kind in ("<<", "<<-"):
            return self.heredoc(node)
        if not hasattr(target, "kind"):
            return None  # a file descriptor: 2>&1, >&-, <&3
        word = self.word(target)
        if kind == "<<<":
            return word.text if word.static else None
        path = word.text
        if path.startswith(_NETWORK_FILES):
            self.found.flag(NETWORK, f"redirection opens a network connection: {path}")
        elif not word.static and _may_be_network(path):
            self.found.flag(DYNAMIC, f"redirection {word.raw} may turn out to be /dev/tcp/...")
        if kind in _WRITE_REDIRECTS and not path.startswith(_NETWORK_FILES):
            self.found.write(path, f"redirection writes {path}")
        return None

    def heredoc(self, node: Any) -> str | None:
        # the body as bash reads it, set by `parse` once it agrees with bashlex's tree
        body: str | None = getattr(node.heredoc, "bash_body", None)
        if body is None:
            self.found.flag(DYNAMIC, "here-document not read the way bash reads it")
            return None
        if node.heredoc.literal:
            return body
        spelling = scan(body, heredoc=True)
        if spelling.substitutes or spelling.evaluates:
            self.found.flag(DYNAMIC, "here-document expands a substitution that cannot be analysed")
            return None
        return None if spelling.expands else body
