"""The C² admin shows runs, samples and ratings and edits none of them: a run record's numbers come from
its services, and a field of the wrong shape (``subject_names`` a number) broke /c2/ for everyone."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from leaderboard.c2.models import C2Run
from leaderboard.c2.services import runs
from leaderboard.c2.services.imports import c2_tasks_import
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _isolated_caches(settings, tmp_path):
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "provider-cache"


@pytest.fixture
def finished_run() -> C2Run:
    trivia = {"Data": [{"Question": f"Question {k}?", "QuestionId": f"q{k}",
                        "Answer": {"Value": "yes", "NormalizedAliases": ["yes"]}} for k in range(2)]}
    task_set, _ = c2_tasks_import(fmt="triviaqa", name="qa.json", raw=json.dumps(trivia).encode(),
                                  task_set_name="c2-admin", version="1")
    run = runs.c2_run_create(task_set=task_set, model_names=["simulated-one", "simulated-two"], n_samples=1,
                             template="standard", rater_name="simulated")
    return runs.c2_run_execute_inline(run=run)


@pytest.mark.parametrize("model", ["c2run", "c2sample", "c2rating"])
def test_an_admin_sees_each_c2_record_and_cannot_add_one(client, adam, finished_run, model):
    assert client.login(username=adam.username, password=PASSWORD)
    assert client.get(reverse(f"admin:c2_{model}_changelist")).status_code == 200
    assert client.get(reverse(f"admin:c2_{model}_add")).status_code == 403


def test_a_run_record_posted_through_the_admin_is_refused_and_the_c2_page_still_answers(client, adam, finished_run):
    assert client.login(username=adam.username, password=PASSWORD)
    url = reverse("admin:c2_c2run_change", args=[finished_run.pk])
    assert client.get(url).status_code == 200  # shown, read-only
    response = client.post(url, {"subject_names": "5", "template": "standard", "seed": "1"})
    assert response.status_code == 403
    finished_run.refresh_from_db()
    assert finished_run.subject_names == ["simulated-one", "simulated-two"]
    assert client.get("/c2/").status_code == 200


def test_the_sample_list_names_the_empty_verdict_of_ungraded_samples(client, adam, finished_run):
    # A divergent sample has no verdict: its filter entry was a link with no text (<a href="?verdict="></a>).
    finished_run.samples.filter(pk=finished_run.samples.first().pk).update(verdict="")
    assert client.login(username=adam.username, password=PASSWORD)
    body = client.get(reverse("admin:c2_c2sample_changelist")).content.decode()
    assert '<a href="?verdict=">none (not graded)</a>' in body and '<a href="?verdict="></a>' not in body
