"""Tools with an option syntax of their own: what each option takes, clusters of short options,
the values and files an option may swallow, options a read form hands on to another command, and
the options that write a file, run a program or load code. Every command here is data, never
run."""

from __future__ import annotations

import pytest

from corral.toolguard.classify import DYNAMIC, NETWORK, READ_ONLY, WRITES, classify


def _kind(command: str) -> str:
    return classify(command).kind


# An option that runs its value as a command, names a variable to assign, or writes a file.
@pytest.mark.parametrize(
    "command",
    [
        "jobs -x touch P",  # runs a command, even with no jobs
        "sleep 0 & wait -n -p 'a[$(touch P)]'",  # evaluates the subscript
        r"printf -va\[\$\(touch\ P\)\] x",  # -v attached to its name
        "printf -vPATH x",
        "fd -Hx touch",  # -x in a cluster of short options
        "fd -tfx rm",
        "fd --exec=rm",
        "fd --exec-batch=rm",
        "fdfind victim --exec=rm",
        "tree -R -L 1 -H . d",  # writes 00Tree.html into each directory
    ],
)
def test_options_that_run_a_command_or_write_are_never_read_only(command: str) -> None:
    assert classify(command).kind != READ_ONLY, classify(command)


@pytest.mark.parametrize("command", ["jobs", "wait", "fd foo", "tree -L 2", 'printf "%s" x'])
def test_the_plain_forms_of_those_commands_stay_read_only(command: str) -> None:
    assert classify(command).kind == READ_ONLY


# xxd reads its own options (`-ps` is one option, "plain"): no option may swallow a file.
@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("xxd -r -ps - /root/.bashrc <<< 746f756368", "/root/.bashrc"),
        ("xxd -ps in out", "out"),
        ("xxd -bits in out", "out"),
        ("xxd -is in out", "out"),
        ("xxd -Es in out", "out"),
        ("xxd -c 4 -ps in out", "out"),
        ("xxd -pl in out", "out"),  # -p; the rest of the word is ignored
        ("xxd -us in out", "out"),
        ("xxd -cols 8 in out", "out"),  # -cols takes the next word in some xxds only
        ("xxd in -r", "-r"),  # options stop at the first file
    ],
)
def test_xxd_output_file_is_written(command: str, written: str) -> None:
    result = classify(command)
    assert result.kind == WRITES and written in result.writes, result


# The same mechanism nearby: tree takes a value for every letter of a cluster in turn, uniq's
# values are numbers, mkdir's -Z is a flag, yq -s writes files named by an expression.
@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("tree -Po x out", "out"),  # -P takes x, -o takes out
        ("tree -Lo 2 out", "out"),
        ("tree -IPo a b out", "out"),
        ("uniq -w in out", "out"),  # not a number: counted as a file, never swallowed
        ("mkdir -Z dir", "dir"),
    ],
)
def test_clusters_and_flags_never_hide_the_file_written(command: str, written: str) -> None:
    result = classify(command)
    assert result.kind == WRITES and written in result.writes, result


@pytest.mark.parametrize(
    "command",
    ["yq -s '\"/root/x\"' f.yml", "yq -Ps .a f.yml", "yq --split-exp .a f.yml",
     "yq --split-exp-file e f"],
)  # fmt: skip
def test_yq_split_exp_writes(command: str) -> None:
    assert _kind(command) == WRITES, classify(command)


# Compressors write with -o even with -c, and their other options are an allowlist.
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
def test_compressor_outputs_are_writes(command: str, path: str) -> None:
    result = classify(command)
    assert result.kind == WRITES and path in result.writes, result


@pytest.mark.parametrize("command", ["gzip --frobnicate -c x", "xz --bogus -dc x", "zstd -Y x"])
def test_unknown_compressor_options_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["zstd -dc x.zst", "zstdcat x.zst", "gzip -dc x.gz", "xz -T0 -dc x.xz", "bzip2 -dc x.bz2",
     "brotli -q 5 -c x", "lz4 -dc x.lz4", "gzip -l x.gz"],
)  # fmt: skip
def test_decompressing_to_stdout_stays_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# unzip reads only for its plainest forms.
@pytest.mark.parametrize(
    "command",
    [
        "unzip -l-l a.zip",
        "unzip -l --l a.zip",
        "unzip -l-l a.zip -d /root",
        "unzip -t-t a.zip",
        "unzip -v-v a.zip",
        "unzip -p-p a.zip",
        "unzip -l a.zip -d out",
        "unzip --l -l a.zip",
    ],
)
def test_unzip_negation_and_later_options_write(command: str) -> None:
    assert _kind(command) not in (READ_ONLY,), classify(command)


def test_unzip_extracting_names_its_directory() -> None:
    assert "/root" in classify("unzip -l-l a.zip -d /root").writes


@pytest.mark.parametrize("command", ["unzip -l a.zip", "unzip -t a.zip", "unzip -Z a.zip"])
def test_plain_unzip_questions_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# openssl loads code (-engine, -provider, -config) and writes (-out, -writerand...).
@pytest.mark.parametrize(
    "command",
    ["openssl x509 -provider-path DIR -provider X -noout -in c.pem",
     "openssl x509 -engine X -noout -in c.pem", "openssl version -config c.cnf",
     "openssl list --provider-path=DIR -providers", "openssl dgst -sha256 -engine e f",
     "openssl $SUB"],
)  # fmt: skip
def test_openssl_options_that_load_code_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["openssl x509 -in c.pem -out d.pem", "openssl dgst -sha256 -out o f",
     "openssl rand -writerand f 4", "openssl x509 -CAcreateserial -in c.pem",
     "openssl asn1parse -in c.der -out o", "openssl genrsa -out k 2048",
     "openssl list -digest-commands -out f"],
)  # fmt: skip
def test_openssl_options_that_write_are_not_read_only(command: str) -> None:
    assert _kind(command) == WRITES, classify(command)


