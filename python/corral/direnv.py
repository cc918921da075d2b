"""direnv: the work-tree files a `.envrc` has the host's shell run or read.

`.envrc` itself is a protected name, but direnv runs it at the next prompt in the directory,
and what it runs from there is as dangerous: `source_env .envrc.local`, `dotenv` (it sets
variables such as PROMPT_COMMAND or BASH_ENV), `use flake` (Nix evaluates flake.nix),
`PATH_add bin` (the next `ls` typed at that prompt runs bin/ls). The paths those lines name,
relative to the `.envrc`, are protected like it. An argument with a variable or a command
substitution cannot be known before direnv runs: it is not followed (see the threat model).
"""

from __future__ import annotations

import os
import shlex

MAX_BYTES = 64 * 1024
NAME = ".envrc"

# command -> the files it reads when given no argument (None: an argument is needed)
SOURCES: dict[str, tuple[str, ...] | None] = {
    "source_env": None,
    "source_env_if_exists": None,
    "source": None,
    ".": None,
    "dotenv": (".env",),
    "dotenv_if_exists": (".env",),
    "PATH_add": None,
    "path_add": None,
    "MANPATH_add": None,
    "load_prefix": None,
}
USE = {"flake": ("flake.nix", "flake.lock"), "nix": ("shell.nix", "default.nix")}


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return line.split()


def referenced(envrc: str) -> list[str]:
    """Absolute paths the `.envrc` at `envrc` runs, reads or puts on PATH; [] when it does
    not exist or cannot be read."""
    try:
        with open(envrc, "rb") as f:
            text = f.read(MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return []
    base = os.path.dirname(envrc)
    found: list[str] = []
    for line in text.splitlines():
        for command in line.replace("&&", ";").replace("||", ";").split(";"):
            words = _words(command)
            if not words:
                continue
            name, args = words[0], words[1:]
            if name == "use" and args:
                names: tuple[str, ...] = USE.get(args[0], ())
            elif name in SOURCES:
                given = tuple(a for a in args if not a.startswith("-"))
                names = given[:1] if name.startswith(("source", ".", "dotenv")) else given
                names = names or SOURCES[name] or ()
            else:
                continue
            for target in names:
                if "$" in target or "`" in target:
                    continue  # known only when direnv runs it
                path = os.path.normpath(os.path.join(base, os.path.expanduser(target)))
                found.append(path)
                if name.startswith("source_env") and os.path.isdir(path):
                    found.append(os.path.join(path, NAME))
    return list(dict.fromkeys(found))
