"""Credential stores the first deny list missed (issue 7, item 6): hidden with a visible home,
with the private home (now the default), and inside the toolchain directories the private
home's allowlist shows (~/.cargo, ~/.gradle, ~/.m2, ~/.config/git, ~/.config/mise)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from .conftest import give_to_test_user, user_prefix
from .sandbox_support import DONE, SANDBOXED, q, script

# Each relative to $HOME, as the tools document them.
STORES = (
    ".config/git/credentials",
    ".gradle/gradle.properties",
    ".cargo/config.toml",
    ".cargo/credentials.toml",
    ".config/mise/config.toml",
    ".config/github-copilot/hosts.json",
    ".claude/.credentials.json",
    ".claude.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".config/io.datasette.llm/keys.json",
    ".pgpass",
    ".my.cnf",
    ".s3cfg",
    ".config/sops/age/keys.txt",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".local/state/nvim/shada/main.shada",
    ".local/state/nvim/swap/%w%.env.swp",  # (r46b SWAPLEAK: an open .env's swap file)
    ".yarnrc.yml",
    ".config/composer/auth.json",
    ".terraformrc",
    ".fly/config.yml",
    ".pulumi/credentials.json",
    ".kaggle/kaggle.json",
    ".cache/huggingface/token",
    ".databrickscfg",
)
# Moved by the variables the tools honour.
MOVED = {
    "CARGO_HOME": ("cargo-home", "credentials.toml"),
    "GRADLE_USER_HOME": ("gradle-home", "gradle.properties"),
    "CLAUDE_CONFIG_DIR": ("claude-dir", ".credentials.json"),
    "CODEX_HOME": ("codex-home", "auth.json"),
    "PGPASSFILE": ("pg", "pgpass"),
    "SOPS_AGE_KEY_FILE": ("age", "keys.txt"),
    "XDG_STATE_HOME": ("state", "nvim/swap/%w%.env.swp"),
}


def _plant(host) -> list[str]:
    paths = []
    for i, rel in enumerate(STORES):
        path = host.home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"token = {host.SECRET_WORD}-{i}-{host.tag}\n")
        paths.append(str(path))
    for var, (directory, name) in MOVED.items():
        base = host.base / "elsewhere" / directory
        target = base / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"token = {host.SECRET_WORD}-{var}-{host.tag}\n")
        host.env[var] = str(target if var in ("PGPASSFILE", "SOPS_AGE_KEY_FILE") else base)
        paths.append(str(target))
    return paths


@pytest.mark.parametrize("home", ["visible", "private"])
@pytest.mark.parametrize("mode", SANDBOXED)
def test_more_credential_stores_are_hidden(host, mode: str, home: str) -> None:
    paths = _plant(host)
    config = host.base / "home.toml"
    config.write_text(f'[sandbox.policy]\nhome = "{home}"\n')
    body = "".join(f"cat {q(p)} 2>/dev/null\n" for p in paths)
    r = host.sh(body, mode, "--config", str(config))
    assert DONE in r.stdout, r.stdout + r.stderr
    leaked = [line for line in r.stdout.splitlines() if host.SECRET_WORD in line]
    assert leaked == [], leaked


def test_toolchain_dirs_shown_by_the_private_home_keep_their_credentials_hidden(host) -> None:
    _plant(host)
    (host.home / ".cargo" / "registry").mkdir(parents=True)
    (host.home / ".cargo" / "registry" / "kept.txt").write_text("toolchain files stay\n")
    r = host.sh(
        f"cat {q(host.home / '.cargo' / 'registry' / 'kept.txt')}\n"
        f"cat {q(host.home / '.cargo' / 'config.toml')} "
        f"{q(host.home / '.cargo' / 'credentials.toml')} 2>/dev/null\n"
    )
    assert DONE in r.stdout, r.stdout + r.stderr
    assert "toolchain files stay" in r.stdout  # ~/.cargo is on the private home's allowlist
    assert host.SECRET_WORD not in r.stdout


def test_clones_and_cache_keys_in_shown_tool_homes_keep_their_tokens_hidden(host) -> None:
    """r46a SRCSKIP: pip's editable VCS install clones into a venv's `src/` (a pyenv
    virtualenv's, shown by the private home), keeping `https://ci:TOKEN@...` in the clone's
    .git/config; the secrets walk skipped directories named `src`. NPMCACHEKEY: npm keeps a
    git dependency's URL, token and all, as a key in its cache's index."""
    clone = host.home / ".pyenv" / "versions" / "corp" / "src" / "corplib" / ".git"
    clone.mkdir(parents=True)
    (clone / "config").write_text(
        f'[remote "origin"]\n\turl = https://ci:{host.SECRET_WORD}@git.example/c.git\n'
    )
    index = host.home / ".npm" / "_cacache" / "index-v5" / "cb" / "b9"
    index.mkdir(parents=True)
    (index / "x").write_text(f'{{"key":"pacote:git+https://ci:{host.SECRET_WORD}@g.example"}}\n')
    content = host.home / ".npm" / "_cacache" / "content-v2" / "sha512"
    content.mkdir(parents=True)
    (content / "kept").write_text("cache content stays\n")
    r = host.sh(
        f"cat {q(clone / 'config')} {q(index / 'x')} 2>/dev/null; cat {q(content / 'kept')}\n"
    )
    assert DONE in r.stdout, r.stdout + r.stderr
    assert host.SECRET_WORD not in r.stdout
    assert "cache content stays" in r.stdout


def test_a_store_created_during_a_run_is_not_readable(host) -> None:
    """Item 12: masks are fixed when the sandbox starts. With the private home (the default),
    what appears in $HOME later is not shown either: the command waits for the host to write
    ~/.aws/credentials, then tries to read it."""
    store = host.home / ".aws" / "credentials"
    store.unlink()
    store.parent.rmdir()
    go = host.ws / "go"
    body = (
        f"i=0; while [ ! -e {q(go)} ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done\n"
        f"cat {q(store)} 2>&1\n"
    )
    proc = subprocess.Popen(
        [*user_prefix(), sys.executable, "-m", "corral", "run", "--", "sh", "-c", script(body)],
        cwd=host.ws, env=host.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        time.sleep(0.5)
        store.parent.mkdir()
        store.write_text(f"aws_secret_access_key = {host.SECRET_WORD}-late-{host.tag}\n")
        go.write_text("")
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert DONE in out, out + err
    assert host.SECRET_WORD not in out + err


def _plant_tokens(host, files: dict[str, int]) -> None:  # type: ignore[no-untyped-def]
    """Each file (relative to $HOME) holding the secret word, with its mode."""
    for rel, mode in files.items():
        path = host.home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"token = {host.SECRET_WORD}-{host.tag}\n")
        path.chmod(mode)


TOOL_READ = """
import json, sys
from corral.service import Service
for path in sys.argv[2:]:
    request = {"layers": {"global": {}}, "cwd": sys.argv[1], "tool": "read",
               "input": {"path": path}}
    print(json.dumps(Service().call("op", request)))
"""


def _read_with_tool(host, paths: list[str]) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    """Each path read by corral's read tool, as the test user: one JSON answer a line."""
    give_to_test_user(host.base)
    return subprocess.run(
        [*user_prefix(), sys.executable, "-c", TOOL_READ, str(host.ws), *paths],
        env=host.env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_tool_homes_show_what_builds_need_and_no_credential_store(host) -> None:
    """r26b CREDS: the private home showed whole tool homes (~/.local/share/uv, ~/.config/mise,
    ~/.gradle), and with them uv's credential store, mise's age key and Gradle's init scripts;
    a file made private inside a shown tool home is hidden whatever its name."""
    secret = {
        ".local/share/uv/credentials/credentials.toml": 0o600,
        ".config/mise/age.txt": 0o600,
        ".config/mise/conf.d/secrets.toml": 0o644,
        ".gradle/init.d/creds.gradle": 0o644,
        ".cargo/vendor-token.json": 0o600,  # named by nothing: private in a readable ~/.cargo
        ".cargo/group-token.json": 0o640,  # (r30a: others may not read it either)
    }
    kept = {
        ".local/share/uv/python/kept.txt": 0o644,
        ".gradle/caches/modules-2/kept.txt": 0o644,
        ".rustup/settings.toml": 0o600,  # inside a private ~/.rustup (umask 077): no sign
    }
    for rel, mode in {**secret, **kept}.items():
        path = host.home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        word = host.SECRET_WORD if rel in secret else "KEPT"
        path.write_text(f"{word}-{rel}-{host.tag}\n")
        path.chmod(mode)
    (host.home / ".cargo").chmod(0o755)
    (host.home / ".rustup").chmod(0o700)
    paths = [str(host.home / rel) for rel in (*secret, *kept)]
    r = host.sh("".join(f"cat {q(p)} 2>/dev/null\n" for p in paths))
    assert DONE in r.stdout, r.stdout + r.stderr
    assert host.SECRET_WORD not in r.stdout + r.stderr
    assert sorted(
        line.split("-", 1)[1].rsplit("-", 1)[0] for line in r.stdout.splitlines() if "KEPT" in line
    ) == sorted(kept)
    done = _read_with_tool(host, paths)
    assert host.SECRET_WORD not in done.stdout, done.stdout
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["ok"] for a in answers] == [False] * len(secret) + [True] * len(kept), done.stderr


def test_registry_configs_deep_in_shown_runtime_trees_and_a_private_gitconfig_are_hidden(
    host,  # type: ignore[no-untyped-def]
) -> None:
    """r27a GLOBALRC, GITCONFIG600: npm's global `$PREFIX/etc/npmrc` of a Node under ~/.nvm
    (written 0666) and a pyenv Python's site pip.conf (0644), four and three levels down,
    were shown; so was a 0600 ~/.gitconfig holding a token (shown files were never looked
    at)."""
    secret = {
        ".nvm/versions/node/v20.1.0/etc/npmrc": 0o666,
        ".pyenv/versions/3.11.7/pip.conf": 0o644,
        ".gitconfig": 0o600,
    }
    _plant_tokens(host, secret)
    kept = host.home / ".nvm" / "versions" / "node" / "v20.1.0" / "bin" / "node"
    kept.parent.mkdir(parents=True)
    kept.write_text("KEPT\n")
    host.home.chmod(0o755)
    paths = [str(host.home / rel) for rel in secret]
    r = host.sh("".join(f"cat {q(p)} 2>/dev/null\n" for p in [*paths, str(kept)]))
    assert DONE in r.stdout, r.stdout + r.stderr
    assert host.SECRET_WORD not in r.stdout + r.stderr
    assert "KEPT" in r.stdout
    done = _read_with_tool(host, paths)
    assert host.SECRET_WORD not in done.stdout, done.stdout


def test_secrets_in_shown_bin_and_lib_dirs_npm_logs_and_past_a_big_tree_stay_hidden(
    host,  # type: ignore[no-untyped-def]
) -> None:
    """r28a SKIPPRIV: the names of code trees were skipped for the shown directories
    themselves (~/.local/bin, ~/.config/direnv/lib); NPMLOG: npm's debug logs (0644, with
    the tokens it was given) in ~/.npm/_logs; OPAMCAP: one entry budget for all shown trees,
    spent by a big one (opam's unpacked repository), left the others unlooked at."""
    secret = {
        ".local/bin/cred-helper": 0o700,
        ".config/direnv/lib/tokens.sh": 0o600,
        ".npm/_logs/2026-01-01T00_00_00_000Z-debug-0.log": 0o644,
        ".nvm/versions/node/v20.1.0/etc/npmrc": 0o644,
    }
    _plant_tokens(host, secret)
    big = host.home / ".opam" / "default" / "unpacked"  # more than the walk's budget
    for i in range(120):
        (big / f"p{i}").mkdir(parents=True)
        for j in range(100):
            (big / f"p{i}" / f"f{j}").write_text("")
    (host.home / ".opam" / "token").write_text(f"token = {host.SECRET_WORD}-{host.tag}\n")
    (host.home / ".opam" / "token").chmod(0o600)
    for directory in (host.home, host.home / ".local", host.home / ".config"):
        directory.chmod(0o755)
    paths = [str(host.home / rel) for rel in [*secret, ".opam/token"]]
    r = host.sh("".join(f"echo {q(p)}; cat {q(p)} 2>/dev/null\n" for p in paths))
    assert DONE in r.stdout, r.stdout + r.stderr
    assert host.SECRET_WORD not in r.stdout + r.stderr, r.stdout


def test_a_readable_gitconfig_with_a_token_in_a_url_is_hidden(host) -> None:  # type: ignore[no-untyped-def]
    """r28a (low): a 0644 ~/.gitconfig holding `insteadOf` with a token was shown (only a
    0600 one was hidden); one without credentials still is (git's identity)."""
    config = host.home / ".gitconfig"
    clean = config.read_text() if config.exists() else ""
    config.write_text(
        clean + f'[url "https://{host.SECRET_WORD}-{host.tag}@github.com/"]\n'
        "\tinsteadOf = https://github.com/\n"
    )
    config.chmod(0o644)
    r = host.sh(f"cat {q(config)} 2>/dev/null\n")
    assert DONE in r.stdout and host.SECRET_WORD not in r.stdout, r.stdout
    config.write_text(clean + "[user]\n\tname = kept\n")
    r = host.sh(f"cat {q(config)} 2>/dev/null\n")
    assert "name = kept" in r.stdout, r.stdout


def test_a_gitconfig_with_a_password_or_token_setting_is_hidden(host) -> None:  # type: ignore[no-untyped-def]
    """r37b GITCONFIGPASS: a 0644 ~/.gitconfig holding `sendemail.smtpPass`, `github.token`
    or an inline credential helper that echoes a password was shown (only URLs with a user
    and extra headers were looked for); `gh`'s own helper line and git's identity still are."""
    config = host.home / ".gitconfig"
    config.parent.mkdir(parents=True, exist_ok=True)
    identity = "[user]\n\tname = kept\n[credential]\n\thelper = !/usr/bin/gh auth git-credential\n"
    for secret in (
        f"[sendemail]\n\tsmtpPass = {host.SECRET_WORD}\n",
        f"[github]\n\ttoken = {host.SECRET_WORD}\n",
        f"[sendemail] smtpPass = {host.SECRET_WORD}\n",  # (r38b GITONELINE: one line)
        f"[azure]\n\tpat = {host.SECRET_WORD}\n",
        '[credential "https://x.example"]\n'
        f'\thelper = "!f() {{ echo password={host.SECRET_WORD}; }}; f"\n',
    ):
        config.write_text(identity + secret)
        config.chmod(0o644)
        r = host.sh(f"cat {q(config)} 2>/dev/null\n")
        assert DONE in r.stdout and host.SECRET_WORD not in r.stdout, r.stdout
    config.write_text(identity)
    r = host.sh(f"cat {q(config)} 2>/dev/null\n")
    assert "name = kept" in r.stdout, r.stdout


def test_init_scripts_archives_and_scripts_with_tokens_in_shown_homes_are_hidden(host) -> None:  # type: ignore[no-untyped-def]
    """r38b GRADLEINITD: Gradle's init.d in a distribution under ~/.gradle/wrapper/dists,
    where companies put their repositories' passwords, was shown; the distribution's other
    files still are."""
    dist = host.home / ".gradle" / "wrapper" / "dists" / "gradle-8-bin" / "h" / "gradle-8"
    (dist / "init.d").mkdir(parents=True)
    (dist / "init.d" / "repos.gradle").write_text(f"password '{host.SECRET_WORD}'\n")
    (dist / "LICENSE").write_text("license text\n")
    archive = dist.parent.parent / "gradle-8-bin.zip"  # r39b ZIPINITD: the same, zipped
    archive.write_text(f"init.d/repos.gradle password '{host.SECRET_WORD}'\n")
    local_bin = host.home / ".local" / "bin"
    local_bin.mkdir(parents=True, exist_ok=True)
    (local_bin / "deploy").write_text(f'#!/bin/sh\nexport GITHUB_TOKEN="{host.SECRET_WORD}"\n')
    spellings = {  # r40b LOCALBINSPELL, ZIPPART
        "pat": f"export GH_PAT={host.SECRET_WORD}\n",
        "tab": f"export\tX_TOKEN={host.SECRET_WORD}\n",
        "login": f"docker login -p {host.SECRET_WORD} u\n",
        "header": f'curl -H "PRIVATE-TOKEN: {host.SECRET_WORD}" u\n',
    }
    for name, text in spellings.items():
        (local_bin / name).write_text("#!/bin/sh\n" + text)
        (local_bin / name).chmod(0o755)
    (dist.parent.parent / "gradle-8-bin.zip.part").write_text(f"password {host.SECRET_WORD}\n")
    (local_bin / "hello").write_text(  # (a console script pip generated: shown)
        "#!/usr/bin/python3\n# -*- coding: utf-8 -*-\nimport re\nimport sys\n"
        "from hello_kept import main\nif __name__ == '__main__':\n    sys.exit(main())\n"
    )
    (local_bin / "mine").write_text(f"#!/bin/sh\ncurl -u me:{host.SECRET_WORD} x\n")  # r41b
    (local_bin / "corp").mkdir()  # r42b LOCALBINSPELL3: one down, and without `#!`
    (local_bin / "corp" / "login").write_text(f"#!/bin/sh\nsshpass -p {host.SECRET_WORD}\n")
    (local_bin / "push.py").write_text(f"requests.post(u, auth=('u', '{host.SECRET_WORD}'))\n")
    (local_bin / "corp").chmod(0o755)
    for tool in (local_bin / "deploy", local_bin / "hello", local_bin / "mine"):
        tool.chmod(0o755)
    for directory in [dist, *dist.parents]:
        if directory == host.home.parent:
            break
        directory.chmod(0o755)
    for directory in (local_bin, local_bin.parent):
        directory.chmod(0o755)
    shown = [dist / "init.d" / "repos.gradle", dist / "LICENSE", archive, local_bin / "deploy",
             local_bin / "hello", local_bin / "mine", local_bin / "corp" / "login",
             local_bin / "push.py", *(local_bin / n for n in spellings),
             dist.parent.parent / "gradle-8-bin.zip.part"]  # fmt: skip
    r = host.sh("".join(f"cat {q(str(p))}\n" for p in shown))
    assert host.SECRET_WORD not in r.stdout + r.stderr, r.stdout
    assert "license text" in r.stdout and "hello_kept" in r.stdout, r.stdout + r.stderr


def test_tokens_in_gits_other_configs_and_a_clones_remote_are_hidden(host) -> None:  # type: ignore[no-untyped-def]
    """r30a XDGGITTOKEN, CLONETOKEN: the URL-credential check ran only on ~/.gitconfig: a
    token in ~/.config/git/config, an http.extraHeader bearer token, and a clone's remote
    URL inside a shown tool home were read."""
    files = {
        ".config/git/config": f'[url "https://{host.SECRET_WORD}@github.com/"]\n',
        ".local/share/mise/plugins/p/.git/config": (
            f'[remote "origin"]\n\turl = https://x:{host.SECRET_WORD}@git.example/p\n'
        ),
        ".cargo/git/config": f"[http]\n\textraHeader = Authorization: {host.SECRET_WORD}\n",
    }
    for rel, text in files.items():
        path = host.home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o644)
    extra = host.home / ".gitconfig"
    extra.write_text(f"[http]\n\textraHeader = Authorization: Bearer {host.SECRET_WORD}\n")
    extra.chmod(0o644)
    paths = [str(host.home / rel) for rel in files] + [str(extra)]
    r = host.sh("".join(f"cat {q(p)} 2>/dev/null\n" for p in paths))
    assert DONE in r.stdout, r.stdout + r.stderr
    assert host.SECRET_WORD not in r.stdout + r.stderr, r.stdout


