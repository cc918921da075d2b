"""The bwrap probe: really starts the bundled bwrap once, then answers from memory or disk."""

from __future__ import annotations

import marshal
import os
import stat
from typing import TYPE_CHECKING

import pytest

from corral.sandbox.backends import probe
from corral.sandbox.backends.bwrap import bundled_bwrap

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

FAKE_FAILING = """#!/bin/sh
if [ "$1" = --version ]; then echo "fakewrap 1.0"; exit 0; fi
echo "bwrap: No permissions to create new namespace" >&2
exit 1
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    probe.forget()
    yield tmp_path / "xdg-cache" / "corral"
    probe.forget()


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = probe.run_probe

    def counting(binary: str) -> tuple[str | None, str]:
        calls.append(binary)
        return real(binary)

    monkeypatch.setattr(probe, "run_probe", counting)
    return calls


def forbid_probing(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(binary: str) -> tuple[str | None, str]:
        raise AssertionError(f"probe spawned {binary} although the answer was cached")

    monkeypatch.setattr(probe, "run_probe", fail)


def fake_binary(path: Path, text: str = FAKE_FAILING) -> str:
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def test_bundled_bwrap_probes_available_and_caches_on_disk(
    cache_dir: Path, spy: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = bundled_bwrap()
    assert binary is not None
    reason, version = probe.probe(binary)
    assert reason is None
    assert version.startswith("bubblewrap")
    assert spy == [binary]

    cache_file = cache_dir / probe.CACHE_NAME
    assert stat.S_IMODE(cache_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache_dir.stat().st_mode) & 0o077 == 0
    with open(cache_file, "rb") as f:
        stored = marshal.load(f)
    assert stored == {probe.cache_key(binary): (None, version)}
    assert not [p for p in os.listdir(cache_dir) if p.endswith(".tmp")]

    # A new process: nothing in memory, the answer comes from disk without spawning bwrap.
    probe.forget()
    forbid_probing(monkeypatch)
    assert probe.probe(binary) == (None, version)


def test_memory_answers_without_touching_disk(
    cache_dir: Path, spy: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = bundled_bwrap()
    assert binary is not None
    first = probe.probe(binary)
    (cache_dir / probe.CACHE_NAME).unlink()
    forbid_probing(monkeypatch)
    assert probe.probe(binary) == first
    assert not (cache_dir / probe.CACHE_NAME).exists()


def test_missing_binary_gives_a_reason(cache_dir: Path, tmp_path: Path, spy: list[str]) -> None:
    missing = str(tmp_path / "no-such-bwrap")
    reason, version = probe.probe(missing)
    assert reason is not None
    assert missing in reason and "No such file" in reason
    assert version == ""
    assert spy == []


def test_failing_binary_reports_its_own_stderr(
    cache_dir: Path, tmp_path: Path, spy: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = fake_binary(tmp_path / "bwrap")
    reason, version = probe.probe(binary)
    assert reason is not None
    assert "No permissions to create new namespace" in reason
    assert binary in reason
    assert version == "fakewrap 1.0"
    # within a process the answer is remembered ...
    assert probe.probe(binary) == (reason, version)
    assert spy == [binary]
    # ... but a failure never goes to disk: a planted "unavailable" must not switch the sandbox
    # off for later processes, so a new process (forget) probes again.
    probe.forget()
    assert probe.probe(binary) == (reason, version)
    assert spy == [binary, binary]


def test_changed_binary_is_probed_again(cache_dir: Path, tmp_path: Path, spy: list[str]) -> None:
    binary = fake_binary(tmp_path / "bwrap")
    probe.probe(binary)
    fake_binary(tmp_path / "bwrap", FAKE_FAILING + "# a different build\n")
    probe.forget()
    reason, _ = probe.probe(binary)
    assert reason is not None
    assert spy == [binary, binary]


def test_corrupt_cache_file_is_ignored_and_replaced(
    cache_dir: Path, tmp_path: Path, spy: list[str]
) -> None:
    cache_dir.mkdir(parents=True)
    (cache_dir / probe.CACHE_NAME).write_bytes(b"\x00not marshal at all")
    binary = bundled_bwrap()
    assert binary is not None
    reason, _ = probe.probe(binary)
    assert reason is None
    assert spy == [binary]
    with open(cache_dir / probe.CACHE_NAME, "rb") as f:
        assert probe.cache_key(binary) in marshal.load(f)


def test_cache_keeps_a_bounded_number_of_entries(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(probe, "run_probe", lambda binary: (None, "fake 1.0"))
    for i in range(probe.MAX_ENTRIES + 3):
        probe.probe(fake_binary(tmp_path / f"bwrap{i}"))
    with open(cache_dir / probe.CACHE_NAME, "rb") as f:
        entries = marshal.load(f)
    assert len(entries) == probe.MAX_ENTRIES
    newest = probe.cache_key(str(tmp_path / f"bwrap{probe.MAX_ENTRIES + 2}"))
    oldest = probe.cache_key(str(tmp_path / "bwrap0"))
    assert newest in entries and oldest not in entries


def test_unwritable_cache_still_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: list[str]
) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    probe.forget()
    try:
        reason, _ = probe.probe(fake_binary(tmp_path / "bwrap"))
    finally:
        probe.forget()
    assert reason is not None and "No permissions" in reason
    assert len(spy) == 1
