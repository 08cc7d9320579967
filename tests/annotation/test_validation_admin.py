"""Admins fill the EASEL/C² validation campaigns from stored runs: choose run(s), rule and k."""

from __future__ import annotations

import pytest

from annotation import services
from annotation.choices import CampaignKind
from tests.annotation.validation_factories import C2World, EaselWorld
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_admin_draws_uos_items_from_a_c2_run(client, adam):
    world = C2World()
    campaign = services.campaign_create(name="uos", kind=CampaignKind.UOS_RATING, task_set=world.task_set)
    assert client.login(username=adam.username, password=PASSWORD)
    assert "Items from runs" in client.get(f"/admin/annotation/campaign/{campaign.pk}/change/").content.decode()
    url = f"/admin/annotation/campaign/{campaign.pk}/items-from-runs/"
    assert client.get(url).status_code == 200
    response = client.post(url, {"run": world.run.pk, "rule": "random", "k": 5, "seed": 1})
    assert response.status_code == 302
    assert campaign.items.count() == 5


def test_admin_draws_canvas_pairs_from_easel_runs(client, adam):
    world = EaselWorld()
    campaign = services.campaign_create(name="canvas", kind=CampaignKind.CANVAS_SIMILARITY, task_set=world.task_set)
    assert client.login(username=adam.username, password=PASSWORD)
    response = client.post(f"/admin/annotation/campaign/{campaign.pk}/items-from-runs/",
                           {"runs": [r.pk for r in world.runs], "rule": "across_agents", "k": 2, "seed": 0})
    assert response.status_code == 302
    assert campaign.items.count() == 2 * len(world.references)


def test_an_unknown_rule_is_a_form_error_not_a_500(client, adam):
    world = EaselWorld()
    campaign = services.campaign_create(name="canvas", kind=CampaignKind.CANVAS_SIMILARITY, task_set=world.task_set)
    assert client.login(username=adam.username, password=PASSWORD)
    response = client.post(f"/admin/annotation/campaign/{campaign.pk}/items-from-runs/",
                           {"runs": [world.runs[0].pk], "rule": "sideways", "k": 2, "seed": 0})
    assert response.status_code == 200 and "sideways" in response.content.decode()
    assert campaign.items.count() == 0


def test_handwriting_from_runs_without_hello_canvases_shows_the_reason(client, adam):
    world = EaselWorld()
    campaign = services.campaign_create(name="hw", kind=CampaignKind.HANDWRITING, task_set=world.task_set)
    world.runs[0].episodes.filter(task=world.hello).delete()
    assert client.login(username=adam.username, password=PASSWORD)
    response = client.post(f"/admin/annotation/campaign/{campaign.pk}/items-from-runs/",
                           {"runs": [world.runs[0].pk], "k": 5, "seed": 0})
    assert response.status_code == 200 and "no finished handwriting episode" in response.content.decode()


@pytest.mark.parametrize("run_id", [2**63, 10**30])
def test_a_run_id_past_every_id_column_is_a_form_error_not_a_500(client, adam, run_id):
    # the chosen runs are looked up with pk__in, where SQLite cannot even bind such an integer
    world = EaselWorld()
    campaign = services.campaign_create(name="canvas", kind=CampaignKind.CANVAS_SIMILARITY, task_set=world.task_set)
    assert client.login(username=adam.username, password=PASSWORD)
    response = client.post(f"/admin/annotation/campaign/{campaign.pk}/items-from-runs/",
                           {"runs": [world.runs[0].pk, run_id], "rule": "across_agents", "k": 2, "seed": 0})
    assert response.status_code == 200 and "not one of the available choices" in response.content.decode()
    assert campaign.items.count() == 0
