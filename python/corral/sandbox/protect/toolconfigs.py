"""What the protected configs of mise, cargo and Mercurial name in the work tree.

Each of those files is protected by name (sandbox.policy.protected), but what they run from the
work tree is as dangerous as they are:
- mise, at every prompt (`mise hook-env`): `[env] _.source` scripts, `_.file` env files,
  `_.path` directories put first on PATH, `_.python.venv`, `[hooks]` commands, `path:` tools;
- cargo, at `cargo metadata` (a language server's first step): `build.rustc-wrapper` and its
  kin, `target.*.linker` and `.runner`;
- Mercurial, at `hg status` or `hg commit`: `[hooks]` commands and `[extensions]` files.
The files and directories they name are kept like the configs. Only what is written out
is read; what a named script does in turn is not (as for git hooks, see hookwords).
"""

from __future__ import annotations

import os

from corral.paths import name_matches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

MAX_BYTES = 256 * 1024
MISE_FILES = (
    "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".config/mise.toml",
    ".config/mise/config.toml", ".config/mise/config.local.toml", "mise/config.toml",
    "mise/config.local.toml", ".mise/config.toml", ".mise/config.local.toml",
)  # fmt: skip
MISE_PATTERNS = ("mise.*.toml", ".mise.*.toml")
CARGO_FILES = (".cargo/config.toml", ".cargo/config")
CARGO_PROGRAMS = ("rustc", "rustc-wrapper", "rustc-workspace-wrapper", "rustdoc")
HGRC_FILES = (".hg/hgrc", ".hg/hgrc-not-shared")


def _text(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


def _toml(path: str) -> dict[str, Any]:
    text = _text(path)
    if text is None:
        return {}
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _table(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> Iterator[str]:
    """The strings of a value that may be a string, a list, or tables with a `path`."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict) and "path" in value:
        yield from _strings(value["path"])


def _words(command: str) -> list[str]:
    from corral.sandbox.protect.direnv import path_words

    return list(path_words(command.split()))


def _placed(base: str, word: str) -> str | None:
    word = word.strip("\"'")
    if not word or "$" in word or "`" in word or "://" in word:
        return None
    path = os.path.normpath(os.path.join(base, os.path.expanduser(word)))
    return path


def _mise(root: str) -> list[str]:
    names = list(MISE_FILES)
    try:
        listed = os.listdir(root)
    except OSError:
        listed = []
    names += [n for n in listed for p in MISE_PATTERNS if name_matches(n, p)]
    found: list[str] = []
    for name in dict.fromkeys(names):
        data = _toml(os.path.join(root, name))
        directives = _table(_table(data, "env"), "_")
        words = [*_strings(directives.get("source")), *_strings(directives.get("file"))]
        words += [*_strings(directives.get("path"))]
        venv = directives.get("python")
        if isinstance(venv, dict):
            # (its bin goes on PATH; like an activated venv's, kept, the rest of it not)
            words += [os.path.join(v, "bin") for v in _strings(venv.get("venv"))]
        hooks = _table(data, "hooks")
        for command in (c for value in hooks.values() for c in _strings(value)):
            words += _words(command)
        tools = _table(data, "tools")
        for value in (v for t in tools.values() for v in _strings(t)):
            if value.startswith(("path:", "ref:")) and "/" in value:
                words.append(value.split(":", 1)[1])
        found += [p for w in words if (p := _placed(root, w)) is not None]
    return found


def _cargo(root: str) -> list[str]:
    found: list[str] = []
    for name in CARGO_FILES:
        data = _toml(os.path.join(root, name))
        build = _table(data, "build")
        programs = [v for k in CARGO_PROGRAMS for v in _strings(build.get(k))]
        tables = [_table(data, "host"), *_table(data, "target").values()]
        for table in (t for t in tables if isinstance(t, dict)):
            programs += [*_strings(table.get("linker")), *_strings(table.get("runner"))]
        # cargo reads a value with a `/` against the directory holding .cargo
        found += [p for w in programs if "/" in w and (p := _placed(root, w)) is not None]
    return found


def _hgrc_values(text: str) -> Iterator[tuple[str, str, str]]:
    """(section, key, value) of an hgrc, continuation lines joined."""
    section, key, value = "", "", ""
    for line in [*text.splitlines(), "[end]"]:
        if line[:1].isspace() and key:
            value += " " + line.strip()
            continue
        if key:
            yield section, key, value
            key = ""
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1].strip()
        elif "=" in stripped:
            key, _, value = (s.strip() for s in stripped.partition("="))


def _mercurial(root: str) -> list[str]:
    found: list[str] = []
    for name in HGRC_FILES:
        text = _text(os.path.join(root, name))
        if text is None:
            continue
        for section, _, value in _hgrc_values(text):
            words: list[str] = []
            if section == "hooks":
                if value.startswith("python:"):  # python:hooks/check.py:hook
                    words.append(value[len("python:") :].rsplit(":", 1)[0])
                else:
                    words += _words(value)
            elif section == "extensions" and value and not value.startswith("!"):
                words.append(value)
            found += [p for w in words if (p := _placed(root, w)) is not None]
    return found


def referenced(root: str) -> list[str]:
    """The files and directories in `root` that its mise, cargo and Mercurial configs have
    the host run or put on PATH (what exists, and what a word with a `/` names)."""
    found = [*_mise(root), *_cargo(root), *_mercurial(root)]
    return [p for p in dict.fromkeys(found) if p.startswith(root + os.sep)]
