"""git: read-only subcommands, writing ones, networked ones, and the options that make any of
them run a program (`-c core.pager=sh`, `--ext-diff`, `--textconv`, `grep -O`).

An unknown subcommand is dynamic: it may be an alias, and an alias can be `!shell code`.
"""

from __future__ import annotations

from corral.toolguard.classify.options import parse
from corral.toolguard.classify.result import DYNAMIC, NETWORK, WRITES
from corral.toolguard.classify.simple_command import names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.toolguard.classify.simple_command import Command, Word

READ = names(
    """
    log status diff show rev-parse ls-files blame grep shortlog describe cat-file ls-tree
    rev-list merge-base name-rev for-each-ref show-ref count-objects whatchanged version
    check-ignore check-attr check-ref-format cherry range-diff diff-tree diff-files diff-index
    show-branch annotate var verify-pack get-tar-commit-id column
    """
)
WRITE = names(
    """
    add commit checkout switch restore reset merge rebase cherry-pick revert rm mv init clean
    apply am notes gc prune repack update-index update-ref symbolic-ref sparse-checkout
    format-patch bundle maintenance commit-tree hash-object mktag mktree read-tree write-tree
    pack-refs replace rerere fsck merge-file checkout-index prune-packed stage
    """
)
NETWORK_SUBCOMMANDS = names(
    "clone fetch pull push ls-remote send-email request-pull fetch-pack send-pack"
)
# Global options before the subcommand that take the next word as their value.
_GLOBAL_VALUES = ("git-dir", "work-tree", "namespace", "super-prefix", "attr-source")
# Options of read subcommands that write a file or run a program.
_WRITES = ("output",)
# options that run programs (--filters: cat-file runs the content filters, git-lfs downloads)
_RUNS = ("ext-diff", "textconv", "open-files-in-pager", "filters")
# Listing forms of subcommands that otherwise change the repository.
_LISTING = {
    "branch": names(
        """-a --all -r --remotes -v -vv --verbose -l --list --show-current --contains
        --no-contains --merged --no-merged --points-at --sort --format --color --no-color
        --column --no-column --abbrev --no-abbrev -i --ignore-case --omit-empty"""
    ),
    "tag": names(
        """-l --list -n --contains --no-contains --merged --no-merged --points-at --sort
        --format --color --column --no-column -i --ignore-case --omit-empty"""
    ),
}
_VALUED_LISTING = names("--contains --no-contains --merged --no-merged --points-at --sort --format")


# Options that point git at another repository or work tree. git obeys the config of whatever
# repository it works on (core.fsmonitor, core.pager, diff textconv and external drivers run
# programs), and corral protects only the repositories of the writable roots: a repository
# shipped as plain files in the workspace (`evil.git`) is one it does not.
_ELSEWHERE = ("-C", "--git-dir", "--work-tree", "--bare")


def git(cmd: Command) -> None:
    # a cd/pushd/popd anywhere in the command makes git dynamic (`Findings.result`)
    args = cmd.args
    i = 0
    while i < len(args):
        word = args[i]
        text = word.text
        if not word.static:
            cmd.found.flag(DYNAMIC, f"git: {word.raw} may expand to an option or a subcommand")
            return
        if text.startswith(("-c", "--config-env", "--exec-path=")):
            cmd.found.flag(DYNAMIC, f"git {text} can make git run any program")
            # (read on: what it does is still told, `git -c x=y clean -fdx`, r90a GITOPTSKIPS)
            i += 2 if text in ("-c", "--config-env") else 1
            continue
        if text.partition("=")[0] in _ELSEWHERE or text.startswith("-C"):
            cmd.found.flag(
                DYNAMIC,
                f"git {text.partition('=')[0]} works on a repository corral does not protect, "
                "and obeys its config (core.fsmonitor, core.pager, diff drivers run programs)",
            )
        if text == "-C" or text in tuple("--" + v for v in _GLOBAL_VALUES):
            i += 2
        elif text.startswith("-"):
            if text in ("--version", "--help", "-h", "--exec-path") or text.startswith(
                ("--list-cmds", "--html-path", "--man-path", "--info-path")
            ):
                return
            i += 1
        else:
            break
    if i >= len(args):
        return
    sub, rest = args[i].text, args[i + 1 :]
    found = cmd.found
    if sub in _SPECIAL:
        _SPECIAL[sub](cmd, sub, rest)
    elif sub in READ:
        _read(cmd, sub, rest)
    elif sub in NETWORK_SUBCOMMANDS:
        _network(cmd, sub, rest)
    elif sub in WRITE:
        _write(cmd, sub, rest)
    else:
        found.flag(DYNAMIC, f"git {sub}: unknown subcommand (it may be an alias)")


