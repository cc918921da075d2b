"""Command-line options shared by `corral run`, `wrap`, `status` and `explain`.

A hand-written parser: argparse costs ~9 ms to import, a fifth of `corral run`'s budget, and the
contract is small. Options end at `--` or at the first word that is not an option, so
`corral run ls -la` and `corral run -- ls -la` mean the same.
"""

from __future__ import annotations

import os

from corral.errors import CorralError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class UsageError(CorralError):
    pass


MAX_TIMEOUT = 365 * 24 * 3600

# option -> (destination, takes a value, repeatable)
OPTIONS: dict[str, tuple[str, bool, bool]] = {
    "--mode": ("mode", True, False),
    "--cwd": ("cwd", True, False),
    "--allow-write": ("allow_write", True, True),
    "--deny-read": ("deny_read", True, True),
    "--network": ("network", False, False),
    "--no-network": ("no_network", False, False),
    "--allow-host": ("allow_host", True, True),
    "--config": ("config", True, False),
    "--timeout": ("timeout", True, False),
    "--backend": ("backend", True, False),
    "--writes": ("writes", True, False),
    "--approval": ("approval", True, False),
    "--json": ("json", False, False),
    "--help": ("help", False, False),
    "-h": ("help", False, False),
}

# which options each subcommand takes
ACCEPTS: dict[str, frozenset[str]] = {
    "run": frozenset(OPTIONS) - {"--json", "--approval"},
    "wrap": frozenset(OPTIONS) - {"--json", "--timeout", "--approval"},
    "status": frozenset(OPTIONS) - {"--timeout"},
    "explain": frozenset(OPTIONS) - {"--timeout"},
}


def parse(command: str, args: list[str]) -> tuple[dict[str, Any], list[str]]:
    """(options, remaining words) for `command`; raises UsageError naming the bad word."""
    opts: dict[str, Any] = {"allow_write": [], "deny_read": [], "allow_host": []}
    accepted = ACCEPTS[command]
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        name, eq, inline = word.partition("=")
        if name not in OPTIONS or name not in accepted:
            raise UsageError(
                f"corral {command}: unknown option {name} (see corral {command} --help)"
            )
        dest, takes_value, repeatable = OPTIONS[name]
        if takes_value:
            if eq:
                value = inline
            elif i + 1 < len(args) and args[i + 1] != "--":
                i += 1
                value = args[i]
            else:  # (`--allow-host -- CMD` took `--` as the host, r72d ALLOWHOSTDASH)
                raise UsageError(f"corral {command}: {name} needs a value")
            if repeatable:
                opts[dest].append(value)
            elif dest in opts:
                raise UsageError(f"corral {command}: {name} given twice")
            else:
                opts[dest] = value
        elif eq:
            raise UsageError(f"corral {command}: {name} takes no value")
        else:
            opts[dest] = True
        i += 1
    if opts.get("network") and opts.get("no_network"):
        raise UsageError(f"corral {command}: --network and --no-network contradict each other")
    if "timeout" in opts:
        try:
            opts["timeout"] = float(opts["timeout"])
        except ValueError:
            opts["timeout"] = -1.0
        if not 0 <= opts["timeout"] <= MAX_TIMEOUT:  # also refuses nan and inf
            raise UsageError(
                f"corral {command}: --timeout needs a number of seconds, 0 (none) to "
                f"{MAX_TIMEOUT} (a year)"
            )
    # Paths on the command line are relative to where the user typed them.
    for key in ("allow_write", "deny_read"):
        opts[key] = [_absolute(p) for p in opts[key]]
    return opts, args[i:]


def _absolute(path: str) -> str:
    if path.startswith(("urn:", "~", "$")):
        return path
    return os.path.abspath(path)
