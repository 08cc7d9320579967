"""Reading and validating task, response and render-manifest records from JSONL and CSV files.

Every problem is reported as a :class:`RecordError` naming the file, the line
and the field, and all problems of a file are collected before anything is
written, so that one import run shows the whole list. Nothing here touches the
database: ``leaderboard.services`` checks references against it and writes in
one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.task_construction.pools import CONCEPT_MAX_LENGTH
from leaderboard.import_contract import (
    JSON_FIELD_MAX_CHARS,
    TEXT_MAX_CHARS,
    FieldRule,
    ImportFailed,
    RecordError,
    field_rule,
    file_records,
    record_check,
)
from leaderboard.models import Render, Response, SubjectModel, Task

__all__ = [
    "RenderRecord", "ResponseRecord", "TaskRecord",
    "read_render_records", "read_response_records", "read_task_records",
]

FAMILIES = ("abstraction", "combination", "transformation", "adaptation")
FAMILY_ALIASES = {"adaption": "adaptation"}  # the paper's own spelling in places

#: Size limit of a brief (Task.brief has no length of its own).
BRIEF_MAX_CHARS = TEXT_MAX_CHARS
#: Size limit of a response's texts: a raw answer holds both of its fields.
RESPONSE_TEXT_MAX_CHARS = 50_000
#: Size limit of a manifest's image path (not stored: the file is stored under its content hash).
IMAGE_PATH_MAX_CHARS = 1_000

TASK_RULES: dict[str, FieldRule] = {
    "id": field_rule(Task, "external_id", required=True, identifier=True),
    "family": field_rule(Task, "family", required=True, trimmed=True),
    "subtype": field_rule(Task, "subtype"),
    "brief": field_rule(Task, "brief", required=True, trimmed=True, max_chars=BRIEF_MAX_CHARS),
    "constraints": field_rule(Task, "constraints"),
    "source": field_rule(Task, "source"),
}
# A response names its task and model by the natural keys the catalogue stores.
_TASK_ID = field_rule(Task, "external_id", required=True, identifier=True)
_MODEL = field_rule(SubjectModel, "display_name", required=True, identifier=True)
_SAMPLE = field_rule(Response, "sample", required=True)
RESPONSE_RULES: dict[str, FieldRule] = {
    "task_id": _TASK_ID,
    "model": _MODEL,
    "sample": _SAMPLE,
    "text": field_rule(Response, "raw_text", max_chars=RESPONSE_TEXT_MAX_CHARS),
    "core_idea": field_rule(Response, "core_idea", max_chars=RESPONSE_TEXT_MAX_CHARS),
    "visual_description": field_rule(Response, "visual_description", max_chars=RESPONSE_TEXT_MAX_CHARS),
    "primary": field_rule(Response, "is_primary"),
}
RENDER_RULES: dict[str, FieldRule] = {
    "task_id": _TASK_ID,
    "model": _MODEL,
    "sample": _SAMPLE,
    "image": field_rule(Render, "image", required=True, trimmed=True, max_chars=IMAGE_PATH_MAX_CHARS),
    "renderer": field_rule(Render, "renderer", required=True, identifier=True),
    "seed": field_rule(Render, "seed", required=True),
    "prompt": field_rule(Render, "prompt"),
}


def _checked_records(name: str, raw: bytes, fmt: str | None, rules: dict[str, FieldRule], errors: list[RecordError]):
    return [r for r in file_records(name, raw, rules=rules, fmt=fmt, errors=errors) if record_check(name, r, rules, errors)]


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
    tasks: list[TaskRecord] = []
    seen: dict[str, int] = {}
    for record in _checked_records(name, raw, fmt, TASK_RULES, errors):
        v = record.values
        # Every problem of the line is reported, not only the first.
        line_errors: list[RecordError] = []
        family = FAMILY_ALIASES.get(v["family"].strip().lower(), v["family"].strip().lower())
        if ekphrasis_families and family not in FAMILIES:
            line_errors.append(
                RecordError(name, record.line, "family", f"unknown family {v['family']!r} (one of {', '.join(FAMILIES)})")
            )
        external_id = v["id"]
        if external_id in seen:
            line_errors.append(
                RecordError(name, record.line, "id", f"duplicate id {external_id!r} (first on line {seen[external_id]})")
            )
        else:
            seen[external_id] = record.line
        if line_errors:
            errors.extend(line_errors)
            continue
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
    if errors:
        raise ImportFailed(errors)
    return tasks


def read_response_records(name: str, raw: bytes, *, fmt: str | None = None) -> list[ResponseRecord]:
    """Parse and validate response records (shape only; references are checked by the service)."""
    errors: list[RecordError] = []
    responses: list[ResponseRecord] = []
    seen: dict[tuple[str, str, int], int] = {}
    primaries: dict[tuple[str, str], int] = {}
    for record in _checked_records(name, raw, fmt, RESPONSE_RULES, errors):
        v = record.values
        # Every problem of the line is reported, not only the first.
        line_errors: list[RecordError] = []
        has_text = "text" in v
        has_fields = "core_idea" in v or "visual_description" in v
        if has_text and has_fields:
            line_errors.append(
                RecordError(name, record.line, "text", "give either 'text' or 'core_idea' + 'visual_description', not both")
            )
        if not has_text:
            for missing in (k for k in ("core_idea", "visual_description") if not v.get(k)):
                line_errors.append(RecordError(name, record.line, missing, "missing required field (or give 'text')"))
        if v["sample"] < 1:
            line_errors.append(RecordError(name, record.line, "sample", "must be 1 or more (samples are 1-based)"))
        key = (v["task_id"], v["model"], v["sample"])
        if key in seen:
            line_errors.append(
                RecordError(name, record.line, "sample", f"duplicate (task_id, model, sample) (first on line {seen[key]})")
            )
        else:
            seen[key] = record.line
        if v.get("primary") is True:
            pair = (v["task_id"], v["model"])
            if pair in primaries:
                line_errors.append(
                    RecordError(
                        name, record.line, "primary",
                        f"a second primary for task {pair[0]!r} and model {pair[1]!r} (first on line {primaries[pair]})",
                    )
                )
            else:
                primaries[pair] = record.line
        if line_errors:
            errors.extend(line_errors)
            continue
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
    renders: list[RenderRecord] = []
    seen: dict[tuple[str, str, int, str, int], int] = {}
    for record in _checked_records(name, raw, fmt, RENDER_RULES, errors):
        v = record.values
        problems = []
        if v["sample"] < 1:
            problems.append(("sample", "must be 1 or more (samples are 1-based)"))
        renderer = v["renderer"]
        image = v["image"]
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
    if errors:
        raise ImportFailed(errors)
    return renders


def read_file_bytes(path: str | Path) -> bytes:
    return Path(path).read_bytes()


# Source pools for task construction (Ekphrasis Algorithm 1): the engine validates each record's meaning
# (engine.task_construction.pools); here the file is read and its shape checked like every import.
#: Pool fields whose shape the import contract checks (the engine checks the concreteness range, norms'
#: values and every field's meaning).
POOL_RULES: dict[str, FieldRule] = {
    "concept": FieldRule(str, required=True, max_chars=CONCEPT_MAX_LENGTH, trimmed=True),
    "type": FieldRule(str, required=True, max_chars=20, trimmed=True),
    **{key: FieldRule(str, max_chars=100, trimmed=True) for key in ("subtype", "category", "audience", "medium", "deliverable")},
    "concreteness": FieldRule(float),
    "norms": FieldRule(dict, max_chars=JSON_FIELD_MAX_CHARS),
}


def read_pool_rows(name: str, raw: bytes, *, fmt: str | None = None) -> list[tuple[int, dict[str, Any]]]:
    """``(line, values)`` of every record of a pool file (JSONL or CSV; a CSV ``norms`` cell is a JSON
    object). Raises :class:`ImportFailed` naming file, line and field."""
    errors: list[RecordError] = []
    records = [r for r in file_records(name, raw, rules=POOL_RULES, fmt=fmt, errors=errors)
               if record_check(name, r, POOL_RULES, errors, known_only=False)]
    if errors:
        raise ImportFailed(errors)
    return [(r.line, dict(r.values)) for r in records]
