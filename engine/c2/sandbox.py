"""Running untrusted model code under bubblewrap (c2-eval.txt §4.1 LiveCodeBench correctness checks).

Every run gets its own ``bwrap`` with all namespaces unshared (user, pid, ipc, uts, cgroup, and net —
no network, not even loopback), the system directories bound read-only, a fresh tmpfs as the working
directory (:data:`SANDBOX_WORKDIR`) and ``/tmp``, a cleared environment, ``--die-with-parent`` and ``--new-session``.
Resource limits are set with ``setrlimit`` in the child before ``bwrap`` execs (they are inherited
through the namespaces): CPU seconds, address space, file size, open files and processes (and an
optional ``nice``). ``RLIMIT_NPROC`` needs care: the kernel exempts the
host's root user from it, and a user namespace maps the sandbox uid onto the uid that started
``bwrap``. So when the grader runs as root (as here and in CI) ``bwrap`` itself is started as a fresh
unprivileged host uid (:data:`HOST_UID_BASE` + a random offset, one per run, so concurrent runs do not
share a process budget); inside, the code runs as uid 65534 in its own user namespace. For a non-root
grader the limit is raised by the processes that user already runs (the kernel counts them too). A
wall-clock timeout kills the whole process group; ``--die-with-parent`` then takes the sandbox's pid
namespace with it.

Without ``/usr/bin/bwrap`` :func:`run_sandboxed` raises :class:`SandboxUnavailable` unless the
environment sets ``ATELIER_ALLOW_UNSANDBOXED=1`` (then the code runs as a plain subprocess with the
same rlimits and timeout — for development machines only).
"""

from __future__ import annotations

import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

