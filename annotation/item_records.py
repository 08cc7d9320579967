"""Reading a campaign's item file (JSONL) under the catalogue's import contract.

The file is decoded by :func:`leaderboard.import_contract.file_records` like every other import (BOM
dropped, bad UTF-8 and invalid JSON named by line, no duplicate keys, NaN, NUL, lone surrogates or
deep nesting), and the fields that end up in a column are checked against that column: ``task_id``
against ``Task.external_id``, ``key`` against ``Item.key``, a reference's ``model``, ``sample``,
``renderer`` and ``seed`` against ``SubjectModel.display_name``, ``Response.sample``,
``Render.renderer`` and ``Render.seed``. The fields stored in the item's payload without a column of
their own are capped too: a text pairwise item's ``checklist`` (at most :data:`CHECKLIST_MAX_ENTRIES`
strings of at most :data:`CHECKLIST_ENTRY_MAX_CHARS` characters each, the limit of every shown
checklist text) and a TIG item's identifiers kept under ``meta`` (:data:`META_FIELDS`: a string of at
most :data:`META_MAX_CHARS` characters or a 64-bit integer). Kind-specific meaning (which references a
kind needs) is checked afterwards by ``annotation.services.items_import_jsonl``.
"""

from __future__ import annotations

from typing import Any

from annotation.choices import CampaignKind
from annotation.errors import ItemsInvalid
from annotation.models import Item
from leaderboard.import_contract import (
    TEXT_MAX_CHARS,
    FieldRule,
    Record,
    RecordError,
    field_rule,
    file_records,
    record_check,
    value_check,
)
from leaderboard.models import Render, Response, SubjectModel, Task

__all__ = [
    "CHECKLIST_ENTRY_MAX_CHARS",
    "CHECKLIST_MAX_ENTRIES",
    "ITEM_RULES",
    "KIND_FIELDS",
    "META_FIELDS",
    "META_MAX_CHARS",
    "REFERENCE_FIELDS",
    "REFERENCE_RULES",
    "item_records",
    "unknown_field_problems",
]

_SHOWN_TEXT = FieldRule(str, max_chars=TEXT_MAX_CHARS)
ITEM_RULES: dict[str, FieldRule] = {
    "task_id": field_rule(Task, "external_id", required=True, identifier=True),
    "key": field_rule(Item, "key", identifier=True),
    "dimension": field_rule(Item, "dimension"),
    "stratum": field_rule(Item, "sampling_stratum"),
    "checklist_text": _SHOWN_TEXT,
    "cluster_summary": _SHOWN_TEXT,
    "cluster_label": _SHOWN_TEXT,
    "provenance": field_rule(Item, "payload"),
}
#: Most entries of a text pairwise item's ``checklist`` (reference cues shown beside the pair). A task has
#: at most three checklist slots per dimension (``ChecklistItem.slot`` 1–3): no study comes near this.
CHECKLIST_MAX_ENTRIES = 50
#: Longest ``checklist`` entry: the limit of every shown checklist text (a TIG item's ``checklist_text``).
CHECKLIST_ENTRY_MAX_CHARS = TEXT_MAX_CHARS
_CHECKLIST_ENTRY = FieldRule(str, max_chars=CHECKLIST_ENTRY_MAX_CHARS)
#: A TIG audit record's identifiers, kept under the payload's ``meta`` (never shown). The engine writes
#: strings (``ni-…``, ``…-<hash>``, ``tig``), the site's own export integer ids and ranks.
META_FIELDS = ("checklist_item_id", "comparison_key", "cluster_id", "source", "rank")
#: Longest string identifier under ``meta``: the catalogue's identifier width (``Task.external_id``,
#: ``ChecklistItem.context_key``, which a ``comparison_key`` is).
META_MAX_CHARS = 100
_META_INTEGER = (-(2**63), 2**63 - 1)
#: The fields of an item record that name a response or render as {model, sample?, renderer?, seed?}.
REFERENCE_FIELDS = ("a", "b", "render", "response")
REFERENCE_RULES: dict[str, FieldRule] = {
    "model": field_rule(SubjectModel, "display_name", required=True, identifier=True),
    "sample": field_rule(Response, "sample"),
    "renderer": field_rule(Render, "renderer", identifier=True),
    "seed": field_rule(Render, "seed"),
}


