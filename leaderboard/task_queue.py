"""Sending a run to the Celery queue when the broker may be away (issue 28).

A run's dispatch is sent once the transaction that created the run commits. If the broker cannot be
reached then, the run is not lost and nothing half-made is left: it stays *pending* with
:data:`WAITING_FOR_QUEUE` as its note (the run page shows it), and :func:`send_waiting_runs` — run by
Celery beat every ``ATELIER_QUEUE_SWEEP_SECONDS`` and by every worker as it starts — sends it once the
broker answers again. Only runs marked waiting are re-sent, so a run whose message is merely still in
the queue is never dispatched twice.

Runs already running when the broker goes away keep working on the database; their next messages wait
in the worker's reconnect loop and the late acknowledgement redelivers an unacknowledged unit, which
the units' resumability turns into a no-op.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.db import models, transaction
from kombu.exceptions import OperationalError as BrokerUnreachable

__all__ = ["WAITING_FOR_QUEUE", "send_on_commit", "send_waiting_runs"]

logger = logging.getLogger(__name__)

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


#: Each run model and the name of its dispatch task (sent by name: this module imports no task module,
#: which would close an import circle through the services that call :func:`send_on_commit`).
DISPATCH_TASKS = (("leaderboard.JudgeRun", "leaderboard.judge_run_dispatch"),
                  ("easel.EaselRun", "easel.run_dispatch"),
                  ("c2.C2Run", "c2.run_dispatch"))


def send_waiting_runs() -> int:
    """Send every run left waiting for the queue; returns how many were sent. The note is cleared by a
    conditional update first, so two sweepers at once send a run once."""
    from django.apps import apps

    from evalsite.celery import app

    sent = 0
    for model_name, task_name in DISPATCH_TASKS:
        model = apps.get_model(model_name)
        for run_id in list(model.objects.filter(status="pending", error=WAITING_FOR_QUEUE).values_list("pk", flat=True)):
            if not model.objects.filter(pk=run_id, error=WAITING_FOR_QUEUE).update(error=""):
                continue
            try:
                app.send_task(task_name, args=[run_id])
            except BrokerUnreachable:
                model.objects.filter(pk=run_id, status="pending").update(error=WAITING_FOR_QUEUE)
                return sent  # still away: the next sweep tries again
            sent += 1
    return sent
