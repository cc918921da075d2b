"""Files inside the workspace that the host runs or obeys later must stay as they were.

Every attack plants a payload that touches PWNED when executed. Inside the sandbox PWNED is not
writable, so the payload can only ever succeed on the host: after the sandbox, these tests run
the git commands a user would (status, commit, checkout) and check that PWNED never appeared.
"""

from __future__ import annotations

import os

import pytest

from .sandbox_support import (
    DIRECT,
    DONE,
    SANDBOXED,
    allowed,
    changes,
    q,
    script_report,
    snapshot,
)

pytestmark = pytest.mark.sandbox

RC_FILES = (".nvim.lua", ".exrc", ".envrc", ".bashrc")
BENIGN_HOOK = "#!/bin/sh\nexit 0\n"


# Shell helpers for the attacks; $EVIL is a hook script that touches $PWNED.
HELPERS = r"""
w() { printf '%s\n' "$EVIL" > "$1"; }
hook() { printf '%s\n' "$EVIL" > "$1" && chmod +x "$1"; }
append() { _target=$1; shift; printf "$@" >> "$_target"; }
replace() { printf '%s\n' "$EVIL" > "$1.new" && mv -f "$1.new" "$1"; }
py() { python3 -c "$@"; }
"""


def _prelude(host, cwd=None) -> tuple[str, str]:
    """(PWNED path, script prelude): layout variables, the payload, the helpers, `cd`."""
    pwned = host.base / "PWNED"
    evil = f"#!/bin/sh\ntouch {pwned}\n"
    prelude = (
        f"{host.vars()}\nPWNED={q(pwned)}\nEVIL=$(printf {q(evil)})\n{HELPERS}\n"
        f"cd {q(cwd or host.ws)}\n"
    )
    return str(pwned), prelude


PROTECTED_ATTACKS = r"""
attempt hook-overwrite   w .git/hooks/pre-commit
attempt hook-new         hook .git/hooks/post-commit
attempt hook-sample      cp .git/hooks/pre-commit .git/hooks/post-checkout.sample
attempt hooks-rm         rm -rf .git/hooks
attempt hooks-mv         mv .git/hooks .git/hooks-old
attempt evil-hooks-dir   mkdir -p evil-hooks
attempt evil-hooks-hook  hook evil-hooks/pre-commit
attempt hooks-swap       mv -T evil-hooks .git/hooks
attempt hooks-swap-py    py 'import os; os.makedirs("h2"); os.replace("h2", ".git/hooks")'
attempt config-append    append .git/config '[core]\n\thooksPath = %s\n' "$WS/evil-hooks"
attempt config-git       git config core.hooksPath "$WS/evil-hooks"
attempt config-fsmonitor git config core.fsmonitor "touch $PWNED"
attempt config-copy      cp .git/config evil-config
attempt config-edit      append evil-config '[core]\n\tfsmonitor = touch %s\n' "$PWNED"
attempt config-replace   mv -f evil-config .git/config
attempt config-rm        rm -f .git/config
for f in .nvim.lua .exrc .envrc .bashrc; do
    attempt "$f-overwrite" w "$f"
    attempt "$f-append"    append "$f" 'os.execute("touch %s")\n' "$PWNED"
    attempt "$f-rm"        rm -f "$f"
    attempt "$f-replace"   replace "$f"
done
attempt dotgit-mv        mv .git .git-old
attempt dotgit-rename    py 'import os; os.rename(".git", ".git-old2")'
attempt dotgit-replace   sh -c 'mkdir -p fake-git/hooks && mv -T fake-git .git'
attempt dotgit-symlink   py 'import os; os.symlink("fake-git", "l"); os.replace("l", ".git")'
"""

COMMONDIR_ATTACK = r"""
attempt copy-git     cp -r .git evil-common
attempt evil-config  git --git-dir=evil-common config core.fsmonitor "touch $PWNED"
attempt evil-hook    hook evil-common/hooks/pre-commit
attempt commondir    sh -c 'echo ../evil-common > .git/commondir'
"""

