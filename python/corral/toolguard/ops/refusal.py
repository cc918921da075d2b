"""Why a guarded file operation was refused, and the sandbox policy's rules that refuse it.

One policy, two enforcement points: shell commands run inside bwrap with the Policy's mounts;
the chat's file tools run on the host and must refuse what those mounts would refuse. The host
has no mounts to lean on, so every rule here is checked on the resolved path (symlinks and `..`
followed): the file that would really be read or written.

With the sandbox disabled the shell is not confined, so neither are the file tools: no writable
roots, protected paths or hidden areas. Two guards stay: the tools.permissions globs (they exist
for the file tools alone) and sandbox.policy.deny_read, for reads and writes alike: it names
credential stores, whose content would leave the machine in the chat transcript and where a
written key (~/.ssh/authorized_keys) is a way in.
"""

from __future__ import annotations

import os

from corral.errors import CorralError
from corral.frozen import Frozen
from corral.paths import is_within
from corral.sandbox.resolution import PRIVATE_TMP

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from corral.sandbox.policy import Policy

RW_PATHS = "sandbox.policy.rw_paths"
DENY_READ = "sandbox.policy.deny_read"
DENY_WRITE = "sandbox.policy.deny_write"
PROTECTED = "sandbox.policy.protected"
HOME = "sandbox.policy.home"
BUILTIN = "builtin"  # the layer of rules no setting changes
# bwrap gives the sandbox a fresh /proc and /dev: the host's /proc shows the environment (API
# keys) of every process of the user, corral's own included; the file tools never read them,
# with the sandbox off too.
HOST_ONLY = ("/proc", "/dev")


class Refusal(Frozen):
    """What was refused (`code`, `message`), where (`path`), by which rule from which layer,
    and one line saying how to allow it (`hint`)."""

    __slots__ = ("code", "hint", "layer", "message", "path", "rule")
    code: str
    path: str
    rule: str
    layer: str
    hint: str
    message: str

    def __init__(
        self, code: str, path: str, rule: str, layer: str, hint: str, message: str = ""
    ) -> None:
        self._set(code=code, path=path, rule=rule, layer=layer, hint=hint, message=message)

    def as_dict(self) -> dict[str, str]:
        return {name: value for name, value in self._fields()}

    def replace(self, **changes: str) -> Refusal:
        values = dict(self._fields())
        values.update(changes)
        return Refusal(**values)

    def __str__(self) -> str:
        text = f"{self.path}: {self.message or self.code}"
        if self.rule:
            text += f" [{self.rule}" + (f", from {self.layer}]" if self.layer else "]")
        return f"{text}; {self.hint}" if self.hint else text


class OpError(CorralError):
    """A refused or failed file operation; `.refusal` says why and how to allow it."""

    def __init__(self, refusal: Refusal) -> None:
        self.refusal = refusal
        super().__init__(str(refusal))


def show(policy: Policy, path: str) -> str:
    """`path` as a user would write it in a config file: ~ for the home directory."""
    if policy.home != "/" and is_within(path, policy.home):
        return "~" + path[len(policy.home) :]
    return path


def _via(path: str, real: str) -> str:
    return f"{path} (through a symlink to {real})" if real != path else path


def check_read(policy: Policy, path: str, real: str, layers: Mapping[str, str]) -> Refusal | None:
    """The policy's refusal of reading `path` (resolving to `real`), or None."""
    denied = _denied(policy, path, real, layers)
    if denied is not None:
        return denied
    # Also with the sandbox off: the environment of every process (API keys), raw disks.
    system = next((d for d in HOST_ONLY if is_within(real, d)), None)
    if system is not None:
        return Refusal(
            "hidden",
            path,
            f"sandbox: fresh {system}",
            BUILTIN,
            f"the sandbox has its own {system}; the host's is never read by a chat tool",
            f"{_via(path, real)} is the host's {system}, which the sandbox does not show "
            "(it holds every process's environment, API keys included)",
        )
    kernel = _host_mounts(policy, path, real)
    if kernel is not None:
        return kernel
    if not policy.enabled:
        return None
    if os.geteuid() == 0:
        from corral.sandbox import system_private

        if not system_private.readable_without_caps(real):
            return Refusal(
                "denied-read", path, system_private.RULE, BUILTIN,
                "only the user can read it, outside the sandbox: the sandbox's root has no "
                "capabilities, and the file tools read no more than it",
                f"{_via(path, real)}: the sandbox's root could not read it (its mode, or a "
                "directory on the way, keeps it from a root without capabilities)",
            )  # fmt: skip
    area = next((h for h in policy.hidden if is_within(real, h)), None)
    if area is None or any(is_within(real, s) for s in (*policy.visible, *policy.rw_roots)):
        return None
    if area == PRIVATE_TMP:
        return Refusal(
            "hidden",
            path,
            RW_PATHS,
            layers.get(RW_PATHS, ""),
            f"move the file into the workspace, or add a directory below /tmp to {RW_PATHS}",
            f"{_via(path, real)} is in the host's /tmp; the sandbox has a private /tmp",
        )
    if not is_within(area, policy.home):
        from corral.sandbox import system_private

        # (a system directory only you may enter, holding the workspace: said in its own
        # words, not as the home, whose home_allow cannot help here, r81c AREAWORDS)
        return Refusal(
            "hidden", path, system_private.RULE, BUILTIN, system_private.HINT,
            f"{_via(path, real)} is in {area}, a directory only you may enter: the sandbox "
            "shows the workspace there, and nothing else of it",
        )  # fmt: skip
    return Refusal(
        "hidden",
        path,
        HOME,
        layers.get(HOME, ""),
        f'add "{show(policy, real)}" to sandbox.policy.home_allow, or set {HOME} = "visible"',
        f"{_via(path, real)} is in your home directory, which is private to the sandbox",
    )


