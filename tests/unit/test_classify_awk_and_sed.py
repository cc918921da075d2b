"""awk programs and sed scripts read as the tools read them: awk's `/` is a regex or a division
depending on the awk, sed's a/i/c text and labels end where GNU sed ends them. A pipe, a
redirection or an `e`/`w` command hidden behind either reading is found. Every command here is
data, never run."""

from __future__ import annotations

import pytest

from corral.toolguard.classify import DYNAMIC, WRITES, classify


def _kind(command: str) -> str:
    return classify(command).kind


# Where awks disagree on regex or division, every reading is searched for pipes.
@pytest.mark.parametrize(
    "program",
    [
        'BEGIN { getline /1; print "touch c" | "sh"; z = 2/ 1 }',
        'BEGIN { if (0) exit /"/ ; print "touch c" | "sh" ; x = z ~ /"/ }',
        'BEGIN { if (0) /"/; print "touch c" | "sh"; x = /"/ }',  # mawk divides, gawk matches
        'BEGIN { while (0) /"/; print "touch c" | "sh"; x = /"/ }',
        'BEGIN { x = $/"/; print "touch c" | "sh"; y = /"/ }',
        'BEGIN { n = length /"/; print "touch c" | "sh"; y = /"/ }',
        'BEGIN { x ~ /[[:alpha:]/]"/; print "touch c" | "sh"; y = /"/ }',  # gawk's brackets
        'BEGIN { x ~ /[]/]"/; print "touch c" | "sh"; y = /"/ }',  # `]` first is literal
        'BEGIN { f = "sys" "tem"; @f("touch c") }',  # gawk indirect call of a built-in
    ],
)
def test_awk_ambiguous_slash_cannot_hide_a_pipe(program: str) -> None:
    command = f"awk '{program}'"
    assert _kind(command) == DYNAMIC, classify(command)


def test_awk_ambiguous_slash_cannot_hide_a_redirection() -> None:
    result = classify('awk \'BEGIN { getline /1; print "x" > "f"; z = 2/ 1 }\'')
    assert result.kind == WRITES and result.writes == ("f",), result


def test_too_many_ambiguous_awk_slashes_fail_closed() -> None:
    program = "BEGIN { " + "getline /1/; " * 12 + "}"
    assert _kind(f"awk '{program}'") == DYNAMIC


# GNU sed reads a/i/c text with `\` escaping the next character, and a label ends at a
# blank: the line (or the words) after it are commands.
@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("sed 'a x\\\\\\\\\nw canary' f", WRITES),  # text `x\\`: the newline ends it
        ("sed '1a x\\\\\\\\\ne touch y' f", DYNAMIC),
        ("sed 'i\\\\\\\\\nw canary' f", WRITES),  # `i\` then the text `\`
        ("sed 'c\\\\\\\\\\\\\\\\\nw canary' f", WRITES),
        ("sed 'bx w canary' f", WRITES),
        ("sed ':a w canary' f", WRITES),
        ("sed 'tx e id' f", DYNAMIC),
        ("sed -n 'Tx\tw canary' f", WRITES),
    ],
)
def test_sed_text_and_labels_end_where_gnu_sed_ends_them(command: str, kind: str) -> None:
    assert _kind(command) == kind, classify(command)
