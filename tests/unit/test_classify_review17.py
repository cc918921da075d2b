"""Review round 17 (r17c) of the bash classifier: compressors obey the last mode given, and
kislyuk's yq spells in-place `--in-place`. Every command here is data, never run."""

from __future__ import annotations

import pytest

from corral.toolguard.classify import READ_ONLY, WRITES, classify


# X1: a listing or test option is not final: `xz -t -z f` compresses f (and removes it).
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


# Y1: `--in-place` and any start of it that argparse takes.
@pytest.mark.parametrize(
    "command",
    ["yq -y --in-place . f.yaml", "yq -y --in-pl . f.yaml", "yq --inplace . f.yaml",
     "yq -i . f.yaml"],
)  # fmt: skip
def test_y1_yq_in_place_writes(command: str) -> None:
    result = classify(command)
    assert result.kind == WRITES and "f.yaml" in result.writes, result