MISSING_HOOKS_ATTACK = r"""
attempt hooks-mkdir   mkdir -p .git/hooks
attempt hook-commit   hook .git/hooks/pre-commit
attempt hook-checkout hook .git/hooks/post-checkout
"""

SUBMODULE_ATTACK = r"""
attempt nested-init   git init -q nested
attempt nested-file   sh -c 'printf x > nested/f && git -C nested add f'
attempt nested-commit git -C nested -c user.name=a -c user.email=a@b.invalid commit -q -m n
attempt nested-config git -C nested config core.fsmonitor "touch $PWNED"
attempt gitlink       git add nested
attempt gitmodules    git config -f .gitmodules submodule.nested.path nested
attempt gitmodules2   git config -f .gitmodules submodule.nested.url ./nested
"""

WORKTREE_ATTACKS = r"""
GITDIR=$(sed -n 's/^gitdir: //p' .git)
attempt pointer-write    sh -c 'echo "gitdir: $WT/evil-git" > .git'
attempt pointer-rm       rm -f .git
attempt pointer-new      sh -c 'echo "gitdir: $WT/evil-git" > pointer.new'
attempt pointer-replace  mv -f pointer.new .git
attempt pointer-mv       mv .git .git-old
attempt main-hook        w "$MAIN/.git/hooks/pre-commit"
attempt main-hook-new    hook "$MAIN/.git/hooks/post-checkout"
attempt main-config      git config core.fsmonitor "touch $PWNED"
attempt main-config-app  append "$MAIN/.git/config" '[core]\n\thooksPath = %s\n' /x
attempt wt-config append "$GITDIR/config.worktree" '[core]\n\tfsmonitor = touch %s\n' "$PWNED"
attempt wt-commondir     sh -c 'echo "$WT/evil-git" > "$GITDIR/commondir"'
attempt wt-gitdir        sh -c 'echo /nonexistent/.git > "$GITDIR/gitdir"'
"""


def _use_repo_on_host(host, cwd=None) -> None:
    """What a user does after the sandbox: each of these runs hooks or reads config."""
    host.git("status", "--porcelain", cwd=cwd, check=False)
    host.git("diff", "--stat", cwd=cwd, check=False)
    host.git("commit", "-q", "--allow-empty", "-m", "after the sandbox", cwd=cwd, check=False)
    host.git("checkout", "-q", "-b", "after-sandbox", cwd=cwd, check=False)


def _protected_state(host) -> dict[str, tuple[object, ...]]:
    ws = host.ws
    state = {f"hooks/{k}": v for k, v in snapshot(ws / ".git" / "hooks").items()}
    for name in (".git/config", *RC_FILES):
        st = os.lstat(ws / name)
        state[name] = (st.st_ino, st.st_mode, (ws / name).read_bytes())
    st = os.lstat(ws / ".git")
    state[".git"] = (st.st_ino, st.st_mode)
    return state


@pytest.mark.parametrize("mode", SANDBOXED)
def test_hooks_config_and_rc_files_stay_untouched(host, mode):
    ws = host.ws
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(BENIGN_HOOK)
    hook.chmod(0o755)
    for name in RC_FILES:
        (ws / name).write_text(f"-- {name}: trusted by the user\n")
    before = _protected_state(host)
    config_before = host.git("config", "--list", "--local")
    pwned, prelude = _prelude(host)

    r = host.sh(prelude + PROTECTED_ATTACKS, mode)
    assert DONE in r.stdout, r.stdout + r.stderr
    report = f"\nattempts the sandbox allowed: {allowed(r.stdout)}\nstderr: {r.stderr}"

    assert changes(before, _protected_state(host)) == [], report
    assert host.git("config", "--list", "--local") == config_before, report
    assert host.git("rev-parse", "--git-dir", "--git-common-dir") == ".git\n.git\n", report
    _use_repo_on_host(host)
    assert not os.path.lexists(pwned), "host git ran a payload planted by the sandbox" + report


