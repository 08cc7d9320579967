"""leaderboard/runs/queue.py: a run started while the broker is away waits, then is sent once."""

from __future__ import annotations

import os

import pytest

from evalsite.celery import app
from leaderboard.ekphrasis import judge_runs
from leaderboard.models import JudgeRun
from leaderboard.runs.queue import WAITING_FOR_QUEUE, send_waiting_runs
from tests.conftest import require_service
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db(transaction=True)

BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
QUEUE = f"atelier-test-queue-{os.getpid()}"


@pytest.fixture
def use_broker(settings):
    """Point the Celery app at ``url`` for one test, then put every value back (not deleted: a deleted
    key would fall back to Celery's defaults, not the site's settings)."""
    keys = ("task_always_eager", "broker_url", "task_default_queue", "broker_connection_timeout")
    before = {key: app.conf[key] for key in keys}

    def use(url: str) -> None:
        settings.CELERY_TASK_ALWAYS_EAGER = False
        settings.CELERY_BROKER_URL = url
        app.conf.update(task_always_eager=False, broker_url=url, task_default_queue=QUEUE, broker_connection_timeout=1)
        app._pool = None  # the connection and producer pools are made for one broker address
        app.__dict__.pop("amqp", None)

    yield use
    app.conf.update(before)
    app._pool = None
    app.__dict__.pop("amqp", None)


def test_a_run_started_while_the_broker_is_away_waits_pending_with_a_clear_note(use_broker):
    task_set, models = population(n_models=3, n_tasks=1)
    run = simulated_run(task_set, models, budget=3)
    use_broker("redis://127.0.0.1:1/0")  # nothing listens there
    judge_runs.judge_run_start(run=run)  # outside a transaction: on_commit sends at once, and must not raise
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.PENDING and run.error == WAITING_FOR_QUEUE
    assert send_waiting_runs() == 0  # still away: it keeps waiting
    run.refresh_from_db()
    assert run.error == WAITING_FOR_QUEUE


def test_a_waiting_run_is_sent_once_when_the_broker_answers_again(use_broker):
    require_service("redis")
    import redis

    task_set, models = population(n_models=3, n_tasks=1)
    run = simulated_run(task_set, models, budget=3)
    JudgeRun.objects.filter(pk=run.pk).update(error=WAITING_FOR_QUEUE)
    use_broker(BROKER_URL)
    queue = redis.Redis.from_url(BROKER_URL)
    queue.delete(QUEUE)
    try:
        assert send_waiting_runs() == 1
        assert send_waiting_runs() == 0  # sent once, not again
        assert queue.llen(QUEUE) == 1
    finally:
        queue.delete(QUEUE)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.PENDING and run.error == ""
