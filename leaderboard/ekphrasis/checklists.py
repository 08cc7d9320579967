"""Stored, versioned checklist items (Ekphrasis App. E).

Items are created the first time a task and dimension is judged: by the
judge model when the run has a provider (one prompt per dimension, strict
JSON, validated and repaired), otherwise from the fixed per-slot templates,
labelled ``template``. An admin edit never overwrites an item: it stores a
new version and deactivates the old one, so every comparison keeps the exact
wording it was judged with (the comparison row stores the items it saw).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection, transaction
from django.utils import timezone

from engine.checklists import Checklist, InspectedField, template_checklist
from engine.checklists import ChecklistItem as EngineItem
from engine.checklists import Dimension as EngineDimension
from engine.generation import TaskBrief
from leaderboard.ekphrasis.models import ChecklistItem
from leaderboard.json_recordset import recordset_insert_sql, recordset_json
from leaderboard.models import Task

ENGINE_DIMENSION = {"U": EngineDimension.USEFULNESS, "E": EngineDimension.EXPRESSIVENESS, "N": EngineDimension.NOVELTY}
SOURCE_FROM_ENGINE = {"template": "template", "judge_model": "judge", "tig": "tig", "admin": "edited", "generic": "generic"}
#: The one order in which checklist rows are locked (every lock of this module and of the TIG audit takes
#: them in it): two transactions locking rows of one slot then wait on the same first row, never on each
#: other's (a deadlock on PostgreSQL).
LOCK_ORDER = ("task_id", "dimension", "context_key", "slot", "version")


def task_brief_of(task: Task) -> TaskBrief:
    return TaskBrief(
        task_id=task.external_id, family=task.family, brief=task.brief,
        constraints=task.constraints or {}, subtype=task.subtype,
    )


def _rows_from(checklist: Checklist, task: Task, dimension: str, context_key: str, provenance: dict) -> list[ChecklistItem]:
    return [
        ChecklistItem(
            task=task, dimension=dimension, slot=item.index, context_key=context_key, text=item.text,
            inspects=item.inspects.value, source=SOURCE_FROM_ENGINE.get(item.source, "template"),
            version=1, active=True, provenance={**provenance, "slot_name": item.slot},
        )
        for item in checklist.items
    ]


@transaction.atomic
def checklist_items_ensure(
    *, task: Task, dimension: str, context_key: str = "", generated: Checklist | None = None
) -> list[ChecklistItem]:
    """The active items for (task, dimension, context); a slot without an active item is filled
    from ``generated`` or the templates, as the next version of that slot."""
    return _items_ensure(task, {dimension: generated}, context_key)[dimension]


@transaction.atomic
def checklist_items_ensure_many(*, task: Task, dimensions: Sequence[str]) -> dict[str, list[ChecklistItem]]:
    """:func:`checklist_items_ensure` of several dimensions of ``task`` from the templates, in one transaction
    (its locks, its read and its insert made once for all of them): dimension -> its active items."""
    return _items_ensure(task, dict.fromkeys(dimensions), "")


def _items_ensure(task: Task, generated: dict[str, Checklist | None], context_key: str) -> dict[str, list[ChecklistItem]]:
    # Race prevented: a slot revised while we wait (checklist_item_revise holds its versions) looking empty.
    # The statement that waits for a lock is handed the locked rows as committed, but not the version the
    # reviser made (not in its snapshot): it read the old version inactive and made the same version again
    # (the uniqueness constraint refused it). The rows are locked first, in LOCK_ORDER, then read in a new
    # statement, which sees every version committed while we waited (READ COMMITTED), as the reviser does.
    rows = ChecklistItem.objects.filter(task=task, dimension__in=list(generated), context_key=context_key)
    list(rows.select_for_update().order_by(*LOCK_ORDER).values_list("pk"))
    existing = list(rows.order_by(*LOCK_ORDER))
    kept: dict[str, list[ChecklistItem]] = {}
    new_rows: dict[str, list[ChecklistItem]] = {}
    for dimension, given in generated.items():
        mine = [row for row in existing if row.dimension == dimension]
        kept[dimension] = [row for row in mine if row.active]
        active = {row.slot for row in kept[dimension]}
        if len(active) >= 3:  # nothing to add: the rows just read are the answer
            continue
        checklist = given or template_checklist(task_brief_of(task), ENGINE_DIMENSION[dimension])
        provenance = {"model": checklist.model, "engine_version": checklist.version, "repaired": checklist.repaired}
        latest: dict[int, int] = {}
        for row in mine:
            latest[row.slot] = max(latest.get(row.slot, 0), row.version)
        new_rows[dimension] = [
            row for row in _rows_from(checklist, task, dimension, context_key, provenance) if row.slot not in active
        ]
        for row in new_rows[dimension]:
            row.version = latest.get(row.slot, 0) + 1
    created = _items_insert([row for made in new_rows.values() for row in made])
    if all(row.pk is not None for row in created):  # the database returned the new ids: no re-read
        return {dimension: sorted([*kept[dimension], *new_rows.get(dimension, [])], key=lambda row: row.slot)
                for dimension in generated}
    return {
        dimension: list(ChecklistItem.objects.filter(
            task=task, dimension=dimension, context_key=context_key, active=True).order_by("slot"))
        for dimension in generated
    }


#: The columns of a new item that are its own (the creation time is shared by one insert's rows).
_ITEM_COLUMNS = ("task_id", "dimension", "slot", "context_key", "text", "inspects", "source", "version", "active",
                 "provenance")


def _items_insert(rows: list[ChecklistItem]) -> list[ChecklistItem]:
    """Store new items of one (task, context) — one row per (dimension, slot) — and give each its id and
    creation time, as ``bulk_create`` does. On PostgreSQL one statement fed one JSON document
    (:mod:`leaderboard.json_recordset`): ``bulk_create`` compiled its statement anew and had the driver quote
    each column's array element by element in Python, for the nine template items every judge-run chunk
    stores (more CPU than the rest of the chunk's checklist work)."""
    if not rows or connection.vendor != "postgresql":
        return ChecklistItem.objects.bulk_create(rows)
    now = timezone.now()
    sql = recordset_insert_sql(ChecklistItem, shared=("created_at",), per_row=_ITEM_COLUMNS,
                               returning=("id", "dimension", "slot"))
    document = recordset_json(_ITEM_COLUMNS, ([getattr(row, name) for name in _ITEM_COLUMNS]
                                                              for row in rows))
    with connection.cursor() as cursor:
        cursor.execute(sql, [now, document])
        ids = {(dimension, slot): pk for pk, dimension, slot in cursor.fetchall()}
    for row in rows:
        row.pk, row.created_at = ids[(row.dimension, row.slot)], now
        row._state.adding, row._state.db = False, connection.alias
    return rows


def checklist_for_judging(rows: list[ChecklistItem], *, task: Task, dimension: str) -> Checklist:
    """The engine's checklist built from stored rows (what the judge sees)."""
    from engine.checklists import SLOTS

    engine_dimension = ENGINE_DIMENSION[dimension]
    slot_names = SLOTS[engine_dimension]
    items = tuple(
        EngineItem(
            index=row.slot, slot=row.provenance.get("slot_name", slot_names[row.slot - 1]), text=row.text,
            inspects=InspectedField(row.inspects), source=row.source,
        )
        for row in rows
    )
    sources = {row.source for row in rows}
    return Checklist(
        task_id=task.external_id, dimension=engine_dimension, items=items,
        source=sources.pop() if len(sources) == 1 else "mixed",
        version=",".join(f"{row.slot}:v{row.version}" for row in rows),
    )


def checklist_slot_lock(*, item_id: int) -> dict:
    """Lock the slot of checklist item ``item_id`` (every version of it) before anything else of it is
    locked, and return the slot's key (task, dimension, slot, context). The slot's lowest version — which
    every slot keeps: versions are added, never removed — is the slot's lock: every writer of a slot's
    versions (:func:`checklist_item_revise`, the TIG audit) takes it first, so writers of one slot queue on
    it in one order, whichever version each was given. Inside a transaction."""
    slot = ChecklistItem.objects.filter(pk=item_id).values("task_id", "dimension", "slot", "context_key").get()
    list(ChecklistItem.objects.select_for_update().filter(**slot).order_by(*LOCK_ORDER).values_list("pk")[:1])
    return slot


@transaction.atomic
def checklist_item_revise(*, item: ChecklistItem, text: str, source: str = ChecklistItem.Source.EDITED,
                          note: str = "") -> ChecklistItem:
    """Store a new version of ``item`` with ``text``, the slot's active one from now on (admin edits, audit
    revisions). ``item`` may be a superseded version (an old version's page, an admin form sent twice): the
    new version supersedes whichever is active; a slot whose active version already reads ``text`` is kept."""
    # Race prevented: two revisions of one slot (a form sent twice, an edit and an audit, two audits of
    # different versions) each making an active version, or deadlocking: the slot is locked first
    # (checklist_slot_lock), then its versions are read — in a new statement, which sees a version another
    # reviser committed while we waited (READ COMMITTED) — and locked in LOCK_ORDER.
    slot = checklist_slot_lock(item_id=item.pk)
    versions = list(ChecklistItem.objects.select_for_update().filter(**slot).order_by(*LOCK_ORDER))[::-1]
    current = next(v for v in versions if v.pk == item.pk)
    active = [v for v in versions if v.active]
    for kept in [*active, current]:
        if kept.text == text.strip():
            return kept
    ChecklistItem.objects.filter(pk__in=[v.pk for v in active]).update(active=False)
    return ChecklistItem.objects.create(
        **slot, text=text.strip(), inspects=current.inspects, source=source, version=versions[0].version + 1,
        active=True, provenance={**current.provenance, "revised_from": current.pk, "note": note},
    )


@transaction.atomic
def checklist_item_exclude(*, item: ChecklistItem, note: str = "") -> None:
    """Deactivate an item (e.g. excluded by an audit): later runs fall back to the slot's template wording."""
    ChecklistItem.objects.filter(pk=item.pk).update(active=False, provenance={**item.provenance, "excluded": note or True})
