"""Secrets must not reach a sandboxed process: files, spellings, symlinks, environment, fds."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from .sandbox_support import DIRECT, DONE, SANDBOXED, WRITABLE, q, run

if TYPE_CHECKING:
    from .conftest import Host

pytestmark = pytest.mark.sandbox

READS = r"""
echo "== direct"
cat "$H/.ssh/id_rsa" "$H/.aws/credentials" "$H/.netrc" "$H/.config/gh/hosts.yml"
echo "== listing"
ls -la "$H/.ssh" "$H/.aws" "$H/.config/gh"
echo "== spellings"
cat "/proc/self/root$H/.ssh/id_rsa"
cat "/proc/1/root$H/.ssh/id_rsa"
cat "/proc/self/cwd/../../home/user/.ssh/id_rsa"
cat "/$H//.ssh//id_rsa"
cat "$H/./.ssh/./id_rsa"
cat "$H/.ssh/../.ssh/id_rsa"
cat "$WS/../../home/user/.ssh/id_rsa"
cat ~/.ssh/id_rsa ~/.netrc
echo "== planted symlinks"
cat "$WS/key-link" "$WS/ssh-dir-link/id_rsa" "$WS/home-link/.aws/credentials" "$WS/proc-link"
echo "== links made inside"
ln -s "$H/.ssh/id_rsa" "$WS/inside-link" && cat "$WS/inside-link"
ln -s "$H" /tmp/home-link && cat /tmp/home-link/.netrc
ln "$H/.ssh/id_rsa" /tmp/hard-id 2>&1 && cat /tmp/hard-id
echo "== copies"
cp -r "$H/.ssh" "$WS/stolen-ssh"
cp "$H/.config/gh/hosts.yml" "$WS/stolen-gh.yml"
tar -cf - -C "$H" . | tar -tvf - | head -n 50
echo "== searches"
grep -rs "CORRAL""SECRET" "$H" /proc/self/root"$H" "$BASE"
find "$H" -name 'id_*' -exec cat {} +
echo "== host files"
cat /etc/shadow /etc/gshadow
"""


def _plant_links(host) -> None:
    ws, h = host.ws, host.home
    os.symlink(h / ".ssh" / "id_rsa", ws / "key-link")
    os.symlink(h / ".ssh", ws / "ssh-dir-link")
    os.symlink(h, ws / "home-link")
    os.symlink(f"/proc/self/root{h}/.netrc", ws / "proc-link")


def _shadow_first_line() -> str:
    try:
        with open("/etc/shadow") as f:
            return f.readline().strip()
    except OSError:
        return ""


@pytest.mark.parametrize("mode", SANDBOXED)
def test_credential_files_cannot_be_read(host, mode):
    _plant_links(host)
    r = host.sh(f'{host.vars()}\ncd "$WS"\n{READS}', mode)
    assert DONE in r.stdout, r.stdout + r.stderr
    assert "== host files" in r.stdout
    output = r.stdout + r.stderr
    leaked = [name for name, marker in host.secrets.items() if marker in output]
    assert leaked == [], output
    assert host.SECRET_WORD not in output, output
    shadow = _shadow_first_line()
    assert not shadow or shadow not in output
    # Whatever was copied into the workspace holds no secret either.
    for path in host.ws.rglob("*"):
        if path.is_file() and not path.is_symlink() and ".git" not in path.parts:
            assert host.SECRET_WORD not in path.read_text(errors="replace"), path


@pytest.mark.parametrize("mode", SANDBOXED)
def test_the_rest_of_home_stays_readable(host, mode):
    """The masks are narrow: rc files and editor config next to the credentials still read,
    so the test above fails for the right reason."""
    config = host.base / "visible.toml"
    config.write_text('[sandbox.policy]\nhome = "visible"\n')
    r = host.corral(
        "run", "--config", str(config), "--mode", mode, "--", "cat", str(host.home / ".bashrc"),
        str(host.home / ".config" / "nvim" / "init.lua"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "export EDITOR=nvim" in r.stdout
    assert "vim.opt.number" in r.stdout


@pytest.mark.parametrize("mode", SANDBOXED)
def test_environment_is_scrubbed(host, mode):
    body = r"""
echo "== env"
env
echo "== environ files"
for f in /proc/self/environ /proc/1/environ /proc/$$/environ /proc/[0-9]*/environ; do
    tr '\0' '\n' < "$f"
done
"""
    r = host.sh(body, mode)
    assert DONE in r.stdout, r.stdout + r.stderr
    out = r.stdout
    assert f"HOME={host.home}" in out  # the environment is there, only scrubbed
    assert host.SECRET_WORD not in out, out
    names = {line.partition("=")[0] for line in out.splitlines() if "=" in line}
    assert sorted(names & set(host.HOST_SERVICE_VARS)) == []
    for name in ("NVIM", "SSH_AUTH_SOCK"):
        assert host.env[name] not in out


@pytest.mark.parametrize("mode", SANDBOXED)
def test_inherited_file_descriptors_are_closed(host, mode):
    """A descriptor the caller leaks to corral (no CLOEXEC) must not reach the command."""
    secret_file = host.base / "fd-secret.txt"
    secret_file.write_text(f"{host.secrets['ssh']}-via-fd\n")
    fd = os.open(secret_file, os.O_RDONLY)
    high = 77
    try:
        os.dup2(fd, high, inheritable=True)
        body = f"""
