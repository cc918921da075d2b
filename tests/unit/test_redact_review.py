"""Secret forms the tool-guard review found missing: all redacted, ordinary text untouched."""

from __future__ import annotations

import pytest

from corral.toolguard.redact import MARK, redact


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
def test_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and MARK in out
    assert redact(out) == out  # redacting twice changes nothing
    assert "]]" not in out


@pytest.mark.parametrize(
    "text", ["ls -la src", "PWD=/home/x make", "the password is stored in a vault", "sort -k2"]
)
def test_untouched(text: str) -> None:
    assert redact(text) == text
