"""Environment variables that change which code a command runs.

`PAGER=sh git log`, `LD_PRELOAD=x.so ls` or `HOME=/tmp/evil git log` (a `.gitconfig` with
`core.pager`) turn a read-only tool into a launcher. Setting one of these, as a prefix or as a
plain assignment, makes the command dynamic.
"""

from __future__ import annotations

from corral.classify.result import DYNAMIC

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from corral.classify.result import Findings

RISKY_NAMES = frozenset(
    {
        "PAGER", "MANPAGER", "SYSTEMD_PAGER", "BAT_PAGER", "DELTA_PAGER",
        "EDITOR", "VISUAL", "BROWSER", "SHELL", "TERMINAL",
        "ENV", "ZDOTDIR", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4",
        "SHELLOPTS", "IFS", "PATH", "CDPATH", "HOME", "GLOBIGNORE",
        "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_HOME", "XDG_DATA_DIRS",
        "GCONV_PATH", "LOCPATH", "NLSPATH", "GLIBC_TUNABLES", "HOSTALIASES", "RESOLV_HOST_CONF",
        "RIPGREP_CONFIG_PATH", "TAR_OPTIONS", "GREP_OPTIONS", "AWKPATH", "AWKLIBPATH",
        "SSH_ASKPASS", "SUDO_ASKPASS", "GPG_AGENT_INFO", "MAKEFLAGS", "TMUX",
        "LESSOPEN", "LESSCLOSE", "LESSKEY", "LESSKEYIN", "LESSEDIT", "LESS",
        "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
        "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE", "NPM_CONFIG_PREFIX", "PERLIO",
        # review 2: bash's own lookup and parsing, and configuration that loads code
        "EXECIGNORE", "POSIXLY_CORRECT", "OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES",
        "APT_CONFIG", "MANOPT", "GNUPGHOME",
    }
)  # fmt: skip
RISKY_PREFIXES = (
    "LD_", "DYLD_", "GIT_", "BASH_", "BASHOPTS", "PYTHON", "NODE_", "PERL", "RUBY", "LUA_",
    "NPM_CONFIG_", "PIP_", "CARGO_", "RUSTC", "GOFLAGS", "TCL", "TK_", "R_",
)  # fmt: skip


def is_risky(name: str) -> bool:
    return name in RISKY_NAMES or name.startswith(RISKY_PREFIXES)


def split_assignment(text: str) -> tuple[str, str] | None:
    """(`NAME`, value) for `NAME=value` or `NAME+=value`; None for anything else."""
    name, eq, value = text.partition("=")
    if not eq:
        return None
    name = name.removesuffix("+")
    if not name or name[0].isdigit() or not all(c.isalnum() or c == "_" for c in name):
        return None
    return name, value


def assignments_env(texts: Iterable[str], found: Findings, how: str = "") -> dict[str, str]:
    """{NAME: value} for NAME=value words; a name that changes what runs is dynamic."""
    env: dict[str, str] = {}
    for text in texts:
        pair = split_assignment(text)
        if pair is None:
            continue
        name, value = pair
        env[name] = value
        if is_risky(name):
            found.flag(DYNAMIC, f"setting {name} {how or 'in the shell'} changes what runs")
    return env
