"""Tools that only read, and the options that make some of them write or run programs.

A tool is in `INSENSITIVE` only when none of its options writes a file or runs a program, so
nothing an argument expands to can change that. Every other tool here checks its options, and
an argument that may expand into an option (`$X`, `*`, `"$X"` in option position) makes it
dynamic: a file named `--pre=sh` in the directory turns `rg foo *` into a launcher.
"""

from __future__ import annotations

from itertools import pairwise

from corral.toolguard.classify.envvars import is_risky
from corral.toolguard.classify.options import parse
from corral.toolguard.classify.result import DYNAMIC, NETWORK, REMOVERS, WRITES
from corral.toolguard.classify.simple_command import names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from corral.toolguard.classify.options import Parsed
    from corral.toolguard.classify.simple_command import Command, Word

INSENSITIVE = names(
    """
    ls dir vdir cat head tail wc grep egrep fgrep zgrep zegrep zfgrep stat du df pwd echo cut tr
    basename dirname realpath readlink which whereis type diff cmp comm true false : nl tac rev
    fold fmt column paste join od hexdump strings md5sum sha1sum sha224sum sha256sum sha384sum
    sha512sum b2sum cksum sum base32 base64 basenc expand unexpand pr seq sleep id whoami groups
    uname arch nproc printenv tty locale users who uptime free ps pgrep pidof cd pushd popd dirs
    shift exit return break continue jq zcat bzcat xzcat lzcat numfmt tsort getconf
    logname shellcheck expr factor cal lscpu lsblk lsmem
    times help unalias yes clear lsof netstat
    """
)


def read_only(cmd: Command) -> None:
    """Nothing to add: the command reads (its redirections are checked by the walker)."""


def opaque(cmd: Command, parsed: Parsed) -> bool:
    """Flag arguments that may expand into options; True when there were any."""
    for word in parsed.opaque:
        cmd.found.flag(DYNAMIC, f"{cmd.name}: {word.raw} may expand to an option")
    return bool(parsed.opaque)


def checked(
    short_values: str = "",
    long_values: Sequence[str] = (),
    writes: Sequence[str] = (),
    runs: Sequence[str] = (),
    optional_short: str = "",
) -> Callable[[Command], None]:
    """A rule for a tool whose options `writes` (named as `x` short, `--xyz` long) write the
    file given as their value, and whose options `runs` run a program."""

    def rule(cmd: Command) -> None:
        parsed = parse(cmd.args, short_values, long_values, optional_short)
        opaque(cmd, parsed)
        for opt in parsed.opts:
            shown = f"{'--' if opt.long else '-'}{opt.name}"
            if any(opt.is_(*_names(name)) for name in runs):
                cmd.found.flag(DYNAMIC, f"{cmd.name} {shown} runs a program")
            elif any(opt.is_(*_names(name)) for name in writes):
                path = opt.value or ""
                cmd.found.write(path, f"{cmd.name} {shown} writes {path or 'a file'}".rstrip())

    return rule


def _names(name: str) -> tuple[str, str]:
    """`"o"` is a short option, anything longer a long one: (long, short) for `Opt.is_`."""
    return ("", name) if len(name) == 1 else (name, "")


FIND_RUNS = names("-exec -execdir -ok -okdir")
FIND_WRITES = names("-fprint -fprint0 -fprintf -fls")
# Predicates whose next word is a value (a pattern, a name, a number), never an expression.
FIND_VALUES = names(
    """
    -name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type -xtype
    -user -group -uid -gid -perm -size -newer -anewer -cnewer -samefile -inum -links -mtime
    -mmin -atime -amin -ctime -cmin -used -maxdepth -mindepth -fstype -context -regextype
    -printf -files0-from
    """
)


