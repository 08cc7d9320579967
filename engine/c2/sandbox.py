"""Running untrusted model code under bubblewrap (c2-eval.txt §4.1 LiveCodeBench correctness checks).

Every run gets its own ``bwrap`` with all namespaces unshared (user, pid, ipc, uts, cgroup, and net —
no network, not even loopback), the system directories bound read-only (``/usr/local`` hidden under an
empty read-only tmpfs unless the program lives there: :data:`HIDDEN_LOCAL`), a **read-only root** (bwrap's
root tmpfs is remounted read-only once the mounts are in place), capped tmpfs mounts as the only
writable places (the working directory :data:`SANDBOX_WORKDIR`, ``/tmp``, ``/dev/shm``; each
``SandboxLimits.tmpfs_mb``), a cleared environment, ``--die-with-parent`` and ``--new-session``.
``--disable-userns`` stops the code from creating a nested user namespace (which would give it full
capabilities there, and with them new mount and network namespaces), and a seccomp filter
(:func:`seccomp_filter`, built with libseccomp through ``pyseccomp`` and handed to bwrap as a BPF
program on a file descriptor) refuses with ``EPERM``: ptrace and process_vm_readv/writev, namespace
creation (unshare, setns, clone with any ``CLONE_NEW*`` flag; clone3, whose flags a filter cannot
read, answers ``ENOSYS`` so the C library falls back to clone), mount/umount/pivot_root and the new
mount API, io_uring, perf_event_open, keyctl/add_key/request_key, bpf, System V shared memory and
message queues, memfd_create and setting extended attributes (memory ``RLIMIT_AS`` does not count,
nor, for xattrs, the tmpfs's size), sockets of any family but unix,
inet, inet6 and netlink (AF_VSOCK is not confined by the network namespace), a socket's buffer sizes set
by ``setsockopt`` (``SO_SNDBUF``/``SO_RCVBUF`` and their ``FORCE`` forms: queued socket data is kernel memory
``RLIMIT_AS`` does not count, up to ``2 × net.core.wmem_max`` a socket — measured, 126 unix socket pairs held
2 GB; with the defaults they hold about 56 MB), and any signal or pidfd aimed
at pid 1 — bwrap's init in the sandbox's pid namespace (it is not pid 1 of the code: ``--as-pid-1``
is off), whose ``/proc/1`` is hidden under an empty read-only tmpfs (its ``mem`` would otherwise be
writable by a process of the same uid), so the code can neither trace, write nor signal the process
that holds the namespace. With ``SandboxLimits(new_processes=False)`` (the grader's runs) the filter
also refuses fork, vfork and any clone without ``CLONE_THREAD``: threads run, processes do not start, so
``RLIMIT_AS`` bounds the memory of the whole sandbox rather than of each of its processes. With
``SandboxLimits(inet_sockets=False)`` (the grader's runs too) it refuses inet and inet6 sockets: they
reach nothing but the sandbox's own loopback, where a TCP connection's buffers grow by themselves
(autotuning, ``net.ipv4.tcp_rmem``) — measured, 126 connections held 469 MB outside ``RLIMIT_AS``, from
the host's shared TCP memory (``net.ipv4.tcp_mem``), without setting a buffer size.
Resource limits are set by ``prlimit`` (util-linux) which then execs ``bwrap`` (they are inherited
through the namespaces): CPU seconds, address space, file size, open files and processes (and an
optional ``nice``). ``RLIMIT_NPROC`` needs care: the kernel exempts the
host's root user from it, and a user namespace maps the sandbox uid onto the uid that started
``bwrap``. So when the grader runs as root (as here and in CI) ``bwrap`` itself is started as a fresh
unprivileged host uid (:data:`HOST_UID_BASE` + a random offset, one per run, so concurrent runs do not
share a process budget); inside, the code runs as uid 65534 in its own user namespace. For a non-root
grader the limit is raised by the processes that user already runs (the kernel counts them too). A
wall-clock timeout kills the whole process group; ``--die-with-parent`` then takes the sandbox's pid
namespace with it.

The tmpfs mounts cap bytes, not files: an empty file, directory or link takes host kernel memory (about
1 KB of inode and directory entry) that neither ``--size`` nor RLIMIT_AS counts — unbounded, a program made
550,000 empty files (550 MB of kernel memory) in less than 3 s of CPU — and bwrap 0.8 cannot pass tmpfs's own cap
(``nr_inodes``). So the supervising side counts them (:class:`~engine.c2.sandbox_files.SandboxFileWatch`): bwrap's ``--info-fd`` gives
the sandbox's host pid, ``statvfs`` through ``/proc/<pid>/root`` gives the inodes in use on each writable
tmpfs every :data:`~engine.c2.sandbox_files.FILES_POLL_S` (10 ms) — the code starts only once the count holds
the mounts (bwrap's ``--block-fd``), so a program that ends at once is counted too — and past ``SandboxLimits.max_files`` (4096 per mount) bwrap is
killed, as by the wall-clock timeout, and the result says ``files_limited`` (the grader's verdict: "too
many files"). What a program can still take is what it makes between two counts: measured, 4,500–6,800
files (3–7 MB of kernel memory) for one thread, up to 12 MB for threads filling all three mounts at once.
A root grader needs ``CAP_SYS_PTRACE`` for ``/proc/<pid>/root`` (a non-root grader owns the sandbox's
namespaces and needs nothing); without it the files are not counted and a warning is logged. The
unsandboxed fallback has no tmpfs of its own and counts nothing.

:func:`run_sandboxed` runs a program to its end; :func:`start_sandboxed` returns a
:class:`SandboxSession` the caller talks to while it runs (send stdin, wait for stdout lines with a
deadline, kill) — the grader uses it to time each test from outside.

Without ``/usr/bin/bwrap`` (or without libseccomp) the sandbox raises :class:`SandboxUnavailable`
unless the environment sets ``ATELIER_ALLOW_UNSANDBOXED=1`` (then the code runs as a plain subprocess
with the same rlimits and timeout — for development machines only).
"""

