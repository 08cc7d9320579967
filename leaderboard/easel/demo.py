"""The EASEL demo: a small seeded suite (two references per category and the five semantic tasks), the
three anchors, the search painter and three *simulated* agents with a spread of skills.

Everything here is labelled: the task set is demo data (``is_demo``), the simulated agents are
``is_simulated`` and named "simulated · …" on every page and export. Loading is idempotent: a finished
run is kept, an interrupted one resumes from its stored steps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from leaderboard.easel import agents, services
from leaderboard.easel.models import EaselRun
from leaderboard.models import TaskSet

DEMO_SUITE_NAME = "easel-demo"
DEMO_SEED = 0
DEMO_PER_CATEGORY = {"programmatic": 2, "spatial_geometry": 2, "abstract_cartoon": 2, "natural": 2}
#: The demo's simulated agents: a spread of skill and of the two failure modes of EASEL §5.1 — plateau
#: (exact repeats after an early rise) and post-peak drift (still acting, degrading).
DEMO_SIMULATED_AGENTS = (
    ("simulated · keen", 0.85, {"repeat": 0.7}),
    ("simulated · restless", 0.7, {"repeat": 0.1, "drift": 0.6}),
    ("simulated · idle", 0.2, {"repeat": 0.9}),
)
#: The demo's painter searches fewer candidates than the default, to keep `make demo` short (labelled on its run page).
DEMO_PAINTER = {"candidates": 6, "refinements": 3}


@dataclass(frozen=True)
class DemoAgent:
    agent: str
    label: str = ""
    skill: float | None = None
    budget: str = EaselRun.Budget.ALIGNED
    config: dict = field(default_factory=dict)


DEMO_AGENTS = (
    *(DemoAgent(anchor) for anchor in agents.ANCHORS),
    DemoAgent(agents.PAINTER, config={"painter": DEMO_PAINTER}),
    *(DemoAgent(agents.SIMULATED, label=label, skill=skill, config={"simulated": knobs})
      for label, skill, knobs in DEMO_SIMULATED_AGENTS),
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
        started = time.monotonic()
        run = _existing_run(task_set, spec)
        if run is None:
            run = services.easel_run_create(task_set=task_set, agent=spec.agent, budget_setting=spec.budget,
                                            seed=DEMO_SEED, skill=spec.skill, label=spec.label, config=spec.config)
        if run.status != EaselRun.Status.DONE:
            run = services.easel_run_execute_inline(run=run, progress=on_run(run) if on_run else None)
        run.demo_seconds = time.monotonic() - started  # shown by the command
        runs.append(run)
    return runs
