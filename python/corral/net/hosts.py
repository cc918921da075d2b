"""Host names and the allowlists of them: an exact entry, a `*.suffix` entry (subdomains only) or
`*`. Kept apart from the address rules (corral.net.rules), whose `ipaddress` tables cost a
proxied `corral run` ~2 ms before the command can start: a name is told from an address without
them."""

from __future__ import annotations

from corral.paths import ExpandError, _expand_vars

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ipaddress
    from collections.abc import Mapping, Sequence

    Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_IPV4_CHARS = frozenset("0123456789.")


def ip_of(text: str) -> Address | None:
    if not text or (":" not in text and not _IPV4_CHARS.issuperset(text)):
        return None  # a name: what ipaddress would refuse anyway, found without importing it
    import ipaddress

    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def normal_host(host: str) -> str:
    """Lowercase ASCII form: IDNA for non-ASCII names, no trailing dot, IPv6 compressed."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host.endswith("."):  # the fully qualified spelling of the same name
        host = host[:-1]
    ip = ip_of(host)
    if ip is not None:
        return str(ip)
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return ""  # matches no pattern and fails the name check
    return host


def valid_name(host: str) -> bool:
    labels = host.split(".")
    return all(
        0 < len(label) <= 63 and all(c.isalnum() or c in "-_" for c in label) for label in labels
    )


def expand_hosts(patterns: Sequence[str], env: Mapping[str, str]) -> tuple[str, ...]:
    """Allowlist entries with `${VAR}` expanded and normalised.

    An entry whose variable is unset (or that cannot be expanded) is dropped: it allows nothing,
    which for an allowlist is the safe reading of a mistake.
    """
    out: list[str] = []
    for pattern in patterns:
        try:
            text = _expand_vars(pattern, env)
        except ExpandError:
            text = None
        if text is None:
            continue
        if text.strip().startswith("*."):
            normal = "*." + normal_host(text.strip()[2:])
        else:
            normal = normal_host(text)
        if normal and normal not in out:
            out.append(normal)
    return tuple(out)


def host_allowed(host: str, patterns: Sequence[str]) -> bool:
    """`host` matches an exact entry, a `*.suffix` entry (subdomains only), or `*`."""
    host = normal_host(host)
    if not host:
        return False
    for raw in patterns:
        pattern = raw.strip().lower()
        if pattern == "*":
            return True
        if pattern.startswith("*."):
            suffix = "." + normal_host(pattern[2:])
            if suffix != "." and host.endswith(suffix) and len(host) > len(suffix):
                return True
        elif "*" not in pattern and host == normal_host(pattern):
            return True
    return False