from __future__ import annotations

import errno
import functools
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from engine.c2.sandbox_files import SandboxFileWatch

__all__ = [
    "BWRAP",
    "SandboxLimits",
    "SandboxResult",
    "SandboxSession",
    "SandboxUnavailable",
    "sandbox_available",
    "seccomp_filter",
    "run_sandboxed",
    "start_sandboxed",
]

BWRAP = "/usr/bin/bwrap"
UNSANDBOXED_ENV = "ATELIER_ALLOW_UNSANDBOXED"
#: The unprivileged uid/gid the code runs as inside its user namespace ("nobody").
SANDBOX_UID = 65534
#: Host uids a root grader starts bwrap as: HOST_UID_BASE + [0, HOST_UID_SPAN). No account needs to exist.
HOST_UID_BASE = 1_000_000
HOST_UID_SPAN = 1_000_000
#: The fresh tmpfs the code starts in (its home and only writable place besides /tmp).
SANDBOX_WORKDIR = "/sandbox"
#: Read-only system paths bound into the sandbox when they exist on the host.
_RO_BINDS = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/sbin", "/etc/alternatives", "/etc/ld.so.cache")
#: Hidden inside the sandbox under an empty read-only tmpfs, although it lies under the bound /usr: a site's
#: own installs (tools, Python packages, configuration) are no business of model code. Kept visible only
#: when the program the sandbox runs lives there itself (:func:`_hides_usr_local`).
HIDDEN_LOCAL = "/usr/local"
#: Exit status bwrap itself returns when it cannot set the sandbox up.
_BWRAP_SETUP_FAILURE = 1
#: The sandbox's writable tmpfs mounts (each ``SandboxLimits.tmpfs_mb``), whose files are counted from outside.
WRITABLE_TMPFS = (SANDBOX_WORKDIR, "/tmp", "/dev/shm")


class SandboxUnavailable(RuntimeError):
    """Bubblewrap is missing or cannot create namespaces here, and unsandboxed runs are not allowed."""


