"""Many rows in one PostgreSQL statement as one JSON document (leaderboard/json_recordset.py)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from leaderboard.ekphrasis.models import ChecklistItem
from leaderboard.json_recordset import recordset_insert_sql, recordset_json
from tests.factories import TaskFactory

pytestmark = pytest.mark.django_db

SHARED = ("task_id", "dimension", "slot", "inspects", "source", "version", "created_at")
PER_ROW = ("context_key", "text", "active", "provenance")


@pytest.fixture
def postgres():
    if connection.vendor != "postgresql":
        pytest.skip("json_to_recordset is PostgreSQL's")


def _insert(task, rows, **clauses):
    shared = [task.pk, "N", 1, "core_idea", "tig", 1, timezone.now()]
    with connection.cursor() as cursor:
        cursor.execute(recordset_insert_sql(ChecklistItem, shared=SHARED, per_row=PER_ROW, **clauses),
                       [*shared, recordset_json(ChecklistItem, PER_ROW, rows)])
        return cursor.fetchall() if clauses.get("returning") else None


def test_the_statement_has_one_placeholder_per_shared_value_and_one_for_the_rows():
    sql = recordset_insert_sql(ChecklistItem, shared=SHARED, per_row=PER_ROW)
    assert sql.count("%s") == len(SHARED) + 1
    assert "json_to_recordset(%s::json)" in sql


def test_every_row_is_stored_with_the_shared_values_and_its_own(postgres):
    task = TaskFactory()
    rows = [(f"tig:{k}", f"item {k} \u00e9\u201c\"'\\", k % 2 == 0, {"score": 0.1 * k, "aliases": ["a", "b"]})
            for k in range(5)]
    returned = _insert(task, rows, returning=("id", "context_key"))
    assert sorted(key for _, key in returned) == [key for key, *_ in rows]
    stored = {row.context_key: row for row in ChecklistItem.objects.filter(task=task)}
    for pk, key in returned:
        assert stored[key].pk == pk
    for key, text, active, provenance in rows:
        row = stored[key]
        assert (row.text, row.active, row.provenance) == (text, active, provenance)
        assert (row.dimension, row.slot, row.inspects, row.source, row.version) == ("N", 1, "core_idea", "tig", 1)


def test_a_conflict_clause_is_applied_to_the_rows(postgres):
    task = TaskFactory()
    _insert(task, [("tig:x", "first", True, {})])
    returned = _insert(task, [("tig:x", "again", True, {}), ("tig:y", "new", True, {})],
                       on_conflict="ON CONFLICT DO NOTHING", returning=("context_key",))
    assert returned == [("tig:y",)]
    assert ChecklistItem.objects.get(task=task, context_key="tig:x").text == "first"