def test_tokens_in_git_include_files_deep_clones_and_download_lists_are_hidden(host) -> None:  # type: ignore[no-untyped-def]
    """r31a GITINC: only a file named `config` in ~/.config/git was read for tokens, not the
    include files beside it; DEEPCLONE: the walk stopped six levels down and showed what it
    had not looked at (a clone's remote deep in a shown tree); opam's repo/repos-config, in a
    directory of downloads, was never looked at; ~/go/src (GOPATH clones) was shown."""
    files = {
        ".config/git/work.inc": f'[url "https://x-access-token:{host.SECRET_WORD}@github.com/"]\n',
        ".config/git/includes/corp": f"[http]\n\textraHeader = Authorization: {host.SECRET_WORD}\n",
        ".local/share/mise/plugins/a/b/c/d/e/f/.git/config": (
            f'[remote "origin"]\n\turl = https://oauth2:{host.SECRET_WORD}@gitlab.example/g\n'
        ),
        ".opam/repo/repos-config": f'repositories: "corp" {{"git+https://u:{host.SECRET_WORD}@h/r"}}\n',
        "go/src/gitlab.example/team/svc/main.go": f"// {host.SECRET_WORD}\n",
    }
    kept = {".config/git/ignore": "KEPT-ignore\n", "go/bin/tool": "KEPT-tool\n"}
    for rel, text in {**files, **kept}.items():
        path = host.home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o644)
    paths = [str(host.home / rel) for rel in (*files, *kept)]
    r = host.sh("".join(f"cat {q(p)} 2>/dev/null\n" for p in paths))
    assert DONE in r.stdout, r.stdout + r.stderr
    assert host.SECRET_WORD not in r.stdout + r.stderr, r.stdout
    assert "KEPT-ignore" in r.stdout and "KEPT-tool" in r.stdout, r.stdout


