"""LiveCodeBench's comparison as the grader runs it (``testing_util.grade_stdio`` / ``grade_call_based``
rules, HEAD 28fef95), on plain data read from the sandbox."""

from __future__ import annotations

import decimal
import importlib.util
import json
import random
from types import ModuleType
from typing import Any

import pytest

from engine.c2 import grading
from engine.c2.lcb_compare import (
    DECODED_MISMATCH_CHARS,
    INT_MAX_DIGITS,
    call_result,
    load_json,
    stdio_result,
    truncate,
)
from tests.engine.c2 import official_reference as official


def test_stdio_lines_are_stripped_before_comparing() -> None:
    assert stdio_result("  3  \n\n", "1 2\n", "3\n") == (True, {})


def test_stdio_tokens_equal_as_decimals_pass() -> None:
    assert stdio_result("0.5 2.0\nok", "", "0.50 2\nok\n")[0] is True


def test_stdio_different_line_counts_are_a_wrong_answer_with_upstreams_message() -> None:
    result, metadata = stdio_result("3\n4\n", "1 2\n", "3\n")
    assert result == -2 and metadata["error_message"] == "Wrong answer: mismatched output length"


def test_stdio_the_message_names_the_first_differing_line() -> None:
    result, metadata = stdio_result("1\n2\nx\n", "", "1\n2\n3\n")
    assert result == -2 and metadata["error_message"] == "Wrong answer at output_line_idx=2: x != 3"


def test_stdio_text_that_is_not_decimal_must_match_exactly() -> None:
    assert stdio_result("Yes", "", "YES")[0] == -2


@pytest.mark.parametrize(("printed", "expected"), [("sNaN", "3"), ("1 sNaN", "1 2"), ("-sNaN", "0"), ("sNaN", "NaN")])
def test_stdio_a_printed_signalling_nan_is_upstreams_error_during_testing_not_a_grader_exception(
    printed: str, expected: str
) -> None:
    """Decimal("sNaN") parses, and == reaching it raises InvalidOperation under the default context.
    Upstream's grade_stdio compares outside its per-test try, so run_test answers [-4] "Error during
    testing: [<class 'decimal.InvalidOperation'>]" (LiveCodeBench testing_util.py, HEAD 28fef95)."""
    result, metadata = stdio_result(printed, "", expected + "\n")
    assert result == -4
    assert metadata["error_message"] == "Error during testing: [<class 'decimal.InvalidOperation'>]"


def test_stdio_a_signalling_nan_after_a_differing_token_is_a_wrong_answer() -> None:
    # list == stops at the first unequal pair (1 != 2) before it reaches the sNaN: no exception upstream
    result, metadata = stdio_result("1 sNaN", "", "2 2\n")
    assert result == -2 and metadata["error_message"].startswith("Wrong answer at output_line_idx=0")


def test_call_compares_the_decoded_value_with_python_equality() -> None:
    assert call_result("1", [4], True) == (True, {})  # 1 == True, as upstream's ==
    assert call_result("2", [4], 2.0)[0] is True
    assert call_result('{"a": 1}', ["a"], {"a": 1})[0] is True


def test_call_mismatch_is_false_with_upstreams_metadata() -> None:
    result, metadata = call_result("[1]", [[1], 2], [1, 2])
    assert result is False
    assert metadata["error_code"] == -2 and metadata["error_message"] == "Wrong Answer"


def test_load_json_reads_integers_past_the_processs_own_digit_limit() -> None:
    digits = str(decimal.Context(prec=10000).power(decimal.Decimal(7), 7000))  # 5,916 digits > 4,300
    assert load_json(f"[-{digits}]")[0] == -(7**7000)


def test_load_json_refuses_integers_past_upstreams_limit() -> None:
    with pytest.raises(ValueError, match="digits"):
        load_json("9" * (INT_MAX_DIGITS + 1))


def test_truncate_keeps_both_ends_like_truncatefn() -> None:
    text = "a" * 200 + "b" * 200
    assert truncate(text) == "a" * 150 + "...(truncated) ..." + "b" * 150
    assert truncate(12) == "12"


def test_a_long_return_value_equal_in_another_spelling_still_passes() -> None:
    # past DECODED_MISMATCH_CHARS the grader counts brackets and separators before decoding: every spelling
    # of an equal value has the same count (an int for a float, true for 1, escapes, brackets in strings)
    expected_text = '{"a":[' + ",".join(["1e308", "1", "0", '"[x,{y}]\\u00e9"'] * 20000) + "]}"
    expected = load_json(expected_text)
    spelled = '{"a": [' + ", ".join([str(int(1e308)), "true", "-0.0", '"[x,{y}]\\u00e9"'] * 20000) + "]}"
    assert len(spelled) > DECODED_MISMATCH_CHARS
    assert call_result(spelled, [], expected) == (True, {})


