"""Programs corral starts on the host never come from PATH (issue 7, item 1).

With a workspace directory on PATH (an activated `.venv`, `node_modules/.bin`, direnv), a
sandboxed command can plant `env` or `true` there. Before the fix the self-contained argv began
with the planted `env` (run on the host by whoever started the argv), and the bwrap probe ran the
planted `true`: a failing one made corral report "bwrap does not work" and run unsandboxed.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from corral.sandbox import hostbin

from .conftest import user_prefix
from .sandbox_support import DONE, q

RUN_UNSANDBOXED = "running UNSANDBOXED"


def _plant(host, names: tuple[str, ...], status: int) -> str:
    """Write, from inside the sandbox, payloads named `names` into the workspace's .venv/bin,
    each touching PWNED (outside every writable root) and exiting with `status`; put that
    directory first on the host's PATH, as an activated venv does. Returns PWNED's path."""
    pwned = host.base / "PWNED"
    bindir = host.ws / ".venv" / "bin"
    payload = f"#!/bin/sh\ntouch {q(pwned)} 2>/dev/null\nexit {status}\n"
    writes = "".join(
        f"printf %s {q(payload)} > {q(bindir / n)} && chmod +x {q(bindir / n)}\n" for n in names
    )
    r = host.sh(f"mkdir -p {q(bindir)}\n{writes}")
    assert DONE in r.stdout, r.stdout + r.stderr
    assert all((bindir / n).exists() for n in names), "the sandbox could not plant the payloads"
    host.env["PATH"] = f"{bindir}:{host.env['PATH']}"
    return str(pwned)


def test_self_contained_argv_starts_with_a_system_env(host) -> None:
    pwned = _plant(host, ("env", "sh"), 0)
    r = host.corral("wrap", "--", "true")
    assert r.returncode == 0, r.stderr
    argv = json.loads(r.stdout)
    assert argv[0] in {f"{d}/env" for d in hostbin.SYSTEM_BIN_DIRS}, argv[0]
    assert str(host.ws) not in argv[0]
    # Start it the way a jobstart would, with the poisoned PATH: nothing planted runs.
    done = subprocess.run(
        [*user_prefix(), *argv], env=host.env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert not (host.base / "PWNED").exists(), f"a planted program ran on the host: {pwned}"


@pytest.mark.parametrize("status", [0, 1])
def test_a_planted_true_neither_runs_nor_turns_the_sandbox_off(host, status: int) -> None:
    _plant(host, ("true",), status)
    # A fresh probe: the cache dir is the layout's own, but make sure nothing is cached.
    for cached in (host.home / ".cache").rglob("bwrap-probe*"):
        cached.unlink()
    status_out = host.corral("status")
    assert "UNSANDBOXED" not in status_out.stdout + status_out.stderr, status_out.stdout
    victim = host.outside / "victim.txt"
    before = victim.read_bytes()
    r = host.sh(f"attempt outside sh -c 'echo changed > {q(victim)}'")
    assert DONE in r.stdout, r.stdout + r.stderr
    assert RUN_UNSANDBOXED not in r.stderr, r.stderr
    assert victim.read_bytes() == before, "the run was not sandboxed"
    assert not (host.base / "PWNED").exists(), "the planted true ran outside the sandbox"


def test_system_programs_are_owned_by_root() -> None:
    for name in ("env", "sh", "true"):
        path = hostbin.find(name)
        assert path is not None and hostbin._safe_chain(path), name


def test_a_bwrap_checked_for_one_workspace_is_checked_again_for_another(host) -> None:
    """Fifth review, G3: the bwrap chosen and probed was remembered under a key without the
    workspace, so after `:cd` into the directory holding it (which a sandboxed command could
    then rewrite) it was still run, on the host."""
    import shutil

    from corral import config
    from corral.errors import BackendError
    from corral.sandbox import policy
    from corral.sandbox.backends.bwrap import BwrapBackend, bundled_bwrap

    real = bundled_bwrap() or hostbin.find("bwrap")
    assert real, "a bwrap is needed"
    tools = host.base / "tools"
    tools.mkdir()
    # the bundled bwrap with the libraries beside it that it loads
    package = os.path.dirname(os.path.dirname(real))
    for name in os.listdir(os.path.dirname(package)):
        if name.startswith(os.path.basename(package)):
            shutil.copytree(os.path.join(os.path.dirname(package), name), tools / name)
    copy = tools / os.path.relpath(real, os.path.dirname(package))
    layer = config.Layer("global", {"sandbox": {"backends": {"bwrap": {"path": str(copy)}}}})
    resolved = config.resolve([layer])
    env = {"HOME": str(host.home), "PATH": "/usr/bin:/bin"}
    backend = BwrapBackend()
    elsewhere = policy.resolve(resolved, str(host.ws), env)
    assert backend.available(elsewhere) is None
    assert backend.binary(elsewhere) == str(copy)
    inside = policy.resolve(resolved, str(tools), env)  # the user now works in tools/
    assert backend.available(inside) is not None
    with pytest.raises(BackendError):
        backend.binary(inside)
    # Sixth review, R8: replaced while tools/ was the workspace, then back in the first one:
    # the choice remembered for it must not run the replacement.
    copy.write_bytes(copy.read_bytes() + b"\0")
    with pytest.raises(BackendError):
        backend.binary(elsewhere)
    assert backend.available(elsewhere) is not None  # and it is not probed (run) again
