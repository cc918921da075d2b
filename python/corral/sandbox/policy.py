"""Resolve a `Config` and the call's context into one immutable `Policy`.

Everything a backend needs is decided here, once per call: absolute, symlink-resolved paths,
which protected files exist, which deny paths exist (only existing paths are masked, so the
sandbox never leaves placeholder files behind), and the scrubbed environment. Backends read only
this value.
"""

from __future__ import annotations

import os

from corral.errors import ConfigError
from corral.frozen import Frozen
from corral.paths import PathContext, is_within, outermost
from corral.sandbox import environment, limits
from corral.sandbox.resolution import PRIVATE_TMP, SYSTEM_DIRS, Resolution

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from corral.config import Config


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
        "git_history",
        "hidden",
        "home",
        "ignored_files",
        "links",
        "mode",
        "module_dirs",
        "network",
        "network_allow",
        "network_private",
        "never_writable",
        "new_modules",
        "notes",
        "pinned",
        "project_configs",
        "protected_names",
        "protected_why",
        "read_only",
        "rlimits",
        "rw_roots",
        "scrub_env",
        "timeout",
        "tmp_size",
        "undo_bytes",
        "unix_sockets",
        "unreadable",
        "unreadable_configs",
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
    # with network off: what corral's proxy lets through (see corral.net); empty: nothing
    network_allow: tuple[str, ...]
    network_private: tuple[str, ...]
    allow_privileged: bool
    rw_roots: tuple[str, ...]  # writable, outermost only
    pinned: tuple[str, ...]  # dirs inside rw roots bound onto themselves: cannot be renamed away
    read_only: tuple[str, ...]  # paths inside rw roots kept read-only (exist by run time)
    create_dirs: tuple[str, ...]  # made empty just before a run, then kept read-only
    watch: tuple[str, ...]  # protected paths that must not appear: swept after a run
    links: tuple[tuple[str, str], ...]  # protected symlinks: put back after a run if changed
    never_writable: tuple[str, ...]  # read-only in every run, whatever the mode (not resolved)
    module_dirs: tuple[str, ...]  # where Python finds modules first, inside a writable root
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
    protected_why: tuple[tuple[str, str], ...]  # (path, what has the host run it), said held
    chat_patterns: tuple[str, ...]  # chat files: refused in a change set
    undo_bytes: int  # what the undo journal keeps; 0: no limit
    # why every change set is held for review: host-run configs corral cannot read ahead
    # (sandbox.unreadable_configs = "hold"; see Resolution._unreadable)
    unreadable: tuple[str, ...]
    unreadable_configs: str  # "hold" or "apply": also for the configs below a root's top
    new_modules: str  # "hold" or "apply": new top-level Python names (changes.module_rules)
    project_configs: str  # "hold" or "apply": config files at a project's top (project_top_rules)
    git_history: str  # "hold" or "check": new commits a ref would reach (changes.git_history)
    ignored_files: str  # "hold" or "apply": paths git ignores (changes.ignored_rules)

    def __init__(
        self,
        *,
        enabled: bool,
        mode: str,
        backend: str,
        cwd: str,
        home: str,
        network: bool,
        network_allow: tuple[str, ...],
        network_private: tuple[str, ...],
        allow_privileged: bool,
        rw_roots: tuple[str, ...],
        pinned: tuple[str, ...],
        read_only: tuple[str, ...],
        create_dirs: tuple[str, ...],
        watch: tuple[str, ...],
        links: tuple[tuple[str, str], ...],
        never_writable: tuple[str, ...],
        module_dirs: tuple[str, ...],
        hidden: tuple[str, ...],
        visible: tuple[str, ...],
        deny_read: tuple[tuple[str, bool], ...],
        env: tuple[tuple[str, str], ...],
        scrub_env: bool,
        unix_sockets: bool,
        bwrap_path: str,
        bwrap_extra_args: tuple[str, ...],
        rlimits: tuple[tuple[str, int], ...],
        tmp_size: int,
        timeout: int,
        notes: tuple[str, ...],
        writes: str,
        protected_names: tuple[str, ...],
        protected_why: tuple[tuple[str, str], ...],
        chat_patterns: tuple[str, ...],
        undo_bytes: int,
        unreadable: tuple[str, ...],
        unreadable_configs: str,
        new_modules: str,
        project_configs: str,
        git_history: str,
        ignored_files: str,
    ) -> None:
        # (keyword-only and typed: a field left out, misspelled or of the wrong type is an
        # error where the policy is made, not an AttributeError where a backend reads it)
        self._set(
            enabled=enabled,
            mode=mode,
            backend=backend,
            cwd=cwd,
            home=home,
            network=network,
            network_allow=network_allow,
            network_private=network_private,
            allow_privileged=allow_privileged,
            rw_roots=rw_roots,
            pinned=pinned,
            read_only=read_only,
            create_dirs=create_dirs,
            watch=watch,
            links=links,
            never_writable=never_writable,
            module_dirs=module_dirs,
            hidden=hidden,
            visible=visible,
            deny_read=deny_read,
            env=env,
            scrub_env=scrub_env,
            unix_sockets=unix_sockets,
            bwrap_path=bwrap_path,
            bwrap_extra_args=bwrap_extra_args,
            rlimits=rlimits,
            tmp_size=tmp_size,
            timeout=timeout,
            notes=notes,
            writes=writes,
            protected_names=protected_names,
            protected_why=protected_why,
            chat_patterns=chat_patterns,
            undo_bytes=undo_bytes,
            unreadable=unreadable,
            unreadable_configs=unreadable_configs,
            new_modules=new_modules,
            project_configs=project_configs,
            git_history=git_history,
            ignored_files=ignored_files,
        )

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