def find(cmd: Command) -> None:
    args = cmd.args
    i = 0
    while i < len(args) and args[i].static and _find_global(args[i].text):
        i += 2 if args[i].text == "-D" else 1
    starts: list[str] = []
    while i < len(args) and not (args[i].static and args[i].text[:1] in ("-", "(", "!", ")", ",")):
        if args[i].may_be_option:
            cmd.found.flag(DYNAMIC, f"find: {args[i].raw} may expand to an expression")
        starts.append(args[i].text)
        i += 1
    while i < len(args):
        word = args[i]
        text = word.text
        i += 1
        if not word.static:
            if word.may_be_option:
                cmd.found.flag(DYNAMIC, f"find: {word.raw} may expand to an expression")
            continue
        if text in FIND_RUNS:
            end = i
            while end < len(args) and args[end].text not in (";", "+"):
                end += 1
            cmd.found.flag(DYNAMIC, f"find {text} runs a command for each file")
            if i < end and args[i].text in REMOVERS:  # (as -delete does, r90a FINDEXECRM)
                cmd.found.destroy(f"find {text} {args[i].text} removes every file it matches")
            cmd.inner(args[i:end])
            i = end + 1
        elif text == "-delete":
            for path in starts or ["."]:
                cmd.found.write(path, f"find -delete removes files under {path}")
            cmd.found.destroy("find -delete removes every file it matches")
        elif text in FIND_WRITES and i < len(args):
            cmd.found.write(args[i].text, f"find {text} writes {args[i].text}")
            i += 2 if text == "-fprintf" else 1
        elif text in FIND_VALUES or text.startswith("-newer"):
            i = _find_value(cmd, args, i)


def _find_global(text: str) -> bool:
    return text in ("-H", "-L", "-P", "-D") or (text.startswith("-O") and text[2:].isdigit())


def _find_value(cmd: Command, args: Sequence[Word], i: int) -> int:
    """Skip a predicate's value: quoted expansions are fine there, splitting ones are not."""
    if i < len(args):
        if args[i].spelling.splits:
            cmd.found.flag(DYNAMIC, f"find: {args[i].raw} may expand to an expression")
        return i + 1
    return i


def _positional_output(
    index: int, short_values: str, long_values: Sequence[str] = ()
) -> Callable[[Command], None]:
    """Tools whose positional argument number `index` is an output file (`uniq in out`).

    The values of these tools' options are numbers: a word an option would take that is not
    one is counted as a positional too, so an option spelling we misread (a bundle, a flag we
    took for a valued option) can never hide the file that is written."""

    def rule(cmd: Command) -> None:
        parsed = parse(cmd.args, short_values, long_values)
        if opaque(cmd, parsed):
            return
        positionals = list(parsed.positionals)
        for opt in parsed.opts:
            word = opt.value_word
            if word is not None and not word.text.lstrip("+-").isdigit():
                positionals.append(word)
        for word in positionals:
            if word.spelling.splits:  # `uniq *` may name two files, the second one written
                cmd.found.flag(DYNAMIC, f"{cmd.name}: {word.raw} may expand to several files")
                return
        chosen = {id(w) for w in positionals}
        ordered = [w for w in cmd.args if id(w) in chosen]
        for word in ordered[index:]:
            cmd.found.write(word.text, f"{cmd.name} writes {word.text}")

    return rule


# xxd reads its own options, one per word, each known by its first letter (`-ps` is `-p`,
# `-cols 8` is `-c 8`, `--len` is `-l`); options stop at the first word that is not one.
# These letters take a value: attached, or the next word when nothing is attached. A longer
# spelling (`-cols`, `-seek`) takes the next word in some versions and not in others.
_XXD_VALUES = "cglosnR"


