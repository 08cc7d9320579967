"""The run lifecycle's rules, each tested once per protocol (judge, EASEL, C² runs) through the public
API, with the on-commit callbacks run for real (no broker: Celery runs them eagerly in this process)."""

from __future__ import annotations

import threading
import time

import pytest

from leaderboard.runs.errors import RunStateConflict
from leaderboard.runs.lifecycle import (
    job_kind_of,
    run_cancel,
    run_claim_finalise,
    run_fail,
    run_pending_units,
    run_prompt_versions,
)
from leaderboard.runs.models import RunStatus
from leaderboard.runs.starting import run_resume, run_start

pytestmark = pytest.mark.django_db


def test_cancel_then_resume_through_the_api_ends_done_with_the_error_cleared_and_results_present(
        protocol, api, django_capture_on_commit_callbacks):
    run = protocol.make_run()
    cancelled = api.post(f"/api/v1/{protocol.api}/{run.pk}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["progress"]["status"] == "failed"
    with django_capture_on_commit_callbacks(execute=True) as queued:
        assert api.post(f"/api/v1/{protocol.api}/{run.pk}/resume").status_code == 202
    assert len(queued) == 1
    progress = api.get(f"/api/v1/{protocol.api}/{run.pk}/").json()["progress"]
    assert (progress["status"], progress["error"], progress["may_resume"]) == ("done", "", False)
    run.refresh_from_db()
    assert protocol.results_present(run)


def test_only_a_pending_or_running_run_can_be_cancelled(protocol, api):
    run = protocol.make_run()
    type(run).objects.filter(pk=run.pk).update(status=RunStatus.DONE)
    response = api.post(f"/api/v1/{protocol.api}/{run.pk}/cancel")
    assert response.status_code == 409
    assert "only a pending or running run can be cancelled" in response.json()["message"]


def test_only_a_failed_run_resumes(protocol, api):
    run = protocol.make_run()
    response = api.post(f"/api/v1/{protocol.api}/{run.pk}/resume")
    assert response.status_code == 409 and "only a failed run resumes" in response.json()["message"]


#: how a researcher names each protocol's run (not Django's lower-cased model names "easel run", "c2 run")
_DISPLAY_NAMES = {"judge": "Judge run", "easel": "EASEL run", "c2": "C² run"}


def test_a_refusal_names_the_run_as_a_researcher_does_and_says_it_is_already_done(protocol, api):
    run = protocol.make_run()
    type(run).objects.filter(pk=run.pk).update(status=RunStatus.DONE)
    name = f"{_DISPLAY_NAMES[protocol.name]} {run.pk}"
    resumed = api.post(f"/api/v1/{protocol.api}/{run.pk}/resume").json()["message"]
    cancelled = api.post(f"/api/v1/{protocol.api}/{run.pk}/cancel").json()["message"]
    assert resumed == f"{name} is already done: only a failed run resumes"
    assert cancelled == f"{name} is already done: only a pending or running run can be cancelled"


def test_a_run_that_failed_for_a_reason_resuming_cannot_change_is_not_offered_a_resume(protocol, api):
    run = protocol.make_run()
    run_fail(type(run), run.pk, "task 1: a visual task without an image", resumable=False)
    progress = api.get(f"/api/v1/{protocol.api}/{run.pk}/").json()["progress"]
    assert progress["status"] == "failed" and progress["may_resume"] is False
    response = api.post(f"/api/v1/{protocol.api}/{run.pk}/resume")
    assert response.status_code == 409 and "resuming cannot change" in response.json()["message"]


def test_a_cancelled_run_is_offered_a_resume(protocol, api):
    run = protocol.make_run()
    api.post(f"/api/v1/{protocol.api}/{run.pk}/cancel")
    assert api.get(f"/api/v1/{protocol.api}/{run.pk}/").json()["progress"]["may_resume"] is True


def test_pending_units_move_a_failed_run_to_running_and_clear_its_error(protocol):
    run = protocol.make_run()
    run_fail(type(run), run.pk, "cancelled by rita")
    units = run_pending_units(job_kind_of(run), run.pk)
    run.refresh_from_db()
    assert (run.status, run.error) == (RunStatus.RUNNING, "")
    assert units and run.started_at is not None


def test_pending_units_leave_a_non_resumable_run_failed(protocol):
    run = protocol.make_run()
    run_fail(type(run), run.pk, "bad configuration", resumable=False)
    assert run_pending_units(job_kind_of(run), run.pk) == []
    run.refresh_from_db()
    assert (run.status, run.error) == (RunStatus.FAILED, "bad configuration")


def test_exactly_one_caller_wins_the_claim_to_finalise(protocol):
    run = protocol.make_run()
    run_pending_units(job_kind_of(run), run.pk)
    assert [run_claim_finalise(type(run), run.pk) for _ in range(3)] == [True, False, False]


def test_a_failure_never_overwrites_a_done_run(protocol):
    run = protocol.make_run()
    type(run).objects.filter(pk=run.pk).update(status=RunStatus.DONE)
    run_fail(type(run), run.pk, "late error")
    run.refresh_from_db()
    assert (run.status, run.error) == (RunStatus.DONE, "")


def test_resume_refuses_in_the_service_not_only_in_the_view(protocol):
    run = protocol.make_run()
    with pytest.raises(RunStateConflict, match="only a failed run resumes"):
        run_resume(run)
    run_cancel(run)
    with pytest.raises(RunStateConflict, match="only a pending or running run can be cancelled"):
        run_cancel(run)


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_a_background_start_returns_at_once_and_the_run_finishes_in_a_thread(protocol, settings):
    settings.ATELIER_EAGER_JOBS_IN_BACKGROUND = True
    run = protocol.make_run()
    before = {t.ident for t in threading.enumerate()}
    run_start(run, background=True)  # outside a transaction: on_commit fires at once, into a thread
    started = [t for t in threading.enumerate() if t.ident not in before]
    assert started and all(t.daemon for t in started)
    for thread in started:
        thread.join(timeout=120)
    deadline = time.monotonic() + 10
    while type(run).objects.get(pk=run.pk).status != RunStatus.DONE and time.monotonic() < deadline:
        time.sleep(0.1)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and protocol.results_present(run)


def _made_with_other_prompts(run):
    """``run`` as if a model were sent its prompts (the cases are simulated) and it had been made by a code whose
    every prompt version was "old-v0"."""
    from leaderboard.models import SubjectModel

    if run._meta.model_name == "judgerun":
        judge = SubjectModel.objects.create(display_name="a-judge", role=SubjectModel.Role.JUDGE,
                                            base_url="http://127.0.0.1:9/v1", provider_id="judge")
        type(run).objects.filter(pk=run.pk).update(judge_model=judge)
    if run._meta.model_name == "easelrun":
        type(run).objects.filter(pk=run.pk).update(config={**run.config, "recogniser": "a-reader-model"})
    if run._meta.model_name == "c2run":
        rater = SubjectModel.objects.create(display_name="a-rater", role=SubjectModel.Role.JUDGE,
                                            base_url="http://127.0.0.1:9/v1", provider_id="rater")
        type(run).objects.filter(pk=run.pk).update(rater_model=rater)
        run.subjects.add(SubjectModel.objects.create(display_name="a-subject", base_url="http://127.0.0.1:9/v1",
                                                     provider_id="subject"))
    run.refresh_from_db()
    versions = run_prompt_versions(job_kind_of(run), run)
    assert versions  # each protocol names the versions of what it sends a model
    type(run).objects.filter(pk=run.pk).update(config={**run.config, **dict.fromkeys(versions, "old-v0")})
    run.refresh_from_db()
    return run, versions


def test_a_run_made_with_other_prompts_is_not_offered_a_resume_and_the_refusal_names_both_versions(protocol, api):
    run, versions = _made_with_other_prompts(protocol.make_run())
    api.post(f"/api/v1/{protocol.api}/{run.pk}/cancel")
    assert api.get(f"/api/v1/{protocol.api}/{run.pk}/").json()["progress"]["may_resume"] is False
    response = api.post(f"/api/v1/{protocol.api}/{run.pk}/resume")
    message = response.json()["message"]
    assert response.status_code == 409 and message.endswith("so start a new run")
    for name, now in versions.items():
        assert f"{name} 'old-v0', this code {now!r}" in message


def test_a_dispatch_of_a_run_whose_prompts_changed_fails_it_for_good_and_hands_out_no_unit(protocol):
    run, _ = _made_with_other_prompts(protocol.make_run())
    assert run_pending_units(job_kind_of(run), run.pk) == []
    run.refresh_from_db()
    assert (run.status, run.resumable) == (RunStatus.FAILED, False) and "'old-v0'" in run.error



@pytest.mark.parametrize("path", ["/easel/runs/{}/", "/c2/runs/{}/"])
def test_the_run_page_offers_no_resume_to_a_run_whose_prompts_changed_and_says_why(client, rita, settings, tmp_path, path):
    from tests.leaderboard.runs.conftest import CASES

    settings.ATELIER_EMBED_CACHE_DIR = tmp_path / "embed-cache"
    case = CASES["easel" if path.startswith("/easel") else "c2"]
    run, _ = _made_with_other_prompts(case.make_run())
    run_cancel(run)
    client.force_login(rita)
    page = client.get(path.format(run.pk)).content.decode()
    assert '<button type="submit">Resume' not in page
    assert 'id="prompts-changed"' in page and "&#x27;old-v0&#x27;" in page and "start a new run" in page


def _mark_running_before(model, run_id: int, *, queued: bool, now) -> None:
    """What run_pending_units wrote before its three UPDATEs became one (the reference)."""
    model.objects.filter(pk=run_id, status__in=[RunStatus.PENDING, RunStatus.FAILED], resumable=True).update(
        status=RunStatus.RUNNING, error="")
    model.objects.filter(pk=run_id).exclude(queued=queued).update(queued=queued)
    model.objects.filter(pk=run_id, started_at=None).exclude(status=RunStatus.FAILED).update(started_at=now)


def test_the_one_update_that_marks_a_job_running_writes_what_the_three_did_in_every_state(monkeypatch):
    # The dispatch's serial start: the three UPDATEs (status and error, queued, start time) are one statement now;
    # every starting state — status, resumable, with or without a start time, queued or not — ends the same.
    import datetime
    import itertools

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from leaderboard.runs import lifecycle
    from tests.leaderboard.judging_factories import population, simulated_run

    task_set, models = population(n_models=3, n_tasks=2, name="mark-running")
    run = simulated_run(task_set, models, budget=3)
    model, kind = type(run), job_kind_of(run)
    now = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    earlier = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
    monkeypatch.setattr(lifecycle.timezone, "now", lambda: now)
    fields = ("status", "error", "resumable", "queued", "started_at")
    for status, resumable, started_at, was_queued, queued in itertools.product(
            RunStatus.values, (True, False), (None, earlier), (True, False), (True, False)):
        state = {"status": status, "error": "boom", "resumable": resumable, "queued": was_queued,
                 "started_at": started_at}
        model.objects.filter(pk=run.pk).update(**state)
        _mark_running_before(model, run.pk, queued=queued, now=now)
        expected = model.objects.filter(pk=run.pk).values(*fields).get()
        model.objects.filter(pk=run.pk).update(**state)
        with CaptureQueriesContext(connection) as queries:
            units = run_pending_units(kind, run.pk, queued=queued)
        assert model.objects.filter(pk=run.pk).values(*fields).get() == expected, state
        assert bool(units) == (expected["status"] in (RunStatus.RUNNING, RunStatus.FINALISING)), state
        assert sum(q["sql"].startswith("UPDATE") for q in queries.captured_queries) == 1  # three before
