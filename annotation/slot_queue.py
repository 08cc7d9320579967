"""The free-slot queue (issue 16): which of a campaign's slots no live assignment holds.

``ItemSlot.is_free`` is kept by the services in the transaction that takes or frees a slot; a partial
index on the free slots of each campaign (``itemslot_free_queue``, ordered by item position) makes the
next free slot an index lookup, whatever the size of this campaign or of the others.

Who may flip the flag, and why it stays true to the assignments:

* taking (:func:`slot_taken`): the taker holds the slot's row lock (``FOR UPDATE SKIP LOCKED``) from
  the moment it finds the slot until it commits the new assignment, so nobody else can take it meanwhile
  (a concurrent finder skips the locked row, and once committed PostgreSQL re-checks ``is_free`` on the
  new row version and skips it too);
* freeing (:func:`slots_freed`): only for slots whose live assignment *this* transaction has just ended
  (active → expired / skipped / stale, submitted → stale) with an update conditioned on the live
  status: a slot holds at most one live assignment (the partial unique index on Assignment), so once
  ours has ended no other can be live on it, and none can be inserted before we commit (the unique
  check waits for us);
* withholding (:mod:`annotation.blinding_recheck`): an item whose text names a model is taken out of the
  queue for good. Its free slots are cleared although no live assignment holds them, skipping any a
  concurrent taker holds (that taker finds the item withheld and keeps the slot taken); a withheld item's
  slot that is ever freed again is kept by the next taker the same way.

The partial unique index ``assignment_one_live_per_slot`` stays the backstop: should a flag ever be
wrong (a row written around the services), the taker's INSERT fails, :func:`slot_flag_repair` sets the
flag from the assignments, and the caller retries.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple

from django.db import connection
from django.db.models import Exists, OuterRef

from annotation.models import Assignment, Item, ItemSlot
from evalsite.precompiled import instance_new, row_by_pk_sql, row_from
from evalsite.prepared_statements import statement_cursor


def next_free_slot(*, campaign_id: int, seen_items) -> ItemSlot | None:
    """The first free slot of the campaign in queue order (item position, item, slot index) whose item
    is not in ``seen_items`` (a queryset of item ids), locked for the caller's transaction."""
    slots = (
        ItemSlot.objects.filter(campaign_id=campaign_id, is_free=True)
        .exclude(item_id__in=seen_items)
        .order_by("position", "item_id", "index")
        .only("pk", "item_id", "index")
    )
    if connection.features.has_select_for_update_skip_locked:
        # Race prevented: two annotators taking the same slot. A slot another transaction is taking
        # is skipped, not waited for, so concurrent annotators fan out over the free slots.
        slots = slots.select_for_update(skip_locked=True)
    return next(iter(slots[:1]), None)


