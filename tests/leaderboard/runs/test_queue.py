"""leaderboard/runs/queue.py: a run of each job kind (judge, EASEL, C²) started while the broker is away
waits pending with the note, then is sent once when the broker answers again."""

from __future__ import annotations

import json
import os
from contextlib import ExitStack

import pytest

from leaderboard.runs.lifecycle import job_kind_of
from leaderboard.runs.models import RunStatus
from leaderboard.runs.queue import DISPATCH_TASK, WAITING_FOR_QUEUE, send_waiting_runs
from tests.celery_broker import celery_app_on
from tests.conftest import require_service

pytestmark = pytest.mark.django_db(transaction=True)

BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
QUEUE = f"atelier-test-queue-{os.getpid()}"


def _start(run) -> None:
    """Start ``run`` through its own protocol's start service (the one its page and API call)."""
    from leaderboard.c2.services.runs import c2_run_start
    from leaderboard.easel.services import easel_run_start
    from leaderboard.ekphrasis.judge_runs import judge_run_start

    starts = {"JudgeRun": judge_run_start, "EaselRun": easel_run_start, "C2Run": c2_run_start}
    starts[type(run).__name__](run=run)


@pytest.fixture
def use_broker(settings):
    """Point the Celery app at ``url`` for one test; afterwards it reads the site's settings again."""
    with ExitStack() as stack:
        def use(url: str) -> None:
            settings.CELERY_TASK_ALWAYS_EAGER = False
            settings.CELERY_BROKER_URL = url
            stack.enter_context(celery_app_on(url, QUEUE, broker_connection_timeout=1))

        yield use


def test_a_run_started_while_the_broker_is_away_waits_pending_with_a_clear_note(protocol, use_broker):
    run = protocol.make_run()
    use_broker("redis://127.0.0.1:1/0")  # nothing listens there
    _start(run)  # outside a transaction: on_commit sends at once, and must not raise
    run.refresh_from_db()
    assert run.status == RunStatus.PENDING and run.error == WAITING_FOR_QUEUE
    assert send_waiting_runs() == 0  # still away: it keeps waiting
    run.refresh_from_db()
    assert run.error == WAITING_FOR_QUEUE


def test_a_run_started_while_the_broker_is_away_is_sent_once_when_it_answers_again(protocol, use_broker):
    require_service("redis")
    import redis

    run = protocol.make_run()
    use_broker("redis://127.0.0.1:1/0")
    _start(run)
    run.refresh_from_db()
    assert run.error == WAITING_FOR_QUEUE
    use_broker(BROKER_URL)  # the broker is back
    queue = redis.Redis.from_url(BROKER_URL)
    queue.delete(QUEUE)
    try:
        assert send_waiting_runs() == 1
        assert send_waiting_runs() == 0  # sent once, not again
        assert queue.llen(QUEUE) == 1
        message = json.loads(queue.lindex(QUEUE, 0))
        assert message["headers"]["task"] == DISPATCH_TASK
        assert json.loads(message["headers"]["argsrepr"].replace("'", '"')) == [job_kind_of(run).name, run.pk]
    finally:
        queue.delete(QUEUE)
    run.refresh_from_db()
    assert run.status == RunStatus.PENDING and run.error == ""


#: How long starting a run may take when the broker accepts connections and never answers: a send is
#: tried a few times, each bounded by CELERY_BROKER_SOCKET_TIMEOUT (2 s); the rest is margin.
SILENT_BROKER_START_S = 15


def test_a_run_started_while_the_broker_accepts_and_never_answers_waits_pending_instead_of_hanging(
        protocol, use_broker):
    # before: the send waited on the silent socket for ever, and so did the request that started the run
    import socket
    import threading

    run = protocol.make_run()
    silent = socket.create_server(("127.0.0.1", 0), backlog=64)  # the kernel accepts; nobody ever answers
    use_broker(f"redis://127.0.0.1:{silent.getsockname()[1]}/0")
    started = threading.Thread(target=_start, args=(run,), daemon=True)
    try:
        started.start()
        started.join(SILENT_BROKER_START_S)
        assert not started.is_alive(), f"starting the run still waits after {SILENT_BROKER_START_S} s"
    finally:
        silent.close()
    run.refresh_from_db()
    assert run.status == RunStatus.PENDING and run.error == WAITING_FOR_QUEUE
