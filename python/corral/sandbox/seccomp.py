"""A small seccomp filter for bwrap's `--seccomp FD`, assembled as classic BPF.

Refused with EPERM in every sandbox:
- io_uring (its operations bypass syscall filtering and it is a frequent kernel-bug surface),
- kernel keyrings (keyctl, add_key, request_key: shared state outside the sandbox's namespaces),
- userfaultfd (an exploit primitive no build tool needs),
- the x32 ABI and syscalls from a foreign architecture (ways around a filter keyed on numbers).
- AF_VSOCK sockets (a way to services of the hypervisor that no network namespace separates),
- socketpairs of any type but stream and seqpacket: a datagram pair (SOCK_DGRAM, and SOCK_RAW,
  which AF_UNIX turns into SOCK_DGRAM) sends with sendto()/sendmsg() to any datagram socket on
  the host (journald, a syslog socket, an agent's), and seccomp cannot see the address
  sendmsg() carries. Stream and seqpacket pairs stay allowed: the kernel refuses or ignores an
  address on them. The type is an allowlist, so no other spelling of "datagram" gets through.
- prctl(PR_SET_PDEATHSIG): the command is the sandbox's pid 1 (bwrap --as-pid-1) and dies with
  bwrap by this signal (--die-with-parent); clearing or replacing it would let the sandbox
  outlive a killed run and go on writing after the run was reported finished.
- setting the setuid or setgid bit (chmod, fchmod, fchmodat, fchmodat2; open, openat and creat
  that create a file; mknod, mknodat): with direct writes (`sandbox.writes = "direct"`, or an
  old bwrap without overlays) the file lands in the workspace as it is, and any local user
  could run it as the command's user, as root when corral runs as root (review r64b
  SUIDDIRECT). openat2, whose mode seccomp cannot read, answers ENOSYS: callers fall back to
  openat. With change sets (which drop both bits at the apply) and no file bound writable
  by name, a chmod may set the setgid bit: a setgid directory is everyday work (git's
  `core.sharedRepository` sets it on every directory of .git/objects; every new directory
  below a setgid one has it, and `cp -a` or `tar` set it back: r66c SGIDDIRS).
- the terminal ioctls that reach beyond the command: TIOCSTI and TIOCLINUX (typing into the
  terminal, pasting its selection) and TIOCSETD (a line discipline that outlives the run: the
  user's shell got no input or output after it, r64b LDISC).
- new user namespaces: unshare() and clone() with CLONE_NEWUSER (EPERM), and clone3(), whose
  flags are in memory a filter cannot read (ENOSYS: libc falls back to clone). bwrap's own
  `--disable-userns` runs the command in a nested user namespace, where the launcher that
  makes the sandbox's mounts private could not (see backends/bwrap.private_mounts); this
  does its work instead.
And, unless `sandbox.policy.unix_sockets` allows them in a mode without network: creating
AF_UNIX sockets. A read-only mount does not stop connect(2), so any host service with a socket
the sandbox can see (a Docker socket under ~/.colima, an ssh agent, the editor's own server
socket under $TMPDIR) would be reachable; and with the network on, abstract unix sockets belong
to the shared network namespace (X11, D-Bus). socketpair() stays allowed: its two ends reach
nothing but each other (Python's multiprocessing, asyncio and subprocess use it).

No libseccomp: the program is a few instructions, and this keeps the dependency list short.
"""

from __future__ import annotations

import contextlib
import os
import sys

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
NR, ARCH, ARG0_LOW, ARG1_LOW = 0, 4, 16, 24  # ARGn_LOW: little-endian low half of args[n]
ARG2_LOW, ARG3_LOW = 32, 40

LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K
AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
SOCK_TYPE_MASK = 0xF  # the type without SOCK_NONBLOCK and SOCK_CLOEXEC
SOCK_STREAM, SOCK_SEQPACKET = 1, 5  # the only socketpair types allowed
PR_SET_PDEATHSIG = 1
CLONE_NEWUSER = 0x10000000
RET_ALLOW = 0x7FFF0000
RET_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM
RET_ENOSYS = 0x00050000 | 38  # SECCOMP_RET_ERRNO | ENOSYS
SET_ID_BITS = 0o6000  # S_ISUID | S_ISGID
SET_UID = 0o4000
CHMODS = frozenset({"chmod", "fchmod", "fchmodat", "fchmodat2"})
CREATES = 0o100 | 0o20000000  # O_CREAT | __O_TMPFILE (the same on x86_64 and aarch64)
TERMINAL_IOCTLS = (0x5412, 0x541C, 0x5423)  # TIOCSTI, TIOCLINUX, TIOCSETD
AF_UNIX = 1
AF_VSOCK = 40  # host/hypervisor sockets: not separated by network namespaces
X32_BIT = 0x40000000