def test_install_records_in_shown_tool_homes_keep_their_tokens_hidden(host) -> None:
    """r51b CRATESTOML: `cargo install --git https://user:TOKEN@...` keeps the URL in
    ~/.cargo/.crates.toml and .crates2.json (0644); the secrets walk read files for a URL
    with a token only in git's and direnv's directories. uv's receipts, a Node prefix's
    global package list and bun's global package.json keep what they were given the same
    way. A script that names a header as a word (nvm.sh) and a program stay shown."""
    url = f"https://alice:{host.SECRET_WORD}@git.example/tool.git"
    files = {
        ".cargo/.crates.toml": f'[v1]\n"tool 0.1.0 (git+{url}#5de5)" = ["tool"]\n',
        ".local/share/uv/tools/tool/uv-receipt.toml": (
            f'[tool]\nrequirements = [{{ name = "tool", git = "{url}" }}]\n'
        ),
        ".nvm/versions/node/v20.0.0/lib/node_modules/.package-lock.json": (
            f'{{"packages":{{"node_modules/tool":{{"resolved":"git+{url}"}}}}}}\n'
        ),
        ".bun/install/global/package.json": f'{{"dependencies":{{"tool":"git+{url}"}}}}\n',
        # r52b CODESKIP: where tools say to put secrets, in scripts named as code
        ".pyenv/versions/conda/envs/ml/etc/conda/activate.d/env_vars.sh": (
            f"export OPENAI_API_KEY={host.SECRET_WORD}\n"
        ),
        ".pyenv/versions/webapp/bin/activate.fish": (
            f"set -gx STRIPE_SECRET_KEY {host.SECRET_WORD}\n"
        ),
        ".pyenv/versions/webapp/bin/hook": f"#!/bin/sh\nexport GH_TOKEN={host.SECRET_WORD}\n",
        # r53b CONDASTATE: `conda env config vars set` keeps them as JSON; other shells
        ".pyenv/versions/conda/envs/ml/conda-meta/state": (
            f'{{"env_vars": {{"OPENAI_API_KEY": "sk-{host.SECRET_WORD}"}}}}'
        ),
        ".pyenv/versions/conda/envs/ml/etc/conda/activate.d/a.fish": (
            f"set -Ux HF_TOKEN {host.SECRET_WORD}\n"
        ),
        ".pyenv/versions/conda/envs/ml/etc/conda/activate.d/b.csh": (
            f"setenv AWS_SECRET_ACCESS_KEY {host.SECRET_WORD}\n"
        ),
        ".pyenv/versions/conda/envs/ml/etc/conda/activate.d/c.ps1": (
            f'$env:NPM_TOKEN = "{host.SECRET_WORD}"\n'
        ),
        # r54b CONDAHIST: anaconda.org's token is in the URL's path; OPAMPKG: opam's record
        # of a pinned package, below `packages`
        ".pyenv/versions/conda/conda-meta/history": (
            "# cmd: /x/bin/conda install -c "
            f"https://conda.anaconda.org/t/ab-{host.SECRET_WORD}-0123456789/acme acme\n"
        ),
        ".pyenv/versions/conda/pkgs/urls.txt": (
            f"https://conda.anaconda.org/t/ab-{host.SECRET_WORD}-0123456789/acme/x.tar.bz2\n"
        ),
        ".opam/default/.opam-switch/packages/acmelib.dev/opam": (f'url {{ src: "git+{url}" }}\n'),
        ".nvm/alias/mirror": f"https://mirror.example/dist?access_token={host.SECRET_WORD}\n",
        # r55b PYSTART2: a .pth's import line, a sitecustomize package, `from os import
        # environ`; SHELLFORMS2: `: "${K:=...}"`, typeset/declare -gx, `|| export`
        ".pyenv/versions/3.11.7/lib/python3.11/site-packages/zz_env.pth": (
            f'import os; os.environ.setdefault("ANTHROPIC_API_KEY", "sk-{host.SECRET_WORD}")\n'
        ),
        ".pyenv/versions/3.10.1/lib/python3.10/site-packages/sitecustomize/__init__.py": (
            f'from os import environ\nenviron["GITHUB_TOKEN"] = "ghp_{host.SECRET_WORD}"\n'
        ),
        ".pyenv/versions/conda/envs/ml/etc/conda/activate.d/e.sh": (
            f': "${{OPENAI_API_KEY:=sk-{host.SECRET_WORD}}}"\n'
            f"typeset -x HF_TOKEN=hf_{host.SECRET_WORD}\n"
            f'[ -n "$K" ] || export API_KEY={host.SECRET_WORD}\n'
        ),
        # r55b BINLOCK: a token URL in a lock file in binary
        ".bun/install/global/bun.lockb": f"\0\0bun\0git+{url}\0".encode("latin1").decode(),
        # r56b BUNDLERGIT: Bundler's bare clone of a git gem; CONDACACHE: conda's repodata
        # cache names a private channel's URL
        ".rbenv/versions/3.2.2/lib/ruby/gems/3.2.0/cache/bundler/git/gem-ab12/config": (
            f'[remote "origin"]\n\turl = {url}\n'
        ),
        ".rbenv/versions/3.2.2/lib/ruby/gems/3.2.0/cache/bundler/git/gem-ab12/HEAD": (
            "ref: refs/heads/main\n"
        ),
        ".pyenv/versions/conda/pkgs/cache/1a2b3c.info.json": (
            f'{{"url": "https://conda.anaconda.org/t/tk-{host.SECRET_WORD}-0123456789/x"}}\n'
        ),
        # r57b CONDASTATE3: a value with a space and a backslash in it
        ".pyenv/versions/conda/envs/dl/conda-meta/state": (
            f'{{"env_vars": {{"DB_PASSWORD": "my pw\\\\{host.SECRET_WORD}"}}}}'
        ),
        # r57b STARTUPBLACK, SHELLFORMS3, NAMES2: black's layout, a `\` continuation,
        # a partly capitalised name, an auth key
        ".pyenv/versions/3.9.1/lib/python3.9/site-packages/usercustomize.py": (
            "import os\nos.environ.setdefault(\n"
            f'    "OPENAI_API_KEY",\n    "sk-{host.SECRET_WORD}",\n)\n'
        ),
        ".pyenv/versions/conda/envs/ml/etc/conda/activate.d/f.sh": (
            f"export API_KEY=\\\n  {host.SECRET_WORD}\n"
            f"export TF_VAR_db_password={host.SECRET_WORD}\n"
            f"export TS_AUTHKEY=tskey-{host.SECRET_WORD}\n"
        ),
        # r54b SITECUSTOM, SHELLFORMS, JSONLOWER
        ".pyenv/versions/3.12.1/lib/python3.12/site-packages/sitecustomize.py": (
            f'import os\nos.environ["OPENAI_API_KEY"] = "sk-{host.SECRET_WORD}"\n'
        ),
        ".pyenv/versions/conda/envs/ml/etc/conda/activate.d/d.sh": (
            f'export K="${{K:-{host.SECRET_WORD}}}"\nexport A=1 HF_TOKEN={host.SECRET_WORD}\n'
        ),
        ".pyenv/versions/conda/envs/ml/etc/jupyter/jupyter_server_config.json": (
            f'{{"IdentityProvider": {{"token": "{host.SECRET_WORD}-abcdef"}}}}\n'
        ),
        # r52b SIZECAP: an install record past 64 KiB (160 tools)
        ".cargo/.crates2.json": "{" + " " * 70_000 + f'"tool (git+{url})": 1}}\n',
    }
    kept = {
        ".nvm/nvm.sh": 'nvm_get() { curl --header "Authorization: $NVM_AUTH_HEADER" "$@"; }\n'
        "# KEPT-nvm\n",
        ".cargo/env": "#!/bin/sh\n# KEPT-env\n",
        # (a script's own assignments of what it works out are no secret)
        ".nvm/install.sh": 'NVM_AUTH_HEADER="$1"\nexport API_KEY=$(cat x)\n# KEPT-install\n',
    }
    for rel, text in {**files, **kept}.items():
        path = host.home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o644)
    give_to_test_user(host.home)
    paths = [str(host.home / rel) for rel in (*files, *kept)]
    r = host.sh("".join(f"cat {q(p)} 2>/dev/null\n" for p in paths))
    assert DONE in r.stdout, r.stdout + r.stderr
    assert host.SECRET_WORD not in r.stdout + r.stderr, r.stdout
    assert "KEPT-nvm" in r.stdout and "KEPT-env" in r.stdout, r.stdout
    assert "KEPT-install" in r.stdout, r.stdout