def check_write(
    policy: Policy, path: str, real: str, layers: Mapping[str, str], entry: bool = False
) -> Refusal | None:
    """The policy's refusal of writing `path` (resolving to `real`), or None.

    `entry`: the directory entry itself is removed or renamed (delete, move), so it must not
    be, or hold, anything the sandbox keeps in place."""
    denied = _denied(policy, path, real, layers) or _host_mounts(policy, path, real)
    if denied is not None or not policy.enabled:
        return denied
    held = next((p for p in (*policy.read_only, *policy.watch) if is_within(real, p)), None)
    if held is not None:
        return _protected(policy, path, real, held, layers)
    if entry:
        refused = _holds_protected(policy, path, real, layers)
        if refused is not None:
            return refused
    # An entry is changed in its directory: a symlink there is removed, not followed.
    changed = os.path.dirname(real) if entry else real
    if any(is_within(real, r) for r in policy.rw_roots) and policy.is_writable(changed):
        return None
    if any(is_within(path, r) for r in policy.rw_roots):
        return Refusal(
            "symlink-escape",
            path,
            RW_PATHS,
            layers.get(RW_PATHS, ""),
            f'write to the target itself after adding "{_parent(policy, real)}" to {RW_PATHS}',
            f"{path} is a symlink (or is below one) leading to {real}, outside the writable roots",
        )
    if is_within(real, PRIVATE_TMP):
        return Refusal(
            "outside-writable-roots",
            path,
            RW_PATHS,
            layers.get(RW_PATHS, ""),
            f'write inside the workspace, or add "{_parent(policy, real)}" to {RW_PATHS}',
            f"{_via(path, real)} is in the host's /tmp, which is not writable: only the "
            "sandbox's private /tmp is",
        )
    return Refusal(
        "outside-writable-roots",
        path,
        RW_PATHS,
        layers.get(RW_PATHS, ""),
        f'add "{_parent(policy, real)}" to {RW_PATHS}',
        f"{_via(path, real)} is outside the writable roots"
        + (f" ({', '.join(policy.rw_roots)})" if policy.rw_roots else " (there are none)"),
    )


def _kernel_filesystem(path: str, real: str) -> Refusal | None:
    """Also with the sandbox off: a file of the kernel's filesystems mounted elsewhere (a
    chroot's proc, a build root's sys), which the sandbox masks (r81c PROCELSEWHERE)."""
    from corral.sandbox import kernel_mounts

    kind = kernel_mounts.kernel_filesystem(real)
    if kind is None:
        return None
    return Refusal(
        "hidden", path, "sandbox: kernel filesystems", BUILTIN,
        "only the user can read it, outside the sandbox: a chat tool never reads the kernel's "
        "files outside the sandbox's own /proc and /sys",
        f"{_via(path, real)} is on a {kind} filesystem mounted outside /proc, /sys and /dev "
        "(a chroot's or a build root's): it shows every process of the host, or the "
        "kernel's settings, and the sandbox masks it",
    )  # fmt: skip


def _host_mounts(policy: Policy, path: str, real: str) -> Refusal | None:
    """What the sandbox masks of the host's mounts, for read and write alike."""
    return _kernel_filesystem(path, real) or _automounted(policy, path, real)


def _automounted(policy: Policy, path: str, real: str) -> Refusal | None:
    """Also with the sandbox off: a file below an automount point the sandbox masks (an
    automounted /boot or /efi, whose root-only files the system walk never looked at: r87b
    AUTOMOUNTPRIV)."""
    from corral.sandbox import kernel_mounts

    point = kernel_mounts.automount_hidden(real, kernel_mounts.shown_paths(policy))
    if point is None:
        return None
    return Refusal(
        "hidden", path, "sandbox: automount points", BUILTIN,
        "only the user can read it, outside the sandbox: a chat tool never reads what an automount "
        "point stands for",
        f"{_via(path, real)} is below the automount point {point}, which the sandbox masks "
        "(a command there would have the host mount what it stands for)",
    )  # fmt: skip


