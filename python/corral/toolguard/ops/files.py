"""Guarded file operations for the chat's tools: read, write, edit, delete, ls, copy, move.

Each checks the tools.permissions globs (globs.py) and the sandbox policy (refusal.py) on both
the path as given and the file it resolves to, then acts on the resolved path through a
directory descriptor whose real path is confirmed after opening: a sandboxed command running at
the same time cannot swap a directory for a symlink between the check and the change. Writes are
atomic (a temporary file in the same directory, fsync, one rename), so a reader (or a crash)
sees the old file or the new one, never half of it, and a symlink at the target is replaced,
never written through. Results are plain dicts; a refusal raises OpError.
"""

from __future__ import annotations

import errno
import os
import stat

from corral.paths import is_within
from corral.toolguard.ops import globs
from corral.toolguard.ops.refusal import OpError, Refusal, check_read, check_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import TracebackType

    from corral.changes.tools import ToolChanges
    from corral.sandbox.policy import Policy
    from corral.toolguard.ops.globs import Permissions

MAX_READ = 256 * 1024
MAX_EDIT = 8 * 1024 * 1024  # edit holds the file, its new text and a diff in memory
MAX_ENTRIES = 1000
CHUNK = 1024 * 1024
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

Result = dict[str, object]


_DELETE_DISABLED = Refusal(
    "delete-disabled",
    "",
    "tools.delete.allow_sandboxed",
    "builtin",
    "use rm through the bash tool instead; the user can turn this tool on with "
    "tools.delete.allow_sandboxed = true",
    "the delete tool is off while the sandbox is on",
)


def _refuse(code: str, path: str, hint: str, message: str) -> OpError:
    return OpError(Refusal(code, path, "", "", hint, message))


# errno of a failed system call -> (code, hint): what the caller can do about it.
_ERRNO = {
    errno.ENOENT: ("not-found", "check the path (relative paths start at the workspace)"),
    errno.EISDIR: ("is-directory", "name a file; use ls for a directory"),
    errno.ENOTDIR: ("not-a-directory", "a component of the path is a file, not a directory"),
    errno.ENOTEMPTY: ("not-empty", "delete the files in it first"),
    errno.EEXIST: ("exists", "pick another name, or pass overwrite=True"),
    errno.ELOOP: ("symlink-escape", "the path changed to a symlink while it was used; retry"),
    errno.ENAMETOOLONG: ("name-too-long", "use a shorter name (at most 255 bytes a component)"),
}


