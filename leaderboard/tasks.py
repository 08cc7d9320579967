"""Celery tasks: thin, idempotent wrappers around the judge-run services.

Each task takes ids, loads what it needs and calls one service. Tasks are
acknowledged late (settings), so a task whose worker is killed is delivered
again and resumes from the comparisons already stored.
"""

from __future__ import annotations

from celery import shared_task

from leaderboard.services import judge_runs


@shared_task(name="leaderboard.judge_run_dispatch")
def judge_run_dispatch(run_id: int) -> int:
    """Queue one chunk per unfinished task of the run."""
    task_ids = judge_runs.judge_run_pending_chunks(run_id=run_id)
    for task_id in task_ids:
        judge_run_chunk.delay(run_id, task_id)
    if not task_ids:
        judge_run_finalise.delay(run_id)
    return len(task_ids)


@shared_task(name="leaderboard.judge_run_chunk", bind=True, max_retries=5)
def judge_run_chunk(self, run_id: int, task_id: int) -> None:
    from leaderboard.services.judge_chunk import ProviderUnreachable

    try:
        finished_run = judge_runs.judge_run_task_execute(run_id=run_id, task_id=task_id)
    except ProviderUnreachable as outage:
        # The client already retried with backoff up to its bound: stop the run, resumable, saying why.
        judge_runs.judge_run_fail(run_id=run_id, error=str(outage))
        return
    except Exception as exc:
        if self.request.retries >= self.max_retries:
            judge_runs.judge_run_fail(run_id=run_id, error=f"task {task_id}: {exc!r}")
            raise
        raise self.retry(exc=exc, countdown=2 ** self.request.retries)
    if finished_run:
        from kombu.exceptions import OperationalError as BrokerUnreachable

        try:
            judge_run_finalise.delay(run_id)
        except BrokerUnreachable:
            # This call won the run's last chunk, and a redelivered chunk finds it done: if the finalising
            # message cannot be sent now, nobody would send it later. It is idempotent: do it here.
            judge_runs.judge_run_finalise(run_id=run_id)


@shared_task(name="leaderboard.send_waiting_runs")
def send_waiting_runs() -> int:
    """Send the runs started while the broker was away (leaderboard.task_queue)."""
    from leaderboard.task_queue import send_waiting_runs as send

    return send()


@shared_task(name="leaderboard.judge_run_finalise")
def judge_run_finalise(run_id: int) -> int | None:
    """The run's snapshot id; None for a fixed-pair run, which stores none."""
    snapshot = judge_runs.judge_run_finalise(run_id=run_id)
    return snapshot.pk if snapshot is not None else None


@shared_task(name="leaderboard.tig_build")
def tig_build(build_id: int) -> int:
    """Extract and embed a task set's responses for its TIGs; idempotent and resumable (extractions are
    stored per response, embeddings per atom)."""
    from leaderboard.services.tig import tig_build_execute

    return tig_build_execute(build_id=build_id).tasks_done


@shared_task(name="leaderboard.task_set_build")
def task_set_build(build_id: int) -> int:
    """Run Algorithm 1 for a planned build; idempotent (a finished build is left as it is)."""
    from leaderboard.services.task_construction import task_set_build_execute

    return task_set_build_execute(build_id=build_id).tasks_kept
