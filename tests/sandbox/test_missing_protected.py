"""Protected and hidden paths that do not exist yet, inside a writable root, must not be created:
~/.ssh/authorized_keys with $HOME as the workspace, a new .nvim.lua or .exrc."""

from __future__ import annotations

import shutil

import pytest

from corral.service import Service

from .conftest import Host

pytestmark = pytest.mark.sandbox


@pytest.mark.parametrize("writes", ["apply", "direct"])
def test_sandbox_cannot_leave_new_keys_or_startup_files(host: Host, writes: str) -> None:
    home = host.home
    shutil.rmtree(home / ".ssh")  # a home without ~/.ssh (the fixture planted one)
    r = host.corral(
        "run", "--writes", writes, "--cwd", str(home), "--",
        "sh", "-c", "mkdir -p ~/.ssh && echo key >> ~/.ssh/authorized_keys; "
        "echo 'os.execute(1)' > .nvim.lua; echo x > .exrc; echo done",
        cwd=home,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "done" in r.stdout
    for created in (".ssh", ".nvim.lua", ".exrc"):
        assert not (home / created).exists(), f"{created} was left on the host"
        if writes == "direct":  # swept after the run
            assert f"removed {home / created}: created inside the sandbox" in r.stderr
        else:  # never applied
            assert f"held {home / created}" in r.stderr


def test_the_write_tool_refuses_them_outright(host: Host) -> None:
    shutil.rmtree(host.home / ".ssh")
    svc = Service()
    svc.environ = dict(host.env)  # the fake home
    for path in (".ssh/authorized_keys", ".nvim.lua"):
        request = {
            "layers": {},
            "cwd": str(host.home),
            "tool": "write",
            "input": {"path": path, "content": "x", "create_dirs": True},
        }
        result = svc.call("op", request)
        assert result["ok"] is False, (path, result)
        assert not (host.home / path).exists()
