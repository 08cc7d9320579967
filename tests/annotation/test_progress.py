"""Progress counters: after any mix of submissions, replays, skips, expiry, staleness and gold changes,
the counters read by the progress bar and the campaign list equal a recount of the rows; a campaign
made around the services gets its counters from a recount; the data migration fills them."""

from __future__ import annotations

import importlib
import uuid
from datetime import timedelta

import pytest
from django.apps import apps as django_apps
from django.db import connection
from django.utils import timezone

from annotation import annotator_reads, item_creation, services
from annotation.annotator_reads import _progress_recounted
from annotation.models import AnnotatorProgress, Campaign, CampaignProgress, ItemSlot
from annotation.progress import campaign_progress_recount
from tests.annotation.factories import Catalogue, campaign_for, pairwise_campaign
from tests.annotation.helpers import annotators, fill

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalogue():
    return Catalogue(n_tasks=2)


def assert_counters_match_a_recount(campaign, users):
    for user in users:
        assert annotator_reads.campaign_progress(campaign=campaign, annotator=user) == _progress_recounted(campaign, user)


def test_counters_equal_a_recount_after_every_kind_of_change(catalogue):
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, annotators=users, assignment_ttl_seconds=60)
    gold = campaign.items.order_by("-position").first()
    item_creation.item_gold_set(item=gold, answer="A")  # gold items have no slots: the total shrinks
    assert_counters_match_a_recount(campaign, users)
    now = timezone.now()
    first = services.assignment_next(campaign=campaign, annotator=users[0], now=now)
    key = uuid.uuid4()
    for _ in range(2):  # the second is a replay: counted once
        services.label_submit(token=first.token, annotator=users[0], idempotency_key=key, answer={"choice": "A"}, now=now)
    skipped = services.assignment_next(campaign=campaign, annotator=users[1], now=now)
    services.assignment_skip(token=skipped.token, annotator=users[1], now=now)
    services.assignment_next(campaign=campaign, annotator=users[2], now=now)
    services.assignments_expire(campaign=campaign, now=now + timedelta(seconds=61))
    assert_counters_match_a_recount(campaign, users)
    fill(campaign, users, lambda u, a: {"choice": "B"})
    assert_counters_match_a_recount(campaign, users)
    item = first.item
    item.response_a.core_idea = "A rewritten idea"
    item.response_a.save()
    item_creation.campaign_content_refresh(campaign=campaign)  # its labels go stale
    assert_counters_match_a_recount(campaign, users)
    item_creation.item_gold_set(item=gold, answer=None)  # a regular item again: its slots come back
    assert_counters_match_a_recount(campaign, users)


def test_a_campaign_made_around_the_services_gets_its_counters_from_a_recount(catalogue):
    users = annotators(1)
    made = campaign_for("text_pairwise", catalogue, annotators=users)
    CampaignProgress.objects.filter(campaign=made).delete()  # as the admin's add form leaves it
    campaign = Campaign.objects.get(pk=made.pk)
    item_creation.items_create(campaign=campaign, specs=[
        item_creation.ItemSpec(task=t, dimension="novelty", response_a=catalogue.response(t, 0), response_b=catalogue.response(t, 1))
        for t in catalogue.tasks
    ])
    fill(campaign, users, lambda u, a: {"choice": "A"})
    assert CampaignProgress.objects.get(campaign=campaign).slots == 2 * campaign.k
    assert_counters_match_a_recount(campaign, users)


def test_a_recount_repairs_counters_written_around_the_services(catalogue):
    users = annotators(2)
    campaign = pairwise_campaign(catalogue, annotators=users)
    fill(campaign, users, lambda u, a: {"choice": "A"})
    CampaignProgress.objects.filter(campaign=campaign).update(labels=0, slots=0)
    AnnotatorProgress.objects.filter(campaign=campaign).update(done=99)
    campaign_progress_recount(campaign_id=campaign.pk)
    assert_counters_match_a_recount(campaign, users)


def test_the_data_migration_fills_flags_positions_and_counters_from_existing_rows(catalogue):
    users = annotators(2)
    campaign = pairwise_campaign(catalogue, annotators=users)
    fill(campaign, users[:1], lambda u, a: {"choice": "A"})
    services.assignment_next(campaign=campaign, annotator=users[1])
    expected_flags = dict(ItemSlot.objects.values_list("pk", "is_free"))
    expected = {u.pk: annotator_reads.campaign_progress(campaign=campaign, annotator=u) for u in users}
    ItemSlot.objects.update(is_free=True, position=0)
    CampaignProgress.objects.all().delete()
    AnnotatorProgress.objects.all().delete()
    migration = importlib.import_module("annotation.migrations.0003_free_slot_queue_and_progress_counters")
    migration.fill(django_apps, connection.schema_editor())
    assert dict(ItemSlot.objects.values_list("pk", "is_free")) == expected_flags
    assert all(s.position == s.item.position for s in ItemSlot.objects.select_related("item"))
    assert {u.pk: annotator_reads.campaign_progress(campaign=campaign, annotator=u) for u in users} == expected


@pytest.mark.parametrize("rate", [0.3, 0.5])
def test_an_annotators_done_never_passes_their_total_on_a_campaign_with_gold(rate):
    """``done`` counts gold items too, so the total shown beside it must make room for them: before, an
    annotator who labelled every item of a campaign with gold read "7 of up to 6"."""
    (alice,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=4), annotators=[alice], k=1, gold_rate=rate)
    for item in campaign.items.order_by("position")[:4]:
        item_creation.item_gold_set(item=item, answer="A")
    regular = campaign.items.filter(is_gold=False).count()
    shown = []
    while (nxt := services.item_next(campaign_id=campaign.pk, annotator=alice)).assignment is not None:
        shown.append(nxt.progress)
        done = services.label_submit(token=nxt.assignment.token, annotator=alice, idempotency_key=uuid.uuid4(),
                                     answer={"choice": "A"})
        shown.append(done.progress)
    shown.append(nxt.progress)
    assert shown[-1].done > regular  # gold was served on the way, so done passed the regular items
    totals = {p.items_total for p in shown}
    assert len(totals) == 1  # the total does not move as gold or regular items are served
    assert all(p.done + p.assigned <= p.items_total for p in shown), [(p.done, p.items_total) for p in shown]
    assert annotator_reads.campaign_progress(campaign=campaign, annotator=alice).items_total == totals.pop()
