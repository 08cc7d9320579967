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
