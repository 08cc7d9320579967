"""Celery paths: eager in-process without a broker; a real worker through Redis with one; and a
worker killed mid-run whose unacknowledged chunk is redelivered to a new worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from django.db import connection, transaction

from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import Comparison, JudgeRun, JudgeRunTask
from tests.celery_broker import broker_emptied
from tests.conftest import require_service, subprocess_environment
from tests.leaderboard.ekphrasis.test_judge_runs import comparison_fingerprint
from tests.leaderboard.judging_factories import population, simulated_run

ROOT = Path(__file__).resolve().parents[2]
BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
QUEUE = f"atelier-test-{os.getpid()}"  # this test process's own queue on the shared Redis


@pytest.fixture
def broker():
    require_service("redis")
    import redis

    client = redis.Redis.from_url(BROKER_URL)
    broker_emptied(client, QUEUE)
    yield BROKER_URL
    broker_emptied(client, QUEUE)


def start_worker(log: Path, *, beat: bool = False, **env: str) -> subprocess.Popen:
    # beat inside the worker, as a deployment runs it, for the sweeps (leaderboard.runs.queue, lost_messages)
    beat_args = ["--beat", "--schedule", str(log.with_suffix(".beat"))] if beat else []
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalsite", "worker", "--pool=solo", "--loglevel=info",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"test-{log.stem}@%h", *beat_args],
        cwd=ROOT, env=subprocess_environment(CELERY_BROKER_URL=BROKER_URL, CELERY_QUEUE=QUEUE, **env),
        stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
    )


def stop(process: subprocess.Popen, sig=signal.SIGTERM) -> None:
    if process.poll() is None:
        os.killpg(process.pid, sig)
    process.wait(timeout=60)


def wait_for(predicate, timeout: float, what: str, *, state=None) -> None:
    """Poll ``predicate`` until it holds; on a timeout say ``state()`` too (what was seen instead)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}" + (f": {state()}" if state else ""))
        time.sleep(0.2)


def enqueue(run, kind: str = "judge_run") -> None:
    """Send the run's dispatch message through the broker, as the web process does."""
    subprocess.run(
        [sys.executable, "-c",
         "import django; django.setup(); from leaderboard.runs.tasks import run_dispatch; "
         f"run_dispatch.delay({kind!r}, {run.pk})"],
        cwd=ROOT, env=subprocess_environment(CELERY_BROKER_URL=BROKER_URL, CELERY_QUEUE=QUEUE), check=True, timeout=60,
    )


def kill_mid_run_and_resume(run, kind: str, tmp_path: Path, *, units, started, done) -> None:
    """Start ``run`` on a real worker and SIGKILL it once ``started()`` holds (no warm shutdown: the unit
    in hand is never acknowledged); the run is then not done, and a second worker finishes it (``done()``).
    The unacknowledged unit is redelivered 3 s after the kill, looked for every second (kombu's own sweep
    is ~100 s).

    The first worker must not finish the run before the kill, however fast it judges: with polling alone
    a faster run (or a busy machine that starved the poll) finished before the kill. See
    ``first_worker_held_back`` for how each database prevents it."""
    fast_redelivery = {"CELERY_VISIBILITY_TIMEOUT": "3", "CELERY_UNACKED_RESTORE_INTERVAL": "1",
                       "CELERY_UNACKED_RESTORE_THROTTLE": "1"}
    first = start_worker(tmp_path / "first.log", **fast_redelivery)
    try:
        with first_worker_held_back(units) as wait_until:
            enqueue(run, kind)
            wait_until(started, 120, "some work before the kill")
            stop(first, signal.SIGKILL)
    finally:
        stop(first, signal.SIGKILL)
    assert not done()
    second = start_worker(tmp_path / "second.log", **fast_redelivery)
    try:
        wait_for(done, 180, "the resumed run")
    finally:
        stop(second)