def xxd(cmd: Command) -> None:
    """`xxd [options] [infile [outfile]]`: the second file is written (with -r, any bytes).

    Fails closed: a value is taken from the next word only where every xxd does so (`-c 8`,
    `-l 16`); otherwise the next word counts as a file, and every word after the first file,
    options included, is a file as well."""
    args = cmd.args
    for word in args:
        if word.may_be_option or word.spelling.splits:
            cmd.found.flag(DYNAMIC, f"xxd: {word.raw} may expand to an option or several files")
            return
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        letter_at = 2 if text.startswith("--") else 1
        letter, attached = text[letter_at : letter_at + 1], text[letter_at + 1 :]
        i += 2 if letter in _XXD_VALUES and not attached else 1
    files = args[i:]
    if len(files) == 2 and files[1].text == "-":
        return  # `-` is standard output
    for word in files[1:]:
        cmd.found.write(word.text, f"xxd writes {word.text}")


def date(cmd: Command) -> None:
    parsed = parse(cmd.args, "dfrs", ("date", "file", "reference", "set"), optional_short="I")
    if opaque(cmd, parsed):
        return
    if parsed.has("set", "s") or any(not w.text.startswith("+") for w in parsed.positionals):
        cmd.found.flag(WRITES, "date sets the system clock")


def hostname(cmd: Command) -> None:
    parsed = parse(cmd.args, "F", ("file",))
    if opaque(cmd, parsed):
        return
    if parsed.positionals or parsed.has("file", "F"):
        cmd.found.flag(WRITES, "hostname sets the host name")
    # the fully qualified names and the addresses come from a name lookup (DNS)
    if any(parsed.has(long, short) for long, short in _HOSTNAME_LOOKUPS):
        cmd.found.flag(NETWORK, "hostname -f/-A/-d/-i looks the host name up (DNS)")


_HOSTNAME_LOOKUPS = (("fqdn", "f"), ("long", "f"), ("all-fqdns", "A"), ("domain", "d"),
                     ("ip-address", "i"), ("yp", "y"), ("nis", "y"), ("alias", "a"))  # fmt: skip

# getent databases that are looked up on the network (DNS) rather than in local files.
_GETENT_NETWORK = names("hosts ahosts ahostsv4 ahostsv6 networks netgroup")


def getent(cmd: Command) -> None:
    parsed = parse(cmd.args, "s", ("service",))
    if opaque(cmd, parsed):
        return
    database = parsed.positionals[0] if parsed.positionals else None
    if database is not None and not database.static:
        cmd.found.flag(DYNAMIC, f"getent: {database.raw} may name a network database")
    elif database is not None and database.text in _GETENT_NETWORK:
        cmd.found.flag(NETWORK, f"getent {database.text} looks names up on the network (DNS)")


# ss: -D/--diag writes the raw diagnostic data to a file, -K/--kill closes sockets, -N/--net
# switches network namespace; every other option only chooses what to show.
_SS_FLAGS = "hVHOnrlaoempiTsEZzb460tSuwxdMK"
_SS_LONG = (
    "numeric", "resolve", "all", "listening", "options", "extended", "memory", "processes",
    "threads", "info", "tos", "cgroup", "summary", "events", "context", "contexts", "bpf",
    "ipv4", "ipv6", "packet", "tcp", "mptcp", "sctp", "udp", "dccp", "raw", "unix", "vsock",
    "xdp", "inet-sockets", "tipc", "no-header", "oneline", "kill", "kill-sockets", "family",
    "query", "socket", "filter", "diag", "net", "tipcinfo", "bpf-maps",
)  # fmt: skip


def ss(cmd: Command) -> None:
    from corral.toolguard.classify.wrappers import (
        unknown_options,  # wrappers imports readers' peers
    )

    parsed = parse(cmd.args, "fADFN", ("family", "query", "socket", "filter", "diag", "net"))
    if opaque(cmd, parsed) or unknown_options(cmd, parsed, _SS_FLAGS + "fADFN", _SS_LONG):
        return
    for path in parsed.values("diag", "D"):
        cmd.found.write(path, f"ss -D writes {path}")
    if parsed.has("kill", "K"):
        cmd.found.flag(WRITES, "ss -K closes sockets")
    if parsed.has("net", "N"):
        cmd.found.flag(DYNAMIC, "ss -N switches to another network namespace")
    if parsed.has("resolve", "r"):
        cmd.found.flag(NETWORK, "ss -r resolves addresses to names (DNS)")


