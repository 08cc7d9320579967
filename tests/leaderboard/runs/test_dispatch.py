"""leaderboard/runs/tasks.py ``run_dispatch`` through a real Redis broker: after the commit that starts a
job its dispatch is sent, and the dispatch sends every unfinished unit exactly once, the first before the
others (which go in one pipeline); a pipeline whose delivery fails is sent again one message at a time."""

from __future__ import annotations

import base64
import json
from collections import Counter

import pytest
from django.db import transaction
from kombu.exceptions import BatchPublishError
from kombu.transport.redis import PublishBatch

from leaderboard.runs.lifecycle import job_kind_of
from leaderboard.runs.queue import DISPATCH_TASK
from leaderboard.runs.starting import run_start
from leaderboard.runs.tasks import run_dispatch
from tests.leaderboard.runs.test_lost_messages import broker as broker  # noqa: F401  (the fixture)
from tests.leaderboard.runs.test_queue import QUEUE

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.broker]


def _made(protocol, broker):
    """The protocol's run, not started, with the queue empty (making a run may send other messages)."""
    run = protocol.make_run()
    broker.delete(QUEUE)
    return run


def _queued_tasks(broker) -> list[tuple[str, list]]:
    """Every message of the queue, newest first: its task's name and positional arguments."""
    out = []
    for raw in broker.lrange(QUEUE, 0, -1):
        message = json.loads(raw)
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        out.append((message["headers"]["task"], args))
    return out


def _units_queued(broker) -> list[list]:
    return [args for task, args in _queued_tasks(broker) if task == "runs.unit"]


def _dispatched(protocol, broker):
    """Start the run in a transaction (nothing is sent before its commit), then run the dispatch it sent in
    this process, as a worker runs it; return the run, the units the dispatch reported and the unfinished units."""
    run = _made(protocol, broker)
    kind = job_kind_of(run)
    with transaction.atomic():
        run_start(run)
        assert broker.llen(QUEUE) == 0  # not before the commit
    assert _queued_tasks(broker) == [(DISPATCH_TASK, [kind.name, run.pk])]
    broker.delete(QUEUE)
    pending = list(kind.call("pending_units", run_id=run.pk))
    return run, run_dispatch(kind.name, run.pk), pending


def test_the_dispatch_sends_every_unfinished_unit_exactly_once_after_the_commit(protocol, broker):
    run, sent, pending = _dispatched(protocol, broker)
    kind = job_kind_of(run)
    # LPUSH puts the newest at the head: the queue read from its tail is the order of sending
    queued = _units_queued(broker)[::-1]
    assert sent == len(pending) > 0
    assert queued == [[kind.name, run.pk, unit_id] for unit_id in pending]
    assert not [args for args, n in Counter(map(tuple, queued)).items() if n > 1]


def test_the_first_unit_is_in_the_queue_before_the_others_are_sent(protocol, broker, monkeypatch):
    # the first unit is sent on its own, so a second worker process can start it while the rest are sent
    seen_at_flush = []
    flush = PublishBatch.flush

    def watched_flush(self):
        seen_at_flush.append(_units_queued(broker))
        return flush(self)

    monkeypatch.setattr(PublishBatch, "flush", watched_flush)
    run, sent, pending = _dispatched(protocol, broker)
    kind = job_kind_of(run)
    # a run of one unit sends no pipeline (the C² case's run has one prompt)
    assert seen_at_flush[:1] == ([[[kind.name, run.pk, pending[0]]]] if len(pending) > 1 else [])
    assert sorted(map(tuple, _units_queued(broker))) == sorted((kind.name, run.pk, u) for u in pending)


def test_units_whose_pipeline_fails_are_sent_one_by_one(protocol, broker, monkeypatch):
    # kombu sends a pipeline once, without retrying, and its delivery is then uncertain: the dispatch sends
    # the rest again with kombu's per-message retries (a unit queued twice runs once, unit_claims)
    failures = []

    def failing_flush(self):
        if self._buffered:
            failures.append(self._buffered)
            self._failed = RuntimeError("connection lost")
            self.pipeline.reset()
            raise BatchPublishError("Redis publish batch failed; delivery is uncertain")

    monkeypatch.setattr(PublishBatch, "flush", failing_flush)
    run, sent, pending = _dispatched(protocol, broker)
    kind = job_kind_of(run)
    assert len(pending) < 2 or failures == [len(pending) - 1]
    assert sorted(map(tuple, _units_queued(broker))) == sorted((kind.name, run.pk, u) for u in pending)
