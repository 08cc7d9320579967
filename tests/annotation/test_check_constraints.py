"""The check constraints a label checks, as PostgreSQL stores them (issue 30, migration annotation 0022):
each compact stored form gives the model's own rule's verdict on every listed value and on values just
outside the lists, and is the compact form (a list is one ``text[]`` constant, not an ``ARRAY[…]`` of cast
constants)."""

from __future__ import annotations

import itertools

import pytest
from django.db import connection  # noqa: F401 - the skipif condition below reads it

from annotation.models import Assignment, FlagReason, PairChoice, PairwiseLabel
from tests.stored_check_constraints import check_verdicts, djangos_check, stored_check, stored_check_nodes

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


@pytest.mark.parametrize("name", CASES)
def test_the_stored_check_judges_every_value_as_the_models_rule(name):
    model, columns, rows = CASES[name]
    stored = check_verdicts(stored_check(model, name), columns, rows)
    assert stored == check_verdicts(djangos_check(model, name), columns, rows)
    assert any(stored) and not all(stored)  # the grid holds both verdicts


@pytest.mark.parametrize("name", CASES)
def test_the_stored_check_is_the_compact_form(name):
    """A list of values is one constant in the stored node tree (Django's form has one per value: 3 to 9),
    which PostgreSQL reads back at every write of the table."""
    model, _, _ = CASES[name]
    nodes = stored_check_nodes(model, name)
    assert nodes.count("{CONST ") <= 2 and "ARRAY[" not in stored_check(model, name)
