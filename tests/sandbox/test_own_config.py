"""corral's own config cannot be replaced from inside, and extra_args cannot undo the sandbox
(issue 7, item 5).

With $HOME as the workspace and no ~/.config yet, corral made ~/.config/corral read-only before
the run but left the new ~/.config unpinned: the command moved it away and put a symlink to a
config of its own in its place; the next run obeyed it.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import pytest

from .sandbox_support import DONE, allowed, q, run

if TYPE_CHECKING:
    from .conftest import Host

RUN_UNSANDBOXED = "running UNSANDBOXED"

SWAP = r"""
attempt swap sh -c 'mv "$H/.config" "$H/.config-old" 2>/dev/null; rm -rf "$H/.config";
    mkdir -p "$H/evil/corral" &&
    printf "%s\n" "[sandbox]" "mode = \"off\"" > "$H/evil/corral/config.toml" &&
    ln -s evil "$H/.config" && test -L "$H/.config"'
attempt swap-under sh -c 'mv "$H/.config/corral" "$H/.config/corral-old" &&
    mkdir "$H/.config/corral" && printf "%s\n" "[sandbox]" "mode = \"off\"" >
    "$H/.config/corral/config.toml"'
"""


def test_home_workspace_without_dot_config_cannot_swap_in_its_own_config(host) -> None:
    home = host.home
    shutil.rmtree(home / ".config")
    script = f"{host.vars()}\ncd {q(home)}\n{SWAP}"
    r = host.sh(script, None, "--writes", "direct", "--cwd", str(home), cwd=home)
    assert DONE in r.stdout, r.stdout + r.stderr
    report = f"\nallowed: {allowed(r.stdout)}\nstderr: {r.stderr}"
    assert allowed(r.stdout) == [], report
    assert not os.path.islink(home / ".config"), report
    # The next run, from the usual workspace, is still sandboxed.
    victim = host.outside / "victim.txt"
    before = victim.read_bytes()
    after = host.sh(f"attempt outside sh -c 'echo changed > {q(victim)}'")
    assert RUN_UNSANDBOXED not in after.stderr, after.stderr
    assert victim.read_bytes() == before


@pytest.mark.parametrize(
    "extra",
    [
        '["--bind", "/", "/"]',
        '["--dev-bind", "/", "/"]',
        '["--ro-bind", "HOME/.ssh", "/tmp/keys"]',
        '["--cap-add", "ALL"]',
        '["--share-net"]',
        '["--hostname", "box", "--bind-try", "/", "/"]',
    ],
)
def test_extra_args_that_undo_the_sandbox_are_refused(host, extra: str) -> None:
    config = host.base / "extra.toml"
    config.write_text(
        "[sandbox.backends.bwrap]\nextra_args = " + extra.replace("HOME", str(host.home)) + "\n"
    )
    victim = host.outside / "victim.txt"
    r = host.corral(
        "run", "--config", str(config), "--", "sh", "-c",
        f"cat {q(host.home / '.ssh' / 'id_rsa')}; echo changed > {q(victim)}",
    )  # fmt: skip
    assert r.returncode == 125, (r.returncode, r.stdout, r.stderr)
    assert "sandbox.backends.bwrap.extra_args (config file)" in r.stderr, r.stderr
    assert "is not accepted" in r.stderr
    assert victim.read_text() == "original\n"
    assert host.SECRET_WORD not in r.stdout + r.stderr


def test_narrowing_extra_args_still_work(host) -> None:
    config = host.base / "extra.toml"
    config.write_text('[sandbox.backends.bwrap]\nextra_args = ["--hostname", "corral-box"]\n')
    r = host.corral("run", "--config", str(config), "--", "cat", "/proc/sys/kernel/hostname")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "corral-box"


@pytest.mark.sandbox
def test_corrals_own_config_through_a_config_directory_linked_into_the_workspace(
    host: Host,
) -> None:
    """r7b F9: with ~/.config a link into the workspace (stow's default) and XDG_CONFIG_HOME
    unset, a sandboxed command wrote corral's own config.toml: sandbox off for the next call."""
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        del host.env[name]
    config = host.home / ".config"
    shutil.rmtree(config)
    (host.ws / "config").mkdir()
    os.symlink(host.ws / "config", config)
    run(
        host,
        "mkdir -p config/corral\n"
        "printf '[sandbox]\\nenabled = false\\n' > config/corral/config.toml\n",
    )
    assert not (host.ws / "config" / "corral" / "config.toml").exists()
