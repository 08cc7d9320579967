"""What the busiest annotator requests (next item, submit, skip) must know before they write, read in the
statement that locks their row (issue 16: one round trip where there were five).

* :func:`next_item_facts` — the campaign, the annotator's membership row (locked: it serialises one
  annotator's requests in one campaign), the gatekeeper's :class:`~annotation.access.AccessFacts`, the
  progress counters, the counts the gold schedule needs when the campaign hands out gold, and the
  catalogue's revision (an item checked against an older one is checked again before it is shown:
  :mod:`annotation.blinding_recheck`);
* :func:`assignment_facts` — the annotator's assignment with a token (locked: a submission, a skip and
  the expiry sweep of one assignment never interleave), its campaign and the AccessFacts;
* :func:`assignment_submit_if_active` — submit's usual case on PostgreSQL: an active, unexpired
  assignment marked submitted in the statement that locks it and reads the facts (the caller's
  transaction rolls it back if anything then refuses the submission, so nothing is half-written).

The facts the gatekeeper checks (role, membership, campaign status) come from the snapshot of the
locking statement. That is no weaker than asking them in a later statement: a revocation (closing the
campaign, removing a membership or a group) takes no lock on the assignment or membership row, so it
is ordered against the request only by its commit, before or after this statement, either way.

On PostgreSQL each read is one SQL statement written here once (no ORM compilation per request); on
other databases (SQLite, which has no row locks: its transactions serialise writers) the same facts are
read through the ORM. The annotator role is the ``annotator`` group, as :func:`leaderboard.roles.is_annotator`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.db.models import Count, Exists, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.access import AccessFacts
from annotation.models import (
    AnnotatorProgress,
    Assignment,
    Campaign,
    CampaignAnnotator,
    CampaignProgress,
    Item,
)
from annotation.panel_models import Participant
from annotation.participant_state import (
    participant_at_quota_filter,
    participant_at_work_filter,
    participant_at_work_sql,
    participant_locked_cte_sql,
    participant_locked_facts_sql,
)
from evalsite.precompiled import instance_from_db, row_by_pk
from evalsite.prepared_statements import statement_cursor
from leaderboard.models import CatalogueRevision
from leaderboard.roles import ANNOTATOR


@dataclass(frozen=True)
class NextItemFacts:
    """``membership_id`` is None when the annotator is not listed on the campaign; ``labels``, ``slots``
    and ``done`` are None when the counter row does not exist yet; ``seen`` and ``seen_gold`` (the
    annotator's shown assignments, and how many of them were gold) are 0 when the campaign has no gold;
    ``catalogue_revision`` is the catalogue's (:class:`leaderboard.models.CatalogueRevision`, 0 without a row).
    ``seen`` and ``seen_gold`` are None when they were not read (PostgreSQL, a campaign that had no gold when
    this process last read its facts): then whoever needs them counts them."""

    campaign: Campaign
    membership_id: int | None
    access: AccessFacts
    labels: int | None
    slots: int | None
    done: int | None
    seen: int | None
    seen_gold: int | None
    catalogue_revision: int = 0


def _columns(model, alias: str) -> str:
    return ", ".join(f'{alias}."{field.column}"' for field in model._meta.concrete_fields)


@functools.cache
def _columns_of(model) -> tuple[list[str], tuple]:
    """The model's concrete fields' attribute names, and the (position, field) of those that convert a database
    value (``from_db_value``: the JSON fields), found once per model rather than asked of every field of every
    row (each field without one was an AttributeError raised and swallowed, ~50 a combined label)."""
    fields = model._meta.concrete_fields
    return ([field.attname for field in fields],
            tuple((i, field) for i, field in enumerate(fields) if hasattr(field, "from_db_value")))


def _instance(model, values):
    """A model instance from its concrete columns as the database returned them (JSON decoded)."""
    attnames, converting = _columns_of(model)
    values = list(values)
    for i, field in converting:
        values[i] = field.from_db_value(values[i], None, connection)
    return instance_from_db(model, connection.alias, attnames, values)


def _is_annotator_sql(user_column: str) -> str:
    groups = get_user_model().groups.through._meta.db_table
    return (f"EXISTS (SELECT 1 FROM {groups} ug JOIN {Group._meta.db_table} g ON g.id = ug.group_id "
            f"WHERE ug.user_id = {user_column} AND g.name = %s)")


def _is_annotator_orm(user_id: int) -> Exists:
    return Exists(get_user_model().groups.through.objects.filter(user_id=user_id, group__name=ANNOTATOR))


def _participant_at_work_orm(user_id: int, campaign: str = "pk") -> Exists:
    return Exists(Participant.objects.filter(participant_at_work_filter(now=timezone.now()), user_id=user_id,
                                             campaign_id=OuterRef(campaign)))


def _participant_at_quota_orm(user_id: int, done: Subquery) -> Exists:
    return Exists(Participant.objects.filter(participant_at_work_filter(now=timezone.now()), user_id=user_id,
                                             campaign_id=OuterRef("pk"))
                  .filter(participant_at_quota_filter(done=Coalesce(done, Value(0)))))


# ---------------------------------------------------------------------------------------------------
# Next item
# ---------------------------------------------------------------------------------------------------


@functools.cache
def _next_item_sql(gold: bool = True) -> str:
    """The next-item facts statement; without ``gold`` it leaves out the two counts the gold schedule needs
    (each a subplan PostgreSQL sets up at every execution, read or not: 1.3 % of a combined label's backend
    instructions in a campaign without gold, issue 30)."""
    assignments = Assignment._meta.db_table
    seen = (f"SELECT count(*) FROM {assignments} s WHERE s.campaign_id = c.id AND s.annotator_id = m.annotator_id "
            f"AND s.status = ANY(%s)")
    counts = (f"""CASE WHEN c.gold_rate > 0 THEN ({seen}) ELSE 0 END,
               CASE WHEN c.gold_rate > 0 THEN ({seen} AND s.slot_id IS NULL) ELSE 0 END,""" if gold else "")
    # The participant's row is locked (and so read as last committed) in the same statement: a return or
    # a verdict that committed while this statement waited is seen (participants._held_release).
    return f"""
        WITH {participant_locked_cte_sql()}
        SELECT {_columns(Campaign, "c")}, m.id, {_is_annotator_sql("m.annotator_id")},
               {participant_locked_facts_sql(done_column="ap.done")},
               cp.labels, cp.slots, ap.done,
               {counts}
               (SELECT r.number FROM {CatalogueRevision._meta.db_table} r WHERE r.id = 1)
        FROM {CampaignAnnotator._meta.db_table} m
        JOIN {Campaign._meta.db_table} c ON c.id = m.campaign_id
        LEFT JOIN {CampaignProgress._meta.db_table} cp ON cp.campaign_id = c.id
        LEFT JOIN {AnnotatorProgress._meta.db_table} ap ON ap.campaign_id = c.id AND ap.annotator_id = m.annotator_id
        WHERE m.campaign_id = %s AND m.annotator_id = %s
        FOR UPDATE OF m"""


#: Whether each campaign this process read the facts of last had gold (``gold_rate > 0``): the next request
#: then asks for the gold counts only when it had. A campaign not listed (or changed since) is read with
#: them; one read without them that has gold now gets them counted by the caller (``seen`` is None). So the
#: memo only decides which statement is sent, never what a request is told. Bounded: cleared when full.
_CAMPAIGN_HAD_GOLD: dict[int, bool] = {}
_CAMPAIGN_MEMO_MAX = 10_000


def next_item_facts(*, campaign_id: int, annotator_id: int) -> NextItemFacts | None:
    """The facts of one next-item request, the membership row locked; None when there is no such
    campaign, or (PostgreSQL) when the annotator is not listed on it."""
    if connection.vendor == "postgresql":
        # Race prevented (the lock): two requests of the same annotator (double click, retried request)
        # each taking a different item. The second waits here until the first has committed.
        gold = _CAMPAIGN_HAD_GOLD.get(campaign_id, True)
        seen = [list(Assignment.SEEN)] * 2 if gold else []
        with statement_cursor(connection) as cursor:
            cursor.execute(_next_item_sql(gold), [annotator_id, campaign_id, ANNOTATOR, *seen, campaign_id, annotator_id])
            row = cursor.fetchone()
        if row is None:
            return None
        n = len(Campaign._meta.concrete_fields)
        membership_id, is_annotator, is_participant, at_quota, labels, slots, done, *counts, revision = row[n:]
        seen_total, seen_gold = counts if gold else (None, None)
        campaign = _instance(Campaign, row[:n])
        if len(_CAMPAIGN_HAD_GOLD) >= _CAMPAIGN_MEMO_MAX:
            _CAMPAIGN_HAD_GOLD.clear()
        _CAMPAIGN_HAD_GOLD[campaign_id] = campaign.gold_rate > 0
        return NextItemFacts(campaign, membership_id,
                             AccessFacts(is_annotator, True, bool(is_participant), bool(at_quota)),
                             labels, slots, done, seen_total, seen_gold, revision or 0)
    mine = Assignment.objects.filter(campaign_id=OuterRef("pk"), annotator_id=annotator_id, status__in=Assignment.SEEN)
    counted = mine.order_by().values("campaign_id").annotate(n=Count("pk")).values("n")
    counted_gold = mine.filter(slot__isnull=True).order_by().values("campaign_id").annotate(n=Count("pk")).values("n")
    membership = CampaignAnnotator.objects.filter(campaign_id=OuterRef("pk"), annotator_id=annotator_id)
    done = Subquery(AnnotatorProgress.objects.filter(campaign_id=OuterRef("campaign_id"), annotator_id=annotator_id)
                    .values("done")[:1])  # inside the Participant subquery: its campaign
    campaign = next(iter(
        Campaign.objects.filter(pk=campaign_id).annotate(
            membership_id=Subquery(membership.values("pk")[:1]),
            is_annotator=_is_annotator_orm(annotator_id),
            is_participant=_participant_at_work_orm(annotator_id),
            at_quota=_participant_at_quota_orm(annotator_id, done),
            done=Subquery(AnnotatorProgress.objects.filter(campaign_id=OuterRef("pk"), annotator_id=annotator_id)
                          .values("done")[:1]),
            seen=Coalesce(Subquery(counted, output_field=IntegerField()), Value(0)),
            seen_gold=Coalesce(Subquery(counted_gold, output_field=IntegerField()), Value(0)),
            catalogue_revision=Subquery(CatalogueRevision.objects.filter(pk=1).values("number")[:1]),
        ).select_related("progress")
    ), None)
    if campaign is None:
        return None
    progress = getattr(campaign, "progress", None)
    return NextItemFacts(
        campaign, campaign.membership_id,
        AccessFacts(campaign.is_annotator, campaign.membership_id is not None, campaign.is_participant,
                    campaign.at_quota),
        progress.labels if progress else None, progress.slots if progress else None, campaign.done,
        campaign.seen, campaign.seen_gold, campaign.catalogue_revision or 0,
    )


def item_with_content(*, item_id: int, relations: tuple[str, ...], unread: tuple[str, ...] = ()) -> Item:
    """The item with ``relations`` (the relations its kind shows), as
    ``Item.objects.select_related(*relations).defer(*unread).get(pk=item_id)`` returns it, compiled once per kind."""
    return row_by_pk(Item, item_id, relations=relations, deferred=unread)


# ---------------------------------------------------------------------------------------------------
# Submit and skip
# ---------------------------------------------------------------------------------------------------


def _assignment_facts_columns() -> str:
    """The assignment, its campaign, is-annotator (one %s: the group name), is-member and is-participant."""
    return f"""{_columns(Assignment, "a")}, {_columns(Campaign, "c")}, {_is_annotator_sql("a.annotator_id")},
        EXISTS (SELECT 1 FROM {CampaignAnnotator._meta.db_table} m
                WHERE m.campaign_id = a.campaign_id AND m.annotator_id = a.annotator_id),
        {participant_at_work_sql(user_column="a.annotator_id", campaign_column="a.campaign_id")}"""


def _assignment_row(row) -> tuple[Assignment, AccessFacts]:
    n = len(Assignment._meta.concrete_fields)
    m = n + len(Campaign._meta.concrete_fields)
    assignment = _instance(Assignment, row[:n])
    assignment.campaign = _instance(Campaign, row[n:m])
    return assignment, AccessFacts(*row[m:])


def assignment_facts(*, token: str, annotator_id: int) -> tuple[Assignment, AccessFacts] | None:
    """The annotator's assignment with this token (its campaign attached), locked, and the AccessFacts;
    None when the annotator has no assignment with this token."""
    if connection.vendor == "postgresql":
        with statement_cursor(connection) as cursor:
            cursor.execute(_assignment_select_sql(), [ANNOTATOR, token, annotator_id])
            row = cursor.fetchone()
        return None if row is None else _assignment_row(row)
    membership = CampaignAnnotator.objects.filter(campaign_id=OuterRef("campaign_id"), annotator_id=annotator_id)
    assignment = next(iter(
        Assignment.objects.filter(token=token, annotator_id=annotator_id).select_related("campaign")
        .annotate(is_annotator=_is_annotator_orm(annotator_id), is_member=Exists(membership),
                  is_participant=_participant_at_work_orm(annotator_id, campaign="campaign_id"))[:1]
    ), None)
    if assignment is None:
        return None
    return assignment, AccessFacts(assignment.is_annotator, assignment.is_member, assignment.is_participant)


def assignment_submit_if_active(*, token: str, annotator_id: int, now: datetime) -> tuple[Assignment, AccessFacts] | None:
    """PostgreSQL: mark the annotator's assignment with this token submitted (``finished_at`` = now) if it
    is active and not overdue, in the statement that locks it and reads its campaign and the AccessFacts;
    None (and nothing written) otherwise, or on other databases. The caller's transaction must roll it
    back if anything then refuses the submission."""
    if connection.vendor != "postgresql":
        return None
    with statement_cursor(connection) as cursor:
        cursor.execute(_submit_if_active_sql(), [Assignment.Status.SUBMITTED, now, token, annotator_id,
                                               Assignment.Status.ACTIVE, now, ANNOTATOR])
        row = cursor.fetchone()
    return None if row is None else _assignment_row(row)


@functools.cache
def _assignment_select_sql() -> str:
    return f"""
        SELECT {_assignment_facts_columns()}
        FROM {Assignment._meta.db_table} a JOIN {Campaign._meta.db_table} c ON c.id = a.campaign_id
        WHERE a.token = %s AND a.annotator_id = %s
        FOR UPDATE OF a"""


@functools.cache
def _submit_if_active_sql() -> str:
    return f"""
        UPDATE {Assignment._meta.db_table} a SET status = %s, finished_at = %s
        FROM {Campaign._meta.db_table} c
        WHERE c.id = a.campaign_id AND a.token = %s AND a.annotator_id = %s AND a.status = %s AND a.expires_at > %s
        RETURNING {_assignment_facts_columns()}"""


__all__ = ["NextItemFacts", "assignment_facts", "assignment_submit_if_active", "item_with_content", "next_item_facts"]
