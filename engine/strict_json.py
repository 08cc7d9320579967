"""Strict JSON decoding for everything the site reads from outside: import files, API bodies and the
C² dataset files (whose parsers are in the engine, so the reader lives here, below all of them).

Python's ``json`` accepts what neither database can store or what is ambiguous: ``NaN``, ``Infinity``
and ``1e400`` (which becomes ``inf``), duplicate keys (the last silently wins), ``\\u0000`` (PostgreSQL
cannot store NUL in text or jsonb) and lone surrogates such as ``\\ud800`` (not encodable as UTF-8);
and nesting a few thousand levels deep raises ``RecursionError`` instead of a decoding error.

:func:`json_decode` returns the value together with every problem found, each naming the field as a
dotted path from the top-level object (``constraints.avoid[2]``), so that an importer can report all
problems of a line and an API can refuse a body before it does anything.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from engine.text_lines import line_and_column, line_at

__all__ = [
    "MAX_JSON_DEPTH",
    "JSONProblem",
    "json_decode",
    "storable_text",
    "text_problems",
]

#: Deepest nesting of arrays and objects accepted anywhere (the top-level object is depth 1).
MAX_JSON_DEPTH = 20

_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")
_UNDECODABLE_BYTE = re.compile("[\udc80-\udcff]")  # what errors="surrogateescape" makes of a bad byte


@dataclass(frozen=True)
class JSONProblem:
    field: str  # dotted path from the top level; "" for the document as a whole
    message: str
    #: For a text that could not be decoded at all: the line (1-based) of the text where decoding
    #: stopped, so that a reader of a multi-line document can name it; 0 when not known.
    line: int = 0


class _NonFinite:
    """Stands in for NaN, Infinity or an overflowing float until the walk names its field."""

    def __init__(self, text: str):
        self.text = text


class _DuplicatedKeys(dict):
    duplicates: tuple[str, ...] = ()


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    value = _DuplicatedKeys(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        value.duplicates = tuple(k for k, _ in pairs if k in seen or seen.add(k))
    return value


def _float(text: str) -> float | _NonFinite:
    number = float(text)
    return number if math.isfinite(number) else _NonFinite(text)


class _GiveUp(Exception):
    """Raised by the fast path's hooks on what only the full path can report (not a ValueError, so that
    it is never mistaken for a decoding error)."""


def _plain_pairs(pairs: list[tuple[str, Any]]) -> dict:
    value = dict(pairs)
    if len(value) != len(pairs):  # a duplicate key
        raise _GiveUp
    return value


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _GiveUp
    return number


def _give_up(text: str) -> None:
    raise _GiveUp


#: The fast path's decoder, made once: ``json.loads`` with hooks builds a new JSONDecoder (and its scanner) on
#: every call. ``decode`` is what ``loads`` calls on it; a text starting with a BOM, which ``loads`` refuses
#: before decoding, fails here too and goes to the full path, which refuses it with ``loads``'s own message.
_FAST_DECODER = json.JSONDecoder(object_pairs_hook=_plain_pairs, parse_float=_finite_float, parse_constant=_give_up)


def _too_deep(text: str, limit: int) -> tuple[str, int] | None:
    """None when no array or object nests deeper than ``limit``; else the top-level key it is under
    ("" when not known) and the offset where the limit is passed. A linear scan that skips strings, so
    no input can exhaust the recursion."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth, top_key = 0, ""
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return top_key, match.start()
        elif token in "]}":
            depth -= 1
        elif depth == 1:  # a string directly in the top-level object: the latest is the key of what follows
            try:
                top_key = json.loads(token)
            except ValueError:
                top_key = ""
    return None


