"""sandbox.policy.network_allow: the entries it takes, the ones it refuses, and what they allow."""

from __future__ import annotations

import pytest

from corral.net.allowlist import GROUPS, Allowlist, BadEntry, named_hosts


def test_forms_and_default_ports() -> None:
    allow = Allowlist.parse(["PyPI.org.", "*.example.com", "git.example.net:8443", "[2001:db8::1]"])
    assert allow.allows("pypi.org", 443) and allow.allows("pypi.org", 80)
    assert not allow.allows("pypi.org", 22)
    assert allow.allows("a.b.example.com", 443)
    assert not allow.allows("example.com", 443)  # *. is for subdomains only
    assert not allow.allows("evilexample.com", 443)
    assert allow.allows("git.example.net", 8443) and not allow.allows("git.example.net", 443)
    assert allow.allows("2001:db8::1", 443)


def test_groups_expand_to_their_hosts() -> None:
    allow = Allowlist.parse(["@python"])
    for host in GROUPS["@python"]:
        assert allow.allows(host, 443)
    assert not allow.allows("registry.npmjs.org", 443)


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("*", "network = true"),
        ("*.com:x", "not a port"),
        ("pypi.org:0", "not a port"),
        ("pypi.org:70000", "not a port"),
        ("py*.org", "not a host"),
        ("*.", "*. must be followed"),
        ("*.localhost", "*. must be followed"),
        ("@pythn", "no such group"),
        ("https://pypi.org", "not a URL"),
        ("", "not a host"),
        ("[::1", "in brackets"),
    ],
)
def test_a_bad_entry_is_named(entry: str, says: str) -> None:
    with pytest.raises(BadEntry) as caught:
        Allowlist.parse([entry])
    assert caught.value.key == "sandbox.policy.network_allow"
    assert repr(entry) in caught.value.message and says in caught.value.message


def test_private_list_is_checked_too() -> None:
    allow = Allowlist.parse(["mirror.lan"], ["mirror.lan"])
    assert allow.private_allowed("mirror.lan") and not allow.private_allowed("other.lan")
    with pytest.raises(BadEntry) as caught:
        Allowlist.parse(["mirror.lan"], ["mirror lan"])
    assert caught.value.key == "sandbox.policy.network_private"


def test_named_hosts_reads_urls_and_scp_remotes() -> None:
    command = (
        "pip install -i https://user:pw@pypi.example:8443/simple x && "
        "git clone git@github.com:o/r.git && curl http://[2001:db8::2]/a ftp://f.example/x "
        "&& echo a@b"
    )
    assert named_hosts(command) == [
        ("pypi.example", 8443),
        ("2001:db8::2", 80),
        ("f.example", 21),
        ("github.com", 22),
    ]
