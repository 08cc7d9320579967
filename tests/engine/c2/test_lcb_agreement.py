"""Side by side with LiveCodeBench: ``grade_code`` gives every honest program upstream's result list.

``UPSTREAM`` holds, for each program below, the result list that LiveCodeBench's own
``lcb_runner.evaluation.compute_code_generation_metrics.evaluate_generations_by_problem`` (HEAD 28fef95,
MIT licence; not vendored) returned for it, recorded on 2026-12-01 with::

    # a checkout of LiveCodeBench on sys.path; numpy and tqdm installed
    from lcb_runner.evaluation.compute_code_generation_metrics import evaluate_generations_by_problem
    from tests.engine.c2.test_lcb_agreement import PROBLEMS, PROGRAMS
    for name, (problem, code, timeout) in PROGRAMS.items():
        tests = PROBLEMS[problem]
        sample = {"input_output": json.dumps(tests.as_json())}
        print(name, evaluate_generations_by_problem(([code], sample, False, timeout))[0][0])

The ``call_nan_*`` programs were recorded on 2026-12-05 with the same call (LiveCodeBench HEAD 28fef95
from the tool library's mirror). The ``stateful_*``, ``stdio_signalling_nan_after_a_pass`` and
``call_wrong_before_an_unreadable_input`` programs (recorded on 2026-12-05 with the same call; the last
two: upstream's ``run_test`` answers [-4] "Error during testing" for the whole sample). The
``stateful_*`` ones carry state from one test to the next: upstream's ``run_test`` compiles the code
once and calls the same function — for LeetCode, the same ``Solution()`` instance — for every test, so a
class attribute or a global that accumulates makes a later test pass or fail there; the grader must run
a sample's tests in one runner to give the same list.

Upstream runs the code in its own process (no sandbox, no memory limit): only honest programs are
here — the ones that try to fool the grader are in ``test_hostile_programs.py``, where we
deliberately differ.
"""

from __future__ import annotations

import decimal

import pytest

from engine.c2.grading import CodeTests, grade_code
from tests.engine.c2.test_grading import needs_sandbox

_POWER = str(decimal.Context(prec=10000).power(decimal.Decimal(2), 20000))  # exact: 6,021 digits
PROBLEMS = {
    "sum": CodeTests(inputs=("1 2\n", "10 20\n", "5 5\n"), outputs=("3\n", "30\n", "10\n")),
    "float": CodeTests(inputs=("",), outputs=("0.50 2\nok\n",)),
    # 2**20000 has 6,021 digits: past CPython's default str() limit, inside upstream's 50,000
    "power": CodeTests(inputs=("20000\n",), outputs=(_POWER + "\n",)),
    "append": CodeTests(inputs=("[1, 2]\n3", "[]\n0"), outputs=("[1, 2, 3]", "[0]"), func_name="append"),
    "is_even": CodeTests(inputs=("4", "7"), outputs=("true", "false"), func_name="is_even"),
    "half": CodeTests(inputs=("4", "3"), outputs=("2.0", "1.5"), func_name="half"),
    "pairs": CodeTests(inputs=("[1, 2]",), outputs=("[[1, 2]]",), func_name="pairs"),
    "count": CodeTests(inputs=('"abca"',), outputs=('{"a": 2, "b": 1, "c": 1}',), func_name="count"),
    "calls": CodeTests(inputs=("1", "2", "3"), outputs=("1", "2", "3"), func_name="f"),
    "extend": CodeTests(inputs=("[1, 2]", "[3]"), outputs=("2", "1"), func_name="f"),
    "scale": CodeTests(inputs=("1", "2"), outputs=("1", "4"), func_name="f"),
    "unreadable_second_input": CodeTests(inputs=("1", "[1,"), outputs=("2", "3"), func_name="f"),
    "nan_list": CodeTests(inputs=("[NaN]",), outputs=("[NaN]",), func_name="f"),
    "nan_alone": CodeTests(inputs=("[NaN]",), outputs=("NaN",), func_name="f"),
    "nan_dict": CodeTests(inputs=("[NaN]",), outputs=('{"a": NaN}',), func_name="f"),
}

