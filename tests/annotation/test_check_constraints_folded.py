"""The check constraints migration annotation 0024 folds (issue 30): each stored carrier judges every value of a
grid as the conjunction of the model's own rules it carries (Django's ``Meta`` checks and its
``PositiveIntegerField`` column checks), every such rule rejects some row of its grid, and every rule of these
models is stored under its own name or carried by a folded constraint that is."""

from __future__ import annotations

import importlib
import itertools

import pytest
from django.db import connection, models

from annotation.choices import PairChoice
from annotation.label_models import (
    FaithfulnessLabel,
    HandwritingLabel,
    LabelRevision,
    PairwiseLabel,
    StrategyLabel,
    TigAuditLabel,
    UOSLabel,
)
from annotation.models import CampaignProgress, ItemSlot
from tests.stored_check_constraints import check_verdicts, djangos_check, stored_check

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'postgresql'")]

FOLDS = importlib.import_module("annotation.migrations.0024_label_path_checks_folded").FOLDS

LABEL_MODELS = [PairwiseLabel, UOSLabel, FaithfulnessLabel, StrategyLabel, TigAuditLabel, HandwritingLabel]
MILLISECONDS = [None, -(2**31) + 1, -1, 0, 1, 86_400_000 - 1, 86_400_000, 86_400_000 + 1, 2**31 - 1]
REVISED_AT = [None, "2026-12-07T10:00:00+00:00"]
VERSIONS = [None, -(2**31) + 1, -1, 0, 1, 2, 3, 2**31 - 1]
NEAR = ["", " ", "x", "a", "TIE", "tie tie", "A B", "B A", "A A", "A ", " A"]
CHOICES = [*PairChoice.values, *NEAR]
COUNTS = [None, -(2**31) + 1, -1, 0, 1, 2**31 - 1]


def _column(field: str) -> tuple[str, str]:
    """Django's column check of a ``PositiveIntegerField`` (``"column" >= 0``)."""
    return ("column", field)


def _meta(name: str) -> tuple[str, str]:
    return ("meta", name)


#: carrier -> (model, the model's rules it carries, the columns with their SQL types, the rows to judge)
CASES: dict[str, tuple] = {}
for label_model in LABEL_MODELS:
    table = label_model._meta.db_table
    CASES[f"{table}_time_under_a_day"] = (
        label_model, [_meta(f"{table}_time_under_a_day"), _column("time_on_item_ms")],
        [("time_on_item_ms", "integer")], [(ms,) for ms in MILLISECONDS],
    )
    CASES[f"{table}_version_revised_together"] = (
        label_model, [_meta(f"{table}_version_revised_together"), _column("version")],
        [("revised_at", "timestamptz"), ("version", "integer")], list(itertools.product(REVISED_AT, VERSIONS)),
    )
CASES["labelrevision_time_under_a_day"] = (
    LabelRevision, [_meta("labelrevision_time_under_a_day"), _column("time_on_revision_ms")],
    [("time_on_revision_ms", "integer")], [(ms,) for ms in MILLISECONDS],
)
CASES["labelrevision_version_from_1"] = (
    LabelRevision, [_meta("labelrevision_version_from_1"), _column("version")],
    [("version", "integer")], [(version,) for version in VERSIONS],
)
CASES["pairwiselabel_choice_maps_through_swap"] = (
    PairwiseLabel, [_meta("pairwiselabel_choice_maps_through_swap"), _meta("pairwiselabel_shown_choice_known")],
    [("shown_choice", "text"), ("choice", "text"), ("swapped", "boolean")],
    list(itertools.product(CHOICES, CHOICES, [True, False])),
)
CASES["itemslot_index_below_9"] = (
    ItemSlot, [_meta("itemslot_index_below_9"), _column("index")],
    [("index", "smallint")], [(index,) for index in [None, -(2**15) + 1, -1, 0, 1, 8, 9, 2**15 - 1]],
)
CASES["campaignprogress_counts_not_negative"] = (
    CampaignProgress, [_column(field) for field in ("labels", "slots", "item_version", "label_version")],
    [("labels", "integer"), ("slots", "integer"), ("item_version", "bigint"), ("label_version", "bigint")],
    list(itertools.product(COUNTS, COUNTS, [None, -1, 0, 2**62], [None, -1, 0, 2**62])),
)


def _rule_sql(model, rule: tuple[str, str]) -> str:
    kind, name = rule
    if kind == "meta":
        return djangos_check(model, name)
    return model._meta.get_field(name).db_check(connection)


def _stored_names(model) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT conname FROM pg_constraint WHERE contype = 'c' AND conrelid = %s::regclass",
                       [model._meta.db_table])
        return {name for (name,) in cursor.fetchall()}


def test_every_fold_of_the_migration_is_judged_here():
    assert {carrier for _, carrier, _, _, _ in FOLDS} == set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_the_folded_check_judges_every_value_as_the_models_rules_together(name):
    model, rules, columns, rows = CASES[name]
    each = [check_verdicts(_rule_sql(model, rule), columns, rows) for rule in rules]
    for verdicts in each:  # every carried rule refuses some row of the grid, and the stored form with it
        assert not all(verdicts)
    together = [all(verdicts) for verdicts in zip(*each)]
    assert check_verdicts(stored_check(model, name), columns, rows) == together
    assert any(together)


@pytest.mark.parametrize("model", [*LABEL_MODELS, LabelRevision, ItemSlot, CampaignProgress])
def test_every_rule_of_the_model_is_stored_or_carried_by_a_stored_fold(model):
    """A rule the migration folded is gone under its own name and its carrier is stored; every other
    rule (the model's ``Meta`` checks, its fields' column checks) is still stored under its own name."""
    table = model._meta.db_table
    rules = {c.name for c in model._meta.constraints if isinstance(c, models.CheckConstraint)}
    rules |= {f"{table}_{field.column}_check" for field in model._meta.local_fields if field.db_check(connection)}
    folded = {name: carrier for t, carrier, _, _, names in FOLDS if t == table for name, _ in names}
    stored = _stored_names(model)
    for rule in rules:
        if rule in folded:
            assert rule not in stored and folded[rule] in stored, rule
        else:
            assert rule in stored, rule


def _check_definitions() -> dict[tuple[str, str], str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE contype = 'c' AND conrelid::regclass::text LIKE 'annotation%%'"
        )
        return {(table, name): definition for table, name, definition in cursor.fetchall()}


@pytest.mark.django_db(transaction=True)
def test_the_migration_reverses_to_every_rule_under_its_own_name_and_back():
    from django.db.migrations.executor import MigrationExecutor

    folded = _check_definitions()
    executor = MigrationExecutor(connection)
    executor.migrate([("annotation", "0023_label_check_constraints_fewer_nodes")])
    unfolded = _check_definitions()
    for table, carrier, form, before, names in FOLDS:
        for name, _ in names:
            assert (table, name) in unfolded and (table, name) not in folded, name
        if before is None and form is not None:
            assert (table, carrier) not in unfolded
    assert unfolded[("annotation_pairwiselabel", "annotation_pairwiselabel_version_check")] == "CHECK ((version >= 0))"
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes("annotation"))  # back to the latest, for the tests after
    assert _check_definitions() == folded
