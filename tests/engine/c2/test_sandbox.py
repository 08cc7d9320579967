"""The sandbox, run for real under bubblewrap: every escape the issue lists must fail, and the grader
process survives each case (the test process itself is the grader here)."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import tracemalloc
from pathlib import Path

import pytest

from engine.c2 import sandbox
from engine.c2.sandbox import SandboxLimits, SandboxUnavailable, run_sandboxed, sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="needs /usr/bin/bwrap (Debian bubblewrap)")

SHORT = SandboxLimits(cpu_s=2, wall_s=6)
SETTINGS = Path(__file__).resolve().parents[3] / "evalsite" / "settings.py"


def _grader_alive() -> bool:
    os.kill(os.getpid(), 0)  # raises if this process were gone
    return True


def test_plain_program_runs_with_clean_environment() -> None:
    result = run_sandboxed("import os; print(sorted(os.environ))", limits=SHORT)
    assert result.ok and result.sandboxed
    assert "DATABASE_URL" not in result.stdout and "HOME" in result.stdout


def test_infinite_loop_hits_the_cpu_or_wall_limit() -> None:
    result = run_sandboxed("while True: pass", limits=SandboxLimits(cpu_s=1, wall_s=6))
    assert result.cpu_limited or result.timed_out
    assert _grader_alive()


def test_fork_bomb_is_contained() -> None:
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    result = run_sandboxed(bomb, limits=SandboxLimits(cpu_s=2, wall_s=3))
    assert not result.ok
    assert _grader_alive()


def test_process_limit_bites_even_when_the_grader_is_root() -> None:
    src = (
        "import os, time\nn = 0\nfor _ in range(100):\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(1)\n        os._exit(0)\n"
        "    n += 1\nprint(n)"
    )
    result = run_sandboxed(src, limits=SandboxLimits(cpu_s=2, wall_s=6, processes=8))
    assert result.ok
    assert int(result.stdout) < 8


def test_memory_hog_fails_inside_the_sandbox() -> None:
    result = run_sandboxed("x = bytearray(8 * 1024 ** 3)", limits=SHORT)
    assert result.returncode != 0 and "MemoryError" in result.stderr
    assert _grader_alive()


def test_socket_cannot_reach_even_loopback() -> None:
    src = "import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect(('127.0.0.1', 5432))"
    result = run_sandboxed(src, limits=SHORT)
    assert result.returncode != 0
    assert "Error" in result.stderr


def test_project_files_outside_the_sandbox_are_invisible() -> None:
    assert SETTINGS.exists()
    result = run_sandboxed(f"print(open({str(SETTINGS)!r}).read())", limits=SHORT)
    assert result.returncode != 0 and "No such file" in result.stderr


def test_writing_outside_the_work_dir_fails() -> None:
    result = run_sandboxed("open('/usr/lib/atelier-escape', 'w').write('x')", limits=SHORT)
    assert result.returncode != 0 and "Read-only file system" in result.stderr
    assert not Path("/usr/lib/atelier-escape").exists()


def test_the_work_dir_is_writable_and_fresh_each_run() -> None:
    first = run_sandboxed("open('note', 'w').write('x'); import os; print(os.listdir('.'))", limits=SHORT)
    second = run_sandboxed("import os; print(os.listdir('.'))", limits=SHORT)
    assert first.stdout.strip() == "['note']"
    assert second.stdout.strip() == "[]"


def test_file_size_limit_stops_a_disk_filler() -> None:
    result = run_sandboxed("open('big', 'wb').write(b'x' * (64 * 1024 * 1024))", limits=SandboxLimits(file_mb=1))
    assert result.returncode != 0


def test_without_bwrap_the_grader_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "BWRAP", "/nonexistent/bwrap")
    monkeypatch.delenv("ATELIER_ALLOW_UNSANDBOXED", raising=False)
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        run_sandboxed("print(1)")


def test_escape_hatch_runs_unsandboxed_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "BWRAP", "/nonexistent/bwrap")
    monkeypatch.setenv("ATELIER_ALLOW_UNSANDBOXED", "1")
    result = run_sandboxed("print(6 * 7)", limits=SHORT)
    assert result.stdout.strip() == "42" and not result.sandboxed
    assert result.files == 0 and not result.files_limited  # no tmpfs of its own: nothing is counted


def test_output_flood_is_cut_at_the_cap_and_the_grader_keeps_its_memory() -> None:
    flood = "import os\nwhile True:\n    os.write(2, b'x' * 65536)"
    result = run_sandboxed(flood, limits=SandboxLimits(cpu_s=2, wall_s=2, output_bytes=1 << 20))
    assert result.truncated and len(result.stderr) == 1 << 20
    assert _grader_alive()


def test_a_flood_of_newlines_on_stderr_costs_the_grader_no_more_than_its_bytes() -> None:
    # the grader waits for stdout's lines only; a time kept per stderr newline was 8 bytes of its memory for
    # each byte the code wrote (32 MB of newlines under the grader's output cap: 256 MB, per sample)
    cap = 16 << 20
    tracemalloc.start()
    try:
        result = run_sandboxed(f"import os\nos.write(2, b'\\n' * {cap})", limits=SandboxLimits(output_bytes=cap))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.ok and result.stderr.count("\n") == cap
    assert peak < 6 * cap, f"{peak >> 20} MB"  # the kept bytes and their text; not a time per line


def test_stderr_tail_keeps_only_the_end_of_a_flood_and_is_not_a_truncation() -> None:
    program = "import os, sys\nfor _ in range(64):\n    os.write(2, b'x' * 65536)\nsys.stderr.write('the end')"
    result = run_sandboxed(program, limits=SandboxLimits(output_bytes=1 << 20, stderr_tail_bytes=1000))
    assert result.ok and not result.truncated
    assert len(result.stderr) == 1000 and result.stderr.endswith("x" * 993 + "the end")


@pytest.mark.parametrize("folder", [".", "/tmp", "/dev/shm"])
def test_many_files_cannot_fill_the_hosts_memory_through_tmpfs(folder: str) -> None:
    filler = f"for i in range(64):\n    open(f'{folder}/f{{i}}', 'wb').write(b'x' * (1 << 20))"  # 64 × 1 MB
    result = run_sandboxed(filler, limits=SandboxLimits(file_mb=2, tmpfs_mb=8))
    assert result.returncode != 0 and "No space left" in result.stderr


def test_dev_is_read_only() -> None:
    result = run_sandboxed("open('/dev/filler', 'wb')", limits=SHORT)
    assert result.returncode != 0 and "Read-only file system" in result.stderr


def test_a_session_waits_for_lines_with_a_deadline_and_stops_the_sandbox() -> None:
    program = "import sys, time\nprint('one', flush=True)\nsys.stdin.readline()\nprint('two', flush=True)\ntime.sleep(60)"
    with sandbox.start_sandboxed(program, limits=SandboxLimits(cpu_s=4, wall_s=30)) as session:
        assert session.wait_for_lines(1, 10)
        assert not session.wait_for_lines(2, 0.3)  # it waits for our line first
        session.send("go\n")
        assert session.wait_for_lines(2, 10)
        assert session.stdout_lines() == ["one", "two"]
        first, second = session.line_times()
        assert second >= first
        result = session.stop()
    assert not result.timed_out and result.wall_s < 30


def test_the_seccomp_filter_is_a_bpf_program() -> None:
    program = sandbox.seccomp_filter()
    assert program and len(program) % 8 == 0  # struct sock_filter is 8 bytes


def test_the_root_and_etc_are_read_only() -> None:
    result = run_sandboxed("open('/etc/passwd-x', 'w')", limits=SHORT)
    assert result.returncode != 0 and "Read-only file system" in result.stderr


#: The raw syscall numbers below (kill 62, pidfd_open 434, socket 41) are x86_64's.
x86_64_only = pytest.mark.skipif(os.uname().machine != "x86_64", reason="raw syscall numbers of x86_64")
_LIBC = "import ctypes, errno, os\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
#: name → a program that holds memory RLIMIT_AS does not count (kernel objects that outlive their mapping, or
#: are never mapped) and prints how many MB it held; each stops at 256 MB, twice the limit below.
_UNMAPPED_MEMORY: dict[str, str] = {
    "sysv_shared_memory": _LIBC + (
        "libc.shmat.restype = ctypes.c_void_p\nlibc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]\n"
        "libc.shmdt.argtypes = [ctypes.c_void_p]\nheld = 0\nfor _ in range(4):\n"
        "    segment = libc.shmget(0, 64 << 20, 0o1600)\n    if segment < 0:\n        break\n"
        "    address = libc.shmat(segment, None, 0)\n    ctypes.memset(address, 1, 64 << 20)\n"
        "    libc.shmdt(address)  # unmapped, so out of RLIMIT_AS; the segment lives on\n    held += 64\n"
        "print(held)"),
    "sysv_message_queues": _LIBC + (
        "message = ctypes.create_string_buffer(8 + 8192)\nmessage[0] = 1\nheld = 0\nfor _ in range(16384):\n"
        "    queue = libc.msgget(0, 0o1600)\n    if queue < 0:\n        break\n"
        "    held += 16 * sum(libc.msgsnd(queue, message, 8192, 0o4000) == 0 for _ in range(2))\n"
        "print(held // 1024)"),
    "memfd": "import os\nheld = 0\ntry:\n    for i in range(16):\n        fd = os.memfd_create(f'm{i}')\n"
             "        for _ in range(16):\n            os.write(fd, b'x' * (1 << 20))\n        held += 16\n"
             "except OSError:\n    pass\nprint(held)",
    # extended attributes: kernel memory beside the tmpfs's size cap, set by name or (kernel 6.13+, newer
    # than the libseccomp building the filter) by setxattrat, system call 463
    "tmpfs_xattrs": "import os\nheld = 0\ntry:\n    for i in range(1024):\n"
                    "        open(f'/tmp/x{i}', 'w').close()\n        for k in range(4):\n"
                    "            os.setxattr(f'/tmp/x{i}', f'user.k{k}', b'x' * 64000)\n            held += 64000\n"
                    "            if held >= 256 << 20:\n                raise StopIteration\n"
                    "except (OSError, StopIteration):\n    pass\nprint(held >> 20)",
    "tmpfs_xattrs_through_setxattrat": _LIBC + (
        "value = ctypes.create_string_buffer(64000)\n"
        "arguments = (ctypes.c_uint64 * 2)(ctypes.addressof(value), 64000)  # struct xattr_args: value, size, flags\n"
        "held = 0\nfor i in range(1024):\n    open(f'/tmp/x{i}', 'w').close()\n    for k in range(4):\n"
        "        if libc.syscall(463, -100, f'/tmp/x{i}'.encode(), 0, f'user.k{k}'.encode(), arguments, ctypes.c_size_t(16)) != 0:\n"
        "            break\n        held += 64000\n    if held >= 256 << 20 or k < 3:\n        break\n"
        "print(held >> 20)"),
}


# socket buffers: queued data is kernel memory. Unix socket pairs with their buffers set to the most the
# kernel allows (2 × net.core.wmem_max each); loopback TCP connections, whose buffers also grow by themselves
_SOCKET_BUFFERS = (
    "import socket\nheld = 0\nsockets = []\n"
    "def fill(sender, *receivers):\n    global held\n    for sock, option in ((sender, socket.SO_SNDBUF), *receivers):\n"
    "        try:\n            sock.setsockopt(socket.SOL_SOCKET, option, 1 << 30)\n        except OSError:\n"
    "            pass\n    sender.setblocking(False)\n    try:\n        while held < 256 << 20:\n"
    "            held += sender.send(b'x' * 65536)\n    except BlockingIOError:\n        pass\n"
)
_UNMAPPED_MEMORY["unix_socket_buffers"] = _SOCKET_BUFFERS + (
    "try:\n    while held < 256 << 20:\n        a, b = socket.socketpair()\n        sockets += [a, b]\n"
    "        fill(a, (b, socket.SO_RCVBUF))\n        fill(b, (a, socket.SO_RCVBUF))\n"
    "except OSError:\n    pass\nprint(held >> 20)")
_UNMAPPED_MEMORY["loopback_tcp_buffers"] = _SOCKET_BUFFERS + (
    "try:\n    server = socket.socket()\n    server.bind(('127.0.0.1', 0))\n    server.listen(512)\n"
    "    while held < 256 << 20:\n        client = socket.socket()\n        client.connect(server.getsockname())\n"
    "        accepted, _ = server.accept()\n        sockets += [client, accepted]\n"
    "        fill(client, (accepted, socket.SO_RCVBUF))\n"
    "except OSError:\n    pass\nprint(held >> 20)")


@pytest.mark.parametrize("name", sorted(_UNMAPPED_MEMORY))
def test_memory_outside_the_address_space_cannot_pass_the_memory_limit(name: str) -> None:
    # the grader's sandbox runs one process, so RLIMIT_AS is meant to bound all the host memory it takes
    limits = SandboxLimits(cpu_s=6, wall_s=15, memory_mb=128, new_processes=False, inet_sockets=False)
    result = run_sandboxed(_UNMAPPED_MEMORY[name], limits=limits)
    assert result.ok, result.stderr[-500:]
    assert int(result.stdout) < limits.memory_mb


#: name → a call aimed at bwrap's init (pid 1) with bits set above the 32-bit pid the kernel reads: a filter
#: comparing the whole 64-bit register with 1 lets it through. Prints the errno it got.
_PID_1_HIGH_BITS: dict[str, str] = {
    "kill": _LIBC + "print(0 if libc.syscall(62, ctypes.c_long(1 | 1 << 32), 0) == 0 else ctypes.get_errno())",
    "pidfd_open": _LIBC + "print(0 if libc.syscall(434, ctypes.c_long(1 | 1 << 32), 0) >= 0 else ctypes.get_errno())",
}


@x86_64_only
@pytest.mark.parametrize("name", sorted(_PID_1_HIGH_BITS))
def test_signals_and_pidfds_aimed_at_pid_1_are_refused_whatever_the_upper_bits(name: str) -> None:
    result = run_sandboxed(_PID_1_HIGH_BITS[name], limits=SHORT)
    assert result.stdout.strip() == str(errno.EPERM), (result.stdout, result.stderr[-500:])


@x86_64_only
@pytest.mark.parametrize("family", ["socket.AF_VSOCK", "socket.AF_PACKET", "socket.AF_VSOCK | 1 << 32"])
def test_sockets_the_network_namespace_does_not_confine_are_refused(family: str) -> None:
    # AF_VSOCK is not confined by the network namespace: on a VM it reaches the hypervisor's services
    program = _LIBC + f"import socket\nfd = libc.syscall(41, ctypes.c_long({family}), socket.SOCK_STREAM, 0)\n" \
                      "print(ctypes.get_errno() if fd < 0 else 'created')"
    result = run_sandboxed(program, limits=SHORT)
    assert result.stdout.strip() == str(errno.EPERM), (result.stdout, result.stderr[-500:])


def test_the_graders_sandbox_refuses_inet_sockets_and_keeps_unix_ones() -> None:
    program = ("import socket\na, b = socket.socketpair()\na.sendall(b'ok')\nprint(b.recv(2).decode())\n"
               "for family in (socket.AF_INET, socket.AF_INET6):\n    try:\n        socket.socket(family)\n"
               "    except PermissionError:\n        print('refused')")
    result = run_sandboxed(program, limits=SandboxLimits(cpu_s=2, wall_s=10, inet_sockets=False))
    assert result.ok and result.stdout.split() == ["ok", "refused", "refused"], result.stderr[-500:]


def test_the_sockets_honest_code_uses_are_still_allowed() -> None:
    program = ("import socket\na, b = socket.socketpair()\na.sendall(b'ok')\nprint(b.recv(2).decode())\n"
               "for family in (socket.AF_INET, socket.AF_INET6):\n    socket.socket(family).close()")
    result = run_sandboxed(program, limits=SHORT)
    assert result.ok and result.stdout.strip() == "ok", result.stderr[-500:]


@pytest.fixture
def file_under_usr_local():
    """A file the host places under /usr/local (as a site's local install would), removed afterwards."""
    if not os.access(sandbox.HIDDEN_LOCAL, os.W_OK):
        pytest.skip(f"needs to write under {sandbox.HIDDEN_LOCAL} (the suite runs as root in CI)")
    folder = Path(tempfile.mkdtemp(prefix="atelier-sandbox-test-", dir=sandbox.HIDDEN_LOCAL))
    secret = folder / "site-secret.txt"
    secret.write_text("a site's local secret")
    secret.chmod(0o644)
    folder.chmod(0o755)
    try:
        yield secret
    finally:
        shutil.rmtree(folder)


def test_usr_local_is_hidden_from_the_code_and_ordinary_programs_still_run(file_under_usr_local: Path) -> None:
    assert sandbox._hides_usr_local(sandbox.python_executable())  # the system python3 lives under /usr/bin
    program = (
        "import os, sys\n"
        f"print(sorted(os.listdir({sandbox.HIDDEN_LOCAL!r})))\n"
        f"print(os.path.exists({str(file_under_usr_local.parent)!r}))\n"
        "try:\n"
        f"    print(open({str(file_under_usr_local)!r}).read())\n"
        "except OSError as exc:\n"
        "    print(type(exc).__name__)\n"
        "import json, math\n"
        "print(json.dumps({'sum': sum(range(10)), 'pi': round(math.pi, 2)}))\n"
    )
    result = run_sandboxed(program, limits=SHORT)
    assert result.ok, result.stderr[-500:]
    assert result.stdout.splitlines() == ["[]", "False", "FileNotFoundError", '{"sum": 45, "pi": 3.14}']
    written = run_sandboxed(f"open({sandbox.HIDDEN_LOCAL + '/planted'!r}, 'w').write('x')", limits=SHORT)
    assert written.returncode != 0 and "Read-only file system" in written.stderr
    assert file_under_usr_local.read_text() == "a site's local secret"  # the host still sees its own file


@pytest.mark.skipif(os.path.islink(sandbox.HIDDEN_LOCAL) or not os.path.isdir(sandbox.HIDDEN_LOCAL),
                    reason="no /usr/local folder to hide")
def test_usr_local_stays_visible_to_a_program_that_lives_there() -> None:
    # an interpreter installed under /usr/local (a python:3.x image's) needs its own folder to start
    hidden = ["--tmpfs", sandbox.HIDDEN_LOCAL]
    system = sandbox._bwrap_argv([sandbox.python_executable(), "-c", "pass"])
    local = sandbox._bwrap_argv([sandbox.HIDDEN_LOCAL + "/bin/python3", "-c", "pass"])
    assert any(system[i:i + 2] == hidden for i in range(len(system)))
    assert not any(local[i:i + 2] == hidden for i in range(len(local)))
