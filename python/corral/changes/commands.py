"""Held change sets and the undo journal, as commands: list, show (with diffs), apply,
discard, undo. One implementation for `corral changes/apply/discard/undo` and
`:Sandbox changes/apply/discard/undo`; each returns an Outcome (what to print, what to warn
about, the exit status), never prints.

`now(stage)` gives what is protected now in the change set's writable roots (see
finish.read): the CLI resolves your configuration files for it, the editor its setup().
"""

from __future__ import annotations

import os

from corral.changes import finish, words
from corral.changes import journal as journals
from corral.changes import stage as stages
from corral.errors import CorralError
from corral.shown import shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from corral.changes.scan import Entry
    from corral.toolguard.ops.refusal import Refusal

    Now = Callable[[str], dict[str, list[str]]]

DIFF_BYTES = 256 * 1024  # a file larger than this is named, not shown
DIFF_LINES = 2000  # per change set shown
LIST_LINES = 1000  # paths listed per change set shown (a refused directory lists all below it)
HELD_LINES = 20  # held paths per change set in the listing of them all


class Outcome:
    __slots__ = ("code", "err", "out")

    def __init__(self, out: list[str] | None = None, err: list[str] | None = None) -> None:
        self.out = out or []
        self.err = err or []
        self.code = 0

    def as_dict(self) -> dict[str, Any]:
        """For a frontend: every line with its control characters escaped, tabs kept, as
        the CLI prints them (paths and diffs are what a sandboxed command named and wrote:
        a name with a newline forged `:Sandbox undo`'s messages, review r31b)."""
        return {"out": _escaped(self.out), "err": _escaped(self.err), "code": self.code}


def _escaped(lines: list[str]) -> list[str]:
    return [words.localized(shown(line).replace("\\x09", "\t")) for line in lines]


def _stage(change_id: str) -> str:
    stage = os.path.join(stages.root_dir(), os.path.basename(change_id))
    if not change_id or not os.path.isfile(os.path.join(stage, stages.REPORT)):
        raise CorralError(f"no held change set {change_id!r}; see {words.command('changes')}")
    return stage


def _paths(stage: str, given: list[str]) -> frozenset[str]:
    """PATH arguments as host paths: absolute, or relative to the command's workspace."""
    cwd = stages.read_plan(stage)["cwd"]
    return frozenset(os.path.normpath(os.path.join(cwd, p)) for p in given)


