"""The contract every import file meets, with types and limits derived from the models' own fields.

Every importer (tasks, responses, render manifests, campaign items) reads its file through
:func:`file_records` and checks each field through a :class:`FieldRule` built by :func:`field_rule`
from the model column the value is stored in: a ``CharField`` gives its ``max_length``, an integer
field the range every supported database stores (``BaseDatabaseOperations.integer_field_ranges``:
40000 does not fit a ``PositiveSmallIntegerField``, 2**70 no 64-bit column), a ``TextField`` the
stated size limit below, a ``JSONField`` the size and nesting limits. No input is special-cased.

What a file must be, whatever the importer:

* UTF-8; a leading byte-order mark is dropped. A bad byte is reported at its line (and field, when it
  falls inside a value). A UTF-16 or UTF-32 file (by its byte-order mark, or without one by the NUL
  byte beside each ASCII character) is one error saying so, naming the file;
* JSONL: one JSON object per line, decoded by :func:`engine.strict_json.json_decode` (no
  duplicate key, no NaN/Infinity/1e400, no NUL, no lone surrogate, nesting at most
  :data:`~engine.strict_json.MAX_JSON_DEPTH` levels);
* CSV: a header of known field names, then records with no more cells than header columns; a quoted
  field left open is an error (the csv module would otherwise swallow the rest of the file); an
  error in a multi-line record names the line where the record starts;
* not empty, and (CSV) not a header only.

Every problem of a line is reported (file, line, field, message), and nothing is written.
"""

from __future__ import annotations

import csv
import json
import math
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations

from engine.csv_cells import cell_restored
from engine.strict_json import JSONProblem, json_decode, text_problems
from engine.text_lines import physical_lines

__all__ = [
    "TEXT_MAX_CHARS",
    "JSON_FIELD_MAX_CHARS",
    "FieldRule",
    "INVISIBLE_CATEGORIES",
    "ImportFailed",
    "Record",
    "RecordError",
    "field_rule",
    "file_records",
    "other_encoding",
    "record_check",
    "value_check",
]

#: Size limit of a free-text column without max_length (a brief, a prompt, a checklist text).
TEXT_MAX_CHARS = 20_000
#: Size limit of a JSON column (``constraints``, ``source``), as compact JSON text.
JSON_FIELD_MAX_CHARS = 20_000
_BOM = b"\xef\xbb\xbf"
#: Byte-order marks of the encodings a spreadsheet or Windows editor saves "Unicode text" in; UTF-32's
#: come first, as UTF-32 LE's begins with UTF-16 LE's.
_OTHER_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
)
#: Bytes of the file read to recognise UTF-16 without a byte-order mark.
_ENCODING_SAMPLE_BYTES = 4096
_INTEGER = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class RecordError:
    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: field '{self.field}': {self.message}" if self.field else f"{where}: {self.message}"


class ImportFailed(Exception):
    """Raised with every error found; the database is left untouched."""

    def __init__(self, errors: list[RecordError]):
        self.errors = errors
        shown = "\n".join(str(e) for e in errors[:50])
        more = f"\n... and {len(errors) - 50} more" if len(errors) > 50 else ""
        super().__init__(f"{len(errors)} error(s); nothing was imported:\n{shown}{more}")


@dataclass
class Record:
    line: int
    values: dict[str, Any] = field(default_factory=dict)
    #: Top-level fields whose decoding failed (already reported): the rest of the record is still
    #: checked, so that one run shows every problem of the line, but the record is never used.
    reported: frozenset[str] = frozenset()


# ---------------------------------------------------------------- field rules


@dataclass(frozen=True)
class FieldRule:
    """What one field of a record may hold: its type, size or range, and whether it is an identifier."""

    kind: type  # str, int, float, bool or dict
    required: bool = False
    max_chars: int | None = None
    int_range: tuple[int, int] | None = None
    trimmed: bool = False  # identifiers and briefs: not empty, no leading or trailing whitespace
    #: Identifiers (task ids, model names, renderers, item keys): no character a reader cannot see
    #: (:data:`INVISIBLE_CATEGORIES`), so that two names that look alike on every page are never two rows.
    identifier: bool = False


