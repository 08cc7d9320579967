"""The facts next-item, submit and skip read in their locking statement equal what the ORM says of the
same rows (campaign, membership, annotator role, counters, gold counts), and submit's fast path marks
only an active assignment in time, writing nothing otherwise."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import item_creation, request_facts, services
from annotation.models import (
    AnnotatorProgress,
    Assignment,
    Campaign,
    CampaignAnnotator,
    CampaignProgress,
    Item,
)
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def setting():
    """(campaign with gold, alice a member who has labelled one item, bob a member who left the annotator group)."""
    alice, bob = annotators(2)
    campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=[alice, bob], gold_rate=0.2)
    item_creation.item_gold_set(item=campaign.items.order_by("position").last(), answer="A")
    given = services.assignment_next(campaign=campaign, annotator=alice)
    services.label_submit(token=given.token, annotator=alice, idempotency_key=uuid.uuid4(), answer={"choice": "A"})
    bob.groups.remove(Group.objects.get(name="annotator"))
    return campaign, alice, bob


def test_next_item_facts_equal_the_rows_they_read(setting):
    campaign, alice, _ = setting
    facts = request_facts.next_item_facts(campaign_id=campaign.pk, annotator_id=alice.pk)
    progress = CampaignProgress.objects.get(pk=campaign.pk)
    shown = Assignment.objects.filter(campaign=campaign, annotator=alice, status__in=Assignment.SEEN)
    assert facts.campaign.pk == campaign.pk and facts.campaign.gold_rate == pytest.approx(0.2)
    assert facts.membership_id == CampaignAnnotator.objects.get(campaign=campaign, annotator=alice).pk
    assert (facts.access.is_annotator, facts.access.is_member) == (True, True)
    assert (facts.labels, facts.slots) == (progress.labels, progress.slots)
    assert facts.done == AnnotatorProgress.objects.get(campaign=campaign, annotator=alice).done == 1
    assert (facts.seen, facts.seen_gold) == (shown.count(), shown.filter(slot__isnull=True).count())


def test_next_item_facts_say_when_the_user_left_the_annotator_group(setting):
    campaign, _, bob = setting
    facts = request_facts.next_item_facts(campaign_id=campaign.pk, annotator_id=bob.pk)
    assert facts.access.is_annotator is False


def test_next_item_facts_have_no_membership_for_someone_not_listed(setting):
    campaign, _, _ = setting
    outsider = UserFactory(username="outsider", role="annotator")
    facts = request_facts.next_item_facts(campaign_id=campaign.pk, annotator_id=outsider.pk)
    assert facts is None or facts.membership_id is None  # PostgreSQL: no row to lock; SQLite: no membership


def test_next_item_facts_of_a_missing_campaign_are_none(setting):
    _, alice, _ = setting
    assert request_facts.next_item_facts(campaign_id=10**9, annotator_id=alice.pk) is None


def test_assignment_facts_are_the_annotators_own_assignment_with_its_campaign(setting):
    campaign, alice, bob = setting
    held = services.assignment_next(campaign=campaign, annotator=alice)
    assignment, access = request_facts.assignment_facts(token=held.token, annotator_id=alice.pk)
    assert (assignment.pk, assignment.status, assignment.campaign.pk) == (held.pk, "active", campaign.pk)
    assert assignment.media_sha256 == held.media_sha256 and assignment.expires_at == held.expires_at
    assert (access.is_annotator, access.is_member) == (True, True)
    assert request_facts.assignment_facts(token=held.token, annotator_id=bob.pk) is None


def test_the_fast_submit_marks_an_active_assignment_in_time_and_nothing_else(setting):
    campaign, alice, _ = setting
    held = services.assignment_next(campaign=campaign, annotator=alice)
    late = held.expires_at + timedelta(seconds=1)
    assert request_facts.assignment_submit_if_active(token=held.token, annotator_id=alice.pk, now=late) is None
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.ACTIVE
    found = request_facts.assignment_submit_if_active(token=held.token, annotator_id=alice.pk, now=timezone.now())
    if connection.vendor != "postgresql":
        assert found is None  # the fast path is PostgreSQL's; elsewhere submit locks and reads, then writes
        return
    assignment, access = found
    assert assignment.status == Assignment.Status.SUBMITTED == Assignment.objects.get(pk=held.pk).status
    assert (access.is_annotator, access.is_member) == (True, True)


def test_the_item_is_read_as_the_orm_reads_it_with_its_relations(setting):
    campaign, _, _ = setting
    item = campaign.items.first()
    relations = ("task", "response_a", "response_b")
    read = request_facts.item_with_content(item_id=item.pk, relations=relations)
    orm = Item.objects.select_related(*relations).get(pk=item.pk)
    assert [getattr(read, f.attname) for f in Item._meta.concrete_fields] == [getattr(orm, f.attname) for f in Item._meta.concrete_fields]
    assert (read.task.brief, read.response_a.core_idea, read.response_b.visual_description) == (
        orm.task.brief, orm.response_a.core_idea, orm.response_b.visual_description)
    with pytest.raises(Item.DoesNotExist):
        request_facts.item_with_content(item_id=10**9, relations=relations)


def test_the_instances_hold_every_field_as_the_orm_reads_it(setting):
    """Each concrete field (JSON fields decoded, timestamps, foreign keys) equals the ORM's, for the
    campaign of the next-item facts and the assignment with its campaign of the submit's."""
    campaign, alice, _ = setting
    held = services.assignment_next(campaign=campaign, annotator=alice)
    facts = request_facts.next_item_facts(campaign_id=campaign.pk, annotator_id=alice.pk)
    assignment, _ = request_facts.assignment_facts(token=held.token, annotator_id=alice.pk)
    for ours, model in ((facts.campaign, Campaign), (assignment, Assignment), (assignment.campaign, Campaign)):
        orm = model.objects.get(pk=ours.pk)
        for field in model._meta.concrete_fields:
            assert getattr(ours, field.attname) == getattr(orm, field.attname), (model.__name__, field.attname)
        assert ours._state.adding is False and ours._state.db == orm._state.db


