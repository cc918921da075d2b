"""Tools that reach the network, and the options among theirs that also write or run programs
on this machine (`ssh -o ProxyCommand=...`, `rsync -e`, `nc -e`)."""

from __future__ import annotations

from corral.classify.command import names
from corral.classify.options import parse
from corral.classify.result import DYNAMIC, NETWORK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.classify.command import Command

PLAIN = names(
    """
    ping ping6 dig nslookup host whois traceroute traceroute6 tracepath mtr nmap telnet ftp
    lftp sftp tftp http https xh aria2c ssh-keyscan gh glab aws gcloud gsutil az kubectl helm
    terraform ncftp links lynx w3m mosh ssh-copy-id httpie
    """
)
# ssh -o keys that run a local command, or pull in configuration that can.
_SSH_RUNS = names("proxycommand localcommand permitlocalcommand knownhostscommand include match")


def plain(cmd: Command) -> None:
    cmd.found.flag(NETWORK, f"{cmd.name} reaches the network")


def curl(cmd: Command) -> None:
    plain(cmd)
    parsed = parse(cmd.args, "odcKHXAeEuUTxbFm", _CURL_VALUES)
    for long, short in _CURL_WRITES:
        for path in parsed.values(long, short):
            if path != "-":
                cmd.found.write(path, f"{cmd.name} writes {path}")
    if parsed.has("remote-name", "O") or parsed.has("remote-name-all"):
        cmd.found.write("", f"{cmd.name} -O writes a file named after the URL")


_CURL_VALUES = (
    "output",
    "dump-header",
    "cookie-jar",
    "config",
    "trace",
    "trace-ascii",
    "stderr",
    "libcurl",
    "output-dir",
    "etag-save",
    "header",
    "request",
    "data",
    "user-agent",
)
_CURL_WRITES = (
    ("output", "o"),
    ("dump-header", "D"),
    ("cookie-jar", "c"),
    ("trace", ""),
    ("trace-ascii", ""),
    ("stderr", ""),
    ("libcurl", ""),
)


def wget(cmd: Command) -> None:
    plain(cmd)
    parsed = parse(
        cmd.args,
        "OoaPi",
        ("output-document", "output-file", "append-output", "directory-prefix", "input-file"),
    )
    documents = parsed.values("output-document", "O")
    for path in documents + parsed.values("output-file", "o"):
        if path != "-":
            cmd.found.write(path, f"wget writes {path}")
    if not documents and not parsed.has("spider"):
        cmd.found.write("", "wget writes the downloaded files")


def ssh(cmd: Command) -> None:
    plain(cmd)
    parsed = parse(cmd.args, "BbcDEeFIiJLlmOoPpQRSWw")
    for value in parsed.values(short="o"):
        key = value.replace("=", " ").split(" ", 1)[0].strip().lower()
        if key in _SSH_RUNS:
            cmd.found.flag(DYNAMIC, f"{cmd.name} -o {key} runs a local command")
    if parsed.has(short="F") or (cmd.name == "scp" and parsed.has(short="S")):
        cmd.found.flag(DYNAMIC, f"{cmd.name}: a custom configuration or program can run commands")
    if parsed.opaque:
        cmd.found.flag(DYNAMIC, f"{cmd.name}: {parsed.opaque[0].raw} may expand to an option")


def rsync(cmd: Command) -> None:
    parsed = parse(cmd.args, "eBfT", _RSYNC_VALUES)
    if parsed.has("rsh", "e") or parsed.opaque:
        cmd.found.flag(DYNAMIC, "rsync -e runs a program to connect")
    places = parsed.positionals
    if any("::" in w.text or w.text.startswith("rsync://") or _remote(w.text) for w in places):
        cmd.found.flag(NETWORK, "rsync copies to or from another host")
    if places and not _remote(places[-1].text):
        cmd.found.write(places[-1].text, f"rsync writes {places[-1].text}")


_RSYNC_VALUES = (
    "rsh",
    "rsync-path",
    "filter",
    "exclude",
    "include",
    "files-from",
    "log-file",
    "password-file",
    "temp-dir",
    "partial-dir",
    "backup-dir",
    "suffix",
    "chmod",
    "chown",
    "compare-dest",
    "copy-dest",
    "link-dest",
)


def _remote(place: str) -> bool:
    head = place.split("/", 1)[0]
    return ":" in head or place.startswith("rsync://")


def netcat(cmd: Command) -> None:
    plain(cmd)
    if any(w.text in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") for w in cmd.args):
        cmd.found.flag(DYNAMIC, f"{cmd.name} -e runs a program for the connection")


def socat(cmd: Command) -> None:
    plain(cmd)
    if any(w.text.lower().startswith(("exec:", "system:")) or not w.static for w in cmd.args):
        cmd.found.flag(DYNAMIC, "socat exec:/system: runs a program")


def openssl(cmd: Command) -> None:
    first = cmd.args[0].text if cmd.args else ""
    if first in ("s_client", "s_server", "s_time", "ocsp"):
        plain(cmd)
    elif first not in ("version", "help", "x509", "list", "ciphers", "verify", "asn1parse"):
        cmd.found.write("", f"{' '.join(('openssl', first)).strip()} may write files")


_DOCKER_READS = names("ps images inspect logs version info port top history diff events stats")


def docker(cmd: Command) -> None:
    first = next((w for w in cmd.args if not w.text.startswith("-")), None)
    sub = first.text if first is not None and first.static else ""
    if sub in _DOCKER_READS or not cmd.args:
        return
    if sub in ("pull", "push", "login", "logout", "search"):
        plain(cmd)
    else:
        cmd.found.flag(DYNAMIC, f"{cmd.name} {sub or '...'} runs or changes containers")


RULES: dict[str, Callable[[Command], None]] = {name: plain for name in PLAIN}
RULES.update(
    {
        "curl": curl,
        "wget": wget,
        "ssh": ssh,
        "scp": ssh,
        "rsync": rsync,
        "nc": netcat,
        "ncat": netcat,
        "netcat": netcat,
        "socat": socat,
        "openssl": openssl,
        "docker": docker,
        "podman": docker,
        "nerdctl": docker,
    }
)
