"""Third adversarial review of the bash classifier (G1-G6): tools with their own option syntax,
read forms that pass options on, awk's regex/division question, sed's escaped text, package
managers that run project code, and the allow list. Every command here is data, never run."""

from __future__ import annotations

import pytest

from corral.toolguard.classify import DYNAMIC, READ_ONLY, WRITES, classify, shell_policy


def _kind(command: str) -> str:
    return classify(command).kind


# G1: xxd reads its own options (`-ps` is one option, "plain"): no option may swallow a file.
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
def test_g1_xxd_output_file_is_written(command: str, written: str) -> None:
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
def test_g1_clusters_and_flags_never_hide_the_file_written(command: str, written: str) -> None:
    result = classify(command)
    assert result.kind == WRITES and written in result.writes, result


@pytest.mark.parametrize(
    "command",
    ["yq -s '\"/root/x\"' f.yml", "yq -Ps .a f.yml", "yq --split-exp .a f.yml",
     "yq --split-exp-file e f"],
)  # fmt: skip
def test_g1_yq_split_exp_writes(command: str) -> None:
    assert _kind(command) == WRITES, classify(command)


# G2: read forms of git subcommands hand their options to log/diff.
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
def test_g2_git_read_forms_check_their_options(command: str, kind: str) -> None:
    assert _kind(command) == kind, classify(command)


# G3: where awks disagree on regex or division, every reading is searched for pipes.
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
def test_g3_awk_ambiguous_slash_cannot_hide_a_pipe(program: str) -> None:
    command = f"awk '{program}'"
    assert _kind(command) == DYNAMIC, classify(command)


def test_g3_awk_ambiguous_slash_cannot_hide_a_redirection() -> None:
    result = classify('awk \'BEGIN { getline /1; print "x" > "f"; z = 2/ 1 }\'')
    assert result.kind == WRITES and result.writes == ("f",), result


def test_g3_too_many_ambiguous_slashes_fail_closed() -> None:
    program = "BEGIN { " + "getline /1/; " * 12 + "}"
    assert _kind(f"awk '{program}'") == DYNAMIC


# G4: GNU sed reads a/i/c text with `\` escaping the next character, and a label ends at a
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
def test_g4_sed_text_and_labels_end_where_gnu_sed_ends_them(command: str, kind: str) -> None:
    assert _kind(command) == kind, classify(command)


# G5: package managers: only exact option-free questions of tools that load no project code
# read; tools that read the project's configuration or code never do.
@pytest.mark.parametrize(
    "command",
    [
        "pip --python=./x list",
        "pip list --log /tmp/x",
        "pip list --outd",
        "pip list -lo",
        "pip show --log f x",
        "mvn --version",
        "mvn -v",
        "mvnw --version",
        "gradle help",
        "gradle --version",
        "bazel version",
        "bazel info",
        "bundle list",
        "bundle show x",
        "yarn list",
        "yarn info x",
        "poetry show",
        "poetry env info",
        "pipenv --version",
        "pdm list",
        "hatch version",
        "composer show",
        "cargo metadata",
        "cargo --version",
        "cargo locate-project",
        "tox --version",  # imports toxfile.py
        "nox --version",
        "go version",  # go.mod's toolchain line switches to (and downloads) another go
        "uv version",
        "npm help install",  # man, or the browser .npmrc names
        "conda env create",  # only the first word used to be looked at
        "poetry env remove x",
        "apt-cache --pkg-cache=/tmp/x stats",
        "pytest --version",  # imports conftest.py first
        "rustc --version",  # rustup follows rust-toolchain.toml
        "dotnet --version",  # global.json
        "latexmk --version",  # runs latexmkrc
    ],
)
def test_g5_package_manager_questions_that_run_code_are_not_read_only(command: str) -> None:
    assert _kind(command) != READ_ONLY, classify(command)


# G6: the allow list matches the leading words of every simple command, and nothing may ride
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
def test_g6_allow_needs_leading_words_and_nothing_riding_along(command: str) -> None:
    verdict = shell_policy(command, ["git status", "git diff"], [], "/w")
    assert verdict.decision == "pass", verdict


# Controls: common reads stay read-only and allowed commands stay allowed. These also pass on
# the tree before this review.
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
def test_controls_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


@pytest.mark.parametrize(
    "command",
    ["git status --short", "/usr/bin/git status", "git status && git diff --stat",
     "git status 2>&1 >/dev/null", "Git Status"],
)  # fmt: skip
def test_controls_allowed(command: str) -> None:
    assert shell_policy(command, ["git status", "git diff"], [], "/w").decision == "allow"
