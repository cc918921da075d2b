"""Everyday work in the default mode: the sandbox must not get in the way of normal development."""

from __future__ import annotations

import os

import pytest

from .sandbox_support import DONE, apply_what_git_ignores, q
from .test_change_sets import take_history

pytestmark = pytest.mark.sandbox

MAKEFILE = """\
build/out.txt: src.txt
\tmkdir -p build
\tcat src.txt > build/out.txt
\techo built >> build/out.txt
"""

UNITTEST = """\
import unittest


class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)
"""


def test_git_venv_unittest_make_and_tmp_work_in_default_mode(host):
    scratch = f"/tmp/corral-scratch-{host.tag}"
    body = f"""
set -e
cd {q(host.ws)}
git checkout -q -b feature
echo hello > hello.txt
git add hello.txt
git commit -q -m 'add hello'
git checkout -q main
git merge -q --no-ff -m 'merge feature' feature
git branch -q -d feature
git status --short >/dev/null
"""
    r = host.sh(body)
    assert r.returncode == 0 and DONE in r.stdout, r.stdout + r.stderr
    # (a command's commits wait for review, sandbox.git_history: the user takes them)
    assert "a command's commits wait for your review" in r.stderr, r.stderr
    assert (host.ws / "hello.txt").read_text() == "hello\n"
    assert host.git("log", "-1", "--format=%s", "main") == "initial\n"
    take_history(host)
    body = f"""
set -e
cd {q(host.ws)}
python3 -m venv --without-pip .venv
.venv/bin/python -c 'import sys; assert sys.prefix != sys.base_prefix; print("venv", sys.prefix)'

mkdir -p tests
printf '%s' {q(UNITTEST)} > tests/test_t.py
.venv/bin/python -m unittest discover -s tests -q 2>&1 | tail -n 1

echo source > src.txt
printf '%s' {q(MAKEFILE)} > Makefile
make -s
cat build/out.txt

echo scratch > {q(scratch)}
cat {q(scratch)}
"""
    r = host.sh(body)
    assert r.returncode == 0, r.stdout + r.stderr
    assert DONE in r.stdout, r.stdout + r.stderr
    assert f"venv {host.ws}/.venv" in r.stdout
    assert "OK" in r.stdout  # unittest's summary line
    assert "source\nbuilt\nscratch\n" in r.stdout
    # git ignores the venv and the build (sandbox.ignored_files): the user applies them (as
    # root, the venv's links to its interpreter too, which root may write)
    apply_what_git_ignores(host, r.stderr, ".venv", "build")

    # The host sees the work: the merge and the commit it brought, the files, the venv.
    assert host.git("log", "-1", "--format=%s", "main") == "merge feature\n"
    assert host.git("log", "-1", "--format=%s", "main^2") == "add hello\n"
    assert host.git("log", "-1", "--format=%s", "main^1") == "initial\n"
    assert (host.ws / "hello.txt").read_text() == "hello\n"
    assert (host.ws / "build" / "out.txt").read_text() == "source\nbuilt\n"
    assert os.access(host.ws / ".venv" / "bin" / "python", os.X_OK)
    assert host.git("fsck", "--no-progress", "--no-dangling") == ""
    # /tmp inside was private: the scratch file never reached the host.
    assert not os.path.exists(scratch)
