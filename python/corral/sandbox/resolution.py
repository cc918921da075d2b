"""The phases of policy resolution (see policy.resolve), each a method of one Resolution:
the configuration's values checked, the writable roots, the hidden paths, what is protected
inside the writable roots, and what a private home shows. Problems and notes gather on the
Resolution; resolve() raises ConfigError once, naming every bad entry.
"""

from __future__ import annotations

import os

from corral import dirs, imports
from corral.errors import Problem
from corral.paths import (
    PathContext,
    RealPaths,
    canonical_all,
    expand_all,
    expand_lexical,
    file_patterns,
    is_within,
    might_exist,
    name_matches,
    outermost,
    planted_link,
    read_regular,
    real_existing,
)
from corral.sandbox import environment, limits, system_private
from corral.sandbox.backends import bwrap_args
from corral.sandbox.protect import gitguard

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from corral.config import Config
    from corral.toolguard.ops.globs import Compiled

PRIVATE_TMP = "/tmp"
# Never inside a writable root: binding the host's copy writable would undo the sandbox's own
# /proc, /dev, private /tmp, or expose host sockets under /run.
SYSTEM_DIRS = ("/proc", "/dev", "/sys", "/run", PRIVATE_TMP)


# why an open chat's file is kept read-only (its refusals say so, not "a git hook or config")
OPEN_CHAT = "a chat open in the editor: its frontmatter sets that chat's sandbox"


def own_paths() -> list[str]:
    """What runs on the host later and must never be writable from inside: corral's own code,
    the environment it runs in (with the bundled bwrap), its plugin files when run from a
    checkout, and its config and cache (a config there could turn the sandbox off)."""
    import sys

    import corral

    package = os.path.dirname(os.path.abspath(corral.__file__))
    # the directory holding the package is on corral's sys.path: a json.py beside it would be
    # imported in its place (in an installed corral it is inside sys.prefix anyway)
    found = [os.path.dirname(package), dirs.user_config_dir(), dirs.user_cache_dir()]
    if os.access(sys.prefix, os.W_OK):
        # (a venv, or /usr for root; a system Python's /usr a user cannot write anyway, and
        # naming it would hold every venv's link to /usr/bin/python3)
        found.append(sys.prefix)
    root = os.path.dirname(os.path.dirname(package))  # a checkout: <root>/python/corral
    found += [os.path.join(root, d) for d in RUNTIME_DIRS]
    return found


# What Neovim sources from a plugin's directory on 'runtimepath' (and its after/), and what
# runs from a checkout: a file planted in any of them runs in the editor, on the host.
RUNTIME_DIRS = (
    "lua", "plugin", "rplugin", "after", "ftdetect", "ftplugin", "indent", "syntax", "autoload",
    "colors", "compiler", "queries", "lsp", "parser", "spell", "keymap", "pack", "doc",
    "scripts", ".ci",
    # files Neovim sources from the top of every runtimepath entry
    "filetype.lua", "filetype.vim", "ftplugin.vim", "indent.vim", "ftoff.vim", "ftplugof.vim",
    "indoff.vim", "menu.vim", "synmenu.vim", "scripts.vim", "delmenu.vim", "init.lua",
    "init.vim",
)  # fmt: skip


DENY_SEARCH_DEPTH = 4
MAX_PTH_FILES = 256
MAX_PTH_BYTES = 64 * 1024
DENY_SEARCH_LIMIT = 50_000
DENY_MATCH_WORK = 250_000  # pattern matches the deny search may make (~0.5 s)
MAX_LINK_HOPS = 40  # the kernel's own limit on links followed in one lookup


def _name_matches(pattern: str, name: str) -> bool:
    """`*` any characters, `?` one, the rest literally (a name pattern, as gitignore reads one
    without a `/`: at any depth)."""
    if "*" not in pattern and "?" not in pattern:
        return pattern == name
    parts = pattern.split("*")
    if len(parts) == 1:
        return len(name) == len(pattern) and all(
            p in ("?", c) for p, c in zip(pattern, name, strict=True)
        )

    def at(piece: str, text: str, i: int) -> bool:
        return len(text) - i >= len(piece) and all(
            p in ("?", text[i + k]) for k, p in enumerate(piece)
        )

    first, last = parts[0], parts[-1]
    if not at(first, name, 0) or len(name) < len(first) + len(last):
        return False
    end = len(name) - len(last)
    if not at(last, name, end):
        return False
    i = len(first)
    for piece in parts[1:-1]:
        while i + len(piece) <= end and not at(piece, name, i):
            i += 1
        if i + len(piece) > end:
            return False
        i += len(piece)
    return True


def _self_and_parents(path: str) -> list[str]:
    found = [path]
    while (parent := os.path.dirname(found[-1])) != found[-1]:
        found.append(parent)
    return found


class Protection:
    """What is kept as it is inside the writable roots (see Resolution.protection)."""

    def __init__(self) -> None:
        self.read_only: list[str] = []  # existing, resolved: mounted read-only
        self.create_dirs: list[str] = []  # made empty before the run, then read-only
        self.watch: list[str] = []  # missing: must not appear (direct writes sweep them)
        self.links: list[tuple[str, str]] = []  # protected symlinks put back after the run
        self.pinned: list[str] = []  # directories bound onto themselves
        self.never: list[str] = []  # never writable, wherever they are
        self.module_dirs: list[str] = []  # PYTHONPATH and the workspace: where Python looks first
        self.why: dict[str, str] = {}  # why a path is kept, where it is not plain (see keep)

    def keep(self, path: str, why: str = "", exists: bool | None = None) -> None:
        """Read-only where it exists, watched where it does not; `why`: what has the host
        run or read it (`named by /w/.envrc`), said when a change to it is held; `exists`:
        whether it does, where the caller knows (from a listing of its directory)."""
        if exists is None:
            exists = os.path.lexists(path)
        (self.read_only if exists else self.watch).append(path)
        if why:
            self.why.setdefault(path, why)


MAX_MATCHES = 64


def _matching(root: str, name: str, listed: dict[str, list[str]]) -> list[str]:
    """The paths in `root` a protected name with `*` in it matches now (`mise.*.toml`): kept
    read-only with direct writes. One a command adds is not known before it runs: change
    sets hold it, at any depth. `listed`: the directories listed so far, each once."""
    found = [root]
    for component in name.split("/"):
        below = []
        for directory in found:
            if "*" not in component:
                below.append(os.path.join(directory, component))
                continue
            if directory not in listed:
                try:
                    listed[directory] = os.listdir(directory)
                except OSError:
                    listed[directory] = []
            names = listed[directory]
            below += [os.path.join(directory, n) for n in names if name_matches(n, component)]
        found = below[:MAX_MATCHES]
    return [p for p in found if os.path.lexists(p)]


# what of a shown tool home is looked through for credentials (see Resolution._secrets_inside):
# npm's global config of a Node prefix is ~/.volta/tools/image/node/20.1.0/etc/npmrc. At any
# depth (a bound on depth once left a GitLab subgroup's clone unlooked at, r31a): the budget of
# entries bounds the walk, and hides what it could not look through
SECRET_ENTRIES = 10_000  # of one shown directory: past that, it is hidden whole
# only the files directly inside are looked at: what tools download and unpack (not where
# anyone keeps a secret, but where a tool keeps its list of sources: opam's repo/repos-config)
SECRET_SKIP = frozenset({
    ".git", "node_modules", "site-packages", "dist-packages", "__pycache__", "_cacache",
    "content-v2",
    "cache", "caches", "registry", "repository", "repo", "packages", "pkgs", "pkg",
    "downloads", "download-cache", "toolchains", "sources", "checkouts",
})  # fmt: skip
# ... nor, below the top of a shown directory, an installation's own trees of code and docs
SECRET_SKIP_DEEP = frozenset({
    "lib", "lib64", "share", "include", "src", "man", "doc", "docs", "locale", "tmp",
    "plugins", "libexec", "test", "tests", "completions", "git", "build",
})  # fmt: skip
# a file read whole for credentials in URLs (r52b SIZECAP: cargo's install record of 160
# tools passed 64 KiB, and its token was shown)
SMALL_TEXT = 1 << 20
# directories of scripts a tool runs with your credentials in them: Gradle's init.d in a
# distribution (~/.gradle/wrapper/dists, sdkman's candidates), where companies put their
# repositories' passwords (r38b GRADLEINITD)
SECRET_DIRS = frozenset({"init.d"})
# archives a tool keeps beside what it unpacked: a Gradle distribution's zip holds its
# init.d too (r39b ZIPINITD)
SECRET_SUFFIXES = (".zip", ".zip.part", ".zip.lck")  # (a download cut short, r40b ZIPPART)
# directories of scripts you wrote, read for a token in them (`export GITHUB_TOKEN=...`
# in ~/.config/direnv/lib/x.sh, r39b LOCALBINEXPORT; ~/.local/bin and ~/bin are hidden
# whole but for programs and generated scripts: see _own_script). Not every `bin` of every
# shown tool home: reading each on every run cost `corral run` 47 ms
SCRIPT_DIRS = frozenset({"direnv"})
# Every other small file of a shown tool home is read too, but for code (r51b CRATESTOML:
# cargo's install records, `.crates.toml` and `.crates2.json`, keep the URL given to
# `cargo install --git https://user:TOKEN@...`; uv's receipts, npm's and bun's global
# package lists, opam's pins do the same): code names headers and keys as words
# (nvm.sh's `Authorization:`), not a secret
CODE_SUFFIXES = (
    ".bat", ".cmd", ".py", ".pyi", ".js", ".mjs",
    ".cjs", ".ts", ".lua", ".rb", ".pl", ".pm", ".vim", ".el", ".rs", ".go", ".c", ".h",
)  # fmt: skip
# ... but shell scripts are where tools tell you to put secrets (conda's
# `etc/conda/activate.d/env_vars.sh`, a venv's `bin/activate.fish`, r52b CODESKIP): read for
# an assignment of a literal to a secret's name (`export OPENAI_API_KEY=sk-...`, `set -gx
# KEY value`) and a URL with a token, not for the words code uses (nvm.sh's `Authorization:`)
SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".fish", ".ps1", ".csh", ".ksh")
# ... and the Python a Python runs at every start, where users set their environment
# (`os.environ["OPENAI_API_KEY"] = "sk-..."`, r54b SITECUSTOM)
START_UP_SCRIPTS = ("sitecustomize.py", "usercustomize.py")
CREDENTIAL_FILES = frozenset({
    "npmrc", ".npmrc", "pip.conf", "pip.ini", ".pypirc", ".condarc", ".netrc", ".yarnrc",
    ".yarnrc.yml", "bunfig.toml", ".bunfig.toml", "credentials", "credentials.toml",
    "credentials.json", "auth.json", ".git-credentials", "gradle.properties", "settings.xml",
    "condarc", "gemrc", ".gemrc", "settings-security.xml",
})  # fmt: skip
# The last look through each shown directory, for a long-lived process (the editor's): reused
# while no directory looked at has changed (a file added, removed or renamed changes its
# directory). A file whose mode alone changed since is seen at the next change there.
# the secrets walk's answers by shown directory: (what each answer rests on: a path, whether
# it is followed, its state; the secrets; whether all was looked at). Kept in corral's cache
# directory between runs (the sandbox cannot write there) and trusted only while every
# directory and file it rests on is as it was: a file rewritten or made private in place
# leaves its directory's time as it was (the first version looked at directories only)
Seen = list[tuple[str, bool, tuple[int, int, int, int, int]]]
_SECRETS: dict[str, tuple[Seen, list[tuple[str, bool]], bool]] = {}
_SECRETS_STATE = {"loaded": False, "dirty": False}
# the walk of the system's private files (see system_private), kept with the secrets walk's
_SYSTEM: dict[str, tuple[list[tuple[str, system_private.State]], list[tuple[str, bool]], bool]] = {}
SECRETS_CACHE = "secrets-walk.v2"


