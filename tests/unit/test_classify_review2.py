"""Second adversarial review of the bash classifier: commands it called read-only although they
write files, run programs or reach the network. Every command here is data, never run."""

from __future__ import annotations

import pytest

from corral.toolguard.classify import DYNAMIC, NETWORK, READ_ONLY, WRITES, classify, shell_policy


def _kind(command: str) -> str:
    return classify(command).kind


# C1: `set` and `shopt` options that change how the following words are parsed or run.
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
def test_c1_set_and_shopt_options_that_change_parsing_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["set -e", "set -euo pipefail", "set +x", "set -o errexit -o nounset", "set", "set -o",
     "set -- a b", "shopt", "shopt -q extglob", "shopt -s nullglob globstar", "shopt -p"],
)  # fmt: skip
def test_c1_harmless_shell_options_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# C2: offsets, lengths and subscripts are arithmetic; a value `a[$(cmd)]` runs cmd.
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
def test_c2_arithmetic_in_parameter_expansion_is_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["echo ${x:1:2}", "echo ${x: -1}", "echo ${a[0]}", "echo ${#a[0]}", "echo ${@:2}",
     "echo ${x:-default}", "echo ${x#pre}", "echo ${a[@]:1:2}"],
)  # fmt: skip
def test_c2_constant_offsets_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# C3: bash ends a here-document at the delimiter with its quotes removed; bashlex compared the
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
def test_c3_commands_after_a_heredoc_are_seen(command: str) -> None:
    result = classify(command)
    assert result.kind != READ_ONLY, result
    assert "rm" in result.commands or result.kind == DYNAMIC, result


@pytest.mark.parametrize("command", HIDDEN_AFTER_HEREDOC)
def test_c3_the_allow_list_does_not_cover_hidden_commands(command: str) -> None:
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
def test_c3_heredoc_bodies_are_read_as_bash_reads_them(command: str, body_kind: str) -> None:
    assert _kind(command) == body_kind, classify(command)


def test_c3_a_script_in_a_quoted_heredoc_is_read_without_joining_lines() -> None:
    # bash runs `echo a\` + newline + `rm x` as `echo arm x`; the body must reach bash whole
    result = classify("bash <<'EOF'\necho a\\\nsudo x\nEOF\n")
    assert result.kind == DYNAMIC and "sudo" not in result.commands, result


# C4: apt configuration names programs apt runs.
@pytest.mark.parametrize(
    "command",
    ["apt-cache -oDir::Bin::dpkg=PROG policy", "apt-cache -o Dir::Bin::dpkg=PROG policy",
     "apt-cache --option=Dir::Bin::dpkg=PROG show x", "apt-cache policy -c conf",
     "apt-cache --config-file conf policy", "apt-cache -qc conf policy", "apt show -oX=Y x",
     "apt-cache $OPTS policy", "APT_CONFIG=conf apt-cache policy"],
)  # fmt: skip
def test_c4_apt_configuration_options_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


def test_c4_plain_apt_queries_stay_read_only() -> None:
    assert _kind("apt-cache policy git") == READ_ONLY


# C7: builtins that assign or unset a variable that changes what runs.
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
def test_c7_builtins_setting_risky_variables_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["read -r line", "read -ra parts", "unset tmp", "export LC_ALL=C", "local x=1",
     "declare -p PATH"],
)  # fmt: skip
def test_c7_plain_variables_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# C8: wrappers' options are an allowlist; changing directory or splitting a string is dynamic.
@pytest.mark.parametrize(
    "command",
    ["env -C evilrepo git status", "env --chdir=evilrepo git status", "env --ch evilrepo ls",
     "env -u PATH ls", "env --frobnicate ls", "nice --frobnicate ls", "timeout --bogus 5 ls",
     "stdbuf --bogus ls", "nohup --bogus ls", "setsid --bogus ls", "taskset --bogus 1 ls",
     "busybox --install -s dir"],
)  # fmt: skip
def test_c8_unknown_or_directory_changing_wrapper_options_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["env -i ls", "env LANG=C ls", "env -u LANG ls", "nice -n 5 ls", "nice -10 ls",
     "timeout -s KILL 5 ls", "timeout --preserve-status 5 ls", "stdbuf -oL ls",
     "setsid -w ls", "taskset -c 1 ls", "ionice -c3 ls"],
)  # fmt: skip
def test_c8_known_wrapper_options_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


