"""Re-sending a running job whose messages the broker lost.

kombu's Redis transport takes a message off its queue with BRPOP and records it as unacknowledged in a
second round trip. If Redis stops between the two, the message is gone: no queue has it, no worker holds
it, and the job it drove stays *running* for ever (seen once in ``tests/faults/test_broker_outage.py``).

A job driven by workers (:attr:`RunJob.queued <leaderboard.runs.models.RunJob.queued>`) always has a
message in the broker while it is live: its dispatch, a unit or its finalising, either queued or held
unacknowledged by a worker. Messages are acknowledged late (settings), so a unit is acknowledged only after
it stored its work and finished the finalising it may have won (the last unit finalises in its own task), and a
retried unit sends its retry first.
So a live queued job of which the broker holds no message — seen so twice, :data:`RECHECK_SECONDS` apart,
because a message taken by BRPOP is briefly in neither place — has lost its messages, and only then is its
dispatch sent again. The dispatch queues its unfinished units, which resume from what they stored (a
judge chunk's planned calls, an EASEL episode's last step), so nothing is judged or paid for twice: a job
whose message is merely queued or being worked on is never sent twice.

Only a Redis broker can be read so (:func:`runs_held_by_broker` returns None for any other transport, and
nothing is re-sent). Run by the same sweep as :func:`~leaderboard.runs.queue.send_waiting_runs`.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Iterable

from django.conf import settings

from leaderboard.runs.models import RunStatus

__all__ = ["RECHECK_SECONDS", "RUN_TASKS", "runs_held_by_broker", "send_lost_runs"]

logger = logging.getLogger(__name__)

#: The tasks whose first two arguments are (job kind, run id): leaderboard.runs.tasks.
RUN_TASKS = frozenset({"runs.dispatch", "runs.unit", "runs.finalise"})
#: A job seen without messages is looked at again after this long before it is re-sent.
RECHECK_SECONDS = 2.0

RunKey = tuple[str, int]


def _run_of(payload: str | bytes) -> RunKey | None:
    """(kind, run id) of one Celery message (protocol 2, JSON) of :data:`RUN_TASKS`, else None."""
    try:
        message = json.loads(payload)
        if isinstance(message, list):  # an unacknowledged entry: [message, exchange, routing key]
            message = json.loads(message[0]) if isinstance(message[0], str) else message[0]
        if message.get("headers", {}).get("task") not in RUN_TASKS:
            return None
        body = message["body"]
        if message.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args, kwargs, _ = json.loads(body)
        kind, run_id = (args[0], args[1]) if len(args) >= 2 else (kwargs["kind_name"], kwargs["run_id"])
        return str(kind), int(run_id)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None


def _queue_names(channel) -> list[str]:
    """Every Redis list the site's queues are kept in (each queue and its priority lists)."""
    from evalsite.celery import app

    names = {app.conf.task_default_queue, *app.amqp.queues.keys()}
    return sorted({channel._q_for_pri(name, step) for name in names for step in channel.priority_steps})


def runs_held_by_broker() -> set[RunKey] | None:
    """The jobs with a message queued or held unacknowledged in the broker, read in one Redis transaction
    (so a message moving between a queue and the unacknowledged hash is seen in one of them); None when
    the broker is not Redis."""
    from evalsite.celery import app

    with app.connection_for_read() as connection:
        if connection.transport.driver_type != "redis":
            return None
        channel = connection.default_channel
        queues = _queue_names(channel)
        pipe = channel.client.pipeline(transaction=True)
        for name in queues:
            pipe.lrange(name, 0, -1)
        pipe.hvals(channel.unacked_key)
        *queued, unacked = pipe.execute()
    held = set()
    for payload in [p for q in queued for p in q] + list(unacked):
        run = _run_of(payload)
        if run is not None:
            held.add(run)
    return held


def _live_queued_runs() -> set[RunKey]:
    from leaderboard.runs.lifecycle import job_kinds

    live = set()
    for kind in job_kinds():
        ids = kind.model_class.objects.filter(
            status__in=[RunStatus.RUNNING, RunStatus.FINALISING], queued=True).values_list("pk", flat=True)
        live.update((kind.name, int(pk)) for pk in ids)
    return live


def _without_messages(candidates: Iterable[RunKey]) -> set[RunKey]:
    held = runs_held_by_broker()
    return set() if held is None else set(candidates) - held


def send_lost_runs(*, recheck_seconds: float = RECHECK_SECONDS) -> int:
    """Send the dispatch of every live job driven by workers of which the broker holds no message (twice
    seen, ``recheck_seconds`` apart); returns how many were sent. Nothing happens with no broker (eager
    mode), a broker that is away (the next sweep looks again) or one that is not Redis."""
    from kombu.exceptions import OperationalError as BrokerUnreachable

    from evalsite.celery import app
    from leaderboard.runs.queue import DISPATCH_TASK

    if settings.CELERY_TASK_ALWAYS_EAGER:
        return 0
    with app.connection_for_read() as connection:  # not connected yet: only its transport's error types
        unreachable = (BrokerUnreachable, *connection.connection_errors)
    lost: set[RunKey] = set()
    try:
        suspects = _live_queued_runs()
        if suspects:
            suspects = _without_messages(suspects)
        if not suspects:
            return 0
        time.sleep(recheck_seconds)
        lost = _without_messages(suspects & _live_queued_runs())
        for kind_name, run_id in sorted(lost):
            logger.warning("%s %s is running but the broker holds none of its messages: its dispatch is sent "
                           "again (its unfinished units resume from what they stored)", kind_name, run_id)
            app.send_task(DISPATCH_TASK, args=[kind_name, run_id])
    except unreachable as exc:
        logger.info("lost-message sweep skipped, the broker is away: %s", exc)
        return 0
    return len(lost)
