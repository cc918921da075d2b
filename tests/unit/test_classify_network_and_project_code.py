"""Questions that are not read-only: package managers and build tools that load the project's
code or configuration, clients that reach the network or a daemon their options and
environment choose (npm, pip, docker, name lookups), and git commands that run filters. Every
command here is data, never run."""

from __future__ import annotations

import pytest

from corral.toolguard.classify import DYNAMIC, NETWORK, READ_ONLY, WRITES, classify


def _kind(command: str) -> str:
    return classify(command).kind


# Package managers: only exact option-free questions of tools that load no project code
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
def test_package_manager_questions_that_run_code_are_not_read_only(command: str) -> None:
    assert _kind(command) != READ_ONLY, classify(command)


# npm has no read-only form.
@pytest.mark.parametrize(
    "command", ["npm ls", "npm ls foo", "npm list", "npm ll", "npm la", "npm root", "npm prefix",
                "npm help", "cnpm ls"]
)  # fmt: skip
def test_npm_is_never_read_only(command: str) -> None:
    assert _kind(command) in (WRITES, NETWORK), classify(command)


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("pip list", "network"),  # pip checks its index for a newer pip
        ("pip freeze", "network"),
        ("git archive HEAD", "network"),  # filters, git-lfs downloads
        ("git cat-file --filters HEAD:x", DYNAMIC),
    ],
)
def test_commands_that_reach_the_network_or_run_filters_are_not_read_only(
    command: str, kind: str
) -> None:
    assert classify(command).kind == kind, classify(command)


# Container clients talk to a daemon their options and environment choose.
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
def test_container_client_globals_are_dynamic(command: str) -> None:
    assert _kind(command) == DYNAMIC, classify(command)


@pytest.mark.parametrize("command", ["docker ps", "docker images", "podman ps", "nerdctl ps"])
def test_container_clients_are_never_read_only(command: str) -> None:
    assert _kind(command) == NETWORK, classify(command)


# Name lookups reach the network.
@pytest.mark.parametrize(
    ("command", "kind"),
    [("getent hosts example.com", NETWORK), ("getent ahostsv4 example.com", NETWORK),
     ("getent -s dns networks x", NETWORK), ("getent $DB x", DYNAMIC),
     ("getent passwd root", READ_ONLY), ("hostname -f", NETWORK), ("hostname", READ_ONLY)],
)  # fmt: skip
def test_name_lookups_are_network(command: str, kind: str) -> None:
    assert _kind(command) == kind, classify(command)
