"""Path entries in policy lists: expansion, normalisation and de-duplication.

An entry may be `~` or `~/x`, `urn:corral:cwd[/x]`, `urn:corral:buffer:path[/x]` (the directory of
the chat buffer's file), `urn:corral:other-homes` (every home directory but the user's), and may
contain `$VAR`, `${VAR}` and `${VAR:-default}`. An unset or empty variable drops the entry: an
empty `$DATA/x` must never widen to `/x`. Relative results are taken from the workspace.
Comparisons are made on resolved paths at path-component boundaries, so `/work/app` never
counts as inside `/work/ap`.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container, Iterable, Mapping, Sequence

URN_PREFIX = "urn:corral:"
HOMES_ROOTS = ("/home", "/root")
PASSWD = "/etc/passwd"  # (other accounts' homes elsewhere: see _passwd_homes)


class ExpandError(ValueError):
    """An entry that cannot be expanded (an unknown urn, an unterminated ${...})."""


class PathContext:
    """What expansion needs to know about the call: workspace, home, environment, buffer."""

    __slots__ = ("buffer_path", "cwd", "env", "home")

    def __init__(self, cwd: str, env: Mapping[str, str], buffer_path: str | None = None) -> None:
        self.cwd = _real(cwd)
        # os.environ encodes and decodes on every lookup; the deny list looks up ~100 names
        self.env = dict(env) if isinstance(env, os._Environ) else env
        self.home = _real(env.get("HOME") or os.path.expanduser("~"))
        self.buffer_path = buffer_path


def _real(path: str) -> str:
    """realpath, by the kernel where the path exists (see real_existing)."""
    found = real_existing(os.path.abspath(path))
    return found if found is not None else os.path.realpath(path)


def is_within(path: str, root: str) -> bool:
    """True when `path` is `root` or below it, comparing whole components."""
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root + "/")


def self_or_parent_in(path: str, paths: Container[str]) -> str | None:
    """The first of `path` and the directories above it that is in `paths`: a few set lookups
    instead of a comparison with every protected path."""
    while True:
        if path in paths:
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def name_matches(name: str, pattern: str) -> bool:
    """Whether one path component matches a protected name's component, where `*` stands
    for any run of characters (`mise.*.toml`): the only wildcard protected names have."""
    if "*" not in pattern:
        return name == pattern
    first, *middle, last = pattern.split("*")
    if len(name) < len(first) + len(last) or not (name.startswith(first) and name.endswith(last)):
        return False
    at, end = len(first), len(name) - len(last)
    for piece in middle:
        found = name.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def _expand_vars(entry: str, env: Mapping[str, str]) -> str | None:
    """Expand $VAR, ${VAR}, ${VAR:-default}; None when a variable without default is unset."""
    if "$" not in entry:
        return entry
    out: list[str] = []
    i, n = 0, len(entry)
    while i < n:
        c = entry[i]
        if c != "$" or i + 1 == n:
            out.append(c)
            i += 1
            continue
        if entry[i + 1] == "{":
            end = entry.find("}", i + 2)
            if end < 0:
                raise ExpandError(f"unterminated ${{...}} in {entry!r}")
            body = entry[i + 2 : end]
            name, sep, default = body.partition(":-")
            if not _is_name(name):
                raise ExpandError(f"invalid variable name {name!r} in {entry!r}")
            value = env.get(name, "")
            if not value:
                if not sep:
                    return None
                value = default
            out.append(value)
            i = end + 1
            continue
        j = i + 1
        while j < n and (entry[j].isalnum() or entry[j] == "_"):
            j += 1
        if j == i + 1:
            out.append(c)
            i += 1
            continue
        value = env.get(entry[i + 1 : j], "")
        if not value:
            return None
        out.append(value)
        i = j
    return "".join(out)


def _is_name(name: str) -> bool:
    return bool(name) and not name[0].isdigit() and all(c.isalnum() or c == "_" for c in name)


# where a passwd home is a system directory, not an account's own files (bin: /bin,
# sys: /dev, irc: /run/ircd, systemd's: /): never hidden for being one
SYSTEM_HOMES = ("/bin", "/sbin", "/usr", "/lib", "/lib64", "/etc", "/dev", "/proc", "/sys",
                "/run", "/var/run", "/var/tmp", "/nonexistent")  # fmt: skip


def _passwd_homes() -> list[str]:
    """The homes /etc/passwd gives other accounts outside HOMES_ROOTS (postgres's
    /var/lib/postgresql, jenkins's, /srv/git: r64b OTHERHOMES), but system directories."""
    try:
        with open(PASSWD, encoding="utf-8", errors="replace") as f:
            lines = f.read(1 << 20).splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split(":")
        if len(fields) < 7 or not fields[5].startswith("/") or fields[2] == str(os.getuid()):
            continue
        home = os.path.normpath(fields[5])
        if home == "/" or any(is_within(home, s) for s in SYSTEM_HOMES):
            continue
        if any(is_within(home, r) for r in HOMES_ROOTS):
            continue  # (listed from the directory below)
        found.append(home)
    return found


def _other_homes(ctx: PathContext) -> list[str]:
    found: list[str] = []
    for root in (*HOMES_ROOTS, *_passwd_homes()):
        candidates = [root] if root not in HOMES_ROOTS or root == "/root" else _children(root)
        for home in candidates:
            if not os.path.isdir(home):
                continue
            real = os.path.realpath(home)
            if not (is_within(ctx.home, real) or is_within(ctx.cwd, real)):
                found.append(real)
    return list(dict.fromkeys(found))


def _children(directory: str) -> list[str]:
    """The directories in `directory`, links to one too (an LDAP user's home linked from
    /home: hidden where it leads, r79c OTHERHOMELINK)."""
    try:
        with os.scandir(directory) as it:
            return [e.path for e in it if e.is_dir()]
    except OSError:
        return []


def _expand_urn(entry: str, ctx: PathContext) -> list[str] | None:
    name, slash, rest = entry[len(URN_PREFIX) :].partition("/")
    if rest:
        expanded = _expand_vars(rest, ctx.env)
        if expanded is None:
            return None
        rest = expanded
    if name == "cwd":
        base = ctx.cwd
    elif name == "buffer:path":
        if not ctx.buffer_path:
            return None
        base = os.path.dirname(os.path.abspath(ctx.buffer_path))
    elif name == "other-homes":
        if slash:
            raise ExpandError(f"{URN_PREFIX}other-homes takes no path after it: {entry!r}")
        return _other_homes(ctx)
    else:
        raise ExpandError(
            f"unknown {URN_PREFIX}{name}; known: urn:corral:cwd, urn:corral:buffer:path, "
            "urn:corral:other-homes"
        )
    return [os.path.join(base, rest) if rest else base]


def which(name: str, path: str | None = None) -> str | None:
    """`name` found on `path` (default: $PATH), like a shell does; os.get_exec_path would
    import `warnings` (~0.5 ms) on every `corral run`."""
    if path is None:
        path = os.environ.get("PATH", os.defpath)
    for d in path.split(os.pathsep):
        candidate = os.path.join(d or ".", name)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


def _unresolved(entry: str, ctx: PathContext) -> list[str]:
    """One entry as absolute paths, symlinks not yet resolved (raises ExpandError)."""
    if entry.startswith(URN_PREFIX):
        paths = _expand_urn(entry, ctx) or []
    else:
        text = _expand_vars(entry, ctx.env)
        if text is None:
            return []
        if text == "~" or text.startswith("~/"):
            text = ctx.home + text[1:]
        paths = [text]
    return [os.path.join(ctx.cwd, p) for p in paths]


def _var_names(entry: str) -> tuple[str, ...]:
    names = []
    for part in entry.split("$")[1:]:
        part = part[1:] if part.startswith("{") else part
        name = ""
        for c in part:
            if not (c.isalnum() or c == "_"):
                break
            name += c
        names.append(name)
    return tuple(names)


# The string half of expansion is a pure function of the entries, the workspace, home, the
# buffer and the variables the entries name: remembered, since every call expands ~100 entries.
# What depends on the file system (existence, symlinks, the homes under /home) is never cached.
_MEMO: dict[tuple[object, ...], tuple[list[str], list[str], bool]] = {}
_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}
MEMO_SIZE = 64
OTHER_HOMES = URN_PREFIX + "other-homes"


