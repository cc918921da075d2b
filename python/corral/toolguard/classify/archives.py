"""tar, zip and the compressors: listing and decompressing to stdout read; the rest writes.
tar also has options that run programs (`--to-command`, `--checkpoint-action=exec=...`,
`--use-compress-program`, `-I`, volume scripts)."""

from __future__ import annotations

from corral.toolguard.classify.options import parse
from corral.toolguard.classify.result import DYNAMIC, NETWORK, WRITES
from corral.toolguard.classify.simple_command import Word, names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.toolguard.classify.simple_command import Command

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


# Info-ZIP's own option syntax: a `-` inside a cluster or a leading `--` negates the next
# letter (`-l-l`, `-l --l` cancel the listing and extract), options may follow the archive, and
# `UNZIP`/`UNZIPOPT` add more. Only the plainest questions read.
_UNZIP_READS = frozenset({"-l", "-v", "-t", "-p", "-z", "-Z"})


def unzip(cmd: Command) -> None:
    args = cmd.args
    if (
        len(args) >= 2
        and args[0].static
        and args[0].text in _UNZIP_READS
        and all(w.static and not w.text.startswith("-") for w in args[1:])
    ):
        return
    parsed = parse(args, "dx")
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


# Compressors: the options they share and that neither write nor run anything. One outside
# this allowlist is dynamic: new versions add options, and some write (zstd's -o, --trace,
# --output-dir-*, brotli's -o) or remove files (--rm, brotli -j).
_COMPRESSOR_FLAGS = "0123456789abcdefhklmnpqrstvzBCFHLNQVZj"
_COMPRESSOR_LONG = (
    "stdout", "to-stdout", "decompress", "uncompress", "compress", "keep", "force", "quiet",
    "verbose", "test", "list", "help", "long-help", "version", "license", "no-name", "name",
    "recursive", "rsyncable", "fast", "best", "ascii", "synchronous", "small", "extreme",
    "no-warn", "robot", "single-stream", "sparse", "no-sparse", "ignore-check", "no-adjust",
    "info-memory", "ultra", "long", "adapt", "progress", "no-progress", "check", "no-check",
    "exclude-compressed", "content-size", "no-content-size", "favor-decSpeed", "no-frame-crc",
    "no-copy-stat", "format", "threads", "memlimit", "memlimit-compress", "memlimit-decompress",
    "memory", "suffix", "patch-from", "filelist", "files", "files0", "block-size", "quality",
    "lgwin", "stream-size", "size-hint", "processes", "independent", "rm", "output",
    "output-dir-flat", "output-dir-mirror", "trace",
)  # fmt: skip
_COMPRESSOR_LONG_VALUES = (
    "suffix", "format", "check", "threads", "memlimit", "memlimit-compress",
    "memlimit-decompress", "memory", "block-size", "quality", "lgwin", "filelist", "output",
    "output-dir-flat", "output-dir-mirror", "trace", "processes",
)  # fmt: skip
# Short options that take the next word, per tool: a letter that takes a value in one tool is
# a flag in another (`brotli -q 5`, `gzip -q f`), and reading `f` as a value would hide a file.
_COMPRESSOR_VALUES = {
    "gzip": "S", "gunzip": "S", "pigz": "Sbp", "unpigz": "Sbp", "xz": "SFCTM", "unxz": "SFCTM",
    "lzma": "SFCTM", "unlzma": "SFCTM", "zstd": "oD", "unzstd": "oD", "zstdcat": "oD",
    "brotli": "qwoS", "compress": "b",
}  # fmt: skip
_COMPRESSOR_WRITES = (("output", "o"), ("output-dir-flat", ""), ("output-dir-mirror", ""),
                      ("trace", ""))  # fmt: skip
_TO_STDOUT = (("stdout", "c"), ("to-stdout", "c"))
# Listing and testing write nothing, but xz, bzip2 and zstd obey the last mode given (`xz -t -z
# f` compresses f): they count only with no other mode beside them.
_ONLY_READ = (("list", "l"), ("test", "t"))
_MODES = (("compress", "z"), ("decompress", "d"), ("uncompress", "d"))


def compressor(cmd: Command) -> None:
    """gzip & co. replace their files unless told to write to stdout, list or test."""
    from corral.toolguard.classify.wrappers import (
        unknown_options,  # wrappers imports these rules' peers
    )

    values = _COMPRESSOR_VALUES.get(cmd.name, "")
    parsed = parse(cmd.args, values, _COMPRESSOR_LONG_VALUES)
    if parsed.opaque:
        cmd.found.flag(DYNAMIC, f"{cmd.name}: {parsed.opaque[0].raw} may expand to an option")
    unknown_options(cmd, parsed, _COMPRESSOR_FLAGS + values, _COMPRESSOR_LONG)
    files = [w.text for w in parsed.positionals]
    for long, short in _COMPRESSOR_WRITES:
        for path in parsed.values(long, short):
            cmd.found.write(path, f"{cmd.name} --{long} writes {path}")
    if parsed.has("rm") or (cmd.name == "brotli" and parsed.has(short="j")):
        for path in files:
            cmd.found.write(path, f"{cmd.name} --rm removes {path}")
    to_stdout = cmd.name == "zstdcat" or any(parsed.has(lg, sh) for lg, sh in _TO_STDOUT)
    if any(parsed.has(lg, sh) for lg, sh in _ONLY_READ):
        to_stdout = to_stdout or not any(parsed.has(lg, sh) for lg, sh in _MODES)
    if to_stdout or parsed.has("output", "o"):
        return
    for path in files:  # none: from stdin to stdout
        cmd.found.write(path, f"{cmd.name} replaces {path}")


RULES: dict[str, Callable[[Command], None]] = {
    "tar": tar,
    "unzip": unzip,
    "zip": zip_,
}
COMPRESSORS = names(
    """gzip gunzip bzip2 bunzip2 xz unxz lzma unlzma zstd unzstd zstdcat lz4 brotli pigz unpigz
    pbzip2 compress"""
)
RULES.update({name: compressor for name in COMPRESSORS})
