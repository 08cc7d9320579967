"""leaderboard/ekphrasis/tasks.py: the worker knows the snapshot warm-up task, and running it fills the cache
the snapshot page's first view reads."""

from __future__ import annotations

import pytest

from leaderboard.ekphrasis import judge_runs, uncertainty
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db


def test_the_worker_app_registers_the_snapshot_warm_up_task():
    from evalsite.celery import app
    from leaderboard.ekphrasis.tasks import snapshot_uncertainty_warm_task

    app.loader.import_default_modules()
    assert "ekphrasis.snapshot_uncertainty_warm" in app.tasks
    assert snapshot_uncertainty_warm_task.name == "ekphrasis.snapshot_uncertainty_warm"


def test_the_warm_up_task_leaves_the_tiers_in_the_cache(monkeypatch):
    from django.core.cache import cache

    from leaderboard.ekphrasis.tasks import snapshot_uncertainty_warm_task

    task_set, models = population(n_models=3, n_tasks=4)
    snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=6, dimensions="U"))
    cache.clear()
    snapshot_uncertainty_warm_task.delay(snapshot.pk).get()  # eager without a broker
    monkeypatch.setattr(uncertainty, "board_uncertainty", lambda *a, **k: pytest.fail("recomputed after the warm-up"))
    assert uncertainty.overall_tiers(snapshot)


def test_a_worker_imports_what_a_judge_chunk_needs_and_loads_its_compiled_kernels_before_it_forks_its_processes():
    """The worker_init signal (sent by a Celery worker before it starts its pool) leaves the judge chunk's
    first-use imports, igraph and the compiled kernels (planner, Novelty graph and score) in the process, so
    that the forked processes do not each load them on their first chunk. In a fresh interpreter: this test
    process has imported most of them already."""
    import subprocess
    import sys

    from tests.conftest import subprocess_environment

    probe = (
        "import sys, django; django.setup()\n"
        "from evalsite.celery import app\n"
        "from celery.signals import worker_init\n"
        "app.loader.import_default_modules()\n"
        "from leaderboard.ekphrasis.tasks import WORKER_PRELOAD\n"
        "names = (*WORKER_PRELOAD, 'igraph')\n"
        "before = [n for n in names if n in sys.modules]\n"
        "from engine import active_sampling\n"
        "from engine.tig import graph_kernel, score_kernel\n"
        "from engine import bt_kernel\n"
        "kernels = (active_sampling._ranking_info_exponents, active_sampling._ranking_info_weights,"
        " active_sampling._ranking_info_pick, bt_kernel.bt_nll, graph_kernel.graph_counts,"
        " graph_kernel.assemble_weight, score_kernel.cluster_sums)\n"
        "loaded_before = any(k.signatures for k in kernels)\n"
        "worker_init.send(sender=None)\n"
        "print(loaded_before, all(k.signatures for k in kernels))\n"
        "print(sorted(set(names) - set(before)), all(n in sys.modules for n in names))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], env=subprocess_environment(), capture_output=True,
                            text=True, check=True, timeout=120)
    planner_line, imports_line = result.stdout.strip().splitlines()[-2:]
    assert planner_line == "False True", result.stdout  # the kernels compiled or loaded by the signal
    imported, present = imports_line.rsplit(" ", 1)
    assert present == "True", result.stdout
    assert "'igraph'" in imported, result.stdout  # not imported by setting up the app: by the signal