@dataclass(frozen=True)
class SandboxLimits:
    """Per-run limits. ``cpu_s``: RLIMIT_CPU; ``wall_s``: wall clock, then the process group is killed;
    ``memory_mb``: RLIMIT_AS; ``processes``: RLIMIT_NPROC; ``file_mb``: RLIMIT_FSIZE; ``open_files``:
    RLIMIT_NOFILE; ``output_bytes``: stdout/stderr kept (the rest is dropped, ``truncated`` set);
    ``stderr_tail_bytes``: when set, only the *last* this many bytes of stderr are kept instead (where a
    traceback ends; what comes before is dropped without setting ``truncated``), so a caller that reads
    only stderr's end holds no more of it than that;
    ``tmpfs_mb``: size of each writable tmpfs (the work dir, /tmp, /dev/shm), which live in host RAM;
    ``nice``: added niceness (0 by default: measured on a loaded 2-core machine, nice 10 added about
    50 ms per graded sample, and the process limit already keeps a fork bomb from starving the grader);
    ``new_processes``: whether the code may start processes (threads it may always start). RLIMIT_AS
    bounds one process, so ``processes`` children could each take ``memory_mb``; without new processes
    the sandbox's memory is one address space (the grader's runs: upstream's ``reliability_guard``
    removes fork and subprocess too, so no honest program needs one); ``max_files``: files,
    directories and links the code may have on one writable tmpfs at a time (``None``: not counted). An
    empty file takes host kernel memory that neither ``tmpfs_mb`` nor RLIMIT_AS counts; the supervising
    side counts them every :data:`~engine.c2.sandbox_files.FILES_POLL_S` and kills the sandbox past this (:class:`~engine.c2.sandbox_files.SandboxFileWatch`).
    Graded code writes no file at all (the runner neither; ``tempfile`` use is a file or two): 4096 is
    far above any honest program and about 4 MB of kernel memory per mount; ``inet_sockets``: whether the
    code may create inet and inet6 sockets (they reach only the sandbox's own loopback; graded code has no
    use for them, and a loopback TCP connection's buffers are host memory no limit counts)."""

    cpu_s: int = 6
    wall_s: float = 10.0
    memory_mb: int = 1024
    processes: int = 16
    file_mb: int = 16
    open_files: int = 256
    output_bytes: int = 8 * 1024 * 1024
    stderr_tail_bytes: int | None = None
    nice: int = 0
    tmpfs_mb: int = 64
    new_processes: bool = True
    max_files: int | None = 4096
    inet_sockets: bool = True


@dataclass(frozen=True)
class SandboxResult:
    """What happened: exit ``returncode`` (negative = killed by that signal), output, wall time, whether
    the wall clock ran out (``timed_out``), whether the kernel's CPU limit fired (``cpu_limited``,
    SIGXCPU/SIGKILL after RLIMIT_CPU), whether it ran inside bubblewrap, whether the caller stopped
    it (``stopped``: :meth:`SandboxSession.stop`, whose SIGKILL is then not the CPU limit's), and whether
    it had more than ``SandboxLimits.max_files`` on one writable tmpfs (``files_limited``: killed for it,
    or found over it when it ended); ``files`` is the most the grader counted on one of them (files,
    directories and links the code made; counted from outside, so 0 for an unsandboxed run)."""

    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    timed_out: bool
    sandboxed: bool
    truncated: bool = False
    stopped: bool = False
    files_limited: bool = False
    files: int = 0

    @property
    def exit_signal(self) -> int | None:
        """The signal that ended the code: a negative return code, or bwrap's 128 + signal."""
        if self.returncode < 0:
            return -self.returncode
        if self.sandboxed and self.returncode > 128:
            return self.returncode - 128
        return None

    @property
    def cpu_limited(self) -> bool:
        """The kernel's CPU limit fired (SIGXCPU at the soft limit, SIGKILL at the hard one)."""
        return (not self.timed_out and not self.stopped and not self.files_limited
                and self.exit_signal in (signal.SIGXCPU, signal.SIGKILL))

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.files_limited


def sandbox_available() -> bool:
    """Whether ``/usr/bin/bwrap`` exists and is executable."""
    return os.access(BWRAP, os.X_OK)


def _unsandboxed_allowed() -> bool:
    return os.environ.get(UNSANDBOXED_ENV, "") == "1"


