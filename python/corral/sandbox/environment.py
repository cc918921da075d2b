"""The environment a sandboxed command (and bwrap itself) is started with.

An allowlist, not a denylist: a variable reaches the sandbox only when it is known to be harmless
or the user named it. bwrap is started with this same environment because a sandboxed process
can read its sandbox's `/proc/1/environ`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

ALLOWED = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "TERM_PROGRAM",
        "LANG", "LANGUAGE", "TZ", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
        "EDITOR", "VISUAL", "PAGER", "LESS", "MANPATH", "INFOPATH",
        "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
        "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
        "VIRTUAL_ENV", "PYENV_ROOT", "PYENV_VERSION", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
        "CARGO_HOME", "RUSTUP_HOME", "GOPATH", "GOROOT", "GOFLAGS", "JAVA_HOME",
        "NVM_DIR", "NODE_PATH", "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    }
)  # fmt: skip
ALLOWED_PREFIXES = ("LC_",)
# Only meaningful with network; may carry proxy credentials, so never without it.
PROXY = frozenset(
    {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
     "no_proxy", "all_proxy"}
)  # fmt: skip
# What points a sandboxed command at corral's proxy (see corral.net.bridge: the port is inside
# the sandbox's own network). The sandbox's own loopback (a test server a command starts) is
# not the proxy's.
PROXY_PORT, SOCKS_PORT = 3128, 1080
PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
PROXIED = {
    **dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"), PROXY_URL),
    # (socks5h: the proxy resolves names, as for HTTP; for tools that speak only SOCKS)
    **dict.fromkeys(("ALL_PROXY", "all_proxy"), f"socks5h://127.0.0.1:{SOCKS_PORT}"),
    **dict.fromkeys(("NO_PROXY", "no_proxy"), "localhost,127.0.0.1,::1"),
}


def without_proxy(env: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """`env` without corral's proxy variables: for a command that gets no proxy (unsandboxed,
    the host's 127.0.0.1:3128 is anyone's to listen on; r27b)."""
    return [(k, v) for k, v in env if PROXIED.get(k) != v]


# Host services reached through these: never passed, even when named.
NEVER = frozenset(
    {"NVIM", "NVIM_LISTEN_ADDRESS", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",
     "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "TMUX",
     "TMUX_PANE", "STY", "XDG_RUNTIME_DIR", "KITTY_LISTEN_ON", "WEZTERM_UNIX_SOCKET"}
)  # fmt: skip
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
                "AUTH", "COOKIE", "SESSION", "PRIVATE")  # fmt: skip


def looks_secret(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def scrub(
    host: Mapping[str, str],
    extra: Iterable[str] = (),
    network: bool = False,
    proxied: bool = False,
) -> dict[str, str]:
    """The sandbox environment: allowlisted host variables plus the user's `extra` entries.

    `extra` holds NAME (take the host's value) or NAME=value. Secret-looking names pass only
    when named exactly in `extra`; names in NEVER are rejected by validation before this.
    `proxied`: the network goes through corral's proxy (see corral.net), which every proxy
    variable names instead of the host's.
    """
    env: dict[str, str] = {}
    for name, value in host.items():
        allowed = name in ALLOWED or name.startswith(ALLOWED_PREFIXES)
        if (allowed or (network and name in PROXY)) and not looks_secret(name):
            env[name] = value
    if proxied:
        for name, value in PROXIED.items():
            env[name] = value
    for item in extra:
        name, sep, value = item.partition("=")
        if sep:
            env[name] = value
        elif name in host:
            env[name] = host[name]
    return env


def invalid_extra(item: str) -> str | None:
    """Why a `sandbox.policy.env` entry is refused, or None."""
    name = item.partition("=")[0]
    if not name or not all(c.isalnum() or c == "_" for c in name) or name[0].isdigit():
        return f"{item!r} is not NAME or NAME=value"
    if name in NEVER:
        return f"{name} leads to a host service and is never passed into the sandbox"
    return None
