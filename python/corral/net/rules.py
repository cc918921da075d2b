"""Which addresses a connection may go to: the rules the fetch tool and the sandbox's network
proxy share (the host names' are in corral.net.hosts).

An address is judged by where its packets end up: loopback, private, link-local, unique-local,
carrier-grade NAT and reserved ranges are refused unless the user allowed private addresses
for that host; unspecified and multicast addresses never pass.
"""

from __future__ import annotations

import ipaddress

TYPE_CHECKING = False
if TYPE_CHECKING:
    Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Never a sensible destination for an HTTP request, so not even allow_private lifts these.
NEVER_ALLOWED = frozenset({"unspecified", "multicast"})

_N4 = ipaddress.IPv4Network
_N6 = ipaddress.IPv6Network
_V4_RANGES = (
    (_N4("0.0.0.0/8"), "unspecified"),  # Linux connects 0.0.0.0 to the local host
    (_N4("127.0.0.0/8"), "loopback"),
    (_N4("10.0.0.0/8"), "private"),
    (_N4("172.16.0.0/12"), "private"),
    (_N4("192.168.0.0/16"), "private"),
    (_N4("169.254.0.0/16"), "link-local"),  # 169.254.169.254: cloud instance metadata
    (_N4("100.64.0.0/10"), "cgnat"),  # also where some clouds put metadata (100.100.100.200)
    # Not reachable on the public internet, so nothing a fetch should reach; listed rather than
    # left to ip.is_global, whose answers differ between Python releases. 192.0.0.0/24 holds
    # Oracle Cloud's metadata address.
    (_N4("192.0.0.0/24"), "reserved"),  # IETF protocol assignments
    (_N4("192.0.2.0/24"), "reserved"),  # documentation
    (_N4("198.51.100.0/24"), "reserved"),
    (_N4("203.0.113.0/24"), "reserved"),
    (_N4("198.18.0.0/15"), "reserved"),  # benchmarking
    (_N4("224.0.0.0/4"), "multicast"),
    (_N4("240.0.0.0/4"), "reserved"),  # includes the broadcast address
)
_NAT64 = _N6("64:ff9b::/96")
_NAT64_LOCAL = _N6("64:ff9b:1::/48")
_V4_COMPATIBLE = _N6("::/96")
_V6_RANGES = (
    (_N6("fe80::/10"), "link-local"),
    (_N6("fc00::/7"), "unique-local"),  # includes fd00:ec2::254, EC2's IPv6 metadata address
    (_N6("fec0::/10"), "reserved"),  # deprecated site-local, still routed by some networks
    (_N6("ff00::/8"), "multicast"),
    # IETF protocol assignments, including Teredo (2001::/32), whose tunnel endpoints are not
    # ours to check; documentation; discard-only.
    (_N6("2001::/23"), "reserved"),
    (_N6("2001:db8::/32"), "reserved"),
    (_N6("3fff::/20"), "reserved"),
    (_N6("100::/64"), "reserved"),
)


# ---- addresses ----------------------------------------------------------------------------------


def _blocked_v4(ip: ipaddress.IPv4Address) -> str | None:
    for net, reason in _V4_RANGES:
        if ip in net:
            return reason
    return None if ip.is_global else "reserved"  # anything the list above missed


def blocked_address(ip: Address) -> str | None:
    """Why `ip` must not be fetched from without allow_private; None for a public address.

    IPv6 forms that carry an IPv4 address (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4
    2002::/16) are judged by that IPv4 address: the packets end up there.
    """
    if isinstance(ip, ipaddress.IPv4Address):
        return _blocked_v4(ip)
    ip = ipaddress.IPv6Address(int(ip))  # drop any %scope: ranges compare on the address alone
    if ip.ipv4_mapped is not None:
        return _blocked_v4(ip.ipv4_mapped)
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip in _NAT64:
        return _blocked_v4(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        return _blocked_v4(ip.sixtofour)
    if ip in _V4_COMPATIBLE or ip in _NAT64_LOCAL:
        return "reserved"  # deprecated or site-defined embeddings: nothing to check them against
    for net, reason in _V6_RANGES:
        if ip in net:
            return reason
    return None if ip.is_global else "reserved"
