"""How corral names its change-set commands to you: `corral apply ID` in a terminal,
`:Sandbox apply ID` in Neovim, where the `corral` command may not be installed at all.

The editor's engine says it is the editor (CORRAL_FRONTEND=nvim, set by the remote plugin for
its own process); a change set records which frontend started it, for the check that runs after
the command, in a process of its own.
"""

from __future__ import annotations

import os

NVIM = "nvim"
# how a path held only because another is held is said (finish lists those after the
# others, and names a venv held whole as one in the apply hint)
HELD_WITH = "held with the rest of"
HELD_WITH_VENV = f"{HELD_WITH} the venv "
HELD_WITH_GIT = f"{HELD_WITH} its repository's HEAD, refs and index"
# how a build tree's paths are held (finish names the tree as one path in the apply hint)
IN_BUILD_TREE = "in the build tree "
# how a path git ignores is held (finish names the highest ignored directory as one path)
IN_IGNORED = "in what git ignores: "
# (said inside parentheses: none of its own, r89 IGNOREDMSGPARENS)
IGNORED_WHY = (
    "`git status` never shows a change there, and host tools run what lands in such "
    "places unread, such as a build's outputs, node_modules, a venv or a hook's local "
    "script; apply it if your command made it, or see sandbox.ignored_files"
)
# what is held with a whole directory, and how that directory is named in its message
NAMED_AS_ONE = (HELD_WITH_VENV, IN_BUILD_TREE, IN_IGNORED)
HELD_AS_ONE = (HELD_WITH, IN_BUILD_TREE, IN_IGNORED)
# (which one, and why, is said on a line of its own: "see there" pointed nowhere when that
# line was cut from a short listing, r61c INDEXSEE)
HELD_GIT_WHY = (
    "applied or held together; the one held for its own reason says why, in this change "
    "set's listing"  # (not `corral changes ID`: a literal ID, r72d IDPLACEHOLDER)
)
# how sandbox.git_history = "hold" starts what it says of new history (finish names its git
# directory as one path in the apply hint, when nothing else there is held)
HISTORY_WAITS = "a command's commits wait for your review"


def named_unit(message: str, prefix: str, path: str) -> str:
    """The directory a held path's message (`prefix`, the directory, " (", why) names as
    held whole: the longest that holds `path`, as its name may have " (" in it too (r86a
    UNITPAREN: a directory ` (run.log` had the whole workspace named)."""
    from corral.paths import is_within

    body = message[len(prefix) :]
    cuts = [i for i in range(len(body)) if body.startswith(" (", i)]
    for i in reversed(cuts):
        if is_within(path, body[:i]):
            return body[:i]
    return body.split(" (", 1)[0]


def frontend() -> str:
    """ "nvim" in the editor's engine, "cli" elsewhere."""
    return NVIM if os.environ.get("CORRAL_FRONTEND") == NVIM else "cli"


def command(verb: str, *args: str, frontend_name: str | None = None) -> str:
    """`corral VERB ARGS` or `:Sandbox VERB ARGS`, for this process's frontend or the one
    named."""
    if (frontend_name or frontend()) == NVIM:
        # (an Ex command line splits at spaces: a name with one, typed back, is kept whole)
        return " ".join(
            [":Sandbox", verb, *(a.replace("\\", "\\\\").replace(" ", "\\ ") for a in args)]
        )
    import shlex

    return " ".join(["corral", verb, *(a if a == "[PATH...]" else shlex.quote(a) for a in args)])


VERBS = ("changes", "apply", "discard", "undo")


def localized(line: str) -> str:
    """A line with the other frontend's commands (`:Sandbox changes ID` in a reason the
    editor stored, read in a terminal) in this process's words (r77d CLINVIMWORDS)."""
    import re

    verbs = "|".join(VERBS)
    if frontend() == NVIM:
        return re.sub(rf"\bcorral ({verbs})\b", r":Sandbox \1", line)
    return re.sub(rf":Sandbox ({verbs})\b", r"corral \1", line)
