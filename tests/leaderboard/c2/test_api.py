"""/api/v1/c2/: a researcher starts a C² run over simulated subjects and rater (named), polls it,
cancels it, pages through its samples with their ratings and reads its results."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from leaderboard.api_tokens.services import api_token_create
from leaderboard.c2.models import C2Run, C2Sample
from leaderboard.c2.services import runs
from leaderboard.c2.services.imports import c2_tasks_import

pytestmark = pytest.mark.django_db


def token_client(user) -> APIClient:
    _, secret = api_token_create(user=user, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


@pytest.fixture
def task_set(db, settings, tmp_path):
    settings.ATELIER_EMBED_CACHE_DIR = tmp_path / "embed-cache"
    trivia = {"Data": [{"Question": "Which planet is red?", "QuestionId": "q1",
                        "Answer": {"Value": "Mars", "NormalizedAliases": ["mars"]}}]}
    task_set, _ = c2_tasks_import(fmt="triviaqa", name="qa.json", raw=json.dumps(trivia).encode(),
                                  task_set_name="c2-api", version="1")
    return task_set


def test_a_researcher_creates_a_simulated_run(rita, task_set, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = token_client(rita).post("/api/v1/c2/runs/create", {
            "task_set": task_set.pk, "models": ["simulated-a", "simulated-b"], "n_samples": 2, "rater": "simulated",
        }, format="json")
    assert response.status_code == 201, response.json()
    assert len(queued) == 1
    run = C2Run.objects.get(pk=response.json()["run"]["id"])
    assert run.is_simulated and C2Sample.objects.filter(run=run).count() == 4


def test_an_unknown_model_is_a_400_with_the_services_message(rita, task_set):
    response = token_client(rita).post("/api/v1/c2/runs/create",
                                       {"task_set": task_set.pk, "models": ["no-such-model"]}, format="json")
    assert response.status_code == 400
    assert "no-such-model" in response.json()["message"]


def test_samples_are_paginated_and_results_wait_for_the_run(rita, task_set):
    run = runs.c2_run_create(task_set=task_set, model_names=["simulated-a"], n_samples=3, rater_name="simulated")
    client = token_client(rita)
    page = client.get(f"/api/v1/c2/runs/{run.pk}/samples/?page_size=2").json()
    assert len(page["results"]) == 2 and page["next"]
    assert client.get(f"/api/v1/c2/runs/{run.pk}/results").status_code == 404
    assert client.post(f"/api/v1/c2/runs/{run.pk}/cancel").json()["progress"]["status"] == "failed"
    assert client.post(f"/api/v1/c2/runs/{run.pk}/cancel").status_code == 409
