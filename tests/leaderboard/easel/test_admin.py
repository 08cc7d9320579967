"""The EASEL admin pages list runs, episodes, steps and images without loading PNG bytes into forms."""

import pytest
from django.urls import reverse

from leaderboard.easel import services
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", ["easelrun", "easelepisode", "easelstep", "easelimage"])
def test_an_admin_sees_each_easel_list(client, adam, suite, model):
    services.easel_run_create(task_set=suite, agent="simulated")
    assert client.login(username=adam.username, password=PASSWORD)
    assert client.get(reverse(f"admin:easel_{model}_changelist")).status_code == 200


def test_an_episode_change_page_renders_without_its_canvas(client, adam, suite):
    episode = services.easel_run_create(task_set=suite, agent="simulated").episodes.first()
    assert client.login(username=adam.username, password=PASSWORD)
    response = client.get(reverse("admin:easel_easelepisode_change", args=[episode.pk]))
    assert response.status_code == 200 and b"final_canvas_png" not in response.content


@pytest.mark.parametrize("model", ["easelrun", "easelepisode", "easelstep"])
def test_an_admin_cannot_add_or_edit_an_easel_run_record(client, adam, suite, model):
    run = services.easel_run_create(task_set=suite, agent="simulated")
    record = {"easelrun": run, "easelepisode": run.episodes.first()}.get(model)
    assert client.login(username=adam.username, password=PASSWORD)
    assert client.get(reverse(f"admin:easel_{model}_add")).status_code == 403
    if record is not None:
        assert client.post(reverse(f"admin:easel_{model}_change", args=[record.pk]), {"seed": "9"}).status_code == 403
