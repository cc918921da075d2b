"""Text as it may be shown on a terminal or in a message: what a command chose (a file name,
an error line) escaped, so it cannot rewrite what the user reads."""

from __future__ import annotations

# Characters a file name may hold that would rewrite what the user reads: line breaks and
# terminal escapes (a name with "\n corral: all changes applied" in it), bidi overrides.
_UNSHOWN = {
    c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
    for c in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F),
              *range(0x2066, 0x206A))
}  # fmt: skip
# ... and a byte of a name that is not UTF-8 (read with surrogateescape), as its byte: 0x9b
# is an escape's start to an 8-bit terminal (r60a RAWBYTES)
_UNSHOWN.update({c: f"\\x{c - 0xDC00:02x}" for c in range(0xDC80, 0xDD00)})


def shown(text: str) -> str:
    """`text` with every control and bidi character escaped, for a terminal or a message."""
    return text.translate(_UNSHOWN)
