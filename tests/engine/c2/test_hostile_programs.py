"""Programs that try to make the grader say "passed" without solving the problem, and programs that try
to leave the sandbox: every one must fail.

``HOSTILE`` holds one program per attack class of issue 23, in stdio and call-based form where the class
applies. Each was written against the grader as it was before (the harness ran the code in the process
that held the expected outputs, the comparison and the result channel); the attacks that worked there
(frames, gc, ctypes, forged result descriptor, replaced helpers, lying ``__eq__``, ignored alarm) are
aimed at the names that harness used. ``tests/leaderboard/c2/test_grading.py`` runs the same programs
through the C² service path and checks the stored verdicts.

``SANDBOX_ESCAPES`` are programs run directly in the sandbox: each prints ``HELD`` only when the attempt
was refused (and the host is unaffected), anything else is a failure.
"""

from __future__ import annotations

import os
import re
import socket
import time
import tracemalloc

import pytest

from engine.c2.grading import CODE_MAX_FILES, CodeTests, grade_code
from engine.c2.sandbox import SandboxLimits, run_sandboxed, sandbox_available
from tests.engine.c2.test_grading import needs_sandbox

#: The per-test limit the hostile programs are graded with (the late answers come after it).
TIMEOUT_S = 1
LATE_S = TIMEOUT_S + 0.6

STDIO = CodeTests(inputs=("1 2\n", "10 20\n"), outputs=("3\n", "30\n"))
CALL = CodeTests(inputs=("[1, 2]\n3", "[5]\n6"), outputs=("[1, 2, 3]", "[5, 6]"), func_name="append")
PROBLEMS = {"stdio": STDIO, "call": CALL}

_FRAME_WALK = """
import sys
def find(names):
    frame = sys._getframe()
    while frame is not None:
        for name in names:
            if name in frame.f_locals:
                return frame.f_locals[name]
        frame = frame.f_back
    return None
"""
_GC_SEARCH = """
import gc
def payload():
    for obj in gc.get_objects():
        if isinstance(obj, dict) and isinstance(obj.get("outputs"), list) and isinstance(obj.get("inputs"), list):
            return obj
    return None
"""
_CTYPES_REWRITE = """
import ctypes, sys
def rewrite(names, value):
    frame = sys._getframe()
    while frame is not None:
        for name in names:
            if name in frame.f_locals:
                frame.f_locals[name] = value
                ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
        frame = frame.f_back
"""
_FORGE = """
import json, os
def forge(*lines):
    for fd in range(0, 64):
        try:
            os.write(fd, ("\\n".join(lines) + "\\n").encode())
        except OSError:
            pass
RESULTS = json.dumps({"results": [True] * 2, "metadata": {}})
COMPILED = json.dumps({"event": "compiled"})
"""
def _liar(name: str, base: str, extra: str = "") -> str:
    """Source of a class whose == is always true (and != always false)."""
    return (f"class {name}({base}):\n    def __eq__(self, other):\n        return True\n"
            f"    def __ne__(self, other):\n        return False\n    __hash__ = {base}.__hash__\n{extra}")


_LYING = (
    _liar("Liar", "object") + _liar("LyingInt", "int") + _liar("LyingList", "list")
    + _liar("LyingStr", "str", "    def strip(self, *args):\n        return self\n"
                               "    def split(self, *args):\n        return [self]\n")
    + "class LooksLikeList:\n    __class__ = property(lambda self: list)\n"
      "    def __eq__(self, other):\n        return True\n"
)