def _names_subscript(word: Word) -> bool:
    """Could this word name an array element (whose subscript bash evaluates as code)?"""
    return not word.static or "[" in word.text


def printf(cmd: Command) -> None:
    args = cmd.args
    if args and args[0].may_be_option:
        cmd.found.flag(DYNAMIC, f"printf: {args[0].raw} may expand to -v NAME")
    elif args and args[0].text.startswith("-v") and len(args[0].text) > 2:
        cmd.found.flag(DYNAMIC, f"printf {args[0].raw}: -vNAME assigns (and may evaluate) NAME")
    elif len(args) > 1 and args[0].text == "-v":
        if _names_subscript(args[1]):
            cmd.found.flag(DYNAMIC, f"printf -v {args[1].raw} evaluates a subscript as code")
        elif is_risky(args[1].text, exported=False):
            cmd.found.flag(DYNAMIC, f"printf -v {args[1].text} changes what runs")


def test(cmd: Command) -> None:
    """`test -v 'a[$(id)]'` runs `id`; so does `[ $x ]` with x='-v a[$(id)]'."""
    args = cmd.args
    if any(w.spelling.splits for w in args):
        cmd.found.flag(DYNAMIC, f"{cmd.name}: an argument may expand to -v NAME")
        return
    for word, nxt in pairwise(args):
        if (word.text in ("-v", "-R") or not word.static) and _names_subscript(nxt):
            cmd.found.flag(DYNAMIC, f"{cmd.name} -v {nxt.raw} may evaluate a subscript as code")
            return


def jobs_wait(cmd: Command) -> None:
    """`jobs -x CMD` runs CMD; `wait -p 'a[$(id)]'` evaluates a subscript: with options, neither
    is a plain read."""
    if any(w.text.startswith("-") or w.may_be_option for w in cmd.args):
        cmd.found.flag(DYNAMIC, f"{cmd.name} with options may run or evaluate code")


def tree(cmd: Command) -> None:
    """tree -R (with -H) writes 00Tree.html into every directory; -o writes its output."""
    if any(w.text.startswith("-") and not w.text.startswith("--") and "R" in w.text
           for w in cmd.args):  # fmt: skip
        cmd.found.flag(DYNAMIC, "tree -R writes an index file into each directory")
        return
    _tree_output(cmd)


# tree reads its own options: in a cluster every letter that takes a value takes the next
# word in turn (`-Po PAT FILE`: -P takes PAT, -o takes FILE); newer trees also read `-L3`.
_TREE_VALUES = "LPIHTo"


def _tree_output(cmd: Command) -> None:
    args = cmd.args
    for i, word in enumerate(args):
        if word.may_be_option:
            cmd.found.flag(DYNAMIC, f"tree: {word.raw} may expand to an option")
            return
        text = word.text
        if text == "--":
            return
        if not text.startswith("-") or text.startswith("--") or "o" not in text[1:]:
            continue
        # -o's file comes after the values of the letters before it; `-L3` is read both
        # ways (a value attached, or the next word).
        before = text[1 : text.index("o", 1)]
        taken = sum(1 for c in before if c in _TREE_VALUES)
        attached = sum(
            1 for j, c in enumerate(before) if c == "L" and before[j + 1 : j + 2].isdigit()
        )
        candidates = sorted({i + 1 + taken - attached, i + 1 + taken})
        paths = [args[k].text for k in candidates if k < len(args)]
        for path in paths or [""]:
            cmd.found.write(path, f"tree -o writes {path or 'a file'}")


def less(cmd: Command) -> None:
    if cmd.env.get("LESSSECURE") == "1":
        return
    cmd.found.flag(DYNAMIC, "less can run shell commands (! and |) unless LESSSECURE=1")