#: Every field an item record of each kind may carry (``items_import_jsonl`` reads these). A field outside
#: its kind's set is refused: a misspelt ``gold`` ("Gold", "is_gold") made an ordinary item silently, and a
#: misspelt ``checklist`` or ``stratum`` dropped what it held. A TIG record may also carry what
#: ``export_tig_items`` and the engine's audit records write beside the fields an item keeps (the cluster's
#: type, its score, the population's version, the slot, the checklist version, the old count names).
_COMMON_FIELDS = ("task_id", "key", "gold")
_TIG_FIELDS = (
    "checklist_text", "cluster_summary", "cluster_label", "provenance", *META_FIELDS,
    "n_models", "n_samples", "population_models", "population_samples",
    "cluster_type", "score", "population_version", "slot", "version",
)
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    CampaignKind.TEXT_PAIRWISE: (*_COMMON_FIELDS, "dimension", "a", "b", "checklist", "stratum"),
    CampaignKind.TIG_AUDIT: (*_COMMON_FIELDS, *_TIG_FIELDS),
    CampaignKind.FAITHFULNESS: (*_COMMON_FIELDS, "render"),
    CampaignKind.IMAGE_PREFERENCE: (*_COMMON_FIELDS, "a", "b"),
}
#: The other kinds name one response (strategy labels; the rest refuse such items by their own checks).
_RESPONSE_FIELDS = (*_COMMON_FIELDS, "response")


def unknown_field_problems(kind: str, values: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for each field of an item record that a ``kind`` campaign does not read."""
    allowed = KIND_FIELDS.get(kind, _RESPONSE_FIELDS)
    return [(key, f"unknown field for a {kind} campaign (allowed: {', '.join(allowed)})")
            for key in values if key not in allowed]


def _checklist_problems(value: Any) -> list[tuple[str, str]]:
    """(field, message) for each way a ``checklist`` value breaks its limits."""
    if not isinstance(value, list):
        return [("checklist", f"must be a list of strings, got {type(value).__name__}")]
    problems = []
    if len(value) > CHECKLIST_MAX_ENTRIES:
        problems.append(
            ("checklist", f"has {len(value):,} entries, over the limit of {CHECKLIST_MAX_ENTRIES}")
        )
    for index, entry in enumerate(value):
        problems.extend((f"checklist[{index}]", m) for m in value_check(entry, _CHECKLIST_ENTRY))
    return problems


def _meta_problems(value: Any) -> list[str]:
    if isinstance(value, str):
        return value_check(value, FieldRule(str, max_chars=META_MAX_CHARS))
    if isinstance(value, int) and not isinstance(value, bool):
        return value_check(value, FieldRule(int, int_range=_META_INTEGER))
    return [f"must be a string or an integer, got {type(value).__name__}"]


def _payload_problems(values: dict[str, Any]) -> list[tuple[str, str]]:
    """The payload fields without a column of their own (not in :data:`ITEM_RULES`) against their caps."""
    problems = _checklist_problems(values["checklist"]) if values.get("checklist") is not None else []
    for key in META_FIELDS:
        if values.get(key) is not None:
            problems.extend((key, m) for m in _meta_problems(values[key]))
    return problems


def item_records(name: str, raw: bytes) -> list[Record]:
    """The file's records, or :class:`ItemsInvalid` with every problem of every line (file, line, field)."""
    errors: list[RecordError] = []
    records = []
    for record in file_records(name, raw, rules=ITEM_RULES, fmt="jsonl", errors=errors):
        ok = record_check(name, record, ITEM_RULES, errors, known_only=False)
        payload_problems = [
            p for p in _payload_problems(record.values) if p[0].split("[")[0] not in record.reported
        ]
        errors.extend(RecordError(name, record.line, f, m) for f, m in payload_problems)
        ok = ok and not payload_problems
        for ref_field in REFERENCE_FIELDS:
            reference = record.values.get(ref_field)
            if not isinstance(reference, dict):
                continue
            for key, rule in REFERENCE_RULES.items():
                if reference.get(key) is None:
                    continue
                problems = value_check(reference[key], rule)
                errors.extend(RecordError(name, record.line, f"{ref_field}.{key}", m) for m in problems)
                ok = ok and not problems
        if ok:
            records.append(record)
    if errors:
        raise ItemsInvalid([(e.line, e.field, e.message) for e in errors], file=name)
    return records
