"""Grading convergent samples with the engine's official-script graders, and clustering the correct
ones for Originality (c2-eval.txt §3.2.1).

* ``qa``: TriviaQA exact match against the ground truths (``NormalizedAliases`` + ``HumanAnswers``);
* ``vqa``: the VQA accuracy over the ten answers, fractional (Usefulness); a sample counts as *correct*
  (z_i = 1, for Originality and Surprise) by the engine's ``vqa_correct`` (accuracy > 0: at least one
  annotator gave that answer);
* ``code``: the last fenced code block run under the sandbox against every test (LiveCodeBench semantics).

Originality embeds the correct samples (code: the extracted program) with the run's embedder and stores
each one's cluster (the components of the cos ≥ τ graph, :func:`engine.c2.uos.cluster_labels`).
"""

from __future__ import annotations

from engine.c2 import grading
from engine.c2.grading import CODE_GRADER_VERSION, CodeTests, extract_code_block, grade_code_many
from engine.c2.tasks import C2Item, C2TaskType
from engine.c2.uos import cluster_labels
from leaderboard.c2.models import C2Run, C2Sample
from leaderboard.models import Task

#: Per-test time limit of the code grader (LiveCodeBench's default is 6 s).
CODE_TIMEOUT_S = 6.0


def engine_item_of(task: Task) -> C2Item:
    """The engine's plain record of a stored task (the inverse of the import's mapping)."""
    constraints = task.constraints or {}
    tests = constraints.get("tests")
    return C2Item(
        task_type=C2TaskType(task.family), external_id=task.external_id, prompt=task.brief, line=0,
        answers=tuple(constraints.get("answers") or ()),
        tests=CodeTests.from_json(tests) if tests else None,
        starter_code=constraints.get("starter_code", ""), reference=constraints.get("reference", ""),
        metadata=task.source or {},
    )


def _grade_one(task: Task, text: str) -> dict:
    """verdict, usefulness in [0, 1], correct and detail of one convergent answer."""
    task_type = C2TaskType(task.family)
    if task_type not in (C2TaskType.QA, C2TaskType.VQA):
        raise ValueError(f"{task_type} is graded in batches (code) or not convergent")
    return grading.grade_answer(task_type.value, text, list(task.constraints.get("answers") or []))


def _code_grade(verdict) -> dict:
    detail = {"message": verdict.message[:2000], "wall_s": verdict.wall_s,
              "tests": [{"index": t.index, "verdict": t.verdict} for t in verdict.tests[:50]],
              "grader_version": CODE_GRADER_VERSION}
    return {"verdict": verdict.result, "usefulness": float(verdict.passed), "correct": bool(verdict.passed), "detail": detail}


def samples_grade(samples: list[C2Sample], tasks: dict[int, Task]) -> None:
    """Grade answered convergent samples in place; code samples concurrently, one sandbox per distinct
    program of a problem (the engine's ``grade_code_many`` over all cores)."""
    def store(sample: C2Sample, result: dict) -> None:
        sample.verdict, sample.usefulness, sample.correct = result["verdict"], result["usefulness"], result["correct"]
        sample.grade_detail = result["detail"]

    code = [s for s in samples if tasks[s.task_id].family == C2TaskType.CODE]
    for sample in samples:
        if tasks[sample.task_id].family != C2TaskType.CODE:
            store(sample, _grade_one(tasks[sample.task_id], sample.text))
    if code:
        # one sandbox run per distinct program and problem: n samples often repeat a program verbatim
        keys = [(extract_code_block(s.text), s.task_id) for s in code]
        distinct = list(dict.fromkeys(keys))
        verdicts = grade_code_many([(program, engine_item_of(tasks[task_id]).tests) for program, task_id in distinct],
                                   timeout_s=CODE_TIMEOUT_S)
        graded = {key: _code_grade(verdict) for key, verdict in zip(distinct, verdicts, strict=True)}
        for sample, key in zip(code, keys, strict=True):
            store(sample, graded[key])


def embedded_text(task: Task, sample: C2Sample) -> str:
    """What Originality compares: the program of a code answer, the answer text otherwise."""
    if task.family == C2TaskType.CODE:
        return extract_code_block(sample.text) or sample.text
    return sample.text


def samples_cluster(run: C2Run, groups: list[list[C2Sample]], tasks: dict[int, Task], embedder) -> None:
    """Set ``cluster`` on the correct samples of each (model, prompt) group: the components of the
    cos ≥ τ graph of their embeddings (§3.2.1); incorrect samples get none."""
    texts = [embedded_text(tasks[s.task_id], s) for group in groups for s in group if s.correct]
    vectors = iter(embedder.embed(texts)) if texts else iter(())
    for group in groups:
        correct = [s for s in group if s.correct]
        for s in group:
            s.cluster = None
        if not correct:
            continue
        labels = cluster_labels([next(vectors) for _ in correct], run.tau)
        for s, label in zip(correct, labels, strict=True):
            s.cluster = int(label)
