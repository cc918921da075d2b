"""The audit log is neither readable nor writable from inside (issue 7, item 13): it tells what
ran and what was refused, and with $HOME as the workspace a command could rewrite it."""

from __future__ import annotations

import pytest

from .sandbox_support import DONE, SANDBOXED, q


def _log(host):
    return host.home / ".local" / "state" / "corral" / "log" / "audit.jsonl"


def _plant_log(host) -> str:
    log = _log(host)
    log.parent.mkdir(parents=True, exist_ok=True)
    line = f'{{"event": "run", "secret": "{host.secrets["db"]}"}}\n'
    log.write_text(line)
    return line


@pytest.mark.parametrize("mode", SANDBOXED)
def test_audit_log_is_hidden(host, mode: str) -> None:
    line = _plant_log(host)
    r = host.sh(f"cat {q(_log(host))}; ls {q(_log(host).parent)}", mode)
    assert DONE in r.stdout, r.stdout + r.stderr
    assert host.SECRET_WORD not in r.stdout + r.stderr
    assert "audit.jsonl" not in r.stdout
    assert _log(host).read_text() == line


def test_audit_log_cannot_be_rewritten_with_home_as_the_workspace(host) -> None:
    line = _plant_log(host)
    home, log = host.home, _log(host)
    body = (
        f"cd {q(home)}\n"
        f"cat {q(log)}\n"
        f"printf forged > {q(log)}\n"
        f"rm -rf {q(log.parent)}\n"
        f"mv {q(log.parent)} {q(home / 'moved')}\n"
        # rename a directory above it away and rebuild it: the next run's log would land in
        # a directory of the command's making
        f"mv {q(log.parent.parent)} {q(home / 'moved-up')}\n"
        f"mkdir -p {q(log.parent)}\n"
    )
    r = host.sh(body, None, "--cwd", str(home), cwd=home)
    assert DONE in r.stdout, r.stdout + r.stderr
    assert host.SECRET_WORD not in r.stdout + r.stderr
    assert log.read_text() == line
    # (mv copies what it cannot rename across the pinning mounts: a copy, not the original)
    assert not (home / "moved-up" / "log" / "audit.jsonl").exists()
    assert not log.parent.is_symlink() and not log.parent.parent.is_symlink()


def test_missing_log_dir_cannot_be_planted_with_home_as_the_workspace(host) -> None:
    home, log = host.home, _log(host)
    assert not log.parent.exists()
    r = host.sh(f"mkdir -p {q(log.parent)} && printf forged > {q(log)}", None, "--cwd",
                str(home), cwd=home)  # fmt: skip
    assert DONE in r.stdout, r.stdout + r.stderr
    assert not log.exists()