def _parent(policy: Policy, real: str) -> str:
    """The directory to name in rw_paths: the deepest existing one holding `real`."""
    directory = os.path.dirname(real)
    while directory != "/" and not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    return show(policy, directory)


def _denied(policy: Policy, path: str, real: str, layers: Mapping[str, str]) -> Refusal | None:
    # A denied path that is a link (`.env -> config/prod.env`) is hidden where it leads (the
    # mount over it lands there): asked for by its own name, that file is refused as well.
    denied = next(
        (
            d
            for d, _ in policy.deny_read
            if is_within(real, d) or (os.path.islink(d) and is_within(real, os.path.realpath(d)))
        ),
        None,
    )
    if denied is None:
        return None
    from corral.sandbox import system_private

    if system_private.hides(denied, (policy.home, *policy.rw_roots)):
        return Refusal(
            "denied-read", path, system_private.RULE, BUILTIN, system_private.HINT,
            f"{_via(path, real)} is hidden by the sandbox",
        )  # fmt: skip
    return Refusal(
        "denied-read",
        path,
        DENY_READ,
        layers.get(DENY_READ, ""),
        f'remove "{show(policy, denied)}" from {DENY_READ} (it holds credentials)',
        # (not "~/.ssh is inside ~/.ssh", r72d WORDY)
        f"{_via(path, real)} is hidden by the sandbox"
        if real == denied
        else f"{_via(path, real)} is inside {denied}, which the sandbox hides",
    )


def _protected(
    policy: Policy, path: str, real: str, held: str, layers: Mapping[str, str]
) -> Refusal:
    from corral.sandbox.resolution import OPEN_CHAT, own_paths

    # (the name once, and no nested brackets before the hint's: r72d WORDY)
    what = (
        f"{_via(path, real)} is protected: it must not be changed from the sandbox"
        if held == real
        else f"{_via(path, real)} is protected: {held} must not be changed from the sandbox"
    )
    if any(is_within(held, os.path.realpath(p)) for p in own_paths()):
        return Refusal(
            "protected",
            path,
            "corral's own files",
            BUILTIN,
            "only the user edits corral's code, environment and configuration, never a chat's "
            "tool call",
            what,
        )
    never = next((p for p in policy.never_writable if is_within(held, os.path.realpath(p))), None)
    if never is not None:
        return Refusal(
            "protected",
            path,
            DENY_WRITE,
            layers.get(DENY_WRITE, ""),
            # (no parentheses: the summary puts the hint in its own, r72d/r77d WORDY)
            f'only the user edits it, outside the sandbox, or removes "{show(policy, never)}" '
            f"from {DENY_WRITE}",
            what,
        )
    if dict(policy.protected_why).get(held) == OPEN_CHAT:
        return Refusal(
            "protected",
            path,
            "chat.patterns",
            BUILTIN,
            "a chat's settings are changed by the user, in the editor",
            f"{_via(path, real)} is {OPEN_CHAT}, so the sandbox keeps it read-only",
        )  # fmt: skip (r51c CHATROHINT: "remove the entry from sandbox.policy.protected")
    root = next((r for r in policy.rw_roots if is_within(held, r)), None)
    name = os.path.relpath(held, root) if root else held
    return Refusal(
        "protected",
        path,
        PROTECTED,
        layers.get(PROTECTED, ""),
        # ("only the user": to the model, not "the user can allow it: edit it yourself",
        # which read as an order to it, r61c PROTECTHINT)
        f'only the user edits it, outside the sandbox, or removes the entry naming "{name}" '
        f"from {PROTECTED}",
        what,
    )


def _holds_protected(
    policy: Policy, path: str, real: str, layers: Mapping[str, str]
) -> Refusal | None:
    """Refuse removing or renaming a writable root, a pinned directory (.git, the directories
    above a protected file) or a directory holding protected paths: the sandbox keeps each of
    them in place as a mount point, so the host-side tool must too."""
    if real in policy.rw_roots:
        return Refusal(
            "protected",
            path,
            RW_PATHS,
            layers.get(RW_PATHS, ""),
            "a writable root cannot be removed or renamed from a chat: work inside it",
            f"{real} is a writable root",
        )
    links = (link for link, _ in policy.links)
    kept = (*policy.pinned, *links, *policy.read_only, *policy.watch)
    inside = next((p for p in kept if is_within(p, real)), None)
    if inside is None:
        return None
    return Refusal(
        "protected",
        path,
        PROTECTED,
        layers.get(PROTECTED, ""),
        "remove or rename it yourself, outside the chat",
        f"{_via(path, real)} is or holds {inside}, which the sandbox keeps in place",
    )