def resolve(
    config: Config,
    cwd: str,
    env: Mapping[str, str],
    buffer_path: str | None = None,
) -> Policy:
    """Build the policy for one call; raises ConfigError naming every bad entry (the phases
    are in corral.sandbox.resolution)."""
    ctx = PathContext(cwd, env, buffer_path)
    mode = config["sandbox.mode"]
    enabled = bool(config["sandbox.enabled"]) and mode != "off"
    network = bool(config["sandbox.policy.network"])
    build = Resolution(config, ctx)
    rlimits, tmp_size = build.check_values(cwd)
    allow, private = build.network_allow(enabled and not network)
    rw_roots = build.writable_roots()
    deny_read = build.deny_read()
    kept = build.protection(deny_read)
    hidden, visible = build.home(deny_read)
    if (
        enabled
        and config["sandbox.policy.unix_sockets"]
        and not network
        and os.path.realpath(ctx.cwd) == PRIVATE_TMP
    ):
        # every host service listening in /tmp (the editor's socket, tmux, X11) would be
        # one connect() away (review r30b)
        build.problem(
            "sandbox.policy.unix_sockets",
            "a workspace at /tmp shows the host's sockets there: choose a directory below "
            "it, or leave unix_sockets off",
        )
    chats = build.chat_patterns()
    if build.problems:
        raise ConfigError(build.problems)
    return Policy(
        enabled=enabled,
        mode=mode,
        backend=config["sandbox.backend"],
        cwd=ctx.cwd,
        home=ctx.home,
        network=network,
        network_allow=allow,
        network_private=private,
        allow_privileged=bool(config["sandbox.policy.allow_privileged"]),
        rw_roots=tuple(rw_roots),
        pinned=tuple(sorted(set(kept.pinned), key=lambda p: p.split("/"))),
        read_only=outermost([*kept.read_only, *kept.create_dirs]),
        create_dirs=tuple(kept.create_dirs),
        watch=tuple(kept.watch),
        links=tuple(dict(kept.links).items()),
        module_dirs=tuple(kept.module_dirs),
        never_writable=tuple(kept.never),
        hidden=tuple(hidden),
        visible=outermost(visible),
        deny_read=tuple(deny_read),
        env=tuple(
            sorted(
                environment.scrub(
                    env, config["sandbox.policy.env"], network or not enabled, bool(allow)
                ).items()
            )
        ),
        scrub_env=bool(config["sandbox.policy.scrub_env"]),
        unix_sockets=bool(config["sandbox.policy.unix_sockets"]) and not network,
        bwrap_path=config["sandbox.backends.bwrap.path"],
        bwrap_extra_args=tuple(config["sandbox.backends.bwrap.extra_args"]),
        rlimits=rlimits,
        tmp_size=tmp_size,
        timeout=int(config["sandbox.limits.timeout"]),
        notes=tuple(build.notes),
        writes=config["sandbox.writes"],
        protected_names=tuple(dict.fromkeys([*config["sandbox.policy.protected"], *build.names])),
        protected_why=tuple(sorted(kept.why.items())),
        chat_patterns=tuple(chats),
        undo_bytes=int(config["sandbox.limits.undo_mb"]) * limits.MIB,
        unreadable=tuple(build.unreadable),
        unreadable_configs=config["sandbox.unreadable_configs"],
        new_modules=config["sandbox.new_modules"],
        project_configs=config["sandbox.project_configs"],
        git_history=config["sandbox.git_history"],
        ignored_files=config["sandbox.ignored_files"],
    )
