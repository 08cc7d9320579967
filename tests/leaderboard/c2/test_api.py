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
    # the run's dispatch, and the catalogue's news: its two simulated models are new (one revision move,
    # after which annotation checks its items against the new names)
    assert len(queued) == 2
    run = C2Run.objects.get(pk=response.json()["run"]["id"])
    assert run.is_simulated and C2Sample.objects.filter(run=run).count() == 4


def test_a_model_name_with_an_invisible_character_is_refused(rita, task_set):
    # "simulated-\u200ba" made a new simulated model shown exactly as "simulated-a"
    response = token_client(rita).post("/api/v1/c2/runs/create", {
        "task_set": task_set.pk, "models": ["simulated-a", "simulated-\u200ba"], "n_samples": 1}, format="json")
    assert response.status_code == 400
    assert "invisible character" in response.json()["details"]["models.1"][0]
    assert not C2Run.objects.exists()


def test_an_unknown_model_is_a_400_with_the_services_message(rita, task_set):
    response = token_client(rita).post("/api/v1/c2/runs/create",
                                       {"task_set": task_set.pk, "models": ["no-such-model"]}, format="json")
    assert response.status_code == 400
    assert "no-such-model" in response.json()["message"]


def test_samples_filter_by_model(rita, task_set):
    run = runs.c2_run_create(task_set=task_set, model_names=["simulated-a", "simulated-b"], n_samples=2,
                             rater_name="simulated")
    samples = token_client(rita).get(f"/api/v1/c2/runs/{run.pk}/samples/", {"model": "simulated-b"}).json()["results"]
    assert samples and {s["model"] for s in samples} == {"simulated-b"}


def test_samples_are_paginated_and_results_wait_for_the_run(rita, task_set):
    run = runs.c2_run_create(task_set=task_set, model_names=["simulated-a"], n_samples=3, rater_name="simulated")
    client = token_client(rita)
    page = client.get(f"/api/v1/c2/runs/{run.pk}/samples/?page_size=2").json()
    assert len(page["results"]) == 2 and page["next"]
    assert client.get(f"/api/v1/c2/runs/{run.pk}/results").status_code == 404
    assert client.post(f"/api/v1/c2/runs/{run.pk}/cancel").json()["progress"]["status"] == "failed"
    assert client.post(f"/api/v1/c2/runs/{run.pk}/cancel").status_code == 409


def test_an_admin_imports_a_c2_dataset_file(adam):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("wp.txt", b"[ WP ] A lighthouse keeper finds a door.\n")
    response = token_client(adam).post("/api/v1/c2/task-sets/import", {
        "file": upload, "fmt": "writingprompts", "task_set": "c2-upload", "version": "1"}, format="multipart")
    assert response.status_code == 200, response.json()
    assert response.json()["created"] == 1


def test_a_bad_c2_dataset_names_the_file_and_writes_nothing(adam):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from leaderboard.models import TaskSet

    upload = SimpleUploadedFile("qa.json", b'{"Data": [{"Question": "no answer"}]}')
    response = token_client(adam).post("/api/v1/c2/task-sets/import", {
        "file": upload, "fmt": "triviaqa", "task_set": "c2-broken", "version": "1"}, format="multipart")
    assert response.status_code == 400
    assert all(m.startswith("qa.json") for ms in response.json()["details"].values() for m in ms)
    assert not TaskSet.objects.filter(name="c2-broken").exists()


def test_a_researcher_cannot_import_c2_datasets(rita):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = token_client(rita).post("/api/v1/c2/task-sets/import", {
        "file": SimpleUploadedFile("wp.txt", b"[ WP ] x\n"), "fmt": "writingprompts", "task_set": "s", "version": "1"},
        format="multipart")
    assert response.status_code == 403