def _unresolved_all(entries: Iterable[str], ctx: PathContext) -> tuple[list[str], list[str]]:
    entries = tuple(entries)
    names = _NAMES.get(entries)
    if names is None:
        if len(_NAMES) >= MEMO_SIZE:
            _NAMES.clear()
        names = _NAMES[entries] = tuple(n for e in entries if "$" in e for n in _var_names(e))
    env_key = tuple(ctx.env.get(n) for n in names)
    key = (entries, ctx.cwd, ctx.home, ctx.buffer_path, env_key)
    memo = _MEMO.get(key)
    if memo is None:
        paths: list[str] = []
        errors: list[str] = []
        for entry in entries:
            if entry == OTHER_HOMES:
                continue
            try:
                paths.extend(_unresolved(entry, ctx))
            except ExpandError as e:
                errors.append(str(e))
        if len(_MEMO) >= MEMO_SIZE:
            _MEMO.clear()
        memo = _MEMO[key] = (paths, errors, OTHER_HOMES in entries)
    paths, errors, other_homes = memo
    if other_homes:
        return [*paths, *_other_homes(ctx)], list(errors)
    return list(paths), list(errors)


O_PATH = getattr(os, "O_PATH", 0)


def real_existing(path: str) -> str | None:
    """The canonical path of `path` if it exists (following symlinks), else None.

    The kernel's answer (open with O_PATH, read /proc/self/fd/N): three system calls, where
    os.path.realpath, pure Python here, makes one per path component."""
    if not O_PATH:
        return os.path.realpath(path) if os.path.exists(path) else None
    try:
        fd = os.open(path, O_PATH | os.O_CLOEXEC)
    except OSError:
        return None  # missing, or a dangling symlink: nothing to mask or protect there
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)
    finally:
        os.close(fd)