def rg(cmd: Command) -> None:
    parsed = parse(cmd.args, "efgtTmABCjMrE", ("regexp", "file", "glob", "type", "replace"))
    opaque(cmd, parsed)
    for opt in parsed.opts:
        if opt.long and any(opt.is_(n) for n in ("pre", "pre-glob", "hostname-bin")):
            cmd.found.flag(DYNAMIC, f"rg --{opt.name} runs a program on each file")


def _fd_runs(text: str) -> bool:
    """-x/-X alone, in a cluster of short options (-Hx, -tfx), or --exec[-batch][=CMD]."""
    if text.startswith("--"):
        return text.split("=", 1)[0] in ("--exec", "--exec-batch")
    return text.startswith("-") and any(c in "xX" for c in text[1:])


def fd(cmd: Command) -> None:
    """fd -x/-X CMD...: the rest of the line (up to `;`) is a command run per file."""
    args = cmd.args
    for i, word in enumerate(args):
        if word.may_be_option:
            cmd.found.flag(DYNAMIC, f"{cmd.name}: {word.raw} may expand to an option")
            return
        if word.text not in ("-x", "-X", "--exec", "--exec-batch") and _fd_runs(word.text):
            cmd.found.flag(DYNAMIC, f"{cmd.name} {word.raw} runs a command for each file")
            return
        if word.text in ("-x", "-X", "--exec", "--exec-batch"):
            cmd.found.flag(DYNAMIC, f"{cmd.name} {word.raw} runs a command for each file")
            end = next((j for j in range(i + 1, len(args)) if args[j].text == ";"), len(args))
            cmd.inner(args[i + 1 : end])
            return


def yq(cmd: Command) -> None:
    parsed = parse(cmd.args, "", ("expression", "front-matter", "output-format", "input-format"))
    if opaque(cmd, parsed):
        return
    # mikefarah's yq spells it --inplace; kislyuk's (Debian's) --in-place: any start of
    # either (getopt and argparse both take an unambiguous one, `--in-pl`)
    in_place = parsed.has("inplace", "i") or parsed.has("in-place")
    if in_place:
        for word in parsed.positionals[1:]:
            cmd.found.write(word.text, f"yq -i writes {word.text}")
    # -s/--split-exp EXPR writes every result to a file named by EXPR (mikefarah's yq);
    # any cluster with an `s` counts (cobra reads `-Ps EXPR` as -P -s EXPR).
    if (
        parsed.has("split-exp")
        or parsed.has("split-exp-file")
        or any(not o.long and o.name == "s" for o in parsed.opts)
    ):
        cmd.found.write("", "yq -s/--split-exp writes files named by an expression")


RULES: dict[str, Callable[[Command], None]] = {name: read_only for name in INSENSITIVE}
RULES.update(
    {
        "find": find,
        "sort": checked(
            "kotST",
            ("key", "output", "field-separator", "buffer-size", "temporary-directory",
             "compress-program"),
            writes=("o", "output"),
            runs=("compress-program",),
        ),
        "uniq": _positional_output(1, "fsw", ("skip-fields", "skip-chars", "check-chars")),
        "xxd": xxd,
        "tree": tree,
        "jobs": jobs_wait,
        "wait": jobs_wait,
        "file": checked(
            "emFfP",
            ("magic-file", "separator", "files-from", "parameter"),
            writes=("C", "compile"),
        ),
        "shuf": checked(
            "ino",
            ("input-range", "head-count", "output", "random-source"),
            writes=("o", "output"),
        ),
        "date": date,
        "hostname": hostname,
        "getent": getent,
        "ss": ss,
        "printf": printf,
        "test": test,
        "[": test,
        "less": less,
        "rg": rg,
        "fd": fd,
        "fdfind": fd,
        "yq": yq,
    }
)  # fmt: skip
