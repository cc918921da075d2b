"""What every backend provides, and what wrapping produces."""

from __future__ import annotations

from corral.frozen import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from corral.sandbox.policy import Policy


class Wrapped(Frozen):
    """A command ready to start: run `argv` with exactly `env`, nothing else inherited.

    `status_fd`: bwrap reports the child's start and exit as JSON on this descriptor, which the
    launcher must pass through (it tells a sandbox set-up failure from the command's own exit).
    `fds`: further descriptors the launcher must pass through (the seccomp program).
    `stage`: where the command's writes land; `corral.changes.finish` must run after it (the
    argv of a self-contained launch does so itself).
    `bridge`: (bwrap's --info-fd, read end; its --block-fd, write end) when the launcher must
    open the way into the sandbox's network for corral's proxy before the command starts, with
    `network` (network_allow, network_private) saying what the proxy lets through.
    """

    __slots__ = (
        "argv",
        "backend",
        "bridge",
        "env",
        "fds",
        "fifos",
        "network",
        "notes",
        "sandboxed",
        "stage",
        "status_fd",
    )
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    backend: str
    sandboxed: bool
    status_fd: int | None
    fds: tuple[int, ...]
    notes: tuple[str, ...]
    stage: str | None  # the staging area of this run's change set (see corral.changes)
    bridge: tuple[int, int] | None
    fifos: tuple[str, str, str] | None  # the same for an argv another program starts (net.hub)
    network: tuple[tuple[str, ...], tuple[str, ...]]

    def __init__(
        self,
        argv: Sequence[str],
        env: Sequence[tuple[str, str]],
        backend: str,
        sandboxed: bool,
        status_fd: int | None = None,
        fds: Sequence[int] = (),
        notes: Sequence[str] = (),
        stage: str | None = None,
        bridge: tuple[int, int] | None = None,
        fifos: tuple[str, str, str] | None = None,
        network: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
    ) -> None:
        self._set(
            stage=stage,
            bridge=bridge,
            fifos=fifos,
            network=network,
            argv=tuple(argv),
            env=tuple(env),
            backend=backend,
            sandboxed=sandboxed,
            status_fd=status_fd,
            fds=tuple(fds),
            notes=tuple(notes),
        )

    def self_contained(self) -> list[str]:
        """The argv for a program that starts it without our launcher (jobstart, a script):
        `env -i NAME=value ...` first, so bwrap (and so the sandbox) gets only the scrubbed
        environment whoever starts it. env comes from a system directory, never from PATH
        (raises BackendError when there is none)."""
        from corral.sandbox import hostbin

        env_bin = hostbin.require("env")
        return [env_bin, "-i", *(f"{k}={v}" for k, v in self.env), *self.argv]


class Backend:
    """A sandbox implementation. Subclasses set `name` and `priority` and override the methods.

    `capabilities` is data, not behaviour: callers ask it (e.g. `can_auto_approve_if_sandboxed`)
    instead of checking backend names.
    """

    name: str = ""
    priority: int = 0
    capabilities: frozenset[str] = frozenset({"can_auto_approve_if_sandboxed"})

    def detection_key(self, policy: Policy) -> Hashable:
        """What availability depends on; the registry re-detects when this changes."""
        return ()

    def configured(self, policy: Policy) -> bool:
        """Whether the user configured this backend explicitly (its binary path, say): then
        "auto" must not fall back to running unsandboxed when it does not work."""
        return False

    def available(self, policy: Policy) -> str | None:
        """None when usable; otherwise the real reason it is not."""
        raise NotImplementedError

    def wrap(self, policy: Policy, argv: Sequence[str], *, launcher_fds: bool = False) -> Wrapped:
        """The wrapped command. With `launcher_fds`, the caller can pass descriptors through
        (`corral run` can; an argv handed to another program cannot). A backend with the
        `network_proxy` capability also takes `proxied=True`: the caller runs a
        corral.net.hub for the argv's network (Neovim's Python host does)."""
        raise NotImplementedError

    def describe(self, policy: Policy) -> dict[str, str]:
        """Facts for status (binary path, version)."""
        return {}
