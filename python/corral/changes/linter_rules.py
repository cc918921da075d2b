"""Change-set rule for the lines of shared project configs that name code a linter loads:
mypy's `plugins`, pylint's `init-hook` (Python it runs) and `load-plugins`, flake8's
`[flake8:local-plugins]` (a path put on its module path). A type check or lint runs them on
the host, by hand or by the editor on save (review r31a). The configs only these tools read
(mypy.ini, .pylintrc, .flake8) are protected by name; pyproject.toml, setup.cfg and tox.ini
carry everything else a project says, so only a change to these lines is held.
"""

from __future__ import annotations

import os

from corral.changes.ruleset import RuleSet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry

SHARED_CONFIGS = frozenset({"pyproject.toml", "setup.cfg", "tox.ini"})
CODE_KEYS = ("plugins", "init-hook", "init_hook", "load-plugins", "load_plugins")
MAX_CONFIG_BYTES = 1 << 20  # a larger one is held unread


def _read(path: str, follow: bool) -> str | None:
    """The text of a config, "" where there is none; None where it cannot be read whole
    (too large, not a regular file). The staged copy is opened without following a link."""
    flags = os.O_RDONLY | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return ""
    except OSError:
        return None
    try:
        data = os.read(fd, MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        return None
    return data.decode("utf-8", "replace")


def code_lines(text: str) -> list[str]:
    """The lines that name code: a key of CODE_KEYS with what continues it (indented lines,
    an array left open), and the whole of a `local-plugins` section; stripped, in order."""
    found: list[str] = []
    lines = text.splitlines()
    i = 0
    in_local = False
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("["):
            in_local = "local-plugins" in line or "local_plugins" in line
            if in_local:
                found.append(line)
            i += 1
            continue
        key = line.split("=", 1)[0].strip().strip("\"'").lower()
        if in_local:
            found.append(line)
        elif "=" in line and key.rsplit(".", 1)[-1] in CODE_KEYS:
            found.append(line)
            depth = line.count("[") - line.count("]")
            while i + 1 < len(lines) and (depth > 0 or lines[i + 1][:1] in (" ", "\t")):
                i += 1
                nxt = lines[i].strip()
                if nxt.startswith("[") and depth <= 0:
                    i -= 1
                    break
                depth += nxt.count("[") - nxt.count("]")
                found.append(nxt)
        i += 1
    return found


class LinterRules(RuleSet):
    def _linter_code(self, entry: Entry) -> bool:
        """Whether a change to pyproject.toml, setup.cfg or tox.ini (any depth) changes the
        lines that name code a linter loads, or cannot be read to tell."""
        if entry.kind not in ("file", "link") or os.path.basename(entry.path) not in SHARED_CONFIGS:
            return False
        if entry.kind == "link":
            return True  # (what it leads to is read as the config)
        staged = _read(entry.source, follow=False)
        host = _read(entry.path, follow=False)
        if staged is None or host is None:
            return True
        return code_lines(staged) != code_lines(host)