def _resolved_words(value: str, roots: list[str], real: Callable[[str], str]) -> str:
    """`value` with each absolute path in it that leads into one of `roots` through a symlink
    (`~/code -> /data/code`) spelled as where it leads (review r29a: the text of the root was
    looked for, and a link's spelling passed)."""
    if "/" not in value:
        return value
    from corral.sandbox.protect import direnv

    for word in direnv.candidates(value):
        if os.path.isabs(word) and not any(word.startswith(r + "/") for r in roots):
            where = real(word)
            if where != word and any(where == r or where.startswith(r + "/") for r in roots):
                value = value.replace(word, where)
    return value


SECRET_KEY_WORDS = (
    b"pass", b"token", b"secret", b"apikey", b"api-key", b"api_key", b"authkey",
)  # fmt: skip
# whole words of a name (azure.pat, GH_PAT, NPM_AUTH), r38b, r40b
SECRET_KEYS = frozenset({b"pat", b"auth", b"key", b"credential", b"credentials", b"pw", b"pwd"})
# what hands a secret over in any text (a header, a login on the command line), r40b
SECRET_PHRASES = (
    b"extraheader", b"authorization:", b"password=", b"private-token:", b"x-api-key:",
    b"login -p ", b"--password ", b"--password=",
)  # fmt: skip


def _own_script(path: str) -> bool:
    """Whether a file is text someone wrote (a script, with or without `#!`) rather than a
    program or a script an installer generated (pip's and uv's console scripts: a few fixed
    lines naming a module and its function). No list of ways to spell a secret is whole in
    free text (`curl -u`, `mysql -p`, a dict with an Authorization header, r41b
    LOCALBINSPELL2; one directory down or without `#!`, r42b)."""
    try:
        head = read_regular(path, 4097)
    except OSError:
        return False
    if b"\0" in head:
        return False  # (a program, or other data that is not text; r42b: not the `#!` alone)
    if not head.startswith(b"#!") or len(head) > 4096:
        return True
    for line in head.splitlines()[1:]:
        line = line.strip()
        if not line or line.startswith((b"# -*- coding", b"sys.argv[0] = re.sub(", b"sys.exit(")):
            continue
        if line in (b"import re", b"import sys") or line.startswith(b"if __name__ =="):
            continue
        if line.startswith(b"from ") and b" import " in line:
            continue
        return True
    return False


def _as_assignment(line: bytes) -> bytes:
    """A shell's way of giving a variable a value as `NAME=value`: `export`, `declare -x`,
    `readonly`, `local`, fish's `set -gx NAME value` (any flags), csh's `setenv NAME
    value`, PowerShell's `$env:NAME = value` (r53b CONDASTATE: only some were read)."""
    low = line.lower()
    for word in (b"export ", b"declare -x ", b"readonly ", b"local "):
        if low.startswith(word):
            return line[len(word) :]
    if low.startswith((b"set ", b"setenv ")):
        words = line.split()[1:]
        while words and words[0].startswith(b"-"):
            words.pop(0)
        return words[0] + b"=" + b" ".join(words[1:]) if len(words) >= 2 else line
    if low.startswith(b"$env:"):
        return line[5:]
    for word in (b"os.environ[", b"os.environ.setdefault("):
        # (Python: `os.environ["KEY"] = "sk-..."` in a sitecustomize, r54b SITECUSTOM)
        if line.startswith(word):
            name, _, rest = line[len(word) :].partition(b"]" if word.endswith(b"[") else b",")
            value = rest.lstrip(b" =").rstrip(b")").strip()
            return name.strip(b"\"' ") + b"=" + value
    return line


def _holds_assignment(line: bytes, script: bool) -> bool:
    """Whether `NAME=value` (see _as_assignment) gives a secret: a setting whose name says
    it holds one (a config's `name = value`, not a script's `my $token = ...`); in a
    script, only a literal given to a variable named as one for the environment
    (`OPENAI_API_KEY=sk-...`; not `bypass=1`, `_vh_pwd="\\${pwd}"`), its default in
    `${K:-literal}` and a `$'...'` string counted as literals (r54b SHELLFORMS)."""
    name, equals, value = line.partition(b"=")
    key = name.strip().lower()
    value = value.strip().strip(b"\"'")
    if script:
        if value.startswith(b"${") and b":-" in value:
            value = value.split(b":-", 1)[1].split(b"}", 1)[0].strip(b"\"'")
        elif value.startswith(b"$'"):
            value = value[2:]
        if not (
            name.strip().isupper()
            and len(value) >= 8
            and not value.startswith((b"$", b"`", b"(", b"\\"))
        ):
            return False
    return bool(
        equals
        and key.replace(b"-", b"").replace(b"_", b"").replace(b".", b"").isalnum()
        and _secret_name(key)
        and not key.endswith(b"protected")  # (http.sslCertPasswordProtected: a flag)
    )


def _env_literal_in(text: bytes) -> bool:
    """Whether any line gives a literal to an environment variable named as a secret, in
    whatever spelling: `os.environ["K"] = "..."`, `environ.setdefault("K", "...")` (a .pth
    line or a sitecustomize, r55b PYSTART2), `: "${K:=...}"`, `typeset -x K=...`,
    `declare -gx K=...`, `[ -n "$K" ] || export K=...` (r55b SHELLFORMS2). The name in
    capitals, the literal 8 characters or more and not a path or an expansion. (By hand:
    `re` would cost a cold walk its import, and the empty change set's path with it.)"""
    import itertools

    if _quoted_pair_in(text, b'"') or _quoted_pair_in(text, b"'"):
        return True
    # (the whole text as one line: black puts a long key and its value on lines of their
    # own, a shell continues one with `\`, r57b STARTUPBLACK, SHELLFORMS3)
    flat = text.replace(b"\\\n", b" ").translate(_FLAT)
    for sep in (b":=", b":-", b"=", b",", b":"):
        for left, right in itertools.pairwise(flat.split(sep)):
            words, after = left.split(), right.split()
            if not words or not after:
                continue
            name, value = words[-1].lstrip(b"$"), after[0]
            # (JSON or YAML: `"token": "..."`, a key that is the word alone, r54b JSONLOWER;
            # conda's `{"env_vars": {"OPENAI_API_KEY": "..."}}`, CONDASTATE)
            alone = sep == b":" and name.lower() in ALONE_KEYS
            if (
                _secret_pair(name, value, alone)
                and not value.startswith(b"`")
                and b"\\" not in value  # (unquoted: an escape, not a literal)
            ):
                return True
    return False


def _secret_pair(name: bytes, value: bytes, alone: bool) -> bool:
    """Whether `name` says it holds a secret for the environment (in capitals, or in part:
    `TF_VAR_db_password`, r57b; `alone`: a key that is the word alone) and is given a
    literal of 8 characters or more that is not a path or an expansion."""
    return (
        len(name) >= 3
        and (name.isupper() or alone or (name[:1].isupper() and b"_" in name))
        and name.replace(b"_", b"").replace(b"-", b"").isalnum()
        and len(value) >= 8
        and not value.startswith((b"$", b"/", b"~", b"."))
        and _secret_name(name.lower())
    )


def _quoted_pair_in(text: bytes, quote: bytes) -> bool:
    """Whether a quoted secret's name is given a quoted literal (`"K": "a b c"`, `["K"] =
    "..."`, `("K", "...")`): the whole quoted value, spaces and backslashes in it (r57b
    CONDASTATE3: conda's env_vars with a space in the value)."""
    if text.count(quote) < 4:
        return False
    parts = text.split(quote)
    for i in range(1, len(parts) - 2, 2):
        name, value = parts[i], parts[i + 2]
        between = parts[i + 1].replace(b" ", b"").replace(b"\t", b"")
        if between not in (b":", b"=", b",", b"]="):
            continue
        if _secret_pair(name, value, between == b":" and name.lower() in ALONE_KEYS):
            return True
    return False