def _made(plan: dict[str, Any]) -> str:
    """`, from `make fmt` at 14:02` (the day too when not today): which run a change set
    is, beside its id (r51c STALEHINT: six sets from four workspaces were only ids)."""
    import time

    try:
        when = time.localtime(int(plan["created_ns"]) // 1_000_000_000)
    except (KeyError, TypeError, ValueError, OverflowError):
        return ""
    today = time.localtime()[:3] == when[:3]
    at = time.strftime("%H:%M" if today else "%Y-%m-%d %H:%M", when)
    words_ = [str(w) for w in plan.get("made_by") or []]
    if len(words_) == 1 and words_[0].startswith("the file tool's "):
        return f", from {words_[0]} at {at}"
    if not words_:
        return f", made at {at}"
    import shlex

    # (the script of the shell corral started for a typed line or a chat's call, as typed:
    # not `/bin/sh -c 'sh -c '"'"'...`, r64c MADEBYQUOTE)
    shells = ("/bin/sh", "/usr/bin/sh", "/bin/bash", "/usr/bin/bash")
    script = len(words_) == 3 and words_[0] in shells and words_[1] == "-c"
    made_by = words_[2] if script else shlex.join(words_)
    made_by = made_by if len(made_by) <= 80 else made_by[:77] + "..."
    return f", from `{made_by}` at {at}"


def _held_lines(
    report: dict[str, Any], workspace: str = "", plan: dict[str, Any] | None = None
) -> list[str]:
    where = f" in {workspace}" if workspace else ""
    lines = [
        f"{report['id']}: {report['status']}{where}{_made(plan or {})}"
        + (f" ({report['why']})" if report.get("why") else "")
    ]
    held = report["held"]
    for item in held[:HELD_LINES]:
        lines.append(f"  {item['path']}: {item.get('message') or item['code']}")
    if len(held) > HELD_LINES:
        lines.append(
            f"  (and {len(held) - HELD_LINES} more held: "
            f"{words.command('changes', report['id'])} lists them)"
        )
    for problem in report.get("problems", []):
        lines.append(f"  unread: {problem}")
    return [shown(line) for line in lines]


def held_ids() -> list[str]:
    """The ids of the held change sets, oldest first (for completion)."""
    return [os.path.basename(s) for s in stages.held()]


def listing(cwd: str = "") -> Outcome:
    """Every held change set, with what it holds and why: those of the workspace holding
    `cwd` first, then the others' under a line of their own (r58c CHANGESGLOBAL: as root,
    other workspaces' sets stood above one's own, mixed)."""
    from corral.paths import is_within

    with finish.Locked():
        stages.collect_garbage(stages.root_dir())
    found = list(stages.held())
    out = Outcome([] if found else ["no held change sets"])
    here: list[list[str]] = []
    elsewhere: list[list[str]] = []
    for stage in found:  # (every workspace's: each says which)
        try:
            plan = stages.read_plan(stage)
            workspace = plan["cwd"]
            roots = [str(r) for r in plan.get("roots") or []]
        except (OSError, ValueError, KeyError, EOFError, TypeError):
            plan, workspace, roots = {}, "", []
        report = stages.read_json(os.path.join(stage, stages.REPORT))
        ours = bool(cwd) and any(is_within(cwd, r) for r in roots)
        (here if ours or not cwd else elsewhere).append(_held_lines(report, workspace, plan))
    for lines in here:
        out.out += lines
    if elsewhere:
        out.out.append("held in other workspaces:" if here else "none held here; held in other "
                       "workspaces:")  # fmt: skip
        for lines in elsewhere:
            out.out += lines
    return out


def _text(path: str) -> list[str] | None:
    """A file's lines for a diff, or None when it is not text or too large to show."""
    from corral.paths import read_regular

    try:
        # (not a FIFO: opening one waits for a writer, and froze the editor, r40c FIFODIFF)
        data = read_regular(path, DIFF_BYTES + 1, follow=False)
    except FileNotFoundError:
        return []
    except OSError:
        return None  # (a link, or what cannot be read: no text to show)
    if len(data) > DIFF_BYTES or b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def _diff(host: str, staged: str, label: str, kind: str) -> list[str]:
    import difflib

    old = [] if kind == "added" else _text(host)
    new = [] if kind == "deleted" else _text(staged)
    # the name is the sandbox's to choose: escaped like every other line (terminal escapes)
    header = shown(f"diff --corral a/{label} b/{label}")
    if old is None or new is None:
        return [header, shown(f"Binary, link, special or large file {label} ({kind})")]
    lines = difflib.unified_diff(
        old, new, f"a/{label}" if kind != "added" else "/dev/null",
        f"b/{label}" if kind != "deleted" else "/dev/null",
    )  # fmt: skip
    return [header, *(shown(line.rstrip("\n")) for line in lines)]


def _mode_change(entry: Entry) -> str:
    """`0700 -> 1700`: the mode an existing directory would get, where it changes."""
    import stat

    from corral.changes.apply import OWNER, safe_mode

    try:
        st = os.lstat(entry.path)
    except OSError:
        return ""
    if not stat.S_ISDIR(st.st_mode):
        return ""
    old = stat.S_IMODE(st.st_mode)
    new = safe_mode(entry.mode, old) | (old & OWNER)
    return f"{old:04o} -> {new:04o}" if new != old else ""


def _history(checked: list[tuple[Entry, Refusal | None]]) -> list[str]:
    """The new commits of each git directory whose history is held, as corral reads them:
    what `apply ID .git` would put on your refs (r59a ESCREVIEW: git's own listing printed
    what a commit message's escapes made it)."""
    from corral.changes.git_history import history_lines

    out: list[str] = []
    done: set[str] = set()
    for entry, refusal in checked:
        host_git = finish.git_dir_of(entry.path)
        if (
            refusal is None
            or host_git is None
            or not refusal.message.startswith(words.HISTORY_WAITS)
        ):
            continue
        if host_git in done:
            continue
        done.add(host_git)
        upper_git = os.path.join(entry.upper_root(), os.path.relpath(host_git, entry.root))
        out.append(shown(f"  new history in {host_git}, newest first (what applying "
                                "it puts on your refs; each commit's files as corral reads "
                                "them):"))  # fmt: skip
        out += [shown(f"    {line}") for line in history_lines(host_git, upper_git)]
    return out


def show(change_id: str, now: Now, diffs: bool = False) -> Outcome:
    """What one held change set holds, path by path with its verdict; with `diffs`, a unified
    diff of each file against the workspace (what applying it would change)."""
    from corral.changes.merge import base_of, mergeable
    from corral.changes.scan import replaced

    with finish.Locked():
        stage = _stage(change_id)
        plan, checked, problems = finish.read(stage, now(stage))
    out = Outcome([shown(f"{plan['id']} (workspace {plan['cwd']}{_made(plan)})")])
    # why the whole of it waits for you, beyond each path's own verdict
    if plan.get("unreadable"):
        why = "; ".join(plan["unreadable"])
        out.out.append(shown(f"  held for review: corral cannot read ahead what the host "
                                    f"runs through {why}"))  # fmt: skip
    elif plan.get("writes") == "review":
        out.out.append('  held for review: sandbox.writes = "review"')
    shown_lines = listed = 0
    unlisted: dict[str, int] = {}  # past LIST_LINES: how many more, by verdict
    gone: dict[str, list[str]] = {}  # replaced directory -> the host paths it takes away
    for entry, refusal in checked:
        if listed >= LIST_LINES:  # (r37c DIFFFLOOD: 200,000 paths below a refused directory)
            key = "held" if refusal else "passing"
            unlisted[key] = unlisted.get(key, 0) + 1
            continue
        gone[entry.path] = replaced(entry)[0]
        if entry.kind == "dir" and refusal is None and not gone[entry.path]:
            mode = _mode_change(entry)
            if mode:
                out.out.append(shown(f"  mode    {entry.path}: {mode}"))
            continue
        verdict = f"held: {refusal.message}" if refusal else "passes the check"
        change = "delete" if entry.kind == "whiteout" else entry.kind
        if gone.get(entry.path):
            change = "replace"
            verdict += f"; deletes {len(gone[entry.path])} of the host's entries in it:"
        where = f"{entry.path} -> {entry.target}" if entry.kind == "link" else entry.path
        out.out.append(shown(f"  {change:7} {where}: {verdict}"))
        listed += 1
        out.out += [shown(f"    delete {p}") for p in gone.get(entry.path, ())[:50]]
        if len(gone.get(entry.path, ())) > 50:
            out.out.append(f"    (and {len(gone[entry.path]) - 50} more)")
    if unlisted:
        counts = ", ".join(f"{n} {verdict}" for verdict, n in sorted(unlisted.items()))
        out.out.append(
            f"  (and {sum(unlisted.values())} more paths not listed: {counts}; a PATH that is "
            "a directory applies what is below it)"
        )
    out.out += [shown(f"  unread: {problem}") for problem in problems]
    out.out += _history(checked)
    if diffs:
        for path in (p for paths in gone.values() for p in paths):
            if shown_lines > DIFF_LINES:
                break
            lines = _diff(path, path, os.path.relpath(path, plan["cwd"]), "deleted")
            out.out += lines[: DIFF_LINES + 1 - shown_lines]  # (one file of 262,144 lines)
            shown_lines += len(lines)
        for entry, _ in checked:
            if entry.kind in ("dir", "special") or shown_lines > DIFF_LINES:
                continue
            kind = "deleted" if entry.kind == "whiteout" else (
                "modified" if os.path.lexists(entry.path) else "added"
            )  # fmt: skip
            label = os.path.relpath(entry.path, plan["cwd"])
            against = entry.path
            base = base_of(stage, entry.path) if kind == "modified" else None
            if base is not None and _text(base) != _text(entry.path):
                # (the host's copy changed since the run: against it, the diff would show
                # that change undone, which a merging apply does not do, see merge; where
                # apply cannot merge, against your copy: what --overwrite puts there, r73c
                # SHOWOVERWRITE)
                merges, why = mergeable(stage, entry)
                if merges:
                    out.out.append(shown(
                        f"({label} changed in your copy since the command ran: the command's "
                        "change to the file as it saw it, which apply merges into yours)"
                    ))  # fmt: skip
                    against = base
                else:
                    out.out.append(shown(
                        f"({label} changed in your copy since the command ran, and "
                        f"{why or 'corral cannot merge it'}: against your copy, what "
                        "--overwrite would put there)"
                    ))  # fmt: skip
            lines = _diff(against, entry.source, label, kind)
            out.out += lines[: DIFF_LINES + 1 - shown_lines]
            shown_lines += len(lines)
        if shown_lines > DIFF_LINES:
            out.out.append(f"(diffs cut after {DIFF_LINES} lines)")
    # (what to do next, where the reader ends up: r33b)
    # (the paths the run's own line named, not only `[PATH...]`: r58c CHANGESHINT)
    held = finish.report(stage).get("held") or []
    paths = finish.apply_args(held) if held else ["[PATH...]"]
    out.out.append(shown(
        f"apply: {words.command('apply', plan['id'], *paths)} (a PATH that is a directory "
        "takes what is below it; a held path is applied only when named); "
        f"drop: {words.command('discard', plan['id'])}"
    ))  # fmt: skip
    return out


OVERWRITE = "--overwrite"


def apply(change_id: str, paths: list[str], now: Now) -> Outcome:
    """Apply what passes the check, and the PATHs named (also refused ones: naming them is
    the user's decision; one the host changed since the run only with --overwrite)."""
    from corral.paths import is_within

    overwrite = OVERWRITE in paths
    paths = [p for p in paths if p != OVERWRITE]
    with finish.Locked():
        stage = _stage(change_id)
        plan, checked, problems = finish.read(stage, now(stage))
        wanted = _paths(stage, paths)
        for path in sorted(wanted):  # (a typo applied nothing and said "applied 0", r39c)
            if not any(is_within(e.path, path) or is_within(path, e.path) for e, _ in checked):
                raise CorralError(f"{path} is not in change set {change_id}: see "
                                  f"{words.command('changes', change_id)}")  # fmt: skip
        # (held whole, a set gives only what is named: r73c APPLYSUBSET)
        whole = bool(wanted) and finish.held_whole(stage, plan)
        report = finish.settle(
            stage, plan, checked, problems, force=wanted, hold_all=whole, overwrite=overwrite
        )
        if wanted and report.get("applied") and report.get("held") and os.path.isdir(stage):
            # What was held with what you named may pass now (a commit of a new module you
            # applied: r48c U2, its git state stayed held, with the old reason, until a
            # second `apply` with no path)
            plan, checked, problems = finish.read(stage, now(stage))
            again = finish.settle(stage, plan, checked, problems, hold_all=whole,
                                  overwrite=overwrite)  # fmt: skip
            report = _merged(report, again)
    if not report.get("applied") and report.get("held"):
        # (every path refused and none named: "applied 0 added" with status 0 read as
        # done, r46c F4)
        # (the way on is the last line of describe's: it names a venv as one path and
        # adds --overwrite for what the host changed since, r51c STALEHINT)
        why = (
            f"nothing applied: what you named of {change_id} is still held (why: below)"
            if wanted  # (r64c SAMEHELD: "name the ones you want", after naming them)
            else f"nothing applied: every path of {change_id} is held; name the ones you want "
            f"({words.command('apply', change_id, '.')} takes all of them)"
        )  # (the `.`: said nowhere, r68c APPLYALL)
        done = Outcome([], [why, *finish.describe(report, words.frontend())])
        done.code = 1
        return done
    frontend = words.frontend()
    return Outcome(finish.applied(report, frontend, always=True), finish.describe(report, frontend))


def _merged(first: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """One report of two settles of the same change set, the second's held list."""
    applied = [*first.get("applied", []), *then.get("applied", [])]
    counts: dict[str, int] = {}
    for report in (first, then):
        for key, value in (report.get("counts") or {}).items():
            counts[key] = counts.get(key, 0) + int(value)
    return {**then, "applied": applied, "counts": counts}


def discard(change_id: str, paths: list[str]) -> Outcome:
    """Drop a held change set, or only the PATHs named from it."""
    from corral.changes.apply import discard as drop
    from corral.paths import is_within

    with finish.Locked():
        stage = _stage(change_id)
        if not paths:
            stages.remove(stage)
            return Outcome([f"discarded {change_id}"])
        wanted = _paths(stage, paths)
        _, checked, _ = finish.read(stage)
        for entry, _ in checked:
            if any(is_within(entry.path, w) for w in wanted):
                drop(entry)
        if stages.is_empty(stage):
            stages.remove(stage)
    return Outcome([f"discarded {len(wanted)} path(s) from {change_id}"])


def _touched(entry: str) -> list[str]:
    try:
        return [r["path"] for r in journals.records(entry)]
    except (OSError, ValueError, KeyError):
        return []


def _roots_of(entry: str) -> list[str]:
    """The directories an undo of `entry` writes in: those of the paths it journaled."""
    return list(dict.fromkeys(os.path.dirname(p) for p in _touched(entry)))


def _pick(names: list[str], change_id: str | None, cwd: str | None) -> str:
    """The journal entry to undo: the one named, else the newest that changed a path in
    `cwd` (your workspace: another workspace's newer change set is not yours to undo from
    here; "" when there is none), else the newest. A newer entry that changed a path of it,
    or a directory above one, must be undone first."""
    from corral.paths import is_within

    read: dict[str, list[str]] = {}

    def touched(entry: str) -> list[str]:  # (each entry's records read once)
        if entry not in read:
            read[entry] = _touched(entry)
        return read[entry]

    labels = _labels(names)
    if change_id:
        named = os.path.basename(change_id)
        chosen = next((n for n in reversed(names) if named in (n, labels[n])), None)
        if chosen is None:
            raise CorralError(f"no applied change set {change_id} in the undo journal")
    elif cwd:
        found = (n for n in reversed(names) if any(is_within(p, cwd) for p in touched(n)))
        chosen = next(found, "")
        if not chosen:
            return ""
    else:
        chosen = names[-1]
    mine = touched(chosen)
    for later in names[names.index(chosen) + 1 :]:
        if _id_of(later) == _id_of(chosen):
            # (a held part applied later, `corral apply`: undoing the run's part first
            # deleted the objects that part's refs name, r58c UNDOID)
            raise CorralError(
                f"{labels[later]}, what was held of {labels[chosen]} and applied later, "
                f"is undone first: {words.command('undo', labels[later])}"
            )
        if any(is_within(p, q) or is_within(q, p) for p in touched(later) for q in mine):
            raise CorralError(
                f"{labels[later]}, applied after {labels[chosen]}, changed the same paths: "
                "undo it first"
            )
    return chosen


UNDO_LISTED = 20  # applied change sets `corral undo --list` names


def _id_of(entry: str) -> str:
    """The change set's id of an undo journal's entry (`<order>-<id>`), as `undo --list`
    names it (r58c UNDOID: messages named journal entries the list never showed)."""
    return entry.split("-", 1)[1] if "-" in entry else entry


def _labels(entries: list[str]) -> dict[str, str]:
    """Each undo journal entry's name in undo's words: its change set's id, and for a part of
    that change set applied later (what was held, `corral apply`) the id and `.1`, `.2`, ...
    in the order applied (r89 UNDODUPID: the list named both parts alike)."""
    seen: dict[str, int] = {}
    labels: dict[str, str] = {}
    for entry in entries:
        change_id = _id_of(entry)
        count = seen.get(change_id, 0)
        labels[entry] = f"{change_id}.{count}" if count else change_id
        seen[change_id] = count + 1
    return labels


def undo_list(cwd: str | None = None) -> Outcome:
    """The applied change sets undo can take back, newest first: those that changed your
    workspace (`cwd`), with when, what made them and what they changed; the first is what
    `corral undo` takes (r52c UNDOLIST: nothing named them, and an older one could be
    undone only by an id nothing printed)."""
    from corral.paths import is_within

    names = journals.entries()
    mine = [n for n in reversed(names) if not cwd or any(is_within(p, cwd) for p in _touched(n))]
    labels = _labels(names)
    if not mine:
        where = f" in {cwd}" if cwd else ""
        return Outcome([f"nothing to undo{where}"])
    out = Outcome([f"applied change sets{' in ' + cwd if cwd else ''}, newest first (undo "
                   f"takes the first: {words.command('undo')}; another: "
                   f"{words.command('undo', 'ID')}, once those after it are undone):"])  # fmt: skip
    for name in mine[:UNDO_LISTED]:
        try:
            report = stages.read_json(os.path.join(stages.journal_dir(), name, stages.REPORT))
        except (OSError, ValueError):
            report = {}
        change_id = _id_of(name)
        if not report.get("created_ns"):
            report["created_ns"] = int(change_id.split("-")[0], 16) if "-" in change_id else 0
        counts = report.get("counts") or {}
        touched = _touched(name)
        # (the workspace's files first, git's own after: r61c GITCOUNTS)
        touched.sort(key=lambda p: "/.git/" in p)
        paths = [os.path.relpath(p, cwd) if cwd else p for p in touched]
        more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
        # (a held part applied later is journaled under its change set's id too: said so)
        part = " (what was held, applied later)" if labels[name] != change_id else ""
        out.out.append(shown(
            f"  {labels[name]}{part}{_made(report)}: {counts.get('added', 0)} added, "
            f"{counts.get('modified', 0)} modified, {counts.get('deleted', 0)} deleted: "
            f"{', '.join(paths[:3])}{more}"
        ))  # fmt: skip
    if len(mine) > UNDO_LISTED:
        out.out.append(f"  (and {len(mine) - UNDO_LISTED} older)")
    return out


def undo(change_id: str | None = None, cwd: str | None = None) -> Outcome:
    """Undo the change set named, or the newest that changed your workspace (`cwd`)."""
    with finish.Locked():
        names = journals.entries()
        if not names and change_id:  # (an id is an error when unknown, journal or not: r90t)
            raise CorralError(f"no applied change set {change_id} in the undo journal")
        if not names:
            return Outcome(["nothing to undo"])
        newest = _pick(names, change_id, cwd)
        if not newest:
            return Outcome([f"nothing to undo in {cwd} ({words.command('undo', 'ID')} undoes a "
                            "change set of another workspace)"])  # fmt: skip
        label = _labels(names)[newest]
        busy = stages.direct_writers(_roots_of(newest))
        if busy:
            why = f"a command with direct writes runs in this workspace (pid {busy[0]})"
            out = Outcome([], [f"{label} not undone: {why}; undo once it has ended"])
            out.code = 1
            return out
        conflicts = journals.conflicts(newest)
        if conflicts:
            out = Outcome([], [*conflicts, f"{label} not undone: nothing was changed"])
            out.code = 1
            return out
        done = journals.undo(newest)
    return Outcome([*_briefly(done), f"undid {label}"])


UNDO_LINES = 20  # what undo says path by path; past it, a count by kind and directory


def _briefly(done: list[str]) -> list[str]:
    """Undo's lines, those past UNDO_LINES counted: a venv undone said 949 "removed" lines
    (r77d UNDOVERBOSE). Lines that are not a plain "restored" or "removed" (kept files, a
    file back in its held change set) are all said."""
    plain = [d for d in done if d.startswith(("restored /", "removed /"))]
    if len(plain) <= UNDO_LINES:
        return done
    rest = plain[UNDO_LINES // 2 :]
    counted = set(rest)  # (a set: a list looked up per line was quadratic)
    said = [d for d in done if d not in counted]
    paths = [d.split(" ", 1)[1] for d in rest]
    below = os.path.commonpath(paths) if len(paths) > 1 else paths[0]
    removed = sum(d.startswith("removed ") for d in rest)
    return [
        *said,
        f"... and {len(rest)} more below {below} ({removed} removed, {len(rest) - removed} "
        "restored)",
    ]
