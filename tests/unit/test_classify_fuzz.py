"""Property tests: the classifier never raises, fails closed on what bashlex cannot parse, and
lets the riskiest part decide however parts are combined."""

from __future__ import annotations

import bashlex  # type: ignore[import-untyped]
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_classify import (  # tests/unit is on sys.path (pytest's default import mode)
    EVASIONS,
    EVERYDAY_READS,
    PRIVILEGED_COMMANDS,
)

from corral.toolguard.classify import PRIVILEGED, READ_ONLY, RISK, Classification, classify
from corral.toolguard.classify.parse import parse
from corral.toolguard.classify.walk import _only_comments

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Shell text with a high share of the characters that matter to a parser.
METACHARACTERS = [*" \t\n;&|<>()$`'\"\\{}[]*?!#=~%-+:,./", "$(", "<<", "<<<", "&&", "||"]
shell_text = st.lists(
    st.one_of(st.sampled_from(METACHARACTERS), st.characters(codec="utf-8")), max_size=60
).map("".join)
TOKENS = [
    "ls", "cat", "rm", "sudo", "echo", "git", "log", "find", "-exec", "-delete", "sed", "-i",
    "awk", "'{print}'", "x", "f", "-rf", "$X", "${X}", "$(id)", "`id`", "<(id)", ">", ">>",
    "2>&1", "|", "||", "&&", ";", "&", "(", ")", "{", "}", "if", "then", "fi", "for", "in",
    "do", "done", "<<EOF", "EOF", "\n", "'", '"', "\\", "=", "PAGER=sh", "bash", "-c", "eval",
    "xargs", "*", "{a,b}", "$'\\x41'", "--", "-o", "out", "[", "]", "!", "#", "~/x",
]  # fmt: skip
token_soup = st.lists(st.sampled_from(TOKENS), max_size=14).map(" ".join)

ONE_LINE_EVASIONS = [c for c in EVASIONS if "\n" not in c]
ONE_LINE_PRIVILEGED = [c for c in PRIVILEGED_COMMANDS if "\n" not in c]
# Without cd: git after cd works on whatever repository it finds there (not read-only).
ONE_LINE_READS = [
    c for c in EVERYDAY_READS
    if "\n" not in c and c.strip() and "#" not in c and not c.startswith("cd ")
]  # fmt: skip
JOINS = ["{a}; {b}", "{b}; {a}", "{a} && {b}", "{b} || {a}", "{a} | {b}", "( {b} )",
         "{{ {b}; }}", "if {a}; then {b}; fi", "for x in y; do {b}; done",
         "while {a}; do {b}; done", "f() {{ {b}; }}", "{a} &\n{b}"]  # fmt: skip


def _well_formed(result: Classification) -> None:
    assert result.kind in RISK
    assert all(isinstance(r, str) and r for r in result.reasons)
    assert all(isinstance(p, str) for p in result.writes)
    assert all(isinstance(c, str) for c in result.commands)
    assert result.kind == READ_ONLY or result.reasons


@FUZZ
@given(shell_text)
def test_never_raises_on_any_text(text: str) -> None:
    _well_formed(classify(text))


@FUZZ
@given(token_soup)
def test_never_raises_on_shell_token_soup(text: str) -> None:
    result = classify(text)
    _well_formed(result)
    assert classify.__wrapped__(text) == result  # the cache changes nothing


def _bashlex_fails(text: str) -> bool:
    try:
        bashlex.parse(text)
    except Exception:
        return True
    return False


@FUZZ
@given(st.one_of(shell_text, token_soup))
def test_unparseable_is_never_read_only(text: str) -> None:
    assume(not _only_comments(text))  # bash's blanks and line ends, not Python's
    if not _bashlex_fails(text):
        return
    try:
        parse(text)
    except Exception:
        assert classify(text).kind != READ_ONLY
        return
    # The only input bashlex rejects and corral's parser accepts: a quoted here-document
    # delimiter, rewritten and then checked to be a real here-document.
    assert "<<" in text and any(q in text for q in "'\"\\")


@FUZZ
@given(st.sampled_from(ONE_LINE_READS), st.sampled_from(ONE_LINE_EVASIONS), st.sampled_from(JOINS))
def test_an_evasion_inside_anything_is_never_read_only(read: str, evasion: str, join: str) -> None:
    assert classify(join.format(a=read, b=evasion)).kind != READ_ONLY


@FUZZ
@given(
    st.sampled_from(ONE_LINE_READS + ONE_LINE_EVASIONS),
    st.sampled_from(ONE_LINE_PRIVILEGED),
    st.sampled_from(JOINS),
)
def test_privileged_inside_anything_is_privileged(other: str, privileged: str, join: str) -> None:
    # (two halves of an unbalanced quote close each other: `ls "` then `ls "; sudo ls` quote
    # the sudo, which is then an argument, not a command)
    assume(not any(c.count(q) % 2 for c in (other, privileged) for q in "\"'"))
    assert classify(join.format(a=other, b=privileged)).kind == PRIVILEGED


@FUZZ
@given(st.lists(st.sampled_from(ONE_LINE_READS), min_size=1, max_size=4), st.sampled_from(JOINS))
def test_reads_combined_stay_read_only(reads: list[str], join: str) -> None:
    command = reads[0]
    for other in reads[1:]:
        command = join.format(a=command, b=other)
    assert classify(command).kind == READ_ONLY, command


@FUZZ
@given(st.sampled_from(["ls", "cat", "grep", "rm", "sudo", "curl", "find"]), st.data())
def test_quotes_inside_a_name_change_nothing(name: str, data: st.DataObject) -> None:
    # bashlex removes quotes the way bash does: r''m is rm.
    cut = data.draw(st.integers(min_value=0, max_value=len(name)))
    quote = data.draw(st.sampled_from(["''", '""', "\\"]))
    spelled = name[:cut] + quote + name[cut:] if quote != "\\" else name[:cut] + "\\" + name[cut:]
    assume(not spelled.endswith("\\"))
    assert classify(f"{spelled} x").kind == classify(f"{name} x").kind
