"""The paper-scale Ekphrasis run, made once on a throwaway SQLite database and reused by the benchmarks
that measure something *on* it (the bundle's export and verify, the overview and board pages).

The run is ``bench_judge_bookkeeping``'s: 14 subject models × 3 samples per task, TIG built with the
offline components, the labelled simulated judge on U, E and N with TIG anchors, budget 50 per task and
dimension, seed 42 (Ekphrasis §4: 400 tasks at the paper's scale). With ``with_demo`` the demo's three
protocols are loaded first, so that pages showing every protocol have all three to show.

The database is ``WORK/paper-<tasks>[-demo].sqlite3``; when it already holds the finished run it is reused
(building it takes minutes), which is printed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def paper_scale_database(work: Path, n_tasks: int, with_demo: bool) -> Path:
    return work / f"paper-{n_tasks}{'-demo' if with_demo else ''}.sqlite3"


def paper_scale_setup(work: Path, n_tasks: int, with_demo: bool) -> None:
    """Point Django at the world's database (before ``django.setup()``) and set it up."""
    os.environ.update(ATELIER_DEV="true", DATABASE_URL=f"sqlite:///{paper_scale_database(work, n_tasks, with_demo)}",
                      ATELIER_VAR_DIR=str(work / "var"), DJANGO_SETTINGS_MODULE="evalsite.settings", LOG_LEVEL="ERROR",
                      CELERY_BROKER_URL="")
    import django

    django.setup()


def paper_scale_world(work: Path, n_tasks: int, n_boot: int, *, with_demo: bool = False, before_run=None):
    """The paper-scale run's snapshot (made now, or read back from an earlier call with the same ``work``).

    ``before_run()`` is called once the demo is loaded and before the paper-scale run is added, only when
    the world is made now (the overview benchmark times the demo-scale pages there).
    """
    from django.core.management import call_command

    from leaderboard.ekphrasis import judge_runs
    from leaderboard.ekphrasis.models import Comparison, LeaderboardSnapshot
    from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute
    from tests.benchmarks.bench_judge_bookkeeping import seed_task_set

    name = f"paper-{n_tasks}"
    existing = (LeaderboardSnapshot.objects.filter(run__task_set__name=name).select_related("run").order_by("-pk").first()
                if _migrated() else None)
    if existing is not None:
        print(f"paper-scale run read back from {paper_scale_database(work, n_tasks, with_demo)} ({n_tasks} tasks)")
        return existing
    call_command("migrate", verbosity=0, interactive=False)
    if with_demo:
        started = time.perf_counter()
        call_command("setup_roles", verbosity=0)
        call_command("load_demo", no_accounts=True, verbosity=0)
        for command in ("load_demo_easel", "load_demo_c2"):
            call_command(command, verbosity=0)
        print(f"demo's three protocols loaded in {time.perf_counter() - started:.1f} s")
    if before_run is not None:
        before_run()
    started = time.perf_counter()
    task_set, n_responses = seed_task_set(n_tasks, name)
    tig_build_execute(build_id=tig_build_create(task_set=task_set).pk)
    run = judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="UEN", budget_per_task=50,
                                      seed=42, config={"n_boot": n_boot})
    snapshot = judge_runs.judge_run_execute_inline(run=run)
    calls = Comparison.objects.filter(run=run).exclude(kind=Comparison.Kind.AUTOMATIC).count()
    print(f"paper-scale run made in {time.perf_counter() - started:.1f} s: {n_tasks} tasks, {n_responses} responses, "
          f"{calls} judge calls, n_boot {n_boot} (load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores)")
    return snapshot


def _migrated() -> bool:
    from django.db import connection

    from leaderboard.ekphrasis.models import LeaderboardSnapshot

    return LeaderboardSnapshot._meta.db_table in connection.introspection.table_names()
