"""tar, zip and the compressors: listing and decompressing to stdout read; the rest writes.
tar also has options that run programs (`--to-command`, `--checkpoint-action=exec=...`,
`--use-compress-program`, `-I`, volume scripts)."""

from __future__ import annotations

from corral.classify.command import Word, names
from corral.classify.options import parse
from corral.classify.result import DYNAMIC, NETWORK, WRITES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.classify.command import Command

_TAR_RUNS = (
    "to-command",
    "checkpoint-action",
    "use-compress-program",
    "info-script",
    "new-volume-script",
    "rsh-command",
    "rmt-command",
)
_TAR_WRITES = ("index-file", "listed-incremental", "volno-file")
_TAR_VALUES = "bCfFgHIKLNTVX"  # short options whose value is the next word
_TAR_LONG_VALUES = (
    *_TAR_RUNS, *_TAR_WRITES, "file", "directory", "files-from", "exclude-from",
)  # fmt: skip


def tar(cmd: Command) -> None:
    args = list(cmd.args)
    if args and args[0].static and args[0].text[:1] not in ("-", ""):
        args = _old_style(args)  # `tar xzf a.tgz`: the first word is a bundle of letters
    parsed = parse(args, _TAR_VALUES, _TAR_LONG_VALUES)
    found = cmd.found
    if parsed.opaque:
        found.flag(DYNAMIC, f"tar: {parsed.opaque[0].raw} may expand to an option")
    for opt in parsed.opts:
        risky = opt.long and any(opt.is_(n) for n in _TAR_RUNS) and opt.name != "checkpoint"
        if risky or (not opt.long and opt.name in ("I", "F")):
            found.flag(DYNAMIC, f"tar {'--' if opt.long else '-'}{opt.name} runs a program")
    # Options that write a file whatever the mode, listing included.
    for opt in parsed.opts:
        writes = any(opt.is_(n) for n in _TAR_WRITES) if opt.long else opt.name == "g"
        if writes:
            path = opt.value or ""
            found.write(path, f"tar {'--' if opt.long else '-'}{opt.name} writes {path}")
    archives = parsed.values("file", "f")
    if any(":" in a.split("/", 1)[0] for a in archives) and not parsed.has("force-local"):
        found.flag(NETWORK, "tar with host:file reaches another host")
    if parsed.has("list", "t") or parsed.has("diff", "d") or parsed.has("compare"):
        return
    if parsed.has("extract", "x") or parsed.has("get"):
        if not parsed.has("to-stdout", "O"):
            directories = parsed.values("directory", "C") or ["."]
            for path in directories:
                found.write(path, f"tar extracts into {path}")
        return
    if archives and archives != ["-"]:
        for path in archives:
            found.write(path, f"tar writes {path}")
    else:
        found.flag(WRITES, "tar writes an archive")


def _old_style(args: list[Word]) -> list[Word]:
    """`tar czf out.tgz dir` -> `tar -c -z -f out.tgz dir` (values taken in letter order)."""
    letters, rest = args[0].text, args[1:]
    out: list[Word] = []
    for letter in letters:
        out.append(Word("-" + letter))
        if letter in _TAR_VALUES and rest:
            out.append(rest.pop(0))
    return out + rest


def unzip(cmd: Command) -> None:
    parsed = parse(cmd.args, "dx")
    if any(parsed.has(short=s) for s in "lvtpZz"):
        return
    directories = parsed.values(short="d") or ["."]
    for path in directories:
        cmd.found.write(path, f"unzip extracts into {path}")


def zip_(cmd: Command) -> None:
    parsed = parse(cmd.args, "bnPtTx", ("temp-path", "password", "unzip-command"))
    if parsed.has("unzip-command", "TT") or any(w.text.startswith("-TT") for w in cmd.args):
        cmd.found.flag(DYNAMIC, "zip -TT runs a program")
    if parsed.positionals:
        path = parsed.positionals[0].text
        cmd.found.write(path, f"zip writes {path}")


def compressor(cmd: Command) -> None:
    """gzip & co. replace their files unless told to write to stdout, list or test."""
    parsed = parse(cmd.args, "S", ("suffix",))
    if any(parsed.has(long, short) for long, short in _TO_STDOUT):
        return
    files = [w.text for w in parsed.positionals]
    for path in files:
        cmd.found.write(path, f"{cmd.name} replaces {path}")
    if not files:
        return  # from stdin to stdout


_TO_STDOUT = (("stdout", "c"), ("to-stdout", "c"), ("list", "l"), ("test", "t"))

RULES: dict[str, Callable[[Command], None]] = {
    "tar": tar,
    "unzip": unzip,
    "zip": zip_,
}
COMPRESSORS = names(
    "gzip gunzip bzip2 bunzip2 xz unxz lzma unlzma zstd unzstd lz4 brotli pigz pbzip2 compress"
)
RULES.update({name: compressor for name in COMPRESSORS})