# machine -> (AUDIT_ARCH_*, syscall numbers by name)
ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "socket": 41,
            "socketpair": 53,
            "prctl": 157,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "userfaultfd": 323,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "ioctl": 16,
            "open": 2,
            "openat": 257,
            "creat": 85,
            "chmod": 90,
            "fchmod": 91,
            "fchmodat": 268,
            "fchmodat2": 452,
            "mknod": 133,
            "mknodat": 259,
            "openat2": 437,
            "unshare": 272,
            "clone": 56,
            "clone3": 435,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "socket": 198,
            "socketpair": 199,
            "prctl": 167,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "userfaultfd": 282,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "ioctl": 29,
            "openat": 56,
            "fchmod": 52,
            "fchmodat": 53,
            "fchmodat2": 452,
            "mknodat": 33,
            "openat2": 437,
            "unshare": 97,
            "clone": 220,
            "clone3": 435,
        },
    ),
}
# riscv64 numbers its calls as aarch64 does (both take asm-generic's table)
ARCHES["riscv64"] = (0xC00000F3, ARCHES["aarch64"][1])
# where each call's mode is (the offset of its argument), and where its open flags are, for
# those that create a file only with O_CREAT or O_TMPFILE
MODE_ARGS = {
    "chmod": (ARG1_LOW, None), "fchmod": (ARG1_LOW, None), "fchmodat": (ARG2_LOW, None),
    "fchmodat2": (ARG2_LOW, None), "creat": (ARG1_LOW, None), "mknod": (ARG1_LOW, None),
    "mknodat": (ARG2_LOW, None), "open": (ARG2_LOW, ARG1_LOW), "openat": (ARG3_LOW, ARG2_LOW),
}  # fmt: skip
ALWAYS_REFUSED = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "userfaultfd",
)


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    """struct sock_filter {u16 code; u8 jt; u8 jf; u32 k;} in native byte order."""
    order = sys.byteorder
    return code.to_bytes(2, order) + bytes((jt, jf)) + k.to_bytes(4, order)


_programs: dict[tuple[str, bool, bool], bytes | None] = {}
_verified: dict[str, tuple[int, int, int]] = {}  # filter file -> (inode, size, mtime) seen


def program(machine: str, block_unix_sockets: bool, setgid_ok: bool = False) -> bytes | None:
    """The filter for `machine` (as os.uname() names it), or None where it is not known;
    `setgid_ok`: a chmod may set the setgid bit (see the module's note)."""
    key = (machine, block_unix_sockets, setgid_ok)
    if key not in _programs:
        _programs[key] = _assemble(machine, block_unix_sockets, setgid_ok)
    return _programs[key]


