"""A shell script as bash reads it: an `.envrc`, a hook's command line.

Reading an `.envrc` with a lexer of corral's own went wrong each time bash and it disagreed
(review rounds 18 to 21): a `#` inside a word, a comment ending in `\\`, `$'...'` quoting, an
escaped space. Each disagreement folded the lines after it into a word of a harmless command,
and what those lines put on PATH went unread. Here the script is parsed by the parser the bash
classifier uses (bashlex, with bash's own reading of here-documents checked), and what it
cannot parse is unknown, never guessed at.

The result is the script's simple commands, each as its words with bash's quotes removed (an
expansion stays written out: `$PWD/bin`, `${X}`); whether the script branches (`if`, `&&`,
a loop, a function), which makes its variables depend on more than its text; and what cannot
be read ahead (a command run for its output, a function of its own, a construct corral does
not know).

bashlex takes ~90 ms to import, so the parse of a text is kept in corral's cache (never
writable by a sandboxed command), by the text's hash: a `corral run` in a workspace whose
`.envrc` has not changed parses nothing.
"""

from __future__ import annotations

import hashlib
import marshal
import os

from corral import dirs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Words before a command's name that only change how it assigns (`export A=1`): dropped
LEADING = frozenset({"export", "local", "declare", "typeset", "readonly", "command", "builtin"})
VERSION = 5  # of what the cache holds: a new one for every change to the walker


class Script:
    """What `parse` found: `commands` (lists of words), `branching`, `unknown`; `unparsed`:
    the text could not be parsed at all (unknown says why)."""

    __slots__ = ("branching", "commands", "unknown", "unparsed")

    def __init__(
        self, commands: list[list[str]], branching: bool, unknown: list[str],
        unparsed: bool = False,
    ) -> None:  # fmt: skip
        self.commands = commands
        self.branching = branching
        self.unknown = unknown
        self.unparsed = unparsed


def _cache_path(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return os.path.join(dirs.user_cache_dir(), "shell", f"{digest}.v{VERSION}")


def parse(text: str) -> Script:
    """The script in `text` (see the module's docstring), from the cache when it was parsed
    before."""
    path = _cache_path(text)
    try:
        with open(path, "rb") as f:
            commands, branching, unknown = marshal.load(f)
        return Script(commands, branching, unknown)
    except (OSError, ValueError, EOFError, TypeError):
        pass
    script = _parse(text)
    if script.unparsed:
        return script  # (a failure is never kept: the next reading may succeed)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            marshal.dump((script.commands, script.branching, script.unknown), f)
        os.replace(tmp, path)
    except OSError:
        pass  # (no cache: parsed again next time)
    return script


def _tests_as_brackets(text: str) -> str:
    """A `[[ ... ]]` test, which bashlex cannot parse, as `true` (direnv's own idiom is
    `[[ -f .envrc.local ]] && source_env .envrc.local`): a test runs nothing. One that can
    (a `$(...)`, backquotes, or arithmetic on a variable, which evaluates its value as code)
    is left as it is, and bashlex's failure holds."""
    import re

    def one(match: re.Match[str]) -> str:
        inner = match[2]
        runs = re.search(r"\$\(|`|\$\[", inner) or (
            "$" in inner and re.search(r"-(eq|ne|lt|le|gt|ge)\b", inner)
        )
        return match[0] if runs else match[1] + "true"

    test = r"(^|[\s;&|(])\[\[(\s.*?\s)\]\](?=$|[\s;&|)])"
    return re.sub(test, one, text, flags=re.M)


def _parse(text: str) -> Script:
    from corral.toolguard.classify.parse import parse as bash_parse

    if all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines()):
        return Script([], False, [])  # (bashlex has no tree for comments alone)
    text = _tests_as_brackets(text)
    walker = _Walker(text)
    try:
        for tree in bash_parse(text):
            walker.node(tree)
    except ImportError:
        # bashlex missing where the check runs: nothing could be read, which must stop the
        # check (the change set is then held whole), never pass for an unknown one that
        # unreadable_configs = "apply" lets through
        raise
    except Exception as e:  # bashlex raises its own errors, and ValueError (see parse)
        return Script([], False, [f"not read as bash ({str(e)[:60]})"], unparsed=True)
    return Script(walker.commands, walker.branching, walker.unknown)


class _Walker:
    __slots__ = ("branching", "commands", "text", "unknown")

    def __init__(self, text: str) -> None:
        self.text = text
        self.commands: list[list[str]] = []
        self.branching = False
        self.unknown: list[str] = []

    def raw(self, node: Any) -> str:
        start, end = node.pos
        return self.text[start:end][:60]

    def node(self, node: Any) -> None:
        kind = node.kind
        if kind == "command":
            self.command(node)
        elif kind in ("list", "pipeline"):
            for part in node.parts:
                if part.kind == "operator" and part.op in ("&&", "||"):
                    self.branching = True
                self.node(part)
        elif kind in ("if", "while", "until", "for"):
            self.branching = True
            for part in node.parts:
                self.node(part)
        elif kind == "compound":
            for part in node.list:
                self.node(part)
            for redirect in getattr(node, "redirects", ()):
                self.redirect(redirect)
        elif kind == "function":
            self.branching = True
            self.unknown.append(f"{self.raw(node)}: a function of its own")
        elif kind in ("reservedword", "operator", "pipe"):
            return
        elif kind in ("word", "assignment"):  # (a `for` loop's list, a `case` word)
            self.substitutions(node)
        else:
            self.unknown.append(f"{self.raw(node)}: {kind}, not read")

    def substitutions(self, node: Any) -> None:
        """A command or process substitution anywhere in `node`: it runs something whose
        output becomes a word; what it runs is not read."""
        for part in getattr(node, "parts", ()) or ():
            if part.kind in ("commandsubstitution", "processsubstitution"):
                self.unknown.append(f"{self.raw(part)}: a command run for its output")
            else:
                self.substitutions(part)
        for part in (getattr(node, "command", None), getattr(node, "output", None)):
            if part is not None and hasattr(part, "kind"):
                self.substitutions(part)

    def redirect(self, node: Any, program: str = "") -> None:
        """What a redirection feeds a command: a file read as its input (`source /dev/stdin <
        tools/env.sh` runs that file), a here-document or here-string (`source /dev/stdin
        <<'EOF'` runs its body; only `:` takes one as a comment), whose body the shell
        expands when its delimiter is unquoted (`$(...)` and backquotes run, even after
        `:`)."""
        self.substitutions(node)
        kind = getattr(node, "type", "")
        if kind in ("<", "<>", "<&"):
            target = getattr(node, "output", None)
            name = getattr(target, "word", "?") if target is not None else "?"
            self.unknown.append(f"{self.raw(node)}: input from {name}")
        body = getattr(getattr(node, "heredoc", None), "value", "")
        if kind.startswith("<<") and (
            program not in (":", "true") or "$(" in body or "`" in body or "${" in body
        ):
            self.unknown.append(f"{self.raw(node)}: a here-document or here-string as input")

    def command(self, node: Any) -> None:
        words: list[str] = []
        for part in node.parts:
            if part.kind in ("word", "assignment"):
                self.substitutions(part)
                words.append(part.word)
            elif part.kind == "redirect":
                self.redirect(part, words[0] if words else "")
            else:
                self.node(part)
        if words[:1] == ["command"] and words[1:2] in (["-v"], ["-V"]):
            return  # (`command -v nix`: a lookup, nothing run)
        while words and words[0] in LEADING:  # `export -x A=1`: the assignments
            words = words[1:]
            while words and words[0].startswith("-"):
                words = words[1:]
        if words:
            self.commands.append(words)