class OSErrors:
    """Turn a failed system call into an OpError naming the path, so callers see one type."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(e, OSError):
            code, hint = _ERRNO.get(e.errno or 0, ("io-error", "check the path and permissions"))
            # (naming the path: "No such file or directory" alone told the model nothing of
            # which, r61c EDITNOPATH)
            raise _refuse(code, self.path, hint, f"{self.path}: {e.strerror or e}") from e


def locate(policy: Policy, path: str, entry: bool = False) -> tuple[str, str]:
    """(absolute path as given, `..` folded; the path it resolves to). With `entry` the last
    component is kept as it is: delete and move act on a symlink, not on what it points to."""
    if not isinstance(path, str) or not path or "\0" in path:
        raise _refuse("invalid-path", repr(path), "pass a path, relative or absolute", "bad path")
    if path == "~" or path.startswith("~/"):
        path = policy.home + path[1:]
    joined = os.path.join(policy.cwd, path)
    lexical = os.path.normpath(joined)
    if lexical.startswith("//"):
        lexical = "/" + lexical.lstrip("/")
    trimmed = joined.rstrip("/") or "/"
    tail = os.path.basename(trimmed)
    # realpath of the unfolded path: `link/..` is the parent of the link's target, as for the
    # kernel, not the directory holding the link.
    if not entry or tail in ("", ".", ".."):
        return lexical, os.path.realpath(joined)
    return lexical, os.path.join(os.path.realpath(os.path.dirname(trimmed)), tail)


def _rel(policy: Policy, path: str) -> str:
    if path == policy.cwd:
        return "."
    if is_within(path, policy.cwd):
        return path[len(policy.cwd.rstrip("/")) + 1 :]
    return path


def _check_globs(policy: Policy, perms: Permissions, path: str, real: str, op: str) -> None:
    # Deny first on both spellings, so a deny always wins over a missing allow.
    spellings = dict.fromkeys((_rel(policy, path), _rel(policy, real)))
    for kind in ("list", op) if op != "list" else ("list",):
        for rel in spellings:
            refused = globs.check(perms, rel, kind)
            if refused is not None:
                raise OpError(refused.replace(path=path))


def _guard_read(policy: Policy, perms: Permissions, path: str, real: str, op: str) -> None:
    # The globs first: a file hidden from commands because a deny glob names it (`.env`) is
    # refused by that glob, which is the rule to change to allow it.
    _check_globs(policy, perms, path, real, op)
    refused = check_read(policy, path, real, perms.layers)
    if refused is not None:
        raise OpError(refused)


def _guard_write(
    policy: Policy, perms: Permissions, path: str, real: str, entry: bool = False
) -> None:
    _check_globs(policy, perms, path, real, "write")
    refused = check_write(policy, path, real, perms.layers, entry)
    if refused is not None:
        raise OpError(refused)


def _confirm(fd: int, real: str, path: str) -> None:
    """Refuse when what was opened is not the path that was checked (a swapped symlink)."""
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return  # no /proc: the resolved path checked just before is the best there is
    if opened != real:
        os.close(fd)
        raise _refuse(
            "symlink-escape",
            path,
            "retry; if it persists, look for a process changing the directory",
            f"{real} changed while it was being opened (now {opened})",
        )


def _open_file(real: str, path: str) -> tuple[int, os.stat_result]:
    """A descriptor of the regular file `real`, confirmed, and its status."""
    # O_NONBLOCK: a FIFO planted at the path must not hang the editor on open.
    fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    _confirm(fd, real, path)
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _refuse("is-directory", path, "use ls for a directory", f"{real} is a directory")
        raise _refuse("not-a-file", path, "name a regular file", f"{real} is not a regular file")
    return fd, info


def _open_dir(real: str, path: str, create: bool) -> int:
    """A confirmed descriptor of directory `real`, made (one component at a time, never
    following a symlink) when `create`."""
    existing = real
    missing: list[str] = []
    while not os.path.lexists(existing):
        existing, name = os.path.split(existing)
        missing.insert(0, name)
    if missing and not create:
        raise _refuse(
            "not-found",
            path,
            "pass create_dirs = true, or create the directory first",
            f"directory {os.path.join(existing, missing[0])} does not exist",
        )
    fd = os.open(existing, DIR_FLAGS)
    _confirm(fd, existing, path)
    for name in missing:
        try:
            try:
                os.mkdir(name, 0o777, dir_fd=fd)
            except FileExistsError:
                pass
            below = os.open(name, DIR_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = below
    return fd


def _lstat_at(fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _atomic_write(
    real: str,
    path: str,
    source: bytes | int,
    mode: int | None,
    create: bool,
) -> tuple[int, bool]:
    """Replace `real` with `source` (bytes, or a descriptor to copy from) in one rename;
    return (bytes written, whether the file is new). An existing file keeps its permission
    bits (`mode` is for a new one; None: 0o666 less the umask)."""
    directory, name = os.path.split(real)
    dir_fd = _open_dir(directory, path, create)
    try:
        old = _lstat_at(dir_fd, name)
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise _refuse("is-directory", path, "name a file", f"{real} is a directory")
        if old is not None and not stat.S_ISREG(old.st_mode):
            # realpath resolved every symlink: one here appeared after the check.
            raise _refuse("not-a-file", path, "retry, or name a regular file", f"{real} changed")
        if old is not None:
            # setuid/setgid are dropped: new content is a new program.
            mode = stat.S_IMODE(old.st_mode) & 0o777
        # A name may be 255 bytes: the temp name keeps at most 200 of them (whole characters).
        stem = os.fsencode(name)[:200].decode("utf-8", "ignore")
        temp = f".{stem}.corral-{os.urandom(4).hex()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, 0o600 if mode is not None else 0o666, dir_fd=dir_fd)
        try:
            try:
                size = _fill(fd, source)
                if mode is not None:
                    os.fchmod(fd, mode)
                if old is not None and old.st_uid != os.geteuid():
                    try:
                        os.fchown(fd, old.st_uid, old.st_gid)
                    except PermissionError:
                        pass  # the file becomes the writer's: the rename needs no more
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=dir_fd)
            except OSError:
                pass
            raise
        os.fsync(dir_fd)  # the rename itself survives a crash
        return size, old is None
    finally:
        os.close(dir_fd)


def _through_change_set(
    changes: ToolChanges, real: str, path: str, data: bytes | None, create: bool
) -> Result:
    """A write (or, with `data` None, a delete) as a change set of one path: checked like a
    command's writes, journaled, or held for review (see changes.tools). The target's
    directory must exist unless `create`; what is there must be a regular file (or, for a
    delete, a link or an empty directory)."""
    if not create:
        os.close(_open_dir(os.path.dirname(real), path, False))  # raises when it is missing
    try:
        info: os.stat_result | None = os.lstat(real)
    except FileNotFoundError:
        info = None
    if data is not None and info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise _refuse("is-directory", path, "name a file", f"{real} is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise _refuse("not-a-file", path, "retry, or name a regular file", f"{real} changed")
    if data is None:
        if info is None:
            raise _refuse("not-found", path, "check the path", f"{real} does not exist")
        if stat.S_ISDIR(info.st_mode) and os.listdir(real):
            raise _refuse("not-empty", path, "delete what is in it first", f"{real} is not empty")
    # setuid/setgid are dropped: new content is a new program
    mode = stat.S_IMODE(info.st_mode) & 0o777 if info is not None and data is not None else None
    with OSErrors(path):
        report = changes.change(real, data, mode)
    return {"ok": True, "path": real, **changes.outcome(report, real)}


def _fill(fd: int, source: bytes | int) -> int:
    if isinstance(source, bytes):
        view, size = memoryview(source), len(source)
        while view:
            view = view[os.write(fd, view) :]
        return size
    size = 0
    while chunk := os.read(source, CHUNK):
        size += len(chunk)
        _fill(fd, chunk)
    return size


def _read_at(fd: int, offset: int, limit: int) -> bytes:
    parts, left = [], limit
    while left > 0:
        chunk = os.pread(fd, min(left, CHUNK), offset)
        if not chunk:
            break
        parts.append(chunk)
        offset += len(chunk)
        left -= len(chunk)
    return b"".join(parts)


def precheck(
    policy: Policy, perms: Permissions, tool: str, path: str, allow_delete: bool = False
) -> None:
    """Raise the OpError `tool` would raise on `path` for a rule or a missing file, without
    reading or writing anything: the guard asks this before asking you, so a call that will be
    refused anyway is refused at once. (The tool checks again when it runs.)"""
    if tool in ("read", "ls"):
        lexical, real = locate(policy, path)
        _guard_read(policy, perms, lexical, real, "list" if tool == "ls" else "read")
    elif tool == "write":
        lexical, real = locate(policy, path)
        _guard_write(policy, perms, lexical, real)
        return  # a new file is fine
    elif tool == "delete":
        lexical, real = locate(policy, path, entry=True)
        if policy.enabled and not allow_delete:
            raise OpError(_DELETE_DISABLED.replace(path=lexical))
        _guard_write(policy, perms, lexical, real, entry=True)
    else:
        return
    if not os.path.lexists(real):
        raise _refuse("not-found", lexical, "check the path", f"{real} does not exist")


def _still_within(within: Sequence[str], lexical: str, real: str) -> None:
    """A read approved unasked because it was inside the workspace (see the guard) must
    still be there when it runs: a symlink re-pointed since the decision led it elsewhere
    with no window (r91a UNASKEDREAD_RACE). `within`: the workspace and writable roots, or
    nothing to check."""
    if within and not all(any(is_within(p, top) for top in within) for p in (lexical, real)):
        raise _refuse(
            "outside-envelope",
            lexical,
            "call it again: corral asks for a read elsewhere",
            f"{lexical} leads outside the workspace now, to {real}; it was approved unasked "
            "as a read inside it",
        )


def read(
    policy: Policy,
    perms: Permissions,
    path: str,
    max_bytes: int = MAX_READ,
    offset: int = 0,
    within: Sequence[str] = (),
) -> Result:
    """The file's text (UTF-8, undecodable bytes replaced), at most `max_bytes` of it from
    byte `offset`; a longer file is cut with a notice saying where to read on. `within`: see
    _still_within."""
    if max_bytes < 1 or offset < 0:
        raise _refuse("invalid-argument", path, "max_bytes >= 1, offset >= 0", "bad limits")
    lexical, real = locate(policy, path)
    _still_within(within, lexical, real)
    _guard_read(policy, perms, lexical, real, "read")
    with OSErrors(lexical):
        fd, info = _open_file(real, lexical)
        try:
            data = _read_at(fd, offset, max_bytes + 1)  # one more: sizes of /sys files lie
        finally:
            os.close(fd)
    truncated = len(data) > max_bytes
    data = data[:max_bytes]
    if b"\0" in data:
        # (NULs and control bytes into the model's context: edit refused such a file, read
        # returned it, r72d READBINARY)
        raise _refuse(
            "not-text", lexical, "use bash to look at a binary file (file, xxd, strings)",
            f"{real} is not text (it holds NUL bytes)",
        )  # fmt: skip
    import codecs

    # A cut can split a character: leave its first bytes for the next read, do not mangle it.
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    content = decoder.decode(data, final=not truncated)
    notice = ""
    if not data and offset > 0 and offset >= info.st_size:
        # (an empty answer read as an empty file, r51c CONTRACT)
        notice = f"[corral: offset {offset} is past the end of the file ({info.st_size} bytes)]"
    if truncated:
        total = max(info.st_size, offset + max_bytes + 1)
        shown = len(data) - len(decoder.getstate()[0])
        notice = (
            f"[corral: truncated at {max_bytes} bytes of {total} (from byte {offset}); "
            f"read on with offset={offset + shown}]"
        )
    return {"ok": True, "path": real, "content": content, "truncated": truncated, "notice": notice}


def write(
    policy: Policy,
    perms: Permissions,
    path: str,
    content: str,
    create_dirs: bool = False,
    changes: ToolChanges | None = None,
) -> Result:
    """Replace (or create) the file with `content`, UTF-8, atomically (see changes.tools for
    `changes`: journaled, or held for review)."""
    lexical, real = locate(policy, path)
    _guard_write(policy, perms, lexical, real)
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError as e:
        raise _refuse("invalid-content", lexical, "send valid Unicode text", str(e)) from None
    if changes is not None and changes.handles(real):
        with OSErrors(lexical):
            created = not os.path.lexists(real)
            result = _through_change_set(changes, real, lexical, data, create_dirs)
        return {**result, "bytes": len(data), "created": created}
    with OSErrors(lexical):
        size, created = _atomic_write(real, lexical, data, None, create_dirs)
    return {"ok": True, "path": real, "bytes": size, "created": created}


def edit(
    policy: Policy,
    perms: Permissions,
    path: str,
    old: str,
    new: str,
    expected: int = 1,
    preview: bool = False,
    changes: ToolChanges | None = None,
) -> Result:
    """Replace the `expected` occurrences of `old` with `new` (refused unless exactly that many
    are found); `diff` shows the change. With `preview`, checks and diffs but writes nothing;
    `changes` as for write."""
    lexical, real, text, changed, count = edited(policy, perms, path, old, new, expected)
    import difflib

    name = _rel(policy, real)
    diff = "".join(
        difflib.unified_diff(
            text.splitlines(keepends=True),
            changed.splitlines(keepends=True),
            f"a/{name.lstrip('/')}",
            f"b/{name.lstrip('/')}",
        )
    )
    result: Result = {"ok": True, "path": real, "count": count, "diff": diff}
    if preview:
        return {**result, "written": False}
    if changes is not None and changes.handles(real):
        with OSErrors(lexical):
            outcome = _through_change_set(changes, real, lexical, changed.encode("utf-8"), False)
        return {**result, **outcome, "written": "change" in outcome}
    with OSErrors(lexical):
        _atomic_write(real, lexical, changed.encode("utf-8"), None, False)
    return {**result, "written": True}


def edited(
    policy: Policy, perms: Permissions, path: str, old: str, new: str, expected: int = 1
) -> tuple[str, str, str, str, int]:
    """(lexical path, real path, the text, the text edited, occurrences) of an edit, with
    its checks (what the change-set check judges before asking is the edited file)."""
    if not old or expected < 1:
        raise _refuse(
            "invalid-argument", path, "pass the exact text to replace and expected >= 1",
            "old text is empty" if not old else f"expected={expected}",
        )  # fmt: skip
    lexical, real = locate(policy, path)
    _guard_write(policy, perms, lexical, real)
    _guard_read(policy, perms, lexical, real, "read")
    with OSErrors(lexical):
        fd, info = _open_file(real, lexical)
        try:
            if info.st_size > MAX_EDIT:
                raise _refuse(
                    "too-large", lexical, "edit it with a shell tool (sed) or by hand",
                    f"{info.st_size} bytes; edit takes at most {MAX_EDIT}",
                )  # fmt: skip
            data = _read_at(fd, 0, MAX_EDIT + 1)
        finally:
            os.close(fd)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _refuse("not-text", lexical, "edit binary files another way", str(e)) from None
    count = text.count(old)
    if count != expected:
        raise _refuse(
            "match-count",
            lexical,
            "re-read the file: the old text must match exactly, whitespace and line endings too"
            if count == 0
            else f"add context to old so it is unique, or pass expected={count} to replace all",
            f"found {count} occurrence{'s' * (count != 1)} of the old text, expected {expected}",
        )
    return lexical, real, text, text.replace(old, new), count


def delete(
    policy: Policy,
    perms: Permissions,
    path: str,
    allow_sandboxed: bool = False,
    changes: ToolChanges | None = None,
) -> Result:
    """Remove a file, a symlink (not its target) or an empty directory (`changes` as for
    write)."""
    lexical, real = locate(policy, path, entry=True)
    if policy.enabled and not allow_sandboxed:
        raise OpError(_DELETE_DISABLED.replace(path=lexical))
    _guard_write(policy, perms, lexical, real, entry=True)
    directory, name = os.path.split(real)
    with OSErrors(lexical):
        dir_fd = _open_dir(directory, lexical, False)
        try:
            info = _lstat_at(dir_fd, name)
            if info is None:
                raise _refuse("not-found", lexical, "check the path", f"{real} does not exist")
            is_dir = stat.S_ISDIR(info.st_mode)
            if changes is not None and changes.handles(real):
                outcome = _through_change_set(changes, real, lexical, None, False)
                return {**outcome, "type": _kind(info.st_mode)}
            if is_dir:
                os.rmdir(name, dir_fd=dir_fd)
            else:
                os.unlink(name, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
    return {"ok": True, "path": real, "type": _kind(info.st_mode)}


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    return "symlink" if stat.S_ISLNK(mode) else "other"


def ls(
    policy: Policy,
    perms: Permissions,
    path: str = ".",
    max_entries: int = MAX_ENTRIES,
    within: Sequence[str] = (),
) -> Result:
    """Names, types and sizes in a directory (or of one file). Metadata only, so only deny
    patterns and deny_read apply; entries they cover are left out and counted in `hidden`.
    `within`: see _still_within."""
    lexical, real = locate(policy, path)
    _still_within(within, lexical, real)
    _guard_read(policy, perms, lexical, real, "list")
    denied = [d for d, _ in policy.deny_read]
    entries: list[dict[str, object]] = []
    hidden = 0
    with OSErrors(lexical):
        if not os.path.isdir(real):
            info = os.lstat(real)
            one = _entry(os.path.basename(real), info)
            return {"ok": True, "path": real, "entries": [one], "hidden": 0, "truncated": False}
        fd = os.open(real, DIR_FLAGS)
        _confirm(fd, real, lexical)
        try:
            with os.scandir(fd) as it:
                found = sorted(it, key=lambda e: e.name)
            for e in found:
                inside = os.path.join(real, e.name)
                spellings = {_rel(policy, os.path.join(lexical, e.name)), _rel(policy, inside)}
                if any(is_within(inside, d) for d in denied) or any(
                    globs.check(perms, s, "list") for s in spellings
                ):
                    hidden += 1
                    continue
                if len(entries) < max_entries:
                    info = e.stat(follow_symlinks=False)
                    entries.append(_entry(e.name, info))
        finally:
            os.close(fd)
    shown = len(found) - hidden
    return {
        "ok": True,
        "path": real,
        "entries": entries,
        "hidden": hidden,
        "truncated": shown > len(entries),
    }


def _entry(name: str, info: os.stat_result) -> dict[str, object]:
    # (no size but a file's: `size = None` reached Lua as vim.NIL, which is true, r52c)
    entry: dict[str, object] = {"name": name, "type": _kind(info.st_mode)}
    if stat.S_ISREG(info.st_mode):
        entry["size"] = info.st_size
    return entry
