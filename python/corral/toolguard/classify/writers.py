"""Tools that write files, and which of their arguments name what they write."""

from __future__ import annotations

from corral.toolguard.classify.options import parse
from corral.toolguard.classify.result import DYNAMIC, WRITES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from corral.toolguard.classify.simple_command import Command


def _record(cmd: Command, paths: Sequence[str], verb: str = "writes") -> None:
    for path in paths:
        cmd.found.write(path, f"{cmd.name} {verb} {path}")
    if not paths:
        cmd.found.flag(WRITES, f"{cmd.name} writes files")


def each_operand(
    short_values: str = "", long_values: Sequence[str] = (), skip: int = 0, verb: str = "writes"
) -> Callable[[Command], None]:
    """Every operand is written (`rm a b`, `touch f`); `skip` leading ones are not paths
    (`chmod MODE f`), unless a `--reference` file stands in for them."""

    def rule(cmd: Command) -> None:
        parsed = parse(cmd.args, short_values, long_values)
        operands = parsed.positionals[0 if parsed.has("reference") else skip :]
        _record(cmd, [w.text for w in operands], verb)

    return rule


def to_target(short_values: str = "", long_values: Sequence[str] = ()) -> Callable[[Command], None]:
    """`cp SRC... DEST`, `cp -t DIR SRC...`, `ln`, `install`: the destination is written."""

    def rule(cmd: Command) -> None:
        parsed = parse(cmd.args, "t" + short_values, ("target-directory", *long_values))
        if cmd.name == "install" and parsed.has("strip-program"):
            cmd.found.flag(DYNAMIC, "install --strip-program runs a program")
        if cmd.name == "install" and parsed.opaque:
            cmd.found.flag(DYNAMIC, f"install: {parsed.opaque[0].raw} may expand to an option")
        targets = parsed.values("target-directory", "t")
        if targets:
            _record(cmd, targets)
        elif cmd.name == "install" and parsed.has("directory", "d"):
            _record(cmd, [w.text for w in parsed.positionals])
        elif parsed.positionals:
            _record(cmd, [parsed.positionals[-1].text])
        else:
            _record(cmd, [])

    return rule


def mv(cmd: Command) -> None:
    """Sources disappear and the destination appears: every operand counts as written."""
    parsed = parse(cmd.args, "tS", ("target-directory", "suffix", "backup"))
    _record(cmd, parsed.values("target-directory", "t") + [w.text for w in parsed.positionals])


def dd(cmd: Command) -> None:
    for word in cmd.args:
        if word.text.startswith("of="):
            _record(cmd, [word.text[3:]])


def tee(cmd: Command) -> None:
    parsed = parse(cmd.args)
    if parsed.positionals:  # without files, tee only copies its input to its output
        _record(cmd, [w.text for w in parsed.positionals])


_SPLIT_VALUES = (
    "bytes",
    "line-bytes",
    "lines",
    "number",
    "separator",
    "suffix-length",
    "filter",
    "additional-suffix",
    "numeric-suffixes",
)


def split(cmd: Command) -> None:
    parsed = parse(cmd.args, "abCdlnt", _SPLIT_VALUES)
    if parsed.has("filter") or parsed.opaque:
        cmd.found.flag(DYNAMIC, f"{cmd.name} --filter runs a shell command")
    prefix = parsed.positionals[1].text if len(parsed.positionals) > 1 else "x"
    cmd.found.write(prefix, f"{cmd.name} writes files named {prefix}*")


def _rm(cmd: Command) -> None:
    each_operand(verb="removes")(cmd)
    parsed = parse(cmd.args)
    if parsed.has("recursive", "r") or parsed.has(short="R"):
        cmd.found.destroy(f"{cmd.name} -r removes whole directories")
    elif parsed.opaque or not all(w.static for w in parsed.positionals):
        # (`rm -f *`, `rm $files`: as many files as it expands to, and a file named `-rf`
        # among them is an option, r90a RMGLOBSTAR, RMDYNOPT)
        cmd.found.destroy(f"{cmd.name} of a pattern or a variable removes all it expands to")


def mktemp(cmd: Command) -> None:
    cmd.found.flag(WRITES, "mktemp creates a temporary file")


RULES: dict[str, Callable[[Command], None]] = {
    "rm": _rm,
    "rmdir": each_operand(verb="removes"),
    "unlink": each_operand(verb="removes"),
    "shred": each_operand("ns", ("iterations", "size", "random-source"), verb="overwrites"),
    # -Z is a flag and --context[=CTX] takes its value only attached: neither takes a word
    "mkdir": each_operand("m", ("mode",), verb="creates"),
    "mkfifo": each_operand("m", ("mode",), verb="creates"),
    "mknod": each_operand("m", ("mode",), verb="creates"),
    "touch": each_operand("drt", ("date", "reference", "time")),
    "truncate": each_operand("rs", ("reference", "size")),
    "chmod": each_operand("", ("reference",), skip=1, verb="changes"),
    "chown": each_operand("", ("reference", "from"), skip=1, verb="changes"),
    "chgrp": each_operand("", ("reference",), skip=1, verb="changes"),
    "chattr": each_operand("pv", skip=1, verb="changes"),
    "setfacl": each_operand("mxMX", ("modify", "remove", "set", "set-file"), verb="changes"),
    "cp": to_target("S", ("suffix", "backup", "reflink", "sparse", "preserve")),
    "ln": to_target("S", ("suffix", "backup")),
    "install": to_target("gmoS", ("group", "mode", "owner", "suffix", "strip-program", "context")),
    "mv": mv,
    "dd": dd,
    "tee": tee,
    "split": split,
    "csplit": split,
    "patch": each_operand(
        "pBDFiodrVxYz",
        ("strip", "input", "output", "directory", "reject-file", "prefix", "suffix"),
    ),
    "sponge": each_operand(),
    "mktemp": mktemp,
}