def test_a_long_return_value_with_another_structure_is_a_wrong_answer_unread() -> None:
    expected = load_json("[" + ",".join(["1"] * 30000) + "]")
    result, metadata = call_result("[" + ", ".join(["[]"] * 30000) + "]", [], expected)
    assert result is False and metadata["error_message"] == "Wrong Answer"
    assert call_result("[" + ", ".join(["2"] * 30000) + "]", [], expected)[0] is False  # same count, decoded


def test_truncate_writes_integers_past_cpythons_digit_limit_as_upstream_does() -> None:
    # upstream's truncatefn(str(value)) runs with its limit raised to 50,000 digits; here str() would raise
    digits = "1" + "0" * 5000
    value = load_json(f'[{digits}, {{"k": -{digits}}}, [true, null, 0.5, "s"]]')
    full = f"[{digits}, {{'k': -{digits}}}, [True, None, 0.5, 's']]"
    assert truncate(value) == full[:150] + "...(truncated) ..." + full[-150:]
    assert truncate(value, 100_000) == full


# ---------------------------------------------------------------- differential: our result beside the official one
#
# The reference is tests/engine/c2/official_reference.py (testing_util.py's comparison restated, test-only).
# Each stdio row also carries what LiveCodeBench's own grade_stdio (HEAD 28fef95, run on 2026-12-05 with a
# program that writes the printed text) gave: the test's result and error_message, or run_test's [-4]
# "Error during testing" for an exception that escaped it — so the reference is checked on CI too.

STDIO_TABLE = [
    # (what the program printed, the expected output, upstream's result, upstream's error_message)
    ("3 \n", "3", True, None),
    ("3\r\n", "3\n", True, None),
    ("1\r\n2\r\n", "1\n2\n", True, None),
    ("1\n\n2\n", "1\n2\n", -2, 'Wrong answer: mismatched output length'),
    ("\n\n1\n2\n\n\n", "1\n2", True, None),
    ("1 \n 2\t\n", "1\n2", True, None),
    ("", "", True, None),
    ("  \n\t", "", True, None),
    ("", "0", -2, 'Wrong answer at output_line_idx=0:  != 0'),
    ("0", "", -2, 'Wrong answer at output_line_idx=0: 0 != '),
    ("1.0", "1", True, None),
    ("1.000000", "1", True, None),
    ("-0", "0", True, None),
    ("-0.0", "0", True, None),
    ("+0", "-0", True, None),
    ("1e0", "1", True, None),
    ("1E+2", "100", True, None),
    ("1,000", "1000", -2, 'Wrong answer at output_line_idx=0: 1,000 != 1000'),
    ("1_000", "1000", True, None),
    ("3.50", "3.5", True, None),
    ("0.1000000000000000000001", "0.1",
     -2, "Wrong answer at output_line_idx=0: 0.1000000000000000000001 != 0.1"),
    ("50000000000000001", "50000000000000000",
     -2, "Wrong answer at output_line_idx=0: 50000000000000001 != 50000000000000000"),
    ("NaN", "NaN", True, None),
    ("nan", "NaN", -2, 'Wrong answer at output_line_idx=0: nan != NaN'),
    ("sNaN", "1", -4, "Error during testing: [<class 'decimal.InvalidOperation'>]"),
    ("1 sNaN", "2 3", -2, 'Wrong answer at output_line_idx=0: 1 sNaN != 2 3'),
    ("inf", "Infinity", True, None),
    ("-inf", "-Infinity", True, None),
    ("YES", "yes", -2, 'Wrong answer at output_line_idx=0: YES != yes'),
    ("Yes", "Yes", True, None),
    ("1  2", "1 2", True, None),
    ("1\t2", "1 2", True, None),
    ("a  b", "a b", -2, 'Wrong answer at output_line_idx=0: a  b != a b'),
    ("1 2 3", "1 2", -2, 'Wrong answer at output_line_idx=0: 1 2 3 != 1 2'),
    ("1 2", "1 2 3", -2, 'Wrong answer at output_line_idx=0: 1 2 != 1 2 3'),
    ("2 1", "1 2", -2, 'Wrong answer at output_line_idx=0: 2 1 != 1 2'),
    ("\u00a01\u00a0", "1", True, None),
    ("1\u00a02", "1 2", True, None),
    ("1\x1c", "1", True, None),
    ("١", "1", True, None),
    ("１", "1", True, None),
    ("1\r2", "1\n2", -2, 'Wrong answer: mismatched output length'),
    ("[1, 2]", "[1,2]", -2, 'Wrong answer at output_line_idx=0: [1, 2] != [1,2]'),
    ("True", "true", -2, 'Wrong answer at output_line_idx=0: True != true'),
    (".5", "0.5", True, None),
    ("5.", "5", True, None),
    ("x" * 400, "y" * 400, -2, "Wrong answer at output_line_idx=0: " + "x" * 150 + "...(truncated) ..." + "x" * 150
     + " != " + "y" * 150 + "...(truncated) ..." + "y" * 150),
]

