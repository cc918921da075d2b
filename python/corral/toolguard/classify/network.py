"""Tools that reach the network, and the options among theirs that also write or run programs
on this machine (`ssh -o ProxyCommand=...`, `rsync -e`, `nc -e`)."""

from __future__ import annotations

from corral.toolguard.classify.options import parse
from corral.toolguard.classify.result import DYNAMIC, NETWORK
from corral.toolguard.classify.simple_command import names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.toolguard.classify.simple_command import Command, Word

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


# openssl: read-only only for a few subcommands, each with an allowlist of options
# (name -> takes a value). Anything else may write (-out, -keyout, -writerand, -sess_out,
# x509 -CAcreateserial...) or, for the options below, load code.
_OPENSSL_LOADS = names(
    "engine provider provider-path config conf keygen_engine ssl_client_engine engine_impl"
)
_DIGESTS = """md5 sha1 sha224 sha256 sha384 sha512 sha512-224 sha512-256 sha3-224 sha3-256
    sha3-384 sha3-512 shake128 shake256 blake2b512 blake2s256 sm3 ripemd160"""
_OPENSSL_READS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # subcommand -> (flags, options that take the next word)
    "version": (names("a v b o f p d e m r c"), frozenset()),
    "help": (frozenset(), frozenset()),
    "list": (
        names(
            """1 commands standard-commands digest-commands digest-algorithms kdf-algorithms
            random-instances random-generators mac-algorithms cipher-commands cipher-algorithms
            encoder decoder key-managers key-exchange-algorithms kem-algorithms
            signature-algorithms asymcipher-algorithms public-key-algorithms
            public-key-methods store-loaders providers engines disabled objects verbose"""
        ),
        names("options select"),
    ),
    "ciphers": (names("v V s stdname tls1 tls1_1 tls1_2 tls1_3 psk srp"), names("convert")),
    "x509": (
        names(
            f"""noout text subject issuer dates startdate enddate serial fingerprint hash
            subject_hash issuer_hash subject_hash_old issuer_hash_old purpose pubkey modulus
            email ocsp_uri ocspid alias trustout nocert {_DIGESTS}"""
        ),
        names("in inform ext nameopt certopt checkend checkhost checkemail checkip dateopt"),
    ),
    "req": (names("noout text verify subject pubkey modulus"), names("in inform nameopt")),
    "crl": (names("noout text hash issuer lastupdate nextupdate fingerprint"), names("in inform")),
    "verify": (
        names(
            """show_chain verbose crl_check crl_check_all partial_chain x509_strict no-CAfile
            no-CApath no-CAstore"""
        ),
        names(
            "CAfile CApath CAstore untrusted trusted purpose CRLfile attime verify_hostname "
            "verify_email verify_ip"
        ),
    ),
    "dgst": (names(f"r hex c binary list {_DIGESTS}"), frozenset()),
    "asn1parse": (names("i dump noout"), names("in inform dlimit offset length strparse")),
}


_OPENSSL_NETWORK = names("s_client s_server s_time ocsp")
_S_CLIENT = (
    names("showcerts brief quiet tls1_2 tls1_3 ign_eof no_ign_eof prexit crlf state msg"),
    names("connect servername port host CAfile CApath verify_hostname alpn starttls cipher "
          "ciphersuites"),
)  # fmt: skip


def openssl(cmd: Command) -> None:
    args = cmd.args
    first = args[0].text if args and args[0].static else ""
    if _openssl_loads(cmd):
        return
    if first in _OPENSSL_NETWORK:
        plain(cmd)
    allowed = _S_CLIENT if first == "s_client" else _OPENSSL_READS.get(first)
    if (
        first in ("s_server", "s_time", "ocsp")
        or allowed is None
        or not _openssl_allowed(args[1:], *allowed)
    ):
        cmd.found.write("", f"{' '.join(('openssl', first)).strip()} may write files")


def _openssl_loads(cmd: Command) -> bool:
    """Options that load code into openssl (engines, providers, a configuration)."""
    for word in cmd.args:
        if not word.static:
            if word.may_be_option:
                cmd.found.flag(DYNAMIC, f"openssl: {word.raw} may expand to an option")
                return True
            continue
        name = word.text.lstrip("-").partition("=")[0]
        if word.text.startswith("-") and name in _OPENSSL_LOADS:
            cmd.found.flag(DYNAMIC, f"openssl -{name} loads code")
            return True
    return False


def _openssl_allowed(args: list[Word], flags: frozenset[str], valued: frozenset[str]) -> bool:
    """Is every option in `args` one of these (OpenSSL takes `-opt`, `--opt` and `-opt=v`)?"""
    i = 0
    while i < len(args):
        text = args[i].text
        i += 1
        if not text.startswith("-") or text == "-":
            continue
        name, eq, _ = text.lstrip("-").partition("=")
        if name in valued:
            i += 0 if eq else 1
        elif name not in flags or eq:
            return False
    return True


_DOCKER_READS = names("ps images inspect logs version info port top history diff events stats")


def docker(cmd: Command) -> None:
    """Never read-only: every command talks to a daemon that `--host`, `--context`,
    `--config`, DOCKER_HOST or the current context can put on any host (`ssh://` runs ssh), and
    the config names credential helpers to run. A global option before the subcommand is
    dynamic."""
    first = cmd.args[0] if cmd.args else None
    if first is not None and (not first.static or first.text.startswith("-")):
        cmd.found.flag(DYNAMIC, f"{cmd.name} {first.raw}: a global option chooses the daemon")
        return
    sub = first.text if first is not None else ""
    if sub in _DOCKER_READS or not cmd.args:
        shown = f"{cmd.name} {sub}".strip()
        cmd.found.flag(NETWORK, f"{shown} talks to a container daemon, maybe a remote one")
    elif sub in ("pull", "push", "login", "logout", "search"):
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
