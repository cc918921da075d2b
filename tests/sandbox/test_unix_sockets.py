"""Host unix sockets the sandbox can see are not connectable (issue 7, item 7).

A read-only mount does not stop connect(2): before, a no-network sandbox reached any host
service whose socket it could see (Colima, Lima and Rancher Docker sockets, 1Password and
Bitwarden ssh agents, the editor's server socket under $TMPDIR), and in network mode a datagram
socketpair plus sendto() reached host datagram sockets. Listeners live in the layout (visible,
read-only, outside /tmp and $HOME, as /var/tmp or a $TMPDIR elsewhere would be) and are checked
after corral exits.
"""

from __future__ import annotations

import contextlib
import os
import socket

import pytest

from .sandbox_support import DONE, SANDBOXED, WRITABLE

pytestmark = pytest.mark.sandbox

PYTHON = "/usr/bin/python3"
MESSAGE = b"hello from the sandbox"

CLIENT = r"""
import socket, sys
kind, target = sys.argv[1], sys.argv[2]
msg = b"hello from the sandbox"
try:
    if kind == "stream":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(target)
        s.sendall(msg)
    elif kind == "dgram":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.sendto(msg, target)
    elif kind == "pair-dgram":  # socketpair, then an address on sendto
        s, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.sendto(msg, target)
    elif kind == "pair-seqpacket":
        s, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.sendto(msg, target)
    elif kind == "pair-stream":
        s, _ = socket.socketpair()
        s.sendto(msg, target)
    print("SENT", kind)
except OSError as e:
    print("refused", kind, e)
print("CORRAL-SCRIPT-DONE")
"""


@contextlib.contextmanager
def _listener(path: str, kind: int):
    sock = socket.socket(socket.AF_UNIX, kind)
    try:
        sock.bind(path)
        os.chmod(path, 0o777)  # connectable by the test user too (CORRAL_TEST_USER)
        if kind == socket.SOCK_STREAM:
            sock.listen(8)
        sock.setblocking(False)
        yield sock
    finally:
        sock.close()


def _received(sock: socket.socket, kind: int) -> bytes | None:
    try:
        if kind == socket.SOCK_DGRAM:
            return sock.recv(100)
        conn, _ = sock.accept()
    except BlockingIOError:
        return None
    with conn:
        conn.settimeout(2)
        return conn.recv(100)


def _run(host, mode: str, kind: str, target: str, *flags: str):
    return host.corral(
        "run", "--mode", mode, *flags, "--", PYTHON, "-c", CLIENT, kind, target
    )  # fmt: skip


@pytest.mark.parametrize("mode", SANDBOXED)
@pytest.mark.parametrize(
    ("client", "kind"),
    [
        ("stream", socket.SOCK_STREAM),
        ("dgram", socket.SOCK_DGRAM),
        ("pair-dgram", socket.SOCK_DGRAM),
        ("pair-seqpacket", socket.SOCK_DGRAM),
        ("pair-stream", socket.SOCK_DGRAM),
    ],
)
def test_host_unix_sockets_receive_nothing(host, mode: str, client: str, kind: int) -> None:
    path = str(host.base / "svc.sock")
    with _listener(path, kind) as srv:
        r = _run(host, mode, client, path)
        assert DONE in r.stdout, r.stdout + r.stderr
        assert "running UNSANDBOXED" not in r.stderr
        assert _received(srv, kind) is None, r.stdout


@pytest.mark.parametrize(("client", "kind"), [("stream", socket.SOCK_STREAM),
                                              ("pair-dgram", socket.SOCK_DGRAM)])  # fmt: skip
def test_the_listeners_do_receive_without_a_sandbox(host, client: str, kind: int) -> None:
    """The control: the same client, unsandboxed, reaches the same listeners."""
    path = str(host.base / "svc.sock")
    with _listener(path, kind) as srv:
        r = _run(host, "off", client, path)
        assert _received(srv, kind) == MESSAGE, r.stdout + r.stderr


def test_everyday_ipc_still_works(host) -> None:
    code = (
        "import multiprocessing as m, asyncio, subprocess\n"
        "a, b = m.Pipe(); a.send('pipe'); print(b.recv())\n"
        "q = m.get_context('fork').Queue(); q.put('queue'); print(q.get(timeout=5))\n"
        "async def main():\n"
        "    p = await asyncio.create_subprocess_exec('echo', 'asyncio', stdout=-1)\n"
        "    print((await p.communicate())[0].decode().strip())\n"
        "asyncio.run(main())\n"
    )
    r = host.corral("run", "--", PYTHON, "-c", code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["pipe", "queue", "asyncio"]


@pytest.mark.parametrize("mode", WRITABLE)
def test_unix_sockets_setting_allows_them_only_without_network(host, mode: str) -> None:
    """A tool that listens on its own socket (gpg-agent, multiprocessing.Manager) needs
    sandbox.policy.unix_sockets; with the network on they stay refused."""
    config = host.base / "unix.toml"
    config.write_text("[sandbox.policy]\nunix_sockets = true\n")
    code = (
        "import multiprocessing.managers as mm\n"
        "mgr = mm.SyncManager(); mgr.start(); d = mgr.dict(); d['k'] = 'manager'; print(d['k'])\n"
        "mgr.shutdown()\n"
    )
    r = host.corral("run", "--mode", mode, "--config", str(config), "--", PYTHON, "-c", code)
    if mode == "workspace-write":
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "manager"
    else:
        assert r.returncode != 0
        assert "Operation not permitted" in r.stderr or "PermissionError" in r.stderr


NVIM_CLIENT = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(2)
try:
    s.connect(sys.argv[1])
    s.sendall(b"from the sandbox")
    print("CONNECTED")
except OSError as e:
    print("refused", e)
print("CORRAL-SCRIPT-DONE")
"""


def test_the_editors_socket_is_hidden_wherever_it_is(host) -> None:  # type: ignore[no-untyped-def]
    """r30b NVIMSOCK: with unix_sockets on and a workspace that showed the host's /tmp,
    a command connected to the editor's own socket ($NVIM, /tmp/nvim.USER/...) and had it run
    Lua on the host. The directory of each host socket the environment names is hidden;
    a workspace at /tmp itself is refused with unix_sockets on."""
    import socket as sockets

    from .conftest import give_to_test_user

    directory = host.base / "nvim.user" / "abc"
    directory.mkdir(parents=True)
    path = directory / "nvim.123.0"
    listener = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    give_to_test_user(host.base)
    path.chmod(0o777)
    host.env["NVIM"] = str(path)
    config = host.base / "sockets.toml"
    config.write_text("[sandbox.policy]\nunix_sockets = true\n")
    try:
        result = host.corral(
            "run", "--config", str(config), "--", "python3", "-c", NVIM_CLIENT, str(path)
        )
        assert "CORRAL-SCRIPT-DONE" in result.stdout, result.stdout + result.stderr
        assert "CONNECTED" not in result.stdout
        listener.setblocking(False)
        try:
            listener.accept()
            raise AssertionError("the editor's socket took a connection from the sandbox")
        except BlockingIOError:
            pass
        at_tmp = host.corral(
            "run", "--config", str(config), "--mode", "read-only", "--cwd", "/tmp", "--", "true"
        )
        assert at_tmp.returncode != 0 and "a workspace at /tmp" in at_tmp.stderr
    finally:
        listener.close()
