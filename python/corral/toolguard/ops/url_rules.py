"""What a URL must be for the fetch tool to reach it: the rules, without any I/O (the lookup and
the request are corral.toolguard.ops.http's).

Two rules hold every request. The host must be on `tools.fetch.allow_hosts` (an empty list
allows nothing: fail closed). Every address the name resolves to must be public unless the user
allowed private addresses for that host: one private answer among public ones is enough to
refuse, since which one a connection would use is not ours to predict.
"""

from __future__ import annotations

from corral.net.hosts import host_allowed
from corral.net.hosts import ip_of as _ip
from corral.net.hosts import normal_host as _normal_host
from corral.net.hosts import valid_name as _valid_name
from corral.toolguard.ops.refusal import BUILTIN, OpError, Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

RULE_HOSTS = "tools.fetch.allow_hosts"
RULE_PRIVATE = "tools.fetch.allow_private"
DEFAULT_PORTS = {"http": 80, "https": 443}
# Characters a request line may carry as they are; anything else is percent-encoded.
_URL_SAFE = "/%:@!$&'()*+,;=-._~"


class HttpRefused(OpError):
    """A URL the guard refuses: `refusal` (path = the URL) says why and how to allow it,
    `host` which host it was about."""

    def __init__(self, refusal: Refusal, host: str) -> None:
        self.host = host
        super().__init__(refusal)

    def as_dict(self) -> dict[str, str]:
        """The refusal as data, with the host a frontend would offer to allow."""
        return {**self.refusal.as_dict(), "host": self.host}


class Refused(Exception):
    """A rule's refusal, before `refusal()` adds the URL and the layer."""

    def __init__(self, code: str, message: str, host: str, hint: str, rule: str = "") -> None:
        self.code, self.message, self.host, self.hint, self.rule = code, message, host, hint, rule
        super().__init__(message)


def split(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path and query) of an http or https URL; Refused when it is not
    one, or names no valid host."""
    from urllib.parse import quote, urlsplit

    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        # urlsplit silently deletes tabs and newlines; refusing keeps one reading of the URL.
        raise Refused(
            "bad-url",
            "the URL contains whitespace or control characters",
            "",
            "percent-encode spaces and control characters",
        )
    try:
        parts = urlsplit(url)
        port_given = parts.port
    except ValueError as e:
        raise Refused("bad-url", f"cannot parse the URL: {e}", "", "check the URL") from None
    scheme = parts.scheme.lower()
    hostname = _normal_host(parts.hostname or "")
    if scheme not in DEFAULT_PORTS:
        raise Refused(
            "bad-url",  # (as :help corral-refusal-codes says, r64c FETCHCODE)
            f"only http and https URLs can be fetched, not {scheme or 'a relative URL'}",
            hostname,
            "use an http:// or https:// URL",
            "fetch: http and https only",
        )
    if "@" in parts.netloc:
        # Also catches the parser tricks (http://allowed\@evil/) that hinge on userinfo.
        raise Refused(
            "userinfo",
            "URLs with user:password@ are refused",
            hostname,
            "remove the user:password@ part",
            "fetch: no credentials in URLs",
        )
    if (
        "\\" in parts.netloc
        or not hostname
        or (_ip(hostname) is None and not _valid_name(hostname))
    ):
        raise Refused("bad-url", "the URL has no valid host", hostname, "check the URL")
    if port_given == 0:
        raise Refused("bad-url", "port 0 is not a port", hostname, "check the URL")
    # Requests go out as ASCII; quote only what is not already a legal URL character.
    path = quote(parts.path or "/", safe=_URL_SAFE)
    if parts.query:
        path += "?" + quote(parts.query, safe=_URL_SAFE + "?")
    return scheme, hostname, port_given or DEFAULT_PORTS[scheme], path


def check_listed(host: str, allow_hosts: Sequence[str]) -> None:
    """Refused unless `host` is on the allowlist."""
    if not host_allowed(host, allow_hosts):
        empty = ": the list is empty, so nothing may be fetched" if not allow_hosts else ""
        raise Refused(
            "host-not-allowed",
            f"{host} is not in {RULE_HOSTS}{empty}",
            host,
            f"add {host} to {RULE_HOSTS}, or to sandbox.policy.network_allow, which lets the "
            "shell's commands reach it too",
            RULE_HOSTS,
        )


def check_addresses(host: str, addresses: Sequence[str], allow_private: Sequence[str]) -> None:
    """Refused unless every address `host` resolved to is public, or private and `host` is
    on `allow_private` (patterns as for allow_hosts)."""
    from corral.net.rules import NEVER_ALLOWED, blocked_address

    private_ok = host_allowed(host, allow_private)
    for text in addresses:
        ip = _ip(text)
        if ip is None:
            raise Refused(
                "resolve-failed",
                f"{host} resolved to a non-address {text!r}",
                host,
                "check the host name",
            )
        reason = blocked_address(ip)
        if reason is None or (private_ok and reason not in NEVER_ALLOWED):
            continue
        # (an address in the URL resolves to nothing: "127.0.0.1 resolves to 127.0.0.1")
        what = (
            f"{text} is a {reason} address"
            if host == text
            else (f"{host} resolves to {text} ({reason})")
        )
        message = f"{what}; requests to such addresses are refused"
        if reason in NEVER_ALLOWED:
            raise Refused(
                "private-address",
                message,
                host,
                f"a {reason} address is never a fetch destination",
                f"fetch: no {reason} addresses",
            )
        raise Refused(
            "private-address",
            message,
            host,
            f"add {host} to {RULE_PRIVATE} if it is meant to reach your own network",
            RULE_PRIVATE,
        )


def refusal(url: str, refused: Refused, layer: str, private_layer: str = "") -> HttpRefused:
    """`refused` as the HttpRefused the tool reports: with the URL, and the layer of the
    setting that refused (`layer` allow_hosts', `private_layer` allow_private's)."""
    # Only the settings come from a layer (allow_private its own: it said allow_hosts', r72d
    # REFUSALLAYER); the fixed rules are the builtin ones.
    where = (
        (private_layer or layer) if refused.rule == RULE_PRIVATE
        else layer if refused.rule == RULE_HOSTS
        else BUILTIN if refused.rule
        else ""
    )  # fmt: skip
    return HttpRefused(
        Refusal(refused.code, url, refused.rule, where, refused.hint, refused.message),
        refused.host,
    )


def check_host(url: str, allow_hosts: Sequence[str], *, layer: str = "") -> None:
    """HttpRefused when the URL is malformed or its host is not allowed: what can be known
    without a DNS lookup (the guard asks it before asking you)."""
    try:
        check_listed(split(url)[1], allow_hosts)
    except Refused as refused:
        raise refusal(url, refused, layer) from None
