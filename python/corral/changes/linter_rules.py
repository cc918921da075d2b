"""Change-set rule for the settings of shared project configs that name code a linter loads:
mypy's `plugins`, pylint's `init-hook` (Python it runs) and `load-plugins`, flake8's
`[flake8:local-plugins]` (a path put on its module path). A type check or lint runs them on
the host, by hand or by the editor on save (review r31a). The configs only these tools read
(mypy.ini, .pylintrc, .flake8) are protected by name; pyproject.toml, setup.cfg and tox.ini
carry everything else a project says, so only a change to these settings is held.
"""

from __future__ import annotations

import os

from corral.changes.ruleset import RuleSet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry

SHARED_CONFIGS = frozenset({"pyproject.toml", "setup.cfg", "tox.ini"})
CODE_KEYS = ("plugins", "init-hook", "load-plugins")
MAX_CONFIG_BYTES = 1 << 20  # a larger one is held unread


def _read(path: str) -> str | None:
    """The text of a config, "" where there is none; None where it cannot be read whole
    (too large, not a regular file, a link)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
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


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def code_settings(name: str, text: str) -> list[tuple[str, str]] | None:
    """The settings of a config that name code a linter loads, read as the tool reads the
    file (TOML for pyproject.toml, INI for setup.cfg and tox.ini: every key spelling, inline
    tables, dotted keys, escapes, `:` for `=`, continued lines, r32a LINTSYNTAX): a key of
    CODE_KEYS at any depth, and the whole of a `local-plugins` table or section, as (where,
    value) pairs. None where the file cannot be read so."""
    found: list[tuple[str, str]] = []
    if name == "pyproject.toml":
        import tomllib

        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError, RecursionError):
            return None

        def walk(value: object, where: str, whole: bool) -> None:
            if isinstance(value, dict):
                for k, v in value.items():
                    key = _key(str(k))
                    here = f"{where}.{key}"
                    if whole or key in CODE_KEYS or "local-plugins" in key:
                        found.append((here, repr(v)))
                    else:
                        walk(v, here, False)

        walk(data, "", False)
        return sorted(found)
    import configparser

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except (configparser.Error, ValueError):
        return None
    for section in parser.sections():
        whole = "local-plugins" in _key(section)
        for option, value in parser.items(section, raw=True):
            if whole or _key(option) in CODE_KEYS:
                found.append((f"{_key(section)}.{_key(option)}", value))
    return sorted(found)


class LinterRules(RuleSet):
    def _linter_code(self, entry: Entry) -> bool:
        """Whether a change to pyproject.toml, setup.cfg or tox.ini (any depth) changes the
        settings that name code a linter loads, or cannot be read to tell."""
        if entry.kind not in ("file", "link") or os.path.basename(entry.path) not in SHARED_CONFIGS:
            return False
        if entry.kind == "link":
            return True  # (what it leads to is read as the config)
        staged = _read(entry.source)
        host = _read(entry.path)
        if staged is None or host is None:
            return True
        name = os.path.basename(entry.path)
        after = code_settings(name, staged)
        return after is None or after != code_settings(name, host)