def _network(cmd: Command, sub: str, rest: list[Word]) -> None:
    found = cmd.found
    found.flag(NETWORK, f"git {sub} reaches the network")
    parsed = parse(rest, "bcjou", ("branch", "config", "origin", "depth", *_TRANSPORT_RUNS))
    for opt in parsed.opts:
        if (opt.long and any(opt.is_(name) for name in _TRANSPORT_RUNS)) or (
            sub == "clone" and not opt.long and opt.name in ("u", "c")
        ):
            # --upload-pack & co run a program, on this machine for a local "remote"
            found.flag(DYNAMIC, f"git {sub} {opt.word.text} runs a program")
    if parsed.opaque or any(w.text.startswith("ext::") or not w.static for w in rest):
        found.flag(DYNAMIC, f"git {sub}: an argument may run a program (ext::, options)")
    if sub == "clone" and len(parsed.positionals) > 1:
        path = parsed.positionals[1].text
        found.write(path, f"git clone writes {path}")


_TRANSPORT_RUNS = ("upload-pack", "receive-pack", "exec", "config")


def _read(cmd: Command, sub: str, rest: list[Word]) -> None:
    parsed = parse(rest, "", _WRITES)
    for word in parsed.opaque:
        cmd.found.flag(DYNAMIC, f"git {sub}: {word.raw} may expand to an option")
    for opt in parsed.opts:
        if opt.long and any(opt.is_(name) for name in _RUNS):
            cmd.found.flag(DYNAMIC, f"git {sub} --{opt.name} runs a program")
        elif sub == "grep" and not opt.long and opt.name == "O":
            cmd.found.flag(DYNAMIC, "git grep -O runs a program")
        elif opt.long and opt.is_("output"):
            path = opt.value or ""
            cmd.found.write(path, f"git {sub} --output writes {path}")


def _write(cmd: Command, sub: str, rest: list[Word]) -> None:
    found = cmd.found
    found.flag(WRITES, f"git {sub} changes the repository or working tree")
    parsed = parse(rest, "x", ("exec",))
    if sub == "rebase" and (parsed.has("exec", "x") or parsed.opaque):
        found.flag(DYNAMIC, "git rebase --exec runs commands")
    _destroys(cmd, sub, rest)
    if sub == "format-patch":
        for path in parsed.values("output-directory", "o"):
            found.write(path, f"git format-patch writes {path}")


def _destroys(cmd: Command, sub: str, rest: list[Word]) -> None:
    """What of git discards work wholesale (see Findings.destroy): uncommitted changes,
    untracked files, stashes (r90a DISCARDVIACHECKOUT). Read with each subcommand's own
    options that take a value (rebase's `-x` made `git clean -xn` a clean, r91c)."""
    parsed = parse(rest, "e", ("exclude",)) if sub == "clean" else parse(rest)
    words = {w.text for w in rest}
    forced = parsed.has("force", "f") or parsed.has("discard-changes")
    why = {
        "clean": "git clean deletes the files git does not track",
        "reset": "git reset --hard discards uncommitted changes",
        "checkout": "git checkout of paths, or forced, discards uncommitted changes",
        "switch": "git switch, forced, discards uncommitted changes",
        "restore": "git restore discards uncommitted changes",
        "rm": "git rm -r removes whole directories",
        "stash drop": "git stash drop deletes a stash",
        "stash clear": "git stash clear deletes every stash",
        "worktree remove": "git worktree remove --force deletes its uncommitted changes",
    }.get(sub)
    if why is None or (
        (sub == "clean" and parsed.has("dry-run", "n"))
        or (sub == "reset" and not parsed.has("hard"))
        or (sub == "checkout" and not (forced or "--" in words or "." in words))
        or (sub in ("switch", "worktree remove") and not forced)
        or (sub == "restore" and parsed.has("staged", "S") and not parsed.has("worktree", "W"))
        or (sub == "rm" and not parsed.has(short="r"))
    ):
        return
    cmd.found.destroy(why)


def _listing(cmd: Command, sub: str, rest: list[Word]) -> None:
    """`git branch`/`git tag` list unless given a name or a changing option."""
    allowed = _LISTING[sub]
    listing = any(w.text in ("-l", "--list") for w in rest)
    skip = False
    for word in rest:
        if skip:
            skip = False
            continue
        text = word.text
        if not word.static:
            if word.may_be_option or not listing:
                cmd.found.flag(DYNAMIC, f"git {sub}: {word.raw} may expand to an option")
                return
        elif text.startswith("-"):
            name = text.partition("=")[0]
            if name not in allowed and not (sub == "tag" and text[:2] == "-n"):
                cmd.found.flag(WRITES, f"git {sub} {text} changes the repository")
                return
            skip = name in _VALUED_LISTING and "=" not in text
        elif not listing:
            cmd.found.flag(WRITES, f"git {sub} {text} changes the repository")
            return


