"""Bash risk classifier: what a command may do, decided before it runs.

`classify(command)` parses the command with bashlex and walks every part of it (lists,
pipelines, subshells, groups, if/for/while/until, functions, redirections, substitutions); the
riskiest part decides the kind, from least to most risky:

- read-only: only known read-only tools, with options that neither write nor run programs,
  and no redirection into a file. Tools with an option syntax of their own (xxd, tree) are
  read the way they read it, never letting an option swallow the file they write; package
  managers read only for exact, option-free questions (`pip list`), and never when they
  load the project's configuration or code to answer (npm and its `.npmrc`, mvn, gradle,
  cargo, go...); docker and podman never (their daemon may be anywhere);
- writes: redirections into files, `tee`, `sed -i`, cp/mv/rm/mkdir/touch..., git commands
  that change the repository, build tools and test runners (they run the project's code,
  which the sandbox confines);
- network: curl, wget, ssh, rsync to a host, `git fetch/pull/push/clone`, package installs;
- dynamic: what cannot be known before it runs. That is anything bashlex cannot parse;
  command or process substitution; a command name that is not static (`$CMD`, `$'\\x72m'`,
  `{rm,x}`); `eval`, `source`, `exec`, `command`, `trap`; shells and interpreters running
  inline code, a script or their input; editors, pagers and other tools that run commands
  of their own; read-only tools given options that run programs (`find -exec`, `xargs`,
  `rg --pre`, `git -c`, `awk 'BEGIN{system(...)}'`, `sed 'e ...'`, tar's `--to-command`);
  arguments that may expand into such options (`rg foo *` with a file named `--pre=sh`);
  environment assignments of any name outside a short allowlist of harmless ones (LANG,
  LC_*, TZ, TERM, COLUMNS, colour switches): `PAGER=`, `GREP=`, `GIT_*=`, `PATH=`, `TMPDIR=`...,
  `export`, `declare -x`, `env NAME=`, and builtins that set or unset an uppercase name
  (`unset PATH`, `read -a PATH`, `for HOME in`); `set` and
  `shopt` options that change how later words are read (`set -k`, `shopt -s expand_aliases`);
  arithmetic that is not a constant (`${a[0]:x}`); wrappers and compressors given an option
  outside their allowlist; and every command this classifier does not know. An unknown command is
  dynamic, not "writes": we cannot tell what it does, and the classifier fails closed;
- privileged: sudo, su, doas, pkexec... anywhere, also behind env, nice, timeout, xargs,
  `find -exec`, `bash -c` or a substitution. Callers always refuse it.

Options that write (`sort -o f`, `find -delete`, `sed -i`, `sed 's/a/b/w f'`, awk's
`print > "f"`) make a command "writes" and name the file; options that run programs make it
dynamic. The classifier is advisory: the OS sandbox must hold on its own.

`classify` never raises and remembers its last 4096 answers (`classify.cache_info()`).
`shell_policy` applies the user's allow and deny lists (see `shell_policy.py`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from corral.toolguard.classify.result import (
    DYNAMIC,
    NETWORK,
    PRIVILEGED,
    READ_ONLY,
    RISK,
    WRITES,
    Classification,
    Findings,
)
from corral.toolguard.classify.shell_policy import ShellVerdict, shell_policy

__all__ = [
    "DYNAMIC",
    "NETWORK",
    "PRIVILEGED",
    "READ_ONLY",
    "RISK",
    "WRITES",
    "Classification",
    "ShellVerdict",
    "classify",
    "shell_policy",
]

# Longer input is not parsed: bashlex needs ~2 s for 128 KiB of short commands on a small
# machine, and its time grows with the length.
MAX_LENGTH = 128 * 1024
# (bash's blanks only: `\s` took U+00A0, which bash reads as part of a word, r91c)
TIMED = re.compile(r"[ \t\n]*time(?:[ \t]+-p)?[ \t]+(?=[^ \t\n;&|])")


@lru_cache(maxsize=4096)
def classify(command: str) -> Classification:
    """Classify a bash command; never raises (a failure of its own is "dynamic")."""
    found = Findings()
    try:
        if len(command) > MAX_LENGTH:
            found.flag(DYNAMIC, f"too long to analyse ({len(command)} characters)")
            found.destroy("what it does cannot be read, so it may delete anything")
        else:
            from corral.toolguard.classify.walk import (
                walk_text,  # bashlex and the rules load on first use
            )

            # bash's `time` keyword before a pipeline, which bashlex cannot parse: the
            # pipeline is what runs (r90a TIMEPREFIX: `time rm -rf build` was told nothing)
            timed = TIMED.match(command)
            walk_text(command[timed.end() :] if timed else command, found)
    except Exception as e:  # the classifier's own bug must fail closed, not open
        found.flag(DYNAMIC, f"classifier error: {type(e).__name__}: {e}")
        found.destroy("what it does cannot be read, so it may delete anything")
    return found.result()
