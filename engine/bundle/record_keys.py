"""The identity of each record of a bundle, checked unique before anything reads the records.

The recomputations index records by their identity — ``{r["id"]: r for r in responses}`` — so of two
lines with one identity the last is read and the first is not: a response duplicated with another
text and model beside the true one verified, while a reader (or another tool) who took the first line
saw a different record; a rating held twice counted twice in the rater's reliability without any
other record changing. The exporters write each identity once (a database row is one line), so a
second line with an identity already seen is never a legitimate state: :func:`duplicate_record_problems`
names it by file, line and field (``records/responses.jsonl, line 97, field id: 54 is already the
identity of line 3``), and the verifier refuses the bundle before rebuilding or recomputing anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.bundle.manifest import numbered_records

__all__ = ["RECORD_KEYS", "duplicate_record_problems"]

#: Each protocol's record files and the fields that identify one record of it (as the exporter writes it:
#: the row's primary key, or the fields of the table's uniqueness constraint).
RECORD_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "ekphrasis": {"records/tasks.jsonl": ("id",), "records/responses.jsonl": ("id",),
                  "records/comparisons.jsonl": ("id",), "records/per_instance.jsonl": ("task", "dimension", "model")},
    "easel": {"records/tasks.jsonl": ("id",), "records/runs.jsonl": ("id",), "records/episodes.jsonl": ("id",),
              "records/steps.jsonl": ("episode", "index"), "records/per_instance.jsonl": ("run", "task")},
    "c2": {"records/tasks.jsonl": ("id",), "records/samples.jsonl": ("key",),
           "records/ratings.jsonl": ("sample", "rater", "repeat"), "records/per_instance.jsonl": ("model", "task")},
}


def _identity(record: Mapping[str, Any], fields: tuple[str, ...]) -> str:
    return " ".join(f"{f}={record.get(f)!r}" if len(fields) > 1 else repr(record.get(f)) for f in fields)


def duplicate_record_problems(root: Path, manifest: Mapping[str, Any]) -> list[str]:
    """Every record whose identity an earlier line of its file already has, named by file, line and field
    (a file that is absent is the layout check's to name; a line that is not a JSON object, the type check's)."""
    problems = []
    for name, fields in RECORD_KEYS.get(str(manifest.get("kind")), {}).items():
        if not (Path(root) / name).is_file():
            continue
        first: dict[str, int] = {}
        for line, record in numbered_records(root, name):
            if not isinstance(record, Mapping):
                continue
            identity = _identity(record, fields)
            if identity in first:
                problems.append(f"{name}, line {line}, field {'+'.join(fields)}: {identity} is already the identity "
                                f"of line {first[identity]} (each record is written once)")
            else:
                first[identity] = line
    return problems