#: System calls the seccomp filter refuses outright (EPERM): tracing another process or its memory,
#: entering or making namespaces, mounting, and kernel interfaces the code has no use for that are
#: frequent privilege-escalation routes (io_uring, perf events, the key store, eBPF).
SECCOMP_REFUSED = (
    "ptrace", "process_vm_readv", "process_vm_writev",
    "unshare", "setns",
    "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "perf_event_open",
    "keyctl", "add_key", "request_key",
    "bpf",
    # memory RLIMIT_AS never sees: a System V segment or message queue outlives its mapping (or has none)
    # until the IPC namespace ends, and a memfd is file memory held by a descriptor — measured, each took
    # the host's memory past the sandbox's memory limit (shm without any bound at all)
    "shmget", "msgget", "memfd_create",
    # extended attributes on the tmpfs mounts: their values are kernel memory that neither the tmpfs's
    # size cap nor RLIMIT_AS counts — measured, one sandbox held about 1 GB of them in 3 s of CPU
    "setxattr", "lsetxattr", "fsetxattr", "setxattrat",
)
#: Numbers of refused calls newer than the libseccomp that builds the filter (which then cannot name
#: them): the same on every architecture of the kernel's unified table (x86_64, aarch64, …).
UNNAMED_SYSCALLS = {"setxattrat": 463}
#: The only socket families the code may create: those the network namespace confines (where it has
#: nothing but its own loopback). Others reach past it — AF_VSOCK, on a VM, reaches the hypervisor.
SOCKET_FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK)
#: One past the highest family the kernel knows (AF_MAX in linux/socket.h); every one from here on is
#: refused too.
AF_MAX = 46
#: The kernel reads a pid or a socket family as a 32-bit int: a rule must compare only those bits, or the
#: same call with anything set above them (ignored by the kernel) passes the filter.
INT_MASK = 0xFFFFFFFF
#: clone(2) flags that create a namespace (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID,
#: NEWNET, NEWTIME): a clone carrying any of them is refused, a plain fork or thread is not.
CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000,
                         0x00000080)
#: Signals and pidfds aimed at this pid are refused: bwrap's init in the sandbox's pid namespace.
SANDBOX_INIT_PID = 1


#: setsockopt(2) options that size a socket's buffers (SOL_SOCKET level): SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE,
#: SO_RCVBUFFORCE. Refused: queued data is kernel memory RLIMIT_AS does not count (the same on x86_64 and
#: aarch64; other architectures number them differently).
SOCKET_BUFFER_OPTIONS = (socket.SO_SNDBUF, socket.SO_RCVBUF, 32, 33)
#: The inet families, refused with ``SandboxLimits(inet_sockets=False)``.
INET_FAMILIES = (socket.AF_INET, socket.AF_INET6)

#: clone(2)'s flag of a thread: a clone without it (fork, vfork, posix_spawn) starts a process.
CLONE_THREAD = 0x00010000


