"""Environment scrubbing: an allowlist, secrets removed, explicit extras, proxies with network."""

from __future__ import annotations

import pytest

from corral.sandbox import environment
from corral.sandbox.environment import invalid_extra, looks_secret, scrub

HOST = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "LANG": "C.UTF-8",
    "LC_ALL": "C",
    "TERM": "xterm",
    "FOO": "bar",
    "EDITOR": "nvim",
    "GITHUB_TOKEN": "ghp_secret",
    "AWS_SECRET_ACCESS_KEY": "aws",
    "OPENAI_API_KEY": "sk-x",
    "LC_SECRET": "lc-secret",
    "NVIM": "/run/user/1000/nvim.sock",
    "SSH_AUTH_SOCK": "/tmp/ssh/agent",
    "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
    "XDG_RUNTIME_DIR": "/run/user/1000",
    "HTTP_PROXY": "http://user:pw@proxy:3128",
    "https_proxy": "http://proxy:3128",
    "NO_PROXY": "localhost",
    "LD_PRELOAD": "/evil.so",
    "PROMPT_COMMAND": "x",
}


def test_allowlist_only() -> None:
    assert scrub(HOST) == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "TERM": "xterm",
        "EDITOR": "nvim",
    }


def test_never_names_are_not_in_the_allowlist() -> None:
    assert not (environment.NEVER & environment.ALLOWED)
    assert not (environment.NEVER & environment.PROXY)


@pytest.mark.parametrize(
    "name",
    ["GITHUB_TOKEN", "api_key", "DB_PASSWORD", "MY_SECRET", "AUTH_HEADER", "SESSION_ID",
     "GPG_PASSPHRASE", "GOOGLE_APPLICATION_CREDENTIALS", "PRIVATE_URL", "COOKIE_JAR", "LC_TOKEN"],
)  # fmt: skip
def test_secret_patterns(name: str) -> None:
    assert looks_secret(name)
    assert scrub({name: "v", "PATH": "/bin"}) == {"PATH": "/bin"}


def test_allowlisted_prefix_still_scrubbed_when_secret() -> None:
    assert "LC_SECRET" not in scrub(HOST)


def test_ordinary_names_do_not_look_secret() -> None:
    for name in ("PATH", "HOME", "LANG", "EDITOR", "VIRTUAL_ENV", "CARGO_HOME"):
        assert not looks_secret(name)


def test_extra_name_takes_the_hosts_value() -> None:
    env = scrub(HOST, ["FOO", "GITHUB_TOKEN", "NOT_ON_HOST"])
    assert env["FOO"] == "bar"
    assert env["GITHUB_TOKEN"] == "ghp_secret"  # named exactly: the user asked for it
    assert "NOT_ON_HOST" not in env
    assert "OPENAI_API_KEY" not in env


def test_extra_name_value() -> None:
    env = scrub(HOST, ["MODE=fast", "URL=a=b", "PATH=/opt/bin", "EMPTY="])
    assert env["MODE"] == "fast"
    assert env["URL"] == "a=b"
    assert env["PATH"] == "/opt/bin"
    assert env["EMPTY"] == ""


def test_proxies_only_with_network() -> None:
    without = scrub(HOST, network=False)
    assert not (set(without) & environment.PROXY)
    with_net = scrub(HOST, network=True)
    assert with_net["HTTP_PROXY"] == HOST["HTTP_PROXY"]
    assert with_net["https_proxy"] == HOST["https_proxy"]
    assert with_net["NO_PROXY"] == "localhost"
    # network does not open the rest
    assert "SSH_AUTH_SOCK" not in with_net
    assert "FOO" not in with_net


def test_scrub_does_not_modify_the_host_mapping() -> None:
    host = dict(HOST)
    scrub(host, ["X=1"], network=True)
    assert host == HOST


@pytest.mark.parametrize("item", sorted(environment.NEVER))
def test_never_names_are_rejected(item: str) -> None:
    why = invalid_extra(item)
    assert why is not None and "never passed" in why
    why = invalid_extra(item + "=/x")
    assert why is not None and item in why


@pytest.mark.parametrize("item", ["", "=x", "1ABC", "A-B", "A B", "A.B=1", "$HOME"])
def test_malformed_extras_are_rejected(item: str) -> None:
    why = invalid_extra(item)
    assert why is not None and "NAME or NAME=value" in why


@pytest.mark.parametrize("item", ["FOO", "FOO=bar", "_X=", "a1=b c", "GITHUB_TOKEN"])
def test_valid_extras(item: str) -> None:
    assert invalid_extra(item) is None
