"""Source pools P_f of Algorithm 1 (Ekphrasis §3.3, App. A): the concepts, objects, transformation
conditions and applied situations that task candidates are sampled from.

A pool is data a user supplies, one record per line (CSV or JSONL; the site's import reads the file
and hands each record here with its line number). Every record has

========================  =====================================================================
field                     meaning
========================  =====================================================================
``concept`` (required)    the word or phrase: an abstract noun, an object, a condition, a situation
``type`` (required)       ``abstract`` | ``concrete`` (concepts) · ``condition`` (Transformation) ·
                          ``situation`` (Adaptation)
``subtype``               abstract: its Abstraction subtype (Table 5; absent = usable in Combination
                          only) · condition: material | temporal | contextual (required) ·
                          situation: its Adaptation domain (required) · concrete: not allowed
``category``              concrete: an object category (THINGS-style), optional
``concreteness``          a concreteness norm on Brysbaert et al.'s (2014) 1–5 scale, optional
``norms``                 any other numeric norms, an object of numbers, optional
``audience``, ``medium``,  situation only: the constraint set C of App. A.4, optional strings
``deliverable``
========================  =====================================================================

Validation collects every problem as a :class:`PoolError` (line, field, message) before anything is
returned, so a caller can report them all and write nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.task_construction.grid import ABSTRACTION_SUBTYPES, ADAPTATION_DOMAINS, TRANSFORMATION_SUBTYPES

__all__ = [
    "POOL_FIELDS",
    "POOL_TYPES",
    "PoolError",
    "PoolInvalid",
    "PoolRecord",
    "SourcePool",
    "merge_pools",
    "pool_from_rows",
]

POOL_TYPES = ("abstract", "concrete", "condition", "situation")
POOL_FIELDS = {
    "concept": str, "type": str, "subtype": str, "category": str, "concreteness": float, "norms": dict,
    "audience": str, "medium": str, "deliverable": str,
}
CONCEPT_MAX_LENGTH = 200
CONCRETENESS_RANGE = (1.0, 5.0)  # Brysbaert, Warriner & Kuperman (2014) rating scale
_SITUATION_ONLY = ("audience", "medium", "deliverable")


@dataclass(frozen=True)
class PoolError:
    line: int
    field: str
    message: str


class PoolInvalid(ValueError):
    """Raised with every :class:`PoolError` of a pool; nothing of it is usable."""

    def __init__(self, errors: Sequence[PoolError]):
        self.errors = list(errors)
        super().__init__("; ".join(f"line {e.line}: {e.field}: {e.message}" for e in self.errors[:20]))


@dataclass(frozen=True)
class PoolRecord:
    concept: str
    type: str
    subtype: str = ""
    category: str = ""
    concreteness: float | None = None
    norms: Mapping[str, float] = field(default_factory=dict)
    audience: str = ""
    medium: str = ""
    deliverable: str = ""
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The record as imported (without its line), empty optional fields left out."""
        out: dict[str, Any] = {"concept": self.concept, "type": self.type}
        for name in ("subtype", "category", "audience", "medium", "deliverable"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.concreteness is not None:
            out["concreteness"] = self.concreteness
        if self.norms:
            out["norms"] = dict(sorted(self.norms.items()))
        return out


@dataclass(frozen=True)
class SourcePool:
    """A named, validated pool; ``sha256`` hashes its records (the construction record cites it)."""

    name: str
    records: tuple[PoolRecord, ...]
    is_demo: bool = False

    @property
    def sha256(self) -> str:
        canonical = json.dumps([r.to_dict() for r in self.records], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def of_type(self, kind: str, subtype: str | None = None) -> list[PoolRecord]:
        return [r for r in self.records if r.type == kind and (subtype is None or r.subtype == subtype)]

    def citation(self) -> dict[str, Any]:
        return {"name": self.name, "sha256": self.sha256, "n_records": len(self.records), "is_demo": self.is_demo}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value  # NaN != NaN


def _record_errors(line: int, values: Mapping[str, Any]) -> list[PoolError]:
    errors = [PoolError(line, key, f"unknown field (allowed: {', '.join(POOL_FIELDS)})")
              for key in values if key not in POOL_FIELDS]
    for key in ("concept", "type"):
        if not isinstance(values.get(key), str) or not values[key].strip():
            errors.append(PoolError(line, key, "missing required field" if key not in values else "must be a non-empty string"))
    for key in ("subtype", "category", *_SITUATION_ONLY):
        if key in values and not isinstance(values[key], str):
            errors.append(PoolError(line, key, f"must be a string, got {type(values[key]).__name__}"))
    if errors:
        return errors
    concept, kind, subtype = values["concept"].strip(), values["type"].strip(), values.get("subtype", "").strip()
    if len(concept) > CONCEPT_MAX_LENGTH:
        errors.append(PoolError(line, "concept", f"longer than {CONCEPT_MAX_LENGTH} characters"))
    if kind not in POOL_TYPES:
        return [*errors, PoolError(line, "type", f"must be one of {', '.join(POOL_TYPES)}, got {kind!r}")]
    allowed_subtypes = {"abstract": ABSTRACTION_SUBTYPES, "condition": TRANSFORMATION_SUBTYPES,
                        "situation": ADAPTATION_DOMAINS}.get(kind, ())
    if kind == "concrete" and subtype:
        errors.append(PoolError(line, "subtype", "a concrete concept has no subtype (use category)"))
    elif kind in ("condition", "situation") and not subtype:
        errors.append(PoolError(line, "subtype", f"required for a {kind}: one of {', '.join(allowed_subtypes)}"))
    elif subtype and subtype not in allowed_subtypes:
        errors.append(PoolError(line, "subtype", f"must be one of {', '.join(allowed_subtypes)}, got {subtype!r}"))
    if "category" in values and kind != "concrete":
        errors.append(PoolError(line, "category", "only a concrete concept has a category"))
    for key in _SITUATION_ONLY:
        if key in values and kind != "situation":
            errors.append(PoolError(line, key, "only a situation has audience, medium and deliverable"))
    if "concreteness" in values:
        value = values["concreteness"]
        if not _number(value):
            errors.append(PoolError(line, "concreteness", f"must be a number, got {value!r}"))
        elif not CONCRETENESS_RANGE[0] <= float(value) <= CONCRETENESS_RANGE[1]:
            errors.append(PoolError(line, "concreteness", f"must lie in [{CONCRETENESS_RANGE[0]:g}, {CONCRETENESS_RANGE[1]:g}]"))
    if "norms" in values:
        norms = values["norms"]
        if not isinstance(norms, dict):
            errors.append(PoolError(line, "norms", "must be an object of numbers"))
        else:
            errors.extend(PoolError(line, "norms", f"norm {name!r} must be a number")
                          for name, v in norms.items() if not _number(v))
    return errors


def _coerce_csv_number(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def pool_from_rows(name: str, rows: Iterable[tuple[int, Mapping[str, Any]]], *, is_demo: bool = False) -> SourcePool:
    """Validate ``(line, values)`` rows into a pool; raises :class:`PoolInvalid` with every error.

    A record that repeats an earlier (concept, type, subtype) is an error naming the earlier line."""
    errors: list[PoolError] = []
    records: list[PoolRecord] = []
    first_line: dict[tuple[str, str, str], int] = {}
    for line, values in rows:
        values = dict(values)
        if "concreteness" in values:
            values["concreteness"] = _coerce_csv_number(values["concreteness"])
        problems = _record_errors(line, values)
        if problems:
            errors.extend(problems)
            continue
        record = PoolRecord(
            concept=values["concept"].strip(), type=values["type"].strip(), subtype=values.get("subtype", "").strip(),
            category=values.get("category", "").strip(),
            concreteness=float(values["concreteness"]) if "concreteness" in values else None,
            norms={k: float(v) for k, v in values.get("norms", {}).items()},
            audience=values.get("audience", "").strip(), medium=values.get("medium", "").strip(),
            deliverable=values.get("deliverable", "").strip(), line=line,
        )
        key = (record.concept.casefold(), record.type, record.subtype)
        if key in first_line:
            errors.append(PoolError(line, "concept", f"repeats line {first_line[key]} ({record.concept!r})"))
            continue
        first_line[key] = line
        records.append(record)
    if errors:
        raise PoolInvalid(errors)
    if not records:
        raise PoolInvalid([PoolError(0, "", "the pool has no records")])
    return SourcePool(name=name, records=tuple(records), is_demo=is_demo)


def merge_pools(pools: Sequence[SourcePool]) -> SourcePool:
    """One pool of every record of ``pools`` (a repeated record is kept once, first pool first)."""
    seen: set[tuple[str, str, str]] = set()
    merged = []
    for pool in pools:
        for record in pool.records:
            key = (record.concept.casefold(), record.type, record.subtype)
            if key not in seen:
                seen.add(key)
                merged.append(record)
    return SourcePool(name="+".join(p.name for p in pools), records=tuple(merged),
                      is_demo=all(p.is_demo for p in pools))