def storable_text(text: str) -> bool:
    """Whether no string decoded from the JSON text ``text`` can hold a NUL or a lone surrogate (what
    :func:`text_problems` refuses): the text has no ``\\u`` escape (which could write either), no NUL and no
    surrogate. A text that fails this may still decode to storable strings; it is read the full way.

    A surrogate is looked for by encoding the text as UTF-8, which refuses every code point U+D800–U+DFFF (what
    ``_SURROGATE`` matches) and is several times cheaper than the pattern's search on a non-ASCII text (a judge
    reply quoting a checklist's curly quotes and dashes); an ASCII text, which str knows without a scan, holds
    none."""
    if "\\u" in text or "\x00" in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def text_problems(text: str, *, undecodable: bool = False) -> list[str]:
    """What makes a string unstorable: a NUL, a byte that was not UTF-8, or a lone surrogate."""
    problems = []
    if "\x00" in text:
        problems.append("contains a NUL character")
    if undecodable and _UNDECODABLE_BYTE.search(text):
        problems.append("is not valid UTF-8")
    elif _SURROGATE.search(text):
        problems.append(f"contains a lone surrogate (U+{ord(_SURROGATE.search(text).group()):04X})")
    return problems


def _walk(value: Any, path: str, problems: list[JSONProblem], undecodable: bool) -> Any:
    """The value with the decoding stand-ins replaced by plain values; problems appended."""
    if isinstance(value, str):
        problems.extend(JSONProblem(path, m) for m in text_problems(value, undecodable=undecodable))
        return value
    if isinstance(value, _NonFinite):
        problems.append(JSONProblem(path, f"must be a finite number, got {value.text}"))
        return None
    if isinstance(value, dict):
        for key in getattr(value, "duplicates", ()):
            problems.append(JSONProblem(_join(path, key), "duplicate key in one object"))
        out = {}
        for key, item in value.items():
            for message in text_problems(key, undecodable=undecodable):
                problems.append(JSONProblem(_join(path, key), f"the key {message}"))
            out[key] = _walk(item, _join(path, key), problems, undecodable)
        return out
    if isinstance(value, list):
        return [_walk(item, f"{path}[{i}]", problems, undecodable) for i, item in enumerate(value)]
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def json_decode(text: str, *, max_depth: int = MAX_JSON_DEPTH, undecodable: bool = False) -> tuple[Any, list[JSONProblem]]:
    """Decode ``text`` strictly; ``(None, problems)`` when it is not JSON at all.

    ``undecodable`` says the text was decoded from bytes with ``errors="surrogateescape"`` after a
    UTF-8 error, so that a string holding such a byte is reported as not UTF-8 (naming its field).
    A raw NUL inside a string is read as ``\\u0000`` so that its field, too, can be named.
    """
    too_deep = _too_deep(text, max_depth)
    if too_deep is not None:
        key, offset = too_deep
        return None, [JSONProblem(key, f"nested deeper than {max_depth} levels", line_at(text, offset))]
    if storable_text(text):
        # No escape, NUL or surrogate in the text, so no decoded string can hold one: the walk below
        # would only report duplicate keys and non-finite numbers, and these hooks give up on both.
        # Any give-up or error falls through to the full path, which names every problem.
        try:
            return _FAST_DECODER.decode(text), []
        except (_GiveUp, ValueError, RecursionError):
            pass
    return _decode_and_walk(text, max_depth, undecodable)


def _decode_and_walk(text: str, max_depth: int, undecodable: bool) -> tuple[Any, list[JSONProblem]]:
    """The full path: decode with stand-ins for every problem, then walk the value to name them."""
    try:
        value = json.loads(
            text.replace("\x00", "\\u0000"),
            object_pairs_hook=_pairs,
            parse_float=_float,
            parse_constant=_NonFinite,
        )
    except json.JSONDecodeError as exc:
        # json counts LF only: a CR-only file's position is named by its own line breaks (engine.text_lines)
        line, column = line_and_column(exc.doc, exc.pos)
        if undecodable:
            return None, [JSONProblem("", "not valid UTF-8", line)]
        return None, [JSONProblem("", f"not valid JSON ({exc.msg} at column {column})", line)]
    except RecursionError:  # unreachable after the depth scan; kept so no input can raise it
        return None, [JSONProblem("", f"nested deeper than {max_depth} levels")]
    except ValueError as exc:  # an integer with more digits than int() converts
        return None, [JSONProblem("", f"not valid JSON ({exc})")]
    problems: list[JSONProblem] = []
    return _walk(value, "", problems, undecodable), problems