@contextmanager
def first_worker_held_back(units):
    """Keep a worker from finishing the run whose unit rows are ``units`` (in plan order) until this block
    ends; yields a ``wait_for`` to poll with inside it.

    PostgreSQL: the middle unit's row is held locked (SELECT ... FOR UPDATE), so the worker cannot finish
    that unit, nor the run; each poll is a statement of its own, so it sees what the worker committed.

    SQLite has no row locks, and a transaction here holds the whole database's write lock (BEGIN
    IMMEDIATE, evalsite.settings), so holding one for the whole wait would stop the worker's every write
    (the worker would never start). Instead each poll takes the write lock, so nothing commits between
    its check and the kill that follows it, and lets it go between polls. This narrows the window rather
    than closing it: the worker runs unchecked only during one gap (50 ms, plus however long this process
    waits for a CPU), where the run needs seconds of work past the point ``started`` looks for."""
    if connection.vendor != "sqlite":
        middle = list(units.values_list("pk", flat=True))
        middle = middle[len(middle) // 2]
        with transaction.atomic():
            assert units.model.objects.select_for_update().filter(pk=middle).exists()
            yield wait_for
        return

    with ExitStack() as holding:
        def wait_for_holding_the_write_lock(predicate, timeout: float, what: str) -> None:
            deadline = time.monotonic() + timeout
            while True:
                with ExitStack() as poll:
                    poll.enter_context(transaction.atomic())  # BEGIN IMMEDIATE: waits for the worker's commit in hand
                    if predicate():
                        holding.push(poll.pop_all())  # held until the block ends: the caller kills the worker first
                        return
                if time.monotonic() > deadline:
                    raise AssertionError(f"timed out waiting for {what}")
                time.sleep(0.05)

        yield wait_for_holding_the_write_lock


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_a_started_run_runs_eagerly_in_process(settings):
    assert settings.CELERY_TASK_ALWAYS_EAGER
    task_set, models = population(n_models=4, n_tasks=2)
    run = simulated_run(task_set, models, budget=6)
    judge_runs.judge_run_start(run=run)  # outside a transaction: on_commit fires at once
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE and run.snapshots.count() == 1


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_the_judge_run_through_redis(broker, tmp_path):
    task_set, models = population(n_models=4, n_tasks=3)
    run = simulated_run(task_set, models, budget=8)
    worker = start_worker(tmp_path / "worker.log")
    try:
        enqueue(run)
        wait_for(lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE, 120, "the run to finish")
    finally:
        stop(worker)
    log = (tmp_path / "worker.log").read_text()
    assert "runs.unit" in log and "succeeded" in log
    run.refresh_from_db()
    assert run.snapshots.count() == 1
    assert Comparison.objects.filter(run=run, kind="primary").count() == 3 * 8


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_loses_nothing_and_duplicates_nothing(broker, tmp_path):
    # 36 tasks (about 2,800 comparisons). Polling alone could not keep the first worker from finishing the
    # run before the kill: with four tasks it sometimes did, with twelve once at load 7, and with 36 once in
    # CI on 2026-12-07 after the planner and TIG got faster. kill_mid_run_and_resume now holds the middle
    # chunk's row locked until the kill (with a 20 s pause in the poll the run stayed unfinished; without
    # the lock it finished and this test failed).
    task_set, models = population(n_models=5, n_tasks=36, name="celerykill")
    reference = simulated_run(task_set, models, budget=25, dimensions="UEN")
    judge_runs.judge_run_execute_inline(run=reference)

    run = simulated_run(task_set, models, budget=25, dimensions="UEN")
    kill_mid_run_and_resume(run, "judge_run", tmp_path, units=JudgeRunTask.objects.filter(run=run).order_by("pk"),
                            started=lambda: Comparison.objects.filter(run=run, status="ok").count() >= 60,
                            done=lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE)
    assert comparison_fingerprint(run) == comparison_fingerprint(reference)


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
def test_a_run_whose_queued_units_the_broker_loses_is_sent_again_and_finishes_identically(broker, tmp_path):
    # What kombu's Redis transport can lose when Redis stops between BRPOP and recording the message as
    # unacknowledged: here every unit the dispatch queued is taken out of Redis before a worker can take
    # one, so the broker holds no message of the running run (leaderboard/runs/lost_messages.py). The
    # dispatch runs in this process, as a worker runs it (not eagerly: the run is driven by workers), and
    # the worker starts only afterwards: a worker running while the units are queued can finish the whole
    # run before this test sees one of them (seen in make test).
    import json

    import redis

    from leaderboard.runs.tasks import run_dispatch
    from tests.celery_broker import celery_app_on

    task_set, models = population(n_models=5, n_tasks=12, name="celerylost")
    reference = simulated_run(task_set, models, budget=12, dimensions="UE")
    judge_runs.judge_run_execute_inline(run=reference)

    run = simulated_run(task_set, models, budget=12, dimensions="UE")
    client = redis.Redis.from_url(broker)
    with celery_app_on(broker, QUEUE):
        queued = run_dispatch("judge_run", run.pk)
    units = [m for m in client.lrange(QUEUE, 0, -1) if json.loads(m)["headers"]["task"] == "runs.unit"]
    assert queued == 12 and len(units) == queued
    assert sum(client.lrem(QUEUE, 1, message) for message in units) == queued
    assert JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.RUNNING
    worker = start_worker(tmp_path / "worker.log", beat=True, ATELIER_QUEUE_SWEEP_SECONDS="1")
    try:
        wait_for(lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE, 180, "the run to finish")
    finally:
        stop(worker)
    run.refresh_from_db()
    assert run.queued  # driven by the worker, so the sweep may look after it
    assert "the broker holds none of its messages" in (tmp_path / "worker.log").read_text()
    assert comparison_fingerprint(run) == comparison_fingerprint(reference)
    assert run.snapshots.count() == 1


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
def test_a_run_resumed_twice_at_once_on_two_workers_judges_each_call_once(broker, tmp_path, settings):
    # Two Resume clicks (or API calls) before a worker has taken the first: both are accepted while the run
    # is still failed, so two dispatches queue every unfinished unit twice, and two workers take them.
    task_set, models = population(n_models=5, n_tasks=12, name="celerytwice")
    reference = simulated_run(task_set, models, budget=12, dimensions="UE")
    judge_runs.judge_run_execute_inline(run=reference)

    run = simulated_run(task_set, models, budget=12, dimensions="UE")
    _resume_twice_on_two_workers(run, broker, tmp_path, settings)
    assert Comparison.objects.filter(run=run).count() == Comparison.objects.filter(run=reference).count()
    assert comparison_fingerprint(run) == comparison_fingerprint(reference)
    assert run.snapshots.count() == 1


def _resume_twice_on_two_workers(run, broker, tmp_path, settings) -> None:
    """Cancel ``run``, then resume it twice before any worker has taken the first (two Resume clicks):
    two dispatches queue every unfinished unit twice; two real workers take them until the run is done
    and the queue is empty."""
    from leaderboard.runs.lifecycle import run_cancel
    from leaderboard.runs.starting import run_resume
    from tests.celery_broker import celery_app_on

    model = type(run)
    run_cancel(run)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with celery_app_on(broker, QUEUE):
        for _ in range(2):
            run_resume(model.objects.get(pk=run.pk))
    workers = [start_worker(tmp_path / f"worker{i}.log") for i in range(2)]
    cancelled = model.objects.get(pk=run.pk).error  # failed until a dispatch takes it, with the cancel's error

    def ended() -> bool:
        # done, or failed since the resume: a failure is told at once with its error, not after the whole timeout
        current = model.objects.get(pk=run.pk)
        return current.status == model.Status.DONE or (current.status == model.Status.FAILED and current.error != cancelled)

    try:
        wait_for(ended, 240, "the resumed run", state=lambda: _run_state(run))
        wait_for(lambda: _queue_length(broker) == 0, 60, "the queue to drain")
    finally:
        for worker in workers:
            stop(worker)
    run.refresh_from_db()
    assert run.status == model.Status.DONE, _run_state(run)


def _run_state(run) -> str:
    """A run's status, error and unfinished units: a run left running with none unfinished lost its finalising
    (leaderboard.runs.lifecycle.run_counting_finished_units), one with some lost a unit's message."""
    from leaderboard.runs.lifecycle import job_kind_of

    kind = job_kind_of(run)
    current = type(run).objects.get(pk=run.pk)
    unfinished = kind.call("pending_units", run_id=run.pk)
    return f"{current.status}, error {current.error!r}, {len(unfinished)} {kind.unit_name}s unfinished"


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
def test_an_easel_run_resumed_twice_at_once_on_two_workers_plays_each_step_once(broker, tmp_path, settings):
    from leaderboard.easel import services

    suite, _ = services.easel_suite_create(
        seed=0, per_category={"programmatic": 6, "spatial_geometry": 0, "abstract_cartoon": 0, "natural": 0},
        name="easel-twice")
    reference = services.easel_run_execute_inline(
        run=services.easel_run_create(task_set=suite, agent="simulated", skill=0.5))

    run = services.easel_run_create(task_set=suite, agent="simulated", skill=0.5)
    _resume_twice_on_two_workers(run, broker, tmp_path, settings)
    assert _easel_steps(run) == _easel_steps(reference)
    # the run's counters add each finished step and episode once: a unit played twice would count twice
    assert (run.episodes_done, run.steps_done) == (reference.episodes_done, reference.steps_done)
    scores = lambda r: list(r.episodes.order_by("task_id").values_list("status", "final_s", "semantic_score"))  # noqa: E731
    assert scores(run) == scores(reference)


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
def test_a_c2_run_resumed_twice_at_once_on_two_workers_answers_and_rates_each_sample_once(broker, tmp_path, settings):
    from leaderboard.c2.models import C2Rating

    make, reference = _c2_trivia_run("c2-twice", n=12)
    run = make()
    _resume_twice_on_two_workers(run, broker, tmp_path, settings)
    assert _c2_samples(run) == _c2_samples(reference)
    assert C2Rating.objects.filter(sample__run=run).count() == C2Rating.objects.filter(sample__run=reference).count()
    # every answer, confidence and rating call is counted as it is made: a prompt worked twice counts twice
    assert (run.calls_done, run.calls_planned) == (reference.calls_done, reference.calls_planned)
    assert run.results == reference.results


def _queue_length(broker_url: str) -> int:
    import redis

    return redis.Redis.from_url(broker_url).llen(QUEUE)


def _easel_steps(run) -> list[tuple]:
    from leaderboard.easel.models import EaselStep

    return list(EaselStep.objects.filter(episode__run=run).order_by("episode__task_id", "index").values_list(
        "episode__task_id", "index", "valid", "kind", "action", "s"))


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_during_an_easel_run_loses_no_step_and_repeats_none(broker, tmp_path):
    from leaderboard.easel import services
    from leaderboard.easel.models import EaselEpisode, EaselRun

    suite, _ = services.easel_suite_create(
        seed=0, per_category={"programmatic": 8, "spatial_geometry": 0, "abstract_cartoon": 0, "natural": 0},
        name="easel-kill")
    reference = services.easel_run_execute_inline(
        run=services.easel_run_create(task_set=suite, agent="simulated", skill=0.5))
    total = len(_easel_steps(reference))

    run = services.easel_run_create(task_set=suite, agent="simulated", skill=0.5)
    kill_mid_run_and_resume(run, "easel_run", tmp_path,
                            units=EaselEpisode.objects.filter(run=run).order_by("position", "pk"),
                            started=lambda: len(_easel_steps(run)) >= total // 4,
                            done=lambda: EaselRun.objects.get(pk=run.pk).status == EaselRun.Status.DONE)
    assert _easel_steps(run) == _easel_steps(reference)
    run.refresh_from_db()
    assert (run.episodes_done, run.steps_done) == (reference.episodes_done, reference.steps_done)


def _c2_samples(run) -> list[tuple]:
    from leaderboard.c2.models import C2Sample

    return list(C2Sample.objects.filter(run=run).order_by("subject_model__display_name", "task_id", "sample_index").values_list(
        "subject_model__display_name", "task_id", "sample_index", "status", "text", "confidence", "verdict", "correct"))


def _c2_trivia_run(name: str, *, n: int):
    """A TriviaQA task set of ``n`` questions, a maker of C² runs on it, and one run of it finished inline."""
    import json

    from leaderboard.c2.services import runs
    from leaderboard.c2.services.imports import c2_tasks_import

    trivia = {"Data": [{"Question": f"Which number comes after {i}?", "QuestionId": f"q{i}",
                        "Answer": {"Value": str(i + 1), "NormalizedAliases": [str(i + 1)]}} for i in range(n)]}
    task_set, _ = c2_tasks_import(fmt="triviaqa", name="qa.json", raw=json.dumps(trivia).encode(),
                                  task_set_name=name, version="1")
    make = lambda: runs.c2_run_create(task_set=task_set, model_names=["simulated-a", "simulated-b"],  # noqa: E731
                                      n_samples=3)
    return make, runs.c2_run_execute_inline(run=make())


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_during_a_c2_run_loses_no_sample_and_repeats_none(broker, tmp_path):
    from leaderboard.c2.models import C2Rating, C2Run, C2RunPrompt

    make, reference = _c2_trivia_run("c2-kill", n=24)
    total = len(_c2_samples(reference))

    run = make()
    kill_mid_run_and_resume(run, "c2_run", tmp_path, units=C2RunPrompt.objects.filter(run=run).order_by("pk"),
                            started=lambda: run.samples.exclude(text="").count() >= total // 4,
                            done=lambda: C2Run.objects.get(pk=run.pk).status == C2Run.Status.DONE)
    assert _c2_samples(run) == _c2_samples(reference)
    assert C2Rating.objects.filter(sample__run=run).count() == C2Rating.objects.filter(sample__run=reference).count()
