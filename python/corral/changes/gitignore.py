"""Which paths git ignores, read as git reads its ignore files (gitignore(5)): the
`.gitignore` of each directory from the work tree's top down to the path's own, then
`info/exclude`, then `core.excludesFile`; in one file the last pattern that matches decides,
and a deeper file's over a shallower one's; nothing below an ignored directory is taken back.

corral reads these files itself (no git runs): a change to what git ignores is one `git
status` never shows (see ignored_rules).
"""

from __future__ import annotations

import os
import re

from corral.paths import read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

BOM = "\xef\xbb\xbf"  # (UTF-8's byte-order mark, as bytes read one per character)
MAX_IGNORE_BYTES = 1 << 20  # a larger ignore file is read as ignoring everything
MAX_STARS = 2  # `*`s within a name a pattern may have (see parse); `**/` is no such one
STAR = "[^/]*"
# POSIX classes git's wildmatch knows inside brackets
_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
    "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v", "upper": "A-Z",
    "xdigit": "0-9a-fA-F",
}  # fmt: skip

# (base directory relative to the top, regex, negated, directories only, anchored)
Pattern = tuple[str, "re.Pattern[str]", bool, bool, bool]


def _bracket(p: str, i: int) -> tuple[str, int] | None:
    """The regex of the bracket expression starting at p[i] == "[", and where it ends; None
    when it does not close."""
    j = i + 1
    negate = j < len(p) and p[j] in "!^"
    j += negate
    out: list[str] = []
    first = True
    while j < len(p):
        c = p[j]
        if c == "]" and not first:
            body = "".join(out) or "\\x00"
            return (f"[^/{body}]" if negate else f"(?!/)[{body}]"), j + 1
        first = False
        if c == "[" and p.startswith("[:", j):
            end = p.find(":]", j + 2)
            name = p[j + 2 : end] if end > 0 else ""
            if name in _CLASSES:
                out.append(_CLASSES[name])
                j = end + 2
                continue
        if c == "\\" and j + 1 < len(p):
            j += 1
            c = p[j]
        if c == "-" and out and j + 1 < len(p) and p[j + 1] != "]":
            nxt = p[j + 1]
            if nxt == "\\" and j + 2 < len(p):
                j += 1
                nxt = p[j + 1]
            out.append("-" + re.escape(nxt))
            j += 2
            continue
        out.append(re.escape(c))
        j += 1
    return None


