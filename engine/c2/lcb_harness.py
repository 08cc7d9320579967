"""The runner that executes one LiveCodeBench sample's tests inside the sandbox, one input at a time, and nothing else.

This file is never imported by the engine; :mod:`engine.c2.grading` reads its source and runs it as
``python3 -I -c <source>`` under :func:`engine.c2.sandbox.start_sandboxed`, once per graded sample, in a
fresh sandbox. The process never holds an expected output, a comparison or a verdict: it answers what
the code printed (stdio) or returned (call-based) for one test input at a time, and the grader, in its
own process, decides — and sends the next input only when that answer passed.

The conversation, one JSON object per line (stdin from the grader, a private duplicate of stdout
taken before the code runs as the channel back; the code's own fd 1 goes to /dev/null):

1. grader → ``{"code", "fn_name", "timeout"}``; the runner loads what it needs, says
   ``{"event": "compiling"}`` just before the code first runs (the grader's clock for compiling starts
   there, so the code cannot stretch it), compiles the code and answers ``{"event": "compiled"}`` — or
   ``{"event": "error", "error_message"}`` (upstream's ``[-4]`` "Error during testing") and exits;
2. only then grader → ``{"input": "<the test's input>"}`` (so no code runs while the input is known
   before the grader's clock starts), and the runner answers one of ``{"event": "output", "text"}``
   (stdio: the captured stdout), ``{"event": "returned", "json", "own_nans"}`` (call-based: the return
   value, serialised by :func:`plain_json`; ``own_nans`` one character per NaN of it in text order, "1"
   for a NaN the code made, "0" for the NaN object ``json.loads`` gives), ``{"event": "unserialisable",
   "type"}``, or
   ``{"event": "raised", "error_code": -3|-4, "error"}``;
3. step 2 again for the next test, with the same compiled code (upstream's ``run_test`` compiles once
   and calls the same function, or the same ``Solution()`` instance, for every test, so state the code
   keeps carries over), until the grader stops sending.

Anything the code writes on the channel itself is at most a claim of what it printed or returned —
the same as answering — never a verdict: comparing with the expected output, the time limit (from the
grader's clock) and the verdict all happen outside.

Behaviour reproduced from LiveCodeBench ``lcb_runner/evaluation/testing_util.py`` (HEAD 28fef95):
``import_string`` prepended and ``sys.set_int_max_str_digits(50000)``; call-based: ``"class Solution"
in code`` → ``Solution()``, each input line ``json.loads``-ed into one positional argument, a tuple
result is a list; stdin/stdout: a trailing ``if __name__ == '__main__':`` unwrapped, the code wrapped
into ``wrapped_function()`` (imports hoisted), stdin/``open``/``readline``/``readlines``/``read``
patched, stdout captured, ``SystemExit`` swallowed; ``signal.alarm(timeout)`` around compiling and
around the call (-3 when the exception's repr contains "timeoutexception", else -4);
``reliability_guard()`` disables the same os/shutil/subprocess/builtins functions first.
"""

import ast
import faulthandler
import json
import os
import signal
import sys
from io import StringIO
from types import ModuleType

IMPORT_STRING = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\nfrom operator import *\n"
    "from io import *\nfrom sys import *\nfrom json import *\nfrom builtins import *\nfrom typing import *\n"
    "import string\nimport re\nimport datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
    "import math\nimport random\nimport statistics\nimport itertools\nimport functools\nimport operator\n"
    "import io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)
#: Deepest nesting plain_json walks (a deeper return value is not plain data for the grader).
MAX_DEPTH = 10000
#: The one NaN object json.loads returns for every NaN it reads — the inputs' NaNs, and upstream's expected
#: outputs' — taken before the code runs. Upstream's ``prediction == expected`` compares list items and dict
#: values identity first, so a returned NaN inside a container equals an expected NaN only if it *is* this
#: object (an input's NaN handed back); a NaN the code made (float("nan"), math.nan) never does.
JSON_NAN = json.loads("NaN")


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
    from unittest.mock import mock_open, patch  # loaded by prepare(), before the clock starts

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


def prepare(request, emit):
    """The callable to test, compiled as upstream's grade_call_based / grade_stdio do; None when the
    function is missing (upstream then fails to unpack None: "Error during testing"). ``emit`` says
    "compiling" the moment before the code first runs."""
    timeout = int(request["timeout"])
    if request.get("fn_name"):
        source = IMPORT_STRING + "\n\n" + request["code"]
        name = request["fn_name"]
    else:
        # unittest.mock pulls in asyncio (a third of a fresh runner's start): only stdio problems
        # patch stdin, and they load it here, before the grader's clock starts
        import unittest.mock  # noqa: F401

        source = wrap_in_function(unwrap_main_guard(request["code"]))
        name = "wrapped_function"
    emit({"event": "compiling"})
    solution = compile_solution(source, timeout)
    return getattr(solution, name) if hasattr(solution, name) else None


class NotPlainData(Exception):
    """A return value that is not made of exact builtin JSON types."""

    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind


