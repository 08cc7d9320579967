"""The indexes every label writes (issue 30): the tables a hand-out and a submission write carry no
index another index already serves, and what the dropped ones served still has an index (PostgreSQL),
while every constraint that guards an invariant still refuses."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from annotation.label_models import Label
from annotation.models import Assignment, ItemSlot
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators

pytestmark = pytest.mark.django_db

#: The tables each label writes: an assignment inserted and updated, a slot updated, a label inserted.
WRITTEN = [Assignment, ItemSlot, *(model for model in Label.__subclasses__())]

postgresql_only = pytest.mark.skipif("connection.vendor != 'postgresql'")


def _indexes(model) -> dict[str, tuple[list[str], bool, bool, list[str]]]:
    """Index name -> (columns, unique, partial, operator classes), from PostgreSQL's catalogue."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT i.relname,
                      ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(attnum, n)
                            JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum ORDER BY k.n),
                      x.indisunique, x.indpred IS NOT NULL,
                      ARRAY(SELECT o.opcname FROM unnest(x.indclass) WITH ORDINALITY c(oid, n)
                            JOIN pg_opclass o ON o.oid = c.oid ORDER BY c.n)
               FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
               WHERE x.indrelid = %s::regclass""",
            [model._meta.db_table],
        )
        return {name: (list(columns), unique, partial, list(classes))
                for name, columns, unique, partial, classes in cursor.fetchall()}


@postgresql_only
@pytest.mark.parametrize("model", WRITTEN, ids=lambda model: model.__name__)
def test_no_written_table_keeps_an_index_that_another_index_leads_with(model):
    """A plain index whose columns begin another full index serves no lookup the other does not, and is
    one more index written at every insert and non-HOT update of the row."""
    indexes = _indexes(model)
    redundant = [
        (name, other) for name, (columns, unique, partial, _) in indexes.items() if not unique and not partial
        for other, (longer, _, other_partial, _) in indexes.items()
        if other != name and not other_partial and len(longer) > len(columns) and longer[:len(columns)] == columns
    ]
    assert redundant == []


@postgresql_only
def test_the_token_has_one_index_for_equality_and_none_for_patterns():
    """The token is only looked up by equality; a ``*_pattern_ops`` index (what ``unique=True`` on a
    CharField adds on PostgreSQL) would serve only ``LIKE`` and is written at every hand-out and submission."""
    on_token = [(unique, classes) for columns, unique, _, classes in _indexes(Assignment).values()
                if columns == ["token"]]
    assert on_token == [(True, ["text_ops"])]


@postgresql_only
@pytest.mark.parametrize("model, column", [(Assignment, "annotator_id"), (Assignment, "campaign_id"),
                                           (ItemSlot, "item_id"), *((model, "item_id") for model in Label.__subclasses__())])
def test_a_lookup_by_a_key_that_lost_its_own_index_still_has_an_index(model, column):
    """What the dropped indexes served (the cascades on deleting a user, campaign or item, a campaign's or
    annotator's rows) is served by the index that leads with the same key: with sequential scans priced
    out, the plan is not one."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN SELECT id FROM {model._meta.db_table} WHERE {column} = 1")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Seq Scan" not in plan, plan


@postgresql_only
@pytest.mark.parametrize("in_campaign", ["", " AND campaign_id = 1"], ids=["every campaign", "one campaign"])
def test_the_expiry_sweep_reads_the_active_assignments_through_an_index(in_campaign):
    """The sweep's own index is gone (migration 0021): the partial index of the active assignments serves
    its lookup, across campaigns (the periodic task) and in one (next-item when no slot is free)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN SELECT id, slot_id FROM {Assignment._meta.db_table} "
                       f"WHERE status = 'active' AND expires_at <= now(){in_campaign} FOR UPDATE SKIP LOCKED")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Seq Scan" not in plan, plan
    if not in_campaign:  # not a walk over a whole index of the table either
        assert "assignment_one_active_per_annotator" in plan, plan


def test_two_assignments_cannot_share_a_token():
    (alice,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=[alice])
    from annotation import services

    first = services.assignment_next(campaign=campaign, annotator=alice)
    twin = Assignment.objects.get(pk=first.pk)
    twin.pk, twin.status, twin.slot_id = None, Assignment.Status.EXPIRED, None
    with pytest.raises(IntegrityError), transaction.atomic():
        twin.save()
    twin.token = first.token + "x"
    twin.save()  # the same row under another token is taken: the token is what was refused
