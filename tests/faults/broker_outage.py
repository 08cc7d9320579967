"""Fault: Redis (the Celery broker) stops for a while during a running judge run (issue 28).

In a process of its own, with a throwaway PostgreSQL cluster and a throwaway Redis (append-only file on,
as a deployment keeps its queue across a restart): a simulated judge run of many tasks is sent to a real
Celery worker; once a few of its chunks are done Redis is stopped for ``--outage-s`` seconds and started
again. The same run judged inline, uninterrupted, is the reference.

Prints one JSON object: the run's final status, chunks lost (never done) and repeated (comparisons beyond
the reference's), whether its comparisons equal the reference's, the time from Redis back to the run's
next progress (recovery) and to its end, and a run started *during* the outage (it must wait, pending,
and start by itself when the broker returns).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.faults.database_restart import setup_django, site_env
from tests.faults.servers import ROOT, ThrowawayPostgres, ThrowawayRedis


class PersistentRedis(ThrowawayRedis):
    """Redis with its append-only file in a folder of its own: a restart keeps the queued messages."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="atelier-fault-redis-")
        super().__init__()

    def start(self) -> None:
        from tests.faults.servers import wait_port

        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
             "--appendfsync", "always", "--dir", self.folder], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, 10)


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalsite", "worker", "--pool=solo", "--loglevel=info",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", "fault@%h",
         # beat inside the worker, as a deployment runs it: it sends the runs left waiting for the queue
         "--beat", "--schedule", str(log.parent / "beat-schedule")],
        cwd=ROOT, env={**os.environ, **env}, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)


def wait_until(predicate, deadline: float) -> float | None:
    """Seconds until ``predicate()`` held, or None if it did not by ``deadline`` (time.monotonic)."""
    started = time.monotonic()
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.1)
    return None


def phase(what: str, since: float) -> None:
    """One line on stderr per step: the test shows them when the scenario fails or runs out of time."""
    print(f"[{time.monotonic() - since:7.1f} s] {what}", file=sys.stderr, flush=True)


def run(n_tasks: int, budget: int, outage_s: float, timeout_s: float) -> dict:
    """``timeout_s`` bounds all the waiting on the worker together (from its start), not each wait."""
    began = time.monotonic()
    postgres, redis_server = ThrowawayPostgres(), PersistentRedis()
    var_dir = tempfile.mkdtemp(prefix="atelier-fault-var-")
    env = site_env(postgres.url, var_dir, CELERY_BROKER_URL=redis_server.url, CELERY_QUEUE="fault",
                   # an unacknowledged chunk comes back within seconds, not the default hour
                   CELERY_VISIBILITY_TIMEOUT="10", CELERY_UNACKED_RESTORE_INTERVAL="1",
                   CELERY_UNACKED_RESTORE_THROTTLE="1", ATELIER_QUEUE_SWEEP_SECONDS="2")
    worker, log = None, Path(var_dir) / "worker.log"
    finished = None
    try:
        setup_django(env)
        from django.core.management import call_command

        phase("servers up", began)
        call_command("migrate", verbosity=0, interactive=False)
        phase("migrated", began)
        from leaderboard.ekphrasis import judge_runs
        from leaderboard.ekphrasis.models import Comparison, JudgeRun, JudgeRunTask
        from tests.leaderboard.ekphrasis.test_judge_runs import comparison_fingerprint
        from tests.leaderboard.judging_factories import population, simulated_run

        task_set, models = population(n_models=6, n_tasks=n_tasks, name="broker")
        reference = simulated_run(task_set, models, budget=budget, dimensions="UE")
        judge_runs.judge_run_execute_inline(run=reference)  # in this process, no broker involved
        phase("reference run judged inline", began)
        run_ = simulated_run(task_set, models, budget=budget, dimensions="UE")
        worker = start_worker(env, log)
        deadline = time.monotonic() + timeout_s
        judge_runs.judge_run_start(run=run_)

        def chunks_done() -> int:
            return JudgeRunTask.objects.filter(run=run_, done=True).count()

        started = wait_until(lambda: chunks_done() >= 2, deadline)
        phase(f"{chunks_done()} chunks done: Redis stops", began)
        redis_server.stop()
        stopped_at = time.monotonic()
        done_at_stop = chunks_done()
        # A run started while the broker is away: it must wait, pending, with its note.
        waiting = simulated_run(task_set, models, budget=2, dimensions="U", seed=99)
        start_refused = None
        try:
            judge_runs.judge_run_start(run=waiting)
        except Exception as exc:  # noqa: BLE001 — reported, the test asserts there is none
            start_refused = repr(exc)
        waiting.refresh_from_db()
        waiting_note = waiting.error
        time.sleep(max(0.0, outage_s - (time.monotonic() - stopped_at)))
        progressed_during = chunks_done() - done_at_stop
        redis_server.start()
        back_at = time.monotonic()
        phase("Redis is back", began)
        recovery = wait_until(lambda: chunks_done() > done_at_stop + progressed_during
                              or JudgeRun.objects.get(pk=run_.pk).status == JudgeRun.Status.DONE, deadline)
        finished = wait_until(lambda: JudgeRun.objects.get(pk=run_.pk).status in (JudgeRun.Status.DONE,
                                                                                  JudgeRun.Status.FAILED), deadline)
        phase(f"the run is {JudgeRun.objects.get(pk=run_.pk).status}", began)
        waited_run_done = wait_until(lambda: JudgeRun.objects.get(pk=waiting.pk).status == JudgeRun.Status.DONE,
                                     deadline)
        phase(f"the run started during the outage is {JudgeRun.objects.get(pk=waiting.pk).status}", began)
        run_.refresh_from_db()
        ours, theirs = comparison_fingerprint(run_), comparison_fingerprint(reference)
        return {
            "tasks": n_tasks, "outage_s": round(back_at - stopped_at, 1),
            "started_after_s": started, "chunks_done_at_stop": done_at_stop, "chunks_done_during_outage": progressed_during,
            "status": run_.status, "error": run_.error,
            "chunks_lost": JudgeRunTask.objects.filter(run=run_, done=False).count(),
            "comparisons": len(ours), "reference_comparisons": len(theirs),
            "repeated": max(0, len(ours) - len(theirs)),
            "planned_left": Comparison.objects.filter(run=run_, status=Comparison.Status.PLANNED).count(),
            "identical_to_reference": ours == theirs,
            "recovery_s": recovery, "finished_after_back_s": None if finished is None else finished,
            "started_during_outage": {"refused": start_refused, "note": waiting_note,
                                      "done_after_back_s": waited_run_done},
        }
    finally:
        if worker is not None and worker.poll() is None:
            os.killpg(worker.pid, 15)
            worker.wait(30)
        if worker is not None and finished is None and log.exists():  # what the worker did, for the failure
            print("".join(log.read_text(errors="replace").splitlines(keepends=True)[-60:]), file=sys.stderr)
        redis_server.remove()
        postgres.remove()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--outage-s", type=float, default=30.0)
    parser.add_argument("--timeout-s", type=float, default=240.0,
                        help="the longest all waiting on the worker may take together (from its start)")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.tasks, args.budget, args.outage_s, args.timeout_s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
