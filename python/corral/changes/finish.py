"""After a sandboxed command: check its change set, apply what passes, hold the rest, report.

Runs in `corral run`'s own process, or, for an argv started by another program (jobstart), from
the launcher script once bwrap has exited (`main`): no caller can get unchecked writes by
forgetting a callback. It prints one `corral: ...` line per held path on stderr and writes the
report (what changed, what was held and why) for frontends to read with `report()`.
"""

from __future__ import annotations

import fcntl
import os
import stat
import sys

from corral.changes import stage as stages
from corral.changes import words
from corral.shown import shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from corral.changes.scan import Entry
    from corral.toolguard.ops.refusal import Refusal

LISTED = 50  # reasons listed on stderr; the report keeps them all
GROUPED = 5  # paths named for one reason
NAMED = 3  # refused paths spelled out in the apply hint (more: [PATH...])
FAILED = 125


class Locked:
    """One change set at a time is applied, undone or discarded (per user)."""

    def __enter__(self) -> Locked:
        os.makedirs(stages.root_dir(), mode=0o700, exist_ok=True)
        self.fd = os.open(stages.lock_path(), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def read(
    stage: str, now: dict[str, list[str]] | None = None
) -> tuple[dict[str, Any], list[tuple[Entry, Refusal | None]], list[str]]:
    """(plan, every entry with its verdict, what could not be read) of a staging area.

    `now`: protected paths, names and chat patterns of the configuration as it is now, for a
    change set checked later than its command ran (a `.envrc` or hook manager set up since)."""
    from corral.changes.rules import Checker, verdicts
    from corral.changes.scan import scan

    stages.wait_sandbox_gone(stage)
    plan = stages.read_plan(stage)
    checked_plan = with_now(plan, now or {})
    _below_the_top(plan, checked_plan)
    anyway = words.command("apply", plan["id"], frontend_name=plan.get("frontend"))
    checker = Checker(checked_plan, f"to apply it anyway: {anyway}")
    entries: list[Entry] = []
    problems: list[str] = []
    for i, root in enumerate(plan["roots"]):
        found, trouble = scan(root, stages.upper(stage, i))
        entries += found
        problems += trouble
    return plan, verdicts(checker, entries), problems


def with_now(plan: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    """The plan with what is protected now added (see read): lists joined, tables merged (the
    plan's own entries win), and a string taken from now where it says anything."""
    checked = dict(plan)
    for key, more in now.items():
        if isinstance(more, dict):
            checked[key] = {**more, **(plan.get(key) or {})}
        elif isinstance(more, str):  # (home_dot: $HOME where it is writable)
            checked[key] = more or plan.get(key, "")
        else:
            checked[key] = sorted({*plan.get(key, ()), *more})
    return checked


def _below_the_top(plan: dict[str, Any], checked_plan: dict[str, Any]) -> None:
    """What the host-run configs below each root's top name (`app/.envrc`), read now: held
    like protected paths; what they do that cannot be read ahead holds the change set for
    review (plan["unreadable"]), unless sandbox.unreadable_configs = "apply"."""
    from corral.sandbox.protect import nested

    for root in plan["roots"]:
        if not os.path.isdir(root):
            continue
        named, module_dirs, unknown, cut, names = nested.referenced(root)
        checked_plan["protected_names"] = list(
            dict.fromkeys([*checked_plan["protected_names"], *names])
        )
        if cut:  # (every path refused as unchecked, and the whole held: see rules)
            checked_plan["incomplete"] = cut
            plan["unreadable"] = [*plan.get("unreadable", ()), cut]
        checked_plan["protected"] = sorted({*checked_plan["protected"], *named})
        why = dict(checked_plan.get("protected_why") or {})
        for path in named:
            why.setdefault(path, "named by a host-run config around the workspace")
        checked_plan["protected_why"] = why
        checked_plan["module_dirs"] = [*checked_plan.get("module_dirs", ()), *module_dirs]
        if unknown and plan.get("unreadable_configs", "hold") == "hold":
            more = f" and {len(unknown) - 2} more" if len(unknown) > 2 else ""
            plan["unreadable"] = [*plan.get("unreadable", ()), "; ".join(unknown[:2]) + more]


def _counts(changed: list[dict[str, str]]) -> dict[str, int]:
    counts = {"added": 0, "modified": 0, "deleted": 0}
    for c in changed:
        counts[c["change"]] += 1
    return counts


def _whole(checked: list[tuple[Entry, Refusal | None]], accepted: list[Entry]) -> frozenset[str]:
    """Accepted directories with nothing held below them, no deletion and no hard-linked file
    (each applied file gets its own inode): apply may move them in one rename."""
    taken = {id(e) for e in accepted}
    impure: set[str] = set()
    for entry, _ in checked:
        if (
            id(entry) not in taken
            or entry.kind == "whiteout"  # a host entry deleted: not a thing to move there
            or (entry.kind == "file" and entry.nlink > 1)
        ):
            parent = os.path.dirname(entry.path)
            while parent not in impure and parent != os.path.dirname(parent):
                impure.add(parent)
                parent = os.path.dirname(parent)
    return frozenset(
        e.path for e in accepted if e.kind == "dir" and not e.opaque and e.path not in impure
    )


CHANGED_SINCE = (
    "changed on the host since the command ran: applying it would undo that change; name it "
    "with --overwrite to apply it anyway"
)
# (r58c DIVERGE: two runs' commits, neither applied, are siblings; --overwrite after the
# first dropped it from the branch)
GIT_CHANGED_SINCE = (
    "your repository's refs or index changed since the command ran (a commit of yours, or "
    "an earlier change set's applied): --overwrite would set them back to this one's, and "
    "what they hold now would be left only in git's reflog; to keep both, take its commits "
    "with git cherry-pick (the objects are in) and discard it"
)


def settle(
    stage: str,
    plan: dict[str, Any],
    checked: list[tuple[Entry, Refusal | None]],
    problems: list[str],
    force: frozenset[str] = frozenset(),
    hold_all: bool = False,
    why_all: str = "",
    overwrite: bool = False,
) -> dict[str, Any]:
    """Apply what passes (and the paths in `force`, and what is below them, but for what the
    host changed since the command ran unless `overwrite`); hold the rest (everything with
    `hold_all`, `why_all` saying why beyond review mode). Returns the report, also written
    to the staging area while anything is held."""
    from corral.changes import journal as journals
    from corral.changes.apply import ApplyFailed, apply, clear
    from corral.changes.git_objects import NOT_THERE
    from corral.changes.scan import replaced
    from corral.paths import is_within

    accepted = []
    held = []
    merged: list[str] = []
    busy = stages.direct_writers(plan["roots"])
    if busy:
        # A command writing straight to the workspace could swap a directory for a link
        # between a check and the rename that follows it: nothing is applied meanwhile.
        force = frozenset()
        hold_all = True
    for entry, refusal in checked:
        forced = any(is_within(entry.path, f) for f in force)
        if forced and refusal is not None and NOT_THERE in refusal.message:
            # (named or not: refs to commits git has pruned since would name nothing, and
            # `git log` fail, r60a GCPRUNE)
            held.append({"path": entry.path, "code": "protected", "message": refusal.message})
            continue
        if forced and refusal is not None and not overwrite and _changed_since(entry, plan):
            # a refused path named to apply, which the host changed since the run (you, or a
            # change set applied since): it would undo that change, silently (r39c); a text
            # file is merged with that change where the two do not meet (r68c HELDSTACK)
            why = ""
            if git_dir_of(entry.path) is None:
                from corral.changes.merge import merged_entry

                mixed, why = merged_entry(stage, entry)
                if mixed is not None:
                    accepted.append(mixed)
                    merged.append(entry.path)
                    continue
            since = GIT_CHANGED_SINCE if _git_state(entry.path) else CHANGED_SINCE
            message = f"{why}; {since}" if why else since
            held.append({"path": entry.path, "code": "conflict", "message": message})
            continue
        if (refusal is None and not hold_all) or forced:
            accepted.append(entry)
        elif busy:
            if entry.kind != "dir":
                held.append({
                    "path": entry.path, "code": "busy",
                    "message": f"held: a command with direct writes runs in this workspace "
                    f"(pid {busy[0]}); apply it once that has ended",
                })  # fmt: skip
        elif refusal is not None:
            if refusal.path == entry.path:  # what is below a refused directory goes with it
                item: dict[str, Any] = dict(refusal.as_dict())
                if _changed_since(entry, plan):
                    # (said now, not once it is named: `apply ID PATH` as suggested was then
                    # refused for it, r51c STALEHINT)
                    git = _git_state(entry.path)
                    item["message"] += f"; {GIT_CHANGED_SINCE if git else CHANGED_SINCE}"
                    item["since"] = True
                held.append(item)
        elif (gone := len(replaced(entry)[0])) > 0:
            held.append({
                "path": entry.path, "code": "review",
                "message": f"held for review: it replaces the directory there, deleting {gone} "
                "of its entries (corral changes --diff lists them)",
            })  # fmt: skip
        elif entry.kind != "dir":
            message = f"held for review: {why_all}" if why_all else "held for review"
            held.append({"path": entry.path, "code": "review", "message": message})
    accepted = _refreshed_indexes_dropped(_git_state_together(accepted, held))
    _keep_bases(stage, plan, checked, held)
    journal = journals.Journal(plan["id"])
    why = ""
    try:
        whole = _whole(checked, accepted) if not problems else frozenset()
        changed, left = apply(accepted, journal, whole) if accepted else ([], [])
        clear(left)
    except ApplyFailed as e:
        # all of it stays held (or, when reversing failed too, what is in is in the journal)
        changed = []
        why = str(e)
    finally:
        journal.close()
    if changed:
        journals.prune(int(plan.get("undo_bytes") or 0))
    leftover = not stages.is_empty(stage)
    report = {
        "id": plan["id"],
        "status": "held" if leftover else ("applied" if changed else "empty"),
        "applied": changed,
        "counts": _counts(changed),
        "held": held,
        "merged": merged if changed else [],
        "problems": problems,
        "why": why,
        "frontend": plan.get("frontend", "cli"),
        # (for the undo list: which run it was, and where)
        "made_by": list(plan.get("made_by") or []),
        "created_ns": plan.get("created_ns", 0),
        "cwd": plan.get("cwd", ""),
    }
    if leftover:
        stages.write_report(stage, report)
    else:
        stages.remove(stage)
    if changed:
        stages.write_report(journal.path, report)
    return report


def _refreshed_indexes_dropped(accepted: list[Entry]) -> list[Entry]:
    """The entries to apply but a git index that holds what the host's holds, only its stat
    data refreshed (a `git status` in the sandbox): dropped from the change set, as host git
    refreshes it again. It made an undo entry of its own, in front of the command's real
    change, and "applied ... 1 of git's own files" after a read-only command (r77d
    GITSTATUSUNDO)."""
    from corral.changes import journal as journals

    kept = []
    for entry in accepted:
        if entry.kind == "file" and entry.path.endswith("/.git/index"):
            mine = journals.index_entries(entry.source, named=False)
            if mine is not None and mine == journals.index_entries(entry.path):
                os.unlink(entry.source)
                continue
        kept.append(entry)
    return kept


def _keep_bases(
    stage: str,
    plan: dict[str, Any],
    checked: list[tuple[Entry, Refusal | None]],
    held: list[dict[str, Any]],
) -> None:
    """Keep each held text file's host copy as its command saw it, while the host has not
    changed it since: what a later apply merges the command's change into (see merge)."""
    # (a file held for its own reason: not the 1,600 of a venv or a build tree held with
    # the one that held it, which no one edits twice)
    paths = {
        item["path"]
        for item in held
        if item.get("code") != "conflict"
        and not str(item.get("message", "")).startswith(words.HELD_AS_ONE)
    }
    if not paths:
        return
    from corral.changes.merge import keep_base

    for entry, _ in checked:
        if (
            entry.path in paths
            and entry.kind == "file"
            and git_dir_of(entry.path) is None
            and os.path.isfile(entry.path)
            and not _changed_since(entry, plan)
        ):
            keep_base(stage, entry)


def held_whole(stage: str, plan: dict[str, Any]) -> bool:
    """Whether a change set is held whole, nothing of it applied unasked: with `writes =
    "review"`, where corral cannot read ahead what a host-run config runs, or when its
    command was interrupted. Naming paths to apply takes only those (r73c APPLYSUBSET:
    every passing path came with the one named)."""
    if plan.get("writes") == "review" or plan.get("unreadable"):
        return True
    if os.path.exists(os.path.join(stage, stages.INTERRUPTED)):
        return True
    return str(report(stage).get("why", "")).startswith(stages.INTERRUPTED_WHY)


def git_dir_of(path: str) -> str | None:
    """The `.git` directory a path is inside, or None."""
    at = path.find("/.git/")
    return None if at < 0 else path[: at + len("/.git")]


def _git_state(path: str) -> str | None:
    """The git directory whose HEAD, refs, reflogs or index `path` is, or None."""
    git = git_dir_of(path)
    if git is None:
        return None
    rel = path[len(git) + 1 :]
    state = rel in ("index", "packed-refs") or rel.startswith(("refs/", "logs/"))
    return git if state or rel.endswith("HEAD") else None


def _git_state_together(accepted: list[Entry], held: list[dict[str, Any]]) -> list[Entry]:
    """A repository's HEAD, refs and index are applied together or held together, also when
    named to apply (r59a INDEXFLAGS: the index, changed by you since, stayed held while the
    refs named with it moved: `git status` showed a staged revert of the new commit)."""
    gits = {git for item in held if (git := _git_state(item["path"]))}
    if not gits:
        return accepted
    kept = []
    for entry in accepted:
        if _git_state(entry.path) in gits and entry.kind != "dir":
            held.append({
                "path": entry.path, "code": "protected",
                "message": f"{words.HELD_WITH_GIT} ({words.HELD_GIT_WHY})",
            })  # fmt: skip
        else:
            kept.append(entry)
    return kept


def _changed_since(entry: Entry, plan: dict[str, Any]) -> bool:
    """Whether the host's copy of an entry (or, for a directory the entry replaces, what is
    below it) changed after the change set's command started."""
    from corral.changes import journal as journals
    from corral.changes.rules import changed_below

    try:
        st = os.lstat(entry.path)
    except OSError:
        return False  # (gone: nothing of the host's to undo)
    since = int(plan["created_ns"])
    if st.st_ctime_ns > since:
        return not journals.index_kept(entry.path, plan)
    return (
        stat.S_ISDIR(st.st_mode) and entry.kind != "dir" and bool(changed_below(entry.path, since))
    )


def finish(stage: str, interrupted: bool = False) -> dict[str, Any]:
    """Check and apply the change set in `stage` after its command ended; the report."""
    with Locked():
        if interrupted:
            report = stages.interrupted_report(stage)
            if stages.is_empty(stage):
                stages.remove(stage)
                return {**report, "status": "empty", "why": ""}
            stages.write_report(stage, report)
            return report
        stages.wait_sandbox_gone(stage)
        if stages.is_empty(stage):  # the common case, without the check's imports
            stages.remove(stage)
            return {"id": os.path.basename(stage), "status": "empty", "applied": [],
                    "counts": {}, "held": [], "problems": [], "why": ""}  # fmt: skip
        plan, checked, problems = read(stage)
        # A host-run config corral cannot read ahead (an .envrc running a command): what it
        # reaches could be any path, so nothing is applied unreviewed (see Resolution).
        unreadable = plan.get("unreadable") or []
        why_all = (
            f"corral cannot read ahead what the host runs through {'; '.join(unreadable)}"
            if unreadable else ""
        )  # fmt: skip
        review = plan["writes"] == "review" or bool(unreadable)
        return settle(stage, plan, checked, problems, hold_all=review, why_all=why_all)


def _history_dirs(held: list[dict[str, Any]]) -> list[str]:
    """The git directories whose held paths are all new history and its git state."""
    ok: dict[str, bool] = {}
    for item in held:
        git = git_dir_of(item["path"])
        if git is None:
            continue
        message = item.get("message", "")
        # (the start of the message, corral's words: a ref's name later in it is the
        # command's, and could spell them)
        mine = message.startswith((words.HISTORY_WAITS, words.HELD_WITH_GIT))
        ok[git] = ok.get(git, True) and mine and not item.get("since")
    return sorted(g for g, fine in ok.items() if fine)


def applied(report: dict[str, Any], frontend: str | None = None, always: bool = False) -> list[str]:
    """The line that says what a run applied, and how to undo it (r51c, r58c CHECKSILENT:
    a run applied files, a venv or commits without a word); none when nothing was, but
    `always`."""
    if not report.get("applied") and not always:
        return []
    # (git's own files apart: a one-file commit was "7 added", r61c GITCOUNTS)
    changed = report.get("applied") or []
    git = [c for c in changed if "/.git/" in str(c.get("path", ""))]
    counts = (
        _counts([c for c in changed if c not in git]) if changed else report.get("counts") or {}
    )
    also = f", and {len(git)} of git's own files" if git else ""
    undo = words.command("undo", frontend_name=frontend or report.get("frontend"))
    return [
        f"applied {counts.get('added', 0)} added, {counts.get('modified', 0)} modified, "
        f"{counts.get('deleted', 0)} deleted{also} (undo: {undo})"
    ]


def describe(report: dict[str, Any], frontend: str | None = None) -> list[str]:
    """Lines for the user: what was held and why, and how to go on (escaped: see shown), in
    the words of `frontend` (by default the one that started the change set)."""
    return [shown(line) for line in _describe(report, frontend or report.get("frontend"))]


def _describe(report: dict[str, Any], frontend: str | None) -> list[str]:
    lines = []
    change_id = report["id"]

    def command(verb: str, *args: str) -> str:
        return words.command(verb, *args, frontend_name=frontend)

    if report.get("why"):
        lines.append(f"{report['why']}; see: {command('changes', change_id)}")
    for path in report.get("merged") or []:
        lines.append(
            f"merged {path}: the command's change, into your copy as it is now (changed "
            "since the command ran); undo takes your copy back"
        )
    # (what was held for its own reason first, then what is held with it: a venv's 1,600
    # paths "held with the rest" hid the one that held it, r47b)
    causes = [i for i in report["held"] if not i.get("message", "").startswith(words.HELD_WITH)]
    followers = [i for i in report["held"] if i.get("message", "").startswith(words.HELD_WITH)]
    # (paths held for the same words share a line: ten new modules' long reason once, r48c)
    reasons: dict[str, list[str]] = {}
    for item in causes:
        why, path = item.get("message") or item["code"], item["path"]
        if why.startswith(words.IN_IGNORED):
            # (what git ignores, by the directories it ignores: one line for a venv, a
            # build and node_modules, not one per directory)
            unit = words.named_unit(why, words.IN_IGNORED, path)
            # (the reason given before git's words: a hidden submodule's, a nested
            # repository's; none for what an ignore file names, r87a SUBWHY)
            given = why[len(words.IN_IGNORED) + len(unit) + 2 :].removesuffix(
                f"{words.IGNORED_WHY})"
            )
            path = unit
            why = f"{given.rstrip('; :') or 'what git ignores'}: {words.IGNORED_WHY}"
            if path in reasons.get(why, ()):
                continue
        reasons.setdefault(why, []).append(path)
    for why, paths in list(reasons.items())[:LISTED]:
        more = f" and {len(paths) - GROUPED} more" if len(paths) > GROUPED else ""
        lines.append(f"held {', '.join(paths[:GROUPED])}{more}: {why}")
    if len(reasons) > LISTED:
        rest = sum(len(paths) for paths in list(reasons.values())[LISTED:])
        lines.append(f"... and {rest} more held")
    shown_followers = max(0, min(3, LISTED - len(reasons)))
    for item in followers[:shown_followers]:
        lines.append(f"held {item['path']}: {item.get('message') or item['code']}")
    if len(followers) > shown_followers:
        lines.append(f"... and {len(followers) - shown_followers} more held with them")
    for problem in report.get("problems", []):
        lines.append(f"held, unread: {problem}")
    if report["held"] and report["status"] == "held":
        paths = apply_args(report["held"])
        which = (
            ", naming the held paths you want from the list above" if "PATH..." in paths else ""
        )  # (a refused path is applied only when named: `apply ID` applied none, r42c)
        lines.append(
            f"these changes are held, not in the workspace: {command('changes', change_id)} "
            f"(apply: {command('apply', change_id, *paths)}{which}; drop: "
            f"{command('discard', change_id)})"
        )
    return lines


def apply_args(held: list[dict[str, Any]]) -> list[str]:
    """What `corral apply ID` needs after it to apply these held items: their paths (a
    venv's or a git directory's as one), `PATH...` when there are too many, `--overwrite`
    first where the host changed a path since."""
    from corral.paths import is_within

    # (a refused path is applied only when named: the command says which, r39c)
    named = [item["path"] for item in held if item.get("code") != "review"]
    # (a venv held whole is named as one: `apply ID .venv`, not 1,600 paths, r48c U8; and
    # a build tree)
    venvs = sorted({
        words.named_unit(m, prefix, item["path"])
        for item in held
        for m in (item.get("message", ""),)
        for prefix in words.NAMED_AS_ONE
        if m.startswith(prefix)
    })  # fmt: skip
    if venvs:
        named = [*venvs, *(p for p in named if not any(is_within(p, v) for v in venvs))]
    # (history held for review is named by its git directory, when nothing else held there
    # rides along: `apply ID .git` takes the commits, never a hook held beside)
    gits = _history_dirs(held)
    if gits:
        named = [*gits, *(p for p in named if not any(is_within(p, g) for g in gits))]
    # (none named: all of it held for review, which `apply ID` takes whole; it said to name
    # paths, r72d REVIEWHINT)
    paths = named if len(named) <= NAMED else ["PATH..."]
    if any(item.get("code") == "conflict" or item.get("since") for item in held):
        paths = ["--overwrite", *paths]  # (what the host changed meanwhile: r40c)
    return paths


def report(stage_or_id: str) -> dict[str, Any]:
    """The report of a change set by staging path or id: held, applied, or empty."""
    from corral.changes import journal as journals

    change_id = os.path.basename(stage_or_id)
    applied = [n for n in journals.entries() if n.endswith(f"-{change_id}")]
    for path in (
        os.path.join(stages.root_dir(), change_id),
        *(os.path.join(stages.journal_dir(), n) for n in reversed(applied)),
    ):
        path = os.path.join(path, stages.REPORT)
        if os.path.isfile(path):
            result: dict[str, Any] = stages.read_json(path)
            return result
    return {"id": change_id, "status": "empty", "applied": [], "held": [], "counts": {}}


def main(argv: list[str]) -> int:
    """The launcher's last step: `STAGE STATUS`; exits with the command's status, or 125 when
    the change set could not be checked (it is then held, nothing lost)."""
    stage, status = argv[0], int(argv[1])
    try:
        result = finish(stage, os.path.exists(os.path.join(stage, stages.INTERRUPTED)))
    except Exception as e:
        sys.stderr.write(
            f"corral: the changes could not be checked or applied ({e}); they are kept in {stage}\n"
        )
        return FAILED
    for line in [*applied(result), *describe(result)]:
        sys.stderr.write(f"corral: {line}\n")
    return status
