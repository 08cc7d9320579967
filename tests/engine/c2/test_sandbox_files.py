"""The sandbox's file count (engine/c2/sandbox_files.py): empty files, directories and links on its tmpfs
mounts, counted from outside, end the run past ``SandboxLimits.max_files``; honest files do not."""

from __future__ import annotations

import os
import threading
import time

import pytest

from engine.c2 import sandbox_files
from engine.c2.sandbox import SandboxLimits, run_sandboxed, sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="needs /usr/bin/bwrap (Debian bubblewrap)")

#: kind → a program that makes empty entries of that kind on one of the tmpfs mounts, as fast as it can, for
#: ever: each costs host kernel memory (about 1 KB) that neither the tmpfs's size cap nor RLIMIT_AS counts —
#: unbounded, 377,000 empty files took 480 MB in 2.5 s
_EMPTY_ENTRIES = {
    "files": "i = 0\nwhile True:\n    open(f'f{i}', 'w').close()\n    i += 1",
    "directories": "import os\ni = 0\nwhile True:\n    os.mkdir(f'/tmp/d{i}')\n    i += 1",
    "symlinks": "import os\ni = 0\nwhile True:\n    os.symlink('x', f'/dev/shm/l{i}')\n    i += 1",
    "hard_links": "import os\nopen('a', 'w').close()\ni = 0\nwhile True:\n    os.link('a', f'l{i}')\n    i += 1",
    "files_on_every_mount_from_threads": (
        "import threading\ndef fill(folder):\n    i = 0\n    while True:\n"
        "        open(f'{folder}/f{i}', 'w').close()\n        i += 1\n"
        "for folder in ('/tmp', '/dev/shm'):\n    threading.Thread(target=fill, args=(folder,)).start()\nfill('.')"),
}
#: The grader's kind of sandbox, with the CPU time that let 737,000 empty files through before.
FILES_LIMITS = SandboxLimits(cpu_s=6, wall_s=10, new_processes=False)


def _watch_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name == "sandbox-files"]


@pytest.mark.parametrize("kind", sorted(_EMPTY_ENTRIES))
def test_empty_files_cannot_fill_the_hosts_memory_through_tmpfs(kind: str) -> None:
    descriptors = len(os.listdir("/proc/self/fd"))
    result = run_sandboxed(_EMPTY_ENTRIES[kind], limits=FILES_LIMITS)
    assert result.files_limited, (result.returncode, result.files, result.stderr[-300:])
    assert not result.ok and not result.cpu_limited and not result.timed_out
    # the count (exact, taken once the sandbox had ended): past the limit by what a few polls let through,
    # nowhere near the hundreds of thousands the CPU limit allowed
    assert FILES_LIMITS.max_files < result.files < 50_000
    assert _watch_threads() == [] and len(os.listdir("/proc/self/fd")) == descriptors  # the watch is gone
    os.kill(os.getpid(), 0)  # the grader is alive (raises if it were gone)


def test_a_program_that_ends_over_the_file_limit_is_reported_too() -> None:
    # 500 files in a few milliseconds, then a normal exit: likely before any poll saw them; the last count,
    # once the sandbox has ended, does
    program = "for i in range(500):\n    open(f'/tmp/f{i}', 'w').close()\nprint('done')"
    result = run_sandboxed(program, limits=SandboxLimits(max_files=100))
    assert result.files_limited and not result.ok and 100 < result.files <= 500


def test_an_honest_program_writing_a_few_files_is_unaffected() -> None:
    program = ("import os, tempfile\nfor i in range(5):\n    open(f'out{i}.txt', 'w').write(str(i))\n"
               "os.mkdir('work')\nopen('work/notes', 'w').write('x')\n"  # 7 entries in the work dir
               "with tempfile.NamedTemporaryFile('w', dir='/tmp') as scratch:\n    scratch.write('y')\n"
               "    os.symlink(scratch.name, '/dev/shm/link')\n    os.mkdir('/tmp/cache')\n"
               "print(sum(int(open(f'out{i}.txt').read()) for i in range(5)))")
    result = run_sandboxed(program, limits=FILES_LIMITS)
    assert result.ok and result.stdout.strip() == "10", result.stderr[-500:]
    assert not result.files_limited and result.files == 7  # the fullest mount, counted from outside


def test_a_program_that_ends_at_once_is_counted_however_late_the_count_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    # the code waits on bwrap's --block-fd until the count holds the mounts: without that wait, 3 runs in
    # 100 of this program escaped the count on a loaded machine (the watch's thread came too late); here
    # the watch is made late on purpose (half a second, where the program needs a few milliseconds)
    real_child_pid = sandbox_files.SandboxFileWatch._child_pid

    def late_child_pid(watch: sandbox_files.SandboxFileWatch) -> int | None:
        time.sleep(0.5)
        return real_child_pid(watch)

    monkeypatch.setattr(sandbox_files.SandboxFileWatch, "_child_pid", late_child_pid)
    program = "for i in range(200):\n    open(f'/dev/shm/f{i}', 'w').close()"
    results = [run_sandboxed(program, limits=SandboxLimits(max_files=100)) for _ in range(3)]
    # a poll may catch it on the way (killed) or only the last count (ended): limited either way
    assert [result.files_limited and 100 < result.files <= 200 for result in results] == [True] * 3


#: A setup wait longer than the sandbox's wall-clock limit: code held back for it would time out.
_NEVER = 30.0
_HELD_LIMITS = SandboxLimits(max_files=100, wall_s=10)


def test_a_failing_file_count_does_not_hold_the_code_back(monkeypatch: pytest.MonkeyPatch) -> None:
    def fails(*args: object) -> None:
        raise OSError("no count")

    monkeypatch.setattr(sandbox_files.SandboxFileWatch, "_open_mount", fails)
    monkeypatch.setattr(sandbox_files, "SETUP_WAIT_S", _NEVER)
    result = run_sandboxed("print('ran')", limits=_HELD_LIMITS)
    assert result.ok and not result.timed_out and result.stdout == "ran\n"
    assert not result.files_limited and result.files == 0


def test_mounts_never_found_hold_the_code_back_for_the_setup_wait_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_files.SandboxFileWatch, "_open_mount", lambda *args: (None, False))
    monkeypatch.setattr(sandbox_files, "SETUP_WAIT_S", 0.3)
    result = run_sandboxed("print('ran')", limits=_HELD_LIMITS)
    assert result.ok and not result.timed_out and result.stdout == "ran\n"
    assert result.wall_s >= 0.3  # it did wait


def test_a_refused_count_lets_the_code_start_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # a root grader without CAP_SYS_PTRACE: every look is refused, so waiting for the mounts is pointless
    monkeypatch.setattr(sandbox_files.SandboxFileWatch, "_open_mount", lambda *args: (None, True))
    monkeypatch.setattr(sandbox_files, "SETUP_WAIT_S", _NEVER)
    result = run_sandboxed("print('ran')", limits=_HELD_LIMITS)
    assert result.ok and not result.timed_out and result.stdout == "ran\n"
