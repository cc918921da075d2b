"""The audit log: redaction, the key whitelist, file modes, whole lines under concurrent writers."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time

import pytest

from corral.toolguard import audit
from corral.toolguard.ops.refusal import Refusal
from corral.toolguard.redact import MARK, redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

# (text, the secret that must be gone, what must still be there)
SECRETS = [
    ("export OPENAI_API_KEY=sk-proj-Ab3dEfGhIjKlMnOpQrStUv", "sk-proj-Ab3d", "OPENAI_API_KEY="),
    ("key sk-ant-api03-AbCdEf_GhIjKlMnOpQr-0123456789 end", "AbCdEf_Gh", "key "),
    ("echo sk-1234567890abcdefghijklmn", "1234567890abcdef", "echo "),
    ("curl -H 'Authorization: Bearer abc123def456' x", "abc123def456", "Authorization: Bearer "),
    ('curl -H "authorization: token 0123abcd" x', "0123abcd", "authorization: token "),
    ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "Authorization: Basic "),
    ("Proxy-Authorization: opaque-value", "opaque-value", "Proxy-Authorization: "),
    ("call with Bearer eyJhbGciOiJIUzI1 now", "eyJhbGciOiJIUzI1", "now"),
    ('{"password": "hunter2", "user": "bob"}', "hunter2", '"user": "bob"'),
    ("{'password': 'two words'}", "two words", "'password': '"),
    ('{"api_key":"q\\"uoted"}', "uoted", '"api_key":"'),
    ("PASSWORD=hunter2 DB_PASSWD='x y' make", "hunter2", "make"),
    ("db_passwd: s3cr3t", "s3cr3t", "db_passwd: "),
    ("GITHUB_TOKEN=abc ls", "abc", "ls"),
    ("ApiKey = abcdef", "abcdef", "ApiKey = "),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfi", "wJalrXUtn", "aws_secret_access_key"),
    ("private_key: MIIEvQIBADAN", "MIIEvQ", "private_key: "),
    ("client_secret=zzz&x=1", "zzz", "&x=1"),
    ("https://api.example.com/v1?access_token=t0k3n&q=1", "t0k3n", "&q=1"),
    ("mysql --password hunter2 -u root", "hunter2", "-u root"),
    ("tool --api-key=abc123 run", "abc123", "run"),
    ("curl -u admin:pa55word http://x", "pa55word", "curl -u admin:"),
    ("git clone https://user:pa55@github.com/x/y.git", "pa55", "@github.com/x/y.git"),
    ("git clone https://ghs_AbCdEf0123@github.com/x", "ghs_AbCdEf", "github.com/x"),
    ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abc", "gh "),
    ("gho_abcdefghijklmnopqrstuvwxyz0123456789", "gho_", ""),
    ("ghs_abcdefghijklmnopqrstuvwxyz0123456789", "ghs_", ""),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11", ""),
    ("id AKIAIOSFODNN7EXAMPLE used", "AKIAIOSFODNN7EXAMPLE", "used"),
    ("slack xoxb-1234567890-abcdefghij ok", "xoxb-1234567890", "ok"),
    ("xoxp-1234567890-abcdefghij", "xoxp-", ""),
    ("xoxa-1234567890-abcdefghij", "xoxa-", ""),
    ("stripe sk_live_abcdefghij1234", "sk_live_abc", "stripe"),
    ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSy", ""),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3In0.dozjgNryP4J3jVmNHl0w", "eyJzdWIi", "jwt "),
    ("a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz\n-----END OPENSSH PRIVATE KEY-----\nz",
     "b3BlbnNz", "z"),
]  # fmt: skip

NORMAL = [
    "ls -la /home/user/project",
    "git commit -m 'fix the tokenizer; max_tokens=100'",
    "use a bearer token for auth",
    "Bearer authentication",
    "the password is stored in a vault",
    "PWD=/home/x make",
    "python -m pytest -k 'token or secret'",
    "see https://docs.python.org/3/library/re.html",
    "tokens: 5",
    "secretary: bob",
    "task-manager-service-account",
    "ssh git@github.com",
    "email me at a@b.com",
    'grep -r "Authorization" .',
    "sort -k2 file",
    "sk-learn is a typo",
    "AKIA is a prefix",
]


@pytest.mark.parametrize(("text", "secret", "kept"), SECRETS)
def test_redact_removes_the_secret_and_keeps_the_rest(text: str, secret: str, kept: str) -> None:
    got = redact(text)
    assert secret not in got
    assert MARK in got
    assert kept in got
    assert redact(got) == got  # redacting twice changes nothing


@pytest.mark.parametrize("text", NORMAL)
def test_redact_leaves_normal_text_alone(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("unit", ["a.", "a-", "sk-", "password=", "https://", "eyJ-", "-u a:"])
def test_redact_stays_fast_on_hostile_input(unit: str) -> None:
    started = time.monotonic()
    redact(unit * (40_000 // len(unit)))
    assert time.monotonic() - started < 2


# More forms: secret names in assignments, passwords given as options or in a .netrc line, a
# URL's key parameter, cookies, vendors' token prefixes.
@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("SECRET_KEY=abc123def", "abc123def"),
        ("DB_PASS=hunter22", "hunter22"),
        ("mysql -u root -pS3cret db", "S3cret"),
        ("sshpass -p hunter2 ssh host", "hunter2"),
        ("docker login -u me -p tok123 registry", "tok123"),
        ("openssl enc -aes256 -pass pass:x1y2z3", "x1y2z3"),
        ("machine h login u password x7y8", "x7y8"),
        ("curl 'https://api.example/v1?key=AIzaSyQQ&q=1'", "AIzaSyQQ"),
        ("glpat-abcdefghijklmnopqrst", "glpat-abcdefghijklmnopqrst"),
        ("export HF_TOKEN=hf_abcdefghijklmnopqrstuvwx", "hf_abcdefghijklmnopqrstuvwx"),
        ("npm_abcdefghijklmnopqrstuvwx", "npm_abcdefghijklmnopqrstuvwx"),
        ("twine upload -p pypi-AgEIcHlwaS5vcmcCJGFiY2RlZg", "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZg"),
        ("ya29.a0AfH6SMBxxxxxxxxxxxxxxxx", "ya29.a0AfH6SMBxxxxxxxxxxxxxxxx"),
        ("SG.abcdefghijklmnopqr.abcdefghijklmnopqrstuv", "abcdefghijklmnopqrstuv"),
        ("Cookie: session=abc123; theme=dark", "abc123"),
        ("aws configure set aws_secret_access_key WJALRXUTNFEMI", "WJALRXUTNFEMI"),
    ],
)
def test_redact_removes_secrets_in_options_urls_cookies_and_vendor_tokens(
    text: str, secret: str
) -> None:
    out = redact(text)
    assert secret not in out and MARK in out
    assert redact(out) == out  # redacting twice changes nothing
    assert "]]" not in out


@pytest.mark.parametrize(
    "text", ["ls -la src", "PWD=/home/x make", "the password is stored in a vault", "sort -k2"]
)
def test_redact_leaves_text_near_those_forms_alone(text: str) -> None:
    assert redact(text) == text


# ---- the log file -------------------------------------------------------------------------------


def lines(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_one_json_object_per_line_with_known_keys_only(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = audit.AuditLog(str(path))
    refusal = Refusal("denied-read", "/home/u/.ssh/id_rsa", "sandbox.policy.deny_read", "", "x")
    assert (
        log.log({"tool": "bash", "command": "echo hi\nthere", "exit": 0, "time": "forged"}) is None
    )
    assert log.log(
        {
            "tool": "write",
            "path": "/w/notes.txt",
            "content": "TOP SECRET FILE BODY",
            "new_string": "TOP SECRET EDIT",
            "refusal": refusal,
            "paths": ("/a", "/b"),
            "reasons": ["network", {"why": "x", "text": "TOP SECRET NESTED"}],
            "chat": "/w/talk.chat",
            "duration_ms": 1.5,
            "class": "write",
            "api_key": "TOP SECRET KEY",
        }
    )  is None  # fmt: skip
    raw = path.read_text()
    assert "TOP SECRET" not in raw
    first, second = lines(path)
    assert first["time"] != "forged" and first["time"].endswith("Z")
    assert first["command"] == "echo hi\nthere" and first["exit"] == 0
    assert set(second) == {
        "time", "tool", "path", "refusal", "paths", "reasons", "chat", "duration_ms", "class",
    }  # fmt: skip
    assert second["refusal"]["code"] == "denied-read"
    assert second["paths"] == ["/a", "/b"]
    assert second["reasons"] == ["network", {"why": "x"}]


def test_strings_are_redacted_at_every_depth(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    audit.AuditLog(str(path)).log(
        {
            "command": "curl -H 'Authorization: Bearer abc123def456' https://u:pw@x.example",
            "url": "https://x.example/?token=t0k3n",
            "reasons": [["GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789"]],
            "refusal": {"hint": "password=hunter2"},
        }
    )
    raw = path.read_text()
    for secret in ("abc123def456", "pw@", "t0k3n", "ghp_", "hunter2"):
        assert secret not in raw
    assert lines(path)[0]["url"] == "https://x.example/?token=[REDACTED]"


def test_long_and_odd_values_are_bounded(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = audit.AuditLog(str(path))
    log.log({"command": "x" * 100_000, "path": b"raw bytes", "exit": float("nan")})
    log.log({"paths": [f"/p/{i}" for i in range(1000)], "reasons": [[[[[["deep"]]]]]]})
    first, second = lines(path)
    assert len(first["command"]) < 9000 and first["command"].endswith("[truncated]")
    assert first["path"] == "<9 bytes>" and first["exit"] is None
    assert len(second["paths"]) == audit.MAX_ITEMS
    assert second["reasons"] == [[[["<nested too deep>"]]]]


def test_modes_file_0600_directory_0700(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    old = os.umask(0o022)
    try:
        log = audit.AuditLog()
        assert log.log({"tool": "bash"}) is None
    finally:
        os.umask(old)
    assert log.path == str(tmp_path / "state" / "corral" / "log" / "audit.jsonl")
    assert stat.S_IMODE(os.stat(log.path).st_mode) == 0o600
    for directory in ("state", "state/corral", "state/corral/log"):
        assert stat.S_IMODE(os.stat(tmp_path / directory).st_mode) == 0o700


def test_wider_modes_are_narrowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    log_dir = tmp_path / "state" / "corral" / "log"
    log_dir.mkdir(parents=True)
    os.chmod(log_dir, 0o755)
    (log_dir / "audit.jsonl").write_text('{"old":1}\n')
    os.chmod(log_dir / "audit.jsonl", 0o644)
    assert audit.AuditLog().log({"tool": "bash"}) is None
    assert stat.S_IMODE(os.stat(log_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(log_dir / "audit.jsonl").st_mode) == 0o600
    assert len(lines(log_dir / "audit.jsonl")) == 2  # appended, not replaced


def test_a_chosen_directory_is_created_private_but_an_existing_one_left_alone(
    tmp_path: Path,
) -> None:
    os.chmod(tmp_path, 0o755)
    audit.AuditLog(str(tmp_path / "new" / "a.jsonl")).log({"tool": "bash"})
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o700
    audit.AuditLog(str(tmp_path / "b.jsonl")).log({"tool": "bash"})
    assert stat.S_IMODE(os.stat(tmp_path).st_mode) == 0o755


def test_an_unwritable_log_is_reported_once_and_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    log = audit.AuditLog(str(blocker / "audit.jsonl"))  # its directory is a regular file
    first = log.log({"tool": "bash"})
    assert first is not None and str(blocker) in first
    assert log.log({"tool": "bash"}) is None  # already reported
    assert log.last_error == first


def test_a_symlink_or_fifo_at_the_log_path_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("")
    (tmp_path / "link.jsonl").symlink_to(target)
    assert audit.AuditLog(str(tmp_path / "link.jsonl")).log({"tool": "bash"}) is not None
    assert target.read_text() == ""
    os.mkfifo(tmp_path / "fifo.jsonl")
    started = time.monotonic()
    assert audit.AuditLog(str(tmp_path / "fifo.jsonl")).log({"tool": "bash"}) is not None
    assert time.monotonic() - started < 2


WRITER = """
import sys
from corral.toolguard.audit import AuditLog
log = AuditLog(sys.argv[1])
for i in range(int(sys.argv[3])):
    assert log.log({"tool": sys.argv[2], "command": sys.argv[2] * 6000, "exit": i}) is None
"""


def test_concurrent_appends_from_two_processes_stay_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    count = 300
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, str(count)])
        for tag in ("a", "b")
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    events = lines(path)  # every line parses: none was split or interleaved
    for tag in ("a", "b"):
        mine = [e for e in events if e["tool"] == tag]
        assert [e["exit"] for e in mine] == list(range(count))
        assert all(e["command"] == tag * 6000 for e in mine)