@pytest.mark.parametrize("mode", SANDBOXED)
def test_git_dir_cannot_be_redirected_with_commondir(host, mode):
    """`.git/commondir` makes git take config and hooks from another directory: a sandbox that
    may write `.git/` (objects, refs, index) must not be able to create it."""
    pwned, prelude = _prelude(host)
    r = host.sh(prelude + COMMONDIR_ATTACK, mode)
    assert DONE in r.stdout, r.stdout + r.stderr
    report = f"\nattempts the sandbox allowed: {allowed(r.stdout)}\nstderr: {r.stderr}"
    common = host.git("rev-parse", "--git-common-dir").strip()
    _use_repo_on_host(host)
    assert not os.path.lexists(pwned), "host git ran a payload planted by the sandbox" + report
    assert common == ".git", report


@pytest.mark.parametrize("mode", SANDBOXED)
def test_missing_hooks_directory_cannot_be_created(host, mode):
    """A repository without .git/hooks (git init --template=, some clone tools) must not get
    hooks from the sandbox: the host's git would run whatever it finds there. The command may
    make them in its own layer; the change-set check holds them."""
    hooks = host.ws / ".git" / "hooks"
    for entry in hooks.iterdir():
        entry.unlink()
    hooks.rmdir()
    pwned, prelude = _prelude(host)
    r = host.sh(prelude + MISSING_HOOKS_ATTACK, mode)
    assert DONE in r.stdout, r.stdout + r.stderr
    report = f"\nattempts the sandbox allowed: {allowed(r.stdout)}\nstderr: {r.stderr}"
    planted = sorted(p.name for p in hooks.iterdir()) if hooks.exists() else []
    _use_repo_on_host(host)
    assert not os.path.lexists(pwned), "host git ran a payload planted by the sandbox" + report
    assert planted == [], report
    if mode != "read-only":
        assert "held" in r.stderr and ".git/hooks" in r.stderr, report


@pytest.mark.parametrize(
    "mode",
    SANDBOXED,
)
def test_nested_repository_config_does_not_run_on_host_git_status(host, mode):
    """A submodule made inside the sandbox has its own, writable .git/config: host `git status`
    in the workspace recurses into it and runs its core.fsmonitor."""
    pwned, prelude = _prelude(host)
    r = host.sh(prelude + SUBMODULE_ATTACK, mode)
    assert DONE in r.stdout, r.stdout + r.stderr
    report = f"\nattempts the sandbox allowed: {allowed(r.stdout)}\nstderr: {r.stderr}"
    host.git("status", "--porcelain", check=False)
    assert not os.path.lexists(pwned), "host git status ran a sandbox-planted payload" + report


@pytest.mark.parametrize("mode", SANDBOXED)
def test_worktree_pointer_and_main_repository_stay_untouched(host, mode):
    """Workspace = a git worktree, whose `.git` is a file naming the main repository's git dir."""
    main = host.work / "main-repo"
    wt = host.work / "app-wt"
    host.git("init", "-q", "-b", "main", str(main), cwd=host.base)
    for key, value in (("user.name", "T"), ("user.email", "t@example.invalid")):
        host.git("config", key, value, cwd=main)
    (main / "f.txt").write_text("main\n")
    host.git("add", "f.txt", cwd=main)
    host.git("commit", "-q", "-m", "main", cwd=main)
    hook = main / ".git" / "hooks" / "pre-commit"
    hook.write_text(BENIGN_HOOK)
    hook.chmod(0o755)
    host.git("worktree", "add", "-q", "-b", "wt", str(wt), cwd=main)
    pointer = (wt / ".git").read_text()
    assert pointer.startswith("gitdir: ")
    before = snapshot(main)
    pwned, prelude = _prelude(host, cwd=wt)
    prelude += f"MAIN={q(main)}\nWT={q(wt)}\n"
    r = host.sh(prelude + WORKTREE_ATTACKS, mode, cwd=wt)
    assert DONE in r.stdout, r.stdout + r.stderr
    report = f"\nattempts the sandbox allowed: {allowed(r.stdout)}\nstderr: {r.stderr}"
    assert (wt / ".git").is_file(), report
    assert (wt / ".git").read_text() == pointer, report
    assert changes(before, snapshot(main)) == [], report
    _use_repo_on_host(host, cwd=wt)
    assert not os.path.lexists(pwned), "host git ran a payload planted by the sandbox" + report


