"""Starting and resuming a job: the one start policy of every kind.

Start policy (one, for every kind): the job's dispatch is sent once the transaction that created or
resumed it has committed. With a broker, a worker takes it. Without one (the embedded default, Celery
eager), a request that must not wait — a page's Start or Resume button — runs the dispatch in a daemon
thread, so the request returns at once and the run page follows it live (unless
``ATELIER_EAGER_JOBS_IN_BACKGROUND`` is off, as in the tests); a command or the API runs the dispatch inline. In both eager cases an error is recorded on the job (its page shows
it), never raised into the request as a 500.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.contrib import messages
from django.db import connection, transaction

from leaderboard.runs.errors import RunConfigurationError, RunStateConflict
from leaderboard.runs.lifecycle import job_kind, job_kind_of, run_fail, run_resume_refusal
from leaderboard.runs.models import RunJob, RunStatus
from leaderboard.runs.queue import send_on_commit
from leaderboard.runs.tasks import run_dispatch

logger = logging.getLogger(__name__)

__all__ = ["run_resume", "run_resume_from_page", "run_start"]


def run_start(run: RunJob, *, background: bool = False) -> None:
    """Send the job's dispatch once the current transaction commits (see the start policy above)."""
    kind = job_kind_of(run)
    run_id = run.pk
    if settings.CELERY_TASK_ALWAYS_EAGER:
        if background and settings.ATELIER_EAGER_JOBS_IN_BACKGROUND:
            transaction.on_commit(lambda: threading.Thread(
                target=_dispatch_in_thread, args=(kind.name, run_id), name=f"{kind.name}-{run_id}", daemon=True).start())
        else:
            transaction.on_commit(lambda: _dispatch_eagerly(kind.name, run_id))
        return
    # A broker that cannot be reached leaves the job pending and marked waiting (leaderboard.runs.queue).
    send_on_commit(lambda: run_dispatch.delay(kind.name, run_id), run=run)


def run_resume(run: RunJob, *, background: bool = False) -> RunJob:
    """Queue a failed, resumable job again; it resumes from its stored units (:class:`RunStateConflict` otherwise)."""
    refusal = run_resume_refusal(run)
    if refusal:
        raise RunStateConflict(refusal)
    run_start(run, background=background)
    return run


def _dispatch_eagerly(kind_name: str, run_id: int) -> None:
    """Run the dispatch in this process; an error is the job's (recorded on it), not the caller's."""
    kind = job_kind(kind_name)
    try:
        run_dispatch.delay(kind_name, run_id)
    except Exception as exc:  # noqa: BLE001 - eager mode only: a worker would have recorded the same error
        logger.warning("%s %s stopped: %r", kind_name, run_id, exc)
        if not kind.model_class.objects.filter(pk=run_id, status=RunStatus.FAILED).exists():
            run_fail(kind.model_class, run_id, f"{type(exc).__name__}: {exc}",
                     resumable=not isinstance(exc, RunConfigurationError))


def _dispatch_in_thread(kind_name: str, run_id: int) -> None:
    try:
        _dispatch_eagerly(kind_name, run_id)
    finally:
        connection.close()  # this thread's own connection (Django connections are per thread)


def run_resume_from_page(request, run: RunJob) -> None:
    """A page's Resume button: resume in the background, or say on the page why the run may not resume."""
    try:
        run_resume(run, background=True)
    except RunStateConflict as exc:
        messages.error(request, str(exc))
