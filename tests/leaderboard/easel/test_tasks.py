"""EASEL Celery jobs: eager in-process without a broker (enqueued on commit), and one real worker
through Redis with one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from leaderboard.easel import services
from leaderboard.easel.models import EaselRun
from tests.conftest import subprocess_environment
from tests.leaderboard.test_tasks import BROKER_URL, QUEUE, ROOT, broker, start_worker, stop, wait_for  # noqa: F401


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_a_started_run_runs_eagerly_once_committed(settings, suite):
    assert settings.CELERY_TASK_ALWAYS_EAGER
    run = services.easel_run_create(task_set=suite, agent="mean_colour_fill")
    services.easel_run_start(run=run)  # outside a transaction: on_commit fires at once
    run.refresh_from_db()
    assert run.status == EaselRun.Status.DONE and run.episodes_done == run.episodes_total == 2


@pytest.mark.django_db
def test_a_run_started_inside_a_transaction_is_not_enqueued_before_commit(suite, django_capture_on_commit_callbacks):
    run = services.easel_run_create(task_set=suite, agent="blank_fill")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.easel_run_start(run=run)
    assert len(callbacks) == 1 and EaselRun.objects.get(pk=run.pk).status == EaselRun.Status.PENDING


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_an_easel_run_through_redis(broker, tmp_path, suite):  # noqa: F811
    run = services.easel_run_create(task_set=suite, agent="dominant_colour_fill")
    worker = start_worker(tmp_path / "worker.log")
    try:
        subprocess.run(
            [sys.executable, "-c", "import django; django.setup(); from leaderboard.runs.tasks import run_dispatch; "
             f"run_dispatch.delay('easel_run', {run.pk})"],
            cwd=ROOT, env=subprocess_environment(CELERY_BROKER_URL=BROKER_URL, CELERY_QUEUE=QUEUE), check=True, timeout=60,
        )
        wait_for(lambda: EaselRun.objects.get(pk=run.pk).status == EaselRun.Status.DONE, 120, "the run to finish")
    finally:
        stop(worker)
    assert "runs.unit" in (tmp_path / "worker.log").read_text()
    assert EaselRun.objects.get(pk=run.pk).episodes_done == 2
