"""Reading and validating task, response and render-manifest records from JSONL and CSV files.

Every problem is reported as a :class:`RecordError` naming the file, the line
and the field, and all problems of a file are collected before anything is
written, so that one import run shows the whole list. Nothing here touches the
database: ``leaderboard.services`` checks references against it and writes in
one transaction.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FAMILIES = ("abstraction", "combination", "transformation", "adaptation")
FAMILY_ALIASES = {"adaption": "adaptation"}  # the paper's own spelling in places

TASK_FIELDS = {"id": str, "family": str, "subtype": str, "brief": str, "constraints": dict, "source": dict}
TASK_REQUIRED = ("id", "family", "brief")
RESPONSE_FIELDS = {
    "task_id": str,
    "model": str,
    "sample": int,
    "text": str,
    "core_idea": str,
    "visual_description": str,
    "primary": bool,
}
RESPONSE_REQUIRED = ("task_id", "model", "sample")
# A render manifest names the response by the responses import's natural keys, then the image.
RENDER_FIELDS = {
    "task_id": str,
    "model": str,
    "sample": int,
    "image": str,
    "renderer": str,
    "seed": int,
    "prompt": str,
}
RENDER_REQUIRED = ("task_id", "model", "sample", "image", "renderer", "seed")
#: Range of ``Render.seed`` (a 64-bit signed integer column).
SEED_RANGE = (-(2**63), 2**63 - 1)
RENDERER_MAX_LENGTH = 100


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


def _format_of(name: str, fmt: str | None) -> str:
    if fmt:
        return fmt
    return "csv" if name.lower().endswith(".csv") else "jsonl"


def _decoded_lines(name: str, raw: bytes, errors: list[RecordError]) -> Iterator[tuple[int, str]]:
    for number, chunk in enumerate(raw.split(b"\n"), start=1):
        try:
            yield number, chunk.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as exc:
            errors.append(RecordError(name, number, "", f"not valid UTF-8 (byte {exc.start})"))


def _parse_jsonl(name: str, raw: bytes, errors: list[RecordError]) -> list[Record]:
    records = []
    for number, text in _decoded_lines(name, raw, errors):
        if not text.strip():
            continue
        try:
            values = json.loads(text)
        except json.JSONDecodeError as exc:
            errors.append(RecordError(name, number, "", f"not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(values, dict):
            errors.append(RecordError(name, number, "", "a record must be a JSON object"))
            continue
        records.append(Record(number, values))
    return records


def _parse_csv(name: str, raw: bytes, errors: list[RecordError], types: dict[str, type]) -> list[Record]:
    lines = dict(_decoded_lines(name, raw, errors))
    if errors:
        return []
    text = "\n".join(lines[n] for n in sorted(lines))
    reader = csv.DictReader(io.StringIO(text))
    records = []
    for row in reader:
        number = reader.line_num
        values: dict[str, Any] = {}
        for key, cell in row.items():
            if key is None:
                errors.append(RecordError(name, number, "", "more cells than header columns"))
                continue
            if cell is None or cell == "":
                continue  # an empty CSV cell means the field is absent
            values[key] = _coerce_csv_cell(name, number, key, cell, types.get(key), errors)
        records.append(Record(number, values))
    return records


def _coerce_csv_cell(name, number, key, cell, expected, errors):
    if expected is int:
        try:
            return int(cell)
        except ValueError:
            return cell  # type check below reports it
    if expected is bool:
        lowered = cell.strip().lower()
        if lowered in {"true", "1", "yes"}:
            return True
        if lowered in {"false", "0", "no"}:
            return False
        return cell
    if expected is dict:
        try:
            return json.loads(cell)
        except json.JSONDecodeError:
            errors.append(RecordError(name, number, key, "must be a JSON object"))
            return {}
    return cell


def _type_name(expected: type) -> str:
    return {str: "a string", int: "an integer", bool: "true or false", dict: "an object"}[expected]


def _check_shape(name: str, record: Record, types: dict[str, type], required, errors) -> bool:
    ok = True
    for key in record.values:
        if key not in types:
            errors.append(RecordError(name, record.line, key, f"unknown field (allowed: {', '.join(types)})"))
            ok = False
    for key in required:
        if key not in record.values or record.values[key] in ("", None):
            errors.append(RecordError(name, record.line, key, "missing required field"))
            ok = False
    for key, value in record.values.items():
        expected = types.get(key)
        if expected is None or value is None:
            continue
        # bool is a subclass of int in Python; a JSON true is not a sample index.
        wrong = not isinstance(value, expected) or (expected is int and isinstance(value, bool))
        if wrong:
            errors.append(
                RecordError(name, record.line, key, f"must be {_type_name(expected)}, got {type(value).__name__}")
            )
            ok = False
    return ok


@dataclass(frozen=True)
class TaskRecord:
    line: int
    external_id: str
    family: str
    subtype: str
    brief: str
    constraints: dict
    source: dict


@dataclass(frozen=True)
class ResponseRecord:
    line: int
    task_id: str
    model: str
    sample: int
    text: str | None
    core_idea: str | None
    visual_description: str | None
    primary: bool | None


def read_task_records(
    name: str, raw: bytes, *, fmt: str | None = None, ekphrasis_families: bool = True
) -> list[TaskRecord]:
    """Parse and validate task records; raise :class:`ImportFailed` listing every error."""
    errors: list[RecordError] = []
    fmt = _format_of(name, fmt)
    records = _parse_csv(name, raw, errors, TASK_FIELDS) if fmt == "csv" else _parse_jsonl(name, raw, errors)
    tasks: list[TaskRecord] = []
    seen: dict[str, int] = {}
    for record in records:
        if not _check_shape(name, record, TASK_FIELDS, TASK_REQUIRED, errors):
            continue
        v = record.values
        family = FAMILY_ALIASES.get(v["family"].strip().lower(), v["family"].strip().lower())
        if ekphrasis_families and family not in FAMILIES:
            errors.append(
                RecordError(name, record.line, "family", f"unknown family {v['family']!r} (one of {', '.join(FAMILIES)})")
            )
            continue
        external_id = v["id"].strip()
        if external_id in seen:
            errors.append(
                RecordError(name, record.line, "id", f"duplicate id {external_id!r} (first on line {seen[external_id]})")
            )
            continue
        seen[external_id] = record.line
        tasks.append(
            TaskRecord(
                line=record.line,
                external_id=external_id,
                family=family,
                subtype=v.get("subtype", "") or "",
                brief=v["brief"],
                constraints=v.get("constraints") or {},
                source=v.get("source") or {},
            )
        )
    if not records and not errors:
        errors.append(RecordError(name, 0, "", "the file holds no records"))
    if errors:
        raise ImportFailed(errors)
    return tasks


def read_response_records(name: str, raw: bytes, *, fmt: str | None = None) -> list[ResponseRecord]:
    """Parse and validate response records (shape only; references are checked by the service)."""
    errors: list[RecordError] = []
    fmt = _format_of(name, fmt)
    records = (
        _parse_csv(name, raw, errors, RESPONSE_FIELDS) if fmt == "csv" else _parse_jsonl(name, raw, errors)
    )
    responses: list[ResponseRecord] = []
    seen: dict[tuple[str, str, int], int] = {}
    primaries: dict[tuple[str, str], int] = {}
    for record in records:
        if not _check_shape(name, record, RESPONSE_FIELDS, RESPONSE_REQUIRED, errors):
            continue
        v = record.values
        has_text = "text" in v
        has_fields = "core_idea" in v or "visual_description" in v
        if has_text and has_fields:
            errors.append(
                RecordError(name, record.line, "text", "give either 'text' or 'core_idea' + 'visual_description', not both")
            )
            continue
        if not has_text:
            missing = [k for k in ("core_idea", "visual_description") if not v.get(k)]
            if missing:
                errors.append(RecordError(name, record.line, missing[0], "missing required field (or give 'text')"))
                continue
        if v["sample"] < 1:
            errors.append(RecordError(name, record.line, "sample", "must be 1 or more (samples are 1-based)"))
            continue
        key = (v["task_id"], v["model"], v["sample"])
        if key in seen:
            errors.append(
                RecordError(name, record.line, "sample", f"duplicate (task_id, model, sample) (first on line {seen[key]})")
            )
            continue
        seen[key] = record.line
        if v.get("primary") is True:
            pair = (v["task_id"], v["model"])
            if pair in primaries:
                errors.append(
                    RecordError(
                        name, record.line, "primary",
                        f"a second primary for task {pair[0]!r} and model {pair[1]!r} (first on line {primaries[pair]})",
                    )
                )
                continue
            primaries[pair] = record.line
        responses.append(
            ResponseRecord(
                line=record.line,
                task_id=v["task_id"],
                model=v["model"],
                sample=v["sample"],
                text=v.get("text"),
                core_idea=v.get("core_idea"),
                visual_description=v.get("visual_description"),
                primary=v.get("primary"),
            )
        )
    if not records and not errors:
        errors.append(RecordError(name, 0, "", "the file holds no records"))
    if errors:
        raise ImportFailed(errors)
    return responses


@dataclass(frozen=True)
class RenderRecord:
    line: int
    task_id: str
    model: str
    sample: int
    image: str
    renderer: str
    seed: int
    prompt: str | None


def read_render_records(name: str, raw: bytes, *, fmt: str | None = None) -> list[RenderRecord]:
    """Parse and validate a render manifest (shape only; responses and image files are checked by the service)."""
    errors: list[RecordError] = []
    fmt = _format_of(name, fmt)
    records = _parse_csv(name, raw, errors, RENDER_FIELDS) if fmt == "csv" else _parse_jsonl(name, raw, errors)
    renders: list[RenderRecord] = []
    seen: dict[tuple[str, str, int, str, int], int] = {}
    for record in records:
        if not _check_shape(name, record, RENDER_FIELDS, RENDER_REQUIRED, errors):
            continue
        v = record.values
        problems = []
        if v["sample"] < 1:
            problems.append(("sample", "must be 1 or more (samples are 1-based)"))
        if not SEED_RANGE[0] <= v["seed"] <= SEED_RANGE[1]:
            problems.append(("seed", "must fit in a signed 64-bit integer"))
        renderer = v["renderer"].strip()
        if not renderer or len(renderer) > RENDERER_MAX_LENGTH:
            problems.append(("renderer", f"must be 1 to {RENDERER_MAX_LENGTH} characters"))
        image = v["image"].strip()
        if Path(image).is_absolute() or "\\" in image:
            problems.append(("image", f"must be a path relative to the manifest, with '/' separators, got {image!r}"))
        if problems:
            errors.extend(RecordError(name, record.line, field, message) for field, message in problems)
            continue
        key = (v["task_id"], v["model"], v["sample"], renderer, v["seed"])
        if key in seen:
            errors.append(
                RecordError(
                    name, record.line, "seed",
                    f"duplicate (task_id, model, sample, renderer, seed) (first on line {seen[key]})",
                )
            )
            continue
        seen[key] = record.line
        renders.append(
            RenderRecord(
                line=record.line,
                task_id=v["task_id"],
                model=v["model"],
                sample=v["sample"],
                image=image,
                renderer=renderer,
                seed=v["seed"],
                prompt=v.get("prompt"),
            )
        )
    if not records and not errors:
        errors.append(RecordError(name, 0, "", "the file holds no records"))
    if errors:
        raise ImportFailed(errors)
    return renders


def read_file_bytes(path: str | Path) -> bytes:
    return Path(path).read_bytes()


# Source pools for task construction (Ekphrasis Algorithm 1): the engine validates each record's meaning
# (engine.task_construction.pools); here the file is read and its shape checked like every import.
POOL_CSV_TYPES = {"norms": dict}


def read_pool_rows(name: str, raw: bytes, *, fmt: str | None = None) -> list[tuple[int, dict[str, Any]]]:
    """``(line, values)`` of every record of a pool file (JSONL or CSV; a CSV ``norms`` cell is a JSON
    object). Raises :class:`ImportFailed` naming file, line and field."""
    errors: list[RecordError] = []
    if _format_of(name, fmt) == "csv":
        records = _parse_csv(name, raw, errors, POOL_CSV_TYPES)
    else:
        records = _parse_jsonl(name, raw, errors)
    if errors:
        raise ImportFailed(errors)
    return [(r.line, r.values) for r in records]
