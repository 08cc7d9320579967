"""Reading a campaign's item file (JSONL) under the catalogue's import contract.

The file is decoded by :func:`leaderboard.import_contract.file_records` like every other import (BOM
dropped, bad UTF-8 and invalid JSON named by line, no duplicate keys, NaN, NUL, lone surrogates or
deep nesting), and the fields that end up in a column are checked against that column: ``task_id``
against ``Task.external_id``, ``key`` against ``Item.key``, a reference's ``model``, ``sample``,
``renderer`` and ``seed`` against ``SubjectModel.display_name``, ``Response.sample``,
``Render.renderer`` and ``Render.seed``. Kind-specific meaning (which references a kind needs) is
checked afterwards by ``annotation.services.items_import_jsonl``.
"""

from __future__ import annotations

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

__all__ = ["ITEM_RULES", "REFERENCE_FIELDS", "REFERENCE_RULES", "item_records"]

_SHOWN_TEXT = FieldRule(str, max_chars=TEXT_MAX_CHARS)
ITEM_RULES: dict[str, FieldRule] = {
    "task_id": field_rule(Task, "external_id", required=True, trimmed=True),
    "key": field_rule(Item, "key", trimmed=True),
    "dimension": field_rule(Item, "dimension"),
    "stratum": field_rule(Item, "sampling_stratum"),
    "checklist_text": _SHOWN_TEXT,
    "cluster_summary": _SHOWN_TEXT,
    "cluster_label": _SHOWN_TEXT,
    "provenance": field_rule(Item, "payload"),
}
#: The fields of an item record that name a response or render as {model, sample?, renderer?, seed?}.
REFERENCE_FIELDS = ("a", "b", "render", "response")
REFERENCE_RULES: dict[str, FieldRule] = {
    "model": field_rule(SubjectModel, "display_name", required=True, trimmed=True),
    "sample": field_rule(Response, "sample"),
    "renderer": field_rule(Render, "renderer", trimmed=True),
    "seed": field_rule(Render, "seed"),
}


def item_records(name: str, raw: bytes) -> list[Record]:
    """The file's records, or :class:`ItemsInvalid` with every problem of every line (file, line, field)."""
    errors: list[RecordError] = []
    records = []
    for record in file_records(name, raw, rules=ITEM_RULES, fmt="jsonl", errors=errors):
        ok = record_check(name, record, ITEM_RULES, errors, known_only=False)
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
