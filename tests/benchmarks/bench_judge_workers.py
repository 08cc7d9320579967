"""Judge runs on 1 and 2 Celery workers through Redis: the speed-up of a second worker (issue 16).

A judge run is split into one Celery task per task of the task set (``runs.unit``,
queued by ``runs.dispatch``; the last chunk to finish finalises the run in its own task), so workers
share a run chunk by chunk. For each worker count N (default 1 and 2) a task set of ``--tasks`` tasks
(14 subject models x 3 samples, the synthetic ideas of ``bench_judge_bookkeeping``) is seeded and its
TIGs built, and a simulated-judge run (U, E, N with TIG anchors, budget 50, the default diagnostic
layers) is started through the broker while one Celery worker with N prefork processes serves the queue.
Every N runs on the same task set, seeded and its TIGs built once, so that every run judges the same
calls (the simulated judge draws its verdicts by task set and seed, so task sets of their own judged 5,253
and 5,181 calls at 30 tasks); the checklist items a run stored (each task's template items, its Novelty
contexts) are deleted before the next N, which then stores them again from cold as the first did. The
speed-up is taken in calls a second (the walls' ratio when the calls are the same), the walls' ratio
printed beside it.

Printed per N: the wall time from starting the run to its snapshot, calls judged, calls per second,
the CPU time of the worker's processes, and the speed-up (N workers' calls a second ÷ 1 worker's, goal ≥ 1.8
for 2; the walls' ratio beside it).
The 1-minute load average is printed beside every figure: the machine has few cores and may be
shared, and N workers cannot go faster than the cores they get.

Run: ``.venv/bin/python -m tests.benchmarks.bench_judge_workers [--tasks 30] [--workers 1 2]``. Needs
PostgreSQL (``BENCH_DATABASE_URL``, else ``DATABASE_URL`` if it is PostgreSQL, else
postgres://postgres@127.0.0.1:5432/postgres) and Redis (``BENCH_BROKER_URL``, default
redis://127.0.0.1:6379/14); it creates and drops its own database ``atelier_bench_judge_workers`` and
uses a queue of its own. Skips with a message when either service is missing.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks.bench_annotation_load import (
    _admin_url,
    _children,
    _postgres_reachable,
    _proc_cpu_seconds,
    _setup_django,
    _with_db,
    bench_database,
    close_django_connections,
)
from tests.benchmarks.bench_easel_runs import _redis_reachable

ROOT = Path(__file__).resolve().parents[2]
BENCH_DB = "atelier_bench_judge_workers"
GOAL_SPEEDUP = 1.8


def _tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its children (the worker's prefork processes)."""
    return _proc_cpu_seconds(pid) + sum(_proc_cpu_seconds(child) for child in _children(pid))


def _start_worker(processes: int, queue: str) -> subprocess.Popen:
    """Start the worker and return once it answers a ping: the clock starts on a worker ready to take the run.
    A fixed 4 s sleep was too short on a loaded machine — the run's wall then held up to 3 s of the worker's
    own start (importing Django), the same for 1 and 2 processes, which pulled the speed-up towards 1."""
    from evalsite.celery import app

    env = {**os.environ, "CELERY_QUEUE": queue}
    name = f"bench-judge-{processes}-{os.getpid()}@{socket.gethostname()}"
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalsite", "worker", f"--concurrency={processes}", "--pool=prefork",
         "--loglevel=warning", "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", name],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    deadline = time.perf_counter() + 120.0
    while not app.control.ping(destination=[name], timeout=0.5):
        if worker.poll() is not None or time.perf_counter() > deadline:
            _stop(worker)
            raise RuntimeError(f"worker {name} did not answer a ping (exit code {worker.returncode})")
    time.sleep(1.0)  # its pool's processes, forked before it answers, settle (the load average they raised falls)
    return worker


def _stop(worker: subprocess.Popen) -> None:
    """A warm shutdown: SIGTERM to the worker's main process alone, which lets its processes finish the tasks
    they are running — the snapshot's cache warm-up, queued when the run finished — before it exits (one it
    has not started goes back to the queue, which :func:`measure` empties before the next worker starts).
    SIGTERM to the whole process group killed that warm-up mid-way; acknowledged late, it went back to the
    queue and the next worker count's worker ran it at its run's start (0.5 s of one of its two processes,
    measured in its wall). The group is killed only if the worker has not stopped within the timeout."""
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)


def _speedup(first: dict, row: dict) -> float:
    """``row``'s calls a second over ``first``'s (the walls' ratio when both judged the same calls)."""
    return (row["calls"] / row["wall"]) / (first["calls"] / first["wall"])


#: (task set, the last checklist item's id before any run) by number of tasks: every worker count's run judges it
_TASK_SETS: dict = {}