# keys that say "a secret" on their own in JSON or YAML (not `key`: `"key": "ctrl+p"`)
ALONE_KEYS = frozenset({
    b"token", b"password", b"passwd", b"secret", b"apikey", b"api_key", b"api-key",
    b"access_token", b"auth_token", b"client_secret",
})  # fmt: skip
# quotes and brackets as blanks, for _env_literal_in
_FLAT = bytes.maketrans(b"\"'[](){}\n\r", b"          ")


def _secret_name(key: bytes) -> bool:
    """Whether a lower-case key names a secret: a whole word of it (`_`, `-`, `.` part them)
    in SECRET_KEYS, or a SECRET_KEY_WORDS word anywhere in it."""
    key = key.replace(b"-", b"_").replace(b".", b"_")
    return bool(set(key.split(b"_")) & SECRET_KEYS) or any(w in key for w in SECRET_KEY_WORDS)


def _holds_credentials(path: str, code: bool = True, script: bool = False) -> bool:
    """Whether a shown file (~/.gitconfig, ~/.config/git/config, a clone's .git/config) names
    a URL with a user or token in it (`insteadOf = https://TOKEN@github.com/`) or an extra
    HTTP header (`Authorization: Bearer ...`), r28a, r30a; or has a setting whose name says
    it holds a secret (`sendemail.smtpPass`, `github.token`) or a value that hands one over
    (`helper = "!f() { echo password=...; }; f"`), r37b GITCONFIGPASS: a secret, whatever
    its mode. With `code` false, a program is not read, and a script (`#!`) only as with
    `script`: for a literal assigned to a secret's name and a URL with a token (see
    SHELL_SUFFIXES)."""
    try:
        text = read_regular(path, SMALL_TEXT)
    except OSError:
        return False
    if not code and b"\0" in text[:4096]:
        # (a program: not read; a lock file in binary, bun.lockb, for a URL with a token
        # only, r55b BINLOCK)
        return not os.access(path, os.X_OK) and _url_with_token(text)
    script = script or (not code and text.startswith(b"#!"))
    lowered = text.lower().replace(b"\t", b" ")
    if not script and any(word in lowered for word in SECRET_PHRASES):
        return True  # (`http.extraHeader = Authorization: Bearer ...`)
    for line in text.replace(b"\t", b" ").splitlines():
        line = line.strip()
        if line.startswith(b"[") and b"]" in line:
            line = line.split(b"]", 1)[1]  # (`[sendemail] smtpPass = x` is one line to git)
        line = _as_assignment(line)
        if script and line.count(b"=") > 1 and b" " in line:
            # (`export A=1 TOKEN=...`: each assignment of the line, r54b SHELLFORMS)
            if any(_holds_assignment(w, True) for w in line.split()):
                return True
            continue
        if _holds_assignment(line, script):
            return True
    if _env_literal_in(text):
        return True
    return _url_with_token(text)


def _url_with_token(text: bytes) -> bool:
    """Whether a text names a URL with a user or token before its `@`, or a token in its
    path or query (_token_in_url)."""
    at = text.find(b"://")
    while at >= 0:  # (by hand: `re` would cost every resolve its import, enum included)
        url = text[at + 3 : at + 3 + 2048].split(None, 1)
        authority = text[at + 3 : at + 3 + 512].split(b"/", 1)[0].split(None, 1)
        if authority and b"@" in authority[0].strip(b"\"'"):
            return True
        if url and _token_in_url(url[0]):
            return True
        at = text.find(b"://", at + 3)
    return False


def _token_in_url(url: bytes) -> bool:
    """A token in a URL's path or query rather than before an `@`: anaconda.org's private
    channels, `https://conda.anaconda.org/t/<TOKEN>/<channel>`, which conda logs in
    `conda-meta/history` (r54b CONDAHIST); `?access_token=...`, `&private_token=...`."""
    path, _, query = url.partition(b"?")
    parts = path.split(b"/")
    for i, part in enumerate(parts[1:-1], 1):
        if part == b"t" and len(parts[i + 1]) >= 16:
            return True
    for pair in query.replace(b"&", b";").split(b";"):
        key, equals, value = pair.partition(b"=")
        if equals and len(value) >= 8 and _secret_name(key.lower()):
            return True
    return False


CLONE_LOOK = 2_000  # entries looked at for clones below a directory the walk skips


# directories the walk does not go into where clones live: a venv's src/ (pip's editable VCS
# installs), cargo's git/ (its bare db/ repositories), opam's repo/, sources/, checkouts/
CLONE_DIRS = frozenset({"src", "git", "repo", "sources", "checkouts"})