def _regex(p: str) -> str:
    """A gitignore pattern (no `!`, no trailing `/`) as a regex over a relative path."""
    out: list[str] = []
    i, n = 0, len(p)
    # (git compares the text before the first wildcard itself and hands wildmatch the rest:
    # a `**` right after that text is at the start of what wildmatch sees, and crosses
    # directories as one after a `/` does, r85a GLOBSTAR: `name**/x` ignores name/a/b/x)
    first_wild = next((k for k, ch in enumerate(p) if ch in "*?[\\"), n)
    while i < n:
        c = p[i]
        if c == "*":
            j = i
            while j < n and p[j] == "*":
                j += 1
            at_start = i in (0, first_wild) or p[i - 1] == "/"
            if j - i >= 2 and at_start and (j == n or p[j] == "/"):
                if j == n:
                    out.append(".*")  # `x/**`: everything inside
                    i = j
                else:
                    out.append("(?:.*/)?")  # `**/x`, `a/**/b`: any number of directories
                    i = j + 1
                continue
            if j - i >= 2 and at_start and p.startswith("\\/", j):
                out.append(".*")  # (`**\/x`: any text, the escaped `/` matched after it)
                i = j
                continue
            out.append(STAR)
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            bracket = _bracket(p, i)
            if bracket is None:
                return "(?!)"  # (git's wildmatch matches nothing with an unclosed bracket)
            else:
                out.append(bracket[0])
                i = bracket[1]
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(p[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _trimmed(line: str) -> str:
    """A line without its trailing spaces, as git trims them: a backslash keeps the
    character after it, a space too."""
    last_space = -1
    i = 0
    while i < len(line):
        c = line[i]
        if c == " ":
            if last_space < 0:
                last_space = i
        else:
            if c == "\\":
                i += 1
                if i == len(line):
                    return line
            last_space = -1
        i += 1
    return line[:last_space] if last_space >= 0 else line


def parse(text: str, base: str, ignore_case: bool = False) -> list[Pattern]:
    """The patterns of one ignore file whose paths are relative to `base` ("" for the top,
    info/exclude and core.excludesFile), read as git reads them: a UTF-8 byte-order mark
    skipped, a CR before a line's end dropped, a line ending at a NUL (r82a SELFIGN, IGNBOM);
    `ignore_case`: core.ignoreCase (r82a IGNCASE)."""
    found: list[Pattern] = []
    # (bytes, as read_ignore_file gives them; case folded for ASCII only, as git's is)
    flags = re.DOTALL | re.ASCII | (re.IGNORECASE if ignore_case else 0)
    for line in text.removeprefix(BOM).split("\n"):
        line = line.removesuffix("\r")
        if not line or line.startswith("#"):
            continue
        line = _trimmed(line.split("\0", 1)[0])
        if not line:
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        directory = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.removeprefix("/")
        # (more than MAX_STARS runs of `*` backtrack for minutes on a long name, where git's
        # wildmatch takes a millisecond, r83a REDOS: read as ignoring all it could name,
        # and a negation as taking nothing back)
        regex = _regex(line)
        many = regex.count(STAR) > MAX_STARS or regex.count(STAR) + regex.count(".*") > 3
        try:
            compiled = re.compile(regex if not many else ".*", flags)
        except re.error:
            compiled = re.compile(".*", flags)  # (read as ignoring all it could name)
        if negated and (many or compiled.pattern == ".*"):
            compiled = re.compile("(?!)")
        found.append((base, compiled, negated, directory, anchored))
    return found


class Ignores:
    """What git ignores in one work tree. `read(path)` gives an ignore file's text, or None
    where there is none (the host's files, or a change set's as they would be)."""

    def __init__(
        self,
        top: str,
        extra: list[str],
        read: Callable[[str], str | None],
        ignore_case: bool = False,
    ) -> None:
        self.top = top
        self._read = read
        self._ignore_case = ignore_case
        self._files: dict[str, list[Pattern]] = {}
        # core.excludesFile, then info/exclude (its patterns win): below every .gitignore
        self._extra = [p for path in extra for p in self._patterns(path, "")]
        self._dirs: dict[str, bool] = {}

    def _patterns(self, path: str, base: str) -> list[Pattern]:
        found = self._files.get(path)
        if found is None:
            text = self._read(path)
            found = [] if text is None else parse(text, base, self._ignore_case)
            self._files[path] = found
        return found

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether git ignores `rel` (relative to the top): by a pattern, or as a path below
        a directory it ignores."""
        parent = os.path.dirname(rel)
        if parent and self.dir_ignored(parent):
            return True
        return self._matched(rel, is_dir)

    def dir_ignored(self, rel: str) -> bool:
        known = self._dirs.get(rel)
        if known is None:
            known = self.ignored(rel, True)
            self._dirs[rel] = known
        return known

    def _matched(self, rel: str, is_dir: bool) -> bool:
        name = rel.rsplit("/", 1)[-1]
        base = os.path.dirname(rel)
        while True:
            path = os.path.join(self.top, base, ".gitignore")
            verdict = _last_match(self._patterns(path, base), rel, name, is_dir)
            if verdict is not None:
                return verdict
            if not base:
                break
            base = os.path.dirname(base)
        return bool(_last_match(self._extra, rel, name, is_dir))


def _last_match(patterns: list[Pattern], rel: str, name: str, is_dir: bool) -> bool | None:
    for base, compiled, negated, directory, anchored in reversed(patterns):
        if directory and not is_dir:
            continue
        subject = (rel[len(base) + 1 :] if base else rel) if anchored else name
        if compiled.fullmatch(os.fsencode(subject).decode("latin-1")):
            return not negated
    return None


def read_ignore_file(path: str) -> str | None:
    """A host ignore file's text: git never follows a `.gitignore` that is a symlink (it
    does info/exclude and core.excludesFile); one larger than corral reads ignores
    everything."""
    try:
        follow = os.path.basename(path) != ".gitignore"
        data = read_regular(path, MAX_IGNORE_BYTES + 1, follow=follow)
    except OSError:
        return None
    if len(data) > MAX_IGNORE_BYTES:
        return "*\n"
    # (git's wildmatch works on bytes: a `?` or a bracket takes one byte of `é`, r86a
    # BYTEGLOB; a text of one character per byte, and each path matched as its bytes)
    return data.decode("latin-1")
