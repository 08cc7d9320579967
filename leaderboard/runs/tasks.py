"""The one Celery task pair that drives every kind of resumable job: a dispatch that queues one job per
unfinished unit, the unit job, and the finalise job (which the unit that finishes the job's last unit runs
in its own task, not as a message). Thin and idempotent: each takes a job kind's name
and ids and calls the kind's unit functions (:class:`leaderboard.runs.lifecycle.JobKind`). Jobs are
acknowledged late (settings), so one whose worker is killed is delivered again and resumes from what
the unit had stored.

Expected errors are not retried: :data:`EXPECTED_ERRORS` lists them once. Any other error is retried
with a growing delay, and after the last retry recorded on the job (which stays resumable)."""

from __future__ import annotations

from celery import shared_task
from kombu.exceptions import BatchPublishError

from leaderboard.runs.errors import ProviderOutage, RunConfigurationError, UnitTakenOver
from leaderboard.runs.lifecycle import job_kind, run_fail, run_pending_units
from leaderboard.runs.lost_messages import send_lost_runs
from leaderboard.runs.models import RunStatus
from leaderboard.runs.queue import send_waiting_runs
from leaderboard.runs.unit_claims import unit_claimed

#: Errors a unit may raise that retrying would not change. A configuration error fails the job as not
#: resumable; a provider outage past the client's retries fails it resumable; a unit taken over by another
#: delivery is left to it.
EXPECTED_ERRORS = (RunConfigurationError, ProviderOutage, UnitTakenOver)
MAX_RETRIES = 5


@shared_task(name="runs.dispatch", bind=True)
def run_dispatch(self, kind_name: str, run_id: int) -> int:
    """Queue one job per unfinished unit (or finalise a job with none left)."""
    kind = job_kind(kind_name)
    units = run_pending_units(kind, run_id, queued=not self.request.is_eager)
    if units and not self.app.conf.task_always_eager:
        _send_units(self.app, kind_name, run_id, units)
    else:
        for unit_id in units:  # eagerly each unit runs inside its .delay(), in order
            run_unit.delay(kind_name, run_id, unit_id)
    live = kind.model_class.objects.filter(pk=run_id, status__in=[RunStatus.RUNNING, RunStatus.FINALISING])
    if not units and live.exists():
        run_finalise.delay(kind_name, run_id)
    return len(units)


def _send_units(app, kind_name: str, run_id: int, units: list[int]) -> None:
    """Send one ``runs.unit`` message per unit through one producer: the first alone, at once, so a second
    worker process can start on it while the others are sent; the others in one Redis pipeline (one round
    trip, not one per message: 30 round trips were 0.05-0.14 s of a 30-task run's serial start under load).

    A pipeline that fails leaves its delivery uncertain (kombu sends it without retrying): the rest are then
    sent one by one with kombu's retries. A unit that reaches the queue twice is judged once (its claim,
    leaderboard.runs.unit_claims, and its done flag), as one queued again by a second Resume is."""
    with app.producer_or_acquire() as producer:
        run_unit.apply_async((kind_name, run_id, units[0]), producer=producer)
        rest = units[1:]
        try:
            with producer.batch():
                for unit_id in rest:
                    run_unit.apply_async((kind_name, run_id, unit_id), producer=producer)
        except BatchPublishError:
            for unit_id in rest:
                run_unit.apply_async((kind_name, run_id, unit_id), producer=producer)


@shared_task(name="runs.unit", bind=True, max_retries=MAX_RETRIES)
def run_unit(self, kind_name: str, run_id: int, unit_id: int) -> None:
    kind = job_kind(kind_name)
    status = kind.model_class.objects.filter(pk=run_id).values_list("status", flat=True).first()
    if status == RunStatus.FINALISING:
        # The unit that won the finalising finalises in its own task (below): delivered again — its worker died
        # while finalising — it finalises again (idempotent), as the finalise message it once sent would have been.
        run_finalise(kind_name, run_id)
        return
    if status != RunStatus.RUNNING:
        # Cancelled or failed since its dispatch (or finished): a unit already inside a worker finishes, the
        # others stay unfinished for a resume, whose dispatch sends them again. Without this check a cancelled
        # run's every queued unit ran anyway (and without a broker its background thread judged all of them).
        return
    try:
        with unit_claimed(kind_name, run_id, unit_id):
            finished_job = kind.call("execute_unit", run_id=run_id, unit_id=unit_id)
    except UnitTakenOver:
        return
    except RunConfigurationError as exc:
        run_fail(kind.model_class, run_id, f"{kind.unit_name} {unit_id}: {exc}", resumable=False)
        return
    except ProviderOutage as outage:
        run_fail(kind.model_class, run_id, str(outage))
        return
    except Exception as exc:
        if self.request.retries >= self.max_retries:
            run_fail(kind.model_class, run_id, f"{kind.unit_name} {unit_id}: {exc!r}")
            raise
        raise self.retry(exc=exc, countdown=2 ** self.request.retries) from exc
    if finished_job:
        # This call won the job's last unit: it finalises here, in the process that holds the job's data warm,
        # rather than sending a runs.finalise message for a worker to take — that hop (a send, the worker's
        # BRPOP and its unacknowledged record, a hand-over to a pool process, the ack) was serial time at the
        # end of every run on several workers. The unit's message is acknowledged only after it returns
        # (acks late), so a worker killed while finalising gets it delivered again, and the check above
        # finalises; an error fails the job, resumable, as the finalise task's does.
        run_finalise(kind_name, run_id)


@shared_task(name="runs.finalise")
def run_finalise(kind_name: str, run_id: int) -> None:
    """Finalise the job; an error fails it (resumable: resuming finalises again) rather than leaving it
    finalising with no message left to move it."""
    kind = job_kind(kind_name)
    try:
        kind.call("finalise", run_id=run_id)
    except Exception as exc:
        run_fail(kind.model_class, run_id, f"finalising: {exc!r}")
        raise


@shared_task(name="runs.send_waiting")
def runs_send_waiting() -> int:
    """Send the jobs started while the broker was away (:mod:`leaderboard.runs.queue`) and re-send the
    running jobs whose every message the broker lost (:mod:`leaderboard.runs.lost_messages`)."""
    return send_waiting_runs() + send_lost_runs()