def field_rule(
    model: type[models.Model], name: str, *, required: bool = False, trimmed: bool = False, max_chars: int | None = None,
    identifier: bool = False,
) -> FieldRule:
    """The rule for a value stored in ``model.name``; ``max_chars`` overrides a column without a length;
    ``identifier`` refuses invisible characters (and implies ``trimmed``)."""
    column = model._meta.get_field(name)
    internal = column.get_internal_type()
    if isinstance(column, models.BooleanField):
        return FieldRule(bool, required)
    if internal in BaseDatabaseOperations.integer_field_ranges:
        return FieldRule(int, required, int_range=BaseDatabaseOperations.integer_field_ranges[internal])
    if isinstance(column, models.JSONField):
        return FieldRule(dict, required, max_chars=max_chars or JSON_FIELD_MAX_CHARS)
    if isinstance(column, (models.CharField, models.TextField, models.FileField)):
        limit = max_chars or getattr(column, "max_length", None) or TEXT_MAX_CHARS
        return FieldRule(str, required, max_chars=limit, trimmed=trimmed or identifier, identifier=identifier)
    raise TypeError(f"no import rule for {model.__name__}.{name} ({internal})")


def _type_name(kind: type) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "an object"}[kind]


def value_check(value: Any, rule: FieldRule) -> list[str]:
    """Every way ``value`` breaks ``rule`` (empty when it fits)."""
    accepted = (int, float) if rule.kind is float else rule.kind  # a JSON 3 is a number too
    wrong_type = not isinstance(value, accepted) or (rule.kind in (int, float) and isinstance(value, bool))
    if wrong_type:
        return [f"must be {_type_name(rule.kind)}, got {type(value).__name__}"]
    problems = []
    if rule.kind is str:
        if rule.trimmed and not value.strip():
            problems.append("must not be empty or only whitespace")
        elif rule.trimmed and value != value.strip():
            problems.append("must not begin or end with whitespace")
        if rule.max_chars is not None and len(value) > rule.max_chars:
            problems.append(f"is {len(value):,} characters long, over the limit of {rule.max_chars:,}")
        elif rule.identifier:
            problems.extend(_invisible_problems(value))
    elif rule.kind is int and rule.int_range is not None:
        low, high = rule.int_range
        if not low <= value <= high:
            problems.append(f"must be between {low} and {high}")
    elif rule.kind is dict and rule.max_chars is not None:
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        if size > rule.max_chars:
            problems.append(f"is {size:,} characters of JSON, over the limit of {rule.max_chars:,}")
    return problems


#: Unicode categories of characters that draw nothing or move the text: format characters (zero-width
#: space and joiners, word joiner, soft hyphen, byte-order mark, direction overrides), controls (tab,
#: line breaks) and the line and paragraph separators. In an identifier they made "gpt-4" and
#: "gpt-4\u200b" two models, shown alike everywhere.
INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Zl", "Zp"})


def _invisible_problems(value: str) -> list[str]:
    char = next((c for c in value if unicodedata.category(c) in INVISIBLE_CATEGORIES), None)
    if char is None:
        return []
    name = unicodedata.name(char, "a control character")
    return [f"contains an invisible character (U+{ord(char):04X} {name}); an identifier must read as it is stored"]


def record_check(
    name: str, record: Record, rules: Mapping[str, FieldRule], errors: list[RecordError], *, known_only: bool = True
) -> bool:
    """Check every field of ``record`` against ``rules`` (unknown fields too, when ``known_only``)."""
    found = []
    for key, value in record.values.items():
        if key in record.reported:
            continue
        rule = rules.get(key)
        if rule is None:
            if known_only:
                found.append(RecordError(name, record.line, key, f"unknown field (allowed: {', '.join(rules)})"))
            continue
        if value is None:
            continue  # absent (a required one is reported below)
        found.extend(RecordError(name, record.line, key, message) for message in value_check(value, rule))
    for key, rule in rules.items():
        if rule.required and record.values.get(key) is None and key not in record.reported:
            found.append(RecordError(name, record.line, key, "missing required field"))
    errors.extend(found)
    return not found and not record.reported


