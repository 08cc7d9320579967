"""leaderboard/runs/tasks.py: a finalising that raises fails the job, resumable, instead of leaving it
finalising with no message left to move it; a unit of a cancelled job is not executed."""

from __future__ import annotations

import importlib

import pytest

from leaderboard.runs.lifecycle import (
    job_kind_of,
    run_cancel,
    run_claim_finalise,
    run_may_resume,
    run_pending_units,
)
from leaderboard.runs.models import RunStatus
from leaderboard.runs.tasks import run_finalise, run_unit

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_finalising_that_raises_fails_the_job_resumable_and_names_the_error(protocol, monkeypatch):
    run = protocol.make_run()
    kind = job_kind_of(run)
    type(run).objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    assert run_claim_finalise(type(run), run.pk)

    def broken(**ids):
        raise ValueError("the results could not be computed")

    module, name = kind.finalise.rsplit(".", 1)
    monkeypatch.setattr(importlib.import_module(module), name, broken)
    with pytest.raises(ValueError):
        run_finalise(kind.name, run.pk)  # the worker logs it as failed
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.error == "finalising: ValueError('the results could not be computed')"
    assert run_may_resume(run)


def test_a_unit_of_a_cancelled_job_is_not_executed_and_waits_for_the_resume(protocol, monkeypatch):
    run = protocol.make_run()
    kind = job_kind_of(run)
    units = run_pending_units(kind, run.pk)  # what the dispatch does before it sends one message per unit
    assert units
    run_cancel(type(run).objects.get(pk=run.pk), by="rita")
    executed = []
    module, name = kind.execute_unit.rsplit(".", 1)
    monkeypatch.setattr(importlib.import_module(module), name, lambda **ids: executed.append(ids))
    for unit_id in units:
        run_unit(kind.name, run.pk, unit_id)  # the messages sent before the cancel arrive after it
    assert executed == []
    run.refresh_from_db()
    assert (run.status, run.error) == (RunStatus.FAILED, "cancelled by rita")
    assert run_pending_units(kind, run.pk) == units  # all still there for the resume


@pytest.mark.postgres
def test_two_deliveries_of_the_same_c2_prompt_at_once_ask_its_calls_once():
    # Two Resume clicks (two dispatches) or a redelivered message put one prompt in two workers at the
    # same moment: before the claim both asked the model for every answer and rating (calls_done 90 for
    # 72 planned), and one of them crashed on the other's confidence row.
    import threading

    from django.db import connection

    from tests.conftest import require_service
    from tests.leaderboard.test_tasks import _c2_samples, _c2_trivia_run

    require_service("postgres")
    make, reference = _c2_trivia_run("c2-two-deliveries", n=6)
    run = make()
    units = run_pending_units(job_kind_of(run), run.pk)
    barrier, errors = threading.Barrier(2), []

    def worker():
        try:
            for unit_id in units:
                barrier.wait(timeout=60)  # both deliveries of each prompt start together
                run_unit("c2_run", run.pk, unit_id)
        except Exception as exc:  # noqa: BLE001 - reported below, with the other worker's
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    run.refresh_from_db()
    assert errors == []
    assert (run.calls_done, run.calls_planned) == (reference.calls_done, reference.calls_planned)
    assert _c2_samples(run) == _c2_samples(reference)


def test_the_unit_that_finishes_the_job_finalises_it_itself_and_sends_no_finalise_message(protocol, monkeypatch):
    # The last unit finalises in its own task: a runs.finalise message was one more broker hop and hand-over to a
    # pool process at the end of every run, serial time on several workers (issue 30).
    from leaderboard.runs import tasks

    run = protocol.make_run()
    kind = job_kind_of(run)
    sent = []
    monkeypatch.setattr(tasks.run_finalise, "delay", lambda *args: sent.append(args))
    monkeypatch.setattr(tasks.run_finalise, "apply_async", lambda *args, **kwargs: sent.append(args))
    for unit_id in run_pending_units(kind, run.pk):
        run_unit(kind.name, run.pk, unit_id)
    run.refresh_from_db()
    assert sent == []
    assert run.status == RunStatus.DONE
    assert protocol.results_present(run)


def test_a_unit_delivered_again_to_a_finalising_job_finalises_it(protocol):
    # The unit that won the finalising was acknowledged late: its worker killed while finalising, the broker
    # delivers it again, and nothing else would move the job on (no runs.finalise message was sent).
    run = protocol.make_run()
    kind = job_kind_of(run)
    units = run_pending_units(kind, run.pk)
    for unit_id in units:
        kind.call("execute_unit", run_id=run.pk, unit_id=unit_id)  # the last one claims the finalising
    run.refresh_from_db()
    assert run.status == RunStatus.FINALISING
    run_unit(kind.name, run.pk, units[-1])  # delivered again
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert protocol.results_present(run)
