"""Commands approved as read-only that write a file or run a repository's config (issue 7,
item 10): `zstdcat -o F`, `tar -tf x --index-file=F`, and git against a repository corral does
not protect (`git -C evil.git log -p`, `--git-dir=... --work-tree=.`, git after cd, a bare
repository shipped as plain files in the workspace)."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

import pytest

from corral import config
from corral.sandbox import policy
from corral.toolguard import approval, guard
from corral.toolguard.classify import DYNAMIC, READ_ONLY, WRITES, classify

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    "command",
    [
        "zstdcat -o F x.zst",
        "zstdcat --output-dir-flat=d x.zst",
        "zstdcat --trace log x.zst",
        "zstdcat --rm x.zst",
        "tar -tf x.tar --index-file=F",
        "tar -tvf x.tar --index-file F",
        "tar -tf x.tar --volno-file=F",
        "tar -tf x.tar -g snap",
        "tar --list --listed-incremental=snap -f x.tar",
        "git -C evil.git log -p",
        "git -Cevil.git show",
        "git --git-dir=evil.git --work-tree=. status",
        "git --git-dir evil.git diff",
        "git --work-tree=/elsewhere status",
        "git --bare log",
        "cd evil.git && git log -p",
        "pushd sub >/dev/null; git diff",
    ],
)
def test_not_read_only(command: str) -> None:
    assert classify(command).kind != READ_ONLY, classify(command)


@pytest.mark.parametrize(
    "command",
    ["zstdcat x.zst", "zstdcat -d x.zst | head", "tar -tf x.tar", "tar -tvf x.tar", "git log -p"],
)
def test_still_read_only(command: str) -> None:
    assert classify(command).kind == READ_ONLY, classify(command)


def _decide(ws: Path, command: str) -> approval.Decision:
    resolved = config.resolve([config.Layer("global", {"tools.approval": "read-only"})])
    env = {"HOME": str(ws.parent / "home"), "PATH": "/usr/bin:/bin"}
    pol = policy.resolve(resolved, str(ws), env)
    decision, _ = guard.decide("bash", {"command": command}, resolved.values, pol, True,
                               approval.Chain())  # fmt: skip
    return decision


def test_git_in_a_protected_repository_is_read_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    assert _decide(ws, "git log -p").decision == approval.APPROVE


def test_git_in_a_bare_repository_of_plain_files_is_not_read_only(tmp_path: Path) -> None:
    """The workspace has no .git, but its files make it a bare repository (HEAD, objects,
    refs, config), which a sandboxed command could have written: its config runs programs."""
    ws = tmp_path / "ws"
    for d in ("objects", "refs"):
        (ws / d).mkdir(parents=True)
    (ws / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "config").write_text("[core]\n\tfsmonitor = touch PWNED\n\tbare = true\n")
    d = _decide(ws, "git log -p")
    assert d.decision == approval.DENY, d  # preset read-only: only reads run
    assert not os.path.exists(ws / "PWNED")


# Compressors obey the last mode given (review round 17, X1): a listing or test option is
# not final, `xz -t -z f` compresses f (and removes it).
@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("xz -t -z f", "f"),
        ("xz -tz f", "f"),
        ("xz --test --compress f", "f"),
        ("xz -l -d f.xz", "f.xz"),
        ("unxz -t -z f", "f"),
        ("bzip2 -t -z f", "f"),
        ("bunzip2 -t -z f", "f"),
        ("zstd -t -z f", "f"),
        ("zstd -t -d f.zst", "f.zst"),
        ("lz4 -t -z f", "f"),
    ],
)
def test_x1_a_later_mode_makes_a_compressor_write(command: str, written: str) -> None:
    result = classify(command)
    assert result.kind == WRITES and written in result.writes, result


@pytest.mark.parametrize("command", ["xz -t f.xz", "xz -l f.xz", "xz -c -z f", "gzip -t f.gz"])
def test_x1_listing_testing_and_stdout_alone_still_read(command: str) -> None:
    assert classify(command).kind == READ_ONLY


# kislyuk's yq (Debian's) spells it `--in-place` (round 17, Y1): that, and any start of it
# that argparse takes.
@pytest.mark.parametrize(
    "command",
    ["yq -y --in-place . f.yaml", "yq -y --in-pl . f.yaml", "yq --inplace . f.yaml",
     "yq -i . f.yaml"],
)  # fmt: skip
def test_y1_yq_in_place_writes(command: str) -> None:
    result = classify(command)
    assert result.kind == WRITES and "f.yaml" in result.writes, result


# git with a directory change anywhere in the command: the decision does not depend on which
# word the walker visits first.
@pytest.mark.parametrize(
    "command",
    [
        "for i in 1 2; do git log -p -1; cd evil; done",
        "while git log -1; do cd evil; done",
        "until git log -1; do cd evil; done",
        "for i in 1 2; do git show; pushd evil; done",
        "(git log -1); popd",
        "git log; cd evil",
    ],
)
def test_git_with_a_directory_change_anywhere_is_dynamic(command: str) -> None:
    assert classify(command).kind == DYNAMIC, classify(command)


def test_git_without_a_directory_change_stays_read_only() -> None:
    assert classify("for i in 1 2; do git log -1; done").kind == READ_ONLY