def _clones_in(directory: str, seen: Seen) -> list[tuple[str, bool]]:
    """The git configs naming a URL with a token in them two levels below a directory the
    secrets walk does not go into: a venv's `src/NAME/.git` (pip's editable VCS installs
    clone there, the user's `git+https://user:token@...` kept as the remote, r46a SRCSKIP),
    cargo's `git/db/NAME` bare repositories. Past CLONE_LOOK entries, the directory is
    hidden whole (what was not looked at may hold one)."""
    found: list[tuple[str, bool]] = []
    looked = 0
    level = [directory]
    for _ in range(2):
        below = []
        for path in level:
            seen.append((path, True, _state(path, True)))
            try:
                entries = [e for e in os.scandir(path) if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            looked += len(entries)
            if looked > CLONE_LOOK:
                return [(directory, True)]
            for entry in entries:
                config = os.path.join(entry.path, "config")
                if entry.name == ".git" or os.path.lexists(os.path.join(entry.path, "HEAD")):
                    seen.append((entry.path, True, _state(entry.path, True)))
                    seen.append((config, False, _state(config, False)))
                    if _holds_credentials(config):
                        found.append((config, False))
                else:
                    below.append(entry.path)
        level = below
    return found


def _start_up_scripts(lib: str, seen: Seen) -> list[tuple[str, bool]]:
    """The sitecustomize and usercustomize of a Python installation's `lib/pythonX.Y` and
    its site-packages, where users set their environment (r54b SITECUSTOM), holding a
    secret; a directory the walk does not go into."""
    found: list[tuple[str, bool]] = []
    try:
        versions = [e.path for e in os.scandir(lib) if e.name.startswith("python")]
    except OSError:
        return found
    for version in versions[:16]:
        for where in (version, os.path.join(version, "site-packages")):
            seen.append((where, True, _state(where, True)))  # (one made there later)
            try:
                pths = [n for n in os.listdir(where) if n.endswith(".pth")][:200]
            except OSError:
                pths = []
            # (and a .pth's `import` lines, and those as packages, r55b PYSTART2)
            names = [*START_UP_SCRIPTS, *pths, "sitecustomize/__init__.py",
                     "usercustomize/__init__.py"]  # fmt: skip
            for name in names:
                path = os.path.join(where, name)
                seen.append((path, False, _state(path, False)))
                if os.path.isfile(path) and _holds_credentials(path, script=True):
                    found.append((path, False))
    return found


def _bundler_clones(lib: str, seen: Seen) -> list[tuple[str, bool]]:
    """The git configs of Bundler's clones of git gems, `lib/ruby/gems/X/cache/bundler/
    git/NAME/config`, which keep the URL with the token `bundle config` gave (r56b
    BUNDLERGIT); a directory the walk does not go into."""
    found: list[tuple[str, bool]] = []
    gems = os.path.join(lib, "ruby", "gems")
    try:
        versions = [e.path for e in os.scandir(gems) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return found
    for version in versions[:16]:
        found += _clones_in(os.path.join(version, "cache", "bundler", "git"), seen)
    return found


def _records_in(
    directory: str, secret: Callable[[str, int, int], bool], seen: Seen
) -> list[tuple[str, bool]]:
    """The secrets in the files one level below a directory of a tool's records (opam's
    `.opam-switch/packages/<pkg>/opam`); past SECRET_ENTRIES, the directory whole."""
    found: list[tuple[str, bool]] = []
    try:
        below = [e.path for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return found
    if len(below) > SECRET_ENTRIES:
        return [(directory, True)]
    for path in below:
        found += _secrets_directly_in(path, secret, seen)
    return found


def _secrets_directly_in(
    directory: str, secret: Callable[[str, int, int], bool], seen: Seen
) -> list[tuple[str, bool]]:
    """The secrets among the files directly in a directory the walk does not go into (what
    tools download): private or named as credentials, or small and naming a URL with a
    token in it (opam's repo/repos-config, r31a)."""
    import stat

    try:
        info = os.stat(directory)
        open_dir = info.st_mode & 0o055
        entries = list(os.scandir(directory))
    except OSError:
        return []
    seen.append((directory, True, _of(info)))
    found = []
    for entry in entries[:SECRET_ENTRIES]:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            seen.append((entry.path, False, _of(st)))
        if secret(entry.path, st.st_mode, open_dir) or (
            stat.S_ISREG(st.st_mode) and st.st_size <= SMALL_TEXT and _holds_credentials(entry.path)
        ):
            found.append((entry.path, False))
    if len(entries) > SECRET_ENTRIES:
        found.append((directory, True))
    return found


def _glob_literal(pattern: str) -> str | None:
    """The one path a glob pattern matches (`[*]` a literal star, as glob.escape writes it),
    or None where it has a wildcard. (By hand: `re` costs every resolve its import.)"""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "[" and i + 2 < len(pattern) and pattern[i + 2] == "]":
            out.append(pattern[i + 1])
            i += 3
            continue
        if c in "*?[":
            return None
        out.append(c)
        i += 1
    return "".join(out)


def _state(path: str, follow: bool) -> tuple[int, int, int, int, int]:
    """What the secrets walk trusts a path by: (mtime, size, mode, inode)."""
    try:
        info = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return (-1, -1, -1, -1, -1)
    return _of(info)


def _of(info: os.stat_result) -> tuple[int, int, int, int, int]:
    # (ctime too: `touch -d` puts an mtime back, never a ctime, r49b)
    return (info.st_mtime_ns, info.st_size, info.st_mode, info.st_ino, info.st_ctime_ns)


def _venv_sites(venv: str) -> list[str]:
    """A venv's `lib*/python*/site-packages` (listed by hand: glob imports re, which every
    run would pay)."""
    found = []
    try:
        libs = sorted(n for n in os.listdir(venv) if n.startswith("lib"))
        for lib in libs:
            for name in sorted(os.listdir(os.path.join(venv, lib))):
                site = os.path.join(venv, lib, name, "site-packages")
                if name.startswith("python") and os.path.isdir(site):
                    found.append(site)
    except OSError:
        pass
    return found


def _rules_digest() -> str:
    """Which rules the cached answers come from: this module as installed (another version
    of corral judges anew; no hash: hashlib would cost every run ~2 ms of imports)."""
    info = os.stat(__file__)
    return f"{__file__}:{info.st_mtime_ns}:{info.st_size}:{info.st_ino}"


def _secrets_cache(save: bool = False) -> None:
    """Load the secrets walk's answers from corral's cache directory once a process, or
    save them when a walk changed them (atomically; a cache that does not read is none)."""
    import marshal

    from corral import dirs

    path = os.path.join(dirs.user_cache_dir(), SECRETS_CACHE)
    if not save:
        if _SECRETS_STATE["loaded"]:
            return
        _SECRETS_STATE["loaded"] = True
        try:
            with open(path, "rb") as f:
                data = marshal.load(f)
            if isinstance(data, dict) and data.pop("", None) == _rules_digest():
                _SYSTEM.update(data.pop(system_private.KEY, {}))
                for top, (seen, found, whole) in data.items():
                    _SECRETS.setdefault(top, (seen, found, whole))
        except (OSError, EOFError, ValueError, TypeError):
            pass
        return
    if not _SECRETS_STATE["dirty"]:
        return
    _SECRETS_STATE["dirty"] = False
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            # (only directories that are still there: a temporary home's answers go)
            kept = {t: v for t, v in _SECRETS.items() if os.path.isdir(t)}
            newest = dict(list(_SYSTEM.items())[-system_private.KEPT :])
            marshal.dump({"": _rules_digest(), **kept, system_private.KEY: newest}, f)
        os.replace(tmp, path)
    except OSError:
        pass


# environment variables with rules of their own (see Resolution._own_environment), and the
# ones naming where corral itself is (HOME: its private home's rules; PWD, OLDPWD: not a
# place any program looks in)
OWN_RULES = frozenset(
    {"PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "HOME", "PWD", "OLDPWD", "CDPATH", "_"}
)  # (`_`: the shell's last argument)


def _tilde(entry: str, home: str) -> str:
    """`~`, `~/x` and `~user/x` as bash expands them in a PATH entry; as it is otherwise."""
    name, slash, rest = entry[1:].partition("/")
    if not name:
        return home + slash + rest
    import pwd

    try:
        return pwd.getpwnam(name).pw_dir + slash + rest
    except KeyError:
        return entry


class Resolution:
    """One policy being resolved: the configuration, where, and what was found wrong."""

    def __init__(self, config: Config, ctx: PathContext) -> None:
        self.config = config
        self.ctx = ctx
        self.problems: list[Problem] = []
        self.notes: list[str] = []
        self._chat_patterns: list[str] | None = None
        self.rw_roots: list[str] = []
        # what a host-run config does that cannot be read ahead (see _unreadable)
        self.unreadable: list[str] = []
        self.names: list[str] = []  # protected names a config implies (direnv's `use flake`)
        self.real = RealPaths()  # realpath, remembered by directory for this resolution
        # the system's directories only you may read that hold the workspace (see _system_private)
        self.system_areas: list[str] = []

    def problem(self, key: str, message: str) -> None:
        self.problems.append(Problem(key, self.config.origins[key], message))

    def paths_of(self, key: str, existing_only: bool = False) -> list[str]:
        found, errors = expand_all(self.config[key], self.ctx, existing_only)
        for e in errors:
            self.problem(key, e)
        return found

    def writable(self, path: str) -> bool:
        return any(is_within(path, r) for r in self.rw_roots)

    # -- phase 1: values that need more than their type ------------------------------------
    def check_values(self, cwd: str) -> tuple[tuple[tuple[str, int], ...], int]:
        """The environment allowlist, bwrap's extra arguments, the workspace; returns the
        resource limits (rlimits, tmpfs size)."""
        for item in self.config["sandbox.policy.env"]:
            why = environment.invalid_extra(item)
            if why:
                self.problem("sandbox.policy.env", why)
        extra_key = "sandbox.backends.bwrap.extra_args"
        for why in bwrap_args.refused(self.config[extra_key]):
            self.problem(extra_key, why)
        found = limits.resolve(self.config, self.problems)
        if not os.path.isdir(self.ctx.cwd):
            # (no layer: "cwd (call)" in a terminal, where --cwd gave it, r72d CLICHATWORD)
            self.problems.append(Problem("cwd", "", f"the workspace {cwd!r} is not a directory"))
        return found

    def network_allow(self, used: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The proxy's allowlist as written (checked whether used or not), empty unless
        `used` (network off in an enabled sandbox)."""
        allow = tuple(self.config["sandbox.policy.network_allow"])
        private = tuple(self.config["sandbox.policy.network_private"])
        if not allow and not private:
            return (), ()  # (without importing the address rules: ipaddress is heavy)
        from corral.net.allowlist import Allowlist, BadEntry

        try:
            Allowlist.parse(allow, private)
        except BadEntry as e:
            self.problem(e.key, e.message)
        return (allow, private) if used and allow else ((), ())

    # -- phase 2: the writable roots -------------------------------------------------------
    def check_planted_links(self) -> None:
        """Writable areas of this or any earlier run: the workspace and every rw_paths entry
        as written. No mount may be decided by following a link a sandboxed command made there
        (a missing rw path made a link to ~/.config by one command is the next one's root)."""
        rw_lexical = expand_lexical(self.config["sandbox.policy.rw_paths"], self.ctx)[0]
        # Where each entry really is, too: `~/cache -> /data/cache` makes /data/cache
        # writable, and a link a command made there is as planted as one in the workspace.
        real = [os.path.realpath(p) for p in rw_lexical if os.path.lexists(p)]
        areas = tuple(dict.fromkeys((self.ctx.cwd, *rw_lexical, *real)))
        allow_lexical = expand_lexical(self.config["sandbox.policy.home_allow"], self.ctx)[0]
        for key, entries in (
            ("sandbox.policy.rw_paths", rw_lexical),
            ("sandbox.policy.home_allow", allow_lexical),
        ):
            for p in entries:
                link = planted_link(p, areas)
                if link is not None:
                    self.problem(
                        key,
                        f"{p} {'is' if link == p else 'is reached through'} the symlink "
                        f"{link}, inside the workspace or a writable root, where a sandboxed "
                        "command could have made it point anywhere; name the directory it "
                        "should be instead",
                    )

    def writable_roots(self) -> list[str]:
        self.check_planted_links()
        for p in outermost(self.paths_of("sandbox.policy.rw_paths")):
            system = next((s for s in SYSTEM_DIRS if is_within(s, p)), None)
            if system is not None:
                self.problem(
                    "sandbox.policy.rw_paths",
                    f"{p} cannot be writable: it is or contains {system}; use a directory below "
                    "it (or mode read-only for a workspace at /)",
                )
                continue
            if is_within(self.ctx.home, p):
                self.notes.append(
                    f"writable root {p} contains your home directory: files there that are not "
                    "protected (see :help corral-protected) can be changed"
                )
            if os.path.isdir(p) or os.path.isfile(p):
                self.rw_roots.append(p)
            else:
                self.notes.append(f"writable path {p} does not exist; skipped")
        return self.rw_roots

    # -- phase 3: hidden paths -------------------------------------------------------------
    def deny_read(self) -> list[tuple[str, bool]]:
        found = []
        listed = self.paths_of("sandbox.policy.deny_read", existing_only=True)
        # A denied name that is a link (`.env -> config/prod.env`) is hidden where it leads:
        # bwrap cannot mount over a symlink, and the file is the secret whatever its name.
        in_workspace = [
            os.path.realpath(p) if os.path.islink(p) else p for p in self._denied_in_workspace()
        ]
        in_workspace = [p for p in in_workspace if might_exist(p)]
        for p in outermost(
            [*listed, *in_workspace, *self._host_socket_dirs(), *self._system_private()]
        ):
            found.append((p, os.path.isdir(p)))
            if is_within(self.ctx.cwd, p):
                self.notes.append(
                    f"the workspace is inside denied path {p}: it is hidden in the sandbox"
                )
        return found

    def _system_private(self) -> list[str]:
        """The system's files the user may read and others may not (r77c SHADOWBACKUP: as
        root, /etc/shadow- held the password hashes the deny list hides as /etc/shadow)."""
        _secrets_cache()
        # (the workspace, writable or not, the writable roots and your home: rules of
        # their own)
        # (the writable roots and your home: rules of their own, not looked in; the
        # workspace, writable or not, looked in but never hidden, r29 review: a read-only
        # workspace at /etc showed /etc/shadow-)
        skip = [*self.rw_roots, *([self.ctx.home] if self.ctx.home != "/" else [])]
        shown = [self.ctx.cwd]
        if not system_private.system_state(self.ctx.cwd):
            # (a project of yours, read-only this time: its files as in a writable one, not
            # hidden for their own modes, umask 077 or 027, r82c ROPRIVMODE; the system's
            # own directories, /etc as a workspace, are still looked in)
            skip, shown = [*skip, self.ctx.cwd], []
        found, cut, changed = system_private.private_paths(_SYSTEM, _of, skip, shown)
        masks, self.system_areas = system_private.around(found, [*skip, *shown])
        if changed:
            _SECRETS_STATE["dirty"] = True
            _secrets_cache(save=True)
        for top in cut:
            self.notes.append(
                f"{top} holds more than {system_private.MAX_ENTRIES} entries to look through "
                "for files only you may read: what was not looked at is hidden"
            )
        return masks

    def _host_socket_dirs(self) -> list[str]:
        """The directories of the sockets of host services this environment names (the
        editor's $NVIM, tmux, ssh-agent): wherever they are, hidden, not only where corral's
        deny list expects them (/run/user): with sandbox.policy.unix_sockets and a workspace
        that shows them (/tmp), a command could drive the editor (review r30b)."""
        found = []
        for name in ("NVIM", "NVIM_LISTEN_ADDRESS", "TMUX", "SSH_AUTH_SOCK"):
            path = self.ctx.env.get(name, "").split(",", 1)[0]
            if not (os.path.isabs(path) and os.path.lexists(path)):
                continue
            real = os.path.realpath(path)
            directory = os.path.dirname(real)
            shared = directory in ("/", PRIVATE_TMP, "/var/tmp", self.ctx.home)
            # (a socket straight in /tmp or $HOME: itself, not the place everyone uses)
            found.append(real if shared or is_within(self.ctx.cwd, directory) else directory)
        return found

    def _denied_in_workspace(self) -> list[str]:
        """Files of the workspace that `tools.permissions.deny` keeps from the file tools
        (`.env`, `*.pem`, ...): hidden from commands too, or `cat .env` would hand the model
        what the read tool refuses. Looked for a few levels down, past the usual bulky
        directories; where the search stops early, status says so."""
        patterns = tuple(self.config["tools.permissions.deny"])
        if not patterns:
            return []
        # Names alone (`.env`, `*.pem`): matched here; anything else by the glob rules, whose
        # regular expressions would cost every run (the check after a run included) ~10 ms.
        simple = [p for p in patterns if not any(c in p for c in "/[]\\") and "**" not in p]
        others = [p for p in patterns if p not in simple]
        others_compiled: list[Compiled] = []
        if others:
            from corral.toolguard.ops import globs

            others_compiled = [globs.compiled(p) for p in others]  # (once: r32b DENYGLOBS)

        # A name matched against each pattern costs every run (125,000 matches in a large
        # workspace): exact names by a set, `*.pem` by its suffix, `.env.*` by its prefix,
        # only the rest letter by letter.
        wild = [p for p in simple if "*" in p or "?" in p]
        exact = frozenset(p for p in simple if p not in wild)
        plain = [p for p in wild if "?" not in p and p.count("*") == 1]
        suffixes = tuple(p[1:] for p in plain if p.startswith("*"))
        prefixes = tuple(p[:-1] for p in plain if p.endswith("*") and not p.startswith("*"))
        rest = [p for p in wild if p[1:] not in suffixes and p[:-1] not in prefixes]

        # (with no other patterns, globs is neither imported nor looked up)
        def covered(path_rel: str, name: str) -> bool:
            return (
                name in exact
                or (bool(suffixes) and name.endswith(suffixes))
                or (bool(prefixes) and name.startswith(prefixes))
                or any(_name_matches(p, name) for p in rest)
                or any(globs.covers_compiled(c, path_rel) for c in others_compiled)
            )

        found: list[str] = []
        # The workspace, every other writable root and every directory home_allow shows:
        # `cat .env` there handed the model what the read tool refuses (r87b DENYGLOBROOTS);
        # each searched on its own budget (a home_allow area past it is searched in part,
        # and said: it is what you chose to show).
        tops: list[str] = [self.ctx.cwd]
        shown = self.paths_of("sandbox.policy.home_allow", existing_only=True)
        for top in (*self.rw_roots, *shown):
            if os.path.isdir(top) and not any(is_within(top, t) for t in tops):
                tops.append(top)
        for top in tops:
            if not self._denied_below(top, covered, len(rest) + len(others), found):
                break
        return found

    def _denied_below(
        self,
        top: str,
        covered: Callable[[str, str], bool],
        per_entry: int,
        found: list[str],
    ) -> bool:
        """The deny search below one directory (see _denied_in_workspace); False where it
        stopped with a problem."""
        from corral.sandbox.protect import gitguard

        level, seen = [(top, "")], 0
        # Each entry is matched against every pattern no set or affix lookup answers: bounded,
        # as the entries are (1000 globs with a / from a chat froze the editor, r32b).
        writable = self.writable(top)
        for _ in range(DENY_SEARCH_DEPTH):
            below = []
            for directory, rel in level:
                try:
                    entries = list(os.scandir(directory))
                except PermissionError:
                    # (one it cannot list, in a writable root and the user's own, is hidden
                    # whole: a command that made it so, `chmod 000 config`, would open it
                    # again inside and read its .env, r87b DENYCHMOD; another's it cannot
                    # open either)
                    if rel and writable and _owned(directory):
                        found.append(directory)
                    continue
                except OSError:
                    continue
                for entry in entries:
                    seen += 1
                    if seen * per_entry > DENY_MATCH_WORK:
                        self.problem(
                            "tools.permissions.deny",
                            f"{per_entry} patterns that are not plain names or `*.x` / `x.*` "
                            f"forms, each matched against every entry of {top}: too "
                            "many for a workspace this size; keep the deny list to names and "
                            "simple forms",
                        )
                        return False
                    if seen > DENY_SEARCH_LIMIT and not writable:
                        self.notes.append(
                            f"{top} (shown by sandbox.policy.home_allow) holds more than "
                            f"{DENY_SEARCH_LIMIT} entries in its top {DENY_SEARCH_DEPTH} levels: "
                            "files the deny list names below them are not hidden from commands"
                        )
                        return True
                    if seen > DENY_SEARCH_LIMIT:
                        # never hidden in part: a command could plant entries to push a
                        # `.env` out of the search (seventh review A7)
                        self.problem(
                            "tools.permissions.deny",
                            f"{top} holds more than {DENY_SEARCH_LIMIT} entries in its "
                            f"top {DENY_SEARCH_DEPTH} levels (past node_modules and the like): "
                            "corral cannot find every file the deny list names to hide it from "
                            "commands; open a narrower workspace, or empty "
                            "tools.permissions.deny",
                        )
                        return False
                    path_rel = f"{rel}/{entry.name}" if rel else entry.name
                    if covered(path_rel, entry.name):
                        found.append(entry.path)
                    elif entry.is_dir(follow_symlinks=False) and entry.name not in gitguard.BULKY:
                        below.append((entry.path, path_rel))
            level = below
        return True

    # -- phase 4: what stays as it is inside the writable roots ----------------------------
    def _in_roots(self, found: Protection) -> None:
        """Git (gitguard), protected names, and what a root's .envrc has direnv run."""
        protected = list(self.config["sandbox.policy.protected"])
        for name in protected:
            # A name is looked for inside each writable root: `../x` or `/x` would name a path
            # outside it (which the direct-writes sweep could then delete).
            parts = name.split("/")
            if name.startswith("/") or ".." in parts or not name.strip("/"):
                self.problem(
                    "sandbox.policy.protected",
                    f"{name!r} is not a name inside a writable root (no leading /, no ..)",
                )
        protected = [n for n in protected if not n.startswith("/") and ".." not in n.split("/")]
        git_names = [p[len(".git/") :] for p in protected if p.startswith(".git/")]
        writable = self.writable
        for root in self.rw_roots:
            if not os.path.isdir(root):
                continue
            guard = gitguard.protect(root, git_names, self.ctx.home, self.ctx.env)
            if guard.incomplete:
                self.problem(
                    "sandbox.policy.rw_paths",
                    f"{root} holds more than {gitguard.LIMIT} directories in its top "
                    f"{gitguard.DEPTH} levels, or more than {gitguard.MAX_TREES} work trees "
                    "(repositories, worktrees, submodules): corral cannot find every one to "
                    "keep its hooks and config as they are; open a narrower workspace (a "
                    "project, not a folder of everything)",
                )
            found.pinned.extend(d for d in guard.pinned if writable(d))
            # (outside the writable roots everything is read-only already, or hidden)
            found.read_only.extend(
                p for p in guard.read_only if writable(p) or writable(os.path.realpath(p))
            )
            found.create_dirs.extend(d for d in guard.create_dirs if writable(d))
            found.watch.extend(w for w in guard.watch if writable(w))
            found.links.extend(link for link in guard.links if writable(os.path.dirname(link[0])))
            # "<dir>/*": no new module of any name there (see changes.rules)
            found.module_dirs.extend(
                d + "/*" for d in dict.fromkeys(guard.module_dirs) if writable(d)
            )
            self.notes.extend(guard.notes)
            for config, runs, unknown in guard.unknown:
                self._unreadable(config, runs, unknown, config)
            listed: dict[str, list[str]] = {}
            try:  # one listing instead of a system call for each of ~90 names, most missing
                top = set(os.listdir(root))
            except OSError:
                top = None
            for name in protected:
                if "*" in name:
                    found.read_only.extend(_matching(root, name, listed))
                elif not name.startswith(".git/"):
                    path = os.path.join(root, name)
                    first, _, rest = name.partition("/")
                    exists = (
                        None  # (an odd spelling, `./x` or `x/`: looked at as written)
                        if top is None or (rest and first in top) or os.path.normpath(name) != name
                        else first in top
                    )
                    # missing ones (a new .nvim.lua, .envrc) are watched: removed if created
                    found.keep(path, exists=exists)
            for chat in self._open_chats():
                if is_within(chat, root):
                    # (with direct writes nothing else stops a command from rewriting its own
                    # chat without the frontmatter that narrowed it, review r31c)
                    found.keep(chat, OPEN_CHAT)
                    self._one_name(chat)
            self._direnv(root, found)
            from corral.sandbox.protect import toolconfigs  # only here: tomllib

            paths, module_dirs, unknown = toolconfigs.referenced(root)
            why = "named by a mise, cargo or Mercurial config of the workspace"
            self._keep_named(root, paths, found, unknown, why, project=root)
            found.module_dirs += [d for d in module_dirs if self.writable(d)]
            self._unreadable(
                root, "mise, cargo or Mercurial runs what its configs name", unknown,
                f"a mise, cargo or Mercurial config of {root}",
            )  # fmt: skip

    def chat_patterns(self) -> list[str]:
        """chat.patterns as fnmatch patterns (see paths.file_patterns), once."""
        if self._chat_patterns is None:
            try:
                self._chat_patterns = file_patterns(
                    self.config["chat.patterns"], self.ctx.home, self.ctx.env
                )
            except ValueError as e:
                self.problem("chat.patterns", str(e))
                self._chat_patterns = []
        return self._chat_patterns

    def _one_name(self, chat: str) -> None:
        """An open chat kept read-only by its path is still written through another name of
        the same file (a hard link a command made while it was closed, with direct writes:
        review r38c LINKCHAT): refused until the other names are gone."""
        try:
            links = os.lstat(chat).st_nlink
        except OSError:
            return
        if links > 1:
            self.problem(
                "sandbox.writes",
                f"the open chat {chat} has {links} hard links: a sandboxed command could "
                "rewrite its frontmatter through another name; remove the other names (`find "
                f"{os.path.dirname(chat)} -xdev -samefile {chat}` lists them)",
            )

    def _open_chats(self) -> list[str]:
        """The chat files open in the editor: the literal paths among chat.patterns (the
        editor appends each as paths.literal_pattern spells it; a pattern with a wildcard is
        no one file)."""
        found = []
        for pattern in self.chat_patterns():
            literal = _glob_literal(pattern)
            if literal is not None and os.path.isabs(literal):
                found.append(os.path.realpath(literal))
        return found

    def _keep_named(
        self,
        root: str,
        paths: list[str],
        found: Protection,
        unknown: list[str],
        why: str,
        project: str | None = None,
    ) -> None:
        """Keep what a host-run config names, and what a directory of it brings (the
        installation its programs load: pathdirs; `project`, the config's directory, whose
        own bin is the project's); one naming the whole root (`PATH_add .`, `PERL5LIB=.`)
        cannot be kept so, and is unknown (every change set held)."""
        from corral.sandbox.protect import pathdirs

        for path in paths:
            if path == root or is_within(root, path):
                unknown.append(f"{path} (the whole workspace)")
            elif self.writable(path):
                found.keep(path, why)
                if os.path.isdir(path) or not os.path.lexists(path):  # (a venv to be made)
                    for kept in pathdirs.brought(path, root, project=project):
                        if self.writable(kept):
                            found.keep(kept, why)

    def _direnv(self, root: str, found: Protection) -> None:
        envrc = os.path.join(root, ".envrc")
        if not os.path.lexists(envrc):
            return
        from corral.sandbox.protect import direnv  # (only here: its lexer imports re)

        found_by = direnv.referenced(envrc)
        unknown = found_by.unknown
        self.names += found_by.names
        self._keep_named(root, found_by.paths, found, unknown, f"named by {envrc}", project=root)
        # PYTHONPATH=src: where a Python of that prompt looks first (see changes.rules)
        found.module_dirs += [d for d in found_by.module_dirs if self.writable(d)]
        self._unreadable(envrc, "direnv runs it at your next prompt", unknown, envrc)

    def _unreadable(self, config: str, runs: str, unknown: list[str], which: str) -> None:
        """A host-run config doing what corral cannot read ahead (`unknown`): what it reaches
        could be any file of the workspace. With sandbox.unreadable_configs = "hold", every
        change set is held for review then; status says so either way."""
        if not unknown:
            return
        unknown = list(dict.fromkeys(unknown))
        more = f" and {len(unknown) - 8} more" if len(unknown) > 8 else ""
        what = f"{config}: {runs}, and what it reaches through {'; '.join(unknown[:8])}{more}"
        if self.config["sandbox.unreadable_configs"] == "hold" and (
            self.config["sandbox.writes"] != "direct"
        ):
            self.unreadable.append(which)
            self.notes.append(
                f"{what} cannot be read ahead: every change set here is held for review "
                "(to apply what passes the other rules instead: sandbox.unreadable_configs = "
                '"apply"; see :help corral-protected)'
            )
        else:
            self.notes.append(
                f"{what} cannot be known before: not protected (see :help corral-protected)"
            )

    def _on_path(self, found: Protection) -> None:
        """Directories on the PATH corral runs with (the user's shell's, or the editor's) that
        lie in a writable root: an activated venv's bin, node_modules/.bin. A program written
        there runs on the host at the next command of that name; they are kept as they are,
        like the directories an .envrc puts on PATH. So are those on LD_LIBRARY_PATH (a
        project's build/lib): a library written there is loaded by every host program. A
        relative entry (".", "") or a whole writable root cannot be kept so: said, not
        guessed."""
        for variable, what in (("PATH", "program"), ("LD_LIBRARY_PATH", "library")):
            for entry in self.ctx.env.get(variable, "").split(":"):
                self._search_dir(found, variable, what, entry)

    def _own_environment(self, found: Protection) -> None:
        """Every variable of the environment corral runs with, read as an .envrc's
        assignments are (direnv.assignment): what it names in a writable root is kept, with
        what a directory of programs brings (PERL5LIB, NODE_OPTIONS, GIT_CONFIG_VALUE_0,
        LUA_INIT, MAVEN_OPTS, PIP_CONFIG_FILE, EDITOR: a host program may read any of
        them). PATH, LD_LIBRARY_PATH and PYTHONPATH have their own rules (_on_path,
        _on_pythonpath); OWN_RULES lists the ones naming only where corral is."""
        from corral.sandbox.protect import direnv

        for variable, value in self.ctx.env.items():
            if variable in OWN_RULES or not value:
                continue  # (any other variable may be read by some host program: r28a)
            value = _resolved_words(value, self.rw_roots, self.real)
            for root in self.rw_roots:
                if root not in value:
                    continue  # (most values name nothing of a writable root)
                named = direnv.Referenced(root)
                direnv.assignment(variable, value, root, named, corral_env=True)
                why = f"named by ${variable} of the environment corral runs with"
                self._keep_named(root, named.paths, found, named.unknown, why)
                self._unreadable(
                    f"${variable}", "host programs read what it names", named.unknown,
                    f"${variable} of your environment",
                )  # fmt: skip

    def _search_dir(self, found: Protection, variable: str, what: str, entry: str) -> None:
        """One entry of a search path (see _on_path)."""
        if variable == "PATH" and entry.startswith("~"):
            entry = _tilde(entry, self.ctx.home)  # bash expands it when it looks a program up
        if not entry or not os.path.isabs(entry):
            # (an empty LD_LIBRARY_PATH is no entry at all)
            if (variable == "PATH" or entry) and any(
                is_within(self.ctx.cwd, r) for r in self.rw_roots
            ):
                where = "the current directory" if entry in ("", ".") else "relative"
                self.notes.append(
                    f"{variable} holds {entry or 'an empty entry'!r} ({where}): a {what} a "
                    "sandboxed command writes there is used on the host when you work there; "
                    f"remove it from {variable}"
                )
            return
        # The shell looks programs up by the entry as written: every symlink on its way
        # (`bin -> /opt/x`, `.venv -> .venv-3.12`) is kept pointing where it points, or
        # replacing it would plant a directory of programs.
        lexical = os.path.normpath(entry)
        if any(is_within(lexical, top) and lexical != top for top in self.rw_roots):
            before = len(found.links)
            self._links_on_the_way(lexical, found)
            for link, _ in found.links[before:]:
                self.notes.append(
                    f"{link} is a symlink on your {variable} ({entry}): kept pointing where it "
                    "points"
                )
        real = self.real(entry)
        root = next((r for r in self.rw_roots if is_within(real, r)), None)
        if root is None:
            return
        if real == root:
            self.notes.append(
                f"{variable} holds {real}, a writable root: a {what} a sandboxed command "
                "writes there is used on the host"
            )
            return
        (found.read_only if os.path.isdir(real) else found.watch).append(real)
        # What its programs load: an activated venv's or conda environment's whole prefix,
        # node_modules up to the root, where its links lead (pathdirs).
        from corral.sandbox.protect import pathdirs

        for kept in pathdirs.brought(real, root):
            if self.writable(kept):
                found.keep(kept)
        if variable != "PATH":
            self.notes.append(
                f"{real} is on your {variable}: kept as it is (a {what} written there would be "
                "loaded on the host)"
            )
            return
        venv = os.path.dirname(real)
        if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
            import glob

            # (the directories its .pth files name are looked for there: _pth_named)
            pattern = os.path.join(glob.escape(venv), "lib*", "python*", "site-packages")
            found.module_dirs += glob.glob(pattern)
        self.notes.append(
            f"{real} is on your PATH: kept as it is (a program written there would run on "
            "the host); installing commands into it (pip install in an activated venv) "
            "is refused: do it yourself, or start corral without it on PATH"
        )

    def _on_pythonpath(self, found: Protection) -> None:
        """Where Python finds modules before the standard library and installed packages: the
        PYTHONPATH entries (a project's `src`) and the current directory (`python -m`). A
        `sitecustomize.py` there runs when any Python starts, corral's own included, before
        corral can do anything; a `corral/` or `json.py` there replaces the real one. Those
        that run at start-up are kept as they are; the change-set check holds any new module
        named like a standard or installed one (see changes.rules)."""
        entries = [e or "." for e in self.ctx.env.get("PYTHONPATH", "").split(":") if e]
        for entry in entries:
            if not os.path.isabs(entry):
                # `.` or `src`: every Python reads it against its own directory, so any
                # directory of a writable root may be one Python looks in first
                for root in self.rw_roots:
                    if root + "/**" not in found.module_dirs:
                        found.module_dirs.append(root + "/**")
                self.notes.append(
                    f"PYTHONPATH holds {entry!r}, relative: each Python reads it against its "
                    "own directory; new modules named like standard ones are held everywhere"
                )
        for entry in [*entries, *self._pth_named(found), self.ctx.cwd]:
            lexical = os.path.normpath(os.path.join(self.ctx.cwd, entry))
            real = self.real(lexical)
            if not self.writable(real) or real in found.module_dirs:
                continue
            if real != lexical:  # `src -> lib`: the link keeps pointing where it points
                self._links_on_the_way(lexical, found)
            found.module_dirs.append(real)
            for name in imports.STARTUP_MODULES:
                for path in (os.path.join(real, name + ".py"), os.path.join(real, name)):
                    found.keep(path)

    def _pth_named(self, found: Protection) -> list[str]:
        """Directories the `.pth` files of corral's own Python, of an activated venv and of
        the workspace's own venv (`.venv`, `venv`: uv, Poetry and `.venv/bin/pip` run it
        without activating it) put on sys.path (an editable install's `src/`): inside a
        writable root, Python looks there as surely as in PYTHONPATH (review r47b: a new
        `src/brotlicffi.py` ran at `.venv/bin/pip --version`)."""
        import sys

        sites = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
        sites += [d for d in found.module_dirs if d.endswith("site-packages")]
        for venv in (os.path.join(self.ctx.cwd, n) for n in (".venv", "venv")):
            if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
                sites += _venv_sites(venv)
        named = []
        for site in dict.fromkeys(sites):
            try:
                # files only: directories named x.pth (a command can make thousands) are
                # neither read by Python nor counted here
                with os.scandir(site) as it:
                    pths = [e.name for e in it if e.name.endswith(".pth") and e.is_file()][
                        :MAX_PTH_FILES
                    ]
            except OSError:
                continue
            for name in pths:
                try:
                    raw = read_regular(os.path.join(site, name), MAX_PTH_BYTES)
                    lines = raw.decode("utf-8", errors="replace").splitlines()
                except OSError:
                    continue
                for line in lines:
                    line = line.strip()
                    if line and not line.startswith(("#", "import ", "import\t")):
                        path = os.path.normpath(os.path.join(site, line))
                        if self.writable(path):
                            named.append(path)
        return named

    def _never_writable(self, found: Protection) -> None:
        """Never-writable paths and corral's own: read-only where they exist; where they do
        not exist yet but could be created inside a writable root (~/.bash_profile with $HOME
        writable), watched. Missing hidden paths inside a writable root (~/.ssh with $HOME as
        the workspace) are watched too: nothing to mask, but no authorized_keys either."""
        never, errors = expand_lexical(self.config["sandbox.policy.deny_write"], self.ctx)
        for e in errors:
            self.problem("sandbox.policy.deny_write", e)
        for p in expand_lexical(self.config["sandbox.policy.deny_read"], self.ctx)[0]:
            if self.writable(p) and not os.path.lexists(p):
                found.watch.append(p)
        own_dirs = (dirs.user_config_dir(), dirs.user_cache_dir())
        own = own_paths()
        found.never = [*never, *own]
        for name, default in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share")):
            # Every program's configuration (fish, systemd user units, autostart, tmux, pip,
            # environment.d) and data (desktop entries, user units) lives there: inside a
            # writable root (a dotfiles repository as the workspace, or ~/.config linked
            # into one, the variable unset), all of it is kept.
            value = self.ctx.env.get(name, "")
            if not os.path.isabs(value) and self.ctx.home != "/":
                value = os.path.join(self.ctx.home, default)
            real = self.real(value) if os.path.isabs(value) else ""
            if real and real in self.rw_roots:
                self.notes.append(
                    f"the workspace is {name} ({real}) itself: every program's configuration "
                    "and start-up files in it are writable (what you chose to work on)"
                )
            elif real and self.writable(real):
                found.keep(real)
        home = self.ctx.home
        if home != "/" and self.writable(home):
            # $HOME writable (the workspace, or inside one): no list of start-up files is ever
            # whole, so every dot entry of it is kept as it is (the change-set check holds new
            # ones too); a hidden one stays hidden, and one holding a hidden path (~/.config
            # with ~/.config/gh) is kept all the same: the masks come after, over it
            hidden = expand_lexical(self.config["sandbox.policy.deny_read"], self.ctx)[0]
            try:
                names = sorted(n for n in os.listdir(home) if n.startswith("."))
            except OSError:
                names = []
            for name in names:
                path = os.path.join(home, name)
                if not any(is_within(path, h) for h in hidden):
                    found.read_only.append(path)
        for p in found.never:
            if not self.writable(p):
                self._linked_into_a_root(p, found)
                continue
            if os.path.lexists(p):
                found.read_only.append(p)
            elif p in own_dirs:
                found.create_dirs.append(p)  # corral's own: made empty now, read-only in runs
            elif self.writable(self.real(p)):
                found.watch.append(self.real(p))

    def _linked_into_a_root(self, path: str, found: Protection) -> None:
        """A start-up file outside the writable roots whose path leads into one (a dotfiles
        repository as the workspace: ~/.bashrc -> ~/dotfiles/bashrc, ~/.config ->
        ~/dotfiles/config, stow's layout): what the host reads is where it leads, kept as
        the file itself would be, with the links on the way. One that leads to a writable
        root itself (the workspace is ~/.config/nvim) is what you chose to work on."""
        real = self.real(path)
        if real == path or not self.writable(real) or real in self.rw_roots:
            return
        found.keep(real)
        self._links_on_the_way(path, found)

    def _state_dir(self, found: Protection, deny_read: list[tuple[str, bool]]) -> str:
        """corral's state (the audit log, change sets, the undo journal) tells what ran and was
        refused and holds what was written: not for a sandboxed command to read, nor, with
        $HOME writable, to rewrite. Masked last, so a writable root cannot undo it; made first
        when missing inside a writable root, so it cannot be planted either."""
        state_dir = os.path.realpath(dirs.user_state_dir())
        if os.path.isdir(state_dir):
            deny_read.append((state_dir, True))
        elif self.writable(state_dir):
            found.create_dirs.append(state_dir)
            deny_read.append((state_dir, True))
        return state_dir

    def _links_on_the_way(self, path: str, found: Protection) -> None:
        """Symlinks inside the writable roots on the way to a protected path (`env` of
        `env/local.sh`, a link to `envdir`), each link of a chain too (`.venv ->
        venvs/current -> py312`): protected as links, so a command cannot point one elsewhere
        and put its own file where the host reads the protected path. Followed one hop at a
        time, as the kernel does."""
        parts = [p for p in path.split("/") if p]
        current, hops = "/", 0
        while parts and hops < MAX_LINK_HOPS:
            part = parts.pop(0)
            if part == ".":
                continue
            if part == "..":
                current = os.path.dirname(current)
                continue
            candidate = os.path.join(current, part)
            if not os.path.islink(candidate):
                current = candidate
                continue
            hops += 1
            target = os.readlink(candidate)
            if self.writable(current):
                found.links.append((candidate, target))
            # the target's components, relative to the link's (real) directory
            parts = [p for p in target.split("/") if p] + parts
            if os.path.isabs(target):
                current = "/"

    def _resolve_read_only(self, found: Protection) -> None:
        kept = []
        for p in found.read_only:
            if not os.path.lexists(p):
                continue  # cheaper than resolving first: most protected names do not exist
            if os.path.islink(p) and self.writable(os.path.dirname(p)):
                found.links.append((p, os.readlink(p)))  # the target stays read-only, not the link
            real = real_existing(p)
            if real is not None and real != p:
                self._links_on_the_way(p, found)  # its own chain too: `.git/hooks -> ../h`
            if real is not None and self.writable(real):
                kept.append(real)
        found.read_only = kept

    def _pin(self, found: Protection, state_dir: str, hidden: list[str]) -> None:
        """Only a protected path itself is mounted read-only: a directory above it could still
        be renamed away and rebuilt. Every directory between a writable root and it is pinned,
        also those that do not exist yet above a directory made before the run (corral's config
        dir with no ~/.config yet): left unpinned, ~/.config could become a link. So is every
        directory above a hidden path inside a writable root: with direct writes `mv backend
        node_modules/` took `backend/.env` where the next run's search did not look, and
        that run read it (review r46b MOVEMASK)."""
        made = set(found.create_dirs)
        links = [link for link, _ in found.links]
        for p in (*found.read_only, *found.create_dirs, *found.watch, *links, *found.pinned,
                  state_dir, *hidden):  # fmt: skip
            owner = next((r for r in self.rw_roots if is_within(p, r)), None)
            parent = os.path.dirname(p)
            while owner is not None and parent != owner and is_within(parent, owner):
                if (os.path.isdir(parent) and not os.path.islink(parent)) or (
                    p in made and not os.path.lexists(parent)
                ):
                    found.pinned.append(parent)
                parent = os.path.dirname(parent)

    def protection(self, deny_read: list[tuple[str, bool]]) -> Protection:
        found = Protection()
        self._in_roots(found)
        self._on_path(found)
        self._own_environment(found)
        self._on_pythonpath(found)
        self._never_writable(found)
        state_dir = self._state_dir(found, deny_read)
        self._resolve_read_only(found)
        # Where a missing protected path would be written: through the host's links, if any;
        # and those links are protected themselves.
        canonical = canonical_all(found.watch)
        for lexical, real in zip(found.watch, canonical, strict=True):
            if lexical != real:
                self._links_on_the_way(os.path.dirname(lexical), found)
        found.watch = list(dict.fromkeys(canonical))
        self._pin(found, state_dir, [p for p, _ in deny_read])
        return found

    # -- phase 5: a private home -----------------------------------------------------------
    def home(self, deny_read: list[tuple[str, bool]]) -> tuple[list[str], list[str]]:
        """(hidden areas, paths shown again read-only inside them)."""
        ctx = self.ctx
        # (and the system's directories only you may read that hold the workspace: hidden,
        # the workspace shown again, see system_private.around)
        hidden = [PRIVATE_TMP, *self.system_areas]
        allowed_home: list[str] = []
        if self.config["sandbox.policy.home"] == "private":
            if ctx.home == "/" or is_within(ctx.home, ctx.cwd):
                self.notes.append("$HOME is inside the workspace: home = private hides nothing")
            else:
                hidden.append(ctx.home)
                allowed_home = [
                    p for p in self.paths_of("sandbox.policy.home_allow", existing_only=True)
                    if is_within(p, ctx.home) and not any(is_within(p, d) for d, _ in deny_read)
                ]  # fmt: skip
                self._credential_stores_in_allow_list()
                deny_read += self._secrets_inside(allowed_home, deny_read)
        shown_home = [
            ctx.home for area in self.system_areas
            if ctx.home not in hidden and is_within(ctx.home, area)
        ][:1]  # fmt: skip
        visible = [
            p for p in (ctx.cwd, *allowed_home, *shown_home)
            if any(is_within(p, h) for h in hidden) and not self.writable(p)
        ]  # fmt: skip
        return hidden, visible

    def _secrets_inside(
        self, shown: list[str], deny_read: list[tuple[str, bool]]
    ) -> list[tuple[str, bool]]:
        """What of the shown tool homes holds credentials, hidden with the rest of the home
        (review rounds 26 to 28), whatever the deny list names:
        - a file made private (no access for others, or none for group and others) in a
          directory others (or the group) may read, a shown file itself included (a 0600
          ~/.gitconfig holding a token): how credential tools mark what they write (uv's
          credentials, an age key). Not where the directory is private itself: a umask of
          077 makes everything so, no sign of a secret;
        - a file named as a config that carries registry credentials (CREDENTIAL_FILES: npm's
          global `etc/npmrc` of a Node prefix, a prefix's pip.conf, .condarc), any mode;
        - a git config naming a URL with a token in it: a clone's `.git/config`, and every
          file of a directory named git (~/.config/git and its include files).
        Each shown directory is looked through at any depth, past what tools download
        (SECRET_SKIP: only the files directly in it) and, below its top, an installation's
        trees of code (SECRET_SKIP_DEEP); one holding more than SECRET_ENTRIES entries there
        is hidden whole, said in status (fail closed: what was not looked at may hold one).
        Not in ~/.cache, where pip and uv write every entry through a private temporary
        file."""
        import stat

        cache = os.path.join(self.ctx.home, ".cache")
        denied = [d for d, _ in deny_read]
        found: list[tuple[str, bool]] = []

        home = self.ctx.home
        user_bins = (os.path.join(home, ".local", "bin"), os.path.join(home, "bin"))

        def secret(path: str, mode: int, open_dir: int) -> bool:
            # (not the deny list: the walk's cache serves calls with other lists, r29a)
            name = os.path.basename(path)
            if (
                stat.S_ISREG(mode)
                and any(path.startswith(b + "/") for b in user_bins)
                and _own_script(path)
            ):
                return True  # (scripts you wrote: free text, any secret in any spelling, r41b)
            # (`open_dir & 0o005`: others may list the directory; a file they may not read
            # there, 0600 or 0640, is kept from them on purpose: r30a)
            return stat.S_ISREG(mode) and (
                (open_dir & 0o005 and not mode & 0o004)
                or (open_dir and not mode & 0o077)
                or name in CREDENTIAL_FILES
                or name.endswith(SECRET_SUFFIXES)
            )

        for top in shown:
            if is_within(top, cache):
                continue
            try:
                mode = os.lstat(top).st_mode
                if not stat.S_ISDIR(mode):
                    if secret(
                        top, mode, os.stat(os.path.dirname(top)).st_mode & 0o055
                    ) or _holds_credentials(top):
                        found.append((top, False))
                    continue
            except OSError:
                continue
            if os.path.basename(top) in SECRET_SKIP:
                # (~/.m2/repository: downloaded artifacts; the files directly in it are seen)
                found += _secrets_directly_in(top, secret, [])
                continue
            in_top, complete = self._secrets_below(top, secret)
            if complete:
                found += in_top
            else:
                found.append((top, True))
                self.notes.append(
                    f"{top} holds more than {SECRET_ENTRIES} entries to look through for "
                    "credentials: hidden whole (remove it from sandbox.policy.home_allow, or "
                    "show what builds need of it by name)"
                )
        _secrets_cache(save=True)
        # (listed with the other hidden paths by status)
        return [(p, d) for p, d in found if not any(is_within(p, x) for x in denied)]

    @staticmethod
    def _secrets_below(
        top: str, secret: Callable[[str, int, int], bool]
    ) -> tuple[list[tuple[str, bool]], bool]:
        """(the secrets below `top`, whether all of it was looked at): see _secrets_inside."""
        import stat

        _secrets_cache()
        cached = _SECRETS.get(top)
        try:
            if cached is not None and all(_state(p, f) == st for p, f, st in cached[0]):
                return list(cached[1]), bool(cached[2])  # (nothing it rests on changed)
        except (TypeError, ValueError):
            pass  # (a cache that does not read is none)
        _SECRETS_STATE["dirty"] = True
        found: list[tuple[str, bool]] = []
        seen: Seen = []
        # (directory, depth, whether it is git's: every file of ~/.config/git and below it is
        # read, git's include files among them, r31a)
        stack = [(top, 0, os.path.basename(top) == "git")]
        looked = 0
        while stack:
            directory, depth, gits = stack.pop()
            try:
                info = os.stat(directory)
                open_dir = info.st_mode & 0o055
                entries = list(os.scandir(directory))
            except OSError:
                continue
            seen.append((directory, True, _of(info)))
            looked += len(entries)
            if looked > SECRET_ENTRIES:
                _SECRETS[top] = (seen, found, False)
                return found, False
            for entry in entries:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    if entry.name == ".git":  # a clone's remote URL may carry a token (r30a)
                        config = os.path.join(entry.path, "config")
                        seen.append((entry.path, True, _of(st)))
                        seen.append((config, False, _state(config, False)))
                        if _holds_credentials(config):
                            found.append((config, False))
                    elif entry.name in SECRET_DIRS:
                        found.append((entry.path, True))  # (hidden whole, unread)
                    elif entry.name in SECRET_SKIP:
                        found += _secrets_directly_in(entry.path, secret, seen)
                        if entry.name in CLONE_DIRS:
                            found += _clones_in(entry.path, seen)
                        if entry.name == "pkgs":
                            # (conda's repodata cache names each channel's URL, a private
                            # one's token in it, r56b CONDACACHE)
                            cache = os.path.join(entry.path, "cache")
                            found += _secrets_directly_in(cache, secret, seen)
                        if entry.name == "packages" and directory.endswith("/.opam-switch"):
                            # (opam's own record of each installed package, a pin's URL
                            # with its token too, r54b OPAMPKG: not downloads)
                            found += _records_in(entry.path, secret, seen)
                    elif depth == 0 or entry.name not in SECRET_SKIP_DEEP:
                        stack.append((entry.path, depth + 1, gits or entry.name == "git"))
                    elif entry.name in CLONE_DIRS:  # (a venv's src/: pip's clones, r46a)
                        found += _clones_in(entry.path, seen)
                    else:
                        seen.append((entry.path, True, _of(st)))
                        modules = os.path.join(entry.path, "node_modules")
                        if entry.name.startswith("lib") and os.path.isdir(modules):
                            # (a Node prefix's global packages: npm's list of what it
                            # installed from where, `.package-lock.json`, is read)
                            found += _secrets_directly_in(modules, secret, seen)
                        if entry.name.startswith("lib"):
                            found += _start_up_scripts(entry.path, seen)
                            found += _bundler_clones(entry.path, seen)
                    continue
                seen.append((entry.path, False, _of(st)))
                scripts = gits or any(d in SCRIPT_DIRS for d in directory.split("/")[-2:])
                if secret(entry.path, st.st_mode, open_dir) or (
                    stat.S_ISREG(st.st_mode)
                    and st.st_size <= SMALL_TEXT
                    and (
                        scripts
                        or not entry.name.endswith(CODE_SUFFIXES)
                        or entry.name in START_UP_SCRIPTS
                    )
                    and _holds_credentials(
                        entry.path,
                        code=scripts,
                        script=not scripts
                        and entry.name.endswith((*SHELL_SUFFIXES, *START_UP_SCRIPTS)),
                    )
                ):
                    found.append((entry.path, False))
        _SECRETS[top] = (seen, found, True)
        return found, True

    def _credential_stores_in_allow_list(self) -> None:
        """A credential store in the allowlist stays hidden all the same (masks come last):
        say so rather than let the user believe it is shown."""
        stores = set(expand_lexical(self.config["sandbox.policy.deny_read"], self.ctx)[0])
        allow_key = "sandbox.policy.home_allow"
        for p in expand_lexical(self.config[allow_key], self.ctx)[0]:
            # the entry or a directory above it, looked up: not every pair compared
            store = next((a for a in _self_and_parents(p) if a in stores), None)
            if store is not None:
                self.problem(
                    allow_key,
                    f"{p} is a credential store or inside one ({store}), hidden whatever "
                    "home_allow says; remove it here, or from sandbox.policy.deny_read to show it",
                )


def _owned(path: str) -> bool:
    """Whether this user owns `path` (and could chmod it)."""
    try:
        return os.lstat(path).st_uid == os.geteuid()
    except OSError:
        return False