__all__ = [
    "BWRAP",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "sandbox_available",
    "run_sandboxed",
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
#: Exit status bwrap itself returns when it cannot set the sandbox up.
_BWRAP_SETUP_FAILURE = 1


class SandboxUnavailable(RuntimeError):
    """Bubblewrap is missing or cannot create namespaces here, and unsandboxed runs are not allowed."""


@dataclass(frozen=True)
class SandboxLimits:
    """Per-run limits. ``cpu_s``: RLIMIT_CPU; ``wall_s``: wall clock, then the process group is killed;
    ``memory_mb``: RLIMIT_AS; ``processes``: RLIMIT_NPROC; ``file_mb``: RLIMIT_FSIZE; ``open_files``:
    RLIMIT_NOFILE; ``output_bytes``: stdout/stderr kept (the rest is dropped, ``truncated`` set);
    ``tmpfs_mb``: size of each writable tmpfs (the work dir, /tmp, /dev/shm), which live in host RAM;
    ``nice``: added niceness (0 by default: measured on a loaded 2-core machine, nice 10 added about
    50 ms per graded sample, and the process limit already keeps a fork bomb from starving the grader)."""

    cpu_s: int = 6
    wall_s: float = 10.0
    memory_mb: int = 1024
    processes: int = 16
    file_mb: int = 16
    open_files: int = 256
    output_bytes: int = 8 * 1024 * 1024
    nice: int = 0
    tmpfs_mb: int = 64


@dataclass(frozen=True)
class SandboxResult:
    """What happened: exit ``returncode`` (negative = killed by that signal), output, wall time, whether
    the wall clock ran out (``timed_out``), whether the kernel's CPU limit fired (``cpu_limited``,
    SIGXCPU/SIGKILL after RLIMIT_CPU), and whether it ran inside bubblewrap."""

    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    timed_out: bool
    sandboxed: bool
    truncated: bool = False

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
        return not self.timed_out and self.exit_signal in (signal.SIGXCPU, signal.SIGKILL)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def sandbox_available() -> bool:
    """Whether ``/usr/bin/bwrap`` exists and is executable."""
    return os.access(BWRAP, os.X_OK)


def _unsandboxed_allowed() -> bool:
    return os.environ.get(UNSANDBOXED_ENV, "") == "1"


def _bwrap_argv(inner: Sequence[str], *, tmpfs_mb: int = 64) -> list[str]:
    argv = [
        BWRAP,
        "--unshare-all",  # user, ipc, pid, net, uts, cgroup namespaces
        "--unshare-user",
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
    argv += [
        "--proc", "/proc",
        "--dev", "/dev",
        # tmpfs lives in the host's RAM and RLIMIT_AS does not count it: cap each writable one, and
        # make bwrap's own /dev tmpfs read-only (its /dev/shm gets a capped tmpfs of its own)
        "--size", str(tmpfs_mb * 1024 * 1024), "--tmpfs", "/dev/shm",
        "--remount-ro", "/dev",
        "--size", str(tmpfs_mb * 1024 * 1024), "--tmpfs", "/tmp",
        "--size", str(tmpfs_mb * 1024 * 1024), "--tmpfs", SANDBOX_WORKDIR,
        "--chdir", SANDBOX_WORKDIR,
        "--",
        *inner,
    ]
    return argv


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


def _limit_child(limits: SandboxLimits, *, host_uid: int | None, nproc: int) -> Callable[[], None]:
    def apply() -> None:
        # runs in the forked child before exec: bwrap and the code inherit all of it
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
        memory = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        file_size = limits.file_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if limits.nice:
            os.nice(limits.nice)
        if host_uid is not None:
            # root is exempt from RLIMIT_NPROC: drop to an unprivileged uid before bwrap starts
            os.setgroups([])
            os.setresgid(host_uid, host_uid, host_uid)
            os.setresuid(host_uid, host_uid, host_uid)

    return apply


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
    # -I: no PYTHON* variables, no user site, no script dir on sys.path (the system site stays, as upstream)
    inner = [python_executable(), "-I", "-c", program] if isinstance(program, str) else list(program)
    if sandbox_available():
        argv, sandboxed = _bwrap_argv(inner, tmpfs_mb=limits.tmpfs_mb), True
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
    started = time.monotonic()
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limit_child(limits, host_uid=host_uid, nproc=nproc),  # noqa: PLW1509 — rlimits must be set between fork and exec
        start_new_session=True,
        close_fds=True,
        env={} if sandboxed else {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        cwd="/" if sandboxed else None,
    )
    # read both pipes in threads, keeping at most output_bytes of each: a flood of output must not
    # fill the grader's memory (communicate() would buffer all of it)
    out, err = _BoundedReader(process.stdout, limits.output_bytes), _BoundedReader(process.stderr, limits.output_bytes)
    feeder = threading.Thread(target=_feed, args=(process.stdin, stdin.encode("utf-8", "surrogateescape")), daemon=True)
    feeder.start()
    timed_out = False
    try:
        process.wait(timeout=limits.wall_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(process)  # bwrap is not reaped yet, so its group id is still ours to kill
        process.wait()
    except BaseException:
        _kill_group(process)  # the grader is interrupted: take the sandbox down with it
        process.wait()
        raise
    else:
        if not sandboxed:
            _kill_group(process)  # unsandboxed strays; in bwrap, --die-with-parent already took them
    for reader in (out, err):
        reader.join()
    feeder.join(timeout=1.0)
    return SandboxResult(
        returncode=process.returncode,
        stdout=out.text(),
        stderr=err.text(),
        wall_s=time.monotonic() - started,
        timed_out=timed_out,
        sandboxed=sandboxed,
        truncated=out.dropped or err.dropped,
    )


def _feed(pipe: IO[bytes] | None, data: bytes) -> None:
    if pipe is None:
        return
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError):
        pass  # the code stopped reading (or exited): not an error of the grader
    finally:
        try:
            pipe.close()
        except OSError:
            pass


class _BoundedReader:
    """Drains a pipe on a thread, keeping the first ``cap`` bytes and counting the rest as dropped."""

    _CHUNK = 65536

    def __init__(self, pipe: IO[bytes] | None, cap: int) -> None:  # a BufferedReader from Popen
        self._pipe = pipe
        self._cap = cap
        self._kept = bytearray()
        self.dropped = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self._pipe is None:
            return
        with self._pipe:
            while chunk := self._pipe.read1(self._CHUNK):
                room = self._cap - len(self._kept)
                if room > 0:
                    self._kept += chunk[:room]
                if len(chunk) > max(room, 0):
                    self.dropped = True

    def join(self) -> None:
        # the pipe closes when the last process holding it dies; the sandbox's are all killed by now
        self._thread.join(timeout=5.0)

    def text(self) -> str:
        return bytes(self._kept).decode("utf-8", "replace")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