def _assemble(machine: str, block_unix_sockets: bool, setgid_ok: bool) -> bytes | None:
    if machine not in ARCHES:
        return None
    audit_arch, numbers = ARCHES[machine]
    refused = [numbers[name] for name in ALWAYS_REFUSED]
    out = [
        _insn(LD_W_ABS, 0, 0, ARCH),
        _insn(JEQ_K, 1, 0, audit_arch),
        _insn(RET_K, 0, 0, RET_EPERM),
        _insn(LD_W_ABS, 0, 0, NR),
    ]
    if machine == "x86_64":
        out += [_insn(JGE_K, 0, 1, X32_BIT), _insn(RET_K, 0, 0, RET_EPERM)]
    for nr in refused:
        out += [_insn(JEQ_K, 0, 1, nr), _insn(RET_K, 0, 0, RET_EPERM)]
    if "openat2" in numbers:
        out += [_insn(JEQ_K, 0, 1, numbers["openat2"]), _insn(RET_K, 0, 0, RET_ENOSYS)]
    # a new user namespace: clone3 answers ENOSYS, unshare and clone with CLONE_NEWUSER EPERM
    out += [_insn(JEQ_K, 0, 1, numbers["clone3"]), _insn(RET_K, 0, 0, RET_ENOSYS)]
    for name in ("unshare", "clone"):
        out += [
            _insn(JEQ_K, 0, 5, numbers[name]),
            _insn(LD_W_ABS, 0, 0, ARG0_LOW),
            _insn(AND_K, 0, 0, CLONE_NEWUSER),
            _insn(JEQ_K, 0, 1, 0),
            _insn(RET_K, 0, 0, RET_ALLOW),
            _insn(RET_K, 0, 0, RET_EPERM),
        ]
    # a mode with the setuid or setgid bit: refused (a block per call, each ending in a return)
    for name, (mode_arg, flags_arg) in MODE_ARGS.items():
        if name not in numbers:
            continue
        block = []
        if flags_arg is not None:  # (no file created: the mode is not read, whatever it holds)
            block += [
                _insn(LD_W_ABS, 0, 0, flags_arg),
                _insn(AND_K, 0, 0, CREATES),
                _insn(JEQ_K, 3, 0, 0),
            ]
        bits = SET_UID if setgid_ok and name in CHMODS else SET_ID_BITS
        block += [
            _insn(LD_W_ABS, 0, 0, mode_arg),
            _insn(AND_K, 0, 0, bits),
            _insn(JEQ_K, 0, 1, 0),
            _insn(RET_K, 0, 0, RET_ALLOW),
            _insn(RET_K, 0, 0, RET_EPERM),
        ]
        out += [_insn(JEQ_K, 0, len(block), numbers[name]), *block]
    # ioctl(fd, TIOCSTI / TIOCLINUX / TIOCSETD, ...): refused; any other allowed
    ioctls = len(TERMINAL_IOCTLS)
    out += [_insn(JEQ_K, 0, ioctls + 3, numbers["ioctl"]), _insn(LD_W_ABS, 0, 0, ARG1_LOW)]
    for k, request in enumerate(TERMINAL_IOCTLS):
        out.append(_insn(JEQ_K, ioctls - k, 0, request))
    out += [_insn(RET_K, 0, 0, RET_ALLOW), _insn(RET_K, 0, 0, RET_EPERM)]
    # prctl(PR_SET_PDEATHSIG, ...): refused; any other prctl allowed
    out += [
        _insn(JEQ_K, 0, 4, numbers["prctl"]),
        _insn(LD_W_ABS, 0, 0, ARG0_LOW),
        _insn(JEQ_K, 0, 1, PR_SET_PDEATHSIG),
        _insn(RET_K, 0, 0, RET_EPERM),
        _insn(RET_K, 0, 0, RET_ALLOW),
    ]
    # socketpair(..., SOCK_STREAM or SOCK_SEQPACKET [|flags], ...) allowed; any other refused
    out += [
        _insn(JEQ_K, 0, 6, numbers["socketpair"]),
        _insn(LD_W_ABS, 0, 0, ARG1_LOW),
        _insn(AND_K, 0, 0, SOCK_TYPE_MASK),
        _insn(JEQ_K, 2, 0, SOCK_STREAM),
        _insn(JEQ_K, 1, 0, SOCK_SEQPACKET),
        _insn(RET_K, 0, 0, RET_EPERM),
        _insn(RET_K, 0, 0, RET_ALLOW),
    ]
    families = [AF_VSOCK, AF_UNIX] if block_unix_sockets else [AF_VSOCK]
    # not socket(): jump over the family checks to "allow"
    skip = 2 * len(families) + 1
    out += [_insn(JEQ_K, 0, skip, numbers["socket"]), _insn(LD_W_ABS, 0, 0, ARG0_LOW)]
    for family in families:
        out += [_insn(JEQ_K, 0, 1, family), _insn(RET_K, 0, 0, RET_EPERM)]
    out.append(_insn(RET_K, 0, 0, RET_ALLOW))
    return b"".join(out)


def program_path(block_unix_sockets: bool, setgid_ok: bool = False) -> str | None:
    """The filter in a file of corral's cache directory (read-only inside every sandbox),
    for launchers that can open a file but not pass a descriptor; None where there is no
    filter for this machine. An OSError where it cannot be written: the caller refuses to
    run, never runs without it (r86b SECCOMPFAILOPEN: with the cache directory left root's
    by a `sudo -E`, or full, every command from the editor could connect to host sockets)."""
    machine = os.uname().machine
    code = program(machine, block_unix_sockets, setgid_ok)
    if code is None:
        return None
    from corral import dirs

    # (-5: new user namespaces; -4: set-id modes, terminal ioctls, openat2; -3: socketpair
    # types, pdeathsig)
    kind = ("no-unix-5" if block_unix_sockets else "base-5") + ("-sgid" if setgid_ok else "")
    path = os.path.join(dirs.user_cache_dir(), f"seccomp-{machine}-{kind}.bpf")
    try:
        st = os.stat(path)
        if _verified.get(path) == (st.st_ino, st.st_size, st.st_mtime_ns):
            return path  # the very file read and checked before
        with open(path, "rb") as f:
            if f.read() == code:
                _verified[path] = (st.st_ino, st.st_size, st.st_mtime_ns)
                return path
    except OSError:
        pass
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(code)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # (a full disk: no partial file left)
        raise
    return path


def program_fd(block_unix_sockets: bool, setgid_ok: bool = False) -> int | None:
    """An inheritable descriptor holding the filter, positioned at its start (or None)."""
    code = program(os.uname().machine, block_unix_sockets, setgid_ok)
    if code is None:
        return None
    fd = os.memfd_create("corral-seccomp")
    os.write(fd, code)
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    return fd
