"""The pairwise dashboards from tallies equal the dashboards built from label rows, field for field,
after every kind of change a dashboard shows (submissions with flags, times and simulated labels, gold
answers, skips, expiry, stale labels, adjudication, a deleted item, a finished judge run), and the
strict majority of a tally is engine.agreement.majority_label of the labels it counts."""

from __future__ import annotations

import itertools
import uuid
from datetime import timedelta

import numpy as np
import pytest

from annotation import item_creation, selectors, services
from annotation.choices import CampaignKind
from annotation.dashboard_tallies import campaign_dashboard_tallied, strict_majority
from annotation.label_models import PairwiseLabel
from annotation.models import Campaign
from engine import agreement
from leaderboard.ekphrasis import judge_runs
from tests.annotation.factories import (
    Catalogue,
    RenderFactory,
    campaign_for,
    image_campaign,
    pairwise_campaign,
)
from tests.annotation.helpers import annotators
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

CHOICES = ("A", "B", "tie")


def both(campaign: Campaign) -> tuple[selectors.Dashboard, selectors.Dashboard]:
    """(from tallies, from label rows), with the same judge sources."""
    outcomes, scores = selectors.judge_sources(campaign=campaign)
    sources = {"judge_outcomes": outcomes, "judge_scores": scores,
               "judge_conditions": selectors.judge_condition_source(campaign=campaign)}
    return (campaign_dashboard_tallied(campaign=campaign, **sources),
            selectors.campaign_dashboard(campaign=campaign, **sources))


def assert_equal(campaign: Campaign) -> selectors.Dashboard:
    tallied, from_rows = both(campaign)
    for name in selectors.Dashboard.__dataclass_fields__:  # field by field: a failure names the field
        assert getattr(tallied, name) == getattr(from_rows, name), name
    return tallied


def label_round(campaign, users, answer, *, n=None, simulated=lambda u: False):
    """Each user in turn takes and labels one item (``n`` rounds, or until nobody gets one)."""
    rounds = itertools.count() if n is None else range(n)
    for _ in rounds:
        took = False
        for user in users:
            assignment = services.assignment_next(campaign=campaign, annotator=user)
            if assignment is None:
                continue
            took = True
            services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(),
                                  answer=answer(user, assignment), time_on_item_ms=1000 + 37 * user.pk + assignment.item_id,
                                  is_simulated=simulated(user))
        if not took:
            return


def varied(user, assignment):
    answer = {"choice": CHOICES[(user.pk * 7 + assignment.item_id) % 3]}
    if (user.pk + assignment.item_id) % 5 == 0:
        answer["flag"] = {"reason": "ambiguous_brief", "note": "the brief reads two ways"}
    return answer


def judge_run_finished(campaign, seed: int):
    run = judge_runs.judge_run_create(task_set=campaign.task_set, judge_name="simulated", dimensions="N",
                                      budget_per_task=6, seed=seed, novelty_anchor="generic", config={"n_boot": 20})
    judge_runs.judge_run_execute_inline(run=run)


