"""Shell syntax that changes what runs, read as bash reads it: `set` and `shopt` options,
arithmetic in parameter expansions, where a here-document ends, assignments (by builtins, by
`{NAME}>file`, to any name outside the harmless allowlist) and builtins that change the
commands after them. Every command here is data, never run."""

from __future__ import annotations

import pytest

from corral.toolguard.classify import DYNAMIC, READ_ONLY, classify, shell_policy


def _kind(command: str) -> str:
    return classify(command).kind


# `set` and `shopt` options that change how the following words are parsed or run.
@pytest.mark.parametrize(
    "command",
    [
        "set -k; git diff --no-index A B GIT_EXTERNAL_DIFF=prog",  # NAME=value anywhere is env
        "set -o keyword; git diff --no-index A B GIT_EXTERNAL_DIFF=prog",
        "set -ek; ls",
        "set -o posix; ls",
        "set -a; ls",
        "set -T; ls",
        "set $OPTS; ls",  # may expand to -k
        "shopt -s expand_aliases; ls",
        "shopt -s extdebug; ls",
        "shopt -s extglob; ls",
        "shopt -s sourcepath; ls",
        "shopt -so posix; ls",
    ],
)
def test_set_and_shopt_options_that_change_parsing_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["set -e", "set -euo pipefail", "set +x", "set -o errexit -o nounset", "set", "set -o",
     "set -- a b", "shopt", "shopt -q extglob", "shopt -s nullglob globstar", "shopt -p"],
)  # fmt: skip
def test_harmless_shell_options_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# Offsets, lengths and subscripts are arithmetic; a value `a[$(cmd)]` runs cmd.
@pytest.mark.parametrize(
    "command",
    [
        "echo ${a[0]:x}",
        "echo ${a[0]:1:n}",
        "echo ${a[@]:i}",
        "echo ${10:x}",
        'echo "${x:-${y:z}}"',  # nested in an operator's word
        "echo ${x:-${a[i]}}",
        "echo ${PATH:=/tmp}",  # assigns a variable that changes what runs
        "echo ${IFS=x}",
    ],
)
def test_arithmetic_in_parameter_expansion_is_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["echo ${x:1:2}", "echo ${x: -1}", "echo ${a[0]}", "echo ${#a[0]}", "echo ${@:2}",
     "echo ${x:-default}", "echo ${x#pre}", "echo ${a[@]:1:2}"],
)  # fmt: skip
def test_constant_offsets_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# bash ends a here-document at the delimiter with its quotes removed; bashlex compared the
# lines with the quoted spelling and read the commands after the real end as body.
HIDDEN_AFTER_HEREDOC = [
    "cat <<'EOF'\nEOF\nrm -rf x\n'EOF'\n",
    'cat <<"E"OF\nEOF\nrm -rf x\n"E"OF\n',
    "cat <<\\EOF\nEOF\nrm -rf x\n\\EOF\n",
    "cat <<-'EOF'\n\tEOF\nrm -rf x\n'EOF'\n",
    "cat <<E'O'F\nEOF\nrm -rf x\nE'O'F\n",
    "cat <<EOF''\nEOF\nrm -rf x\nEOF''\n",
    "cat <<$'EOF'\nEOF\nrm -rf x\n$'EOF'\n",
    "cat <<'EOF'\nx\\\nEOF\nrm -rf x\nEOF\n",  # no backslash-newline joining when quoted
    "cat <<EOF\nEO\\\nF\nrm -rf x\nEOF\n",  # joining when unquoted: `EO\<newline>F` ends it
    "((ls<<EOF))\nrm -rf x\nEOF\n",  # arithmetic to bash, a here-document to bashlex
]


@pytest.mark.parametrize("command", HIDDEN_AFTER_HEREDOC)
def test_commands_after_a_heredoc_are_seen(command: str) -> None:
    result = classify(command)
    assert result.kind != READ_ONLY, result
    assert "rm" in result.commands or result.kind == DYNAMIC, result


@pytest.mark.parametrize("command", HIDDEN_AFTER_HEREDOC)
def test_the_allow_list_does_not_cover_commands_hidden_after_a_heredoc(command: str) -> None:
    verdict = shell_policy(command, ["cat", "ls"], [], "/w")
    assert verdict.decision != "allow", verdict


@pytest.mark.parametrize(
    ("command", "body_kind"),
    [
        ("cat <<'EOF'\n$(rm x)\nEOF\n", READ_ONLY),  # literal body
        ("cat <<'EOF'\nline \\\nnext\nEOF\n", READ_ONLY),
        ("cat <<EOF\n\\$(rm x)\nEOF\n", READ_ONLY),
        ('cat <<-"EOF"\n\tx\n\tEOF\n', READ_ONLY),
        ("cat <<EOF\n$(id)\nEOF\n", DYNAMIC),
        ("bash <<'EOF'\nrm -rf x\nEOF\n", DYNAMIC),
    ],
)
def test_heredoc_bodies_are_read_as_bash_reads_them(command: str, body_kind: str) -> None:
    assert _kind(command) == body_kind, classify(command)