#: Lines the fuzz builds outputs from: integers and decimals in several spellings, signed zeros, special
#: values, thousands separators, words and case, token spacing, unicode digits and whitespace.
OUTPUT_LINES = (
    "1", "1.0", "1.00", "-0", "0", "+0", "-0.0", "0.0", "1e0", "1E0", "10", "1e1", "3.50", "3.5", "1,000", "1000",
    "1_000", "inf", "Infinity", "-inf", "nan", "NaN", "sNaN", "0x10", "١", "１", "1 2", "1  2", "1\t2", "1 2 ", " 1 2",
    "2 1", "YES", "yes", "Yes", "", " ", "abc", "abc ", "a b", "1.0000000000000000001", "50000000000000000",
    "50000000000000001", ".5", "0.5", "5.", "5", "-", "1.2.3", "[1, 2]", "[1,2]", "1\r", "\u00a0", "1\u00a02",
    "1\u20092", "\x1c", "1\x1c2", "\x0b", "1\x0c2", "\u2028", "True", "true", "None", "-1", "−1", "1/2",
    "1e-7", "0.0000001", "1e999999999", "-sNaN",
)
OUTPUT_JOINS = ("\n", "\n", "\r\n", "\n\n", " \n", "\n ", "\r", "\n\t")
FUZZ_SEED = 20261205
FUZZ_CASES = 3000


def printed_output(rng: random.Random) -> str:
    """Up to four output lines, tricky joins, sometimes leading or trailing whitespace and blank lines."""
    text = "".join((rng.choice(OUTPUT_JOINS) if index else "") + rng.choice(OUTPUT_LINES)
                   for index in range(rng.randint(0, 4)))
    if rng.random() < 0.3:
        text = rng.choice(("", " ", "\n", "\r\n", "\t", "\n\n")) + text
    if rng.random() < 0.5:
        text += rng.choice(("", "\n", " \n", "\r\n", "\n\n", "  ", "\t"))
    return text


def stdio_fuzz_cases(seed: int = FUZZ_SEED, count: int = FUZZ_CASES) -> list[tuple[str, str]]:
    """(printed, expected): random pairs, a fifth identical, and every pair of single lines."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        expected = printed_output(rng)
        cases.append((expected if rng.random() < 0.2 else printed_output(rng), expected))
    return cases + [(a, b) for a in OUTPUT_LINES for b in OUTPUT_LINES]


def our_stdio(printed: str, expected: str) -> tuple[bool | int, str | None]:
    result, metadata = stdio_result(printed, "", expected)
    return result, metadata.get("error_message")


@pytest.mark.parametrize(("printed", "expected", "result", "message"), STDIO_TABLE)
def test_stdio_result_equals_upstreams_grade_stdio_on_tricky_outputs(printed: str, expected: str,
                                                                     result: bool | int, message: str | None) -> None:
    assert official.lcb_stdio_outcome(printed, expected) == (result, message)  # the reference is upstream's
    assert our_stdio(printed, expected) == (result, message)
    assert type(our_stdio(printed, expected)[0]) is type(result)  # True, not 1


def test_stdio_result_equals_upstreams_grade_stdio_on_seeded_fuzz() -> None:
    differing = [(printed, expected, official.lcb_stdio_outcome(printed, expected), our_stdio(printed, expected))
                 for printed, expected in stdio_fuzz_cases()
                 if official.lcb_stdio_outcome(printed, expected) != our_stdio(printed, expected)]
    assert differing == []


def _runner() -> ModuleType:
    """engine/c2/lcb_harness.py, the sandbox's runner, as a module: its plain_json is what the grader
    receives for a returned value (the runner is never imported by the engine; only read as source)."""
    spec = importlib.util.spec_from_file_location("lcb_runner_under_test", grading.__file__.replace(
        "grading.py", "lcb_harness.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUNNER = _runner()


def our_call(value: Any, expected_json: str) -> bool:
    """The grader's result for a returned value: the runner's answer for it (a tuple made a list, the value
    as plain JSON with its NaNs marked; "unserialisable" for what is not exact plain data, which the grader
    answers False, a wrong answer), then the grader's comparison with the decoded expected output."""
    event = RUNNER.returned_event(value)
    if event["event"] == "unserialisable":
        return False
    return call_result(event["json"], [], load_json(expected_json), own_nans=event["own_nans"])[0]