SUM = "a, b = map(int, input().split())\nprint(a + b)"
#: name → (problem, code, per-test timeout in seconds)
PROGRAMS: dict[str, tuple[str, str, int]] = {
    "stdio_passes": ("sum", SUM, 6),
    "stdio_sys_stdin_readline": ("sum", "import sys\na, b = map(int, sys.stdin.readline().split())\nprint(a + b)", 6),
    "stdio_stdin_read": ("sum", "import sys\nprint(sum(map(int, sys.stdin.read().split())))", 6),
    "stdio_main_guard_and_sys_exit": (
        "sum",
        "import sys\ndef main():\n    print(sum(map(int, input().split())))\n    sys.exit(0)\n"
        "if __name__ == '__main__':\n    main()",
        6,
    ),
    "stdio_stdout_write": ("sum", "import sys\na, b = map(int, input().split())\nsys.stdout.write(f'{a + b}\\n')", 6),
    "stdio_no_newline": ("sum", "a, b = map(int, input().split())\nprint(a + b, end='')", 6),
    "stdio_open_0": ("sum", "print(sum(map(int, open(0).read().split())))", 6),
    "stdio_wrong_answer": ("sum", "a, b = map(int, input().split())\nprint(a - b)", 6),
    "stdio_wrong_on_second_test": ("sum", "input()\nprint(3)", 6),
    "stdio_extra_line": ("sum", SUM + "\nprint(0)", 6),
    "stdio_decimal_tokens_equal": ("float", "print('0.5 2.0')\nprint('ok   ')", 6),
    "stdio_decimal_tokens_differ": ("float", "print('0.5 2.1')\nprint('ok')", 6),
    # a signalling NaN makes upstream's list == of Decimals raise InvalidOperation outside the per-test try:
    # run_test answers [-4] "Error during testing" for the whole sample, dropping the passed tests before it
    "stdio_signalling_nan_after_a_pass": ("sum", "a, b = map(int, input().split())\nprint(a + b if a == 1 else 'sNaN')", 6),
    "stdio_long_integer": ("power", "print(2 ** int(input()))", 6),
    "stdio_runtime_error": ("sum", "raise ValueError('boom')", 6),
    "stdio_syntax_error": ("sum", "def f(:\n    pass", 6),
    "stdio_iterating_sys_stdin": ("sum", "import sys\nfor line in sys.stdin:\n    print(sum(map(int, line.split())))", 6),
    "stdio_stdout_buffer": ("sum", "import sys\nsys.stdout.buffer.write(b'3\\n')", 6),
    "stdio_infinite_loop": ("sum", "while True:\n    pass", 1),
    "stdio_loop_swallowing_the_alarm": (
        "sum", "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass", 1,
    ),
    "call_solution_class_tuple": ("append", "class Solution:\n    def append(self, xs, y):\n        return tuple(xs + [y])", 6),
    "call_module_function": ("append", "def append(xs, y):\n    return xs + [y]", 6),
    "call_mutates_its_argument": ("append", "def append(xs, y):\n    xs.append(y)\n    return xs", 6),
    "call_missing_function": ("append", "def other():\n    return 1", 6),
    "call_wrong_answer": ("append", "def append(xs, y):\n    return xs", 6),
    "call_raises": ("append", "def append(xs, y):\n    return xs[10]", 6),
    "call_sys_exit": ("append", "import sys\nclass Solution:\n    def append(self, xs, y):\n        sys.exit(1)", 6),
    "call_infinite_loop": ("append", "def append(xs, y):\n    while True:\n        pass", 1),
    "call_int_for_bool": ("is_even", "def is_even(n):\n    return 1 if n % 2 == 0 else 0", 6),
    "call_int_for_float": ("half", "def half(n):\n    return n // 2 if n % 2 == 0 else n / 2", 6),
    "call_nested_tuple": ("pairs", "def pairs(xs):\n    return [tuple(xs)]", 6),
    "call_dict": ("count", "from collections import Counter\ndef count(s):\n    return dict(Counter(s))", 6),
    "call_counter": ("count", "from collections import Counter\ndef count(s):\n    return Counter(s)", 6),
    "call_module_level_print": ("append", "print('loading')\ndef append(xs, y):\n    print('hi')\n    return xs + [y]", 6),
    # upstream json.loads every input before the first test: one it cannot read is [-4] for the sample
    "call_wrong_before_an_unreadable_input": ("unreadable_second_input", "def f(x):\n    return 0", 6),
    # NaN != NaN, but a list's or dict's == compares items identity first, and json.loads gives every NaN as
    # one shared object: an input's NaN handed back equals the expected NaN inside a container, one the
    # code made (float("nan"), math.nan) never does, and a NaN alone never equals
    "call_nan_handed_back_in_a_list": ("nan_list", "def f(xs):\n    return xs", 6),
    "call_nan_handed_back_in_a_dict": ("nan_dict", "def f(xs):\n    return {'a': xs[0]}", 6),
    "call_nan_from_json_loads_in_a_list": ("nan_list", "import json\ndef f(xs):\n    return [json.loads('NaN')]", 6),
    "call_nan_made_by_the_code_in_a_list": ("nan_list", "def f(xs):\n    return [float('nan')]", 6),
    "call_math_nan_in_a_list": ("nan_list", "import math\ndef f(xs):\n    return [math.nan]", 6),
    "call_nan_handed_back_alone": ("nan_alone", "def f(xs):\n    return xs[0]", 6),
    # state that carries from one test to the next (one compile, one Solution() for all tests upstream)
    "stateful_solution_instance": (
        "calls",
        "class Solution:\n    def __init__(self):\n        self.seen = []\n    def f(self, x):\n"
        "        self.seen.append(x)\n        return len(self.seen)",
        6,
    ),
    "stateful_module_global": ("calls", "count = 0\ndef f(x):\n    global count\n    count += 1\n    return count", 6),
    "stateful_class_attribute": (  # the classic mutable class attribute: wrong from the second test on
        "extend", "class Solution:\n    acc = []\n    def f(self, nums):\n        self.acc.extend(nums)\n        return len(self.acc)", 6,
    ),
    "stateful_memo_of_the_first_call": (
        "scale",
        "class Solution:\n    memo = {}\n    def f(self, x):\n        if 'k' not in self.memo:\n"
        "            self.memo['k'] = x\n        return self.memo['k'] * x",
        6,
    ),
}

