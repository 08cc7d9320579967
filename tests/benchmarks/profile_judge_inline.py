"""The inline judge run alone, counted (issue 30): cProfile's function calls or callgrind's instructions.

Seeds ``--tasks`` tasks as ``bench_judge_bookkeeping`` does (14 models x 3 samples), builds their TIG, creates
the same simulated run (dimensions UEN, budget 50, seed 42, ``n_boot`` 200), and counts
``judge_runs.judge_run_execute_inline`` only:

* without either: the run's CPU time, this process's and its PostgreSQL backend's, printed;
* ``--profile FILE``: cProfile of the run, its stats written to FILE (``pstats``); the total calls printed;
* ``--waits``: beside the CPU times, the times this process blocked on its PostgreSQL connection (psycopg's
  ``Connection.wait`` calls that waited to read the server's reply, the round trips), the wall time spent so, and the backend's
  CPU (its ``/proc/<pid>/schedstat`` run time, in ns) within those waits and outside them: the backend's work the
  process did not wait for is the work that overlapped its own;
* under valgrind (``--callgrind``): callgrind's counters zeroed just before the run and dumped just after it
  (client requests, as ``callgrind_tig``), with the engine's TIG contexts and population indexes
  (``PopulationIndex.context`` and ``__init__``, other work's) left out of the count
  (``CALLGRIND_TOGGLE_COLLECT`` around them), so the dump holds the process's own work on the run.

Then prints the sha256 of the run's comparisons and snapshot (``run_digest_source`` of the pinned-output
test), the same before and after a change that keeps results. Creates and drops ``--database``.

Run: ``.venv/bin/python -m tests.benchmarks.profile_judge_inline --database NAME --profile /tmp/p.prof``, or
``valgrind --tool=callgrind --collect-atstart=no --instr-atstart=no --callgrind-out-file=/tmp/cg.%p .venv/bin/python -m
tests.benchmarks.profile_judge_inline --database NAME --callgrind``; then ``callgrind_annotate /tmp/cg.<pid>.1``.
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse
import ctypes
import hashlib
import secrets
import subprocess
import tempfile

from tests.benchmarks.bench_annotation_load import (
    _admin_url,
    _setup_django,
    _with_db,
    bench_database,
    close_django_connections,
)

_MARKS_C = r"""
#include <valgrind/callgrind.h>
void marks_zero(void) { CALLGRIND_ZERO_STATS; }
void marks_dump(void) { CALLGRIND_DUMP_STATS_AT("judge run inline"); }
void marks_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
void marks_start(void) { CALLGRIND_START_INSTRUMENTATION; }
"""


def _marks(directory: str) -> ctypes.CDLL | None:
    source, library = os.path.join(directory, "marks.c"), os.path.join(directory, "marks.so")
    with open(source, "w") as f:
        f.write(_MARKS_C)
    done = subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", library, source], capture_output=True)
    return ctypes.CDLL(library) if done.returncode == 0 else None


def _uncounted(owner: type, name: str, marks: ctypes.CDLL) -> None:
    """``owner.name`` run with callgrind's collection toggled off (and on again after)."""
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        marks.marks_toggle()
        try:
            return original(*args, **kwargs)
        finally:
            marks.marks_toggle()

    setattr(owner, name, wrapped)


