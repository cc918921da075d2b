"""An .envrc or a hook's command as bash reads it (review rounds 18 to 21: a lexer of corral's
own disagreed with bash, and what the next lines put on PATH went unread)."""

from __future__ import annotations

import pytest

from corral.sandbox.protect.shellwords import _parse


@pytest.mark.parametrize(
    "text",
    [
        "# C:\\dev\\tools\\\nPATH_add bin\n",  # a comment ending in a backslash
        "log_status $'team\\'s tools'\nPATH_add bin\n",  # ANSI-C quoting
        "log_status build\\ #42; PATH_add bin\n",  # `#` after an escaped space
        "log_status build#42\nPATH_add bin\n",  # `#` inside a word
        "PATH_add \\\n  bin\n",  # a continued line
    ],
)
def test_the_line_after_what_bash_reads_differently_is_read(text: str) -> None:
    script = _parse(text)
    assert ["PATH_add", "bin"] in script.commands, script.commands


def test_branches_functions_and_substitutions_are_said() -> None:
    assert _parse("if [ -f x ]; then dotenv x; fi\n").branching
    assert _parse("a && b\n").branching
    assert not _parse("export A=1\nPATH_add bin\n").branching
    assert any("function" in u for u in _parse("f() { PATH_add $1; }\n").unknown)
    assert any("for its output" in u for u in _parse('log_status "$(./v)"\n').unknown)
    assert _parse('echo "unclosed\n').unknown  # cannot be read: unknown, never guessed


def test_comments_alone_are_an_empty_script() -> None:
    script = _parse("# a venv's activate\n\n# nothing else\n")
    assert script.commands == [] and script.unknown == []


def test_export_and_its_options_are_not_the_command() -> None:
    assert _parse("export -x A=1 B=2\n").commands == [["A=1", "B=2"]]
