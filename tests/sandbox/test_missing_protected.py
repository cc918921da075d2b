"""Protected and hidden paths that do not exist yet, inside a writable root, must not be created:
~/.ssh/authorized_keys with $HOME as the workspace, a new .nvim.lua or .exrc."""

from __future__ import annotations

import os
import shutil

import pytest

from corral.service import Service

from .conftest import Host
from .sandbox_support import DIRECT, RUN_UNSANDBOXED, allowed, pwned_prelude, script_report

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


# With $HOME as the workspace and direct writes, nothing the host obeys later can be created.

HOME_ATTACK = r"""
attempt corral-config sh -c 'mkdir -p "$H/.config/corral" &&
    printf "[sandbox]\nmode = \"off\"\n" > "$H/.config/corral/config.toml"'
attempt gitconfig sh -c 'printf "[core]\n\tfsmonitor = \"touch %s\"\n" "$PWNED" > "$H/.gitconfig"'
attempt bash-profile sh -c 'printf "touch %s\n" "$PWNED" > "$H/.bash_profile"'
"""


def test_home_workspace_cannot_create_config_or_startup_files(host):
    home = host.home
    pwned, prelude = pwned_prelude(host, cwd=home)
    r = host.sh(prelude + HOME_ATTACK, None, *DIRECT, "--cwd", str(home), cwd=home)
    report = script_report(r)
    assert r.returncode == 0, report

    # corral's own config directory is made (empty) before the run so it can be read-only:
    # the config file could never be written. The others were created, then removed.
    config_dir = home / ".config" / "corral"
    assert "corral-config" not in allowed(r.stdout), report
    assert not config_dir.exists() or list(config_dir.iterdir()) == [], report
    created = {"gitconfig": home / ".gitconfig", "bash_profile": home / ".bash_profile"}
    left = [name for name, path in created.items() if os.path.lexists(path)]
    assert left == [], f"left on the host after the run: {left}" + report
    warnings = r.stderr.splitlines()
    for path in created.values():
        line = f"corral: warning: removed {path}: created inside the sandbox"
        assert line in warnings, report

    # The next run, from another workspace, is still sandboxed and still hides credentials.
    cat = host.corral("run", "--", "cat", str(home / ".ssh" / "id_rsa"))
    assert host.SECRET_WORD not in cat.stdout + cat.stderr, "the next run printed the secret"
    assert RUN_UNSANDBOXED not in cat.stderr, cat.stderr
    host.git("status", "--porcelain", check=False)
    assert not os.path.lexists(pwned), "host git ran a planted core.fsmonitor" + report

    # The planted config really would have turned the sandbox off, had it stayed.
    (home / ".config" / "corral").mkdir(exist_ok=True)
    (home / ".config" / "corral" / "config.toml").write_text('[sandbox]\nmode = "off"\n')
    off = host.corral("run", "--", "true")
    assert RUN_UNSANDBOXED in off.stderr, "control: the payload should disable the sandbox"
