"""The hosts a sandboxed command may reach through corral's proxy (`sandbox.policy.network_allow`).

An entry is a host (`pypi.org`), every subdomain of one (`*.githubusercontent.com`), an address
(`203.0.113.7`, `[2001:db8::1]`), any of these with one port (`pypi.org:8443`), or a named group
of an ecosystem's hosts (`@python`). Without a port an entry allows 80 and 443: HTTP and HTTPS,
which is what package managers and git speak. A bare `*` is refused: that is `network = true`.

Entries are checked when the configuration is resolved; one that is not of these forms is an
error that names it, never an entry that silently allows nothing (or more).
"""

from __future__ import annotations

from corral.frozen import Frozen
from corral.net.hosts import host_allowed, ip_of, normal_host, valid_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

RULE = "sandbox.policy.network_allow"
RULE_PRIVATE = "sandbox.policy.network_private"
# how the proxy's report after a run starts each refused host's line (results reads them back)
BLOCKED = "blocked connection to "
UNRESOLVED = "cannot resolve "
DEFAULT_PORTS = (80, 443)
SCHEME_PORTS = {"http": 80, "https": 443, "git": 9418, "ssh": 22, "ftp": 21}

# What each ecosystem's installer reaches for a plain install from its public registry. Listed
# in the docs (`:help corral-network-groups`) from this table.
GROUPS: dict[str, tuple[str, ...]] = {
    "@python": ("pypi.org", "files.pythonhosted.org"),
    "@node": ("registry.npmjs.org", "registry.yarnpkg.com"),
    "@rust": ("crates.io", "index.crates.io", "static.crates.io", "static.rust-lang.org"),
    "@go": ("proxy.golang.org", "sum.golang.org"),
    "@github": (
        "github.com",
        "api.github.com",
        "codeload.github.com",
        "objects.githubusercontent.com",
        "raw.githubusercontent.com",
    ),
}


class BadEntry(ValueError):
    """An entry of `key` that is none of the forms above."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key, self.message = key, message


def _split_port(entry: str) -> tuple[str, int | None]:
    """(host part, port or None). `[v6]:port`, `name:port`; a bare IPv6 address has no port."""
    if entry.startswith("["):
        host, sep, rest = entry[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError("an IPv6 address in brackets is [address] or [address]:port")
        return host, _port(rest[1:]) if rest else None
    if entry.count(":") == 1:
        host, port = entry.split(":")
        return host, _port(port)
    return entry, None


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{text!r} is not a port (1 to 65535)")
    return int(text)


def _host(text: str) -> str:
    """The normal form of a host pattern, or ValueError saying what is wrong with it."""
    if text == "*":
        raise ValueError('"*" allows every host: set sandbox.policy.network = true instead')
    if text.startswith("*."):
        name = normal_host(text[2:])
        if not name or ip_of(name) is not None or not valid_name(name) or "." not in name:
            raise ValueError("*. must be followed by a domain with a dot (*.example.com)")
        return "*." + name
    host = normal_host(text)
    if not host or "*" in text or (ip_of(host) is None and not valid_name(host)):
        raise ValueError("not a host name, address, or *.domain")
    return host


class Allowlist(Frozen):
    """(host pattern, ports) pairs and the host patterns allowed private addresses."""

    __slots__ = ("entries", "private")
    entries: tuple[tuple[str, tuple[int, ...]], ...]
    private: tuple[str, ...]

    def __init__(
        self, entries: Sequence[tuple[str, tuple[int, ...]]], private: Sequence[str] = ()
    ) -> None:
        self._set(entries=tuple(entries), private=tuple(private))

    @classmethod
    def parse(cls, allow: Sequence[str], private: Sequence[str] = ()) -> Allowlist:
        """From the two settings' values; BadEntry naming the first bad entry."""
        entries: list[tuple[str, tuple[int, ...]]] = []
        for raw in allow:
            text = raw.strip()
            try:
                if text.startswith("@"):
                    group = GROUPS.get(text.lower())
                    if group is None:
                        known = ", ".join(GROUPS)
                        raise ValueError(f"no such group (the groups: {known})")
                    entries += [(host, DEFAULT_PORTS) for host in group]
                    continue
                if "://" in text or "/" in text:
                    raise ValueError("an entry is a host, not a URL (pypi.org, not https://...)")
                host, port = _split_port(text)
                pair = (_host(host), DEFAULT_PORTS if port is None else (port,))
            except ValueError as e:
                raise BadEntry(RULE, f"{raw!r}: {e}") from None
            if pair not in entries:
                entries.append(pair)
        patterns: list[str] = []
        for raw in private:
            try:
                patterns.append(_host(_split_port(raw.strip())[0]))
            except ValueError as e:
                raise BadEntry(RULE_PRIVATE, f"{raw!r}: {e}") from None
        return cls(entries, patterns)

    def allows(self, host: str, port: int) -> bool:
        return any(
            port in ports and host_allowed(host, [pattern]) for pattern, ports in self.entries
        )

    def private_allowed(self, host: str) -> bool:
        return host_allowed(host, self.private)


def named_hosts(command: str) -> list[tuple[str, int]]:
    """(host, port) of every URL a command line names (http://, https://, git://, ssh://,
    ftp://, and scp-like user@host:path), for `corral explain`. A reading of the words, not of
    what the command will really connect to."""
    import re

    found: list[tuple[str, int]] = []
    for match in re.finditer(
        r"\b(https?|git|ssh|ftp)://(?:[^/\s@'\"]*@)?(\[[0-9a-fA-F:.]+\]|[^/\s:'\"?#]+)(?::(\d+))?",
        command,
    ):
        scheme, host, port = match.groups()
        pair = (normal_host(host), int(port) if port else SCHEME_PORTS[scheme.lower()])
        if pair[0] and pair not in found:
            found.append(pair)
    for match in re.finditer(r"(?:^|\s)[\w.-]+@([\w.-]+\.[a-zA-Z]{2,}):(?!//)", command):
        pair = (normal_host(match.group(1)), 22)
        if pair[0] and pair not in found:
            found.append(pair)
    return found
