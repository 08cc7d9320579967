"""Standing cast for judge tests: one Combination task and three models' responses."""

from __future__ import annotations

import pytest

from engine.checklists import Dimension, template_checklist
from engine.generation import Family, TaskBrief
from engine.judge.comparison import Candidate, ComparisonKind, PairJudgeRequest

TASK = TaskBrief(
    task_id="cmb-007",
    family=Family.COMBINATION,
    brief="Fuse a lighthouse and a violin into one coherent visual entity.",
    constraints={"medium": "concert poster"},
)

ALICE = Candidate(
    model="alice-model",
    response_id="r-alice",
    core_idea="A lighthouse whose rotating beam is a bowed string sweeping across the night sea.",
    visual_description="A slender varnished-spruce tower rises from black basalt; " * 8,
)
BOB = Candidate(
    model="bob-model",
    response_id="r-bob",
    core_idea="A violin standing upright on a rock with a lamp on top.",
    visual_description="A violin on a rock by the sea at dusk with a small lamp glowing. " * 5,
)
CHARLIE = Candidate(
    model="charlie-model",
    response_id="r-charlie",
    core_idea="",
    visual_description="",
)


@pytest.fixture
def comparison():
    """Factory: a PairJudgeRequest with sensible defaults."""

    def build(
        a: Candidate = ALICE,
        b: Candidate = BOB,
        *,
        dimension: Dimension = Dimension.USEFULNESS,
        kind: ComparisonKind = ComparisonKind.PRIMARY,
        repeat: int = 0,
        retry: int = 0,
        run_id: str = "run-1",
        task: TaskBrief = TASK,
    ) -> PairJudgeRequest:
        return PairJudgeRequest(
            run_id=run_id,
            task=task,
            dimension=dimension,
            checklist=template_checklist(task, dimension),
            a=a,
            b=b,
            kind=kind,
            repeat=repeat,
            retry=retry,
        )

    return build
