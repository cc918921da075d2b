"""Resolve a `Config` and the call's context into one immutable `Policy`.

Everything a backend needs is decided here, once per call: absolute, symlink-resolved paths,
which protected files exist, which deny paths exist (only existing paths are masked, so the
sandbox never leaves placeholder files behind), and the scrubbed environment. Backends read only
this value.
"""

from __future__ import annotations

import os

from corral import environment
from corral.errors import ConfigError, Problem
from corral.frozen import Frozen
from corral.paths import Context, expand_all, is_within, outermost

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from corral.config import Config

PRIVATE_TMP = "/tmp"


class Policy(Frozen):
    __slots__ = (
        "allow_privileged",
        "backend",
        "bwrap_extra_args",
        "bwrap_path",
        "cwd",
        "deny_read",
        "enabled",
        "env",
        "git_dirs",
        "hidden",
        "home",
        "mode",
        "network",
        "notes",
        "read_only",
        "rw_roots",
        "visible",
    )
    enabled: bool  # False: run the command as it is (disabled, or mode "off")
    mode: str
    backend: str  # "auto", "required" or a backend name
    cwd: str
    home: str
    network: bool
    allow_privileged: bool
    rw_roots: tuple[str, ...]  # writable, outermost only
    git_dirs: tuple[str, ...]  # .git directories inside rw roots: pinned so they cannot be swapped
    read_only: tuple[str, ...]  # existing paths inside rw roots kept read-only
    hidden: tuple[str, ...]  # areas replaced by an empty tmpfs: /tmp, and $HOME when private
    visible: tuple[str, ...]  # read-only paths inside a hidden area shown again
    deny_read: tuple[tuple[str, bool], ...]  # (existing path, is a directory): masked last
    env: tuple[tuple[str, str], ...]
    bwrap_path: str
    bwrap_extra_args: tuple[str, ...]
    notes: tuple[str, ...]  # what the user should know: skipped paths, unsandboxed reasons

    def __init__(self, **values: object) -> None:
        self._set(**values)

    def is_writable(self, path: str) -> bool:
        """Whether a sandboxed command can write `path` (resolved like the policy's paths).

        Follows the mount order of the bwrap backend, last mount first. True for paths in the
        sandbox's private /tmp: writable there, but that is not the host's /tmp, so host-side
        file operations must not take this as leave to write the host's /tmp."""
        if not self.enabled:
            return True
        real = os.path.realpath(os.path.join(self.cwd, path))
        if any(is_within(real, d) for d, _ in self.deny_read):
            return False
        if any(is_within(real, r) for r in self.read_only):
            return False
        if any(is_within(real, r) for r in self.rw_roots):
            return True
        if any(is_within(real, v) for v in self.visible):
            return False  # shown again read-only over a hidden area
        return is_within(real, PRIVATE_TMP)


