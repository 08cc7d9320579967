"""Benchmark: a whole EASEL suite under the mean-colour anchor and the budget-aligned search painter,
in process and on 1, 2, 4 Celery workers (the issue's third EASEL benchmark).

Baseline, measured in the same run: ``manage.py run_easel`` in process (eager, one core), for each
agent. Then, for each worker count N, one Celery worker with N prefork processes (Redis broker) and
``manage.py run_easel --queue`` (dispatch one job per episode, follow the run to done); the figure is
the wall time from the command's start to the run being done, and the ratio is in-process ÷ queued
(the speed-up). The machine is shared: ``os.cpu_count()`` and the load average are printed beside the
figures, since N workers cannot go faster than the cores they get.

Default suite: two references per category (8 references, 704 painter steps); ``--per-category 0``
runs the paper-sized 110-reference suite (several minutes per configuration).

Run: ``.venv/bin/python -m tests.benchmarks.bench_easel_runs [--per-category 2] [--workers 1,2,4]``.
Needs PostgreSQL (``BENCH_DATABASE_URL``, else ``DATABASE_URL`` if PostgreSQL, else
postgres://postgres@127.0.0.1:5432/postgres) and Redis (``BENCH_BROKER_URL``, default
redis://127.0.0.1:6379/14); skips with a message when either is missing. It creates and drops its own
database ``atelier_bench_easel``.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.benchmarks.bench_annotation_load import _admin_url, _postgres_reachable, _with_db, bench_database

ROOT = Path(__file__).resolve().parents[2]
BENCH_DB = "atelier_bench_easel"
AGENTS = ("mean_colour_fill", "painter")


def _redis_reachable(url: str) -> bool:
    host, _, port = url.split("//", 1)[1].split("/", 1)[0].partition(":")
    try:
        with socket.create_connection((host, int(port or 6379)), timeout=1):
            return True
    except OSError:
        return False


def _env(database_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}}
    env.update(DATABASE_URL=database_url, DJANGO_SETTINGS_MODULE="evalsite.settings", **extra)
    return env


def _manage(env: dict[str, str], *args: str) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-category", type=int, default=2, help="references per category (0: the paper's 110)")
    parser.add_argument("--workers", default="1,2,4")
    args = parser.parse_args()
    admin = _admin_url()
    broker = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/14")
    problem = _postgres_reachable(admin)
    if problem is not None:
        print(f"skipped: PostgreSQL not reachable ({problem})")
        return
    if not _redis_reachable(broker):
        print(f"skipped: Redis not reachable at {broker}")
        return
    database = _with_db(admin, BENCH_DB)
    queue = f"atelier-bench-easel-{os.getpid()}"
    bench_database(admin, BENCH_DB)
    try:
        env = _env(database)
        _manage(env, "migrate", "--no-input")
        suite = ["easel_suite", "--seed", "0", "--name", "bench"]
        if args.per_category:
            suite += ["--per-category", str(args.per_category)]
        _manage(env, *suite)
        print(f"suite: {'paper-sized (110 references)' if not args.per_category else f'{args.per_category} per category'}"
              f" + 5 semantic tasks; cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
        inline = {agent: _manage(env, "run_easel", "--task-set", "bench", "--agent", agent) for agent in AGENTS}
        for agent in AGENTS:
            print(f"in process (baseline)  {agent:<18} {inline[agent]:7.1f} s")
        queued_env = _env(database, CELERY_BROKER_URL=broker, CELERY_QUEUE=queue)
        for workers in [int(w) for w in args.workers.split(",") if w.strip()]:
            worker = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "evalsite", "worker", f"--concurrency={workers}", "--pool=prefork",
                 "--loglevel=warning", "--without-gossip", "--without-mingle", "--without-heartbeat",
                 "-n", f"bench-{workers}@%h"],
                cwd=ROOT, env=queued_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            )
            try:
                time.sleep(3.0)  # the worker's processes start before the clock does
                for agent in AGENTS:
                    seconds = _manage(queued_env, "run_easel", "--task-set", "bench", "--agent", agent, "--queue")
                    print(f"{workers} Celery worker(s)     {agent:<18} {seconds:7.1f} s   speed-up ×{inline[agent] / seconds:.2f} "
                          f"(load average {os.getloadavg()[0]:.1f})")
            finally:
                os.killpg(worker.pid, signal.SIGTERM)
                worker.wait(timeout=60)
    finally:
        bench_database(admin, BENCH_DB, drop_only=True)


if __name__ == "__main__":
    main()