class BlockingWaits:
    """Counts psycopg's waits on the connection to backend ``pid`` (``psycopg.Connection.wait``, patched on the
    class until :meth:`stop`): every call, the calls whose generator waited for the socket at least once (a
    round trip the process blocked on: its generator asked to wait for the socket to be readable, with nothing left to send), the wall time inside the calls, and the backend's CPU time inside them
    and in all (``/proc/<pid>/schedstat``'s first field: ns on a CPU, exact where ``/proc/<pid>/stat`` counts
    10 ms ticks)."""

    def __init__(self, pid: int) -> None:
        import time

        import psycopg
        from psycopg.waiting import Wait

        self.pid, self.calls, self.blocked, self.wall, self.backend_inside = pid, 0, 0, 0.0, 0
        self._class, self._original = psycopg.Connection, psycopg.Connection.wait
        self._start = self._backend_ns()
        original, clock, backend_ns = self._original, time.perf_counter, self._backend_ns

        def wait(connection, gen, *args, **kwargs):
            if connection.info.backend_pid != pid:
                return original(connection, gen, *args, **kwargs)
            waited = False

            def watched():  # the generator as psycopg runs it, noting whether it waited to read the server's reply
                nonlocal waited
                sent = None
                try:
                    while True:
                        state = gen.send(sent)
                        waited = waited or state == Wait.R  # R alone: nothing left to send, only a reply to wait for
                        sent = yield state
                except StopIteration as stop:
                    return stop.value

            b0, t0 = backend_ns(), clock()
            try:
                return original(connection, watched(), *args, **kwargs)
            finally:
                self.wall += clock() - t0
                self.backend_inside += backend_ns() - b0
                self.calls += 1
                self.blocked += waited

        self._class.wait = wait

    def _backend_ns(self) -> int:
        with open(f"/proc/{self.pid}/schedstat") as f:
            return int(f.read().split()[0])

    def stop(self) -> None:
        self.backend_total = self._backend_ns() - self._start
        self._class.wait = self._original

    def report(self) -> str:
        outside = self.backend_total - self.backend_inside
        return (f"waits on PostgreSQL: {self.calls} calls, {self.blocked} waited for a reply, {self.wall:.3f} s "
                f"inside; backend CPU {self.backend_total / 1e9:.3f} s, {self.backend_inside / 1e9:.3f} s of it "
                f"inside the waits, {outside / 1e9:.3f} s outside (overlapping this process)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--database", required=True, help="the database it creates and drops")
    parser.add_argument("--profile", default=None, help="write cProfile stats of the run here")
    parser.add_argument("--callgrind", action="store_true", help="mark the run for callgrind (run under valgrind)")
    parser.add_argument("--waits", action="store_true", help="count the blocking waits on PostgreSQL (see above)")
    parser.add_argument("--var-dir", default=None, help="ATELIER_VAR_DIR (a kept one keeps the embedding cache warm)")
    args = parser.parse_args(argv)
    admin_url = _admin_url()
    bench_database(admin_url, args.database)
    var_dir = args.var_dir or tempfile.mkdtemp(prefix="atelier-profile-judge-")
    env = {
        "DATABASE_URL": _with_db(admin_url, args.database), "ATELIER_VAR_DIR": var_dir, "DEBUG": "false",
        "ATELIER_DEV": "true", "SECRET_KEY": secrets.token_urlsafe(40), "LOG_LEVEL": "ERROR", "CELERY_BROKER_URL": "",
    }
    try:
        _setup_django(env)
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        from engine.tig.population import PopulationIndex
        from leaderboard.ekphrasis import judge_runs
        from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute
        from tests.benchmarks.bench_judge_bookkeeping import seed_task_set
        from tests.leaderboard.ekphrasis.test_judge_runs_pinned_output import run_digest_source

        task_set, _ = seed_task_set(args.tasks, f"profile-{args.tasks}")
        tig_build_execute(build_id=tig_build_create(task_set=task_set).pk)
        run = judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="UEN",
                                          budget_per_task=50, seed=42, config={"n_boot": 200})
        with tempfile.TemporaryDirectory(prefix="profile-judge-") as tmp:
            marks = _marks(tmp) if args.callgrind else None
            if marks is not None:
                for name in ("context", "__init__"):
                    _uncounted(PopulationIndex, name, marks)
                marks.marks_start()  # valgrind may run with --instr-atstart=no (the seeding and TIG build run faster)
                marks.marks_zero()
                marks.marks_toggle()  # valgrind runs with --collect-atstart=no
                judge_runs.judge_run_execute_inline(run=run)
                marks.marks_toggle()
                marks.marks_dump()
            elif args.profile:
                import cProfile
                import pstats

                profile = cProfile.Profile()
                profile.runcall(judge_runs.judge_run_execute_inline, run=run)
                profile.dump_stats(args.profile)
                print(f"function calls: {pstats.Stats(args.profile).total_calls}")
            else:
                import time

                from tests.benchmarks.bench_judge_bookkeeping import _backend_cpu

                pid, backend0 = _backend_cpu()
                waits = BlockingWaits(pid) if args.waits else None
                cpu0 = time.process_time()
                judge_runs.judge_run_execute_inline(run=run)
                cpu = time.process_time() - cpu0
                if waits is not None:
                    waits.stop()
                    print(waits.report())
                pid_after, backend1 = _backend_cpu()
                backend = backend1 - backend0 if pid_after == pid else float("nan")
                print(f"run CPU: this process {cpu:.2f} s, PostgreSQL backend {backend:.2f} s")
        run.refresh_from_db()
        print(f"run digest: {hashlib.sha256(run_digest_source(run).encode()).hexdigest()}")
    finally:
        close_django_connections()
        bench_database(admin_url, args.database, drop_only=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