#: name → (problem, program). Each must be graded failed.
HOSTILE: dict[str, tuple[str, str]] = {
    # 1. walking the frames up to the harness's expected output
    "frames_stdio": ("stdio", _FRAME_WALK + "found = find(['expected', 'gt_out', 'want'])\n"
                     "print(found.strip() if isinstance(found, str) else 'nothing')"),
    "frames_call": ("call", _FRAME_WALK + "def append(xs, y):\n    return find(['expected', 'gt_out'])"),
    # 2. finding the payload dict with gc and answering outputs[inputs.index(stdin)]
    "gc_payload_stdio": ("stdio", _GC_SEARCH + "import sys\ndata = sys.stdin.read()\nbox = payload()\n"
                         "print(box['outputs'][box['inputs'].index(data)].strip() if box and data in box['inputs'] "
                         "else 'nothing')"),
    "gc_payload_call": ("call", _GC_SEARCH + "import json\ndef append(xs, y):\n    box = payload()\n"
                        "    key = json.dumps(xs) + '\\n' + json.dumps(y)\n"
                        "    return json.loads(box['outputs'][box['inputs'].index(key)]) if box else None"),
    # 3. rewriting the harness frame's expected output through ctypes
    "ctypes_frames_stdio": ("stdio", _CTYPES_REWRITE + "rewrite(['expected', 'gt_out'], 'forged\\n')\nprint('forged')"),
    "ctypes_frames_call": ("call", _CTYPES_REWRITE + "def append(xs, y):\n    rewrite(['expected', 'gt_out'], 'x')\n"
                           "    return 'x'"),
    # 4. writing fake results on every descriptor (the result channel among them), then os._exit(0)
    "forged_results_stdio": ("stdio", _FORGE + "forge(RESULTS)\nos._exit(0)"),
    "forged_results_call": ("call", _FORGE + "def append(xs, y):\n    forge(RESULTS)\n    os._exit(0)"),
    "forged_answer_events_stdio": ("stdio", _FORGE + "forge(json.dumps({'event': 'output', 'text': '3\\n'}))\n"
                                   "os._exit(0)"),
    "forged_answer_events_call": ("call", _FORGE + "def append(xs, y):\n"
                                  "    forge(json.dumps({'event': 'returned', 'json': '[1, 2, 3]'}))\n    os._exit(0)"),
    "forged_answer_before_compiling_call": ("call", _FORGE + "forge(COMPILED, json.dumps({'event': 'returned', "
                                            "'json': '[1, 2, 3]'}))\ndef append(xs, y):\n    return None"),
    # 5. replacing the harness's comparison helpers, Decimal or json in __main__
    "replaced_helpers_stdio": ("stdio", "import __main__\n"
                               "for name in ('stripped_lines', 'get_stripped_lines'):\n"
                               "    setattr(__main__, name, lambda value: ['same'])\n"
                               "__main__.Decimal = lambda token: 0\n"
                               "__main__.decimal_tokens = lambda line: (True, [])\nprint('wrong')"),
    "replaced_decimal_stdio": ("stdio", "import __main__, decimal\n__main__.Decimal = lambda token: 0\n"
                               "decimal.Decimal = lambda token: 0\nprint('7')"),
    "replaced_json_loads_call": ("call", "import json\njson.loads = lambda *args, **kwargs: 'forged'\n"
                                 "def append(*args):\n    return 'forged'"),
    "captured_text_is_a_lying_str_stdio": ("stdio", _LYING + "import sys\nsys.stdout.getvalue = lambda: LyingStr('x')\n"
                                           "print('x')"),
    # 6. call-based: objects whose __eq__ is always true, int/str/list subclasses, a forged __class__
    "always_true_eq_call": ("call", _LYING + "def append(xs, y):\n    return Liar()"),
    "int_subclass_call": ("call", _LYING + "def append(xs, y):\n    return LyingInt(0)"),
    "str_subclass_call": ("call", _LYING + "def append(xs, y):\n    return LyingStr('x')"),
    "list_subclass_with_wrong_items_call": ("call", _LYING + "def append(xs, y):\n    return LyingList([0])"),
    "forged_class_call": ("call", _LYING + "def append(xs, y):\n    return LooksLikeList()"),
    "tuple_of_liars_call": ("call", _LYING + "def append(xs, y):\n    return tuple(Liar() for _ in range(len(xs) + 1))"),
    # 7. ignoring SIGALRM (or cancelling or blocking it) and answering after the per-test limit
    "ignores_alarm_answers_late_stdio": ("stdio", f"import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                                         f"a, b = map(int, input().split())\ntime.sleep({LATE_S})\nprint(a + b)"),
    "ignores_alarm_answers_late_call": ("call", f"import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                                        f"def append(xs, y):\n    time.sleep({LATE_S})\n    return xs + [y]"),
    "cancels_alarm_answers_late_stdio": ("stdio", f"import signal, time\nsignal.alarm(0)\na, b = map(int, input().split())\n"
                                         f"time.sleep({LATE_S})\nprint(a + b)"),
    "blocks_alarm_answers_late_call": ("call", f"import signal, time\n"
                                       f"def append(xs, y):\n    signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGALRM}})\n"
                                       f"    time.sleep({LATE_S})\n    return xs + [y]"),
    "swallows_timeout_answers_late_stdio": ("stdio", "import time\na, b = map(int, input().split())\n"
                                            "try:\n    time.sleep(30)\nexcept BaseException:\n    pass\nprint(a + b)"),
    "ignores_alarm_never_answers_call": ("call", "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                                         "def append(xs, y):\n    while True:\n        time.sleep(1)"),
    # 8. printing guesses to stderr and to every descriptor
    "guesses_on_every_fd_stdio": ("stdio", "import os, sys\nsys.stderr.write('3\\n')\n"
                                  "for fd in range(0, 64):\n    try:\n        os.write(fd, b'3\\n')\n"
                                  "    except OSError:\n        pass"),
    "guesses_on_every_fd_call": ("call", "import os\ndef append(xs, y):\n    for fd in range(0, 64):\n"
                                 "        try:\n            os.write(fd, b'[1, 2, 3]\\n')\n        except OSError:\n"
                                 "            pass\n    return None"),
    # 9. module-level work that ignores the alarm while compiling (upstream's compile_code has the same
    # alarm), then answers at once from what it precomputed
    "ignores_alarm_precomputes_past_the_limit_call": ("call", f"import signal, time\n"
                                                      f"signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                                                      f"time.sleep({LATE_S + TIMEOUT_S})\n"
                                                      f"def append(xs, y):\n    return xs + [y]"),
    # 10. answers the grader has to read carefully: nested past its JSON reader's depth (forged or
    # returned), NUL and lone surrogates (which a database column refuses), floods of output, tokens
    # and lines
    "nested_past_the_readers_depth_call": ("call", "def append(xs, y):\n    value = xs + [y]\n"
                                           "    for _ in range(5000):\n        value = [value]\n    return value"),
    "forged_answer_nested_past_the_readers_depth_call": ("call", _FORGE + "def append(xs, y):\n"
                                                         "    forge(json.dumps({'event': 'returned', "
                                                         "'json': '[' * 100000 + ']' * 100000}))\n    os._exit(0)"),
    "prints_nul_and_lone_surrogates_stdio": ("stdio", "print('\\x00\\ud800')"),
    "returns_nul_and_lone_surrogates_call": ("call", "def append(xs, y):\n    return '\\x00\\ud800'"),
    "floods_past_the_output_cap_stdio": ("stdio", "import sys\nchunk = '3' * (1 << 20)\n"
                                         "for _ in range(40):\n    sys.stdout.write(chunk)"),
    "floods_millions_of_tokens_stdio": ("stdio", "import sys\nsys.stdout.write('3 ' * 4_000_000)"),
    "floods_millions_of_lines_stdio": ("stdio", "import sys\nsys.stdout.write('3\\n' * 4_000_000)"),
    "floods_a_huge_list_call": ("call", "def append(xs, y):\n    return [0] * 4_000_000"),
    # 11. looking for the expected output where it is not: the parent's /proc entries, every readable
    # file of the sandbox, other processes' command lines and environments
    "reads_the_parents_proc_entries_stdio": ("stdio", "import os\nfound = []\n"
                                             "for name in ('cmdline', 'environ', 'maps'):\n    try:\n"
                                             "        found.append(open(f'/proc/{os.getppid()}/{name}', 'rb').read())\n"
                                             "    except OSError:\n        pass\n"
                                             "print(b''.join(found).decode(errors='replace').strip() or 'nothing')"),
    "searches_the_sandbox_for_expected_outputs_stdio": (
        "stdio", "import os, sys\ngiven = sys.stdin.read()\nanswer = None\n"
                 "for root in ('/tmp', '/sandbox', '/dev/shm', '/etc', '/proc'):\n"
                 "    for folder, _, files in os.walk(root):\n"
                 "        for name in files:\n            try:\n"
                 "                text = open(os.path.join(folder, name), errors='replace').read(1 << 16)\n"
                 "            except OSError:\n                continue\n"
                 "            if given.strip() in text and 'outputs' in text:\n                answer = text\n"
                 "print(answer or 'nothing')"),
    # 12. closing or reusing the runner's descriptors, lying on stderr, exit codes
    "closes_every_descriptor_then_answers_stdio": ("stdio", "import os\nos.closerange(0, 1024)\n"
                                                   "fd = os.open('/dev/null', os.O_WRONLY)\nprint(3)"),
    "closes_every_descriptor_call": ("call", "import os\ndef append(xs, y):\n    os.closerange(0, 1024)\n"
                                     "    return xs + [y]"),
    "claims_success_on_stderr_and_exits_0_stdio": ("stdio", "import os, sys\n"
                                                   "sys.stderr.write('{\"results\": [true, true]}\\npassed\\n')\n"
                                                   "sys.stderr.flush()\nos._exit(0)"),
    "exits_with_status_0_before_answering_call": ("call", "import os\ndef append(xs, y):\n    os._exit(0)"),
    # 13. children: answers from a process the grader never hears of, memory multiplied by the process count
    # (each answers right: only the refused process makes it fail; the hoards are small, should that regress)
    "forks_children_that_hold_memory_stdio": ("stdio", "import posix\nfor _ in range(4):\n"
                                              "    if posix.fork() == 0:\n        hoard = bytearray(1 << 26)\n"
                                              "        posix._exit(0)\na, b = map(int, input().split())\nprint(a + b)"),
    "spawns_a_helper_call": ("call", "import os\ndef append(xs, y):\n"
                             "    os.posix_spawn('/bin/sh', ['sh', '-c', 'sleep 100'], {})\n    return xs + [y]"),
    "busy_loop_ignoring_alarm_call": ("call", "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                                      "def append(xs, y):\n    while True:\n        pass"),
    # 14. host memory no limit counts: empty files, directories or links on the sandbox's tmpfs mounts (each
    # costs the host kernel about 1 KB that neither the tmpfs's size cap nor the address-space limit sees)
    "makes_empty_files_stdio": ("stdio", "i = 0\nwhile True:\n    open(f'f{i}', 'w').close()\n    i += 1"),
    "makes_empty_directories_call": ("call", "import os\ndef append(xs, y):\n    i = 0\n    while True:\n"
                                     "        os.mkdir(f'/tmp/d{i}')\n        i += 1"),
    "makes_symlinks_then_answers_stdio": ("stdio", "import os\nfor i in range(20000):\n"
                                          "    os.symlink('x', f'/dev/shm/l{i}')\n"
                                          "a, b = map(int, input().split())\nprint(a + b)"),
    # 15. host memory in socket buffers (queued data is kernel memory RLIMIT_AS does not count): unix socket
    # pairs with the largest buffers the kernel allows, loopback TCP connections (whose buffers grow by
    # themselves); each then answers right, so only the refusal makes it fail (256 MB at most, should it regress)
    "holds_unix_socket_buffers_stdio": ("stdio", "import socket\nheld, pairs = 0, []\nwhile held < 256 << 20:\n"
                                        "    a, b = socket.socketpair()\n    pairs.append((a, b))\n"
                                        "    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)\n"
                                        "    a.setblocking(False)\n    try:\n        while held < 256 << 20:\n"
                                        "            held += a.send(b'x' * 65536)\n    except BlockingIOError:\n"
                                        "        pass\na, b = map(int, input().split())\nprint(a + b)"),
    "holds_loopback_tcp_buffers_call": ("call", "import socket\nheld, held_sockets = 0, []\n"
                                        "server = socket.socket()\nserver.bind(('127.0.0.1', 0))\nserver.listen(64)\n"
                                        "while held < 256 << 20 and len(held_sockets) < 200:\n"
                                        "    client = socket.create_connection(server.getsockname())\n"
                                        "    held_sockets += [client, server.accept()[0]]\n    client.setblocking(False)\n"
                                        "    try:\n        while held < 256 << 20:\n"
                                        "            held += client.send(b'x' * 65536)\n    except BlockingIOError:\n"
                                        "        pass\ndef append(xs, y):\n    return xs + [y]"),
}

#: Honest programs graded alongside (they keep LiveCodeBench's verdict, see test_lcb_agreement.py).
HONEST: dict[str, tuple[str, str]] = {
    "honest_stdio": ("stdio", "a, b = map(int, input().split())\nprint(a + b)"),
    "honest_call": ("call", "class Solution:\n    def append(self, xs, y):\n        return xs + [y]"),
    # scratch files well under the sandbox's file limit (pathlib: stdio runs see upstream's mocked open, and
    # its reliability_guard leaves no os.getcwd for tempfile nor os.unlink to clean up with); exist_ok, since
    # all tests run in one process as upstream's, where a bare mkdir() fails the second test ([True, -4])
    "honest_with_scratch_files_stdio": ("stdio", "from pathlib import Path\nfor i in range(50):\n"
                                        "    Path(f'scratch{i}').write_text(str(i))\n"
                                        "Path('/tmp/work').mkdir(exist_ok=True)\nPath('/tmp/work/line').write_text(input())\n"
                                        "a, b = map(int, Path('/tmp/work/line').read_text().split())\n"
                                        "print(a + b)"),
}


@needs_sandbox
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_program_is_graded_failed(name: str) -> None:
    problem, program = HOSTILE[name]
    verdict = grade_code(program, PROBLEMS[problem], timeout_s=TIMEOUT_S)
    assert not verdict.passed, f"{name} passed: {verdict}"
    assert verdict.result != "passed" and verdict.lcb_results != (True,) * len(PROBLEMS[problem].inputs)


@needs_sandbox
@pytest.mark.parametrize("name", [n for n in sorted(HOSTILE) if "late" in n or "never_answers" in n])
def test_answering_after_the_limit_is_a_time_limit(name: str) -> None:
    problem, program = HOSTILE[name]
    verdict = grade_code(program, PROBLEMS[problem], timeout_s=TIMEOUT_S)
    assert verdict.result == "time_limit"
    assert verdict.tests[0].verdict == "time_limit"


@needs_sandbox
@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_program_beside_them_passes(name: str) -> None:
    problem, program = HONEST[name]
    assert grade_code(program, PROBLEMS[problem], timeout_s=TIMEOUT_S).passed


@needs_sandbox
@pytest.mark.parametrize("name", [n for n in sorted(HOSTILE) if n.startswith("makes_")])
def test_empty_files_directories_or_links_are_too_many_files(name: str) -> None:
    # stopped from outside once one tmpfs holds more than CODE_MAX_FILES (the last one answers, too late)
    problem, program = HOSTILE[name]
    verdict = grade_code(program, PROBLEMS[problem], timeout_s=TIMEOUT_S)
    assert verdict.result == "runtime_error" and verdict.tests[0].verdict == "runtime_error"
    assert "too many files" in verdict.message, verdict.message
    made = int(re.search(r"made (\d+) files", verdict.message).group(1))
    assert CODE_MAX_FILES < made < 50_000  # counted from outside; unbounded, the CPU limit let 737,000 through


@needs_sandbox
def test_a_lying_return_value_is_reported_as_not_plain_data() -> None:
    verdict = grade_code(HOSTILE["always_true_eq_call"][1], CALL, timeout_s=TIMEOUT_S)
    assert verdict.lcb_results == (False,) and "not plain JSON data" in verdict.message


# ---------------------------------------------------------------- the sandbox itself

_LIBC = "import ctypes, errno, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
_REFUSED = (
    "def refused(result):\n"
    "    return result == -1 and ctypes.get_errno() in (errno.EPERM, errno.EACCES, errno.ENOSYS, errno.EINVAL)\n"
)
#: name → program; the sandbox holds when the program prints HELD (and nothing escaped).
SANDBOX_ESCAPES: dict[str, str] = {
    "fill_the_root": "try:\n    open('/filler', 'wb').write(b'x' * (1 << 20))\nexcept OSError as exc:\n"
                     "    print('HELD' if exc.errno == 30 else exc)",
    "fill_etc": "try:\n    open('/etc/filler', 'wb').write(b'x' * (1 << 20))\nexcept OSError as exc:\n"
                "    print('HELD' if exc.errno == 30 else exc)",
    # the cap is 8 MB here: 2 MB files until the tmpfs is full, never past the cap
    "fill_tmp_beyond_its_cap": "written = 0\ntry:\n    for i in range(64):\n"
                               "        with open(f'/tmp/f{i}', 'wb') as sink:\n"
                               "            sink.write(b'x' * (2 << 20))\n        written += 2 << 20\n"
                               "except OSError as exc:\n"
                               "    print('HELD' if exc.errno == 28 and written <= 8 << 20 else (written, exc))",
    "fill_the_work_dir_beyond_its_cap": "written = 0\ntry:\n    for i in range(64):\n"
                                        "        with open(f'f{i}', 'wb') as sink:\n"
                                        "            sink.write(b'x' * (2 << 20))\n        written += 2 << 20\n"
                                        "except OSError as exc:\n"
                                        "    print('HELD' if exc.errno == 28 and written <= 8 << 20 else (written, exc))",
    "nested_user_namespace_unshare_command": "import subprocess\n"
                                             "done = subprocess.run(['unshare', '-U', '-r', 'id'], capture_output=True)\n"
                                             "print('HELD' if done.returncode != 0 else done.stdout)",
    "nested_user_namespace_syscall": _LIBC + _REFUSED + "print('HELD' if refused(libc.unshare(0x10000000)) else 'ESCAPED')",
    "new_mount_and_network_namespaces": _LIBC + _REFUSED + "print('HELD' if refused(libc.unshare(0x00020000)) and "
                                        "refused(libc.unshare(0x40000000)) else 'ESCAPED')",
    "clone_with_a_new_user_namespace": _LIBC + _REFUSED + "import signal\n"
                                       "pid = libc.syscall(56, 0x10000000 | signal.SIGCHLD, 0, 0, 0, 0)\n"
                                       "if pid == 0:\n    os._exit(0)\nprint('HELD' if refused(pid) else 'ESCAPED')",
    "setns_into_another_namespace": _LIBC + _REFUSED + "fd = os.open('/proc/self/ns/net', os.O_RDONLY)\n"
                                    "print('HELD' if refused(libc.setns(fd, 0)) else 'ESCAPED')",
    "mount_a_tmpfs": _LIBC + _REFUSED + "print('HELD' if refused(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)) "
                     "else 'ESCAPED')",
    "ptrace_pid_1": _LIBC + _REFUSED + "print('HELD' if refused(libc.ptrace(16, 1, 0, 0)) and "
                    "refused(libc.ptrace(0x4206, 1, 0, 0)) else 'ESCAPED')",
    "ptrace_traceme": _LIBC + _REFUSED + "print('HELD' if refused(libc.ptrace(0, 0, 0, 0)) else 'ESCAPED')",
    "write_pid_1_memory": "try:\n    open('/proc/1/mem', 'r+b')\nexcept OSError:\n    print('HELD')",
    "kill_pid_1": "import os, signal, time\ntry:\n    os.kill(1, signal.SIGKILL)\nexcept PermissionError:\n"
                  "    time.sleep(0.2)\n    print('HELD')",
    "signal_pid_1_through_a_pidfd": _LIBC + _REFUSED + "print('HELD' if refused(libc.syscall(434, 1, 0)) else 'ESCAPED')",
    "network_to_loopback": "import socket\ns = socket.socket()\ns.settimeout(2)\ntry:\n"
                           "    s.connect(('127.0.0.1', 5432))\nexcept OSError:\n    print('HELD')",
    "network_to_the_internet": "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ntry:\n"
                               "    s.sendto(b'x', ('1.1.1.1', 53))\nexcept OSError:\n    print('HELD')",
    "io_uring": _LIBC + _REFUSED + "params = ctypes.create_string_buffer(120)\n"
                "print('HELD' if refused(libc.syscall(425, 8, params)) else 'ESCAPED')",
    "perf_event_open": _LIBC + _REFUSED + "attr = ctypes.create_string_buffer(128)\n"
                       "print('HELD' if refused(libc.syscall(298, attr, 0, -1, -1, 0)) else 'ESCAPED')",
    "keyctl_and_add_key": _LIBC + _REFUSED + "print('HELD' if refused(libc.syscall(250, 0, -3, 0, 0, 0)) and "
                          "refused(libc.syscall(248, b'user', b'k', b'v', 1, -3)) else 'ESCAPED')",
    "bpf": _LIBC + _REFUSED + "attr = ctypes.create_string_buffer(128)\n"
           "print('HELD' if refused(libc.syscall(321, 0, attr, 128)) else 'ESCAPED')",
}

ESCAPE_LIMITS = SandboxLimits(cpu_s=4, wall_s=10, tmpfs_mb=8, file_mb=4)


@pytest.mark.skipif(not sandbox_available(), reason="needs /usr/bin/bwrap (Debian bubblewrap)")
@pytest.mark.parametrize("name", sorted(SANDBOX_ESCAPES))
def test_sandbox_refuses(name: str) -> None:
    result = run_sandboxed(SANDBOX_ESCAPES[name], limits=ESCAPE_LIMITS)
    assert result.stdout.strip() == "HELD", (result.stdout, result.stderr[-500:])


@pytest.mark.skipif(not sandbox_available(), reason="needs /usr/bin/bwrap (Debian bubblewrap)")
def test_the_hosts_abstract_unix_sockets_are_out_of_reach() -> None:
    # abstract unix sockets have no file to hide: only the network namespace separates them (a local
    # PostgreSQL or Redis may listen on one)
    name = f"atelier-sandbox-probe-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind("\0" + name)
        listener.listen(1)
        program = ("import socket\nprobe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\ntry:\n"
                   f"    probe.connect(chr(0) + {name!r})\n    print('ESCAPED')\nexcept OSError:\n    print('HELD')")
        result = run_sandboxed(program, limits=ESCAPE_LIMITS)
    assert result.stdout.strip() == "HELD", (result.stdout, result.stderr[-500:])


def test_the_hostile_suite_covers_every_attack_class_in_both_forms() -> None:
    classes = ("frames", "gc_payload", "ctypes_frames", "forged_results", "forged_answer_events", "replaced",
               "alarm", "guesses")
    for attack in classes:
        forms = {problem for name, (problem, _) in HOSTILE.items() if attack in name}
        assert forms == {"stdio", "call"}, attack
    assert {"always_true_eq_call", "int_subclass_call", "str_subclass_call"} <= set(HOSTILE)


def _processes_with_argument(argument: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                    if argument.encode() in cmdline.read().split(b"\0"):
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not sandbox_available(), reason="needs /usr/bin/bwrap (Debian bubblewrap)")
def test_a_child_left_running_dies_with_the_sandbox() -> None:
    # (a sandbox that allows processes; the grader's allows none, below)
    marker = "1000.0424242"  # a unique sleep length to find the child by
    program = ("import posix, signal\nfor s in (signal.SIGTERM, signal.SIGALRM, signal.SIGHUP):\n"
               "    signal.signal(s, signal.SIG_IGN)\n"
               f"if posix.fork() == 0:\n    posix.execv('/bin/sleep', ['sleep', '{marker}'])\nprint('answered')")
    assert run_sandboxed(program, limits=ESCAPE_LIMITS).stdout.strip() == "answered"
    time.sleep(0.5)
    assert _processes_with_argument(marker) == []


#: name → a program that tries to start a process some way; prints HELD when refused.
NEW_PROCESSES: dict[str, str] = {
    "fork": "import posix\ntry:\n    print('ESCAPED' if posix.fork() else '')\nexcept OSError:\n    print('HELD')",
    "subprocess": "import subprocess\ntry:\n    subprocess.run(['true'])\n    print('ESCAPED')\nexcept OSError:\n"
                  "    print('HELD')",
    "posix_spawn": "import os\ntry:\n    os.posix_spawn('/bin/true', ['true'], {})\n    print('ESCAPED')\n"
                   "except OSError:\n    print('HELD')",
    "multiprocessing": "import multiprocessing\ntry:\n    multiprocessing.Process(target=print).start()\n"
                       "    print('ESCAPED')\nexcept OSError:\n    print('HELD')",
    "vfork_syscall": _LIBC + _REFUSED + "print('HELD' if refused(libc.syscall(58)) else 'ESCAPED')",
    "clone_syscall_without_clone_thread": _LIBC + _REFUSED + "import signal\n"
                                          "pid = libc.syscall(56, signal.SIGCHLD, 0, 0, 0, 0)\n"
                                          "if pid == 0:\n    os._exit(0)\nprint('HELD' if refused(pid) else 'ESCAPED')",
}
GRADER_LIMITS = SandboxLimits(cpu_s=4, wall_s=10, new_processes=False)


@pytest.mark.skipif(not sandbox_available(), reason="needs /usr/bin/bwrap (Debian bubblewrap)")
@pytest.mark.parametrize("name", sorted(NEW_PROCESSES))
def test_the_graders_sandbox_starts_no_process(name: str) -> None:
    # RLIMIT_AS bounds one process: 16 children could each take the memory limit of the host
    result = run_sandboxed(NEW_PROCESSES[name], limits=GRADER_LIMITS)
    assert result.stdout.strip() == "HELD", (result.stdout, result.stderr[-500:])


@needs_sandbox
def test_threads_still_run_in_the_graders_sandbox() -> None:
    program = ("import threading\nfrom concurrent.futures import ThreadPoolExecutor\nthreading.stack_size(1 << 26)\n"
               "a, b = map(int, input().split())\nwith ThreadPoolExecutor(4) as pool:\n"
               "    print(sum(pool.map(int, [a, b])))")
    assert grade_code(program, STDIO, timeout_s=TIMEOUT_S).passed


@needs_sandbox
def test_compiling_past_the_limit_is_upstreams_compile_timeout_whatever_the_alarm() -> None:
    program = ("import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
               f"time.sleep({TIMEOUT_S + 0.4})\ndef append(xs, y):\n    return xs + [y]")  # done inside the grace
    verdict = grade_code(program, CALL, timeout_s=TIMEOUT_S)
    assert verdict.result == "runtime_error" and verdict.lcb_results == (-4,)
    assert "compiling took" in verdict.message


@needs_sandbox
def test_compiling_past_the_grace_is_stopped_from_outside_as_a_time_limit() -> None:
    verdict = grade_code(HOSTILE["ignores_alarm_precomputes_past_the_limit_call"][1], CALL, timeout_s=TIMEOUT_S)
    assert verdict.result == "time_limit" and "stopped from outside" in verdict.message


@needs_sandbox
def test_a_value_nested_past_the_graders_reader_is_a_wrong_answer_not_a_crash() -> None:
    verdict = grade_code(HOSTILE["nested_past_the_readers_depth_call"][1], CALL, timeout_s=TIMEOUT_S)
    assert verdict.result == "wrong_answer" and verdict.lcb_results == (False,)


@needs_sandbox
@pytest.mark.parametrize("name", ["prints_nul_and_lone_surrogates_stdio", "returns_nul_and_lone_surrogates_call"])
def test_nul_and_lone_surrogates_reach_the_verdict_only_as_escapes(name: str) -> None:
    problem, program = HOSTILE[name]
    verdict = grade_code(program, PROBLEMS[problem], timeout_s=TIMEOUT_S)
    stored = verdict.message + "".join(str(value) for value in verdict.metadata.values())
    assert "\\x00" in stored and "\x00" not in stored
    stored.encode("utf-8")  # a lone surrogate would raise here (and in the database)


# ---------------------------------------------------------------- the grader's own memory

#: Empty lists a forged answer holds: 4 bytes each on the channel ("[], "), about 70 bytes each once decoded.
_FORGED_LISTS = 4_000_000
_FORGE_ON_THE_CHANNEL = ("import json, os\ndef forge(line):\n    line = (line + '\\n').encode()\n"
                         "    for fd in range(3, 16):\n        try:\n            os.write(fd, line)\n"
                         "        except OSError:\n            pass\n"
                         f"PAYLOAD = '[' + '[], ' * {_FORGED_LISTS} + '[]]'\n")
#: name → a call-based program whose answer is a few bytes per value that the grader would decode into
#: a Python object each: ``grade_code_many`` runs one grader thread per core, each holding what it decoded.
MEMORY_AMPLIFIERS: dict[str, str] = {
    "forged_returned_value_of_millions_of_lists_call": _FORGE_ON_THE_CHANNEL + "def append(xs, y):\n"
        "    forge(json.dumps({'event': 'returned', 'json': PAYLOAD}))\n    return xs + [y]",
    "forged_event_that_is_millions_of_lists_call": _FORGE_ON_THE_CHANNEL + "def append(xs, y):\n"
        "    forge(PAYLOAD)\n    return xs + [y]",
    "forged_event_with_a_field_of_millions_of_lists_call": _FORGE_ON_THE_CHANNEL + "def append(xs, y):\n"
        "    forge('{\"event\": \"returned\", \"json\": \"[1, 2, 3]\", \"x\": ' + PAYLOAD + '}')\n    return xs + [y]",
}


@needs_sandbox
@pytest.mark.parametrize("name", sorted(MEMORY_AMPLIFIERS))
def test_an_answer_of_millions_of_tiny_values_is_failed_without_decoding_them(name: str) -> None:
    # the line itself is kept (a few copies of its 16 MB); decoded, its 4 million lists would take ~280 MB more
    tracemalloc.start()
    try:
        verdict = grade_code(MEMORY_AMPLIFIERS[name], CALL, timeout_s=5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not verdict.passed and verdict.result in ("wrong_answer", "runtime_error"), verdict
    assert peak < 25 * _FORGED_LISTS, f"the grader held {peak / 1e6:.0f} MB"


# ---------------------------------------------------------------- the grader's own exceptions

#: An integer upstream's runner can return (its limit is raised to 50,000 digits) whose str() raises in the
#: grader's process (CPython's default 4,300 digits): an exception there ends the whole batch of samples.
LONG_INTEGER = "1" + "0" * 5000
BIG_INTEGERS = CodeTests(inputs=(f"[1, 2]\n{LONG_INTEGER}",), outputs=(f"[1, 2, {LONG_INTEGER}]",), func_name="append")


@needs_sandbox
@pytest.mark.parametrize(
    ("program", "problem"),
    [
        ("def append(xs, y):\n    return 10 ** 5000", CALL),
        ("def append(xs, y):\n    return [[10 ** 5000], {'a': -10 ** 6000}]", CALL),
        ("def append(xs, y):\n    return xs", BIG_INTEGERS),  # an honest wrong answer: the test's own integers
    ],
    ids=["returns_a_long_integer", "returns_long_integers_nested", "wrong_answer_to_a_test_with_long_integers"],
)
def test_long_integers_in_a_failed_call_based_test_are_a_verdict_not_a_grader_exception(program, problem) -> None:
    verdict = grade_code(program, problem, timeout_s=TIMEOUT_S)  # returns, rather than raising
    assert verdict.result == "wrong_answer" and verdict.lcb_results == (False,)
    shown = verdict.metadata["output"] + verdict.metadata["inputs"] + verdict.metadata["expected"]
    assert "0" * 100 in shown and "...(truncated) ..." in shown


@needs_sandbox
def test_a_right_answer_with_long_integers_still_passes() -> None:
    assert grade_code("def append(xs, y):\n    return xs + [y]", BIG_INTEGERS, timeout_s=TIMEOUT_S).passed


@needs_sandbox
@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_a_flood_of_stderr_costs_the_grader_only_its_end_which_names_the_crash(problem: str) -> None:
    # 40 MB of stderr, then a crash: the grader keeps the end (the traceback), never the flood
    program = "import os\nos.write(2, b'x' * (40 << 20))\nraise KeyboardInterrupt('flooded then crashed')"
    tracemalloc.start()
    try:
        verdict = grade_code(program, PROBLEMS[problem], timeout_s=4)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert verdict.result == "runtime_error" and "flooded then crashed" in verdict.message, verdict.message
    assert peak < 16 << 20, f"the grader held {peak / 1e6:.0f} MB"
