"""Counting the files a running sandbox makes on its tmpfs mounts, from outside (engine.c2.sandbox).

The sandbox's tmpfs mounts cap bytes, not files: an empty file, directory or link takes host kernel memory
(about 1 KB of inode and directory entry) that neither bwrap's ``--size`` nor RLIMIT_AS counts, and bwrap
0.8 cannot pass tmpfs's own cap (``nr_inodes``). :class:`SandboxFileWatch` counts them every
:data:`FILES_POLL_S` through ``/proc/<pid>/root`` and kills the sandbox past a limit.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Sequence

__all__ = ["FILES_POLL_S", "SandboxFileWatch"]

#: Seconds between two counts of the files on the sandbox's tmpfs mounts (:class:`SandboxFileWatch`). A program
#: makes over 180,000 empty files a CPU second (1 KB of kernel memory each): at 10 ms it was killed with
#: 4,500–6,800 (3–7 MB); at 50 ms, with up to 11,400. Each count costs the grader a few microseconds
#: (4.4 ms of CPU a second per running sandbox, measured).
FILES_POLL_S = 0.01
#: Seconds between two looks for the sandbox's mounts while bwrap sets them up (its child then waits on
#: ``--block-fd`` until the watch holds them all), and the longest the watch makes the code wait for them:
#: a mount not found by then is looked for again at each count, as before the code started.
SETUP_POLL_S = 0.001
SETUP_WAIT_S = 2.0

logger = logging.getLogger(__name__)


class SandboxFileWatch:
    """Counts the files on each writable tmpfs of a running sandbox from outside, and kills the sandbox
    when one holds more than ``max_files``. An empty file, directory or link costs the host kernel
    memory (inode and directory entry, about 1 KB) that neither the tmpfs's size cap nor RLIMIT_AS counts,
    and bwrap 0.8's ``--tmpfs`` cannot set tmpfs's own cap on them (``nr_inodes``).

    On a thread: read bwrap's ``--info-fd`` JSON for ``child-pid`` (bwrap's init in the sandbox's pid
    namespace, host pid), open a pidfd on it and check it is bwrap's child (its pid could only have been
    reused once bwrap reaped it); take the mounts while that child waits on ``--block-fd`` (``release_fd``
    is its write end), then let it go on to the code — so no program, however short, runs before its
    mounts are held (at most :data:`SETUP_WAIT_S`, and not at all once access is refused); then, every
    :data:`FILES_POLL_S`, count each of ``mounts`` (the sandbox's writable tmpfs paths)
    through ``/proc/<child-pid>/root``: ``f_files - f_ffree`` of ``statvfs`` is the inodes in use (tmpfs
    counts a hard link as one too), less the mount's root. A mount is taken only once it is the sandbox's
    own — not the host's path of that name (same device: bwrap's child starts in a copy of the host's
    mounts, and then bwrap's setup tmpfs) and of exactly ``tmpfs_mb`` — and then held open (``O_PATH``),
    so the later counts walk no path and the last one, once the sandbox has ended, sees what it left.
    Past the limit: SIGKILL through the pidfds to the sandbox's init, which takes its pid namespace with
    it, and to bwrap — the processes of bwrap's group, which the wall-clock timeout kills with ``killpg``;
    a pidfd never reaches another process once its own is reaped, even while the caller's thread reaps
    bwrap. The code cannot move the counted places: the root and ``/dev`` are read-only and mounting is
    refused.

    Access: ``/proc/<pid>/root`` needs ptrace read access to the sandbox's init. A root grader has it
    through ``CAP_SYS_PTRACE`` (bwrap runs as a fresh host uid, so neither the uid nor the namespaces
    are root's). A non-root grader runs bwrap as its own uid: the uids match and the sandbox's user
    namespaces are its own, which counts as that capability there (checked with a grader of uid 4321).
    Root *without* ``CAP_SYS_PTRACE`` (a container's default capabilities) is refused (EACCES): then the
    files are not counted and a warning is logged once. Every failure here (the sandbox ending mid-count,
    ENOENT during bwrap's setup, EACCES) ends in no count, never in an exception for the grader, and the
    watch ends with bwrap."""

    _MAX_INFO = 1 << 16

    def __init__(
        self, pidfd: int, info_fd: int, *, bwrap_pid: int, mounts: Sequence[str], max_files: int | None, tmpfs_mb: int,
        release_fd: int | None = None,
    ) -> None:
        self._pidfd = pidfd  # bwrap's; owned (closed) by the watch
        self._bwrap_pid = bwrap_pid
        self._info_fd = info_fd
        self._release_fd = release_fd  # the write end of bwrap's --block-fd; owned (closed) by the watch
        self._mounts = tuple(mounts)
        self._limit = max_files if max_files is not None else sys.maxsize
        self._size = tmpfs_mb * 1024 * 1024
        self.limited = False
        self.files = 0
        self._thread = threading.Thread(target=self._run, name="sandbox-files", daemon=True)
        self._thread.start()

    def join(self) -> None:
        self._thread.join(timeout=5.0)  # bwrap is gone, the sandbox's init has a second to follow

    def _run(self) -> None:
        child_fd: int | None = None
        mounts: dict[str, int] = {}  # path → O_PATH descriptor of the sandbox's mount
        denied = False
        try:
            child = self._child_pid()
            child_fd = self._open_child(child) if child is not None else None
            if child is None or child_fd is None:
                return
            host = {path: _device_of(path) for path in self._mounts}
            poller = select.poll()  # not select(): the grader may hold descriptors past 1024
            poller.register(self._pidfd, select.POLLIN)
            poller.register(child_fd, select.POLLIN)
            # bwrap's child waits on --block-fd with every mount made: take them all before the code starts,
            # so that even a program that ends within a few milliseconds is counted once it has ended
            deadline = time.monotonic() + SETUP_WAIT_S
            while not denied and len(mounts) < len(self._mounts) and time.monotonic() < deadline:
                denied = self._open_mounts(child, child_fd, host, mounts)
                if len(mounts) < len(self._mounts) and poller.poll(SETUP_POLL_S * 1000):
                    break  # bwrap or its init ended during the setup
            self._release()
            while True:
                denied = self._open_mounts(child, child_fd, host, mounts) or denied
                if self._count(mounts.values()) > self._limit:
                    self.limited = True
                    # the sandbox's init (its pid namespace dies with it) and bwrap: all there is in bwrap's
                    # process group, which the wall-clock timeout kills, and never another process
                    for fd in (child_fd, self._pidfd):
                        try:
                            signal.pidfd_send_signal(fd, signal.SIGKILL)
                        except ProcessLookupError:
                            pass  # ended on its own meanwhile; the last count below still says how far it got
                    break
                if poller.poll(FILES_POLL_S * 1000):  # bwrap or its init ended
                    break
            # the last count: what the sandbox left (its mounts outlive it while they are held here); its
            # init follows a killed bwrap at once (--die-with-parent)
            _ended(child_fd, wait_s=1.0)
            if self._count(mounts.values()) > self._limit:
                self.limited = True
        except Exception:  # never the grader's failure: the run goes on, uncounted
            logger.exception("the sandbox's file count failed")
        finally:
            if denied and not mounts:
                _warn_blind_once()
            self._release()  # the sandbox never waits for a watch that has ended
            for fd in (self._info_fd, self._pidfd, child_fd, *mounts.values()):
                if fd is not None:
                    try:
                        os.close(fd)
                    except OSError:
                        pass

    def _open_mounts(self, child: int, child_fd: int, host: dict[str, int | None], mounts: dict[str, int]) -> bool:
        """Take each of the sandbox's mounts not yet held (into ``mounts``); whether access was refused."""
        denied = False
        for path in self._mounts:
            if path not in mounts:
                found, refused = self._open_mount(child, path, host[path])
                denied = denied or refused
                # the pid named the sandbox when the path was opened only if it is still running now
                if found is not None and _ended(child_fd):
                    os.close(found)
                elif found is not None:
                    mounts[path] = found
        return denied

    def _release(self) -> None:
        """Let bwrap's child go on to the code (one byte on ``--block-fd``; its end would do too), once."""
        if self._release_fd is None:
            return
        fd, self._release_fd = self._release_fd, None
        try:
            os.write(fd, b"1")
        except OSError:
            pass  # bwrap has ended (EPIPE): nothing waits any more
        finally:
            os.close(fd)

    def _child_pid(self) -> int | None:
        """bwrap's init's host pid from ``--info-fd`` (written just after bwrap clones it, then closed);
        ``None`` when bwrap ended before."""
        data = b""
        # read to the end: closed before bwrap's write, the pipe would kill bwrap with SIGPIPE before it lets
        # its child go on, and the child would wait for that, outside bwrap's group, for ever (seen)
        while chunk := os.read(self._info_fd, self._MAX_INFO):
            data = (data + chunk)[: self._MAX_INFO]
        try:
            pid = json.loads(data)["child-pid"]
        except (ValueError, KeyError, TypeError):
            return None  # bwrap failed before cloning (nothing written)
        return pid if isinstance(pid, int) and pid > 0 else None

    def _open_child(self, child: int) -> int | None:
        """A pidfd on ``child``, once it is bwrap's child: its parent is bwrap, and bwrap still runs after
        that was read (so that pid was not reused)."""
        try:
            fd = os.pidfd_open(child)
        except OSError:
            return None  # already gone: bwrap has reaped it and is ending
        try:
            with open(f"/proc/{child}/status", encoding="ascii", errors="replace") as status:
                parent = next((line.split()[1] for line in status if line.startswith("PPid:")), "")
        except OSError:
            parent = ""
        if parent != str(self._bwrap_pid) or _ended(self._pidfd):
            os.close(fd)
            return None
        return fd

    def _open_mount(self, child: int, path: str, host_device: int | None) -> tuple[int | None, bool]:
        """An ``O_PATH`` descriptor of ``path`` in the sandbox when it is the sandbox's capped tmpfs there
        (else ``None``: bwrap is still setting up), and whether access was refused."""
        try:
            fd = os.open(f"/proc/{child}/root{path}", os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            return None, exc.errno in (errno.EACCES, errno.EPERM)
        try:
            usage = os.statvfs(fd)
            ours = (os.fstat(fd).st_dev != host_device and usage.f_files > 0
                    and usage.f_blocks * usage.f_frsize == self._size)
        except OSError:
            ours = False
        if not ours:
            os.close(fd)
            return None, False
        return fd, False

    def _count(self, mounts) -> int:
        """The most files on one of ``mounts`` (their root directories left out); kept in ``files``."""
        for fd in mounts:
            try:
                usage = os.statvfs(fd)
            except OSError:
                continue
            self.files = max(self.files, usage.f_files - usage.f_ffree - 1)
        return self.files


def _device_of(path: str) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


def _ended(pidfd: int, *, wait_s: float = 0.0) -> bool:
    """Whether the process behind ``pidfd`` has ended (waiting up to ``wait_s`` for it)."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(wait_s * 1000))


_blind_warned = threading.Event()


def _warn_blind_once() -> None:
    if not _blind_warned.is_set():
        _blind_warned.set()
        logger.warning(
            "the sandbox's files cannot be counted: /proc/<pid>/root of its init is refused (a root grader "
            "without CAP_SYS_PTRACE?); a program can take host memory with empty files on its tmpfs mounts"
        )