def plain_json(value, depth=0, nans=None):
    """The return value as JSON text, built from *exact* builtin scalars only: str, int, float, bool,
    None; lists and dicts (str keys) are read through the base type's own methods, so a subclass
    (a Counter, or one with an always-true ``__eq__``) contributes only its real contents. A subclass
    of int, float or str, a nested tuple, a set or any other object is refused: nothing reaches the
    grader whose ``==`` the code defined, and the grader compares the decoded JSON. ``nans``, when a
    list, gets one entry per NaN written, in text order: whether it is :data:`JSON_NAN`."""
    kind = type(value)
    if depth > MAX_DEPTH:
        raise NotPlainData("a value nested deeper than %d levels" % MAX_DEPTH)
    if value is None or kind is bool or kind is int or kind is str or kind is float:
        if kind is float and value != value and nans is not None:
            nans.append(value is JSON_NAN)
        return json.dumps(value)  # a float's repr round-trips; NaN/Infinity as Python's json reads them
    if isinstance(value, list):
        return "[" + ", ".join(plain_json(item, depth + 1, nans) for item in list.__iter__(value)) + "]"
    if isinstance(value, dict):
        parts = []
        for key, item in dict.items(value):
            if type(key) is not str:
                raise NotPlainData("dict with a key of type %s" % type(key).__name__)
            parts.append(json.dumps(key) + ": " + plain_json(item, depth + 1, nans))
        return "{" + ", ".join(parts) + "}"
    raise NotPlainData(kind.__name__)


def returned_event(prediction):
    """The answer for a returned value: upstream's tuple → list, then the plain JSON text and, one
    character per NaN in it, whether the code made it ("1") or it is :data:`JSON_NAN` ("0"); or
    "unserialisable". (A runner's message is flat: at most three members, strings and numbers.)"""
    if isinstance(prediction, tuple):
        prediction = list(tuple.__iter__(prediction))  # upstream: tuples are not penalised
    nans = []
    try:
        text = plain_json(prediction, nans=nans)
    except NotPlainData as exc:
        return {"event": "unserialisable", "type": exc.kind}
    except Exception as exc:  # too deep, an integer past 50,000 digits, an object lying about its class
        return {"event": "unserialisable", "type": f"value that cannot be read as plain data ({type(exc).__name__})"}
    return {"event": "returned", "json": text, "own_nans": "".join("0" if shared else "1" for shared in nans)}


def call_under_alarm(function, timeout):
    """``(value, None)``, or ``(None, a "raised" event)``: upstream's ``signal.alarm(timeout)`` around
    the call, -3 when the exception's repr names the timeout, else -4. SystemExit is not caught (as
    upstream: in a call-based solution the run then ends without a result)."""
    signal.alarm(timeout)
    faulthandler.enable()
    try:
        value = function()
        signal.alarm(0)
        return value, None
    except Exception as exc:
        signal.alarm(0)
        return None, {"event": "raised", "error_code": -3 if "timeoutexception" in repr(exc).lower() else -4,
                      "error": repr(exc)}
    finally:
        signal.alarm(0)
        faulthandler.disable()


def run_call(method, raw_input, timeout):
    arguments = [json.loads(line) for line in raw_input.split("\n")]
    prediction, raised = call_under_alarm(lambda: method(*arguments), timeout)
    if raised is not None:
        return raised
    return returned_event(prediction)


def run_stdio(method, given, timeout):
    with Capturing() as captured:
        _, raised = call_under_alarm(lambda: call_with_stdin(method, given), timeout)
    return raised if raised is not None else {"event": "output", "text": captured[0]}


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
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")  # the grader's messages, private to the runner
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)  # the code reads its input from the patched sys.stdin, never from the grader
    os.dup2(devnull, 1)
    sys.stdout = open(1, "w", closefd=False)
    sys.stdin = open(0, "r", closefd=False)

    def emit(event):
        channel.write(json.dumps(event) + "\n")
        channel.flush()

    request = json.loads(requests.readline())
    sys.set_int_max_str_digits(50000)
    signal.signal(signal.SIGALRM, on_alarm)
    reliability_guard()
    timeout = int(request["timeout"])
    try:
        method = prepare(request, emit)
        if method is None:
            raise TypeError("cannot unpack non-iterable NoneType object")  # upstream's message
    except Exception as exc:  # upstream run_test: any error during testing is [-4]
        emit({"event": "error", "error_message": f"Error during testing: {exc}"})
        return
    emit({"event": "compiled"})
    # the same compiled code (and, for LeetCode, the same Solution()) answers every test, as upstream's
    # run_test calls one method for all of them; the next input comes only once the grader has judged
    # this answer, and no more after a failure
    while line := requests.readline():
        given = json.loads(line)["input"]
        if request.get("fn_name"):
            try:
                emit(run_call(method, given, timeout))
            except json.JSONDecodeError as exc:  # a malformed input line: upstream fails while parsing
                emit({"event": "error", "error_message": f"Error during testing: {exc}"})
        else:
            emit(run_stdio(method, given, timeout))


if __name__ == "__main__":
    main()