def test_a_script_in_a_quoted_heredoc_is_read_without_joining_lines() -> None:
    # bash runs `echo a\` + newline + `rm x` as `echo arm x`; the body must reach bash whole
    result = classify("bash <<'EOF'\necho a\\\nsudo x\nEOF\n")
    assert result.kind == DYNAMIC and "sudo" not in result.commands, result


# Builtins that assign or unset a variable that changes what runs.
@pytest.mark.parametrize(
    "command",
    [
        "unset PATH; rg foo",
        "unset -v PATH",
        "read -a PATH",
        "read -raPATH",
        "read PATH",
        "read -p prompt IFS",
        "mapfile PATH",
        "readarray PATH",
        "printf -v PATH x",
        "getopts ab PATH",
        "declare PATH=/tmp",
        "declare PATH",
        "typeset IFS",
        "local CDPATH",
        "export PATH=.",
        "export -n PATH",
        "readonly BASH_ENV",
        "unset GLOBIGNORE",
        "let x=1",
    ],
)
def test_builtins_setting_risky_variables_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["read -r line", "read -ra parts", "unset tmp", "export LC_ALL=C", "local x=1",
     "declare -p PATH"],
)  # fmt: skip
def test_plain_variables_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# Any environment name outside the harmless allowlist is dynamic.
@pytest.mark.parametrize(
    "command",
    [
        "GREP='sh -c \"touch canary\" x' zgrep foo f.gz",
        "export GREP='touch canary;grep'; zgrep foo f.gz",
        "GREP=x; export GREP; zegrep foo f.gz",
        "GREP=x zfgrep foo f.gz",
        "declare -x GREP=x; zgrep foo f.gz",
        "typeset -x GZIP=x; zcat f.gz",
        "env GREP=x zgrep foo f.gz",
        "PYENV_HOOK_PATH=/tmp/ws/hooks pip list",
        "PYENV_HOOK_PATH=./hooks python --version",
        "export PYENV_HOOK_PATH=./hooks; pip freeze",
        "RBENV_HOOK_PATH=./hooks ls",
        "JAVA_OPTS=x ls",
        "TMPDIR=/some/dir sort f",
        "XZ_OPT=x xzcat f.xz",
        "UNZIP=-o unzip -l a.zip",
        "FOO=1 ls",
        "export FOO=bar; ls",
        "for GREP in x; do zgrep a f.gz; done",
        "read GREP; zgrep a f.gz",
        "printf -v GREP x; zgrep a f.gz",
        ": ${GREP:=x}; zgrep a f.gz",
        "npm_config_registry=http://h/ ls",
        "x=1; export x; ls",
    ],
)
def test_environment_outside_the_allowlist_is_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    [
        "LC_ALL=C sort f",
        "LANG=C.UTF-8 ls",
        "TZ=UTC date -u",
        "COLUMNS=200 ls",
        "NO_COLOR=1 ls",
        "LESSSECURE=1 less f",
        "x=1; echo $x",
        "for f in *.py; do wc -l $f; done",
        "read -r line",
        "unset tmp",
        "declare -p PATH",
        "export LC_ALL=C; sort f",
    ],
)
def test_harmless_names_and_shell_variables_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# `{NAME}>file` assigns NAME the number of the descriptor it opens.
@pytest.mark.parametrize(
    "command",
    [
        ": {PATH}>/dev/null; ls",
        ": {HOME}</dev/null; git status",
        "true {PATH}<<<x; ls",
        "exec {fd}>out; cat",
    ],
)
def test_a_variable_before_a_redirection_is_an_assignment(command: str) -> None:
    # bash sets NAME to a descriptor number (10): `ls` then ran ./10/ls.
    assert classify(command).kind == DYNAMIC, classify(command)


def test_braces_without_a_redirection_stay_plain_words() -> None:
    assert classify("echo {x}").kind == READ_ONLY


# Builtins and wrappers that change later commands or write.
@pytest.mark.parametrize(
    "command", ["ulimit -c unlimited; ls", "umask 0; ls", "umask 000", "nohup ls"]
)
def test_builtins_and_wrappers_that_change_later_commands_are_not_read_only(command: str) -> None:
    assert _kind(command) != READ_ONLY, classify(command)


@pytest.mark.parametrize("command", ["umask", "umask -S", "ulimit -a", "ulimit -n"])
def test_ulimit_and_umask_queries_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)
