"""Celery tasks of C² runs: thin, idempotent wrappers around :mod:`leaderboard.c2.services.runs`.

Each task takes ids and calls one service. Tasks are acknowledged late (settings), so a job whose worker
is killed is delivered again and resumes from the planned rows already filled.
"""

from __future__ import annotations

from celery import shared_task

from leaderboard.c2.services import runs
from leaderboard.runs.errors import RunConfigurationError


@shared_task(name="c2.run_dispatch")
def c2_run_dispatch(run_id: int) -> int:
    """Queue one job per unfinished prompt of the run (or finalise a run with none left)."""
    task_ids = runs.c2_run_pending_prompts(run_id=run_id)
    for task_id in task_ids:
        c2_run_prompt.delay(run_id, task_id)
    if not task_ids:
        c2_run_finalise.delay(run_id)
    return len(task_ids)


@shared_task(name="c2.run_prompt", bind=True, max_retries=5)
def c2_run_prompt(self, run_id: int, task_id: int) -> None:
    try:
        finished_run = runs.c2_prompts_execute(run_id=run_id, task_ids=[task_id])
    except RunConfigurationError as exc:
        runs.c2_run_fail(run_id=run_id, error=f"task {task_id}: {exc}")
        raise
    except Exception as exc:
        if self.request.retries >= self.max_retries:
            runs.c2_run_fail(run_id=run_id, error=f"task {task_id}: {exc!r}")
            raise
        raise self.retry(exc=exc, countdown=2 ** self.request.retries) from exc
    if finished_run:
        c2_run_finalise.delay(run_id)


@shared_task(name="c2.run_finalise")
def c2_run_finalise(run_id: int) -> int:
    return runs.c2_run_finalise(run_id=run_id).pk
