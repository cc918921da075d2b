"""tools.permissions: gitignore-like globs over workspace-relative paths.

Four lists: `deny` (never read, written or listed), `write` and `read` (when not empty, only
matching paths may be written or read) and `envelope` (when not empty, every change must fall
inside it, whatever else allows it). Pattern syntax, as in .gitignore:

- `*` matches within one path component, `?` one character, `[abc]`, `[a-z]`, `[!abc]` one
  character of a set; `\\*` is a literal `*`;
- `**` as a whole component matches any number of components: `**/x`, `x/**`, `a/**/b`;
- a pattern without `/` matches the name at any depth (`.env`, `*.pem`); a pattern with a `/`
  is anchored at the workspace (a leading `/` only makes that explicit);
- a trailing `/` names a directory and everything in it (`build/`).

When in doubt, refuse. A deny pattern also refuses everything inside a directory it matches
(`secrets` denies `secrets/key`); an allow pattern (write, read, envelope) matches only the path
itself, so a whole tree is `src/**`. Paths outside the workspace never match an allow pattern;
they meet deny patterns that can match at any depth (`.env`, `**/.env`).
"""

from __future__ import annotations

from corral.errors import ConfigError, Problem
from corral.frozen import Frozen
from corral.toolguard.ops.refusal import DENY_READ, DENY_WRITE, HOME, PROTECTED, RW_PATHS, Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from corral.config import Config

KINDS = ("deny", "write", "read", "envelope")
PREFIX = "tools.permissions."
OPS = ("read", "write", "list")
# Policy keys whose layer a refusal names, looked up in Permissions.layers like the globs'.
POLICY_KEYS = (RW_PATHS, DENY_READ, DENY_WRITE, PROTECTED, HOME)


class Permissions(Frozen):
    """The four glob lists and, in `layers`, the layer each came from (by kind: "deny", ...;
    and by dotted key for the sandbox.policy settings a refusal may name)."""

    __slots__ = ("deny", "envelope", "layers", "read", "write")
    deny: tuple[str, ...]
    write: tuple[str, ...]
    read: tuple[str, ...]
    envelope: tuple[str, ...]
    layers: Mapping[str, str]

    def __init__(
        self,
        deny: Iterable[str] = (),
        write: Iterable[str] = (),
        read: Iterable[str] = (),
        envelope: Iterable[str] = (),
        layers: Mapping[str, str] | None = None,
    ) -> None:
        from types import MappingProxyType

        layers = dict(layers or {})
        lists = {k: tuple(v) for k, v in zip(KINDS, (deny, write, read, envelope), strict=True)}
        problems = [
            Problem(PREFIX + kind, layers.get(kind, ""), f"{pattern!r}: {why}")
            for kind, patterns in lists.items()
            for pattern in patterns
            if (why := invalid(pattern)) is not None
        ]
        if problems:
            raise ConfigError(problems)
        self._set(layers=MappingProxyType(layers), **lists)

    @classmethod
    def from_config(cls, config: Config) -> Permissions:
        """The tools.permissions.* lists of a resolved config (empty where it has none), with
        the layers of those keys and of the sandbox.policy keys refusals name."""
        lists = {kind: config.values.get(PREFIX + kind) or () for kind in KINDS}
        layers = {kind: config.origins.get(PREFIX + kind, "") for kind in KINDS}
        layers.update((key, config.origins.get(key, "")) for key in POLICY_KEYS)
        return cls(layers=layers, **lists)


def invalid(pattern: str) -> str | None:
    """Why `pattern` cannot be used, or None."""
    if not pattern or not pattern.strip("/"):
        return "an empty pattern matches nothing; remove it (use ** for everything)"
    if pattern.startswith("!"):
        return "negation (!) is not supported: list only what the rule applies to"
    if any(part in (".", "..") for part in pattern.split("/")):
        return "'.' and '..' cannot appear: patterns are relative to the workspace"
    try:
        _compile(pattern)
    except ValueError as e:
        return str(e)
    return None


# A compiled glob: its segments ("**", or the atoms of one path component), and whether it
# covers what is below it too (a trailing "/"). Matched without regular expressions: a
# pattern like `*a*a*a*a*b` from an untrusted chat's deny list, against a model-chosen name
# of 60 `a`s, made Python's backtracking regex run for minutes (review r32b); this matcher
# is O(pattern x name) per component.
Atom = tuple[
    str, str
]  # ("lit", c) | ("any", "") | ("star", "") | ("set", members) | ("nset", members)
Compiled = tuple[tuple["str | tuple[Atom, ...]", ...], bool]
_CACHE: dict[str, Compiled] = {}
CACHE_SIZE = 2048  # (a list option takes 1000 entries per layer)


