"""A label's one foreign key to its assignment's identity, and an assignment's one key to its item's (issue 30,
migrations annotation 0025 and 0026, PostgreSQL): each label kind has exactly that key, an assignment that one
in place of its item and campaign keys; a label whose campaign, item, annotator or assignment is not its
assignment's is refused, so is an assignment whose campaign is not its item's; every deletion Django's keys
refused (the assignment, campaign, item or user under a label or an assignment) is still refused; and the
migrations reverse to Django's keys."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from annotation import services
from annotation.label_models import (
    FaithfulnessLabel,
    HandwritingLabel,
    PairwiseLabel,
    StrategyLabel,
    TigAuditLabel,
    UOSLabel,
)
from annotation.models import Assignment
from tests.annotation.factories import VALID_ANSWERS, Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators, take_and_label

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'postgresql'")]

LABEL_MODELS = [PairwiseLabel, UOSLabel, FaithfulnessLabel, StrategyLabel, TigAuditLabel, HandwritingLabel]


def _foreign_keys(table: str) -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' AND conrelid = %s::regclass",
                       [table])
        return dict(cursor.fetchall())


@pytest.mark.parametrize("model", LABEL_MODELS)
def test_a_label_has_one_foreign_key_the_assignments_identity(model):
    table = model._meta.db_table
    assert _foreign_keys(table) == {
        f"{table}_assignment_identity": "FOREIGN KEY (item_id, assignment_id, campaign_id, annotator_id) REFERENCES "
        "annotation_assignment(item_id, id, campaign_id, annotator_id) DEFERRABLE INITIALLY DEFERRED"
    }


def test_an_assignment_has_one_foreign_key_for_its_item_and_campaign():
    columns = sorted(definition.split(")")[0] for definition in _foreign_keys("annotation_assignment").values())
    assert columns == ["FOREIGN KEY (annotator_id", "FOREIGN KEY (item_id, campaign_id", "FOREIGN KEY (slot_id"]
    assert _foreign_keys("annotation_assignment")["annotation_assignment_item_identity"].endswith(
        "REFERENCES annotation_item(id, campaign_id) DEFERRABLE INITIALLY DEFERRED")


@pytest.fixture
def labelled(media_root):
    """A pairwise label, another campaign, a user with no label, another annotator's open assignment of the campaign."""
    first, second, third = annotators(3, prefix="key-")
    catalogue = Catalogue(n_tasks=1)
    campaign = pairwise_campaign(catalogue, annotators=[first, second])
    other_campaign = pairwise_campaign(catalogue, annotators=[first])
    _, submission = take_and_label(campaign, first, VALID_ANSWERS[campaign.kind])
    other = services.assignment_next(campaign=campaign, annotator=second)  # active: no label of its own
    return submission.label, other_campaign, third, other


def _refused(sql: str, params: list) -> str:
    """Run ``sql`` with the deferred keys checked at once; the name of the constraint that refused it."""
    with pytest.raises(IntegrityError) as refused, transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(sql, params)
    return refused.value.__cause__.diag.constraint_name


def test_a_label_not_matching_its_assignment_is_refused(labelled):
    label, other_campaign, third, other = labelled
    key = "annotation_pairwiselabel_assignment_identity"
    other_item = other_campaign.items.first()
    for column, value in [("campaign_id", other_campaign.pk), ("item_id", other_item.pk), ("annotator_id", third.pk),
                          ("assignment_id", other.pk)]:
        assert _refused(f"UPDATE annotation_pairwiselabel SET {column} = %s WHERE id = %s", [value, label.pk]) == key, column


def test_every_row_under_a_label_still_cannot_be_deleted(labelled):
    label, *_ = labelled
    assert _refused("DELETE FROM annotation_assignment WHERE id = %s", [label.assignment_id]).endswith(
        "_assignment_identity")
    for table, pk in [("annotation_item", label.item_id), ("annotation_campaign", label.campaign_id),
                      ("auth_user", label.annotator_id)]:
        _refused(f"DELETE FROM {table} WHERE id = %s", [pk])


def test_an_assignment_outside_its_items_campaign_is_refused(labelled):
    _, other_campaign, _, other = labelled  # ``other`` has no label: only the assignment's own key can refuse
    assert _refused("UPDATE annotation_assignment SET campaign_id = %s WHERE id = %s",
                    [other_campaign.pk, other.pk]) == "annotation_assignment_item_identity"
    for table, pk in [("annotation_item", other.item_id), ("annotation_campaign", other.campaign_id)]:
        _refused(f"DELETE FROM {table} WHERE id = %s", [pk])


def _key_definitions() -> dict[str, dict[str, str]]:
    return {model._meta.db_table: _foreign_keys(model._meta.db_table) for model in [*LABEL_MODELS, Assignment]}


@pytest.mark.django_db(transaction=True)
def test_the_migrations_reverse_to_djangos_keys_and_back():
    from django.db.migrations.executor import MigrationExecutor

    one_key = _key_definitions()
    MigrationExecutor(connection).migrate([("annotation", "0024_label_path_checks_folded")])
    four = _key_definitions()
    for model in LABEL_MODELS:
        table = model._meta.db_table
        assert sorted(definition.split(")")[0] for definition in four[table].values()) == [
            "FOREIGN KEY (annotator_id", "FOREIGN KEY (assignment_id", "FOREIGN KEY (campaign_id", "FOREIGN KEY (item_id"]
    assert sorted(definition.split(")")[0] for definition in four["annotation_assignment"].values()) == [
        "FOREIGN KEY (annotator_id", "FOREIGN KEY (campaign_id", "FOREIGN KEY (item_id", "FOREIGN KEY (slot_id"]
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes("annotation"))  # back to the latest, for the tests after
    assert _key_definitions() == one_key
