"""Remove credentials from text before it is written where it outlives the call (the audit log).

Recognised: provider key formats (OpenAI/Anthropic `sk-…`, Stripe, GitHub, AWS access key ids,
Slack, Google API keys, JWTs, PEM private keys), bearer tokens and Authorization headers,
credentials in URLs (`https://user:pass@host`), `curl -u user:pass`, and `name=value`,
`name: value`, `"name": "value"` and `--name value` where the name says it holds a secret
(password, token, secret, api key, access key, private key, credentials).

Redaction errs towards removing too much: a log line missing a harmless word costs nothing, a
leaked key costs a rotation. Every pattern is anchored on a fixed word and bounded, so the time
stays linear in the text: a hostile command line must not stall the editor that logs it.
Patterns are compiled on first use: `re` is not on `corral run`'s start-up path.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable

    Rule = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]

MARK = "[REDACTED]"

# The end of a name that holds a secret; whatever comes before stays (GITHUB_TOKEN,
# aws_secret_access_key, DB_PASSWORD all end in one). A name that goes on (max_tokens,
# tokenizer, secretary) does not match: the separator must follow the keyword directly.
_KEYWORD = (
    r"(?:api[_-]?key|token|secret(?:[_-]?key)?|pass(?:w(?:or)?d)?|access[_-]?key"
    r"|private[_-]?key|credentials?)"
)
# So that redacting twice changes nothing: a value that holds a redaction already is left.
_NOT_DONE = r"(?![^\s&;,]*\[REDACTED\])"
# A value: a double-quoted string (escapes allowed), a single-quoted one, or a bare word; an
# unclosed quote still redacts the word after it.
_VALUE = r"""(?P<v>"(?:\\.|[^"\\\n])*"|'[^'\n]*'|["']?[^\s&;,"'}\]]+)"""

_compiled: list[Rule] = []


def _keep_quotes(match: re.Match[str]) -> str:
    value = match.group("v")
    quote = value[0] if value[0] in "\"'" else ""
    closed = quote if len(value) > 1 and value.endswith(quote) else ""
    return f"{match.group('name')}{quote}{MARK}{closed}"


def _rules() -> list[Rule]:
    if _compiled:
        return _compiled
    import re

    rules: list[tuple[str, str | Callable[[re.Match[str]], str]]] = [
        # Whole key blocks first, so that their lines are not redacted piecemeal.
        (
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----.*?"
            r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----|\Z)",
            MARK,
        ),
        # Tool-specific forms come before the generic ones below. Passwords given to common
        # tools: mysql -pX, sshpass -p X, docker login -p X.
        (
            r"(?i)\b(sshpass|mysql|mysqldump|mariadb|mysqladmin|docker\s+login|podman\s+login)"
            r"\b([^\n]{0,200}?\s)-p\s?(?!\[REDACTED\])\S+",
            rf"\1\2-p{MARK}",
        ),
        # openssl -pass pass:X (and -passin/-passout)
        (r"(?i)(-pass(?:in|out)?\s{1,20}pass:)(?!\[REDACTED\])\S+", rf"\1{MARK}"),
        # aws configure set aws_secret_access_key X
        (r"(?i)(\baws\s+configure\s+set\s+\S+\s+)(?!\[REDACTED\])\S+", rf"\1{MARK}"),
        # Userinfo in any URL: the user part alone is often a token (https://TOKEN@github.com).
        (r"(?i)(\b[a-z][a-z0-9+.-]{0,30}://)[^/\s@]{1,1000}@", rf"\1{MARK}@"),
        # Authorization headers keep their scheme word, so the log still says what was sent;
        # the possessive ?+ stops the scheme word itself being taken for the credential.
        (
            r"(?i)(?P<name>\b(?:proxy-)?authorization[\"']?\s{0,20}[:=]\s{0,20}"
            r"(?:(?:bearer|basic|token|digest|negotiate|bot)\s{1,20})?+)"
            rf"{_NOT_DONE}{_VALUE}",
            _keep_quotes,
        ),
        # A bare bearer token; it must look like one (a digit, or long) so that prose such as
        # "a bearer token" stays readable.
        (
            rf"\b(Bearer|bearer|BEARER)\s{{1,20}}{_NOT_DONE}"
            r"(?=[A-Za-z0-9._~+/=-]{0,15}[0-9]|[A-Za-z0-9._~+/=-]{16})[A-Za-z0-9._~+/=-]+",
            rf"\1 {MARK}",
        ),
        # "password": "x" (JSON), password='x', PASSWORD=x, api_key: x.
        (
            rf"(?i)(?P<name>{_KEYWORD}[\"']?\s{{0,20}}[:=]\s{{0,20}}){_NOT_DONE}{_VALUE}",
            _keep_quotes,
        ),
        # --password x, --db-token x (the --name=x form is covered above).
        (
            rf"(?i)(?P<name>(?<![\w-])--?[a-z0-9_-]{{0,40}}?{_KEYWORD}\s{{1,20}})"
            rf"{_NOT_DONE}{_VALUE}",
            _keep_quotes,
        ),
        # curl -u user:pass, --user user:pass
        (
            r"(?<![\w-])(-u|--user)(\s{1,20}|=)([^\s:]{1,200}):(?!\[REDACTED\])\S+",
            rf"\1\2\3:{MARK}",
        ),
        # Provider formats, recognisable wherever they stand. Lengths are bounded to keep the
        # scan linear; the longest real keys are well inside the bounds.
        (r"\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,400}", MARK),
        (r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{10,400}", MARK),
        (r"\b(?:gh[pousr]_[A-Za-z0-9]{20,400}|github_pat_[A-Za-z0-9_]{20,400})", MARK),
        (r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", MARK),
        (r"\bxox[abposre]-[A-Za-z0-9-]{10,400}", MARK),
        (r"\bhooks\.slack\.com/services/[A-Za-z0-9/]{1,400}", f"hooks.slack.com/services/{MARK}"),
        (r"\bAIza[0-9A-Za-z_-]{35}", MARK),
        (r"\beyJ[A-Za-z0-9_-]{8,1000}+\.eyJ[A-Za-z0-9_-]{8,8000}+\.[A-Za-z0-9_-]{0,4000}", MARK),
        (r"\bglpat-[A-Za-z0-9_-]{16,400}", MARK),
        (r"\b(?:hf|npm)_[A-Za-z0-9]{20,400}", MARK),
        (r"\bpypi-[A-Za-z0-9_-]{20,400}", MARK),
        (r"\bya29\.[A-Za-z0-9_-]{20,4000}", MARK),
        (r"\bSG\.[A-Za-z0-9_-]{16,400}\.[A-Za-z0-9_-]{16,400}", MARK),
        # netrc: machine h login u password X
        (r"(?i)(\blogin\s{1,20}\S+\s{1,20}password\s{1,20})(?!\[REDACTED\])\S+", rf"\1{MARK}"),
        # Secrets in URL queries: ?key=X&token=X&sig=X
        (
            r"(?i)([?&](?:key|api_?key|token|access_token|auth|sig|signature|password|secret)=)"
            r"(?!\[REDACTED\])[^&\s#]+",
            rf"\1{MARK}",
        ),
        # Cookie headers carry sessions: the whole value goes.
        (
            r"(?i)(\b(?:set-)?cookie[\"']?\s{0,20}[:=]\s{0,20})(?!\s*\[REDACTED\])[^\n]+",
            rf"\1{MARK}",
        ),
    ]
    _compiled.extend((re.compile(p, re.DOTALL), r) for p, r in rules)
    return _compiled


def redact(text: str) -> str:
    """`text` with every credential it recognises replaced by [REDACTED]."""
    for pattern, replacement in _rules():
        text = pattern.sub(replacement, text)
    return text
