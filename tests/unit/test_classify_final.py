"""Final adversarial review B (B1..B9): the classifier and the allow list fail closed.

B1/B5/B8: environment names are an allowlist of harmless ones, not a denylist of risky ones.
B2: git with a directory change anywhere in the command, whatever the visiting order.
B3: npm loads `.npmrc` and reaches the registry for every command. B4: unzip's own option
syntax (`-l-l` extracts). B5: docker's daemon is chosen by global options and the environment.
B6/B7: an allow entry does not approve what the classifier found dynamic for a reason other
than an unknown program, nor a write outside the workspace. B9: ulimit, umask, nohup.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from corral import config
from corral.sandbox import policy
from corral.toolguard import approval, guard
from corral.toolguard.classify import DYNAMIC, NETWORK, READ_ONLY, WRITES, classify

if TYPE_CHECKING:
    from pathlib import Path

A, R = approval.APPROVE, approval.REQUIRE


def _kind(command: str) -> str:
    return classify(command).kind


# B1, B8, B5, B9: any environment name outside the harmless allowlist is dynamic.
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
def test_b1_b8_environment_outside_the_allowlist_is_dynamic(command: str) -> None:
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
def test_b1_harmless_names_and_shell_variables_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# B2: the decision does not depend on which word the walker visits first.
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
def test_b2_git_with_a_directory_change_anywhere_is_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


def test_b2_git_without_a_directory_change_stays_read_only() -> None:
    assert _kind("for i in 1 2; do git log -1; done") == READ_ONLY


# B3: npm has no read-only form.
@pytest.mark.parametrize(
    "command", ["npm ls", "npm ls foo", "npm list", "npm ll", "npm la", "npm root", "npm prefix",
                "npm help", "cnpm ls"]
)  # fmt: skip
def test_b3_npm_is_never_read_only(command: str) -> None:
    assert _kind(command) in (WRITES, NETWORK), classify(command)


# B4: unzip reads only for its plainest forms.
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
def test_b4_unzip_negation_and_later_options_write(command: str) -> None:
    assert _kind(command) not in (READ_ONLY,), classify(command)


def test_b4_unzip_extracting_names_its_directory() -> None:
    assert "/root" in classify("unzip -l-l a.zip -d /root").writes


@pytest.mark.parametrize("command", ["unzip -l a.zip", "unzip -t a.zip", "unzip -Z a.zip"])
def test_b4_plain_unzip_questions_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# B5: container clients talk to a daemon their options and environment choose.
@pytest.mark.parametrize(
    "command",
    [
        "docker --host=tcp://127.0.0.1:18766 ps",
        "docker -H=tcp://h ps",
        "docker -Htcp://h ps",
        "docker --context=evil ps",
        "docker --config=./evilcfg ps",
        "DOCKER_HOST=tcp://h docker ps",
        "DOCKER_CONTEXT=evil docker images",
        "podman --url=tcp://h ps",
        "KUBECONFIG=./k kubectl get pods",
    ],
)
def test_b5_container_client_globals_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize("command", ["docker ps", "docker images", "podman ps", "nerdctl ps"])
def test_b5_container_clients_are_never_read_only(command: str) -> None:
    assert _kind(command) == NETWORK, classify(command)


# B9: builtins and wrappers that change later commands or write.
@pytest.mark.parametrize(
    "command", ["ulimit -c unlimited; ls", "umask 0; ls", "umask 000", "nohup ls"]
)
def test_b9_not_read_only(command: str) -> None:
    assert _kind(command) != READ_ONLY, classify(command)


@pytest.mark.parametrize("command", ["umask", "umask -S", "ulimit -a", "ulimit -n"])
def test_b9_queries_stay_read_only(command: str) -> None:
    assert _kind(command) == READ_ONLY, classify(command)


# B6, B7: the allow list against what the classifier found.
def _decide(ws: Path, command: str, allow: list[str]) -> approval.Decision:
    layer: dict[str, Any] = {"tools.shell.allow": allow, "sandbox.mode": "off"}
    resolved = config.resolve([config.Layer("global", layer)])
    env = {"HOME": str(ws.parent / "home"), "PATH": os.environ.get("PATH", "")}
    pol = policy.resolve(resolved, str(ws), env)
    decision, _ = guard.decide(
        "bash", {"command": command}, resolved.values, pol, False, approval.Chain()
    )
    return decision


@pytest.mark.parametrize(
    ("command", "allow"),
    [
        ("for HOME in evilhome; do git status; done", ["git status"]),
        ("for PATH in .; do git status; done", ["git status"]),
        ("git diff --ext-diff", ["git diff"]),
        ("find . -exec sh -c 'touch x' \\;", ["find"]),
        ("sort -o ~/.bashrc f", ["sort"]),
        ("git log --output=/tmp/x", ["git log"]),
        ("sort -o ../../outside f", ["sort"]),
    ],
)
def test_b6_b7_allow_does_not_approve_what_the_classifier_refuses(
    tmp_path: Path, command: str, allow: list[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    d = _decide(ws, command, allow)
    assert d.decision != A, d


@pytest.mark.parametrize(
    ("command", "allow"),
    [
        ("make test", ["make test"]),
        ("./run-tests --fast", ["./run-tests"]),
        ("mytool build", ["mytool"]),
        ("sort -o out.txt f", ["sort"]),
    ],
)
def test_b6_allow_still_approves_known_and_unknown_tools(
    tmp_path: Path, command: str, allow: list[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    d = _decide(ws, command, allow)
    assert d.decision == A and "tools.shell.allow" in d.source, d
