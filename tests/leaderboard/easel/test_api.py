"""/api/v1/easel/: a researcher starts a (simulated) run, polls it, cancels or resumes it, pages through
its episodes and steps, and reads the suite's leaderboard with its ETag."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from leaderboard.api_tokens.services import api_token_create
from leaderboard.easel import services
from leaderboard.easel.models import EaselEpisode, EaselRun, EaselStep

pytestmark = pytest.mark.django_db


def token_client(user) -> APIClient:
    _, secret = api_token_create(user=user, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def test_a_researcher_creates_a_simulated_run_queued_on_commit(rita, suite, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = token_client(rita).post("/api/v1/easel/runs/create",
                                           {"task_set": suite.pk, "agent": "simulated", "skill": 0.5}, format="json")
    assert response.status_code == 201, response.json()
    assert len(queued) == 1
    run = EaselRun.objects.get(pk=response.json()["run"]["id"])
    assert run.is_simulated and response.json()["progress"]["episodes_total"] == run.episodes_total


def test_skill_for_a_non_simulated_agent_is_a_400_with_the_services_message(rita, suite):
    response = token_client(rita).post("/api/v1/easel/runs/create",
                                       {"task_set": suite.pk, "agent": "painter", "skill": 0.5}, format="json")
    assert response.status_code == 400
    assert response.json()["error"] == "run_invalid"


def test_a_finished_run_lists_episodes_and_steps_and_feeds_the_leaderboard(rita, suite):
    run = services.easel_run_execute_inline(run=services.easel_run_create(task_set=suite, agent="simulated", skill=0.7))
    client = token_client(rita)
    detail = client.get(f"/api/v1/easel/runs/{run.pk}/").json()
    assert detail["progress"]["status"] == "done"
    episodes = client.get(f"/api/v1/easel/runs/{run.pk}/episodes/").json()["results"]
    assert len(episodes) == run.episodes_total
    with_steps = next(e for e in episodes if EaselStep.objects.filter(episode_id=e["id"]).exists())
    steps = client.get(f"/api/v1/easel/episodes/{with_steps['id']}/steps/?page_size=3").json()
    assert len(steps["results"]) <= 3 and all("action" in s for s in steps["results"])
    board = client.get(f"/api/v1/easel/leaderboard?task_set={suite.pk}")
    assert board.status_code == 200 and board.json()["updated"]
    assert client.get(f"/api/v1/easel/leaderboard?task_set={suite.pk}",
                      HTTP_IF_NONE_MATCH=board["ETag"]).status_code == 304


def test_a_final_s_changed_in_place_changes_the_etag_and_the_leaderboard_shows_it(rita, suite):
    run = services.easel_run_execute_inline(run=services.easel_run_create(task_set=suite, agent="simulated", skill=0.7))
    client = token_client(rita)
    url = f"/api/v1/easel/leaderboard?task_set={suite.pk}"
    before = client.get(url)
    # a hand edit (the admin, a rescoring): the same run, no new finish
    EaselEpisode.objects.filter(run=run, kind="reconstruction").update(final_s=0.123)
    after = client.get(url, HTTP_IF_NONE_MATCH=before["ETag"])
    assert after.status_code == 200 and after["ETag"] != before["ETag"]
    (agent,) = after.json()["leaderboard"]["agents"]
    assert agent["final_s"][0] == pytest.approx(0.123)


def test_a_text_or_json_column_edited_by_hand_changes_the_etag(rita, suite):
    """The recogniser, semantic summary and progress curve are text and JSON, which the fingerprint's sums
    cannot name: a hand edit that saves the episode still changes the ETag (and the home page's cache key)."""
    run = services.easel_run_execute_inline(run=services.easel_run_create(task_set=suite, agent="simulated", skill=0.7))
    client = token_client(rita)
    url = f"/api/v1/easel/leaderboard?task_set={suite.pk}"
    before = client.get(url)
    episode = EaselEpisode.objects.filter(run=run, status=EaselEpisode.Status.DONE).order_by("pk").first()
    episode.recogniser = "edited by hand"
    episode.save()
    after = client.get(url, HTTP_IF_NONE_MATCH=before["ETag"])
    assert after.status_code == 200 and after["ETag"] != before["ETag"]


def test_cancel_then_resume(rita, suite, django_capture_on_commit_callbacks):
    run = services.easel_run_create(task_set=suite, agent="simulated", skill=0.5)
    client = token_client(rita)
    assert client.post(f"/api/v1/easel/runs/{run.pk}/cancel").json()["progress"]["status"] == "failed"
    with django_capture_on_commit_callbacks(execute=False):
        assert client.post(f"/api/v1/easel/runs/{run.pk}/resume").status_code == 202


def test_an_annotator_is_refused(alice, suite):
    response = token_client(alice).get("/api/v1/easel/runs/")
    assert response.status_code == 403 and response.json()["message"] == "Researchers only."