#: evaluate_generations_by_problem's result list for each program (recorded as the docstring says).
UPSTREAM: dict[str, list[bool | int]] = {
    "stdio_passes": [True, True, True],
    "stdio_sys_stdin_readline": [True, True, True],
    "stdio_stdin_read": [True, True, True],
    "stdio_main_guard_and_sys_exit": [True, True, True],
    "stdio_stdout_write": [True, True, True],
    "stdio_no_newline": [True, True, True],
    "stdio_open_0": [-2],
    "stdio_wrong_answer": [-2],
    "stdio_wrong_on_second_test": [True, -2],
    "stdio_extra_line": [-2],
    "stdio_decimal_tokens_equal": [True],
    "stdio_decimal_tokens_differ": [-2],
    "stdio_signalling_nan_after_a_pass": [-4],
    "stdio_long_integer": [True],
    "stdio_runtime_error": [-4],
    "stdio_syntax_error": [-4],
    "stdio_iterating_sys_stdin": [-4],
    "stdio_stdout_buffer": [-4],
    "stdio_infinite_loop": [-3],
    "stdio_loop_swallowing_the_alarm": [-2],
    "call_solution_class_tuple": [True, True],
    "call_module_function": [True, True],
    "call_mutates_its_argument": [True, True],
    "call_missing_function": [-4],
    "call_wrong_answer": [False],
    "call_raises": [-4],
    "call_sys_exit": [-2],
    "call_infinite_loop": [-3],
    "call_int_for_bool": [True, True],
    "call_int_for_float": [True, True],
    "call_nested_tuple": [False],
    "call_dict": [True],
    "call_counter": [True],
    "call_module_level_print": [True, True],
    "call_wrong_before_an_unreadable_input": [-4],
    "call_nan_handed_back_in_a_list": [True],
    "call_nan_handed_back_in_a_dict": [True],
    "call_nan_from_json_loads_in_a_list": [True],
    "call_nan_made_by_the_code_in_a_list": [False],
    "call_math_nan_in_a_list": [False],
    "call_nan_handed_back_alone": [False],
    "stateful_solution_instance": [True, True, True],
    "stateful_module_global": [True, True, True],
    "stateful_class_attribute": [True, False],
    "stateful_memo_of_the_first_call": [True, False],
}

@needs_sandbox
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_honest_program_gets_upstreams_result_list(name: str) -> None:
    problem, code, timeout = PROGRAMS[name]
    verdict = grade_code(code, PROBLEMS[problem], timeout_s=timeout)
    assert list(verdict.lcb_results) == UPSTREAM[name]
    assert verdict.passed == all(value is True for value in UPSTREAM[name])
