"""The test harness that runs *inside* the sandbox: LiveCodeBench's ``testing_util.run_test`` semantics.

This file is never imported by the engine; :mod:`engine.c2.grading` reads its source and runs it as
``python3 -I -c <source>`` under :func:`engine.c2.sandbox.run_sandboxed`, with one JSON payload on stdin
``{"code", "inputs", "outputs", "fn_name", "timeout"}``. It writes one JSON result
``{"results": [...], "metadata": {...}}`` to a private duplicate of the original stdout taken before the
model's code runs (the code's own prints are captured or go to /dev/null).

Behaviour reproduced from LiveCodeBench ``lcb_runner/evaluation/testing_util.py`` (HEAD 28fef95):

* ``import_string`` prepended (``from string import *`` … ``sys.setrecursionlimit(50000)``), and
  ``sys.set_int_max_str_digits(50000)`` as ``compute_code_generation_metrics`` sets;
* call-based (``fn_name`` given): ``"class Solution" in code`` → ``Solution()`` instance, else the module;
  each input line is ``json.loads``-ed into one positional argument, the output ``json.loads``-ed;
  a tuple result is compared as a list; ``==``;
* stdin/stdout: a trailing ``if __name__ == '__main__':`` block is unwrapped, the code is wrapped into
  ``wrapped_function()`` (imports hoisted), stdin/``open``/``readline``/``readlines``/``read`` patched,
  stdout captured; ``SystemExit`` is swallowed; outputs compared after ``strip()`` and per-line ``strip()``:
  equal line counts, then per line exact or equal lists of ``Decimal`` tokens;
* per-test ``signal.alarm(timeout)``; first failure stops: -2 wrong answer, -3 time limit (the
  exception's repr contains "timeoutexception"), -4 runtime error; an error while compiling or a missing
  function → ``[-4]`` "Error during testing";
* ``reliability_guard()`` (no memory argument, as ``run_test`` calls it) disables the same os/shutil/
  subprocess/builtins functions before the code runs.
"""

import ast
import faulthandler
import json
import os
import signal
import sys
import time
from decimal import Decimal
from io import StringIO
from types import ModuleType
from unittest.mock import mock_open, patch

IMPORT_STRING = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\nfrom operator import *\n"
    "from io import *\nfrom sys import *\nfrom json import *\nfrom builtins import *\nfrom typing import *\n"
    "import string\nimport re\nimport datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
    "import math\nimport random\nimport statistics\nimport itertools\nimport functools\nimport operator\n"
    "import io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)