def test_the_text_pairwise_dashboard_from_tallies_equals_the_one_from_label_rows_after_every_change():
    users = annotators(5)
    catalogue = Catalogue(n_tasks=3)
    campaign = pairwise_campaign(catalogue, annotators=users, gold_rate=0.2)
    researcher = UserFactory(username="rita", role="researcher")
    assert_equal(campaign)  # nothing labelled yet
    added, _ = item_creation.items_create(campaign=campaign, specs=[
        item_creation.ItemSpec(task=t, dimension=d, response_a=catalogue.response(t, 1), response_b=catalogue.response(t, 2))
        for t in catalogue.tasks for d in ("usefulness", "expressiveness")
    ])
    item_creation.item_gold_set(item=added[0], answer="A")
    split_item = campaign.items.filter(is_gold=False).order_by("position").first().pk

    def answer(user, assignment):
        # One item is split three ways whoever labels it (gold falls at drawn positions, so who labels
        # which item is not fixed): its labels are A, B, tie in the order given, pressed on the side
        # shown; the others vary.
        if assignment.item_id == split_item:
            meant = CHOICES[PairwiseLabel.objects.filter(item_id=split_item).count()]
            return {"choice": {"A": "B", "B": "A"}.get(meant, meant) if assignment.swapped else meant}
        return varied(user, assignment)

    label_round(campaign, users[:3], answer, n=4, simulated=lambda u: u == users[2])
    assert_equal(campaign)  # partly labelled, three dimensions, gold answers
    label_round(campaign, users, answer)
    dashboard = assert_equal(campaign)  # complete
    assert any(q.gold_n for q in dashboard.quality) and any(q.flags for q in dashboard.quality)
    assert dashboard.n_simulated and len(dashboard.rows) == 4
    judge_run_finished(campaign, seed=3)
    assert_equal(campaign)  # the join against a finished run
    split = next(row["item"] for row in assert_equal(campaign).adjudication)
    adjudication = services.adjudication_request(item=campaign.items.get(pk=split.id), researcher=researcher)
    assert_equal(campaign)
    services.adjudication_resolve(adjudication=adjudication, researcher=researcher, outcome="A")
    assert_equal(campaign)
    item = campaign.items.filter(is_gold=False).order_by("position").first()
    item.response_a.core_idea = "A rewritten idea"
    item.response_a.save()
    item_creation.campaign_content_refresh(campaign=campaign)
    assert assert_equal(campaign).n_stale  # the stale labels leave every number
    newcomer = annotators(1, prefix="late")[0]
    services.campaign_annotators_add(campaign=campaign, annotators=[newcomer])
    held = services.assignment_next(campaign=campaign, annotator=newcomer)
    services.assignment_skip(token=held.token, annotator=newcomer)
    assert_equal(campaign)  # a skip-only annotator has a quality row
    held = services.assignment_next(campaign=campaign, annotator=newcomer)
    assert services.assignments_expire(campaign=campaign, now=held.expires_at + timedelta(seconds=1)) == 1
    assert_equal(campaign)
    campaign.items.filter(is_gold=False).order_by("-position").first().delete()
    assert_equal(campaign)


def test_the_leave_one_out_majority_of_two_annotators_counts_when_k_is_two():
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=users, k=2)
    label_round(campaign, users, varied)
    dashboard = assert_equal(campaign)
    assert sum(q.loo_n for q in dashboard.quality) == sum(q.n_labels for q in dashboard.quality)


def test_the_image_preference_dashboard_from_tallies_equals_the_one_from_label_rows():
    users = annotators(3)
    catalogue = Catalogue(n_tasks=3)
    renders = [RenderFactory(response=r) for r in catalogue.responses.values()]
    campaign = image_campaign(catalogue, renders, annotators=users)
    label_round(campaign, users, varied, n=2)
    assert_equal(campaign)
    label_round(campaign, users, varied)
    assert assert_equal(campaign).rows[0].n_complete


def test_other_kinds_are_refused():
    campaign = campaign_for(CampaignKind.STRATEGY, Catalogue(n_tasks=1))
    with pytest.raises(ValueError, match="label rows"):
        campaign_dashboard_tallied(campaign=campaign)


@pytest.mark.parametrize("labels", [("A", "A", "B"), ("A", "B", "tie"), ("tie", "tie", "tie"), ("A", "B"), ("B",),
                                    ("A", "A", "B", "B"), ("A", "A", "A", "B", "tie")])
def test_the_strict_majority_of_a_tally_is_the_majority_label_of_its_labels(labels):
    tally = np.array([[labels.count(c) for c in CHOICES]])
    expected = agreement.majority_label(list(labels))
    assert strict_majority(tally).tolist() == [CHOICES.index(expected) if expected is not None else -1]


def test_a_campaign_without_labels_has_no_quality_rows_and_no_complete_items():
    campaign = pairwise_campaign(Catalogue(n_tasks=1))
    tallied = assert_equal(campaign)
    assert tallied.quality == [] and tallied.rows[0].n_complete == 0


@pytest.mark.parametrize("kind", [CampaignKind.TEXT_PAIRWISE, CampaignKind.IMAGE_PREFERENCE])
def test_a_campaign_without_items_gives_the_same_empty_dashboard(kind):
    campaign = campaign_for(kind, Catalogue(n_tasks=1))
    assert assert_equal(campaign).rows == both(campaign)[1].rows
