"""A small Ekphrasis population for judge-run tests: N models with planted skills on T tasks."""

from __future__ import annotations

from leaderboard.ekphrasis import judge_runs
from leaderboard.models import SubjectModel, TaskSet
from tests.factories import ResponseFactory, SubjectModelFactory, TaskFactory, TaskSetFactory

FAMILIES = ["abstraction", "combination", "transformation", "adaptation"]


def population(n_models: int = 6, n_tasks: int = 4, *, name: str = "pop") -> tuple[TaskSet, list[SubjectModel]]:
    task_set = TaskSetFactory(name=name)
    models = [SubjectModelFactory(display_name=f"{name}-m{k}") for k in range(n_models)]
    for t in range(n_tasks):
        task = TaskFactory(task_set=task_set, family=FAMILIES[t % 4], external_id=f"{name}-t{t}")
        for k, m in enumerate(models):
            # The texts never carry the model's name: judge prompts must stay blind.
            ResponseFactory(
                task=task, subject_model=m, sample=1, is_primary=True,
                core_idea=f"Idea number {k} for task {t}: a lantern folding time.",
                visual_description=" ".join(["visible"] * (20 + k)) + f" variant {k} {t}",
            )
    return task_set, models


def planted_skills(models: list[SubjectModel], spread: float = 0.6) -> dict:
    """Skills strictly decreasing with the model index, equal across dimensions."""
    return {
        m.display_name: {d: spread * (len(models) - 1 - k) for d in ("usefulness", "expressiveness", "novelty")}
        for k, m in enumerate(models)
    }


def simulated_run(task_set, models, *, budget=20, seed=7, dimensions="U", **simulated):
    knobs = {"position_bias": 0.0, "length_bias": 0.0, "malformed_rate": 0.0, **simulated}
    knobs.setdefault("skills", planted_skills(models))
    return judge_runs.judge_run_create(
        task_set=task_set, judge_name="simulated", dimensions=dimensions, budget_per_task=budget, seed=seed,
        config={"simulated": knobs, "n_boot": 200},
    )


def cyclic_run(name: str = "cycle"):
    """A simulated run of three models on two tasks whose stored verdicts form a cycle on U (m0 beats m1, m1
    beats m2, m2 beats m0 on each task), every chunk done: its models come out with the same expected win rate."""
    from django.utils import timezone

    from leaderboard.ekphrasis.models import Comparison, JudgeRunTask
    from leaderboard.models import Response

    task_set, models = population(n_models=3, n_tasks=2, name=name)
    run = simulated_run(task_set, models, budget=3, dimensions="U")
    for task in task_set.tasks.all():
        shown = {r.subject_model_id: r for r in Response.objects.filter(task=task, is_primary=True)}
        for sequence, (winner, loser) in enumerate(((0, 1), (1, 2), (2, 0)), start=1):
            a, b = shown[models[winner].pk], shown[models[loser].pk]
            x, y = sorted((a.subject_model_id, b.subject_model_id))
            Comparison.objects.create(
                run=run, task=task, dimension="U", model_x_id=x, model_y_id=y, kind=Comparison.Kind.PRIMARY,
                judge_name="simulated", sequence=sequence, shown_a=a, shown_b=b, status=Comparison.Status.OK,
                winner="A", confidence=0.8, attempts=1, judged_at=timezone.now())
    JudgeRunTask.objects.filter(run=run).update(done=True)
    return run