@pytest.mark.parametrize("mode", SANDBOXED)
def test_sandbox_leaves_no_placeholder_files(host, mode):
    """Mount points for masks and protected files must not appear in the host's `git status`."""
    ws = host.ws
    (ws / "secret-dir").mkdir()
    (ws / "secret-dir" / "s.txt").write_text("s\n")
    (ws / "secret.txt").write_text("s\n")
    host.git("add", "-A")
    host.git("commit", "-q", "-m", "secrets")
    status_before = host.git("status", "--ignored", "--porcelain", "--untracked-files=all")
    names_before = sorted(snapshot(ws, [ws / ".git"]))
    deny = [
        "--deny-read",
        str(ws / "secret-dir"),
        "--deny-read",
        str(ws / "secret.txt"),
        "--deny-read",
        str(ws / "not-there.txt"),
        "--deny-read",
        str(ws / "not-there-dir" / "x"),
    ]
    r = host.sh(f"cd {q(ws)}\ngit status --porcelain >/dev/null\nls -a", mode, *deny)
    assert DONE in r.stdout, r.stdout + r.stderr
    status_after = host.git("status", "--ignored", "--porcelain", "--untracked-files=all")
    assert status_after == status_before
    assert sorted(snapshot(ws, [ws / ".git"])) == names_before


# A directory above a protected path cannot be renamed away and rebuilt (direct writes).

RENAME_CONFIG_ATTACK = r"""
attempt rebuild sh -c 'mv "$H/.config" "$H/.config-moved" &&
    mkdir -p "$H/.config/nvim" && echo payload > "$H/.config/nvim/init.lua"'
attempt rebuild-nvim sh -c 'mv "$H/.config/nvim" "$H/.config/nvim-moved" &&
    mkdir -p "$H/.config/nvim" && echo payload > "$H/.config/nvim/init.lua"'
"""


def test_home_workspace_cannot_rename_config_dir_and_rebuild_nvim(host):
    home = host.home
    init = home / ".config" / "nvim" / "init.lua"
    before = init.read_bytes()
    _, prelude = _prelude(host, cwd=home)
    body = prelude + RENAME_CONFIG_ATTACK
    r = host.sh(body, None, *DIRECT, "--cwd", str(home), cwd=home)
    report = script_report(r)
    assert allowed(r.stdout) == [], report
    assert init.read_bytes() == before, report
    assert not os.path.lexists(home / ".config-moved"), report
    assert not os.path.lexists(home / ".config" / "nvim-moved"), report


