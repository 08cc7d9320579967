"""Human validation starts only after the pilot's launch gates pass (Ekphrasis App. D.3)."""

import random

import pytest

from annotation import item_creation, services
from annotation.choices import CampaignKind, Dimension
from annotation.errors import LaunchGatesFailed
from annotation.models import Campaign
from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import LaunchGateOverride
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def failing_run():
    task_set, models = population(n_models=4, n_tasks=2, name="launch")
    run = simulated_run(task_set, models, budget=8, dimensions="U")  # no Novelty, swaps or auxiliary judges
    judge_runs.judge_run_execute_inline(run=run)
    return run


def _draft_campaign(task_set):
    campaign = services.campaign_create(name="validation", kind=CampaignKind.TEXT_PAIRWISE, task_set=task_set)
    responses = list(task_set.tasks.first().responses.order_by("pk")[:2])
    item_creation.items_create(campaign=campaign, specs=[item_creation.ItemSpec(
        task=responses[0].task, dimension=Dimension.USEFULNESS, response_a=responses[0], response_b=responses[1])],
        rng=random.Random(0))
    return campaign


def test_a_campaign_does_not_open_from_a_run_whose_gates_fail(failing_run):
    campaign = _draft_campaign(failing_run.task_set)
    with pytest.raises(LaunchGatesFailed, match=rf"judge run #{failing_run.pk} has not passed its launch gates"):
        services.campaign_status_set(campaign=campaign, status=Campaign.Status.OPEN)
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.DRAFT


def test_a_campaign_cannot_be_created_open_from_such_a_run(failing_run):
    with pytest.raises(LaunchGatesFailed, match="an admin can override"):
        services.campaign_create(name="open now", kind=CampaignKind.TEXT_PAIRWISE, task_set=failing_run.task_set,
                                 status=Campaign.Status.OPEN)
    assert not Campaign.objects.exists()


def test_an_admins_recorded_override_lets_it_open(failing_run, adam):
    campaign = _draft_campaign(failing_run.task_set)
    LaunchGateOverride.objects.create(run=failing_run, reason="smoke pilot", failed_gates=["(vii)"], created_by=adam)
    services.campaign_status_set(campaign=campaign, status=Campaign.Status.OPEN)
    assert campaign.status == Campaign.Status.OPEN


def test_a_task_set_without_a_finished_run_opens_as_before():
    task_set, _ = population(n_models=2, n_tasks=1, name="norun")
    campaign = _draft_campaign(task_set)
    services.campaign_status_set(campaign=campaign, status=Campaign.Status.OPEN)
    assert campaign.status == Campaign.Status.OPEN
