"""leaderboard/runs/lost_messages.py: a live job driven by workers of which the Redis broker holds no
message (queued or unacknowledged) has its dispatch sent again; a job with a message anywhere in the
broker, an inline job and a finished job are never sent."""

from __future__ import annotations

import json

import pytest

from leaderboard.runs.lifecycle import job_kind_of
from leaderboard.runs.lost_messages import runs_held_by_broker, send_lost_runs
from leaderboard.runs.models import RunStatus
from leaderboard.runs.queue import DISPATCH_TASK
from tests.celery_broker import broker_emptied, celery_app_on
from tests.conftest import require_service
from tests.leaderboard.runs.test_queue import BROKER_URL, QUEUE

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.broker]


@pytest.fixture
def broker(settings):
    """This process sends to the test Redis on a queue of its own; the queue and the unacknowledged hash
    are emptied before and after."""
    require_service("redis")
    import redis

    client = redis.Redis.from_url(BROKER_URL)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = BROKER_URL
    with celery_app_on(BROKER_URL, QUEUE):
        broker_emptied(client, QUEUE)
        yield client
        broker_emptied(client, QUEUE)


def _made(protocol, broker):
    """The protocol's run, with the broker holding none of the messages making it sent: making a C² run adds
    its simulated models to the catalogue, whose blinding sweep (``annotation.recheck_blinding``) is sent
    after the commit — not this test's message."""
    run = protocol.make_run()
    for raw in broker.lrange(QUEUE, 0, -1):
        if json.loads(raw)["headers"]["task"] == "annotation.recheck_blinding":
            broker.lrem(QUEUE, 1, raw)
    return run


def _running(run, *, queued: bool = True):
    type(run).objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, queued=queued)
    return run


def _queued_tasks(client) -> list[tuple[str, list]]:
    out = []
    for raw in client.lrange(QUEUE, 0, -1):
        message = json.loads(raw)
        out.append((message["headers"]["task"], json.loads(message["headers"]["argsrepr"].replace("'", '"'))))
    return out


def test_a_running_queued_job_without_any_message_has_its_dispatch_sent_once(protocol, broker):
    run = _running(_made(protocol, broker))
    assert send_lost_runs(recheck_seconds=0) == 1
    assert _queued_tasks(broker) == [(DISPATCH_TASK, [job_kind_of(run).name, run.pk])]
    assert send_lost_runs(recheck_seconds=0) == 0  # its dispatch is queued now: not sent again


def test_a_job_whose_unit_waits_in_the_queue_is_not_sent_again(protocol, broker):
    from evalsite.celery import app

    run = _running(_made(protocol, broker))
    app.send_task("runs.unit", args=[job_kind_of(run).name, run.pk, 1])
    assert runs_held_by_broker() == {(job_kind_of(run).name, run.pk)}
    assert send_lost_runs(recheck_seconds=0) == 0
    assert [task for task, _ in _queued_tasks(broker)] == ["runs.unit"]


def test_a_job_whose_unit_a_worker_holds_unacknowledged_is_not_sent_until_it_is_acknowledged(protocol, broker):
    from evalsite.celery import app

    run = _running(_made(protocol, broker))
    key = (job_kind_of(run).name, run.pk)
    app.send_task("runs.finalise", args=list(key))
    with app.connection_for_read() as connection:
        channel = connection.default_channel
        taken = channel.basic_get(QUEUE, no_ack=False)  # as a worker takes it: off the queue, unacknowledged
        try:
            assert broker.llen(QUEUE) == 0
            assert runs_held_by_broker() == {key}
            assert send_lost_runs(recheck_seconds=0) == 0
        finally:
            channel.basic_ack(taken.delivery_tag)
    assert send_lost_runs(recheck_seconds=0) == 1  # acknowledged and still finalising nowhere: lost


def test_a_job_run_inline_in_a_command_is_never_sent(protocol, broker):
    _running(_made(protocol, broker), queued=False)
    assert send_lost_runs(recheck_seconds=0) == 0
    assert broker.llen(QUEUE) == 0


def test_a_finished_or_failed_job_is_never_sent(protocol, broker):
    run = _made(protocol, broker)
    for status in (RunStatus.DONE, RunStatus.FAILED, RunStatus.PENDING):
        type(run).objects.filter(pk=run.pk).update(status=status, queued=True)
        assert send_lost_runs(recheck_seconds=0) == 0
    assert broker.llen(QUEUE) == 0


def test_messages_of_other_tasks_and_other_jobs_do_not_count_as_this_jobs(protocol, broker):
    from evalsite.celery import app

    run = _running(_made(protocol, broker))
    app.send_task("runs.unit", args=[job_kind_of(run).name, run.pk + 1000, 1])
    app.send_task("annotation.expire_assignments")
    broker.rpush(QUEUE, b"not json")
    assert send_lost_runs(recheck_seconds=0) == 1


def test_nothing_is_sent_without_a_broker(protocol, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    _running(protocol.make_run())
    assert send_lost_runs(recheck_seconds=0) == 0


def test_a_broker_that_is_away_sends_nothing_and_raises_nothing(protocol, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    _running(protocol.make_run())
    with celery_app_on("redis://127.0.0.1:1/0", QUEUE, broker_connection_timeout=1,
                       broker_connection_max_retries=0):
        assert send_lost_runs(recheck_seconds=0) == 0