# ---------------------------------------------------------------- reading files


def other_encoding(raw: bytes) -> str | None:
    """The encoding ``raw`` is in when it is plainly not UTF-8 but UTF-16 or UTF-32: named by its
    byte-order mark, or, without one, UTF-16 by its pattern of NUL bytes (ASCII text in UTF-16 has a
    NUL beside every character, on odd offsets little-endian and even ones big-endian; UTF-8 text has
    none). None otherwise: a UTF-8 file's own bad bytes are reported at their lines."""
    for bom, encoding in _OTHER_BOMS:
        if raw.startswith(bom):
            return f"{encoding}, with a byte-order mark"
    sample = raw[: _ENCODING_SAMPLE_BYTES - _ENCODING_SAMPLE_BYTES % 2]
    pairs = len(sample) // 2
    even_nuls, odd_nuls = sample[0::2].count(0), sample[1::2].count(0)
    if pairs and odd_nuls * 2 >= pairs and even_nuls * 4 <= odd_nuls:
        return "UTF-16 (little-endian), without a byte-order mark"
    if pairs and even_nuls * 2 >= pairs and odd_nuls * 4 <= even_nuls:
        return "UTF-16 (big-endian), without a byte-order mark"
    return None


def _format_of(name: str, fmt: str | None) -> str:
    if fmt:
        return fmt
    return "csv" if name.lower().endswith(".csv") else "jsonl"


