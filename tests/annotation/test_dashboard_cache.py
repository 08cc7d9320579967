"""The cached dashboard stays live: after every kind of change it shows (a submission, a skip, an expiry,
stale labels, gold, an adjudication, a deleted item, a finished judge run) it equals a full recompute
from label rows (the cache computes pairwise dashboards from tallies: a real comparison), and
while nothing changes a second load reads it back without recomputing."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import dashboard_cache, item_creation, selectors, services
from annotation.dashboard_cache import campaign_dashboard_cached, campaign_dashboard_recomputed
from annotation.selectors import item_consensus
from leaderboard.ekphrasis import judge_runs
from tests.annotation.factories import Catalogue, RenderFactory, image_campaign, pairwise_campaign
from tests.annotation.helpers import annotators, fill
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def judge_run_finished(campaign, seed: int):
    run = judge_runs.judge_run_create(task_set=campaign.task_set, judge_name="simulated", dimensions="N",
                                      budget_per_task=6, seed=seed, novelty_anchor="generic", config={"n_boot": 20})
    judge_runs.judge_run_execute_inline(run=run)
    return run


def assert_live(campaign):
    assert campaign_dashboard_cached(campaign=campaign) == campaign_dashboard_recomputed(campaign=campaign)


def test_the_cached_dashboard_equals_a_full_recompute_after_every_change():
    users = annotators(4)
    catalogue = Catalogue(n_tasks=2)
    campaign = pairwise_campaign(catalogue, annotators=users)
    researcher = UserFactory(username="rita", role="researcher")
    assert_live(campaign)
    judge_run_finished(campaign, seed=1)
    assert_live(campaign)  # a finished run joins in
    added, _ = item_creation.items_create(campaign=campaign, specs=[
        item_creation.ItemSpec(task=t, dimension="novelty", response_a=catalogue.response(t, 1), response_b=catalogue.response(t, 2))
        for t in catalogue.tasks
    ])
    assert_live(campaign)  # new items
    item_creation.item_gold_set(item=added[0], answer="A")
    assert_live(campaign)  # a gold item leaves the agreement numbers
    fill(campaign, users[:3], lambda u, a: {"choice": ("A", "B", "tie")[(u.pk + a.item_id) % 3]})
    assert_live(campaign)
    item = campaign.items.order_by("position").first()
    assignment = services.assignment_next(campaign=campaign, annotator=users[3])
    if assignment is not None:
        services.assignment_skip(token=assignment.token, annotator=users[3])
        assert_live(campaign)  # a skip counts in the annotator's quality row
    held = services.assignment_next(campaign=campaign, annotator=users[3])
    if held is not None:
        assert services.assignments_expire(campaign=campaign, now=held.expires_at + timedelta(seconds=1)) == 1
        assert_live(campaign)  # an expiry returns the slot
    item.response_a.core_idea = "A rewritten idea"
    item.response_a.save()
    item_creation.campaign_content_refresh(campaign=campaign)
    assert_live(campaign)  # stale labels leave the numbers
    fill(campaign, users[:3], lambda u, a: {"choice": "A"})
    assert_live(campaign)
    split = next((i for i in campaign.items.all() if item_consensus(item=i).complete and item_consensus(item=i).majority is None), None)
    if split is not None:
        adjudication = services.adjudication_request(item=split, researcher=researcher)
        assert_live(campaign)
        services.adjudication_resolve(adjudication=adjudication, researcher=researcher, outcome="A")
        assert_live(campaign)
    judge_run_finished(campaign, seed=2)
    assert_live(campaign)  # the newer run replaces the join
    campaign.items.order_by("-position").first().delete()
    assert_live(campaign)


def test_a_second_load_with_nothing_changed_reads_the_cache():
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=users)
    fill(campaign, users, lambda u, a: {"choice": "A"})
    campaign_dashboard_cached(campaign=campaign)
    with CaptureQueriesContext(connection) as again:
        campaign_dashboard_cached(campaign=campaign)
    with CaptureQueriesContext(connection) as recomputed:
        campaign_dashboard_recomputed(campaign=campaign)
    assert len(again) == 2  # the two state reads of the key
    assert len(recomputed) > len(again)


def test_a_snapshot_edited_by_hand_makes_the_next_load_recompute():
    """The judge's scores the dashboard shows come from the latest snapshot's payload: a hand edit of it (the
    shell, a data fix; no new run, no new snapshot) is seen by the key's newest snapshot save."""
    from leaderboard.ekphrasis.models import LeaderboardSnapshot

    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=users)
    run = judge_run_finished(campaign, seed=1)
    fill(campaign, users, lambda u, a: {"choice": ("A", "B", "tie")[(u.pk + a.item_id) % 3]})
    assert_live(campaign)
    snapshot = LeaderboardSnapshot.objects.get(run=run)
    per_dimension = snapshot.payload["per_dimension"]
    edited = {d: {**v, "theta": [t + 1.0 + k for k, t in enumerate(v["theta"])]} for d, v in per_dimension.items()}
    snapshot.payload = {**snapshot.payload, "per_dimension": edited}
    snapshot.save()
    assert_live(campaign)


