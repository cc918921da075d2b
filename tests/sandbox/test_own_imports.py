"""corral's own process never imports a module a sandboxed command wrote (fourth review, F5).

corral imports much lazily, after a run (the change-set check imports fcntl and json, the
runner select). sys.path puts the current directory (`python -m corral`) and PYTHONPATH (a
project's `src`) before the standard library, so a `fcntl.py` a sandboxed command wrote into the
workspace ran in corral's own process, on the host, at the next run.
"""

from __future__ import annotations

from .sandbox_support import DONE, q

SHADOWED = ("fcntl", "json", "select", "fnmatch", "shlex", "marshal", "difflib", "tempfile")


def test_modules_planted_in_the_workspace_are_not_imported_by_corral(host) -> None:
    canary = host.base / "PWNED-import"
    payload = f"open({str(canary)!r} + '-' + __name__, 'w').close()\n"
    writes = "".join(
        f"printf %s {q(payload)} > {q(host.ws / d / (name + '.py'))}\n"
        for name in SHADOWED
        for d in (".", "src")
    )
    r = host.sh(f"mkdir -p {q(host.ws / 'src')}\n{writes}")
    assert DONE in r.stdout, r.stdout + r.stderr
    assert (host.ws / "src" / "json.py").exists(), "the planted modules were not applied"
    # The next runs, from the workspace, with the project's src on PYTHONPATH (as an .envrc
    # or a src layout sets it), each with a change set to check.
    host.env["PYTHONPATH"] = "src"
    for _ in range(2):
        r = host.corral("run", "--", "sh", "-c", "echo x > made.txt; echo " + DONE)
        assert DONE in r.stdout, r.stdout + r.stderr
        r = host.corral("status")
        assert r.returncode == 0, r.stderr
    planted = sorted(p.name for p in host.base.glob("PWNED-import*"))
    assert planted == [], f"corral imported modules a sandboxed command wrote: {planted}"


def test_modules_python_runs_at_start_up_cannot_be_planted(host) -> None:
    """Fifth review, S3: corral drops writable sys.path entries only once its own code runs;
    by then Python has run `sitecustomize` from PYTHONPATH, and a `corral/` package there has
    replaced corral itself. Those names are kept as they are in every directory Python
    searches first (PYTHONPATH inside the workspace, the workspace for `python -m`), and a new
    module named like a standard one there is held."""
    canary = host.base / "PWNED-startup"
    payload = f"open({str(canary)!r} + '-' + __name__, 'w').close()\n"
    host.env["PYTHONPATH"] = "src"
    targets = ["src/sitecustomize.py", "src/usercustomize.py", "src/corral/__init__.py",
               "sitecustomize.py", "corral/__init__.py", "src/json.py", "src/fcntl.py"]  # fmt: skip
    writes = "".join(
        f'mkdir -p "$(dirname {q(host.ws / t)})"; printf %s {q(payload)} > {q(host.ws / t)}\n'
        for t in targets
    )
    r = host.sh(f"mkdir -p {q(host.ws / 'src')}\n{writes}")
    assert DONE in r.stdout, r.stdout + r.stderr
    for t in targets:
        assert not (host.ws / t).exists(), (t, r.stderr)
    (host.ws / "src" / "mine.py").write_text("x = 1\n")  # the project's own modules: fine
    r = host.sh(f"printf 'x = 2\\n' > {q(host.ws / 'src' / 'mine.py')}\n"
                f"printf 'y = 1\\n' > {q(host.ws / 'src' / 'helpers.py')}\n")  # fmt: skip
    assert (host.ws / "src" / "mine.py").read_text() == "x = 2\n", r.stderr
    # (a new name there is held too: a library's optional import would find it, r46a)
    assert not (host.ws / "src" / "helpers.py").exists(), r.stderr
    assert "optional import" in r.stderr
    r = host.corral("status")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in host.base.glob("PWNED-startup*")) == []


def test_start_up_bytecode_and_other_tools_config_are_held(host) -> None:
    """Sixth review: R8, a `__pycache__/sitecustomize.cpython-311.pyc` beside the kept source
    ran in its place; R6 and R13, configuration language servers and version managers obey
    when a file is merely opened (.cargo/config.toml, .luarc.json, .tool-versions); R9, git's
    init.templateDir inside the workspace (its hooks go into every new repository)."""
    (host.ws / "sitecustomize.py").write_text("# mine\n")
    (host.home / ".gitconfig").write_text("[init]\n\ttemplateDir = " + str(host.ws / "tpl") + "\n")
    names = ["__pycache__/sitecustomize.cpython-311.pyc", ".cargo/config.toml", ".luarc.json",
             ".tool-versions", "tpl/hooks/post-checkout"]  # fmt: skip
    writes = "".join(
        f'mkdir -p "$(dirname {q(host.ws / n)})"; echo x > {q(host.ws / n)}\n' for n in names
    )
    r = host.sh(writes)
    assert DONE in r.stdout, r.stdout + r.stderr
    for n in names:
        assert not (host.ws / n).exists(), (n, r.stderr)
