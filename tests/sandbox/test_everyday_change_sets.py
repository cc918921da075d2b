"""Everyday work with change sets on (the default): what a developer's agent runs must land in
the workspace as if written directly, nothing held. Tools that are not installed are skipped
(a fresh machine has only python3); git and pip always run."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import zipfile
from typing import TYPE_CHECKING

import pytest

from .sandbox_support import DONE, apply_a_venv_made_as_root, ignore_less, q
from .test_change_sets import take_history

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Host

pytestmark = pytest.mark.sandbox


def run(host: Host, body: str) -> str:
    done = host.sh(host.vars() + '\ncd "$WS"\nset -e\n' + body, "workspace-write")
    assert DONE in done.stdout, done.stdout + done.stderr
    assert "held" not in done.stderr, done.stderr
    return done.stdout


def test_git_branch_rebase_stash_and_tag(host: Host) -> None:
    done = host.sh(
        host.vars()
        + """
cd "$WS"
set -e
git checkout -q -b topic
echo topic > topic.txt && git add topic.txt && git commit -q -m topic
git checkout -q main
echo main > main.txt && git add main.txt && git commit -q -m main
git checkout -q topic
git rebase -q main
echo dirty >> README.md && git stash -q && git stash pop -q && git checkout -q README.md
git tag v1
""",
        "workspace-write",
    )
    assert DONE in done.stdout, done.stdout + done.stderr
    # (held: only the history, sandbox.git_history; the user takes it)
    for line in done.stderr.splitlines():
        assert not line.startswith("corral: held ") or "/.git/" in line, done.stderr
    take_history(host)
    log = host.git("log", "--format=%s", "topic")
    assert log.split()[:2] == ["topic", "main"], log
    assert host.git("tag") == "v1\n"
    assert host.git("status", "--porcelain") == ""
    assert host.git("fsck", "--no-progress", "--no-dangling") == ""


def _wheel(path: Path) -> None:
    """A minimal pure-Python wheel: one module and its dist-info."""
    files = {
        "hello_corral/__init__.py": b"GREETING = 'hi'\n",
        "hello_corral-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: hello-corral\n"
        b"Version: 1.0\n",
        "hello_corral-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("hello_corral-1.0.dist-info/RECORD,,")
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr("hello_corral-1.0.dist-info/RECORD", "\n".join(record) + "\n")


def test_a_venv_and_pip_install_into_the_workspace(host: Host) -> None:
    ignore_less(host)  # (`build/` would match pip's own `operations/build`)
    wheel = host.ws / "dist" / "hello_corral-1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    _wheel(wheel)
    done = host.sh(
        host.vars() + '\ncd "$WS"\nset -e\n'
        "python3 -m venv venv\n"
        f"venv/bin/python -m pip install -q --no-index --no-deps {q(wheel)}\n"
        "venv/bin/python -c 'import hello_corral; print(hello_corral.GREETING)'",
        "workspace-write",
    )
    assert DONE in done.stdout, done.stdout + done.stderr
    apply_a_venv_made_as_root(host, done.stderr, host.ws / "venv" / "bin")
    assert os.access(host.ws / "venv" / "bin" / "python", os.X_OK)
    found = list((host.ws / "venv" / "lib").glob("python3*/site-packages/hello_corral"))
    assert found, "the package did not reach the workspace"


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_installs_a_local_package(host: Host) -> None:
    pkg = host.ws / "lib"
    pkg.mkdir()
    (pkg / "package.json").write_text('{"name": "lib", "version": "1.0.0", "bin": {"lib": "x.js"}}')
    (pkg / "x.js").write_text("#!/usr/bin/env node\nconsole.log('lib')\n")
    (host.ws / "package.json").write_text('{"name": "app", "version": "1.0.0"}')
    run(host, "npm install --offline --no-audit --no-fund --silent ./lib")
    assert (host.ws / "node_modules" / "lib").is_symlink() or (
        host.ws / "node_modules" / "lib" / "package.json"
    ).exists()
    assert (host.ws / "node_modules" / ".bin" / "lib").exists()
    assert '"lib"' in (host.ws / "package.json").read_text()


@pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("make") is None, reason="no C compiler or make"
)
def test_a_c_build_with_make(host: Host) -> None:
    (host.ws / "hello.c").write_text('#include <stdio.h>\nint main(void){puts("hi");}\n')
    (host.ws / "Makefile").write_text("build/hello: hello.c\n\tmkdir -p build && cc -o $@ $<\n")
    out = run(host, "make -s && ./build/hello && mv build out")
    assert "hi" in out
    assert (host.ws / "out" / "hello").stat().st_mode & 0o111