def _compile(pattern: str) -> Compiled:
    found = _CACHE.get(pattern)
    if found is None:
        found = _translate(pattern)
        if len(_CACHE) >= CACHE_SIZE:
            _CACHE.clear()
        _CACHE[pattern] = found
    return found


def _anchored(pattern: str) -> bool:
    return "/" in pattern.rstrip("/")


def _translate(pattern: str) -> Compiled:
    tree = pattern.endswith("/")
    segments = [s for s in pattern.strip("/").split("/") if s]
    if not _anchored(pattern):
        segments.insert(0, "**")
    segments = [
        s for i, s in enumerate(segments) if not (s == "**" and segments[i - 1 : i] == ["**"])
    ]
    return tuple(s if s == "**" else _segment(s, pattern) for s in segments), tree


def _segment(segment: str, pattern: str) -> tuple[Atom, ...]:
    out: list[Atom] = []
    i, n = 0, len(segment)
    while i < n:
        c = segment[i]
        if c == "*":
            while i + 1 < n and segment[i + 1] == "*":
                i += 1
            out.append(("star", ""))
        elif c == "?":
            out.append(("any", ""))
        elif c == "[":
            found = _char_class(segment, i)
            if found is None:
                raise ValueError(f"unterminated [ in {pattern!r}: close it, or write \\[")
            atom, i = found
            members = atom[1]
            for j in range(len(members) - 2):
                if members[j + 1] == "-" and members[j] > members[j + 2]:
                    bad = members[j : j + 3]
                    raise ValueError(f"invalid glob {pattern!r}: bad character range {bad}")
            out.append(atom)
            continue
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(("lit", segment[i]))
        else:
            out.append(("lit", c))
        i += 1
    return tuple(out)


def _char_class(segment: str, start: int) -> tuple[Atom, int] | None:
    """The set opening at `start` (members with ranges spelled out lazily), and the index
    after it; None if unclosed."""
    i = start + 1
    negate = i < len(segment) and segment[i] in "!^"
    i += negate
    first = i
    if i < len(segment) and segment[i] == "]":
        i += 1  # a leading ] is a member, as in shell globs
    end = segment.find("]", i)
    if end < 0:
        return None
    return ("nset" if negate else "set", segment[first:end]), end + 1


def _in_set(members: str, c: str) -> bool:
    i = 0
    while i < len(members):
        if i + 2 < len(members) and members[i + 1] == "-":
            if members[i] <= c <= members[i + 2]:
                return True
            i += 3
        else:
            if members[i] == c:
                return True
            i += 1
    return False


def _one(atom: Atom, c: str) -> bool:
    kind, value = atom
    if kind == "lit":
        return c == value
    if kind == "any":
        return c != "/"
    if kind == "set":
        return c != "/" and _in_set(value, c)
    return c != "/" and not _in_set(value, c)  # nset


def _component(atoms: tuple[Atom, ...], text: str) -> bool:
    """Whether one path component matches a segment's atoms: the usual wildcard match,
    backing up only to the last star (each star needs no more than that)."""
    a = t = 0
    star, mark = -1, 0
    while t < len(text):
        if a < len(atoms) and atoms[a][0] == "star":
            star, mark = a, t
            a += 1
        elif a < len(atoms) and _one(atoms[a], text[t]):
            a += 1
            t += 1
        elif star >= 0:
            a, mark = star + 1, mark + 1
            t = mark
        else:
            return False
    while a < len(atoms) and atoms[a][0] == "star":
        a += 1
    return a == len(atoms)


def _match(compiled: Compiled, parts: list[str]) -> bool:
    segments, tree = compiled
    memo: dict[tuple[int, int], bool] = {}

    def at(s: int, p: int) -> bool:
        key = (s, p)
        if key in memo:
            return memo[key]
        if s == len(segments):
            done = p == len(parts) or (tree and p < len(parts))
        elif segments[s] == "**":
            if s == len(segments) - 1:
                done = len(parts) - p >= 1  # (".+": at least one component)
            else:
                done = any(at(s + 1, q) for q in range(p, len(parts) + 1))
        else:
            segment = segments[s]
            assert not isinstance(segment, str)
            done = p < len(parts) and _component(segment, parts[p]) and at(s + 1, p + 1)
        memo[key] = done
        return done

    return at(0, 0)