def _facts_statements(campaign, annotator) -> tuple[request_facts.NextItemFacts, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        facts = request_facts.next_item_facts(campaign_id=campaign.pk, annotator_id=annotator.pk)
    return facts, [q["sql"] for q in queries.captured_queries]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the facts are one statement on PostgreSQL only")
def test_next_item_facts_of_a_campaign_without_gold_leave_the_gold_counts_out_once_it_was_read():
    alice, = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[alice])
    request_facts._CAMPAIGN_HAD_GOLD.pop(campaign.pk, None)
    first, (first_sql,) = _facts_statements(campaign, alice)
    again, (again_sql,) = _facts_statements(campaign, alice)
    assert "slot_id IS NULL" in first_sql and (first.seen, first.seen_gold) == (0, 0)
    assert "slot_id IS NULL" not in again_sql and (again.seen, again.seen_gold) == (None, None)
    assert (again.membership_id, again.done, again.campaign.pk) == (first.membership_id, first.done, campaign.pk)


def test_next_item_facts_of_a_campaign_with_gold_always_count_what_the_annotator_was_shown(setting):
    campaign, alice, _ = setting
    for _ in range(2):
        facts = request_facts.next_item_facts(campaign_id=campaign.pk, annotator_id=alice.pk)
        shown = Assignment.objects.filter(campaign=campaign, annotator=alice, status__in=Assignment.SEEN)
        assert (facts.seen, facts.seen_gold) == (shown.count(), shown.filter(slot__isnull=True).count())


def test_a_campaign_given_gold_after_its_facts_were_read_without_it_hands_out_gold_when_due():
    """The facts of a campaign without gold are read without the gold counts; should it get gold
    afterwards, the next item still follows the gold schedule (the counts are then counted apart)."""
    alice, = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=[alice])
    gold = item_creation.item_gold_set(item=campaign.items.order_by("position").last(), answer="A")
    for _ in range(2):  # read twice: the second time without the gold counts (PostgreSQL)
        given = services.assignment_next(campaign=campaign, annotator=alice)
        services.label_submit(token=given.token, annotator=alice, idempotency_key=uuid.uuid4(), answer={"choice": "A"})
        assert given.item.pk != gold.pk
    Campaign.objects.filter(pk=campaign.pk).update(gold_rate=0.5)  # after two regular items, gold is due
    assert services.assignment_next(campaign=campaign, annotator=alice).item.pk == gold.pk
