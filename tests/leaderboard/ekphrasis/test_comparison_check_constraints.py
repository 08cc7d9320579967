"""The Comparison check constraints a judge run's every round write checks, as PostgreSQL stores them (issue 30,
migration leaderboard 0016): each compact stored form gives the model's own rule's verdict on the listed
values and on values outside them (NULL, NaN, the infinities, just outside the bounds), and is the compact
form (the winners one ``text[]`` constant, not an ``ARRAY[…]`` of cast constants; no numeric constant cast at
each use)."""

from __future__ import annotations

import itertools

import pytest
from django.db import connection  # noqa: F401 - the skipif condition below reads it

from leaderboard.ekphrasis.models import Comparison
from tests.stored_check_constraints import check_verdicts, djangos_check, stored_check, stored_check_nodes

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


@pytest.mark.parametrize("name", CASES)
def test_the_stored_check_judges_every_value_as_the_models_rule(name):
    columns, rows = CASES[name]
    stored = check_verdicts(stored_check(Comparison, name), columns, rows)
    assert stored == check_verdicts(djangos_check(Comparison, name), columns, rows)
    assert any(stored) and not all(stored)  # the grid holds both verdicts


@pytest.mark.parametrize("name", CASES)
def test_the_stored_check_is_the_compact_form(name):
    """PostgreSQL reads the stored node tree back at every statement that writes the table: the winners are one
    constant (Django's form has one a value), the bounds constants of the column's type (Django's are numeric
    constants, cast at each use)."""
    nodes = stored_check_nodes(Comparison, name)
    assert nodes.count("{CONST ") <= 2 and "{FUNCEXPR " not in nodes and "ARRAY[" not in stored_check(Comparison, name)
