"""The EASEL demo: a small seeded suite (two references per category and the five semantic tasks), the
three anchors, the search painter and four *simulated* agents with a spread of skills.

Everything here is labelled: the task set is demo data (``is_demo``), the simulated agents are
``is_simulated`` and named "simulated · …" on every page and export. Loading is idempotent: a finished
run is kept, an interrupted one resumes from its stored steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from leaderboard.easel import agents, services
from leaderboard.easel.models import EaselRun
from leaderboard.models import TaskSet

DEMO_SUITE_NAME = "easel-demo"
DEMO_SEED = 0
DEMO_PER_CATEGORY = {"programmatic": 2, "spatial_geometry": 2, "abstract_cartoon": 2, "natural": 2}
#: (label, skill) of the demo's simulated agents: a spread from capable to nearly idle.
DEMO_SIMULATED_AGENTS = (
    ("simulated · keen", 0.85),
    ("simulated · steady", 0.6),
    ("simulated · hasty", 0.4),
    ("simulated · idle", 0.15),
)


@dataclass(frozen=True)
class DemoAgent:
    agent: str
    label: str = ""
    skill: float | None = None
    budget: str = EaselRun.Budget.ALIGNED


DEMO_AGENTS = (
    *(DemoAgent(anchor) for anchor in agents.ANCHORS),
    DemoAgent(agents.PAINTER),
    *(DemoAgent(agents.SIMULATED, label=label, skill=skill) for label, skill in DEMO_SIMULATED_AGENTS),
)


def demo_suite_load() -> TaskSet:
    task_set, _ = services.easel_suite_create(
        seed=DEMO_SEED, per_category=DEMO_PER_CATEGORY, name=DEMO_SUITE_NAME, version="1", is_demo=True,
        description="DEMO DATA: a small seeded EASEL suite (two references per category, five semantic tasks).",
    )
    return task_set


def _existing_run(task_set: TaskSet, spec: DemoAgent) -> EaselRun | None:
    choice = agents.agent_resolve(spec.agent, skill=spec.skill, label=spec.label)
    return (EaselRun.objects.filter(task_set=task_set, agent_kind=choice.kind, agent_name=choice.name,
                                    budget_setting=spec.budget, seed=DEMO_SEED).order_by("-created_at").first())


def demo_runs_load(*, task_set: TaskSet, on_run: Callable[[EaselRun], Callable[[int], None] | None] | None = None
                   ) -> list[EaselRun]:
    """Run every demo agent on the demo suite through the real pipeline (idempotent).

    ``on_run(run)`` may return a progress callback for that run's steps (the command's tqdm bar)."""
    runs = []
    for spec in DEMO_AGENTS:
        run = _existing_run(task_set, spec)
        if run is None:
            run = services.easel_run_create(task_set=task_set, agent=spec.agent, budget_setting=spec.budget,
                                            seed=DEMO_SEED, skill=spec.skill, label=spec.label)
        if run.status != EaselRun.Status.DONE:
            run = services.easel_run_execute_inline(run=run, progress=on_run(run) if on_run else None)
        runs.append(run)
    return runs