def test_openssl_s_client_writing_a_session_writes() -> None:
    result = classify("openssl s_client -connect h:443 -sess_out f")
    assert result.kind == NETWORK and any("may write" in r for r in result.reasons), result


@pytest.mark.parametrize(
    "command",
    ["openssl version -a", "openssl x509 -noout -text -in c.pem", "openssl dgst -sha256 f",
     "openssl x509 -in=c.pem -noout -fingerprint -sha256", "openssl list -digest-commands"],
)  # fmt: skip
def test_openssl_inspection_stays_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# ss writes (-D), kills (-K), switches namespace (-N); its other options only choose.
@pytest.mark.parametrize(
    ("command", "kind"),
    [("ss -D FILE", WRITES), ("ss --diag=FILE -t", WRITES), ("ss -K dst 10.0.0.1", WRITES),
     ("ss -N ns -t", DYNAMIC), ("ss --frobnicate", DYNAMIC), ("ss -r -t", NETWORK),
     ("ss -tlnp", READ_ONLY), ("ss -s", READ_ONLY)],
)  # fmt: skip
def test_ss_options_that_write_kill_or_switch_namespace(command: str, kind: str) -> None:
    assert _kind(command) == kind, classify(command)


# apt configuration names programs apt runs.
@pytest.mark.parametrize(
    "command",
    ["apt-cache -oDir::Bin::dpkg=PROG policy", "apt-cache -o Dir::Bin::dpkg=PROG policy",
     "apt-cache --option=Dir::Bin::dpkg=PROG show x", "apt-cache policy -c conf",
     "apt-cache --config-file conf policy", "apt-cache -qc conf policy", "apt show -oX=Y x",
     "apt-cache $OPTS policy", "APT_CONFIG=conf apt-cache policy"],
)  # fmt: skip
def test_apt_configuration_options_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


def test_plain_apt_queries_stay_read_only() -> None:
    assert _kind("apt-cache policy git") == READ_ONLY


# Wrappers' options are an allowlist; changing directory or splitting a string is dynamic.
@pytest.mark.parametrize(
    "command",
    ["env -C evilrepo git status", "env --chdir=evilrepo git status", "env --ch evilrepo ls",
     "env -u PATH ls", "env --frobnicate ls", "nice --frobnicate ls", "timeout --bogus 5 ls",
     "stdbuf --bogus ls", "nohup --bogus ls", "setsid --bogus ls", "taskset --bogus 1 ls",
     "busybox --install -s dir"],
)  # fmt: skip
def test_unknown_or_directory_changing_wrapper_options_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize(
    "command",
    ["env -i ls", "env LANG=C ls", "env -u LANG ls", "nice -n 5 ls", "nice -10 ls",
     "timeout -s KILL 5 ls", "timeout --preserve-status 5 ls", "stdbuf -oL ls",
     "setsid -w ls", "taskset -c 1 ls", "ionice -c3 ls"],
)  # fmt: skip
def test_known_wrapper_options_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


def test_wrappers_acting_on_other_processes_change_them() -> None:
    assert _kind("taskset -p 1 1234") != READ_ONLY
    assert _kind("ionice -c3 -p 1234") != READ_ONLY


# Read forms of git subcommands hand their options to log/diff.
@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("git stash list --format='tformat:touch x' --output=/root/.bashrc", WRITES),
        ("git stash list --out=f", WRITES),
        ("git stash show -p --ext-diff", DYNAMIC),
        ("git stash show --textconv stash@{0}", DYNAMIC),
        ('git stash show -p "$X"', DYNAMIC),  # may expand to --output=...
        ("git bisect view --output=f", WRITES),
        ("git bisect visualize -p --ext-diff", DYNAMIC),
        ("git bisect view config core.pager x", DYNAMIC),  # runs `git config ...`
        ("git bisect view tig", DYNAMIC),
        ("git bisect view", DYNAMIC),  # gitk when a display is set
        ("git notes show --ext-diff", DYNAMIC),
        ("git worktree list --output=f", WRITES),
        ("git reflog --output=f", WRITES),
        ("git reflog show -p --ext-diff", DYNAMIC),
        ("git reflog drop", WRITES),
        ("git reflog write HEAD a b msg", WRITES),
    ],
)
def test_git_read_forms_check_their_options(command: str, kind: str) -> None:
    assert _kind(command) == kind, classify(command)


# Controls: the common forms of these tools, and of awk and sed, stay read-only.
@pytest.mark.parametrize(
    "command",
    ["xxd f", "xxd -l 16 f", "xxd -c 8 -g 2 f", "xxd -r -p f", "tree -L 2", "tree -a -I x .",
     "uniq -f 2 a", "git stash list", "git stash show -p", "git bisect log", "git reflog",
     "awk '{ print length / 2 }'", "awk '/foo|bar/ { print $1 }'", "awk '{ n = (a+b)/2 }'",
     "awk '{ gsub(/[[:space:]]+/, \" \"); print }'", "awk '/[/]/'", "sed 'a x\\\\\\nw f' g",
     "sed ':a;N;$!ba;s/\\n/ /g' f", "sed '$!{N;bx}' f",
     "apt-cache policy x", "dpkg -L x", "make --version",
     "conda env list"],
)  # fmt: skip
def test_common_forms_of_these_tools_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)
