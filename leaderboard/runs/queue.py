"""Sending a job's dispatch to the Celery queue when the broker may be away (issue 28).

A run's dispatch is sent once the transaction that created the run commits. If the broker cannot be
reached then, the run is not lost and nothing half-made is left: it stays *pending* with
:data:`WAITING_FOR_QUEUE` as its note (the run page shows it), and :func:`send_waiting_runs` — run by
Celery beat every ``ATELIER_QUEUE_SWEEP_SECONDS`` and by every worker as it starts — sends it once the
broker answers again. Only runs marked waiting are re-sent, so a run whose message is merely still in
the queue is never dispatched twice.

Runs already running when the broker goes away keep working on the database; their next messages wait
in the worker's reconnect loop and the late acknowledgement redelivers an unacknowledged unit, which
the units' resumability turns into a no-op. A message the broker loses outright is the business of
:mod:`leaderboard.runs.lost_messages`, run by the same sweep.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.db import models, transaction
from kombu.exceptions import OperationalError as BrokerUnreachable

__all__ = ["DISPATCH_TASK", "WAITING_FOR_QUEUE", "send_on_commit", "send_waiting_runs"]

logger = logging.getLogger(__name__)

#: The one dispatch task of every job kind (leaderboard.runs.tasks.run_dispatch).
DISPATCH_TASK = "runs.dispatch"

WAITING_FOR_QUEUE = ("Queued: the task queue could not be reached when the run was started. It starts by "
                     "itself when workers can be reached again; nothing was lost.")


def send_on_commit(send: Callable[[], object], *, run: models.Model) -> None:
    """``send()`` (the run's dispatch ``.delay``) after the commit; an unreachable broker leaves the run
    pending and marked :data:`WAITING_FOR_QUEUE` instead of failing the request that started it."""
    model, run_id = type(run), run.pk

    def send_or_wait() -> None:
        if settings.CELERY_TASK_ALWAYS_EAGER:
            send()  # no broker: the task runs here, its own errors are its own
            return
        try:
            send()
        except BrokerUnreachable as exc:
            logger.warning("%s %s waits for the task queue: %s", model.__name__, run_id, exc)
            model.objects.filter(pk=run_id, status="pending").update(error=WAITING_FOR_QUEUE)

    transaction.on_commit(send_or_wait)


def send_waiting_runs() -> int:
    """Send every job left waiting for the queue (of every registered job kind); returns how many were sent.
    The note is cleared by a conditional update first, so two sweepers at once send a job once. The
    dispatch is sent by name: this module imports no task module (the task module imports this one)."""
    from evalsite.celery import app
    from leaderboard.runs.lifecycle import job_kinds

    sent = 0
    for kind in job_kinds():
        model = kind.model_class
        for run_id in list(model.objects.filter(status="pending", error=WAITING_FOR_QUEUE).values_list("pk", flat=True)):
            if not model.objects.filter(pk=run_id, error=WAITING_FOR_QUEUE).update(error=""):
                continue
            try:
                app.send_task(DISPATCH_TASK, args=[kind.name, run_id])
            except BrokerUnreachable:
                model.objects.filter(pk=run_id, status="pending").update(error=WAITING_FOR_QUEUE)
                return sent  # still away: the next sweep tries again
            sent += 1
    return sent
