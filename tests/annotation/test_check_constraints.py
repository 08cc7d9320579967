"""The check constraints a label checks, as PostgreSQL stores them (issue 30, migrations annotation 0022 and
0023; those 0024 folds further are judged in ``test_check_constraints_folded.py``): each compact stored form gives the model's own rule's verdict on every listed value and on values
just outside the lists, and is the compact form (a list is one ``text[]`` constant, not an ``ARRAY[…]`` of
cast constants; no ``IS NULL`` test a comparison makes anyway, no ``NOT``, one ``CASE`` for two branches)."""

from __future__ import annotations

import itertools

import pytest
from django.db import connection  # noqa: F401 - the skipif condition below reads it

from annotation.choices import FlagReason, PairChoice
from annotation.label_models import (
    FaithfulnessLabel,
    HandwritingLabel,
    LabelRevision,
    PairwiseLabel,
    StrategyLabel,
    TigAuditLabel,
    UOSLabel,
)
from annotation.models import Assignment
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


#: Every label kind shares ``Label.Meta.constraints`` (migration 0023 stores them in fewer nodes).
LABEL_MODELS = [PairwiseLabel, UOSLabel, FaithfulnessLabel, StrategyLabel, TigAuditLabel, HandwritingLabel]
MILLISECONDS = [None, -1, 0, 1, 86_400_000 - 1, 86_400_000, 86_400_000 + 1, 2**31 - 1]
REVISED_AT = [None, "2026-12-07T10:00:00+00:00"]
VERSIONS = [None, -1, 0, 1, 2, 3, 2**31 - 1]
NOTES = ["", " ", "x", "a note"]

#: constraint -> the form migration 0023 stores (what ``pg_get_expr`` shows must hold this, and not Django's)
SHARED = {
    "time_under_a_day": ("IS NULL", None),
    "flag_has_note": ("NOT ", "<>"),
    "version_revised_together": (" OR ", "CASE"),
    "flag_known": ("ARRAY[", None),
}
for label_model in LABEL_MODELS:
    table = label_model._meta.db_table
    CASES[f"{table}_time_under_a_day"] = (label_model, [("time_on_item_ms", "integer")], [(ms,) for ms in MILLISECONDS])
    CASES[f"{table}_flag_has_note"] = (
        label_model,
        [("flag_reason", "text"), ("flag_note", "text")],
        list(itertools.product([*FlagReason.values, *NEAR], NOTES)),
    )
    CASES[f"{table}_version_revised_together"] = (
        label_model,
        [("revised_at", "timestamptz"), ("version", "integer")],
        list(itertools.product(REVISED_AT, VERSIONS)),
    )
    CASES.setdefault(
        f"{table}_flag_known", (label_model, [("flag_reason", "text")], [(value,) for value in [*FlagReason.values, *NEAR]])
    )
CASES["labelrevision_time_under_a_day"] = (LabelRevision, [("time_on_revision_ms", "integer")], [(ms,) for ms in MILLISECONDS])
#: Migration 0024 folds other rules into these (``tests/annotation/test_check_constraints_folded.py`` judges them
#: against the rules they carry together); the shown-choice list is carried by the swap rule.
for folded in ["pairwiselabel_shown_choice_known", "pairwiselabel_choice_maps_through_swap",
               "labelrevision_time_under_a_day", *(f"{m._meta.db_table}_time_under_a_day" for m in LABEL_MODELS)]:
    del CASES[folded]


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


@pytest.mark.parametrize("name", [name for name in CASES if name.endswith(tuple(SHARED))])
def test_the_shared_label_check_is_stored_in_fewer_nodes(name):
    """Migration 0023's forms: the comparison without the ``IS NULL`` test, ``<>`` for ``NOT … =``, one
    ``CASE`` for the two ``AND`` branches, the flag list as one constant; shorter than Django's stored tree."""
    model, _, _ = CASES[name]
    left_out, kept = next(forms for rule, forms in SHARED.items() if name.endswith(rule))
    stored = stored_check(model, name)
    assert left_out not in stored and (kept is None or kept in stored), stored