def test_a_submission_makes_the_next_load_recompute():
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users)
    before = campaign_dashboard_cached(campaign=campaign)
    assignment = services.assignment_next(campaign=campaign, annotator=users[0])
    services.label_submit(token=assignment.token, annotator=users[0], idempotency_key=uuid.uuid4(), answer={"choice": "A"})
    after = campaign_dashboard_cached(campaign=campaign)
    assert sum(r.n_judgments for r in after.rows) == sum(r.n_judgments for r in before.rows) + 1


def test_the_cached_image_preference_dashboard_equals_a_full_recompute_after_submissions():
    users = annotators(3)
    catalogue = Catalogue(n_tasks=2)
    renders = [RenderFactory(response=r) for r in catalogue.responses.values()]
    campaign = image_campaign(catalogue, renders, annotators=users)
    assert_live(campaign)
    fill(campaign, users[:2], lambda u, a: {"choice": ("A", "B")[(u.pk + a.item_id) % 2]})
    assert_live(campaign)
    fill(campaign, users[2:], lambda u, a: {"choice": "tie"})
    assert_live(campaign)


def test_the_item_rows_are_computed_once_for_every_process_sharing_the_cache(monkeypatch):
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users)
    calls = []
    item_rows = selectors.item_rows
    monkeypatch.setattr(selectors, "item_rows", lambda **kw: calls.append(kw) or item_rows(**kw))
    campaign_dashboard_cached(campaign=campaign)
    dashboard_cache._memory.clear()  # another process: nothing in its memory yet
    fill(campaign, users, lambda u, a: {"choice": "A"})  # a submission does not change the items
    dashboard = campaign_dashboard_cached(campaign=campaign)
    assert len(calls) == 1 and dashboard.rows[0].n_judgments == 3 * campaign.items.count()


def test_labels_of_items_newer_than_the_kept_item_rows_are_read_with_fresh_rows(monkeypatch):
    users = annotators(3)
    catalogue = Catalogue(n_tasks=2)
    campaign = pairwise_campaign(catalogue, annotators=users)
    campaign_dashboard_cached(campaign=campaign)
    fill(campaign, users, lambda u, a: {"choice": "A"})
    kept = dict(dashboard_cache._memory)
    item_creation.items_create(campaign=campaign, specs=[
        item_creation.ItemSpec(task=t, dimension="novelty", response_a=catalogue.response(t, 1), response_b=catalogue.response(t, 2))
        for t in catalogue.tasks
    ])
    fill(campaign, users, lambda u, a: {"choice": "B"})
    # the race: the items' version read before the new items, the labels after them
    monkeypatch.setattr(dashboard_cache, "_kept", lambda key, compute: next(
        (v for k, v in kept.items() if k.startswith("items:")), None) if key.startswith("items:") else compute())
    assert campaign_dashboard_cached(campaign=campaign) == campaign_dashboard_recomputed(campaign=campaign)


def test_an_annotators_label_change_makes_the_next_load_recompute_and_equal_a_full_recompute():
    from annotation.label_revision import label_revise

    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users)
    fill(campaign, users, lambda u, a: {"choice": "A"})
    before = campaign_dashboard_cached(campaign=campaign)
    last = campaign.assignments.filter(annotator=users[2], status="submitted").order_by("-finished_at", "-pk").first()
    label_revise(token=last.token, annotator=users[2], idempotency_key=uuid.uuid4(), answer={"choice": "B"})
    after = campaign_dashboard_cached(campaign=campaign)
    assert after != before and after == campaign_dashboard_recomputed(campaign=campaign)
