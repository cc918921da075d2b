"""What a second outside review got past the change-set check (filesystem findings F1-F8).

Each test runs the attack inside real bwrap with change sets on (the default), then looks at
the host: what was held, and whether the host's next ordinary action (git status, a prompt
with direnv) would have run what the sandbox wrote.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

import pytest

from .sandbox_support import DONE

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Host

pytestmark = pytest.mark.sandbox


def run(host: Host, body: str) -> str:
    done = host.sh(host.vars() + '\ncd "$WS"\n' + body)
    assert DONE in done.stdout, done.stdout + done.stderr
    return done.stderr


def fsmonitor_config(canary: str) -> str:
    lines = ["[core]", "repositoryformatversion = 0", "worktree = ..",
             f'fsmonitor = \\"touch {canary}; false\\"']  # fmt: skip
    return "printf '%s\\n' " + " ".join(f'"{line}"' for line in lines)


@pytest.mark.parametrize(
    "body",
    [
        # F1: objects and refs as links to the workspace's own repository
        "mkdir src && echo 'ref: refs/heads/main' > src/HEAD && "
        "ln -s ../.git/objects src/objects && ln -s ../.git/refs src/refs && {config} > src/config",
        # F1: a commondir standing for objects and refs
        "mkdir src && echo 'ref: refs/heads/main' > src/HEAD && echo ../.git > src/commondir && "
        "{config} > src/config",
    ],
    ids=["linked-objects-and-refs", "commondir"],
)
def test_a_directory_made_a_repository_by_links_is_held(host: Host, body: str) -> None:
    canary = host.base / "canary-repository"
    held = run(host, body.format(config=fsmonitor_config(str(canary))))
    assert "held" in held and "repository" in held, held
    if (host.ws / "src").is_dir():
        host.git("status", cwd=host.ws / "src", check=False)
    assert not canary.exists(), "host git ran the sandbox's fsmonitor"
    assert not (host.ws / "src" / "HEAD").exists()


def test_a_repository_assembled_over_two_runs_is_held(host: Host) -> None:
    canary = host.base / "canary-two-runs"
    first = run(host, "mkdir -p lib/refs/heads && echo x > lib/refs/heads/keep")
    assert "held" not in first, first
    assert (host.ws / "lib" / "refs").is_dir()
    second = run(
        host,
        "echo 'ref: refs/heads/main' > lib/HEAD && mkdir lib/objects && "
        f"{fsmonitor_config(str(canary))} > lib/config",
    )
    assert "held" in second, second
    host.git("status", cwd=host.ws / "lib", check=False)
    assert not canary.exists(), "host git ran the sandbox's fsmonitor"
    assert not (host.ws / "lib" / "HEAD").exists()


def test_a_link_cannot_move_a_protected_path_whose_directory_is_missing(host: Host) -> None:
    # F3: lefthook is installed, so .config/lefthook.yml is protected; .config does not exist.
    hook = host.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n# installed by lefthook\nlefthook run pre-commit\n")
    hook.chmod(0o755)
    held = run(host, "mkdir cfg && echo 'pre-commit: {}' > cfg/lefthook.yml && ln -s cfg .config")
    assert "held" in held and ".config" in held, held
    assert not (host.ws / ".config").is_symlink()


@pytest.mark.parametrize(
    "target", ["//{home}/.ssh", "/proc/self/root{home}/.ssh", "/proc/1/root{home}"]
)
def test_links_spelled_around_the_hidden_areas_are_held(host: Host, target: str) -> None:
    # F2: "//x" and /proc/self/root/x are /x on the host; the check compared strings.
    held = run(host, f"ln -s {target.format(home=host.home)} keys")
    assert "held" in held, held
    assert not os.path.lexists(host.ws / "keys")


def test_what_the_envrc_sources_is_protected_like_it(host: Host) -> None:
    # F5: direnv runs .envrc at the next prompt, and what it sources, loads or puts on PATH.
    (host.ws / ".envrc").write_text(
        "source_env_if_exists .envrc.local\ndotenv\nPATH_add bin\nuse flake\n"
    )
    held = run(
        host,
        "echo 'touch /tmp/x' > .envrc.local; echo 'PROMPT_COMMAND=x' > .env; "
        "mkdir -p bin && printf '#!/bin/sh\\n' > bin/ls; echo '{}' > flake.nix; echo ok > fine.txt",
    )
    for name in (".envrc.local", ".env", "bin", "flake.nix"):
        assert not os.path.lexists(host.ws / name), f"{name} reached the host"
        assert name in held
    assert not (host.ws / "fine.txt").exists()  # `use flake`: all of it held (round 23)


def test_no_write_for_others_reaches_the_host(host: Host) -> None:
    # F6: chmod 777 .git would let any local user replace the hooks.
    git_mode = stat.S_IMODE((host.ws / ".git").stat().st_mode)
    run(host, "chmod 777 .git && echo x > shared.txt && chmod 666 shared.txt && mkdir d && "
        "chmod 777 d")  # fmt: skip
    assert stat.S_IMODE((host.ws / ".git").stat().st_mode) == git_mode
    assert stat.S_IMODE((host.ws / "shared.txt").stat().st_mode) & 0o002 == 0
    assert stat.S_IMODE((host.ws / "d").stat().st_mode) & 0o002 == 0


def test_file_names_cannot_forge_corrals_messages(host: Host) -> None:
    # F7: a held name with a newline printed a line of its own.
    held = run(host, "d=\"$(printf 'x\\ncorral: all changes applied')\"; mkdir \"$d\"; "
               "echo > \"$d/.envrc\"")  # fmt: skip
    assert "x\\x0acorral: all changes applied" in held, held
    assert not any(line.startswith("corral: all changes") for line in held.splitlines())


@pytest.mark.skipif(os.getuid() != 0, reason="setting file capabilities needs root")
def test_file_capabilities_do_not_reach_the_host(tmp_path: Path) -> None:
    # F8: as root with allow_privileged, setcap inside; apply stripped setuid but kept this.
    import struct

    from corral.changes import journal as journals
    from corral.changes.apply import apply
    from corral.changes.scan import Entry

    upper, root = tmp_path / "upper", tmp_path / "root"
    upper.mkdir()
    root.mkdir()
    tool = upper / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    # struct vfs_cap_data, revision 2: effective, CAP_SETUID (7) permitted
    os.setxattr(tool, "security.capability", struct.pack("<IIIII", 0x02000001, 1 << 7, 0, 0, 0))
    entry = Entry(
        root=str(root), rel="tool", source=str(tool), kind="file", mode=0o755, size=10,
        nlink=1, opaque=False, target="",
    )  # fmt: skip
    journal = journals.Journal.__new__(journals.Journal)
    journal.record = lambda **_: None  # type: ignore[method-assign]
    apply([entry], journal)
    assert (root / "tool").read_text() == "#!/bin/sh\n"
    assert "security.capability" not in os.listxattr(root / "tool")
