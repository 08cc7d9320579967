"""annotation.calibrated_preference: the EASEL human-preference table's calibrated columns are ppi_py's
mean interval on the people's choices, S's sign on the same pairs, and S's sign on every other
cross-agent pair of candidate canvases (enumerated independently here)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from ppi_py import ppi_mean_ci

from annotation.calibrated_preference import s_sign
from annotation.label_models import PairwiseLabel
from annotation.models import Item
from annotation.validation_dashboards import similarity_panel
from leaderboard.easel.models import EaselEpisode, EaselStep
from tests.annotation.helpers import annotators, fill
from tests.annotation.validation_factories import EaselWorld, canvas_campaign

pytestmark = pytest.mark.django_db

VALUE = {"A": 1.0, "B": 0.0, "tie": 0.5}


def _candidates(world: EaselWorld) -> dict[int, list[EaselStep]]:
    """Per reference: the ¼, ½ and last stored canvas of each episode (the items' population)."""
    out: dict[int, list[EaselStep]] = {}
    for episode in EaselEpisode.objects.filter(run__in=world.runs, kind="reconstruction", status="done").order_by("run_id", "position"):
        stored = list(EaselStep.objects.filter(episode=episode, canvas_png__isnull=False, s__isnull=False).order_by("index"))
        picked = {}
        for f in (0.25, 0.5, 1.0):
            step = stored[max(0, round(f * len(stored)) - 1)]
            picked[step.pk] = step
        out.setdefault(episode.task_id, []).extend(picked.values())
    return out


@pytest.fixture
def labelled():
    users = annotators(3)
    world = EaselWorld()
    campaign = canvas_campaign(world, annotators=users, pairs_per_task=8)

    def choose(user, assignment):
        # people follow SSIM with an annotator-specific offset; sometimes against S
        item = assignment.item
        gap = item.easel_step_a.ssim - item.easel_step_b.ssim + 0.05 * (users.index(user) - 1)
        canonical = "tie" if abs(gap) < 0.02 else "A" if gap > 0 else "B"
        if canonical == "tie" or not assignment.swapped:
            return {"choice": canonical}
        return {"choice": "B" if canonical == "A" else "A"}

    fill(campaign, users, choose)
    return world, campaign


def test_the_calibrated_preference_rate_is_ppi_mean_ci_on_choices_and_s_sign(labelled):
    world, campaign = labelled
    panel = similarity_panel(campaign=campaign, seed=3)["calibrated"]
    items = {i.pk: i for i in Item.objects.filter(campaign=campaign, is_gold=False)
             .select_related("easel_step_a__episode__run", "easel_step_b__episode__run")}
    choices: dict[int, list[float]] = {}
    for item_id, choice in PairwiseLabel.objects.filter(campaign=campaign).values_list("item_id", "choice"):
        choices.setdefault(item_id, []).append(VALUE[choice])
    labelled_pairs = {frozenset((i.easel_step_a_id, i.easel_step_b_id)) for i in items.values()}
    checked = 0
    for row in panel["agents"]:
        agent = row["agent"]
        human, s_same, s_other = [], [], []
        for item in items.values():
            a, b = item.easel_step_a, item.easel_step_b
            agents = (a.episode.run.agent_name, b.episode.run.agent_name)
            if agent not in agents or agents[0] == agents[1] or len(choices.get(item.pk, ())) != campaign.k:
                continue
            y, yhat = float(np.mean(choices[item.pk])), s_sign(a.s, b.s)
            human.append(y if agents[0] == agent else 1 - y)
            s_same.append(yhat if agents[0] == agent else 1 - yhat)
        for steps in _candidates(world).values():
            for a, b in itertools.combinations(steps, 2):
                agents = (a.episode.run.agent_name, b.episode.run.agent_name)
                if agent not in agents or agents[0] == agents[1] or frozenset((a.pk, b.pk)) in labelled_pairs:
                    continue
                yhat = s_sign(a.s, b.s)
                s_other.append(yhat if agents[0] == agent else 1 - yhat)
        assert row["n_human"] == len(human) and row["n_s_only"] == len(s_other) and len(s_other) > 0
        assert row["people"] == pytest.approx(np.mean(human))
        if len(human) >= 2:
            lo, hi = ppi_mean_ci(np.array(human), np.array(s_same), np.array(s_other), alpha=0.1, lam=row["lam"])
            assert (row["lo"], row["hi"]) == pytest.approx((float(lo[0]), float(hi[0])))
            assert 0 <= row["lam"] <= 1
            # λ tuned: never wider than people alone (up to the estimate of λ)
            assert row["hi"] - row["lo"] <= (row["people_hi"] - row["people_lo"]) * 1.05
            checked += 1
    assert checked >= 2  # EaselWorld's three agents


def test_same_episode_pairs_do_not_count_towards_an_agents_rate(labelled):
    _, campaign = labelled
    panel = similarity_panel(campaign=campaign, seed=3)["calibrated"]
    cross = sum(1 for i in Item.objects.filter(campaign=campaign, is_gold=False).select_related(
        "easel_step_a__episode", "easel_step_b__episode") if i.easel_step_a.episode.run_id != i.easel_step_b.episode.run_id)
    assert panel["n_pairs_cross_agent"] == cross
    assert sum(r["n_human"] for r in panel["agents"]) == 2 * panel["n_pairs_labelled"]


def test_a_campaign_without_labels_says_so():
    world = EaselWorld()
    campaign = canvas_campaign(world, annotators=annotators(3))
    panel = similarity_panel(campaign=campaign)["calibrated"]
    assert panel["agents"] == [] and "no complete" in panel["note"]


def test_the_dashboard_shows_the_calibrated_preference_table(labelled, client, rita):
    _, campaign = labelled
    client.force_login(rita)
    page = client.get(f"/annotate/campaigns/{campaign.pk}/").content.decode()
    assert 'id="similarity-calibrated"' in page and "data-calibrated=" in page
    api = client.get(f"/api/v1/campaigns/{campaign.pk}/dashboard").json()
    assert api["extras"]["validation"]["calibrated"]["agents"]