def returned_value(rng: random.Random, depth: int = 0) -> Any:
    """A value a call-based solution might return: JSON scalars (signed zeros, infinities, big integers,
    NaNs the code made and NaN as json.loads gives it, e.g. an input's handed back), lists, str-keyed dicts,
    tuples anywhere, now and then an int-keyed dict."""
    kind = rng.random() if depth < 3 else 0.0
    if kind < 0.55:
        return rng.choice((0, 1, -1, 2, 10**20, 2**70, 0.0, -0.0, 1.0, 1.5, 0.1 + 0.2, 0.3, 1e20, float("nan"),
                           json.loads("NaN"), float("inf"), -float("inf"), True, False, None, "", "1", "a", "None",
                           "true", "é"))
    items = [returned_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if kind < 0.75:
        return items
    if kind < 0.85:
        return tuple(items)
    if kind < 0.97:
        return {rng.choice(("a", "b", "1", "")): item for item in items}
    return {index: item for index, item in enumerate(items)}


def expected_like(value: Any, rng: random.Random) -> Any:
    """An expected output near ``value``: the same, or with equal-comparing spellings (1 for True, 1.0 for
    1, 0 for -0.0) and now and then one element changed."""
    if isinstance(value, bool):
        return rng.choice((value, int(value), float(value)))
    if isinstance(value, int):
        return rng.choice((value, float(value) if abs(value) < 2**53 else value, value + 1))
    if isinstance(value, float):
        return rng.choice((value, 0 if value == 0 else value, value * 2))
    if isinstance(value, (list, tuple)):
        return [expected_like(item, rng) for item in value]
    if isinstance(value, dict):
        return {str(key): expected_like(item, rng) for key, item in value.items()}
    return value


def call_fuzz_cases(seed: int = FUZZ_SEED, count: int = FUZZ_CASES) -> list[tuple[Any, str]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        value = returned_value(rng)
        expected = expected_like(value, rng) if rng.random() < 0.8 else returned_value(rng)
        cases.append((value, json.dumps(expected)))
    return cases


@pytest.mark.parametrize(("own_nans", "equal"), [("1", False), ("0", True), ("", True), ("10", False)])
def test_call_a_nan_the_code_made_equals_no_expected_nan_inside_a_container(own_nans: str, equal: bool) -> None:
    """Upstream's list == compares items identity first; json.loads gives every NaN as one object, so only
    json's own NaN (an input's, handed back: mark "0") equals the expected one, never a NaN the code made."""
    assert call_result("[NaN]", [], load_json("[NaN]"), own_nans=own_nans)[0] is equal
    assert call_result('{"a": [NaN]}', [], load_json('{"a": [NaN]}'), own_nans=own_nans)[0] is equal


def test_call_a_nan_alone_never_equals_the_expected_nan() -> None:
    assert call_result("NaN", [], load_json("NaN"), own_nans="0")[0] is False


def test_the_runner_marks_the_nans_the_code_made_in_text_order() -> None:
    shared = json.loads("NaN")
    event = RUNNER.returned_event(({"a": float("nan"), "b": [shared]}, shared, float("inf")))
    assert event == {"event": "returned", "json": '[{"a": NaN, "b": [NaN]}, NaN, Infinity]', "own_nans": "100"}


def test_call_result_equals_upstreams_equality_on_seeded_fuzz() -> None:
    """Plain data only: a value of another type (an int subclass, a numpy scalar, a Decimal, an object
    with its own __eq__) is refused by the runner and fails where upstream's == may pass — deliberately,
    since the code chose that __eq__ (test_hostile_programs.py)."""
    cases = call_fuzz_cases()
    differing = [(value, expected, official.lcb_call_outcome(value, expected), our_call(value, expected))
                 for value, expected in cases if official.lcb_call_outcome(value, expected) != our_call(value, expected)]
    assert differing == []
    assert {official.lcb_call_outcome(value, expected) for value, expected in cases} == {True, False}