def free_slot_take(*, campaign_id: int, annotator_id: int) -> ItemSlot | None:
    """Find and take (``is_free`` cleared, row locked) the first free slot of the campaign whose item the
    annotator has not been shown (active, submitted or skipped), in queue order; None when there is none.

    On PostgreSQL one statement — ``UPDATE … WHERE id = (SELECT … LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING`` — so that next-item costs one round trip and no ORM query compilation for it; elsewhere
    :func:`next_free_slot` and :func:`slot_taken`."""
    if connection.vendor != "postgresql":
        seen = Assignment.objects.filter(campaign_id=campaign_id, annotator_id=annotator_id,
                                         status__in=Assignment.SEEN).values("item_id")
        slot = next_free_slot(campaign_id=campaign_id, seen_items=seen)
        if slot is not None:
            slot_taken(slot_id=slot.pk)
        return slot
    with statement_cursor(connection) as cursor:
        cursor.execute(
            f"""UPDATE {ItemSlot._meta.db_table} SET is_free = false WHERE id = ({_FIRST_FREE_SLOT_SQL})
                RETURNING id, item_id, index""",
            [campaign_id, campaign_id, annotator_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    return ItemSlot(pk=row[0], item_id=row[1], index=row[2], campaign_id=campaign_id, is_free=False)


def _statuses_sql(statuses) -> str:
    """Statuses written into a statement as literals, not parameters: a prepared statement's generic plan
    (the one PostgreSQL keeps after five executions) can then use the partial indexes whose condition names
    them. With a parameter the generic plan could not prove a partial index's condition, cost more than a
    plan made for the values, and was never kept, so the take was planned anew at every execution (issue
    30). The values are the model's own constants, never a request's."""
    if not all(str(status).isidentifier() for status in statuses):
        raise ValueError(f"not a status: {statuses!r}")
    return ", ".join(f"'{status}'" for status in statuses)


#: The first free slot of a campaign whose item the annotator has not been shown, in queue order, locked
#: (a slot another transaction holds is skipped). PostgreSQL; params: campaign, campaign, annotator.
#: "Not shown" is asked of each slot the queue reads, as ``NOT EXISTS`` on the annotator's assignment of
#: that item: a probe of ``assignment_item_once_per_annotator`` (item, annotator; its condition is the
#: statuses below), whatever the values and the statistics, so the generic plan is the one a plan made for
#: the values would be, and is kept (issue 30). The ``NOT IN`` this replaces read the annotator's every
#: shown assignment into a hash at each take (a hash that grows with their labels), where the queue's first
#: free slot is most often unseen and one probe answers. The two are the same test: neither item key is
#: ever NULL. PostgreSQL's instructions a combined label (``tests/benchmarks/callgrind_label.py run
#: --backend``): 3.597 → 3.476 M.
_FIRST_FREE_SLOT_SQL = f"""
    SELECT s.id FROM {ItemSlot._meta.db_table} s
    WHERE s.campaign_id = %s AND s.is_free AND NOT EXISTS (
        SELECT FROM {Assignment._meta.db_table} a
        WHERE a.item_id = s.item_id AND a.campaign_id = %s AND a.annotator_id = %s
          AND a.status IN ({_statuses_sql(Assignment.SEEN)}))
    ORDER BY s.position, s.item_id, s.index
    LIMIT 1 FOR UPDATE SKIP LOCKED"""


class HeldAssignment(NamedTuple):
    """An annotator's active assignment, as much of it as next-item needs to decide."""

    pk: int
    expires_at: datetime
    slot_id: int | None


def active_or_free_slot_take(*, campaign_id: int, annotator_id: int, item_relations: tuple[str, ...] | None = None,
                             item_unread: tuple[str, ...] = ()) -> tuple[HeldAssignment | None, ItemSlot | None]:
    """The annotator's active assignment in the campaign, if they hold one (then no slot is taken), else
    the slot :func:`free_slot_take` takes (None when none is left): what next-item asks first.

    Asked after the caller locked the annotator's membership, in a new statement, so an assignment the
    annotator's other request committed meanwhile is seen (READ COMMITTED). On PostgreSQL one statement:
    the held assignment and the take share its snapshot, and the take runs only when there is none (a
    one-time filter of the plan, so no slot is even locked then). With ``item_relations`` (PostgreSQL) the
    same statement reads the taken slot's item with those relations, as
    :func:`annotation.request_facts.item_with_content` reads it (``item_unread`` left out), and attaches it to
    the slot (``slot.item``):
    next-item's usual case is then one round trip where it was two."""
    if connection.vendor != "postgresql":
        held = next(iter(Assignment.objects.filter(campaign_id=campaign_id, annotator_id=annotator_id,
                                                   status=Assignment.Status.ACTIVE)
                         .values_list("pk", "expires_at", "slot_id")[:1]), None)
        if held is not None:
            return HeldAssignment(*held), None
        return None, free_slot_take(campaign_id=campaign_id, annotator_id=annotator_id)
    with statement_cursor(connection) as cursor:
        cursor.execute(_held_or_take_sql(item_relations, item_unread),
                       [campaign_id, annotator_id, campaign_id, campaign_id, annotator_id])
        row = cursor.fetchone()
    held_id, expires_at, held_slot, slot_id, item_id, index = row[:6]
    if held_id is not None:
        return HeldAssignment(held_id, expires_at, held_slot), None
    if slot_id is None:
        return None, None
    slot = instance_new(ItemSlot, pk=slot_id, item_id=item_id, index=index, campaign_id=campaign_id, is_free=False)
    item = None if item_relations is None else row_from(Item, row[6:], relations=item_relations, deferred=item_unread)
    if item is not None:
        slot.item = item
    return None, slot


@functools.cache
def _held_or_take_sql(item_relations: tuple[str, ...] | None, item_unread: tuple[str, ...] = ()) -> str:
    """:func:`active_or_free_slot_take`'s statement (PostgreSQL), with the taken slot's item when asked."""
    slots, assignments = ItemSlot._meta.db_table, Assignment._meta.db_table
    item_sql = "" if item_relations is None else (
        f" LEFT JOIN LATERAL ({row_by_pk_sql(Item, 'taken.item_id', relations=item_relations, deferred=item_unread)[0]}) AS item ON true")
    return f"""WITH held AS (
                    SELECT id, expires_at, slot_id FROM {assignments}
                    WHERE campaign_id = %s AND annotator_id = %s
                      AND status = {_statuses_sql([Assignment.Status.ACTIVE])} LIMIT 1),
                taken AS (
                    UPDATE {slots} SET is_free = false
                    WHERE NOT EXISTS (SELECT 1 FROM held) AND id = ({_FIRST_FREE_SLOT_SQL})
                    RETURNING id, item_id, index)
                SELECT held.id, held.expires_at, held.slot_id, taken.id, taken.item_id, taken.index
                       {", item.*" if item_relations is not None else ""}
                FROM (SELECT 1) AS one LEFT JOIN held ON true LEFT JOIN taken ON true{item_sql}"""


def slot_taken(*, slot_id: int) -> None:
    """The slot now has a live assignment (the caller holds the slot's row lock)."""
    ItemSlot.objects.filter(pk=slot_id).update(is_free=False)


def slots_freed(*, slot_ids: Iterable[int | None]) -> None:
    """These slots' live assignments were ended by the caller's transaction (see the module docstring)."""
    ids = [pk for pk in slot_ids if pk is not None]
    if ids:
        ItemSlot.objects.filter(pk__in=ids).update(is_free=True)


def slot_flag_repair(*, slot_id: int) -> None:
    """Set the slot's flag from its assignments (after an INSERT lost to the unique index)."""
    live = Assignment.objects.filter(slot=OuterRef("pk"), status__in=Assignment.LIVE)
    ItemSlot.objects.filter(pk=slot_id).update(is_free=~Exists(live))