echo "== fds"
ls /proc/self/fd
echo "== end fds"
bash -c "cat <&{high}" && echo "READ-FD-OK"
cat /proc/self/fd/{high} && echo "READ-PROC-FD-OK"
python3 -c 'import os; print(os.read({high}, 100))' && echo "READ-PY-OK"
"""
        r = host.sh(body, mode, pass_fds=(high,))
    finally:
        os.close(fd)
        os.close(high)
    assert DONE in r.stdout, r.stdout + r.stderr
    listing = r.stdout.split("== fds\n", 1)[1].split("== end fds", 1)[0].split()
    extra = sorted(set(listing) - {"0", "1", "2"})
    assert len(extra) == 1 and extra != [str(high)], listing  # only ls's own directory fd
    assert "READ-" not in r.stdout, r.stdout
    assert host.SECRET_WORD not in r.stdout + r.stderr


@pytest.mark.parametrize("mode", WRITABLE)
def test_deny_read_hides_extra_paths(host, mode):
    private_dir = host.base / "private-data"
    private_dir.mkdir()
    (private_dir / "data.txt").write_text(f"{host.secrets['db']}-dir\n")
    ws_secret = host.ws / "service-account.json"
    ws_secret.write_text(f"{host.secrets['gh']}-ws\n")
    body = f"""
cat {q(private_dir / "data.txt")}
ls -la {q(private_dir)}
cat {q(ws_secret)}
cp {q(ws_secret)} copied.json
printf overwritten > {q(ws_secret)}
grep -rs "CORRAL""SECRET" {q(private_dir)} {q(host.ws)}
"""
    r = host.sh(
        body, mode, "--deny-read", str(private_dir), "--deny-read", str(ws_secret), cwd=host.ws
    )
    assert DONE in r.stdout, r.stdout + r.stderr
    assert host.SECRET_WORD not in r.stdout + r.stderr, r.stdout
    # The host's files are intact, and the masks left nothing behind.
    assert ws_secret.read_text() == f"{host.secrets['gh']}-ws\n"
    assert sorted(p.name for p in private_dir.iterdir()) == ["data.txt"]
    # Without --deny-read the same file reads: the flag made the difference.
    plain = host.corral("run", "--mode", mode, "--", "cat", str(private_dir / "data.txt"))
    assert host.secrets["db"] in plain.stdout, plain.stderr


def test_host_tmp_is_private_when_the_workspace_is_under_tmp(host, tmp_path):
    """pytest's tmp_path is under /tmp: the workspace there is bound back in, its siblings
    (other users' sockets and files in /tmp) are not."""
    ws = tmp_path / "ws"
    ws.mkdir()
    sibling = tmp_path / "sibling-secret.txt"
    sibling.write_text(f"{host.secrets['netrc']}-tmp\n")
    body = f"""
cat {q(sibling)}
ls {q(tmp_path)}
printf inside > {q(ws / "made-inside.txt")}
printf x > {q(tmp_path / "made-outside.txt")}
"""
    r = host.sh(body, "workspace-write", cwd=ws)
    assert DONE in r.stdout, r.stdout + r.stderr
    assert host.SECRET_WORD not in r.stdout + r.stderr
    assert (ws / "made-inside.txt").read_text() == "inside"
    assert not (tmp_path / "made-outside.txt").exists()


def test_a_denied_name_that_is_a_link_hides_its_target_and_runs_go_on(host: Host) -> None:
    """r7b F6, and what its fix met: `.env -> config/prod.env` is hidden where it leads
    (bwrap cannot mount over a link with an absolute target: a planted `key.pem` link to a file
    failed every later run)."""
    (host.ws / "config").mkdir()
    (host.ws / "config" / "prod.env").write_text("API_KEY=CANARY-prodenv\n")
    os.symlink("config/prod.env", host.ws / ".env")
    run(host, 'echo readme > README; ln -s "$WS/README" key.pem\n')
    assert (host.ws / "key.pem").is_symlink()
    out = host.sh("cat config/prod.env .env; echo after")
    assert "after" in out.stdout, out.stdout + out.stderr
    assert "CANARY-prodenv" not in out.stdout + out.stderr


def test_a_directory_above_a_hidden_file_cannot_be_moved_where_no_search_looks(
    host: Host,
) -> None:
    """r46b MOVEMASK: with direct writes `mv backend node_modules/` moved `backend/.env`
    (hidden in the run by a mount at its path) where the next run's search for denied names
    does not look (node_modules, deeper than four levels), and that run read it. The
    directories above a hidden path in a writable root are pinned like those above a
    protected one: the move fails and the secret stays where the search finds it."""
    (host.ws / "backend").mkdir()
    (host.ws / "backend" / ".env").write_text("DB_PASSWORD=CANARY-movemask\n")
    run(host, "mkdir -p node_modules/a/b/c/d; mv backend node_modules/ 2>&1 || true\n"
              "mv backend node_modules/a/b/c/d/ 2>&1 || true\n", *DIRECT)  # fmt: skip
    assert (host.ws / "backend" / ".env").exists()
    out = host.sh("cat backend/.env node_modules/backend/.env node_modules/a/b/c/d/backend/.env;"
                  " echo after", None, *DIRECT)  # fmt: skip
    assert "after" in out.stdout, out.stdout + out.stderr
    assert "CANARY-movemask" not in out.stdout + out.stderr