def _by_first(
    reads: frozenset[str], network: frozenset[str] = frozenset(), default_read: bool = True
) -> Callable[[Command, str, list[Word]], None]:
    """Subcommands with their own subcommands (`git stash list`, `git remote -v`)."""

    def rule(cmd: Command, sub: str, rest: list[Word]) -> None:
        first = next((w for w in rest if not (w.static and w.text.startswith("-"))), None)
        if first is not None and not first.static:
            cmd.found.flag(DYNAMIC, f"git {sub}: {first.raw} may expand to a subcommand")
        elif first is None:
            if not default_read:
                cmd.found.flag(WRITES, f"git {sub} changes the repository")
        elif first.text in network:
            cmd.found.flag(NETWORK, f"git {sub} {first.text} reaches the network")
        elif first.text not in reads:
            cmd.found.flag(WRITES, f"git {sub} {first.text} changes the repository")
        if first is not None and (sub, first.text) in _RUNS_COMMANDS:
            cmd.found.flag(DYNAMIC, f"git {sub} {first.text} runs commands")
        if first is not None and first.static:
            _destroys(cmd, f"{sub} {first.text}", rest)
        if first is None or (first.static and first.text in reads):
            # The read forms hand their options to log or diff (`stash list` is `log -g`,
            # `stash show` takes diff options, `bisect view` runs `git log`): --output writes,
            # --ext-diff and --textconv run programs, as for any read.
            _read(cmd, sub if first is None else f"{sub} {first.text}", rest)
        if sub == "bisect" and first is not None and first.text in ("view", "visualize"):
            _bisect_view(cmd, rest[rest.index(first) + 1 :])

    return rule


def _bisect_view(cmd: Command, rest: list[Word]) -> None:
    """`git bisect view` runs gitk when a display is set, `git log OPTIONS` when the first
    argument is an option, and otherwise the command it names (`tig`, any git subcommand)."""
    if not rest:
        cmd.found.flag(DYNAMIC, "git bisect view starts gitk when a display is available")
    elif not (rest[0].static and rest[0].text.startswith("-")):
        cmd.found.flag(DYNAMIC, f"git bisect view runs {rest[0].raw} (any git subcommand)")


_RUNS_COMMANDS = frozenset({("submodule", "foreach"), ("bisect", "run")})


def _config(cmd: Command, sub: str, rest: list[Word]) -> None:
    """`git config NAME`, `--get`, `--list`, `get`, `list` read; everything else writes."""
    if any(not w.static for w in rest):
        cmd.found.flag(DYNAMIC, "git config: an argument is built at run time")
        return
    options = {w.text.partition("=")[0] for w in rest if w.text.startswith("-")}
    positionals = [w.text for w in rest if not w.text.startswith("-")]
    if options & {"-e", "--edit"} or positionals[:1] == ["edit"]:
        cmd.found.flag(DYNAMIC, "git config --edit runs an editor")
        return
    getting = bool(options & _CONFIG_GETS) or positionals[:1] == ["get"]
    if positionals[:1] in (["get"], ["list"]):
        positionals = positionals[1:]
    if not options <= _CONFIG_READS or len(positionals) > (2 if getting else 1):
        cmd.found.flag(WRITES, "git config changes the configuration")


_CONFIG_GETS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch"})
_CONFIG_READS = _CONFIG_GETS | names(
    """
    --list -l --show-origin --show-scope --name-only --global --system --local --worktree
    --null -z --type --bool --int --bool-or-int --path --expiry-date --includes --no-includes
    --default --file -f --blob --all --regexp --value --fixed-value
    """
)


_REFLOG_WRITES = names("expire delete drop write")


def _reflog(cmd: Command, sub: str, rest: list[Word]) -> None:
    first = next((w.text for w in rest if not w.text.startswith("-")), "show")
    if first in _REFLOG_WRITES:
        cmd.found.flag(WRITES, f"git reflog {first} changes the repository")
    elif any(not w.static for w in rest):
        cmd.found.flag(DYNAMIC, "git reflog: an argument is built at run time")
    else:
        _read(cmd, "reflog", rest)  # `git reflog [show]` is `git log -g` with these options


_SPECIAL: dict[str, Callable[[Command, str, list[Word]], None]] = {
    "branch": _listing,
    "tag": _listing,
    "config": _config,
    "reflog": _reflog,
    "stash": _by_first(frozenset({"list", "show"}), default_read=False),
    "worktree": _by_first(frozenset({"list"})),
    "remote": _by_first(frozenset({"get-url", "-v"}), frozenset({"show", "update", "prune"})),
    "submodule": _by_first(frozenset({"status", "summary"}), frozenset({"update", "sync"})),
    "notes": _by_first(frozenset({"list", "show"})),
    "bisect": _by_first(frozenset({"log", "visualize", "view"}), default_read=False),
    "archive": lambda cmd, sub, rest: _archive(cmd, rest),
}


def _archive(cmd: Command, rest: list[Word]) -> None:
    # git archive runs the repository's filters (git-lfs smudge: a download from the address
    # in the work tree's .lfsconfig)
    cmd.found.flag(NETWORK, "git archive runs content filters, which may download (git-lfs)")
    parsed = parse(rest, "o", ("output", "remote", "exec", "prefix", "format"))
    if parsed.has("remote") or parsed.has("exec"):
        cmd.found.flag(NETWORK, "git archive --remote reaches the network")
    for path in parsed.values("output", "o"):
        cmd.found.write(path, f"git archive writes {path}")
    if parsed.opaque:
        cmd.found.flag(DYNAMIC, "git archive: an argument is built at run time")