def test_existing_submodule_git_dir_cannot_be_renamed_and_rebuilt(host):
    src = host.work / "sm-src"
    host.git("init", "-q", "-b", "main", str(src), cwd=host.base)
    (src / "f.txt").write_text("submodule\n")
    host.git("add", "f.txt", cwd=src)
    host.git("-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "s",
             cwd=src)  # fmt: skip
    host.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(src), "sm")
    host.git("commit", "-q", "-m", "add sm")
    modules = host.ws / ".git" / "modules"
    assert (modules / "sm" / "HEAD").is_file()

    pwned, prelude = _prelude(host)
    body = (
        prelude
        + r"""
attempt sm-mv mv .git/modules/sm .git/modules/sm-old
attempt sm-rebuild sh -c 'cp -r .git/modules/sm-old .git/modules/sm &&
    git --git-dir=.git/modules/sm config core.fsmonitor "touch $PWNED"'
attempt modules-mv mv .git/modules .git/modules-old
attempt modules-rebuild sh -c 'mkdir -p .git/modules && cp -r .git/modules-old/sm .git/modules/sm &&
    git --git-dir=.git/modules/sm config core.fsmonitor "touch $PWNED"'
"""
    )
    r = host.sh(body, None, *DIRECT)
    report = script_report(r)
    assert "sm-mv" not in allowed(r.stdout), report
    assert "modules-mv" not in allowed(r.stdout), report
    assert not os.path.lexists(modules / "sm-old"), report
    assert not os.path.lexists(host.ws / ".git" / "modules-old"), report
    host.git("status", "--porcelain", check=False)
    host.git("status", "--porcelain", cwd=host.ws / "sm", check=False)
    assert not os.path.lexists(pwned), "host git status ran a planted core.fsmonitor" + report


def test_separate_git_dir_cannot_be_renamed_and_rebuilt(host):
    ws = host.work / "sep"
    gitdata = ws / ".gitdata"
    host.git("init", "-q", "-b", "main", f"--separate-git-dir={gitdata}", str(ws), cwd=host.base)
    for key, value in (("user.name", "T"), ("user.email", "t@example.invalid")):
        host.git("config", key, value, cwd=ws)
    (ws / "f.txt").write_text("f\n")
    host.git("add", "f.txt", cwd=ws)
    host.git("commit", "-q", "-m", "f", cwd=ws)
    assert (ws / ".git").is_file()

    pwned, prelude = _prelude(host, cwd=ws)
    body = (
        prelude
        + r"""
attempt gitdata-mv mv .gitdata .gitdata-old
attempt gitdata-rebuild sh -c 'cp -r .gitdata-old .gitdata &&
    git --git-dir=.gitdata config core.fsmonitor "touch $PWNED"'
attempt gitdata-swap sh -c 'cp -r .gitdata evil-git &&
    git --git-dir=evil-git config core.fsmonitor "touch $PWNED" && mv -T evil-git .gitdata'
"""
    )
    r = host.sh(body, None, *DIRECT, cwd=ws)
    report = script_report(r)
    assert "gitdata-mv" not in allowed(r.stdout), report
    assert "gitdata-swap" not in allowed(r.stdout), report
    assert not os.path.lexists(ws / ".gitdata-old"), report
    assert host.git("rev-parse", "--git-dir", cwd=ws).strip() == str(gitdata), report
    host.git("status", "--porcelain", cwd=ws, check=False)
    host.git("commit", "-q", "--allow-empty", "-m", "after", cwd=ws, check=False)
    assert not os.path.lexists(pwned), "host git ran a planted core.fsmonitor" + report


# A protected path that is a symlink is put back after the run (direct writes).


