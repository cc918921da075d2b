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