class RealPaths:
    """os.path.realpath, remembered by directory for one resolution: a policy resolves ~100
    paths, most of them under the same few directories ($HOME, ~/.config), and the pure-Python
    realpath makes an lstat for every component of every one. Each path costs here one lstat
    of its last component once its directory is known; a symlink is resolved by realpath
    itself. The same answer as realpath as long as nothing changes during the resolution (an
    assumption every check of one resolution already makes)."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[str, str] = {"/": "/"}

    def __call__(self, path: str) -> str:
        known = self._known.get(path)
        if known is not None:
            return known
        if not os.path.isabs(path) or os.path.normpath(path) != path or path.startswith("//"):
            return os.path.realpath(path)  # relative, `..`, `.`, doubled slashes: as realpath
        head, name = os.path.split(path)
        parent = self(head)
        candidate = os.path.join(parent, name)
        try:
            link = stat.S_ISLNK(os.lstat(candidate).st_mode)
        except OSError:
            link = False  # missing, or not a directory on the way: kept as spelled, as realpath
        real = os.path.realpath(candidate) if link else candidate
        self._known[path] = real
        return real


def _resolve(paths: Iterable[str], existing_only: bool) -> list[str]:
    if not existing_only:
        return [os.path.realpath(p) for p in paths]
    # lexists first: cheap, and most entries do not exist.
    found = (real_existing(p) for p in paths if os.path.lexists(p))
    return [p for p in found if p is not None]


def expand(entry: str, ctx: PathContext, existing_only: bool = False) -> list[str]:
    """Expand one entry into absolute, symlink-resolved paths (none when it is dropped);
    raises ExpandError for an entry that cannot be expanded.

    With `existing_only`, paths that do not exist are dropped before resolving them: most
    deny-list entries do not exist, and realpath costs a system call per component."""
    return _resolve(_unresolved(entry, ctx), existing_only)


_LEXICAL: dict[tuple[object, ...], tuple[list[str], list[str]]] = {}


def expand_lexical(entries: Iterable[str], ctx: PathContext) -> tuple[list[str], list[str]]:
    """Like expand_all, but absolute and normalised without resolving symlinks (no system
    calls); callers resolve the few paths they keep. No system call means a pure function of
    the entries and the context: remembered (a policy expands the same lists several times,
    and the editor resolves one for every command)."""
    entries = tuple(entries)
    key = (entries, ctx.cwd, ctx.home, ctx.buffer_path, frozenset(ctx.env.items()))
    found = _LEXICAL.get(key)
    if found is None:
        paths, errors = _unresolved_all(entries, ctx)
        found = ([os.path.normpath(p) for p in paths], errors)
        if len(_LEXICAL) > 64:
            _LEXICAL.clear()
        _LEXICAL[key] = found
    return list(found[0]), list(found[1])


def expand_all(
    entries: Iterable[str], ctx: PathContext, existing_only: bool = False
) -> tuple[list[str], list[str]]:
    """Expand every entry; return (paths, errors) so all bad entries are reported at once."""
    paths, errors = _unresolved_all(entries, ctx)
    return _resolve(paths, existing_only), errors


def canonical_all(paths: Iterable[str]) -> list[str]:
    """Each path as the host resolves it, whether it exists or not: its deepest existing
    directory resolved, the rest appended. A protected path that does not exist yet below a
    link (`env/local.sh`, `env` a link to `envdir`) is written through the link, where a
    sandboxed write lands and where a check must look (`envdir/local.sh`)."""
    known: dict[str, str | None] = {}  # directory -> its real path (None: missing)

    def real(directory: str) -> str | None:
        if directory not in known:
            known[directory] = real_existing(directory)
        return known[directory]

    out = []
    for path in paths:
        head = path
        rest: list[str] = []
        while True:
            found = real_existing(head) if not rest else real(head)
            if found is not None:
                out.append(os.path.join(found, *reversed(rest)))
                break
            parent = os.path.dirname(head)
            if parent == head:
                out.append(path)
                break
            rest.append(os.path.basename(head))
            head = parent
    return out


def planted_link(path: str, areas: Iterable[str]) -> str | None:
    """The first symlink on the way to `path` (absolute, normalised, not resolved) that lies
    inside one of `areas`, places a sandboxed command can write; None when there is none.

    A sandboxed command may have made such a link point anywhere (a missing directory named in
    rw_paths, made a link to ~/.config by one command, is the next command's writable root), so
    no mount may be decided by resolving through it. A link outside the areas is the user's own
    and is followed; the rest of the path is then checked where the link points."""
    import stat

    areas = tuple(areas)
    current = "/"
    for part in path.split("/"):
        if not part:
            continue
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except OSError:
            return None  # the rest does not exist: nothing is resolved through it
        if stat.S_ISLNK(st.st_mode):
            if any(is_within(current, a) and current != a for a in areas):
                return current
            current = os.path.realpath(current)
    return None


def outermost(paths: Iterable[str]) -> tuple[str, ...]:
    """Sorted unique paths with every path below another one removed."""
    kept: list[str] = []
    # Sorting by components keeps each parent directly before its children ("/a", "/a/c",
    # "/a-b"); a plain string sort would put "/a-b" between them.
    for p in sorted(set(paths), key=lambda p: p.split("/")):
        if not (kept and is_within(p, kept[-1])):
            kept.append(p)
    return tuple(kept)


def literal_pattern(path: str) -> str:
    """A file pattern matching `path` alone: every character file_patterns or fnmatch would
    read (`*?[{}$`, a leading `~`) in brackets (review r32b: glob.escape left `{,,}` to
    spell out, and `$HOME` to expand)."""
    out = "".join(f"[{c}]" if c in "*?[{}$" else c for c in path)
    return "[~]" + out[1:] if out.startswith("~") else out


def file_patterns(patterns: Sequence[str], home: str, env: Mapping[str, str]) -> list[str]:
    """Neovim file patterns (`:help file-pattern`, as chat.patterns are written for its
    autocommands) as fnmatch patterns: `{a,b}` alternatives spelled out, a leading `~` and
    `$VAR` expanded. A pattern the check could not read the way Neovim does would let a chat
    file through unchecked. ValueError for a pattern of too many alternatives."""
    out: list[str] = []
    for pattern in patterns:
        try:
            spelled = _braces(pattern)
        except ValueError:
            raise ValueError(
                f"{pattern!r} spells out more than {MAX_BRACES} alternatives"
            ) from None
        for one in spelled:
            if one == "~" or one.startswith("~/"):
                one = home + one[1:]
            for name in sorted(env, key=len, reverse=True):
                one = one.replace("${" + name + "}", env[name]).replace("$" + name, env[name])
            out.append(one)
    return list(dict.fromkeys(out))


MAX_BRACES = 256  # alternatives one pattern may spell out (r32b: `{,,}` 13 times froze it)


def _braces(pattern: str, made: list[int] | None = None) -> list[str]:
    """`*.{chat,md}` -> [`*.chat`, `*.md`], nested and repeated groups too; a `{` inside
    `[...]` is a character (`[{]`). ValueError past MAX_BRACES alternatives."""
    made = made if made is not None else [0]
    start, i = -1, 0
    while i < len(pattern):
        if pattern[i] == "[" and "]" in pattern[i + 2 :]:
            i = pattern.index("]", i + 2) + 1  # (a bracket expression: `[]x]` holds `]`)
            continue
        if pattern[i] == "{":
            start = i
            break
        i += 1
    if start == -1:
        made[0] += 1
        if made[0] > MAX_BRACES:
            raise ValueError(f"{pattern!r} spells out more than {MAX_BRACES} alternatives")
        return [pattern]
    depth = 0
    parts, last = [], start + 1
    for i in range(start, len(pattern)):
        c = pattern[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                parts.append(pattern[last:i])
                head, tail = pattern[:start], pattern[i + 1 :]
                return [x for part in parts for x in _braces(head + part + tail, made)]
        elif c == "," and depth == 1:
            parts.append(pattern[last:i])
            last = i + 1
    made[0] += 1
    return [pattern]  # unclosed: literal, as Neovim reads it


def open_regular(path: str, follow: bool = True) -> int:
    """A descriptor of a regular file; OSError for anything else there (a FIFO, a device, a
    directory; a link too unless `follow`). Never blocks: what a sandboxed command may have
    written is opened this way (r72c FIFOHANG: a FIFO in place of a git object hung the
    check after the run, holding corral's lock; a link to /dev/stdin would have read the
    terminal)."""
    # (its type before it is opened: opening a device has effects of its own, a serial
    # line's reset or a watchdog armed, r73c DEVOPEN; checked again once open)
    if not stat.S_ISREG((os.stat(path) if follow else os.lstat(path)).st_mode):
        raise OSError(22, "not a regular file", path)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(22, "not a regular file", path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str, limit: int, follow: bool = True) -> bytes:
    """Up to `limit` bytes of a regular file (see open_regular)."""
    fd = open_regular(path, follow)
    try:
        chunks = []
        while limit > 0 and (chunk := os.read(fd, min(limit, 1 << 20))):
            chunks.append(chunk)
            limit -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def might_exist(path: str) -> bool:
    """Whether `path` exists, or may: one below a directory this user cannot enter is not
    taken for gone (r88b DENYCHMOD2: a `chmod 400` on its directory dropped a .env's mask,
    and the command opened the directory again inside)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True