def test_a_credential_in_a_directory_the_sandbox_cannot_enter_stops_no_run(host) -> None:  # type: ignore[no-untyped-def]
    """r86b: as root, another user's 0700 directory in the workspace holding `.ssh/id_rsa`:
    corral (with root's capabilities) found the key and asked bwrap to mask it, bwrap (as
    the sandbox's root, without them) could not reach it, and every run failed."""
    other = host.ws / "other"
    (other / ".ssh").mkdir(parents=True)
    (other / ".ssh" / "id_rsa").write_text("CORRAL-KEY\n")
    give_to_test_user(host.base)
    for path in (other, other / ".ssh", other / ".ssh" / "id_rsa"):
        subprocess.run(["chown", "12345:12345", str(path)], check=True)
    other.chmod(0o700)
    done = host.corral("run", "--", "sh", "-c", f"cat {q(other / '.ssh' / 'id_rsa')}; echo ran")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("ran\n") and "CORRAL-KEY" not in done.stdout, done.stdout


def test_deny_names_are_hidden_in_every_root_and_below_a_directory_made_unlistable(host) -> None:  # type: ignore[no-untyped-def]
    """r87b DENYGLOBROOTS (`.env`, `*.pem` were looked for in the workspace only: in a
    second writable root `cat .env` showed what the read tool refuses) and DENYCHMOD (a
    command made config/ unlistable with `chmod 000`; the next run's search skipped it,
    the mask too, and the command opened it again and read config/.env)."""
    other = host.outside / "backend"
    (other / "deploy").mkdir(parents=True)
    (other / ".env").write_text("CORRAL-OTHER-ENV\n")
    (other / "deploy" / "server.key").write_text("CORRAL-OTHER-KEY\n")
    # (and r88b DENYCHMOD2: one that can be listed but not entered, `chmod 400`)
    for name in ("config", "config2"):
        (host.ws / name).mkdir()
        (host.ws / name / ".env").write_text("CORRAL-SUBDIR-ENV\n")
    give_to_test_user(host.base)
    (host.ws / "config").chmod(0)
    (host.ws / "config2").chmod(0o400)
    probe = (
        f"cat {q(other / '.env')} {q(other / 'deploy' / 'server.key')}; "
        "chmod 755 config config2; cat config/.env config2/.env; echo after"
    )
    done = host.corral("run", "--allow-write", str(other), "--", "sh", "-c", probe)
    (host.ws / "config").chmod(0o755)
    (host.ws / "config2").chmod(0o755)
    assert done.stdout.endswith("after\n"), done.stdout + done.stderr
    assert "CORRAL-" not in done.stdout, done.stdout
