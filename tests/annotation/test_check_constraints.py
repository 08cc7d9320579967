"""The check constraints a label checks, as PostgreSQL stores them (issue 30, migration annotation 0022):
each compact stored form gives the model's own rule's verdict on every listed value and on values just
outside the lists, and is the compact form (a list is one ``text[]`` constant, not an ``ARRAY[…]`` of cast
constants)."""

from __future__ import annotations

import itertools

import pytest
from django.db import connection

from annotation.models import Assignment, FlagReason, PairChoice, PairwiseLabel

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'postgresql'")]

#: Values just outside each list: case, spaces, an empty value, another list's value, and strings that join
#: with a space into one of the swap rule's listed pairs.
NEAR = ["", " ", "x", "Active", "active ", "tie tie", "A B", "B A", "a", "TIE", "missing"]
CHOICES = [*PairChoice.values, *NEAR]

#: constraint -> (model, its columns with their SQL types, the rows to judge)
CASES = {
    "assignment_status_known": (
        Assignment,
        [("status", "text")],
        [(value,) for value in [*Assignment.Status.values, *NEAR]],
    ),
    "annotation_pairwiselabel_flag_known": (
        PairwiseLabel,
        [("flag_reason", "text")],
        [(value,) for value in [*FlagReason.values, *NEAR]],
    ),
    "pairwiselabel_shown_choice_known": (
        PairwiseLabel,
        [("shown_choice", "text")],
        [(value,) for value in CHOICES],
    ),
    "pairwiselabel_choice_maps_through_swap": (
        PairwiseLabel,
        [("shown_choice", "text"), ("choice", "text"), ("swapped", "boolean")],
        list(itertools.product(CHOICES, CHOICES, [True, False])),
    ),
}


def _stored(model, name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_expr(conbin, conrelid) FROM pg_constraint WHERE conrelid = %s::regclass "
            "AND conname = %s",
            [model._meta.db_table, name],
        )
        return cursor.fetchone()[0]


def _djangos(model, name: str) -> str:
    """The rule as Django writes it from the model (what the database held before 0022)."""
    constraint = next(c for c in model._meta.constraints if c.name == name)
    with connection.schema_editor(atomic=False, collect_sql=True) as editor:
        return constraint._get_check_sql(model, editor)


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
    model, columns, rows = CASES[name]
    stored = _verdicts(_stored(model, name), columns, rows)
    assert stored == _verdicts(_djangos(model, name), columns, rows)
    assert any(stored) and not all(stored)  # the grid holds both verdicts


@pytest.mark.parametrize("name", CASES)
def test_the_stored_check_is_the_compact_form(name):
    """A list of values is one constant in the stored node tree (Django's form has one per value: 3 to 9),
    which PostgreSQL reads back at every write of the table."""
    model, _, _ = CASES[name]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conbin::text FROM pg_constraint WHERE conrelid = %s::regclass AND conname = %s",
            [model._meta.db_table, name],
        )
        nodes = cursor.fetchone()[0]
    assert nodes.count("{CONST ") <= 2 and "ARRAY[" not in _stored(model, name)
