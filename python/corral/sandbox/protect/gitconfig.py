"""Read git config files the way git does, far enough to know what they make git run.

Two things matter to corral: every file git reads as config for a repository (a work-tree file
pulled in by `include.path` or `includeIf.*.path` is config as surely as `.git/config` is, and
`core.fsmonitor` written there runs on the next `git status` on the host), and every
`core.hooksPath`. No git process is started: git would have to be found somewhere, and the
point is not to trust the repository it would read.

The syntax followed (git-config(1), "CONFIGURATION FILE"): `[section]`, `[section "sub"]` with
`\\"` and `\\\\` escapes, the old `[section.sub]`; a key and value may follow a header on the
same line; names are case-insensitive; `key` alone means true; values may be quoted in parts,
`#` and `;` start a comment outside quotes, `\\` escapes and ends a line to continue it. What
cannot be read is skipped, never guessed into a narrower answer: includes are followed whatever
their condition, and every hooksPath seen is reported, not only the one that wins.
"""

from __future__ import annotations

import os

from corral.paths import read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

MAX_INCLUDE_DEPTH = 10  # git's own limit
MAX_FILE_BYTES = 1024 * 1024
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


def _value(text: str, i: int) -> tuple[str, int]:
    """The value starting at text[i]: (value, index after its line, continuations included)."""
    out: list[str] = []
    quoted = False
    pending_space = ""
    while i < len(text):
        c = text[i]
        if c == "\n":
            return "".join(out), i + 1
        if c == "\\":
            nxt = text[i + 1 : i + 2]
            if nxt == "\n":  # continuation
                i += 2
                continue
            out.append(pending_space + _ESCAPES.get(nxt, nxt))
            pending_space = ""
            i += 2
            continue
        if c == '"':
            quoted = not quoted
            out.append(pending_space)
            pending_space = ""
        elif not quoted and c in "#;":
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        elif not quoted and c in " \t":
            if out:
                pending_space += c
        else:
            out.append(pending_space + c)
            pending_space = ""
        i += 1
    return "".join(out), i


def _header(text: str, i: int) -> tuple[str, int]:
    """`[section]` or `[section "sub"]` starting at text[i] == "[": ("section.sub", index)."""
    end = i + 1
    name: list[str] = []
    while end < len(text) and text[end] not in ']"\n' and text[end] not in " \t":
        name.append(text[end])
        end += 1
    section = "".join(name).lower()  # [section.sub] (old form) is lowercased whole
    while end < len(text) and text[end] in " \t":
        end += 1
    if end < len(text) and text[end] == '"':
        sub: list[str] = []
        end += 1
        while end < len(text) and text[end] not in '"\n':
            if text[end] == "\\" and end + 1 < len(text):
                end += 1
            sub.append(text[end])
            end += 1
        section += "." + "".join(sub)
        end += 1
    close = text.find("]", end)
    if close == -1 or "\n" in text[end:close]:
        return section, text.find("\n", i) + 1 if "\n" in text[i:] else len(text)
    return section, close + 1


def entries(text: str) -> Iterator[tuple[str, str, str]]:
    """(section, key lowercased, value) in file order; `section` is "core", "includeif.<cond>"
    (the subsection keeps its case)."""
    section = ""
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif c in "#;":
            while i < n and text[i] != "\n":
                i += 1
        elif c == "[":
            section, i = _header(text, i)
        else:
            start = i
            while i < n and (text[i].isalnum() or text[i] == "-"):
                i += 1
            key = text[start:i].lower()
            while i < n and text[i] in " \t":
                i += 1
            if i < n and text[i] == "=":
                value, i = _value(text, i + 1)
            else:
                value = "true"
                if i < n and text[i] not in "\n#;":  # not a key: skip the line
                    while i < n and text[i] != "\n":
                        i += 1
                    continue
            if key:
                yield section, key, value


def read_text(path: str) -> str | None:
    try:
        data = read_regular(path, MAX_FILE_BYTES + 1)
    except OSError:
        return None
    # (a CR before a line's end is no part of it to git: `path = lib\r` is `lib`, r68a
    # GITMODULESCR; a lone CR stays, as git reads it)
    return data[:MAX_FILE_BYTES].decode("utf-8", errors="replace").replace("\r\n", "\n")


OPTIONAL = ":(optional)"


def path_value(value: str) -> str:
    """A path setting's path: git 2.52 takes a leading `:(optional)` as "only where it
    exists" (r86a OPTIONALPATH: corral read it as part of the name, and protected another
    hooks directory than the one git runs)."""
    return value.removeprefix(OPTIONAL)


def _include_target(value: str, including: str, home: str) -> str:
    value = path_value(value)
    if value.startswith("~/") or value == "~":
        return os.path.join(home, value[2:])
    if including.startswith(ENVIRONMENT):
        return os.path.abspath(value)  # (as git reads it: from where it runs)
    return os.path.normpath(os.path.join(os.path.dirname(including), value))


