"""The chat's file tools (write, edit, delete) through change sets, like a command's writes.

ops/files.py checks a tool call (its globs, the policy's paths, links on the way) and works
out the new content; the change itself is a change set of one path: the new file (or, for a
delete, an overlay whiteout) put in a fresh staging area's upper directory, then checked and
applied by the same code as a command's (corral.changes.finish). So one check decides for
both: a tool cannot write what a command could not (a new repository, a git control file, a
protected name at any depth, a chat file); what it replaced goes to the undo journal; and with
`sandbox.writes = "review"` it is held until you apply it. Outside every writable root (the
sandbox off) or with direct writes (where a sandboxed command may change the workspace at the
same moment, and only ops/files' writes through an opened directory hold), ops/files writes
directly, as before.
"""

from __future__ import annotations

import os
import stat

from corral.changes import stage as stages
from corral.changes import words
from corral.changes.apply import process_umask
from corral.changes.ignored_rules import IGNORED
from corral.paths import is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from corral.sandbox.policy import Policy

WHITEOUT = os.makedev(0, 0)  # what overlayfs writes for a deletion; unprivileged since 5.8
# what the check holds for your review rather than refuses: a tool's write of it is held,
# with its change set's id, as a command's would be
FOR_REVIEW = frozenset({"new-module", "project-config"})


def _for_review(held: dict[str, Any], real: str) -> bool:
    """Whether the check holds this change of `real` for the user's review (with its id to
    apply) rather than refuses it: review mode, FOR_REVIEW, and a file git ignores, held as
    a command's write of it is (r90t WRITETOOLIGNORED: the tool's was refused outright). Not
    below a directory the change itself makes: a directory held for what git ignores passes
    that reason to all below it, and a new repository's hook or an `.envrc` there would be
    told as ignored output (r91a IGNOREDMASKSREFUSAL); refused then, as before."""
    if held.get("code") in ("review", *FOR_REVIEW):
        return True
    return held.get("rule") == IGNORED and os.path.isdir(os.path.dirname(real))


class ToolChanges:
    """Turns one tool call's change into a checked, applied (or held) change set."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def handles(self, real: str) -> bool:
        """Whether `real` is inside a writable root that is a directory (else the tool writes
        directly: a file made writable by name, `~/.claude.json`, has no layer of its own)."""
        return any(is_within(real, r) and os.path.isdir(r) for r in self.policy.rw_roots)

    def change(self, real: str, data: bytes | None, mode: int | None = None) -> dict[str, Any]:
        """Put the new content of `real` (None: its deletion) through a change set; returns
        its report (see finish.finish)."""
        from corral.changes.finish import finish

        return finish(self._staged(real, data, mode))

    def refusal(self, real: str, data: bytes | None) -> dict[str, Any] | None:
        """What the change-set check would refuse of this change, by the same rules, without
        applying anything (decide() asks before asking you); None when it would pass (or only
        be held for review)."""
        from corral.changes.finish import Locked, read

        stage = self._staged(real, data, None)
        try:
            with Locked():
                _, checked, _ = read(stage)
        finally:
            stages.remove(stage)
        found = next((r.as_dict() for _, r in checked if r is not None), None)
        if found is not None and _for_review(found, real):
            return None  # (held for your review, not refused: r48c, the tool could not
            # write a new utils.py at all; what git ignores is held as a command's write
            # of it is, r90t WRITETOOLIGNORED)
        if found is not None:  # (no change set is left to apply it from)
            import re

            found["hint"] = (
                "only the user can make this change, outside the sandbox; do not work around it"
            )
            # (nor its words of applying: "apply it if you meant it" beside that hint,
            # r74c REFUSEAPPLYWORDS)
            # (up to a parenthesis: what git ignores is said inside one, and its closing one
            # went with these words, r89 IGNOREDMSGPARENS)
            message = re.sub(
                r"[;,] (?:if you made this venv, )?apply [^;()]*", "", found["message"]
            )
            found["message"] = re.sub(r" \(apply [^)]*\)", "", message)
        return found

    def _staged(self, real: str, data: bytes | None, mode: int | None) -> str:
        """A staging area holding this one change, as a command's overlay would."""
        roots = self.policy.rw_roots
        index = next(i for i, r in enumerate(roots) if is_within(real, r) and os.path.isdir(r))
        verb = "delete" if data is None else "write"
        stage = stages.create(self.policy, made_by=[f"the file tool's {verb} of {real}"])
        try:
            rel = os.path.relpath(real, roots[index])
            upper = stages.upper(stage, index)
            target = os.path.join(upper, rel)
            # Directories on the way get the host's permissions (an overlay copies them up as
            # they are): made 0755 here, applying them would be a chmod of each.
            host, staged = roots[index], upper
            for part in os.path.dirname(rel).split("/") if os.path.dirname(rel) else []:
                host, staged = os.path.join(host, part), os.path.join(staged, part)
                try:
                    dir_mode = stat.S_IMODE(os.lstat(host).st_mode)
                except FileNotFoundError:
                    dir_mode = 0o777 & ~process_umask()
                os.mkdir(staged, dir_mode)
                os.chmod(staged, dir_mode)
            if data is None:
                os.mknod(target, stat.S_IFCHR | 0o600, WHITEOUT)
            else:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fchmod(fd, mode if mode is not None else 0o666 & ~process_umask())
                    os.fsync(fd)
                finally:
                    os.close(fd)
        except BaseException:
            stages.remove(stage)  # (no held change set that no command made)
            raise
        return stage

    def outcome(self, report: dict[str, Any], real: str) -> dict[str, Any]:
        """What the tool's result says about its change: {"change": ...} when applied,
        {"held": ...} in review mode; a refusal (raised) when the check held it."""
        from corral.toolguard.ops.refusal import OpError, Refusal

        summary = {"id": report["id"], "status": report["status"]}
        if report["status"] == "applied":
            return {"change": {**summary, "counts": report.get("counts", {})}}
        if report["status"] != "held":
            return {}
        held = report["held"][0] if report["held"] else {}
        if _for_review(held, real):  # (review mode, a config read ahead
            # in part, a new module: held with its id for you to apply, not refused)
            # (the same {path, code, why} as a command's held paths, r51c CONTRACT)
            why = held.get("message", "")
            item = {"path": real, "code": held.get("code", ""), "why": why}
            return {"held": {**summary, "held": [item], "why": why}}
        raise OpError(
            Refusal(
                held.get("code", "held"), real, held.get("rule", "change sets"),
                held.get("layer", "builtin"),
                held.get("hint") or words.command("apply", report["id"], real),
                held.get("message") or report.get("why", "held"),
            )
        )  # fmt: skip