@functools.lru_cache(maxsize=4)
def seccomp_filter(*, new_processes: bool = True, inet_sockets: bool = True) -> bytes:
    """The sandbox's seccomp filter as a BPF program (libseccomp's ``seccomp_export_bpf``), for
    ``bwrap --seccomp FD``. Default action allow; the calls above answer EPERM, and without
    ``new_processes`` so do fork, vfork and a clone without ``CLONE_THREAD``; so does a socket outside
    :data:`SOCKET_FAMILIES` (and, without ``inet_sockets``, of :data:`INET_FAMILIES`), and a
    ``setsockopt`` of :data:`SOCKET_BUFFER_OPTIONS`. Raises
    :class:`SandboxUnavailable` when libseccomp (``pyseccomp`` over ``libseccomp.so.2``) is missing."""
    try:
        import pyseccomp as seccomp  # ctypes binding over the system's libseccomp.so.2
    except (ImportError, OSError) as exc:
        raise SandboxUnavailable(
            f"the sandbox's seccomp filter needs libseccomp (Debian libseccomp2) and pyseccomp: {exc}"
        ) from exc
    refuse = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in SECCOMP_REFUSED:
        number = seccomp.resolve_syscall(seccomp.Arch.NATIVE, name)
        rules.add_rule(refuse, number if number >= 0 else UNNAMED_SYSCALLS[name])  # < 0: too new to name
    for flag in CLONE_NAMESPACE_FLAGS:
        rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")  # its flags sit behind a pointer: fall back to clone
    if not new_processes:
        rules.add_rule(refuse, "fork")
        rules.add_rule(refuse, "vfork")
        rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
    for name in ("kill", "tkill", "tgkill", "pidfd_open", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        rules.add_rule(refuse, name, seccomp.Arg(0, seccomp.MASKED_EQ, INT_MASK, SANDBOX_INIT_PID))
    for family in range(AF_MAX):
        if family not in SOCKET_FAMILIES:
            rules.add_rule(refuse, "socket", seccomp.Arg(0, seccomp.MASKED_EQ, INT_MASK, family))
    rules.add_rule(refuse, "socket", seccomp.Arg(0, seccomp.GE, AF_MAX))
    if not inet_sockets:
        for family in INET_FAMILIES:
            rules.add_rule(refuse, "socket", seccomp.Arg(0, seccomp.MASKED_EQ, INT_MASK, family))
    for option in SOCKET_BUFFER_OPTIONS:
        rules.add_rule(refuse, "setsockopt", seccomp.Arg(1, seccomp.MASKED_EQ, INT_MASK, socket.SOL_SOCKET),
                       seccomp.Arg(2, seccomp.MASKED_EQ, INT_MASK, option))
    read, write = os.pipe()
    try:
        with os.fdopen(write, "wb") as sink:
            rules.export_bpf(sink)
        with os.fdopen(read, "rb") as source:
            return source.read()
    except OSError as exc:
        raise SandboxUnavailable(f"could not build the sandbox's seccomp filter: {exc}") from exc


def _hides_usr_local(program: str) -> bool:
    """Whether :data:`HIDDEN_LOCAL` can be hidden from ``program`` (an argv[0]): it exists as a real folder
    and the program, symbolic links followed (``/usr/bin/python3`` may point into it), does not live there."""
    if os.path.islink(HIDDEN_LOCAL) or not os.path.isdir(HIDDEN_LOCAL):
        return False
    found = program if os.path.isabs(program) else shutil.which(program, path="/usr/bin:/bin")
    real = os.path.realpath(found or program)
    return not (real == HIDDEN_LOCAL or real.startswith(HIDDEN_LOCAL + "/"))


def _bwrap_argv(
    inner: Sequence[str], *, tmpfs_mb: int = 64, seccomp_fd: int | None = None, info_fd: int | None = None,
    block_fd: int | None = None,
) -> list[str]:
    size = str(tmpfs_mb * 1024 * 1024)
    argv = [
        BWRAP,
        # the sandbox's pid on the host, for the file count (:class:`~engine.c2.sandbox_files.SandboxFileWatch`); bwrap writes it and closes
        *(["--info-fd", str(info_fd)] if info_fd is not None else []),
        # bwrap's child reads one byte (or the end) from it once every mount is made, before the seccomp
        # filter and the exec: the file count holds the sandbox's mounts before the code runs
        *(["--block-fd", str(block_fd)] if block_fd is not None else []),
        "--unshare-all",  # user, ipc, pid, net, uts, cgroup namespaces
        "--unshare-user",
        "--disable-userns",  # no nested user namespace (and so no capabilities, mounts or netns of its own)
        "--uid", str(SANDBOX_UID),
        "--gid", str(SANDBOX_UID),
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--setenv", "PATH", "/usr/bin:/bin",
        "--setenv", "HOME", SANDBOX_WORKDIR,
        "--setenv", "LANG", "C.UTF-8",
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
        "--setenv", "PYTHONHASHSEED", "0",
        "--hostname", "sandbox",
    ]
    for path in _RO_BINDS:
        if os.path.lexists(path):
            argv += ["--ro-bind", path, path]
    if _hides_usr_local(inner[0]):
        argv += ["--size", "4096", "--tmpfs", HIDDEN_LOCAL, "--remount-ro", HIDDEN_LOCAL]
    argv += [
        "--proc", "/proc",
        # bwrap's init is pid 1 here and runs as the same uid: hide its /proc entry (mem, fd, environ),
        # which the kernel would otherwise let the code open like any process of its own uid's
        "--size", "4096", "--tmpfs", f"/proc/{SANDBOX_INIT_PID}",
        "--remount-ro", f"/proc/{SANDBOX_INIT_PID}",
        "--dev", "/dev",
        # tmpfs lives in the host's RAM and RLIMIT_AS does not count it: cap each writable one, and
        # make bwrap's own /dev tmpfs read-only (its /dev/shm gets a capped tmpfs of its own)
        "--size", size, "--tmpfs", "/dev/shm",
        "--remount-ro", "/dev",
        "--size", size, "--tmpfs", "/tmp",
        "--size", size, "--tmpfs", SANDBOX_WORKDIR,  # (these three are WRITABLE_TMPFS)
        # bwrap's root is an uncapped tmpfs: read-only once every mount point in it exists
        "--remount-ro", "/",
        "--chdir", SANDBOX_WORKDIR,
    ]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return [*argv, "--", *inner]


def _processes_of_current_user() -> int:
    """How many tasks (processes and threads) the current uid runs: the kernel counts them against
    RLIMIT_NPROC alongside the sandbox's own."""
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                count += len(os.listdir(f"/proc/{entry.name}/task"))
        except OSError:
            continue
    return count


PRLIMIT = "/usr/bin/prlimit"  # util-linux, on every Debian system


def _limited_argv(argv: Sequence[str], limits: SandboxLimits, *, nproc: int) -> list[str]:
    """``argv`` behind ``prlimit`` (and ``nice``): the limits are set by a separate program between exec
    and exec, so no Python code runs in the forked child — ``preexec_fn`` is unsafe while the grader's
    threads run (CPython's subprocess documentation) and was seen to crash a threaded grader. bwrap and
    the code inherit every limit."""
    memory = limits.memory_mb * 1024 * 1024
    file_size = limits.file_mb * 1024 * 1024
    wrapped = [
        PRLIMIT,
        f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}",
        f"--as={memory}:{memory}",
        f"--fsize={file_size}:{file_size}",
        f"--nofile={limits.open_files}:{limits.open_files}",
        f"--nproc={nproc}:{nproc}",
        "--core=0:0",
        "--",
    ]
    if limits.nice:
        wrapped += ["/usr/bin/nice", "-n", str(limits.nice)]
    return wrapped + list(argv)


