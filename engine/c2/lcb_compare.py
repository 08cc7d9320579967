"""LiveCodeBench's output comparison, run by the grader on what the sandboxed code emitted.

The rules are those of ``lcb_runner/evaluation/testing_util.py`` (HEAD 28fef95), which runs them in the
code's own process; here they run in the grader's, on plain data read from the sandbox:

* stdio (``grade_stdio``): both sides ``strip()``-ed and split on newlines, each line ``strip()``-ed;
  different line counts → wrong answer; then per line, equal text, or both lines parse as lists of
  ``Decimal`` tokens that are equal (a signalling NaN reached by ``==`` raises there, and upstream's
  ``run_test`` answers -4 "Error during testing" for the whole sample);
* call-based (``grade_call_based``): the expected output ``json.loads``-ed, the prediction (a tuple
  already turned into a list inside the sandbox) compared with ``==`` — here on the *decoded JSON* of
  the returned value, so the code cannot bring its own ``__eq__``. Python's container ``==`` compares
  items identity first, and ``json.loads`` gives every NaN it reads as one shared object, so upstream's
  ``[nan] == [nan]`` holds only when the returned NaN *is* that object (an input's NaN handed back), not
  for a NaN the code made; the runner marks which of the returned NaNs are the code's own (``own_nans``)
  and they are decoded as NaNs of their own here.

Each function returns upstream's result for the test (``True``, ``-2``, or ``False`` for a call-based
mismatch) and upstream's metadata for a failure.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from itertools import count
from typing import Any

__all__ = ["DECODED_MISMATCH_CHARS", "ERROR_DURING_TESTING", "truncate", "storable", "stdio_result", "call_result", "load_json"]

#: How upstream's ``run_test`` begins the message of an exception that escaped the per-test handling; it
#: then answers ``[-4]`` for the whole sample, whatever the tests before it gave.
ERROR_DURING_TESTING = "Error during testing"

#: Digits an integer in a call-based value may have: upstream raises CPython's limit to this
#: (``sys.set_int_max_str_digits(50000)`` in compute_code_generation_metrics); the grader's own
#: process keeps the default limit, so long integers are converted here piece by piece.
INT_MAX_DIGITS = 50000
_SAFE_DIGITS = 4000  # below CPython's default limit of 4300


def _parse_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > INT_MAX_DIGITS:
        raise ValueError(f"an integer of {len(digits)} digits (the limit is {INT_MAX_DIGITS})")
    if len(digits) <= _SAFE_DIGITS:
        return int(text)
    sign = -1 if text.startswith("-") else 1
    value = 0
    for start in range(0, len(digits), _SAFE_DIGITS):
        chunk = digits[start : start + _SAFE_DIGITS]
        value = value * 10 ** len(chunk) + int(chunk)
    return sign * value


#: The NaN object ``json.loads`` gives for every NaN it reads (upstream's expected outputs hold it).
JSON_NAN = json.loads("NaN")


def _constants(own_nans: str):
    """``parse_constant`` for :func:`load_json`: json's own NaN object, but a NaN of its own for the n-th
    NaN of the text when ``own_nans[n]`` is "1"."""
    ordinals = count()

    def constant(name: str) -> float:
        if name == "NaN":
            ordinal = next(ordinals)
            return float("nan") if own_nans[ordinal : ordinal + 1] == "1" else JSON_NAN
        return float(name)  # Infinity, -Infinity: equal whatever the object

    return constant


def load_json(text: str, *, own_nans: str = "") -> Any:
    """``json.loads`` with integers up to upstream's 50,000 digits, whatever the process's own limit.
    Every NaN is json's own shared object (as ``json.loads`` gives) but the n-th NaN of the text when
    ``own_nans[n]`` is "1": a new object (a NaN the code made, see the module's docstring).
    A value nested deeper than the grader's recursion limit raises ``ValueError`` like any other
    unreadable text (never ``RecursionError``, which would end the whole grading batch)."""
    try:
        return json.loads(text, parse_int=_parse_int, parse_constant=_constants(own_nans))
    except RecursionError as exc:
        raise ValueError(f"JSON nested deeper than the grader reads: {exc}") from exc


def storable(text: str) -> str:
    """``text`` with what a database text or JSON column refuses made visible: NUL and lone surrogates
    (which the code can print or return) become backslash escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def _int_text(value: int) -> str:
    """``str(value)`` for an integer of any length: past CPython's default limit of 4,300 digits (which
    upstream raises to 50,000 and the grader's process keeps), converted in pieces of :data:`_SAFE_DIGITS`."""
    if value.bit_length() <= 13_000:  # at most 3,914 digits
        return str(value)
    sign, rest, pieces = "-" if value < 0 else "", abs(value), []
    base = 10**_SAFE_DIGITS
    while rest:
        rest, piece = divmod(rest, base)
        pieces.append(piece)
    return sign + str(pieces[-1]) + "".join(str(piece).zfill(_SAFE_DIGITS) for piece in reversed(pieces[:-1]))


class _Piece(str):
    """Text :func:`_plain_text` has already written (a bracket, a separator)."""


def _plain_text(value: Any) -> str:
    """``str(value)`` of decoded JSON (dict, list, str, int, float, bool, None) without the limits ``str``
    raises on in the grader: integers of any length (:func:`_int_text`) and nesting walked without recursion."""
    written: list[str] = []
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if type(item) is _Piece:
            written.append(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            written.append(_int_text(item))
        elif isinstance(item, list):
            parts: list[Any] = [_Piece("[")]
            for index, element in enumerate(item):
                parts += [_Piece(", "), element] if index else [element]
            pending.extend(reversed([*parts, _Piece("]")]))
        elif isinstance(item, dict):
            parts = [_Piece("{")]
            for index, (key, element) in enumerate(item.items()):
                parts += [*([_Piece(", ")] if index else []), key, _Piece(": "), element]
            pending.extend(reversed([*parts, _Piece("}")]))
        else:
            written.append(repr(item))
    return "".join(written)


def truncate(value: Any, length: int = 300) -> str:
    """upstream ``truncatefn``: ``str(value)``, its middle cut beyond ``length`` characters; made
    :func:`storable`, since the code chose these characters. Never raises for decoded JSON: an integer
    past CPython's 4,300 digits (which the code may return, and a test may hold: upstream reads 50,000)
    makes ``str`` raise ValueError in the grader's process, and that would end the whole grading batch."""
    try:
        text = value if isinstance(value, str) else str(value)
    except (ValueError, RecursionError):
        text = _plain_text(value)
    if len(text) > length:
        text = text[: length // 2] + "...(truncated) ..." + text[-length // 2 :]
    return storable(text)


def _stripped_lines(value: str) -> list[str]:
    # upstream get_stripped_lines: strip the whole, split on "\n", strip each line
    return [line.strip() for line in value.strip().split("\n")]


def _decimal_tokens(line: str) -> list[Decimal] | None:
    # upstream convert_line_to_decimals: every whitespace-separated token as a Decimal, or failure
    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError, TypeError):
        return None


def _token_count_at_most(line: str, limit: int) -> int:
    """How many whitespace-separated tokens ``line`` has, counting no further than ``limit + 1``: the
    printed line is the code's, and a line of millions of tokens must not become millions of Decimals
    in the grader before it can differ from a short expected line."""
    count = 0
    for _ in _TOKEN.finditer(line):
        count += 1
        if count > limit:
            break
    return count


_TOKEN = re.compile(r"\S+")


def _equal_decimals(got: list[Decimal], want: list[Decimal]) -> bool | None:
    """``got == want``, or ``None`` where upstream's comparison raises: the code may print "sNaN", a
    signalling NaN, and ``==`` reaching one raises InvalidOperation under the default context — in
    the grader, where it must not end the batch."""
    try:
        return got == want
    except InvalidOperation:
        return None


def stdio_result(prediction: str, given: str, expected: str) -> tuple[bool | int, dict[str, Any]]:
    """One stdio test: ``(True, {})`` or ``(-2, metadata)`` with upstream's error messages."""
    want = _stripped_lines(expected)
    wrong: dict[str, Any] = {
        "output": truncate(prediction), "inputs": truncate(given), "expected": truncate(expected), "error_code": -2,
    }
    # the line count first, without splitting what may be millions of printed lines
    if prediction.strip().count("\n") + 1 != len(want):
        wrong["error_message"] = "Wrong answer: mismatched output length"
        return -2, wrong
    got = _stripped_lines(prediction)
    for index, (got_line, want_line) in enumerate(zip(got, want)):
        if got_line == want_line:
            continue
        want_decimals = _decimal_tokens(want_line)
        if want_decimals is not None and _token_count_at_most(got_line, len(want_decimals)) == len(want_decimals):
            got_decimals = _decimal_tokens(got_line)
            equal = None if got_decimals is None else _equal_decimals(got_decimals, want_decimals)
            if got_decimals is not None and equal is None:
                # upstream compares outside grade_stdio's try: the exception reaches run_test, which
                # answers [-4] "Error during testing: [<class 'decimal.InvalidOperation'>]"
                return -4, {"error_code": -4,
                            "error_message": f"{ERROR_DURING_TESTING}: [<class 'decimal.InvalidOperation'>]"}
            if equal:
                continue
        wrong["error_message"] = (
            f"Wrong answer at output_line_idx={index}: {truncate(got_line)} != {truncate(want_line)}"
        )
        return -2, wrong
    return True, {}


#: Marks that open a JSON container or separate its items: each is one Python object (or one more item) when
#: decoded. Strings hold them literally (JSON escapes none of them), so two equal values count them alike.
_STRUCTURE_MARKS = ("[", "{", ",")
#: A return value's JSON text this long or shorter is decoded even when it cannot equal the expected value
#: (for the failure's metadata); a longer one is not (:func:`call_result`).
DECODED_MISMATCH_CHARS = 1 << 16


def _structure_marks(value: Any) -> int:
    """How many of :data:`_STRUCTURE_MARKS` the JSON text of ``value`` (decoded JSON: dict, list, str, int,
    float, bool, None) holds in any spelling: a container's bracket, its separators, and those in its
    strings. Iterative, so a value as deep as the grader could decode costs no recursion."""
    count = 0
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            count += sum(item.count(mark) for mark in _STRUCTURE_MARKS)
        elif isinstance(item, list):
            count += 1 + max(len(item) - 1, 0)
            pending.extend(item)
        elif isinstance(item, dict):
            count += 1 + max(len(item) - 1, 0)
            pending.extend(item.keys())
            pending.extend(item.values())
    return count


def call_result(
    returned_json: str, arguments: list[Any], expected: Any, *, own_nans: str = ""
) -> tuple[bool, dict[str, Any]]:
    """One call-based test: ``prediction == expected`` on the decoded return value (``expected`` is
    the ``json.loads``-ed expected output; ``own_nans`` the runner's marks of the NaNs the code made, "1"
    per such NaN in text order, which equal no expected NaN even inside a container); ``(False, metadata)``
    on a mismatch, as upstream.

    The text is the code's (a forged line, too): a value equal to ``expected`` has exactly as many
    container brackets and separators as ``expected`` (and the same strings), so a text with another
    count is not equal, and one longer than :data:`DECODED_MISMATCH_CHARS` is not decoded at all —
    ``[], `` is 4 bytes of text and about 70 of the grader's memory, 32 MB of it 600 MB."""
    if (len(returned_json) > DECODED_MISMATCH_CHARS
            and sum(returned_json.count(mark) for mark in _STRUCTURE_MARKS) != _structure_marks(expected)):
        return False, {"output": truncate(returned_json), "inputs": truncate(arguments), "expected": truncate(expected),
                       "error_code": -2, "error_message": "Wrong Answer"}
    try:
        prediction = load_json(returned_json, own_nans=own_nans)
    except ValueError as exc:  # nested past the grader's reading depth, or an integer past 50,000 digits:
        # not the expected value, which the same reader decoded (upstream's runner could not serialise it)
        return False, {"output": truncate(returned_json), "inputs": truncate(arguments), "expected": truncate(expected),
                       "error_code": -2, "error_message": f"Wrong Answer: the return value cannot be read ({truncate(exc, 200)})"}
    if prediction == expected:
        return True, {}
    return False, {
        "output": truncate(prediction), "inputs": truncate(arguments), "expected": truncate(expected),
        "error_code": -2, "error_message": "Wrong Answer",
    }