def measure(processes: int, n_tasks: int, queue: str, timeout: float) -> dict:
    from django.db import transaction
    from django.db.models import Max

    from leaderboard.ekphrasis import judge_runs
    from leaderboard.ekphrasis.models import ChecklistItem, Comparison, JudgeRun
    from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute
    from tests.benchmarks.bench_judge_bookkeeping import seed_task_set

    if n_tasks not in _TASK_SETS:
        task_set, _ = seed_task_set(n_tasks, f"workers-{n_tasks}")
        tig_build_execute(build_id=tig_build_create(task_set=task_set).pk)
        _TASK_SETS[n_tasks] = task_set, ChecklistItem.objects.aggregate(last=Max("pk"))["last"] or 0
    task_set, items_before = _TASK_SETS[n_tasks]
    # the checklist items the last run stored (each task's template items, its Novelty contexts): this run
    # stores them again, from cold, as the first did
    ChecklistItem.objects.filter(task__task_set=task_set, pk__gt=items_before).delete()
    run = judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="UEN",
                                      budget_per_task=50, seed=42, config={"n_boot": 200})
    import redis

    # the queue starts empty: a message the previous worker count's worker left (the finished run's cache warm-up,
    # sent as that run finished and given back to the queue when its worker stopped) would otherwise be run by
    # this worker's processes as its run starts
    redis.Redis.from_url(os.environ["CELERY_BROKER_URL"]).delete(queue)
    worker = _start_worker(processes, queue)
    try:
        cpu0, load0 = _tree_cpu(worker.pid), os.getloadavg()[0]
        started = time.perf_counter()
        with transaction.atomic():
            judge_runs.judge_run_start(run=run)  # queued through the broker when the transaction commits
        deadline = started + timeout
        while True:
            status = JudgeRun.objects.filter(pk=run.pk).values_list("status", flat=True).get()
            if status in (JudgeRun.Status.DONE, JudgeRun.Status.FAILED):
                break
            if time.perf_counter() > deadline:
                raise RuntimeError(f"run {run.pk} not done after {timeout:.0f} s (status {status})")
            time.sleep(0.02)  # the wall is read to within 20 ms (0.2 s added 0.1 s on average to each)
        wall = time.perf_counter() - started
        cpu = _tree_cpu(worker.pid) - cpu0
        per_process = sorted(round(_proc_cpu_seconds(child), 1) for child in _children(worker.pid))
        load1 = os.getloadavg()[0]
    finally:
        _stop(worker)
    if status != JudgeRun.Status.DONE:
        raise RuntimeError(f"run {run.pk} failed: {JudgeRun.objects.get(pk=run.pk).error}")
    calls = Comparison.objects.filter(run=run).exclude(kind=Comparison.Kind.AUTOMATIC).count()
    return {"processes": processes, "wall": wall, "calls": calls, "cpu": cpu, "load0": load0, "load1": load1,
            "per_process": per_process}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=30, help="tasks per run (each worker count judges its own set)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="prefork processes of the worker")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for one run")
    args = parser.parse_args(argv)
    admin = _admin_url()
    broker = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/14")
    problem = _postgres_reachable(admin)
    if problem:
        print(f"SKIPPED bench_judge_workers: PostgreSQL is not available ({problem}).")
        return 0
    if not _redis_reachable(broker):
        print(f"SKIPPED bench_judge_workers: Redis is not reachable at {broker}.")
        return 0
    bench_database(admin, BENCH_DB)
    var_dir = tempfile.mkdtemp(prefix="atelier-bench-judge-workers-")
    queue = f"atelier-bench-judge-{os.getpid()}"
    env = {
        "DATABASE_URL": _with_db(admin, BENCH_DB), "ATELIER_VAR_DIR": var_dir, "DEBUG": "false",
        "ATELIER_DEV": "true", "SECRET_KEY": secrets.token_urlsafe(40), "LOG_LEVEL": "ERROR",
        "CELERY_BROKER_URL": broker, "CELERY_QUEUE": queue,
    }
    try:
        _setup_django(env)  # the workers inherit this environment: same database, broker, caches
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        print(f"Judge runs on Celery workers (Redis): simulated judge, {args.tasks} tasks x 14 models x 3 samples, "
              f"UEN, budget 50; PostgreSQL; {os.cpu_count()} CPUs")
        header = (f"{'worker processes':>16} {'calls':>7} {'wall s':>8} {'calls/s':>8} {'worker CPU s':>12} "
                  f"{'speed-up':>9} {'load avg start/end':>19}")
        print(header)
        print("-" * len(header))
        rows = []
        for processes in args.workers:
            row = measure(processes, args.tasks, queue, args.timeout)
            rows.append(row)
            speedup = _speedup(rows[0], row)
            print(f"{row['processes']:>16} {row['calls']:>7} {row['wall']:>8.1f} {row['calls'] / row['wall']:>8.1f} "
                  f"{row['cpu']:>12.1f} {speedup:>9.2f} {row['load0']:>9.2f}/{row['load1']:.2f}   "
                  f"(CPU s per worker process since it started: {row['per_process']})", flush=True)
        for row in rows[1:]:
            speedup = _speedup(rows[0], row)
            goal = f" (goal >= {GOAL_SPEEDUP} for 2: {'met' if speedup >= GOAL_SPEEDUP else 'NOT met'})" if row["processes"] == 2 else ""
            print(f"{row['processes']} worker processes: x{speedup:.2f} the speed of {rows[0]['processes']} in calls a second"
                  f"{goal}; the walls' ratio x{rows[0]['wall'] / row['wall']:.2f} ({rows[0]['calls']} and {row['calls']} calls)")
        return 0
    finally:
        close_django_connections()
        try:
            import redis

            redis.Redis.from_url(broker).delete(queue)
        except Exception as exc:  # noqa: BLE001 — the queue is ours; a failure to delete it is only reported
            print(f"(deleting queue {queue}: {exc})", file=sys.stderr)
        bench_database(admin, BENCH_DB, drop_only=True)
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
