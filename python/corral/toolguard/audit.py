"""An append-only audit log of tool calls: one JSON object per line.

What a line may hold is a fixed list of keys (what ran, what was decided, where, how it ended);
anything else a caller passes is dropped, so a file's contents handed over by mistake never reach
the disk, and every string is redacted first. The file is private to the user (0600 in a 0700
directory) since even redacted commands and paths say a lot about the user's work.

Each event is one write(2) on an O_APPEND descriptor: concurrent writers (two Neovim instances,
a CLI run) interleave whole lines, never parts of them.

Logging never raises: a tool call must not fail because its record could not be written. The
first failure is returned to the caller (to show the user once); `last_error` keeps the latest.
"""

from __future__ import annotations

import os
import stat
import time

from corral import dirs
from corral.toolguard.redact import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

KEYS = (
    "tool",
    "status",
    "decision",
    "source",
    "class",
    "reasons",
    "command",
    "path",
    "paths",
    "host",
    "port",
    "sent",
    "received",
    "url",
    "exit",
    "sandboxed",
    "refusal",
    "chat",  # the chat file's path: a buffer number means nothing once the editor is gone
    "duration_ms",
)
# Inside nested values (a refusal, a list of reasons) these names are dropped as well: they are
# how callers name contents.
CONTENT_KEYS = frozenset(
    {
        "body",
        "content",
        "contents",
        "data",
        "diff",
        "input",
        "lines",
        "new",
        "new_string",
        "old",
        "old_string",
        "output",
        "patch",
        "stderr",
        "stdout",
        "text",
    }
)
MAX_STRING = 8192  # characters kept of one string, after redaction
MAX_ITEMS = 100  # items kept of one list or mapping
MAX_DEPTH = 4
MAX_LINE = 256 * 1024  # an event larger than this keeps its small fields only
FILE_NAME = "audit.jsonl"


def _now() -> str:
    now = time.time()
    millis = int(now * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{millis:03d}Z"


def _text(value: str) -> str:
    # Redact before cutting, so that a cut never leaves half a secret the patterns miss; the
    # first cut only bounds the work, and is far enough past the second to drop its edge.
    cut = len(value) > 2 * MAX_STRING
    text = redact(value[: 2 * MAX_STRING] if cut else value)
    if cut or len(text) > MAX_STRING:
        return text[:MAX_STRING] + "…[truncated]"
    return text


def _clean(value: object, depth: int = 0) -> object:
    """`value` as JSON-ready data: strings redacted, contents and oversize parts dropped."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value)} bytes>"  # raw bytes are contents by nature
    if depth >= MAX_DEPTH:
        return "<nested too deep>"
    as_dict = getattr(value, "as_dict", None)
    if callable(as_dict):  # a Refusal and its kin
        value = as_dict()
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in list(value.items())[:MAX_ITEMS]:
            if str(key).lower() not in CONTENT_KEYS:
                out[_text(str(key))] = _clean(item, depth + 1)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        return [_clean(item, depth + 1) for item in items[:MAX_ITEMS]]
    return _text(str(value))


def encode(event: Mapping[str, Any]) -> str:
    """The log line for `event` (with its newline): the known keys only, cleaned, plus time."""
    import json

    record: dict[str, object] = {"time": _now()}
    for key in KEYS:
        if key in event:
            record[key] = _clean(event[key])
    line = json.dumps(record, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    if len(line) > MAX_LINE:
        # Keep the line whole and small rather than lose the event: what still fits stays.
        for key in sorted(record, key=lambda k: -len(json.dumps(record[k]))):
            record[key] = "<too large>"
            line = json.dumps(record, ensure_ascii=True, separators=(",", ":"))
            if len(line) <= MAX_LINE:
                break
    return line + "\n"


def _make_dirs(directory: str) -> bool:
    """Create `directory` and missing parents, each 0700; True if `directory` was created."""
    if os.path.isdir(directory):
        return False
    parent = os.path.dirname(directory)
    if parent and parent != directory:
        _make_dirs(parent)
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        return False
    os.chmod(directory, 0o700)  # the umask may have taken the owner's own bits
    return True


class AuditLog:
    """`log(event)` appends one redacted line to `path` (default: the user log dir)."""

    __slots__ = ("_own_dir", "_reported", "last_error", "path")

    def __init__(self, path: str | None = None) -> None:
        # corral's own log directory is tightened when found too open; a directory the user
        # chose (with `path`) may be shared, and is only ever created, never changed.
        self._own_dir = path is None
        self.path = path if path is not None else os.path.join(dirs.user_log_dir(), FILE_NAME)
        self.last_error: str | None = None
        self._reported = False

    def log(self, event: Mapping[str, Any]) -> str | None:
        """Append `event`. Returns an error message the first time writing fails (after a
        success, the next failure is reported again); None otherwise. Never raises."""
        try:
            self._append(encode(event).encode("ascii"))
        except Exception as e:  # the record must never break the call it records
            self.last_error = f"audit log {self.path}: {e}"
            if self._reported:
                return None
            self._reported = True
            return self.last_error
        self._reported = False
        return None

    def _append(self, data: bytes) -> None:
        directory = os.path.dirname(os.path.abspath(self.path))
        if not _make_dirs(directory) and self._own_dir:
            info = os.stat(directory)
            if info.st_mode & 0o077 and info.st_uid == os.getuid():
                os.chmod(directory, 0o700)
        # O_NOFOLLOW: a symlink planted at the log's name must not redirect the writes;
        # O_NONBLOCK: a FIFO there must not hang the editor (it is refused below).
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        fd = os.open(self.path, flags | os.O_NONBLOCK, 0o600)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError("not a regular file")
            if info.st_mode & 0o077:  # wider than the owner: narrowed, never widened
                os.fchmod(fd, 0o600)
            written = os.write(fd, data)  # one write: concurrent appends stay whole lines
            if written != len(data):
                raise OSError(f"short write: {written} of {len(data)} bytes")
        finally:
            os.close(fd)