def python_executable() -> str:
    """The interpreter model code runs with: the system python3 inside the sandbox (its /usr is bound)."""
    for candidate in ("/usr/bin/python3", sys.executable):
        if candidate and os.path.exists(candidate) and candidate.startswith("/usr/"):
            return candidate
    found = shutil.which("python3")
    return found or sys.executable


def run_sandboxed(
    program: Sequence[str] | str,
    *,
    stdin: str = "",
    limits: SandboxLimits = SandboxLimits(),
) -> SandboxResult:
    """Run ``program`` — an argv list, or Python source run as ``python3 -c`` — in a fresh sandbox.

    Raises :class:`SandboxUnavailable` when bubblewrap is missing (unless ``ATELIER_ALLOW_UNSANDBOXED=1``).
    Never raises for anything the code does: crashes, limits and timeouts come back in the result.
    """
    with start_sandboxed(program, limits=limits) as session:
        session.send(stdin, close=True)
        return session.finish(wait_s=limits.wall_s)


def start_sandboxed(program: Sequence[str] | str, *, limits: SandboxLimits = SandboxLimits()) -> SandboxSession:
    """Start ``program`` (as :func:`run_sandboxed`) and return the running :class:`SandboxSession`.

    Use it as a context manager: leaving the block kills whatever still runs. ``limits.wall_s`` is
    the session's outer bound (:meth:`SandboxSession.finish` never waits past it)."""
    # -I: no PYTHON* variables, no user site, no script dir on sys.path (the system site stays, as upstream)
    inner = [python_executable(), "-I", "-c", program] if isinstance(program, str) else list(program)
    seccomp_fd: int | None = None
    info_read: int | None = None
    info_write: int | None = None
    block_read: int | None = None
    block_write: int | None = None
    if sandbox_available():
        bpf = seccomp_filter(new_processes=limits.new_processes, inet_sockets=limits.inet_sockets)
        seccomp_fd, seccomp_write = os.pipe()  # bwrap reads the program from this descriptor
        with os.fdopen(seccomp_write, "wb") as sink:
            sink.write(bpf)  # a few hundred bytes: well inside a pipe's buffer
        if limits.max_files is not None:
            info_read, info_write = os.pipe()  # bwrap writes the sandbox's pid on it
            block_read, block_write = os.pipe()  # the watch lets the code start once it holds the mounts
        argv = _bwrap_argv(inner, tmpfs_mb=limits.tmpfs_mb, seccomp_fd=seccomp_fd, info_fd=info_write,
                           block_fd=block_read)
        sandboxed = True
    elif _unsandboxed_allowed():
        argv, sandboxed = inner, False
    else:
        raise SandboxUnavailable(
            f"{BWRAP} (Debian package bubblewrap) is required to run model code; "
            f"set {UNSANDBOXED_ENV}=1 to run it unsandboxed on a development machine"
        )
    if sandboxed and os.geteuid() == 0:
        host_uid: int | None = HOST_UID_BASE + secrets.randbelow(HOST_UID_SPAN)
        nproc = limits.processes
    else:
        host_uid = None
        nproc = limits.processes + _processes_of_current_user()
    try:
        process = subprocess.Popen(
            _limited_argv(argv, limits, nproc=nproc),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # root is exempt from RLIMIT_NPROC: drop to an unprivileged uid before bwrap starts (done by
            # subprocess's own C code between fork and exec, which is thread-safe)
            user=host_uid,
            group=host_uid,
            extra_groups=[] if host_uid is not None else None,
            start_new_session=True,
            close_fds=True,
            pass_fds=tuple(fd for fd in (seccomp_fd, info_write, block_read) if fd is not None),
            env={} if sandboxed else {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            cwd="/" if sandboxed else None,
        )
    except BaseException:
        for fd in (info_read, block_write):
            if fd is not None:
                os.close(fd)
        raise
    finally:
        for fd in (seccomp_fd, info_write, block_read):
            if fd is not None:
                os.close(fd)
    watch: SandboxFileWatch | None = None
    if info_read is not None:
        try:
            # a pidfd is the one handle that cannot reach another process once bwrap is reaped: the watch
            # kills through it from its own thread while the caller's thread may be reaping bwrap
            pidfd = os.pidfd_open(process.pid)
        except OSError as exc:  # Linux before 5.3, or out of descriptors: no run without its file count
            _abandon(process)  # first: bwrap writing to a closed info pipe would die of SIGPIPE alone
            os.close(info_read)
            os.close(block_write)
            raise SandboxUnavailable(f"the sandbox's file count needs a pidfd (Linux 5.3+): {exc}") from exc
        try:
            watch = SandboxFileWatch(pidfd, info_read, bwrap_pid=process.pid, mounts=WRITABLE_TMPFS,
                                     max_files=limits.max_files, tmpfs_mb=limits.tmpfs_mb, release_fd=block_write)
        except BaseException:  # its thread did not start: the descriptors are still the caller's
            _abandon(process)
            for fd in (pidfd, info_read, block_write):
                os.close(fd)
            raise
    return SandboxSession(process, limits=limits, sandboxed=sandboxed, watch=watch)


def _abandon(process: subprocess.Popen[bytes]) -> None:
    """Kill a sandbox no session will own, reap it and close its pipes. The group kill also takes bwrap's
    child while it still waits for bwrap's go-ahead (it leaves the group only later, ``--new-session``)."""
    _kill_group(process)
    process.wait()
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


class SandboxSession:
    """A sandboxed process while it runs. Its stdout and stderr are drained on threads (at most
    ``limits.output_bytes`` of each kept), stdin is fed on a thread, so no call here blocks on the
    code: :meth:`wait_for_lines` and :meth:`finish` take deadlines and the process is killed (its
    whole process group) when they pass."""

    def __init__(
        self, process: subprocess.Popen[bytes], *, limits: SandboxLimits, sandboxed: bool,
        watch: SandboxFileWatch | None = None,
    ) -> None:
        self._process = process
        self._watch = watch
        self._limits = limits
        self.sandboxed = sandboxed
        self.started = time.monotonic()
        self._deadline = self.started + limits.wall_s
        self._out = _BoundedReader(process.stdout, limits.output_bytes)
        # stderr's lines are never waited for: counting them would keep a time per newline the code writes
        self._err = (_BoundedReader(process.stderr, limits.output_bytes, line_times=False)
                     if limits.stderr_tail_bytes is None
                     else _BoundedReader(process.stderr, limits.stderr_tail_bytes, line_times=False, tail=True))
        self._feeder: threading.Thread | None = None
        self._timed_out = False
        self._stopped = False

    def __enter__(self) -> SandboxSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._process.returncode is None:
            self.kill()

    def send(self, data: str, *, close: bool = False) -> None:
        """Write ``data`` to the code's stdin without blocking (in order with earlier sends);
        ``close`` closes stdin after it. A code that stopped reading is not an error."""
        previous = self._feeder
        payload = data.encode("utf-8", "surrogateescape")

        def feed() -> None:
            if previous is not None:
                previous.join()
            _feed(self._process.stdin, payload, close=close)

        self._feeder = threading.Thread(target=feed, daemon=True)
        self._feeder.start()

    def wait_for_lines(self, count: int, timeout_s: float) -> bool:
        """Wait until stdout holds ``count`` complete lines, the stream ends, or ``timeout_s`` (never
        past the session's outer bound) passes; whether the lines are there."""
        deadline = min(time.monotonic() + max(0.0, timeout_s), self._deadline)
        return self._out.wait_for_lines(count, deadline)

    def line_times(self) -> list[float]:
        """When (``time.monotonic()``) each complete stdout line arrived at the grader."""
        return self._out.line_times()

    def stdout_lines(self) -> list[str]:
        """The complete stdout lines so far (a partial last line is left out)."""
        text = self._out.text()
        return text.split("\n")[:-1]

    def kill(self) -> None:
        """Kill the sandbox now (its process group; ``--die-with-parent`` takes the namespace with it)."""
        if self._process.returncode is None:
            _kill_group(self._process)  # bwrap is not reaped yet, so its group id is still ours to kill

    def stop(self) -> SandboxResult:
        """Kill the sandbox now — the caller has what it needs — and collect the result (not a timeout)."""
        self._stopped = self._process.poll() is None  # still running: this kill is the caller's
        self.kill()
        return self.finish(wait_s=self._limits.wall_s)

    def finish(self, *, wait_s: float = 0.0) -> SandboxResult:
        """Wait up to ``wait_s`` (never past the outer bound) for the process to end, kill it when it
        has not (then ``timed_out``), and collect the result."""
        remaining = max(0.0, min(time.monotonic() + wait_s, self._deadline) - time.monotonic())
        try:
            self._process.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            self._timed_out = True
            self.kill()
            self._process.wait()
        except BaseException:
            self.kill()  # the grader is interrupted: take the sandbox down with it
            self._process.wait()
            raise
        else:
            if not self.sandboxed:
                _kill_group(self._process)  # unsandboxed strays; in bwrap, --die-with-parent already took them
        for reader in (self._out, self._err):
            reader.join()
        if self._feeder is not None:
            self._feeder.join(timeout=1.0)
        if self._watch is not None:
            self._watch.join()  # bwrap has ended: the watch takes its last count and returns
        return SandboxResult(
            returncode=self._process.returncode,
            stdout=self._out.text(),
            stderr=self._err.text(),
            wall_s=time.monotonic() - self.started,
            timed_out=self._timed_out,
            sandboxed=self.sandboxed,
            truncated=self._out.dropped or (self._err.dropped and self._limits.stderr_tail_bytes is None),
            stopped=self._stopped,
            files_limited=self._watch is not None and self._watch.limited,
            files=self._watch.files if self._watch is not None else 0,
        )


def _feed(pipe: IO[bytes] | None, data: bytes, *, close: bool = True) -> None:
    if pipe is None:
        return
    try:
        pipe.write(data)
        pipe.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass  # the code stopped reading (or exited, or was killed): not an error of the grader
    finally:
        if close:
            try:
                pipe.close()
            except (OSError, ValueError):
                pass


class _BoundedReader:
    """Drains a pipe on a thread, keeping the first ``cap`` bytes (with ``tail``, the last) and counting the
    rest as dropped;
    records when each complete line arrived (unless ``line_times`` is off: a time per line is 8 bytes
    of the grader's memory for each byte of newlines the code writes), and lets a caller wait for a
    number of them."""

    _CHUNK = 65536

    def __init__(
        self, pipe: IO[bytes] | None, cap: int, *, line_times: bool = True, tail: bool = False
    ) -> None:  # a BufferedReader
        self._pipe = pipe
        self._cap = cap
        self._line_times = line_times and not tail
        self._tail = tail  # keep the last ``cap`` bytes rather than the first
        self._kept = bytearray()
        self._times: list[float] = []
        self._closed = False
        self._changed = threading.Condition()
        self.dropped = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            if self._pipe is None:
                return
            with self._pipe:
                while chunk := self._pipe.read1(self._CHUNK):
                    now = time.monotonic()
                    with self._changed:
                        if self._tail:
                            self._kept += chunk[-self._cap :]
                            if len(self._kept) > self._cap:
                                self.dropped = True
                                del self._kept[: len(self._kept) - self._cap]
                            self._changed.notify_all()
                            continue
                        room = self._cap - len(self._kept)
                        if room > 0:
                            kept = chunk[:room]
                            self._kept += kept
                            if self._line_times:
                                self._times += [now] * kept.count(b"\n")
                        if len(chunk) > max(room, 0):
                            self.dropped = True
                        self._changed.notify_all()
        finally:
            with self._changed:
                self._closed = True
                self._changed.notify_all()

    def wait_for_lines(self, count: int, deadline: float) -> bool:
        with self._changed:
            while len(self._times) < count and not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._changed.wait(remaining)
            return len(self._times) >= count

    def line_times(self) -> list[float]:
        with self._changed:
            return list(self._times)

    def join(self) -> None:
        # the pipe closes when the last process holding it dies; the sandbox's are all killed by now
        self._thread.join(timeout=5.0)

    def text(self) -> str:
        with self._changed:
            return bytes(self._kept).decode("utf-8", "replace")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
