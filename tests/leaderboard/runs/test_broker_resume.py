"""End to end on the production path: a run of each protocol is cancelled and resumed through the public
API of this process, which sends the resumed dispatch through Redis; a real Celery worker (another
process, same database: run it on PostgreSQL) takes it and the run ends done, its error cleared and its
results present."""

from __future__ import annotations

import pytest

from leaderboard.runs.models import RunStatus
from tests.leaderboard.test_tasks import BROKER_URL, QUEUE, broker, start_worker, stop, wait_for  # noqa: F401


@pytest.fixture
def through_the_broker(broker, settings):  # noqa: F811
    """This process sends its jobs to the broker (as the web process does with CELERY_BROKER_URL set)."""
    from evalsite.celery import app

    saved = {k: app.conf[k] for k in ("task_always_eager", "broker_url", "task_default_queue")}
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.update(task_always_eager=False, broker_url=BROKER_URL, task_default_queue=QUEUE)
    yield
    app.conf.update(**saved)  # the connection pool stays open for the next test of this process


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
def test_cancel_then_resume_through_the_api_and_a_real_worker_ends_each_kind_done(
        protocol, api, through_the_broker, tmp_path):
    run = protocol.make_run()
    assert api.post(f"/api/v1/{protocol.api}/{run.pk}/cancel").json()["progress"]["status"] == "failed"
    assert api.post(f"/api/v1/{protocol.api}/{run.pk}/resume").status_code == 202
    worker = start_worker(tmp_path / "worker.log", ATELIER_EMBED_CACHE_DIR=str(tmp_path / "embed-cache"))
    try:
        wait_for(lambda: type(run).objects.get(pk=run.pk).status == RunStatus.DONE, 180, f"the {protocol.name} run")
    finally:
        stop(worker)
    assert "runs.unit" in (tmp_path / "worker.log").read_text()
    progress = api.get(f"/api/v1/{protocol.api}/{run.pk}/").json()["progress"]
    assert (progress["status"], progress["error"]) == ("done", "")
    run.refresh_from_db()
    assert protocol.results_present(run)