def _git_protection(root: str, protected: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(.git dirs to pin, git files to keep read-only) for a repository or worktree at `root`."""
    dot_git = os.path.join(root, ".git")
    git_names = [p[5:] for p in protected if p.startswith(".git/")]
    if os.path.isdir(dot_git) and not os.path.islink(dot_git):
        return [dot_git], [os.path.join(dot_git, n) for n in git_names]
    if not os.path.isfile(dot_git):
        return [], []
    # A worktree: `.git` is a file naming the real git dir, whose `commondir` names the shared
    # one holding hooks and config. The pointer file itself must not be re-pointed.
    files = [dot_git]
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as f:
            first = f.readline().strip()
    except OSError:
        return [], files
    if not first.startswith("gitdir:"):
        return [], files
    gitdir = os.path.realpath(os.path.join(root, first[7:].strip()))
    common = gitdir
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as f:
            common = os.path.realpath(os.path.join(gitdir, f.readline().strip()))
    except OSError:
        pass
    files.append(os.path.join(gitdir, "config.worktree"))
    files.extend(os.path.join(common, n) for n in git_names)
    return [], files


def resolve(
    config: Config,
    cwd: str,
    env: Mapping[str, str],
    buffer_path: str | None = None,
) -> Policy:
    """Build the policy for one call; raises ConfigError naming every bad entry."""
    ctx = Context(cwd, env, buffer_path)
    mode = config["sandbox.mode"]
    enabled = bool(config["sandbox.enabled"]) and mode != "off"
    network = bool(config["sandbox.policy.network"])
    problems: list[Problem] = []
    notes: list[str] = []

    def paths_of(key: str, existing_only: bool = False) -> list[str]:
        found, errors = expand_all(config[key], ctx, existing_only)
        problems.extend(Problem(key, config.origins[key], e) for e in errors)
        return found

    for item in config["sandbox.policy.env"]:
        why = environment.invalid_extra(item)
        if why:
            problems.append(
                Problem("sandbox.policy.env", config.origins["sandbox.policy.env"], why)
            )
    if not os.path.isdir(ctx.cwd):
        problems.append(Problem("cwd", "call", f"workspace {cwd!r} is not a directory"))

    rw_wanted = outermost(paths_of("sandbox.policy.rw_paths"))
    rw_roots = []
    for p in rw_wanted:
        if os.path.isdir(p) or os.path.isfile(p):
            rw_roots.append(p)
        else:
            notes.append(f"writable path {p} does not exist; skipped")

    deny_read = []
    for p in outermost(paths_of("sandbox.policy.deny_read", existing_only=True)):
        deny_read.append((p, os.path.isdir(p)))
        if is_within(ctx.cwd, p):
            notes.append(f"the workspace is inside denied path {p}: it is hidden in the sandbox")

    git_dirs: list[str] = []
    read_only: list[str] = []
    protected = config["sandbox.policy.protected"]
    for root in rw_roots if os.path.isdir(ctx.cwd) else ():
        if not os.path.isdir(root):
            continue
        pinned, files = _git_protection(root, protected)
        git_dirs.extend(pinned)
        read_only.extend(files)
        read_only.extend(os.path.join(root, n) for n in protected if not n.startswith(".git/"))
    read_only.extend(paths_of("sandbox.policy.deny_write", existing_only=True))
    kept_ro = []
    for p in read_only:
        if not os.path.lexists(p):
            continue  # cheaper than resolving first: most protected names do not exist
        real = os.path.realpath(p)
        if os.path.lexists(real) and any(is_within(real, r) for r in rw_roots):
            kept_ro.append(real)

    hidden = [PRIVATE_TMP]
    home_private = config["sandbox.policy.home"] == "private"
    allowed_home: list[str] = []
    if home_private:
        if ctx.home == "/" or is_within(ctx.home, ctx.cwd):
            notes.append("$HOME is inside the workspace: home = private hides nothing")
        else:
            hidden.append(ctx.home)
            allowed_home = [
                p for p in paths_of("sandbox.policy.home_allow", existing_only=True)
                if is_within(p, ctx.home)
            ]  # fmt: skip
    visible = [
        p for p in (ctx.cwd, *allowed_home)
        if any(is_within(p, h) for h in hidden) and not any(is_within(p, r) for r in rw_roots)
    ]  # fmt: skip

    if problems:
        raise ConfigError(problems)
    return Policy(
        enabled=enabled,
        mode=mode,
        backend=config["sandbox.backend"],
        cwd=ctx.cwd,
        home=ctx.home,
        network=network,
        allow_privileged=bool(config["sandbox.policy.allow_privileged"]),
        rw_roots=tuple(rw_roots),
        git_dirs=tuple(git_dirs),
        read_only=outermost(kept_ro),
        hidden=tuple(hidden),
        visible=outermost(visible),
        deny_read=tuple(deny_read),
        env=tuple(sorted(environment.scrub(env, config["sandbox.policy.env"], network).items())),
        bwrap_path=config["sandbox.backends.bwrap.path"],
        bwrap_extra_args=tuple(config["sandbox.backends.bwrap.extra_args"]),
        notes=tuple(notes),
    )
