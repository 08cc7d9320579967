"""Many rows in one PostgreSQL statement as one JSON document (leaderboard/json_recordset.py)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from leaderboard.ekphrasis.models import ChecklistItem
from leaderboard.json_recordset import recordset_insert_sql, recordset_json, row_keys
from tests.factories import TaskFactory

pytestmark = pytest.mark.django_db

SHARED = ("task_id", "dimension", "slot", "inspects", "source", "version", "created_at")
PER_ROW = ("context_key", "text", "active", "provenance")


@pytest.fixture
def postgres():
    if connection.vendor != "postgresql":
        pytest.skip("jsonb_to_recordset is PostgreSQL's")


def _insert(task, rows, **clauses):
    shared = [task.pk, "N", 1, "core_idea", "tig", 1, timezone.now()]
    with connection.cursor() as cursor:
        cursor.execute(recordset_insert_sql(ChecklistItem, shared=SHARED, per_row=PER_ROW, **clauses),
                       [*shared, recordset_json(PER_ROW, rows)])
        return cursor.fetchall() if clauses.get("returning") else None


def test_the_statement_has_one_placeholder_per_shared_value_and_one_for_the_rows():
    sql = recordset_insert_sql(ChecklistItem, shared=SHARED, per_row=PER_ROW)
    assert sql.count("%s") == len(SHARED) + 1
    assert "jsonb_to_recordset(%s::jsonb)" in sql


def test_a_float_column_is_not_carried_in_a_document():
    """A float would pass through ``numeric`` in the ``jsonb`` document, which has no negative zero."""
    from leaderboard.ekphrasis.models import Comparison

    with pytest.raises(ValueError, match="confidence"):
        recordset_insert_sql(Comparison, shared=("run_id",), per_row=("id", "confidence"))


#: Each column type the documents carry, with values at their edges; read through the old form
#: (``json_to_recordset``) and the new (``jsonb_to_recordset``).
EQUIVALENCE_RECORD = ("i integer, b bigint, s smallint, t text, v varchar(100), f boolean, j jsonb, "
                      "c timestamp with time zone")


def test_the_jsonb_document_gives_every_column_the_value_the_json_document_gave(postgres):
    """Equivalence with the json form the statements used before: every column type the documents carry
    (integers, text, booleans, jsonb, timestamps) with edge values, nulls and keys left out, read back as
    the same values and the same text."""
    import json

    values = {"i": [0, -1, 2**31 - 1, -(2**31), None], "b": [2**63 - 1, -(2**63), 0, None, 7],
              "s": [32767, -32768, 0, None, 1], "t": [*AWKWARD[:5]], "v": ["primary", "", None, "x" * 100, "té"],
              "f": [True, False, None, True, False],
              "j": [{"a": [1, 2.5, None, "—"], "b": {}}, [], None, "text", [0.1 + 0.2, 1e-7, 1e300, -0.0, 12345678901234567890]],
              "c": ["2026-12-07T13:41:39.123456+00:00", "2026-01-01T00:00:00", None, "2026-06-30T23:59:59.999999-05:30",
                    "1999-12-31T23:59:59+00:00"]}
    rows = [{key: column[n] for key, column in values.items() if not (n == 4 and key == "t")} for n in range(5)]
    document = json.dumps(rows, separators=(",", ":"))
    columns = "r.i, r.b, r.s, r.t, r.v, r.f, r.j, r.j::text, r.c, r.c::text"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM json_to_recordset(%s::json) AS r({EQUIVALENCE_RECORD})", [document])
        from_json = cursor.fetchall()
        cursor.execute(f"SELECT {columns} FROM jsonb_to_recordset(%s::jsonb) AS r({EQUIVALENCE_RECORD})", [document])
        from_jsonb = cursor.fetchall()
    assert len(from_jsonb) == 5 and from_jsonb == from_json
    assert from_jsonb[4][3] is None  # a key left out reads as NULL, as before


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


#: Strings the document must carry unchanged: non-ASCII (an em dash, as checklist items quote), quotes, a
#: backslash, the controls (escaped whatever the encoder), the line and paragraph separators, an astral character.
AWKWARD = ["an em dash \u2014 in \u201cquotes\u201d", "caf\u00e9 \"q\" 'a' \\ back", "tab\tline\nret\r\x01\x1f",
           "sep\u2028par\u2029", "astral \U0001F3A8", "", " padded "]


def test_a_document_is_written_compact():
    """Why the encoder: no space after the separators (the server's parser and lexer read every byte)."""
    document = recordset_json(PER_ROW, [("k", AWKWARD[0], True, {"a": [1, 2]})])
    assert document == '[{"a":"k","b":"an em dash \\u2014 in \\u201cquotes\\u201d","c":true,"d":{"a":[1,2]}}]'


def test_a_documents_rows_are_keyed_by_position():
    """One letter a value (``a`` the first), the statement's record naming them in the same order."""
    assert row_keys(PER_ROW) == "abcd"
    sql = recordset_insert_sql(ChecklistItem, shared=SHARED, per_row=PER_ROW)
    assert "SELECT %s, %s, %s, %s, %s, %s, %s, r.a, r.b, r.c, r.d FROM" in sql
    record = sql.split(" AS r(")[1].removesuffix(")").split(", ")  # "a varchar(100)" on PostgreSQL, ...
    assert [column.split()[0] for column in record] == ["a", "b", "c", "d"]
    with pytest.raises(ValueError):
        row_keys([f"column{n}" for n in range(27)])


def test_rows_keyed_by_position_are_stored_as_rows_keyed_by_column_were(postgres):
    """Equivalence with the former statement, whose document keyed each value by its column's name: the
    same rows stored, every column but the id compared."""
    import json

    task = TaskFactory()
    rows = [(f"tig:{n}", text, n % 2 == 0, {"text": text, "list": [text, None, 0.5, n], "n": {"k": [n]}})
            for n, text in enumerate(AWKWARD)]
    now = timezone.now()
    shared = [task.pk, "N", 1, "core_idea", "tig", 1, now]
    _insert(task, rows)
    columns = [ChecklistItem._meta.get_field(name).column for name in PER_ROW]
    by_column = json.dumps([dict(zip(columns, (f"old:{key}", *rest), strict=True)) for key, *rest in rows])
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO leaderboard_checklistitem (task_id, dimension, slot, inspects, source, version, created_at, "
            "context_key, text, active, provenance) SELECT %s, %s, %s, %s, %s, %s, %s, r.context_key, r.text, "
            "r.active, r.provenance FROM jsonb_to_recordset(%s::jsonb) AS r(context_key varchar(100), text text, "
            "active boolean, provenance jsonb)", [*shared, by_column])
        cursor.execute("SELECT context_key, text, active, provenance::text, dimension, slot, inspects, source, "
                       "version FROM leaderboard_checklistitem WHERE task_id = %s", [task.pk])
        stored = cursor.fetchall()
    new = sorted(row[1:] for row in stored if row[0].startswith("tig:"))
    old = sorted(row[1:] for row in stored if row[0].startswith("old:"))
    assert len(new) == len(AWKWARD) and new == old


def test_a_documents_values_are_those_of_the_default_encoding():
    """Equivalence with ``json.dumps``' default form, as Python reads them back."""
    import json

    rows = [(f"k{n}", text, n % 2 == 0, {"text": text, "list": [text, None, 0.1 * n, n], "nested": {"x": [text]}})
            for n, text in enumerate(AWKWARD)]
    old = json.dumps([dict(zip("abcd", row, strict=True)) for row in rows])
    assert json.loads(recordset_json(PER_ROW, rows)) == json.loads(old)


def test_the_server_reads_the_same_values_from_both_encodings(postgres):
    """Equivalence on PostgreSQL: each value, as ``jsonb`` and as text, is the same read from the compact
    unescaped document as from ``json.dumps``' default form."""
    import json

    rows = [(f"k{n}", text, True, {"text": text, "list": [text, None, 0.5, n]}) for n, text in enumerate(AWKWARD)]
    old = json.dumps([dict(zip("abcd", row, strict=True)) for row in rows])
    new = recordset_json(PER_ROW, rows)
    assert len(new) < len(old)
    read = "SELECT r.b, r.d::text, r.d FROM jsonb_to_recordset(%s::jsonb) AS r(b text, d jsonb) ORDER BY r.b"
    with connection.cursor() as cursor:
        cursor.execute(read, [old])
        from_old = cursor.fetchall()
        cursor.execute(read, [new])
        from_new = cursor.fetchall()
        cursor.execute("SELECT %s::jsonb = %s::jsonb", [old, new])
        assert cursor.fetchone()[0] is True
    assert from_new == from_old
    assert sorted(text for text, _, _ in from_new) == sorted(AWKWARD)
