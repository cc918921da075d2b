"""Hook managers: the work-tree files their installed hooks run or read.

A hook in `.git/hooks` (or the `core.hooksPath` directory) is protected, but the hook managers
install hooks that hand over to files in the work tree, which a sandboxed command can write:
- husky v9: core.hooksPath = .husky/_, whose hooks run `.husky/<hook>`;
- pre-commit: the hook runs what `.pre-commit-config.yaml` lists, `repo: local` scripts too;
- lefthook: the hook runs what `lefthook.yml` (and its local and dot-directory variants) lists;
- overcommit: `.overcommit.yml` and the `.git-hooks` directory of repository hooks.
The manager is recognised by its installed hooks' text, not by the presence of its config (a
config without installed hooks runs nothing). Managers that read files corral cannot keep
read-only for everyday work (husky v4 reads package.json and runs node_modules) are named in a
note instead.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_HOOKS = 64
MAX_HOOK_BYTES = 64 * 1024
MAX_CONFIG_BYTES = 256 * 1024

LEFTHOOK_FILES = (
    "lefthook.yml", "lefthook.yaml", "lefthook.toml", "lefthook.json",
    ".lefthook.yml", ".lefthook.yaml", ".lefthook.toml", ".lefthook.json",
    "lefthook-local.yml", "lefthook-local.yaml", ".lefthook-local.yml", ".lefthook-local.yaml",
    ".config/lefthook.yml", ".config/lefthook.yaml", ".config/lefthook-local.yml",
    ".lefthook", ".lefthook-local",
)  # fmt: skip
OVERCOMMIT_FILES = (".overcommit.yml", ".git-hooks")
PRE_COMMIT_DEFAULT = ".pre-commit-config.yaml"


class Found:
    __slots__ = ("files", "notes")

    def __init__(self) -> None:
        self.files: list[str] = []
        self.notes: list[str] = []


def _hooks(directories: Iterable[str]) -> list[tuple[str, str]]:
    """(directory, text) of the installed hooks, bounded in number and size."""
    found: list[tuple[str, str]] = []
    for directory in directories:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if len(found) >= MAX_HOOKS:
                return found
            if entry.name.endswith(".sample") or not entry.is_file(follow_symlinks=False):
                continue
            try:
                with open(entry.path, "rb") as f:
                    text = f.read(MAX_HOOK_BYTES).decode("utf-8", errors="replace")
            except OSError:
                continue
            found.append((directory, text))
    return found


def hook_files(directories: Iterable[str]) -> list[tuple[str, str, str | None]]:
    """(directory, text, the resolved target when the hook is a symlink) of every hook, the
    links included (a hook linked into the work tree runs what the work tree holds)."""
    found: list[tuple[str, str, str | None]] = []
    for directory in directories:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if len(found) >= MAX_HOOKS:
                return found
            if entry.name.endswith(".sample"):
                continue
            link = os.path.realpath(entry.path) if entry.is_symlink() else None
            try:
                with open(entry.path, "rb") as f:
                    text = f.read(MAX_HOOK_BYTES).decode("utf-8", errors="replace")
            except OSError:
                text = ""
            found.append((directory, text, link))
    return found


def _pre_commit_configs(text: str) -> list[str]:
    """The --config of pre-commit's installed hook (`--config=X` or `--config X`)."""
    names = []
    words = text.replace("=", " ").replace("(", " ").replace(")", " ").split()
    for i, word in enumerate(words[:-1]):
        if word == "--config":
            names.append(words[i + 1].strip("\"'"))
    return names or [PRE_COMMIT_DEFAULT]


def _local_entries(config: str, tree: str) -> list[str]:
    """Scripts in the work tree that a pre-commit config's hooks run (`entry: ./x.sh`)."""
    try:
        with open(config, "rb") as f:
            text = f.read(MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return []
    scripts = []
    for line in text.splitlines():
        key, _, value = line.strip().lstrip("- ").partition(":")
        if key.strip() not in ("entry", "args"):
            continue
        # Every word that names a file of the work tree: `./x.sh`, and what an interpreter
        # runs (`bash scripts/lint.sh`, `python3 check.py`), args: `[scripts/x.py]` too.
        for word in value.strip().strip("[]").replace(",", " ").split():
            word = word.strip("\"'")
            if not word or word.startswith("-") or os.path.isabs(word) or "://" in word:
                continue
            path = os.path.normpath(os.path.join(tree, word))
            if path.startswith(tree + os.sep) and os.path.isfile(path):
                scripts.append(path)
    return scripts


def detect(tree: str, hook_dirs: Iterable[str]) -> Found:
    found = Found()
    for directory, text in _hooks(hook_dirs):
        if "pre-commit" in text and (
            "pre_commit" in text or "File generated by pre-commit" in text
        ):
            for name in _pre_commit_configs(text):
                config = os.path.normpath(os.path.join(tree, name))
                found.files.append(config)
                found.files.extend(_local_entries(config, tree))
        if "lefthook" in text:
            found.files.extend(os.path.join(tree, name) for name in LEFTHOOK_FILES)
        if "overcommit" in text.lower():
            found.files.extend(os.path.join(tree, name) for name in OVERCOMMIT_FILES)
        if os.path.basename(directory) == "_" and (
            os.path.basename(os.path.dirname(directory)) == ".husky"
            or os.path.isfile(os.path.join(directory, "h"))  # `husky .config/husky`
            or "husky" in text
        ):
            found.files.append(os.path.dirname(directory))  # husky v9: <dir>/<hook> runs
        if "husky-run" in text or ("husky.sh" in text and "node_modules" in text):
            found.notes.append(
                f"{tree}: husky v4 hooks run commands from package.json and node_modules, "
                "which a sandboxed command can change; upgrade husky (v9 is protected)"
            )
    # one entry per path, in order
    found.files = list(dict.fromkeys(found.files))
    return found
