"""One small world on all three protocols for the researcher's-view tests (overview, profiles, compare pages):
three models named ``simulated-m0…m2`` ranked on an Ekphrasis snapshot, a C² standard and creative run, and an
EASEL suite where m0 and m1 have model runs (with a simulated agent and an anchor beside them)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.db.models import F

from leaderboard.c2.models import C2Run
from leaderboard.c2.services import runs as c2_runs
from leaderboard.c2.services.imports import c2_tasks_import
from leaderboard.easel import services as easel_services
from leaderboard.easel.models import EaselRun
from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import LeaderboardSnapshot
from leaderboard.models import Benchmark, SubjectModel, TaskSet
from tests.leaderboard.easel.test_selectors import finished, reference_ids
from tests.leaderboard.judging_factories import population, simulated_run

EASEL_SUITE = {"programmatic": 2, "spatial_geometry": 0, "abstract_cartoon": 0, "natural": 2}


@dataclass
class World:
    models: list[SubjectModel]
    snapshot: LeaderboardSnapshot
    easel_suite: TaskSet
    easel_runs: list[EaselRun]  # m0's model run, m1's model run, a simulated agent, an anchor
    c2_standard: C2Run
    c2_creative: C2Run


def _c2_task_set() -> TaskSet:
    trivia = {"Data": [{"Question": f"Question {k}?", "QuestionId": f"q{k}",
                        "Answer": {"Value": "yes", "NormalizedAliases": ["yes", "aye"]}} for k in range(3)]}
    task_set, _ = c2_tasks_import(fmt="triviaqa", name="qa.json", raw=json.dumps(trivia).encode(),
                                  task_set_name="c2-world", version="1")
    c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=b"[ WP ] A door in the sea.\n[ WP ] The moon resigns.\n",
                    task_set_name="c2-world", version="1")
    return task_set


def _easel_model_run(suite, model: SubjectModel, finals: dict[str, float]) -> EaselRun:
    """A finished EASEL run of ``model`` (episodes written directly: no endpoint is called)."""
    run = finished(easel_services.easel_run_create(task_set=suite, agent="simulated", label=model.display_name), finals)
    EaselRun.objects.filter(pk=run.pk).update(agent_kind=EaselRun.AgentKind.MODEL, subject_model=model,
                                              is_simulated=False, agent_name=model.display_name,
                                              finished_at=F("created_at"))
    run.refresh_from_db()
    return run


def three_protocol_world() -> World:
    task_set, models = population(n_models=3, n_tasks=4, name="simulated")
    snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=6, dimensions="UEN"))
    names = [m.display_name for m in models]
    c2_set = _c2_task_set()
    standard, creative = (c2_runs.c2_run_execute_inline(run=c2_runs.c2_run_create(
        task_set=c2_set, model_names=names, n_samples=2, template=template, rater_name="simulated", rerate_share=0.5))
        for template in ("standard", "creative"))
    suite, _ = easel_services.easel_suite_create(seed=0, per_category=EASEL_SUITE, name="easel-world")
    ids = reference_ids(suite)
    easel = [
        _easel_model_run(suite, models[0], {t: 0.60 + 0.02 * k for k, t in enumerate(ids)}),
        _easel_model_run(suite, models[1], {t: 0.50 + 0.03 * k for k, t in enumerate(ids)}),
        finished(easel_services.easel_run_create(task_set=suite, agent="simulated", label="simulated · keen"),
                 {t: 0.45 for t in ids}),
        finished(easel_services.easel_run_create(task_set=suite, agent="mean_colour_fill"), {t: 0.40 for t in ids}),
    ]
    return World(models, snapshot, suite, easel, standard, creative)


def world_delete(world: World) -> None:
    """Remove everything :func:`three_protocol_world` made (for a fixture that outlives one test's transaction)."""
    from leaderboard.ekphrasis.models import JudgeRun

    C2Run.objects.filter(task_set=world.c2_standard.task_set).delete()
    EaselRun.objects.filter(task_set=world.easel_suite).delete()
    JudgeRun.objects.filter(task_set=world.snapshot.run.task_set).delete()
    for task_set in (world.c2_standard.task_set, world.easel_suite, world.snapshot.run.task_set):
        TaskSet.objects.filter(pk=task_set.pk).delete()
    SubjectModel.objects.filter(display_name__startswith="simulated-m").delete()
    Benchmark.objects.filter(task_sets__isnull=True).delete()