def truncate(value, length=300):
    text = value if isinstance(value, str) else str(value)
    if len(text) <= length:
        return text
    return text[: length // 2] + "...(truncated) ..." + text[-length // 2 :]


class TimeoutException(Exception):
    pass


def on_alarm(signum, frame):
    raise TimeoutException


class Capturing(list):
    def __enter__(self):
        self._stdout = sys.stdout
        sys.stdout = self._stringio = StringIO()
        self._stringio.close = lambda *args: 1  # closing the capture is a no-op, as upstream
        return self

    def __exit__(self, *args):
        self.append(self._stringio.getvalue())
        del self._stringio
        sys.stdout = self._stdout


def unwrap_main_guard(code):
    try:
        tree = ast.parse(code)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            code = ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    except Exception:
        pass
    return code


def wrap_in_function(code):
    try:
        imports, others = [], []
        tree = ast.parse(code)
        for statement in tree.body:
            (imports if isinstance(statement, (ast.Import, ast.ImportFrom)) else others).append(statement)
        function = ast.FunctionDef(
            name="wrapped_function",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=others,
            decorator_list=[],
            lineno=-1,
        )
        return IMPORT_STRING + "\n" + ast.unparse(imports) + "\n" + ast.unparse(function)
    except Exception:
        return code


class StdinWithBuffer:
    def __init__(self, inputs):
        self.inputs = inputs
        self._stringio = StringIO(inputs)
        self.buffer = BytesBuffer(inputs)

    def read(self, *args):
        return self.inputs

    def readline(self, *args):
        return self._stringio.readline(*args)

    def readlines(self, *args):
        return self.inputs.split("\n")

    def __getattr__(self, name):
        return getattr(self._stringio, name)


class BytesBuffer:
    def __init__(self, inputs):
        self.inputs = inputs.encode("utf-8")

    def read(self, *args):
        return self.inputs

    def readline(self, *args):
        return self.inputs.split(b"\n")[0] + b"\n"


def call_with_stdin(method, inputs):
    if isinstance(inputs, list):
        inputs = "\n".join(inputs)
    lines = iter(inputs.split("\n"))
    stdin = StdinWithBuffer(inputs)

    @patch("builtins.open", mock_open(read_data=inputs))
    @patch("sys.stdin", stdin)
    @patch("sys.stdin.readline", lambda *args: next(lines))
    @patch("sys.stdin.readlines", lambda *args: inputs.split("\n"))
    @patch("sys.stdin.read", lambda *args: inputs)
    def inner(_method):
        try:
            return _method()
        except SystemExit:
            pass

    return inner(method)


def compile_solution(code, timeout):
    signal.alarm(timeout)
    try:
        module = ModuleType("tmp_sol", "")
        exec(code, module.__dict__)
        solution = module.Solution() if "class Solution" in code else module
        assert solution is not None
    finally:
        signal.alarm(0)
    return solution


def decimal_tokens(line):
    try:
        return True, [Decimal(token) for token in line.split()]
    except Exception:
        return False, []


def stripped_lines(value):
    return [line.strip() for line in value.strip().split("\n")]


def grade_call_based(code, inputs, outputs, fn_name, timeout):
    solution = compile_solution(IMPORT_STRING + "\n\n" + code, timeout)
    method = getattr(solution, fn_name) if hasattr(solution, fn_name) else None
    if method is None:
        return None
    all_inputs = [[json.loads(line) for line in raw.split("\n")] for raw in inputs]
    all_outputs = [json.loads(raw) for raw in outputs]
    results, total = [], 0.0
    for arguments, expected in zip(all_inputs, all_outputs):
        signal.alarm(timeout)
        faulthandler.enable()
        try:
            start = time.time()
            prediction = method(*arguments)
            total += time.time() - start
            signal.alarm(0)
            if isinstance(prediction, tuple):
                prediction = list(prediction)  # upstream: tuples are not penalised
            ok = prediction == expected
            results.append(ok)
            if not ok:
                return results, {
                    "output": truncate(prediction), "inputs": truncate(arguments),
                    "expected": truncate(expected), "error_code": -2, "error_message": "Wrong Answer",
                }
        except Exception as exc:
            signal.alarm(0)
            code_ = -3 if "timeoutexception" in repr(exc).lower() else -4
            results.append(code_)
            return results, {
                "error": repr(exc), "error_code": code_,
                "error_message": "Time Limit Exceeded" if code_ == -3 else "Runtime Error",
                "inputs": truncate(arguments), "expected": truncate(expected),
            }
        finally:
            signal.alarm(0)
            faulthandler.disable()
    return results, {"execution time": total}


def grade_stdio(code, inputs, outputs, timeout):
    solution = compile_solution(wrap_in_function(unwrap_main_guard(code)), timeout)
    method = getattr(solution, "wrapped_function") if hasattr(solution, "wrapped_function") else None
    if method is None:
        return None
    results, total = [], 0.0
    for given, expected in zip(inputs, outputs):
        signal.alarm(timeout)
        faulthandler.enable()
        with Capturing() as captured:
            try:
                start = time.time()
                call_with_stdin(method, given)
                total += time.time() - start
                signal.alarm(0)
            except Exception as exc:
                signal.alarm(0)
                code_ = -3 if "timeoutexception" in repr(exc).lower() else -4
                results.append(code_)
                return results, {
                    "error": repr(exc), "error_code": code_,
                    "error_message": "Time Limit Exceeded" if code_ == -3 else "Runtime Error",
                    "inputs": truncate(given), "expected": truncate(expected),
                }
            finally:
                signal.alarm(0)
                faulthandler.disable()
        prediction = captured[0]
        got, want = stripped_lines(prediction), stripped_lines(expected)
        wrong = {"output": truncate(prediction), "inputs": truncate(given), "expected": truncate(expected),
                 "error_code": -2}
        if len(got) != len(want):
            results.append(-2)
            wrong["error_message"] = "Wrong answer: mismatched output length"
            return results, wrong
        for index, (got_line, want_line) in enumerate(zip(got, want)):
            wrong["error_message"] = (
                f"Wrong answer at output_line_idx={index}: {truncate(got_line)} != {truncate(want_line)}"
            )
            if got_line == want_line:
                continue
            ok_got, got_decimals = decimal_tokens(got_line)
            if not ok_got:
                results.append(-2)
                return results, wrong
            ok_want, want_decimals = decimal_tokens(want_line)
            if not ok_want:
                results.append(-2)
                return results, wrong
            if got_decimals == want_decimals:
                continue
            results.append(-2)
            return results, wrong
        results.append(True)
    return results, {"execution time": total}


def reliability_guard():
    faulthandler.disable()
    import builtins
    import shutil
    import subprocess

    builtins.quit = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in (
        "kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork", "forkpty",
        "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown", "chmod", "chown",
        "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir",
    ):
        setattr(os, name, None)
    shutil.rmtree = None
    shutil.move = None
    shutil.chown = None
    subprocess.Popen = None
    builtins.help = None
    sys.modules["ipdb"] = None


def main():
    payload = json.loads(sys.stdin.read())
    # the result channel: a private copy of stdout; the code's own fd 1 goes to /dev/null
    result_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    sys.stdout = open(1, "w", closefd=False)
    result_channel = os.fdopen(result_fd, "w")
    write = result_channel.write
    flush = result_channel.flush
    dumps = json.dumps
    sys.set_int_max_str_digits(50000)
    signal.signal(signal.SIGALRM, on_alarm)
    reliability_guard()
    timeout = int(payload["timeout"])
    try:
        if payload.get("fn_name"):
            graded = grade_call_based(payload["code"], payload["inputs"], payload["outputs"],
                                      payload["fn_name"], timeout)
        else:
            graded = grade_stdio(payload["code"], payload["inputs"], payload["outputs"], timeout)
        results, metadata = graded  # None (no such function) raises, as upstream's unpacking does
    except Exception as exc:  # upstream run_test: any error during testing is [-4]; SystemExit is not caught
        results, metadata = [-4], {"error_code": -4, "error_message": f"Error during testing: {exc}"}
    finally:
        signal.alarm(0)
    write(dumps({"results": results, "metadata": metadata}, default=str))
    flush()


if __name__ == "__main__":
    main()
