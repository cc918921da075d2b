"""Change-set rule for the settings of shared project configs that can have a linter run
code: mypy's `plugins` and `python_executable` (a program it runs), pylint's `init-hook`
(Python it runs), `load-plugins` and `output-format` (a class it imports), flake8's
`[flake8:local-plugins]` (a path put on its module path). A type check or lint runs them on
the host, by hand or by the editor on save (reviews r31a, r37b). The configs only these
tools read (mypy.ini, .pylintrc, .flake8) are protected by name; in pyproject.toml,
setup.cfg and tox.ini, which carry everything else a project says, a change to these tools'
sections (whole: a list of keys that run code is never complete) or to a `plugins`,
`init-hook`, `load-plugins` key anywhere is held.
"""

from __future__ import annotations

import os

from corral.changes.ruleset import RuleSet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from corral.changes.scan import Entry

SHARED_CONFIGS = frozenset({"pyproject.toml", "setup.cfg", "tox.ini"})
CODE_KEYS = ("plugins", "init-hook", "load-plugins")
# The tools whose settings are held whole: a key list cannot be kept complete (mypy runs its
# `python_executable`, pylint imports an `output-format` class, review r37b MYPYEXE), and
# their users do not expect a type check or lint to run anything. Sections as mypy, pylint
# and flake8 (with flake8-pyproject) name theirs: `[tool.mypy]`, `[mypy]`, `[mypy-pkg.*]`,
# `[tool.pylint.main]`, `[pylint.main]`, `[flake8]`, `[flake8:local-plugins]`.
LINTERS = ("mypy", "pylint", "flake8")
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


def _linter_section(name: str) -> bool:
    """Whether an INI section or a pyproject `tool.` table is one of LINTERS'."""
    key = _key(name)
    return any(
        key == tool or key.startswith((f"{tool}.", f"{tool}-", f"{tool}:")) for tool in LINTERS
    )


def code_settings(name: str, text: str) -> list[tuple[str, str]] | None:
    """The settings of a config that name code a linter loads, read as the tool reads the
    file (TOML for pyproject.toml, INI for setup.cfg and tox.ini: every key spelling, inline
    tables, dotted keys, escapes, `:` for `=`, continued lines, r32a LINTSYNTAX): a key of
    CODE_KEYS at any depth, the whole of a `local-plugins` table or section and of LINTERS'
    sections, as (where, value) pairs. None where the file cannot be read so."""
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
                    linter = where == ".tool" and _linter_section(key)
                    if whole or linter or key in CODE_KEYS or "local-plugins" in key:
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
        whole = "local-plugins" in _key(section) or _linter_section(section)
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