class Reading:
    """What a set of config files makes git read and run."""

    __slots__ = ("commands", "files", "hooks_paths", "template_dirs")

    def __init__(self) -> None:
        self.files: list[str] = []  # every config file read or named by an include, in order
        self.hooks_paths: list[str] = []  # every core.hooksPath value, as written
        self.commands: list[str] = []  # every value git runs as a command (see COMMANDS)
        self.template_dirs: list[str] = []  # init.templateDir: its hooks go into new repos


# Keys whose value git runs as a command: (section or its first part, key); "*" any key.
COMMANDS = {
    ("core", "fsmonitor"), ("core", "sshcommand"), ("core", "editor"), ("core", "pager"),
    ("core", "askpass"), ("sequence", "editor"), ("filter", "clean"), ("filter", "smudge"),
    ("filter", "process"), ("diff", "command"), ("diff", "textconv"), ("merge", "driver"),
    ("credential", "helper"), ("gpg", "program"), ("interactive", "difffilter"),
    ("pager", "*"), ("alias", "*"), ("uploadpack", "packobjectshook"),
    ("diff", "external"), ("core", "gitproxy"), ("core", "alternaterefscommand"),
    ("remote", "uploadpack"), ("remote", "receivepack"), ("submodule", "update"),
    ("trailer", "command"), ("trailer", "cmd"), ("difftool", "cmd"), ("mergetool", "cmd"),
    ("man", "cmd"), ("browser", "cmd"), ("web", "browser"), ("sendemail", "sendmailcmd"),
    ("gpg", "defaultkeycommand"),
    # git 2.54's hooks set in config (`[hook "lint"] event = pre-commit`, `command =
    # scripts/lint.sh`), which run as surely as .git/hooks' (r72a CFGHOOK)
    ("hook", "command"),
}  # fmt: skip


def _is_command(section: str, key: str) -> bool:
    first = section.partition(".")[0]
    return (first, key) in COMMANDS or (first, "*") in COMMANDS


# (a config "path" standing for the config git takes from the environment: its text follows)
ENVIRONMENT = "\0environment:"
MAX_ENV_ENTRIES = 1000


def environment(env: Mapping[str, str]) -> list[str]:
    """[a pseudo config file of the config git takes from the environment], or []:
    GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n, and GIT_CONFIG_PARAMETERS
    (`git -c`'s). Neovim started from a shell that exported `core.hooksPath` this way ran
    hooks corral never read (r74a ENVHOOKSPATH). Its text is read as a file's (see read)."""
    items: list[tuple[str, str]] = []
    try:
        count = int(env.get("GIT_CONFIG_COUNT") or 0)
    except ValueError:
        count = 0
    for i in range(min(count, MAX_ENV_ENTRIES)):
        key = env.get(f"GIT_CONFIG_KEY_{i}")
        if key:
            items.append((key, env.get(f"GIT_CONFIG_VALUE_{i}", "")))
    words: list[str] = []
    if env.get("GIT_CONFIG_PARAMETERS"):
        import shlex  # (only then: it imports re, which a run without changes never does)

        try:
            words = shlex.split(env["GIT_CONFIG_PARAMETERS"])
        except ValueError:
            words = []
    items += [(k, v) for k, _, v in (w.partition("=") for w in words[:MAX_ENV_ENTRIES])]
    lines = []
    for key, value in items:
        section, _, name = key.rpartition(".")
        head, dot, sub = section.partition(".")
        if not head or not name:
            continue
        quoted = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        sub = sub.replace("\\", "\\\\").replace('"', '\\"')
        lines += [f'[{head} "{sub}"]' if dot else f"[{head}]", f'\t{name} = "{quoted}"']
    return [ENVIRONMENT + "\n".join(lines) + "\n"] if lines else []


def text_of(path: str) -> str | None:
    """A config file's text, or the environment's pseudo file's (see environment)."""
    return path[len(ENVIRONMENT) :] if path.startswith(ENVIRONMENT) else read_text(path)


def read(config_files: Iterable[str], home: str) -> Reading:
    """Follow the includes of `config_files` (those that exist) to git's depth limit; one
    of them may be the environment's (see environment), and is not a file."""
    result = Reading()
    stack = [(path, 0) for path in reversed(list(config_files))]
    while stack:
        path, depth = stack.pop()
        if path in result.files:
            continue
        result.files.append(path)
        text = text_of(path)
        if text is None:
            continue
        includes: list[str] = []
        for section, key, value in entries(text):
            if section == "core" and key == "hookspath" and path_value(value):
                result.hooks_paths.append(path_value(value))
            elif section == "init" and key == "templatedir" and path_value(value):
                result.template_dirs.append(path_value(value))  # (copied into new repositories)
            elif value and _is_command(section, key) and value.lower() not in ("true", "false"):
                result.commands.append(value.lstrip("!"))
            elif (
                key == "path"
                and value
                and (section == "include" or section.startswith("includeif."))
            ):
                includes.append(_include_target(value, path, home))
        if depth < MAX_INCLUDE_DEPTH:
            stack.extend((p, depth + 1) for p in reversed(includes))
    return result