def test_c8_wrappers_acting_on_other_processes_change_them() -> None:
    assert _kind("taskset -p 1 1234") != READ_ONLY
    assert _kind("ionice -c3 -p 1234") != READ_ONLY


# C9: compressors write with -o even with -c, and their other options are an allowlist.
@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("zstd -d -c -o FILE x.zst", "FILE"),
        ("zstd -dco FILE x.zst", "FILE"),
        ("zstd -dc --output=FILE x.zst", "FILE"),
        ("zstdcat -o FILE x.zst", "FILE"),
        ("zstd -c --trace LOG x", "LOG"),
        ("zstd -d --output-dir-flat DIR x.zst", "DIR"),
        ("zstd --rm -c x", "x"),
        ("brotli -c -o FILE x", "FILE"),
        ("brotli -jc x", "x"),
    ],
)
def test_c9_compressor_outputs_are_writes(command: str, path: str) -> None:
    result = classify(command)
    assert result.kind == WRITES and path in result.writes, result


@pytest.mark.parametrize("command", ["gzip --frobnicate -c x", "xz --bogus -dc x", "zstd -Y x"])
def test_c9_unknown_compressor_options_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["zstd -dc x.zst", "zstdcat x.zst", "gzip -dc x.gz", "xz -T0 -dc x.xz", "bzip2 -dc x.bz2",
     "brotli -q 5 -c x", "lz4 -dc x.lz4", "gzip -l x.gz"],
)  # fmt: skip
def test_c9_decompressing_to_stdout_stays_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# C10: openssl loads code (-engine, -provider, -config) and writes (-out, -writerand...).
@pytest.mark.parametrize(
    "command",
    ["openssl x509 -provider-path DIR -provider X -noout -in c.pem",
     "openssl x509 -engine X -noout -in c.pem", "openssl version -config c.cnf",
     "openssl list --provider-path=DIR -providers", "openssl dgst -sha256 -engine e f",
     "openssl $SUB"],
)  # fmt: skip
def test_c10_openssl_options_that_load_code_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["openssl x509 -in c.pem -out d.pem", "openssl dgst -sha256 -out o f",
     "openssl rand -writerand f 4", "openssl x509 -CAcreateserial -in c.pem",
     "openssl asn1parse -in c.der -out o", "openssl genrsa -out k 2048",
     "openssl list -digest-commands -out f"],
)  # fmt: skip
def test_c10_openssl_options_that_write_are_not_read_only(command: str) -> None:
    assert _kind(command) == WRITES, classify(command)


def test_c10_openssl_s_client_writing_a_session_writes() -> None:
    result = classify("openssl s_client -connect h:443 -sess_out f")
    assert result.kind == NETWORK and any("may write" in r for r in result.reasons), result


@pytest.mark.parametrize(
    "command",
    ["openssl version -a", "openssl x509 -noout -text -in c.pem", "openssl dgst -sha256 f",
     "openssl x509 -in=c.pem -noout -fingerprint -sha256", "openssl list -digest-commands"],
)  # fmt: skip
def test_c10_openssl_inspection_stays_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# H1: ss writes (-D), kills (-K), switches namespace (-N); its other options only choose.
@pytest.mark.parametrize(
    ("command", "kind"),
    [("ss -D FILE", WRITES), ("ss --diag=FILE -t", WRITES), ("ss -K dst 10.0.0.1", WRITES),
     ("ss -N ns -t", DYNAMIC), ("ss --frobnicate", DYNAMIC), ("ss -r -t", NETWORK),
     ("ss -tlnp", READ_ONLY), ("ss -s", READ_ONLY)],
)  # fmt: skip
def test_h1_ss_options(command: str, kind: str) -> None:
    assert _kind(command) == kind, classify(command)


# M1: name lookups reach the network.
@pytest.mark.parametrize(
    ("command", "kind"),
    [("getent hosts example.com", NETWORK), ("getent ahostsv4 example.com", NETWORK),
     ("getent -s dns networks x", NETWORK), ("getent $DB x", DYNAMIC),
     ("getent passwd root", READ_ONLY), ("hostname -f", NETWORK), ("hostname", READ_ONLY)],
)  # fmt: skip
def test_m1_name_lookups_are_network(command: str, kind: str) -> None:
    assert _kind(command) == kind, classify(command)
