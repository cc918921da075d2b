"""Resolve a `Config` and the call's context into one immutable `Policy`.

Everything a backend needs is decided here, once per call: absolute, symlink-resolved paths,
which protected files exist, which deny paths exist (only existing paths are masked, so the
sandbox never leaves placeholder files behind), and the scrubbed environment. Backends read only
this value.
"""

from __future__ import annotations

import os

from corral import dirs, environment, gitguard, limits
from corral.backends import bwrap_args
from corral.errors import ConfigError, Problem
from corral.frozen import Frozen
from corral.paths import (
    Context,
    canonical_all,
    expand_all,
    expand_lexical,
    is_within,
    outermost,
    planted_link,
    real_existing,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from corral.config import Config

PRIVATE_TMP = "/tmp"
# Never inside a writable root: binding the host's copy writable would undo the sandbox's own
# /proc, /dev, private /tmp, or expose host sockets under /run.
SYSTEM_DIRS = ("/proc", "/dev", "/sys", "/run", PRIVATE_TMP)


def own_paths() -> list[str]:
    """What runs on the host later and must never be writable from inside: corral's own code,
    the environment it runs in (with the bundled bwrap), its plugin files when run from a
    checkout, and its config and cache (a config there could turn the sandbox off)."""
    import sys

    package = os.path.dirname(os.path.abspath(__file__))
    found = [package, sys.prefix, dirs.user_config_dir(), dirs.user_cache_dir()]
    root = os.path.dirname(os.path.dirname(package))  # a checkout: <root>/python/corral
    found += [os.path.join(root, d) for d in ("lua", "plugin", "rplugin", "scripts", ".ci")]
    return found


class Policy(Frozen):
    __slots__ = (
        "allow_privileged",
        "backend",
        "bwrap_extra_args",
        "bwrap_path",
        "chat_patterns",
        "create_dirs",
        "cwd",
        "deny_read",
        "enabled",
        "env",
        "hidden",
        "home",
        "links",
        "mode",
        "network",
        "never_writable",
        "notes",
        "pinned",
        "protected_names",
        "read_only",
        "rlimits",
        "rw_roots",
        "scrub_env",
        "timeout",
        "tmp_size",
        "undo_bytes",
        "unix_sockets",
        "visible",
        "watch",
        "writes",
    )
    enabled: bool  # False: run the command as it is (disabled, or mode "off")
    mode: str
    backend: str  # "auto", "required" or a backend name
    cwd: str
    home: str
    network: bool
    allow_privileged: bool
    rw_roots: tuple[str, ...]  # writable, outermost only
    pinned: tuple[str, ...]  # dirs inside rw roots bound onto themselves: cannot be renamed away
    read_only: tuple[str, ...]  # paths inside rw roots kept read-only (exist by run time)
    create_dirs: tuple[str, ...]  # made empty just before a run, then kept read-only
    watch: tuple[str, ...]  # protected paths that must not appear: swept after a run
    links: tuple[tuple[str, str], ...]  # protected symlinks: put back after a run if changed
    never_writable: tuple[str, ...]  # read-only in every run, whatever the mode (not resolved)
    hidden: tuple[str, ...]  # areas replaced by an empty tmpfs: /tmp, and $HOME when private
    visible: tuple[str, ...]  # read-only paths inside a hidden area shown again
    deny_read: tuple[tuple[str, bool], ...]  # (existing path, is a directory): masked last
    env: tuple[tuple[str, str], ...]
    scrub_env: bool  # False: unsandboxed commands get the host environment as it is
    unix_sockets: bool  # AF_UNIX sockets allowed (only ever without network)
    bwrap_path: str
    bwrap_extra_args: tuple[str, ...]
    rlimits: tuple[tuple[str, int], ...]  # (prlimit option, value): nproc, fsize, data
    tmp_size: int  # bytes of each tmpfs the sandbox writes to (/tmp, a private $HOME); 0: any
    timeout: int  # seconds for `corral run` without --timeout; 0: none
    notes: tuple[str, ...]  # what the user should know: skipped paths, unsandboxed reasons
    writes: str  # "apply", "review" or "direct": see corral.changes
    protected_names: tuple[str, ...]  # sandbox.policy.protected: refused at any depth
    chat_patterns: tuple[str, ...]  # chat files: refused in a change set
    undo_bytes: int  # what the undo journal keeps; 0: no limit

    def __init__(self, **values: object) -> None:
        self._set(**values)

    def as_dict(self) -> dict[str, object]:
        """Plain data (lists, dicts) for other languages: Lua, JSON."""
        out: dict[str, object] = {}
        for name, value in self._fields():
            if name == "deny_read":
                value = [path for path, _ in value]
            elif name == "env":
                value = dict(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out

    def could_have_written(self, path: str) -> bool:
        """Whether a sandboxed command, in this run or an earlier one, may have written `path`:
        inside the workspace (writable in another mode) or a writable root, and not among the
        paths that are read-only in every run. What such a command wrote must never be run on
        the host, unsandboxed."""
        real = os.path.realpath(path)
        roots = [*self.rw_roots]
        if not any(is_within(s, self.cwd) for s in SYSTEM_DIRS):
            roots.append(self.cwd)  # a workspace at / or /tmp can never be a writable root
        if not any(is_within(real, r) for r in roots):
            return False
        return not any(is_within(real, p) for p in self.never_writable)

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


def _self_and_parents(path: str) -> list[str]:
    found = [path]
    while (parent := os.path.dirname(found[-1])) != found[-1]:
        found.append(parent)
    return found


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
    extra_key = "sandbox.backends.bwrap.extra_args"
    problems.extend(
        Problem(extra_key, config.origins[extra_key], why)
        for why in bwrap_args.refused(config[extra_key])
    )
    rlimits, tmp_size = limits.resolve(config, problems)
    if not os.path.isdir(ctx.cwd):
        problems.append(Problem("cwd", "call", f"workspace {cwd!r} is not a directory"))

    # Writable areas of this or any earlier run: the workspace and every rw_paths entry as
    # written. No mount may be decided by following a link a sandboxed command made there.
    rw_lexical = expand_lexical(config["sandbox.policy.rw_paths"], ctx)[0]
    sandbox_areas = (ctx.cwd, *rw_lexical)
    allow_lexical = expand_lexical(config["sandbox.policy.home_allow"], ctx)[0]
    for key, entries in (
        ("sandbox.policy.rw_paths", rw_lexical),
        ("sandbox.policy.home_allow", allow_lexical),
    ):
        for p in entries:
            link = planted_link(p, sandbox_areas)
            if link is not None:
                problems.append(
                    Problem(
                        key, config.origins[key],
                        f"{p} {'is' if link == p else 'is reached through'} the symlink "
                        f"{link}, inside the workspace or a writable root, where a sandboxed "
                        "command could have made it point anywhere; name the directory it "
                        "should be instead",
                    )
                )  # fmt: skip
    rw_wanted = outermost(paths_of("sandbox.policy.rw_paths"))
    rw_roots: list[str] = []

    def writable(path: str) -> bool:
        return any(is_within(path, r) for r in rw_roots)

    for p in rw_wanted:
        system = next((s for s in SYSTEM_DIRS if is_within(s, p)), None)
        if system is not None:
            problems.append(
                Problem(
                    "sandbox.policy.rw_paths",
                    config.origins["sandbox.policy.rw_paths"],
                    f"{p} cannot be writable: it is or contains {system}; use a directory below it "
                    "(or mode read-only for a workspace at /)",
                )
            )
            continue
        if is_within(ctx.home, p):
            notes.append(
                f"writable root {p} contains your home directory: files there that are not "
                "protected (see :help corral-protected) can be changed"
            )
        if os.path.isdir(p) or os.path.isfile(p):
            rw_roots.append(p)
        else:
            notes.append(f"writable path {p} does not exist; skipped")

    deny_read = []
    for p in outermost(paths_of("sandbox.policy.deny_read", existing_only=True)):
        deny_read.append((p, os.path.isdir(p)))
        if is_within(ctx.cwd, p):
            notes.append(f"the workspace is inside denied path {p}: it is hidden in the sandbox")

    pinned: list[str] = []
    read_only: list[str] = []
    create_dirs: list[str] = []
    watch: list[str] = []
    links: list[tuple[str, str]] = []
    protected = config["sandbox.policy.protected"]
    git_names = [p[len(".git/") :] for p in protected if p.startswith(".git/")]
    for root in rw_roots:
        if not os.path.isdir(root):
            continue
        guard = gitguard.protect(root, git_names, ctx.home)
        pinned.extend(d for d in guard.pinned if writable(d))
        read_only.extend(guard.read_only)
        create_dirs.extend(d for d in guard.create_dirs if writable(d))
        watch.extend(w for w in guard.watch if writable(w))
        links.extend(link for link in guard.links if writable(os.path.dirname(link[0])))
        notes.extend(guard.notes)
        for name in protected:
            if not name.startswith(".git/"):
                path = os.path.join(root, name)
                # missing ones (a new .nvim.lua, .envrc) are watched: removed if created
                (read_only if os.path.lexists(path) else watch).append(path)
        envrc = os.path.join(root, ".envrc")
        if os.path.lexists(envrc):
            from corral import direnv  # only here: shlex imports re

            referenced, unknown = direnv.referenced(envrc)
            for path in referenced:
                if writable(path):
                    (read_only if os.path.lexists(path) else watch).append(path)
            if unknown:
                notes.append(
                    f"{envrc}: direnv runs it at your next prompt, and what it reaches through "
                    f"{', '.join(unknown[:3])} cannot be known before: not protected "
                    "(see :help corral-protected)"
                )
    # Never-writable paths: read-only where they exist; where they do not exist yet but could
    # be created inside a writable root (~/.bash_profile with $HOME writable), watched and
    # removed after the run.
    never, errors = expand_lexical(config["sandbox.policy.deny_write"], ctx)
    problems.extend(
        Problem("sandbox.policy.deny_write", config.origins["sandbox.policy.deny_write"], e)
        for e in errors
    )
    # A hidden path that does not exist yet, inside a writable root (~/.ssh with $HOME as the
    # workspace): nothing to mask, but it must not be created either (authorized_keys).
    for p in expand_lexical(config["sandbox.policy.deny_read"], ctx)[0]:
        if writable(p) and not os.path.lexists(p):
            watch.append(p)
    own_dirs = (dirs.user_config_dir(), dirs.user_cache_dir())
    own = own_paths()
    for p in (*never, *own):
        if not writable(p):
            continue
        if os.path.lexists(p):
            read_only.append(p)
        elif p in own_dirs:
            create_dirs.append(p)  # corral's own: made empty now, read-only during the run
        elif writable(os.path.realpath(p)):
            watch.append(os.path.realpath(p))
    # corral's state (the audit log, change sets being checked or held, the undo journal)
    # tells what ran and was refused and holds what was written: not for a sandboxed command
    # to read, nor, with $HOME writable, to rewrite. Masked last, so a writable root cannot
    # undo it; made first when missing inside a writable root, so it cannot be planted either.
    state_dir = os.path.realpath(dirs.user_state_dir())
    if os.path.isdir(state_dir):
        deny_read.append((state_dir, True))
    elif writable(state_dir):
        create_dirs.append(state_dir)
        deny_read.append((state_dir, True))
    kept_ro = []
    for p in read_only:
        if not os.path.lexists(p):
            continue  # cheaper than resolving first: most protected names do not exist
        if os.path.islink(p) and writable(os.path.dirname(p)):
            links.append((p, os.readlink(p)))  # the target is kept read-only; the link is not
        real = real_existing(p)
        if real is not None and writable(real):
            kept_ro.append(real)
    # Only the protected path itself is mounted read-only: a directory above it could still be
    # renamed away and rebuilt. Pin every directory between a writable root and it.
    # Directories that do not exist yet above a directory made before the run (corral's config
    # dir with no ~/.config yet) are made with it, so they are pinned too: left unpinned, a
    # command could swap ~/.config for a symlink to a config of its own.
    # Where a missing protected path would be written: through the host's links, if any.
    watch = list(dict.fromkeys(canonical_all(watch)))
    made = set(create_dirs)
    for p in (*kept_ro, *create_dirs, *watch, *(link for link, _ in links), *pinned, state_dir):
        owner = next((r for r in rw_roots if is_within(p, r)), None)
        parent = os.path.dirname(p)
        while owner is not None and parent != owner and is_within(parent, owner):
            if (os.path.isdir(parent) and not os.path.islink(parent)) or (
                p in made and not os.path.lexists(parent)
            ):
                pinned.append(parent)
            parent = os.path.dirname(parent)

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
                if is_within(p, ctx.home) and not any(is_within(p, d) for d, _ in deny_read)
            ]  # fmt: skip
            # A credential store in the allowlist stays hidden all the same (masks come last):
            # say so rather than let the user believe it is shown.
            stores = set(expand_lexical(config["sandbox.policy.deny_read"], ctx)[0])
            allow_key = "sandbox.policy.home_allow"
            for p in expand_lexical(config[allow_key], ctx)[0]:
                # the entry or a directory above it, looked up: not every pair compared
                store = next((a for a in _self_and_parents(p) if a in stores), None)
                if store is not None:
                    problems.append(
                        Problem(
                            allow_key, config.origins[allow_key],
                            f"{p} is a credential store or inside one ({store}), hidden whatever "
                            "home_allow says; remove it here, or from sandbox.policy.deny_read "
                            "to show it",
                        )
                    )  # fmt: skip
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
        pinned=tuple(sorted(set(pinned), key=lambda p: p.split("/"))),
        read_only=outermost([*kept_ro, *create_dirs]),
        create_dirs=tuple(create_dirs),
        watch=tuple(watch),
        links=tuple(dict(links).items()),
        never_writable=(*never, *own),
        hidden=tuple(hidden),
        visible=outermost(visible),
        deny_read=tuple(deny_read),
        env=tuple(
            sorted(
                environment.scrub(env, config["sandbox.policy.env"], network or not enabled).items()
            )
        ),
        scrub_env=bool(config["sandbox.policy.scrub_env"]),
        unix_sockets=bool(config["sandbox.policy.unix_sockets"]) and not network,
        bwrap_path=config["sandbox.backends.bwrap.path"],
        bwrap_extra_args=tuple(config["sandbox.backends.bwrap.extra_args"]),
        rlimits=rlimits,
        tmp_size=tmp_size,
        timeout=int(config["sandbox.limits.timeout"]),
        notes=tuple(notes),
        writes=config["sandbox.writes"],
        protected_names=tuple(protected),
        chat_patterns=tuple(config["chat.patterns"]),
        undo_bytes=int(config["sandbox.limits.undo_mb"]) * limits.MIB,
    )