def matches(pattern: str, relpath: str) -> bool:
    """Whether `pattern` matches the workspace-relative `relpath` itself (raises ValueError
    for an invalid pattern)."""
    return _match(_compile(pattern), relpath.split("/"))


def covers(pattern: str, relpath: str) -> bool:
    """Whether `pattern` matches `relpath` or a directory above it."""
    return covers_compiled(_compile(pattern), relpath)


def compiled(pattern: str) -> Compiled:
    """`pattern` made ready to match many paths (raises ValueError for an invalid one)."""
    return _compile(pattern)


def covers_compiled(found: Compiled, relpath: str) -> bool:
    """Whether the pattern matches `relpath` or a directory above it: one pass over the
    components with the set of segments reached (matching each prefix on its own took time
    cubic in the components: a 4 KiB path of `a/a/...` held the editor 30 s, r88c
    GUARDQUADRATIC)."""
    segments, _ = found
    parts = relpath.split("/")
    last = len(segments)
    if not last:
        return any(_match(found, parts[:i]) for i in range(len(parts), 0, -1))

    def closure(states: set[int]) -> set[int]:
        # (a `**` before the last segment matches no component too)
        out: set[int] = set()
        stack = list(states)
        while stack:
            s = stack.pop()
            if s in out:
                continue
            out.add(s)
            if s < last - 1 and segments[s] == "**":
                stack.append(s + 1)
        return out

    states = closure({0})
    for part in parts:
        reached: set[int] = set()
        for s in states:
            if s == last:
                continue
            segment = segments[s]
            if segment == "**":
                reached.add(s)  # (one more component in it)
                if s == last - 1:
                    reached.add(last)  # (a last `**` takes at least one)
            elif not isinstance(segment, str) and _component(segment, part):
                reached.add(s + 1)
        states = closure(reached)
        if last in states:
            return True
        if not states:
            return False
    return False


def _denies(pattern: str, path_rel: str) -> bool:
    if path_rel == ".":
        return False  # the workspace itself: a deny of everything leaves it empty, not gone
    if path_rel.startswith("/"):
        # Outside the workspace only patterns meant for any depth apply.
        if _anchored(pattern) and not pattern.startswith("**/"):
            return False
        return covers(pattern, path_rel.lstrip("/"))
    return covers(pattern, path_rel)


def _allows(patterns: tuple[str, ...], path_rel: str) -> bool:
    if path_rel.startswith("/") or path_rel == ".":
        return False
    return any(matches(p, path_rel) for p in patterns)


def check(perms: Permissions, path_rel: str, op: str) -> Refusal | None:
    """The refusal of `op` on `path_rel` (relative to the workspace, "." for the workspace
    itself, absolute when outside it), or None.

    `op`: "read" (content), "write" (any change), "list" (metadata: only deny applies)."""
    if op not in OPS:
        raise ValueError(f"unknown operation {op!r}; expected one of {', '.join(OPS)}")
    outside = path_rel.startswith("/")
    for pattern in perms.deny:
        if _denies(pattern, path_rel):
            return Refusal(
                "denied-by-glob",
                path_rel,
                f"{PREFIX}deny: {pattern!r}",
                perms.layers.get("deny", ""),
                f"remove {pattern!r} from {PREFIX}deny",
                f"{path_rel} matches the deny pattern {pattern!r}",
            )
    if op == "list":
        return None
    kind = "write" if op == "write" else "read"
    allowed: tuple[str, ...] = perms.write if op == "write" else perms.read
    where = "outside the workspace, where no pattern can match" if outside else ""
    if allowed and not _allows(allowed, path_rel):
        return Refusal(
            f"not-in-{kind}-globs",
            path_rel,
            f"{PREFIX}{kind}",
            perms.layers.get(kind, ""),
            f"empty {PREFIX}{kind}, or work inside the workspace"
            if outside
            else f"add a pattern matching {path_rel!r} to {PREFIX}{kind}",
            f"{path_rel} is {where or 'not matched by any ' + kind + ' pattern'}",
        )
    if op == "write" and perms.envelope and not _allows(perms.envelope, path_rel):
        return Refusal(
            "outside-envelope",
            path_rel,
            f"{PREFIX}envelope",
            perms.layers.get("envelope", ""),
            f"empty {PREFIX}envelope, or work inside the workspace"
            if outside
            else f"add a pattern matching {path_rel!r} to {PREFIX}envelope",
            f"{path_rel} is {where or 'outside the change envelope'}",
        )
    return None