def _lines(raw: bytes) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, undecodable) per physical line; a bad byte becomes a lone surrogate.

    Lines end as :mod:`engine.text_lines` says, for every reader: LF or CRLF (the CR is left to the readers),
    or, in a file without a single LF, CR alone: what a classic Mac spreadsheet saves ("CSV (Macintosh)").
    Read by LF, such a file was one line, refused as "new-line character seen in unquoted field" (CSV) or
    "Extra data" (JSONL), at line 1."""
    if raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    for number, chunk in enumerate(physical_lines(raw), start=1):
        try:
            yield number, chunk.decode("utf-8"), False
        except UnicodeDecodeError:
            yield number, chunk.decode("utf-8", errors="surrogateescape"), True


def _top_level(path: str) -> str:
    return path.split(".", 1)[0].split("[", 1)[0]


def _problems_as_errors(name: str, line: int, problems: list[JSONProblem], prefix: str = "") -> list[RecordError]:
    return [RecordError(name, line, prefix + p.field if p.field else prefix.rstrip("."), p.message) for p in problems]


def _jsonl_records(name: str, raw: bytes, errors: list[RecordError]) -> list[Record]:
    records = []
    for number, text, undecodable in _lines(raw):
        text = text.rstrip("\r")
        if not text.strip():
            continue
        value, problems = json_decode(text, undecodable=undecodable)
        # json_decode gives None for a line that is not JSON (with its problems) and for a literal null
        # (with none): the null is a record that is not an object, never a line to skip
        if not isinstance(value, dict) and not (value is None and problems):
            got = "null" if value is None else type(value).__name__
            problems = [*problems, JSONProblem("", f"a record must be a JSON object, got {got}")]
        errors.extend(_problems_as_errors(name, number, problems))
        if isinstance(value, dict):
            records.append(Record(number, value, frozenset(_top_level(p.field) for p in problems)))
    return records


def _csv_records(name: str, raw: bytes, errors: list[RecordError], rules: Mapping[str, FieldRule]) -> list[Record]:
    lines = list(_lines(raw))
    undecodable = any(bad for _, _, bad in lines)
    # The csv module sees the file's own lines, so that its line count is the file's.
    reader = csv.reader((text + "\n" for _, text, _ in lines), strict=True)
    records: list[Record] = []
    header: list[str] | None = None
    start = 1
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            message = (
                "a quoted field is never closed (the rest of the file would be read as one value)"
                if "unexpected end of data" in str(exc) else f"malformed CSV ({exc})"
            )
            errors.append(RecordError(name, start, "", message))
            return []
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip() for cell in row]
            _header_check(name, start, header, rules, errors, undecodable)
            continue
        records.append(_csv_record(name, start, header, row, rules, errors, undecodable))
    if header is not None and not records and not errors:
        errors.append(RecordError(name, 0, "", "the file has a header line but no records"))
    return records


def _header_check(name, line, header, rules, errors, undecodable) -> None:
    seen = set()
    for column in header:
        problems = text_problems(column, undecodable=undecodable)
        if problems:
            errors.append(RecordError(name, line, "", f"the header {problems[0]}"))
        elif column not in rules:
            errors.append(RecordError(name, line, column, f"unknown column (allowed: {', '.join(rules)})"))
        elif column in seen:
            errors.append(RecordError(name, line, column, "column named twice in the header"))
        seen.add(column)


def _csv_record(name, line, header, row, rules, errors, undecodable) -> Record:
    found: list[RecordError] = []
    if len(row) > len(header):
        found.append(RecordError(name, line, "", f"{len(row)} cells but the header has {len(header)} columns"))
    values: dict[str, Any] = {}
    for column, cell in zip(header, row):
        if cell == "" or column not in rules:
            continue  # an empty cell means the field is absent; an unknown column is reported once, at the header
        problems = text_problems(cell, undecodable=undecodable)
        if problems:
            found.extend(RecordError(name, line, column, message) for message in problems)
            continue
        values[column] = _csv_cell(name, line, column, cell_restored(cell), rules[column], found)
    errors.extend(found)
    return Record(line, values, frozenset(e.field for e in found))


def _csv_cell(name: str, line: int, column: str, cell: str, rule: FieldRule, found: list[RecordError]) -> Any:
    if rule.kind is float:
        try:
            number = float(cell)
        except ValueError:
            return cell  # value_check reports it
        return number if math.isfinite(number) else cell
    if rule.kind is int:
        return int(cell) if _INTEGER.fullmatch(cell.strip()) and len(cell) < 100 else cell  # value_check reports
    if rule.kind is bool:
        lowered = cell.strip().lower()
        return {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}.get(lowered, cell)
    if rule.kind is dict:
        value, problems = json_decode(cell)
        found.extend(_problems_as_errors(name, line, problems, prefix=f"{column}."))
        return value if value is not None else {}
    return cell


def file_records(name: str, raw: bytes, *, rules: Mapping[str, FieldRule], fmt: str | None = None,
                 errors: list[RecordError]) -> list[Record]:
    """The records of a JSONL or CSV file that decode cleanly; every problem is appended to ``errors``.

    Field values are not checked here beyond decoding: call :func:`record_check` on each record.
    """
    if not raw.removeprefix(_BOM).strip():
        errors.append(RecordError(name, 0, "", "the file is empty (it holds no records)"))
        return []
    csv_file = _format_of(name, fmt) == "csv"
    encoding = other_encoding(raw)
    if encoding is not None:
        # one error for the file: read as UTF-8 every line would be NULs and bad bytes, none saying why
        save_as = "UTF-8 (a spreadsheet's \"CSV UTF-8\")" if csv_file else "UTF-8"
        errors.append(RecordError(name, 0, "", f"the file is not UTF-8: it is {encoding}; save it as {save_as} "
                                               "and import it again"))
        return []
    if csv_file:
        return _csv_records(name, raw, errors, rules)
    records = _jsonl_records(name, raw, errors)
    if not records and not errors:
        errors.append(RecordError(name, 0, "", "the file holds no records"))
    return records
