"""LiveCodeBench's comparison as the grader runs it (``testing_util.grade_stdio`` / ``grade_call_based``
rules, HEAD 28fef95), on plain data read from the sandbox."""

from __future__ import annotations

import decimal
import random

import pytest

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
