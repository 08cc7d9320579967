"""The Comparison check constraints a judge run's every round write checks, as PostgreSQL stores them (issue 30,
migration leaderboard 0016): each compact stored form gives the model's own rule's verdict on the listed
values and on values outside them (NULL, NaN, the infinities, just outside the bounds), and is the compact
form (the winners one ``text[]`` constant, not an ``ARRAY[…]`` of cast constants; no numeric constant cast at
each use)."""

from __future__ import annotations

import itertools

import pytest
from django.db import connection

from leaderboard.ekphrasis.models import Comparison

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'postgresql'")]

NEAR = ["", " ", "a", "b", "TIE", "Tie", "tie ", "A B", "ok", "x"]
STATUSES = [*Comparison.Status.values, "OK", "ok ", "", "okay"]
WINNERS = ["A", "B", "tie", *NEAR]
CONFIDENCES = [None, 0.0, -0.0, 1.0, 0.5, 1e-300, -1e-300, 1.0000000000000002, 0.9999999999999999, -1.0, 2.0,
               float("nan"), float("inf"), float("-inf")]

#: constraint -> (its columns with their SQL types, the rows to judge)
CASES = {
    "comparison_ok_has_winner": (
        [("status", "text"), ("winner", "text")],
        list(itertools.product([*STATUSES, None], [*WINNERS, None])),
    ),
    "comparison_confidence_0_1": ([("confidence", "double precision")], [(value,) for value in CONFIDENCES]),
}


def _stored(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_expr(conbin, conrelid) FROM pg_constraint WHERE conrelid = %s::regclass AND conname = %s",
            [Comparison._meta.db_table, name],
        )
        return cursor.fetchone()[0]


def _djangos(name: str) -> str:
    """The rule as Django writes it from the model (what the database held before 0016)."""
    constraint = next(c for c in Comparison._meta.constraints if c.name == name)
    with connection.schema_editor(atomic=False, collect_sql=True) as editor:
        return constraint._get_check_sql(Comparison, editor)


def _verdicts(expression: str, columns, rows) -> list[bool]:
    """Whether a row with these values passes the check (a check passes unless it is false)."""
    names = ", ".join(name for name, _ in columns)
    values = ", ".join("(" + ", ".join(f"%s::{kind}" for _, kind in columns) + ")" for _ in rows)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT ({expression}) IS NOT FALSE FROM (VALUES {values}) AS t({names})",
            [value for row in rows for value in row],
        )
        return [passes for (passes,) in cursor.fetchall()]


@pytest.mark.parametrize("name", CASES)
def test_the_stored_check_judges_every_value_as_the_models_rule(name):
    columns, rows = CASES[name]
    stored = _verdicts(_stored(name), columns, rows)
    assert stored == _verdicts(_djangos(name), columns, rows)
    assert any(stored) and not all(stored)  # the grid holds both verdicts


@pytest.mark.parametrize("name", CASES)
def test_the_stored_check_is_the_compact_form(name):
    """PostgreSQL reads the stored node tree back at every statement that writes the table: the winners are one
    constant (Django's form has one a value), the bounds constants of the column's type (Django's are numeric
    constants, cast at each use)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conbin::text FROM pg_constraint WHERE conrelid = %s::regclass AND conname = %s",
            [Comparison._meta.db_table, name],
        )
        nodes = cursor.fetchone()[0]
    assert nodes.count("{CONST ") <= 2 and "{FUNCEXPR " not in nodes and "ARRAY[" not in _stored(name)