def test_symlinked_hooks_dir_is_put_back(host):
    shared = host.work / "shared-hooks"
    shared.mkdir()
    hooks = host.ws / ".git" / "hooks"
    for entry in hooks.iterdir():
        entry.unlink()
    hooks.rmdir()
    hooks.symlink_to(shared)

    pwned, prelude = _prelude(host)
    body = (
        prelude
        + r"""
attempt through-link hook .git/hooks/pre-commit
attempt replace sh -c 'rm .git/hooks && mkdir .git/hooks'
attempt plant hook .git/hooks/pre-commit
"""
    )
    r = host.sh(body, None, *DIRECT)
    report = script_report(r)
    assert "through-link" not in allowed(r.stdout), report
    assert os.path.islink(hooks), report
    assert os.readlink(hooks) == str(shared), report
    assert list(shared.iterdir()) == [], report
    if "replace" in allowed(r.stdout):
        line = (
            f"corral: warning: restored the symlink {hooks} -> {shared}: changed inside the sandbox"
        )
        assert line in r.stderr.splitlines(), report
    host.git("commit", "-q", "--allow-empty", "-m", "after the sandbox", check=False)
    assert not os.path.lexists(pwned), "host git commit ran a planted hook" + report


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_symlinked_dot_git_cannot_be_replaced(host, where):
    ws = host.ws
    target = "../app.git" if where == "outside" else ".realgit"
    os.rename(ws / ".git", ws / target)
    (ws / ".git").symlink_to(target)
    assert host.git("rev-parse", "--is-inside-work-tree").strip() == "true"

    pwned, prelude = _prelude(host)
    body = (
        prelude
        + r"""
attempt copy sh -c 'mkdir evil-git && cp -r .git/. evil-git/'
attempt evil-config git --git-dir=evil-git config core.fsmonitor "touch $PWNED"
attempt replace sh -c 'rm .git && mv -T evil-git .git'
attempt config-after git config core.fsmonitor "touch $PWNED"
"""
    )
    r = host.sh(body, None, *DIRECT)
    report = script_report(r)
    assert os.path.islink(ws / ".git"), report
    assert os.readlink(ws / ".git") == target, report
    if "replace" in allowed(r.stdout):
        line = (
            f"corral: warning: restored the symlink {ws / '.git'} -> {target}: "
            "changed inside the sandbox"
        )
        assert line in r.stderr.splitlines(), report
    host.git("status", "--porcelain", check=False)
    host.git("commit", "-q", "--allow-empty", "-m", "after the sandbox", check=False)
    assert not os.path.lexists(pwned), "host git ran a planted core.fsmonitor" + report


def test_an_open_chat_file_is_read_only_with_direct_writes(host) -> None:  # type: ignore[no-untyped-def]
    """r31c UNNARROW: with direct writes nothing kept a command from rewriting its own chat
    file without the frontmatter that narrowed its sandbox (change sets held it). The
    editor names its open chats in every request; they are kept as they are."""
    import glob

    chat = host.ws / "talk [1].chat"
    chat.write_text("```lua\ncorral.opt.sandbox.policy.network = false\n```\n@You: hi\n")
    config = host.home / ".config" / "corral" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    escaped = glob.escape(str(chat))
    config.write_text(f'[sandbox]\nwrites = "direct"\n[chat]\npatterns = ["{escaped}"]\n')
    done = host.sh(
        host.vars() + '\ncd "$WS"\necho "@You: hi" > "talk [1].chat" 2>/dev/null\n'
        "echo x > other.chat; echo x > notes.txt\n"
    )
    assert DONE in done.stdout, done.stdout + done.stderr
    assert chat.read_text().startswith("```lua")
    assert (host.ws / "notes.txt").exists()


def test_a_refused_rename_onto_a_protected_file_names_that_file(host) -> None:  # type: ignore[no-untyped-def]
    """r68c SEDTEMPPATH: `sed -i` (the usual way an agent edits a file) writes a temporary
    file and renames it over the one it edits; the rename onto a read-only mount says EBUSY
    naming the temporary file only, and corral told the model "'sedXXXXXX' is kept read-only
    on purpose", a path that never was."""
    (host.ws / "eslint.config.js").write_text("export default { rules: {} }\n")
    done = host.corral("run", "--", "sed", "-i", "s/rules: {}/rules: { x: 1 }/", "eslint.config.js")
    assert "Device or resource busy" in done.stderr, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("corral: the sandbox refused")]
    assert f"{str(host.ws / 'eslint.config.js')!r} is kept read-only on purpose" in line, line
    assert "/sed" not in line.partition("to allow:")[2], line
    assert (host.ws / "eslint.config.js").read_text() == "export default { rules: {} }\n"
