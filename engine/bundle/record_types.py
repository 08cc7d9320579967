"""The JSON type of every field of a bundle's records, checked before anything reads them.

The recomputations read records as the exporter wrote them: ``float(row["fit"]["len_a"])``,
``row["renders"][0]["seed"]``, a sum over ``progress_curve``. A field of another JSON type (``"fit": "x"``
where an object is, a list where a number is) broke them with a bare ``TypeError`` or ``ValueError``
naming no file, line or field, and a forger's wrong type could not be told from a damaged bundle. So
each record file's fields are declared here with the types the exporters write (null only where an
exporter writes it, or where a free text may be absent), and :func:`record_type_problems` names every
field of another type as ``records/samples.jsonl, line 3, field text: expected a string, got array`` —
the form a field that is absent takes (:class:`engine.bundle.manifest.MissingField`).

A path ``a.b`` is field ``b`` of the object in ``a``; ``a[]`` is every element of the list in ``a``. A
field not declared is not checked (an object whose keys are names — a task's ``source``, a run's
``usage`` — is declared as an object only); an absent field is the reader's to name when a check needs it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from engine.bundle.manifest import json_type, numbered_records

__all__ = ["CONFIGURATION_TYPES", "HUMAN_LABELS", "RECORD_TYPES", "record_type_problems"]

NUM, STR, BOOL, ARR, OBJ = ("number",), ("string",), ("boolean",), ("array",), ("object",)
NUM0, STR0, OBJ0, BOOL0 = ("number", "null"), ("string", "null"), ("object", "null"), ("boolean", "null")

_TASK = {"id": STR, "key": NUM, "position": NUM, "family": STR0, "subtype": STR0, "brief": STR0, "constraints": OBJ,
         "source": OBJ}
_EKPHRASIS = {
    "records/tasks.jsonl": _TASK,
    "records/responses.jsonl": {
        "id": NUM, "task": STR, "model": STR, "sample": NUM, "is_primary": BOOL, "raw_text": STR, "raw_sha256": STR,
        "core_idea": STR0, "visual_description": STR0, "normalisation_method": STR0, "normalisation_model": STR0,
        "renders": ARR, "renders[]": OBJ, "renders[].image": STR0, "renders[].image_sha256": STR0,
        "renders[].is_placeholder": BOOL, "renders[].prompt": STR0, "renders[].renderer": STR, "renders[].seed": NUM0},
    "records/comparisons.jsonl": {
        "id": NUM, "task": STR, "family": STR0, "dimension": STR, "kind": STR, "judge": STR, "model_x": STR, "model_y": STR,
        "shown_a": NUM, "shown_b": NUM, "winner": STR0, "confidence": NUM0, "status": STR, "attempts": NUM, "repaired": BOOL,
        "repeat": NUM, "sequence": NUM, "rationale": STR0, "error": STR0, "checklist": ARR, "checklist[]": OBJ,
        "per_item_outcomes": ARR, "per_item_outcomes[]": OBJ, "fit": OBJ, "fit.automatic": BOOL, "fit.len_a": NUM,
        "fit.len_b": NUM, "fit.model_a": NUM, "fit.model_b": NUM, "fit.pair_key": STR},
    "records/per_instance.jsonl": {"task": STR, "dimension": STR, "model": STR, "wins": NUM, "losses": NUM, "ties": NUM},
}
#: The human labels of a snapshot's calibrated views (the manifest's ``human_labels.labels`` names the file).
HUMAN_LABELS = {"campaign": NUM, "item": NUM, "task": STR, "dimension": STR, "is_gold": BOOL, "response_a": NUM,
                "response_b": NUM, "model_a": STR0, "model_b": STR0, "annotator": STR, "label": STR, "simulated": BOOL}
_EASEL = {
    "records/tasks.jsonl": {**_TASK, "image": STR0},
    "records/runs.jsonl": {
        "id": NUM, "agent_kind": STR, "agent_name": STR, "board_position": NUM0, "budget_setting": STR0, "code_version": STR0,
        "config": OBJ, "finished_at": STR0, "started_at": STR0, "is_simulated": BOOL, "on_board": BOOL, "seed": NUM0,
        "subject_model": ("string", "object", "null"), "usage": OBJ0},
    "records/episodes.jsonl": {
        "id": NUM, "run": NUM, "task": STR, "kind": STR, "category": STR0, "position": NUM, "budget": NUM, "status": STR,
        "steps_done": NUM, "undo_count": NUM, "collision_count": NUM, "final_canvas": STR0, "recogniser": STR0, "error": STR0,
        "progress_curve": ARR, "progress_curve[]": NUM0, "semantic_detail": OBJ0, "semantic_summary": OBJ0,
        **{name: NUM0 for name in ("at_50", "auc", "best", "fb_gap", "final_edge_iou", "final_l1", "final_s", "final_ssim",
                                 "initial_s", "invalid_rate", "repeat_rate", "semantic_score", "submit_step")}},
    "records/steps.jsonl": {
        "episode": NUM, "index": NUM, "kind": STR, "action": OBJ0, "canvas": STR0, "collision": BOOL, "valid": BOOL, "raw": STR0,
        "error": STR0, "s": NUM0, "l1": NUM0, "ssim": NUM0, "edge_iou": NUM0},
    "records/per_instance.jsonl": {
        "run": NUM, "agent": STR, "task": STR, "category": STR0, "steps_done": NUM,
        **{name: NUM0 for name in ("at_50", "auc", "best", "fb_gap", "final_s", "invalid_rate", "repeat_rate",
                                 "semantic_score", "submit_step")}},
}
_C2 = {
    "records/tasks.jsonl": {**_TASK, "task_type": STR, "image": STR0},
    "records/samples.jsonl": {
        "key": NUM, "task": STR, "task_type": STR, "model": STR, "sample_index": NUM, "temperature": NUM0, "text": STR0,
        "status": STR, "attempts": NUM, "error": STR0, "verdict": STR0, "correct": BOOL0, "confidence": NUM0,
        "confidence_raw": STR0, "confidence_status": STR0, "usefulness": NUM0, "cluster": NUM0, "grade_detail": OBJ0},
    "records/ratings.jsonl": {
        "sample": NUM, "rater": STR, "repeat": NUM, "status": STR, "attempts": NUM, "repaired": BOOL, "error": STR0, "raw": STR0,
        "u": NUM0, "o": NUM0, "s": NUM0, "rationale_u": STR0, "rationale_o": STR0, "rationale_s": STR0},
    "records/per_instance.jsonl": {
        "model": STR, "task": STR, "task_type": STR, "u": NUM0, "o": NUM0, "s": NUM0, "c": NUM0, "clusters": NUM0,
        "missing_confidences": NUM},
}
#: Each protocol's record files and the JSON types of their fields.
RECORD_TYPES: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {"ekphrasis": _EKPHRASIS, "easel": _EASEL, "c2": _C2}

#: The manifest's ``configuration``, which the recomputations read as they read a record (its seed, models,
#: rater, bootstrap size).
CONFIGURATION_TYPES: dict[str, dict[str, tuple[str, ...]]] = {
    "ekphrasis": {"models": ARR, "models[]": STR, "dimensions": STR, "n_boot": NUM, "seed": NUM, "inspected_field": OBJ},
    "easel": {"demo": BOOL, "task_set": OBJ},
    "c2": {"models": ARR, "models[]": STR, "rater": STR, "second_rater": STR0, "seed": NUM, "settings": OBJ,
           "surprise_policy": STR, "demo": BOOL, "simulated": BOOL},
}

_ARTICLE = {"array": "an array", "object": "an object", "integer": "an integer"}


def _expected(types: tuple[str, ...]) -> str:
    return " or ".join(_ARTICLE.get(t, f"a {t}") if t != "null" else "null" for t in types)


def _values(value: Any, parts: list[str], path: str) -> Iterator[tuple[str, Any]]:
    """(concrete path, value) of every value at ``parts`` below ``value`` (absent ones left out)."""
    if not parts:
        yield path, value
        return
    head, rest = parts[0], parts[1:]
    if head == "[]":
        if isinstance(value, list):
            for k, item in enumerate(value):
                yield from _values(item, rest, f"{path}[{k}]")
    elif isinstance(value, Mapping) and head in value:
        yield from _values(value[head], rest, f"{path}.{head}" if path else head)


def _parts(declared: str) -> list[str]:
    return [p for p in declared.replace("[]", ".[]").split(".") if p]


def record_type_problems(root: Path, manifest: Mapping[str, Any]) -> list[str]:
    """Every field of the bundle's records whose JSON type is not its declared one, named by file, line and
    field path (a file that is absent is the layout check's to name; one that is not JSON, the reader's)."""
    files = dict(RECORD_TYPES.get(str(manifest.get("kind")), {}))
    spec = manifest.get("human_labels")
    if isinstance(spec, Mapping) and spec.get("used") and isinstance(spec.get("labels"), str):
        files[spec["labels"]] = HUMAN_LABELS
    problems = []
    configuration = manifest.get("configuration")
    for declared, types in CONFIGURATION_TYPES.get(str(manifest.get("kind")), {}).items():
        for path, value in _values(configuration, _parts(declared), "configuration"):
            if json_type(value) not in types:
                problems.append(f"manifest.json, field {path}: expected {_expected(types)}, got {json_type(value)}")
    for name, fields in files.items():
        if not (Path(root) / name).is_file():
            continue
        for line, record in numbered_records(root, name):
            if not isinstance(record, Mapping):
                problems.append(f"{name}, line {line}: expected a JSON object, got {json_type(record)}")
                continue
            for declared, types in fields.items():
                for path, value in _values(record, _parts(declared), ""):
                    got = json_type(value)
                    if got not in types:
                        problems.append(f"{name}, line {line}, field {path}: expected {_expected(types)}, got {got}")
    return problems
