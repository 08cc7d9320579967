"""Scoring a finished C² run: per sample → per prompt → per task type, with the engine's formulas
(:mod:`engine.c2.uos`, c2-eval.txt §3.2) — the results stored on the run and read by every page and export.

* convergent prompt: U = 100·(1/n) Σ z_i (VQA: the mean of the fractional VQA accuracies), O = 100·K_p/n
  with K_p the number of clusters of the correct samples (stored per sample when the prompt was
  graded), S = 100·(1 − C) under the run's Surprise policy;
* divergent prompt: the mean of the primary ratings' U, O, S (0–5) × 20;
* task type: the mean over prompts with a bootstrap-over-prompts interval (seeded by the run's seed);
  Combined = the mean of a table's task types' creativity (Tables 1 and 2);
* reliability: the rater's test–retest ICC(2,1) on the re-rated samples (Shrout & Fleiss 1979).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from engine.c2 import uos
from leaderboard.c2.models import CONVERGENT_TYPES, DIVERGENT_TYPES, C2Rating, C2Run, C2Sample

#: Table 1 (text) and Table 2 (vision) columns, in the paper's order.
TABLES = {"text": ("qa", "code", "story", "idea"), "vision": ("vqa", "visual_story")}
TASK_TYPE_LABELS = {
    "qa": "Question Answering", "code": "Code Generation", "vqa": "Vision Question Answering",
    "story": "Story Telling", "idea": "Idea Generation", "visual_story": "Visual Story Telling",
}
METRICS = ("usefulness", "originality", "surprise", "creativity")


def _interval(interval) -> dict:
    return {"value": interval.value, "low": interval.low, "high": interval.high}


def _convergent_prompt(task_id: str, task_type: str, samples: list[C2Sample], policy: str) -> uos.PromptScores | None:
    answered = [s for s in samples if s.status == C2Sample.Status.DONE and s.correct is not None]
    if not answered:
        return None
    n = len(answered)
    correct = [bool(s.correct) for s in answered]
    if task_type == "vqa":
        usefulness = 100.0 * float(np.mean([s.usefulness for s in answered]))  # U = (1/n) Σ VQA accuracy (§3.2.1)
    else:
        usefulness = 100.0 * uos.usefulness(correct)
    k_p = len({s.cluster for s in answered if s.correct and s.cluster is not None})
    return uos.PromptScores(
        prompt_id=task_id,
        usefulness=usefulness,
        originality=uos.originality_score(k_p, n),
        surprise=100.0 * uos.surprise(correct, [s.confidence for s in answered], none_correct=policy),
        missing_confidences=sum(1 for s in answered if s.confidence is None),
        clusters=k_p,
    )


def _divergent_prompt(task_id: str, ratings: list[C2Rating]) -> uos.PromptScores | None:
    triples = [(r.u, r.o, r.s) for r in ratings if r.repeat == 0 and r.status == C2Rating.Status.OK]
    return uos.divergent_prompt_scores(task_id, triples) if triples else None


def _test_retest(ratings: list[C2Rating]) -> dict:
    """The rater's test–retest ICC(2,1) per component over the samples rated twice (engine ``rater_icc``)."""
    from engine.c2.rater import Rating, rater_icc

    pairs: dict[int, dict[int, C2Rating]] = defaultdict(dict)
    for r in ratings:
        if r.status == C2Rating.Status.OK:
            pairs[r.sample_id][r.repeat] = r
    both = [(p[0], p[1]) for p in pairs.values() if 0 in p and 1 in p]

    def engine(r: C2Rating) -> Rating:
        return Rating(r.u, r.o, r.s, r.rationale_u, r.rationale_o, r.rationale_s)

    out: dict = {"rerated": len(both), "form": "ICC(2,1), absolute agreement: first rating vs re-rate", "icc": {}}
    if both:
        for component, result in rater_icc([engine(a) for a, _ in both], [engine(b) for _, b in both]).items():
            out["icc"][component] = None if result is None or np.isnan(result.value) else result.value
    return out


def run_results(run: C2Run) -> dict:
    """The stored results of a run (JSON-ready)."""
    names = list(run.subject_names)
    models = {m.pk: m.display_name for m in run.subjects.all()}
    samples = list(C2Sample.objects.filter(run=run).select_related("task").order_by("task_id", "subject_model_id", "sample_index"))
    ratings = list(C2Rating.objects.filter(sample__run=run).order_by("sample_id", "repeat"))
    ratings_of: dict[int, list[C2Rating]] = defaultdict(list)
    for r in ratings:
        ratings_of[r.sample_id].append(r)
    grouped: dict[tuple[str, int], list[C2Sample]] = defaultdict(list)
    task_type_of: dict[int, str] = {}
    for s in samples:
        grouped[(models[s.subject_model_id], s.task_id)].append(s)
        task_type_of[s.task_id] = s.task.family
    per_prompt: dict[str, dict[str, list[uos.PromptScores]]] = defaultdict(lambda: defaultdict(list))
    prompts: dict[str, dict[str, dict]] = defaultdict(dict)
    for (model, task_id), group in grouped.items():
        task = group[0].task
        if task.family in CONVERGENT_TYPES:
            scores = _convergent_prompt(task.external_id, task.family, group, run.surprise_policy)
        else:
            scores = _divergent_prompt(task.external_id, [r for s in group for r in ratings_of[s.pk]])
        if scores is None:
            continue
        per_prompt[model][task.family].append(scores)
        prompts[model][task.external_id] = {
            "task_type": task.family, "u": scores.usefulness, "o": scores.originality, "s": scores.surprise,
            "c": scores.creativity, "clusters": scores.clusters, "missing_confidences": scores.missing_confidences,
        }
    present = [t for t in CONVERGENT_TYPES + DIVERGENT_TYPES if t in set(task_type_of.values())]
    score_table: dict[str, dict[str, dict]] = {}
    for model in names:
        score_table[model] = {}
        for task_type in present:
            rows = per_prompt[model].get(task_type)
            if not rows:
                continue
            summary = uos.task_type_scores(rows, seed=run.seed)
            score_table[model][task_type] = {"n_prompts": summary.n_prompts,
                                             **{m: _interval(getattr(summary, m)) for m in METRICS}}
    tables = {name: [t for t in types if t in present] for name, types in TABLES.items()}
    combined = {
        model: {
            table: (uos.combined_creativity([score_table[model][t]["creativity"]["value"] for t in types])
                    if types and all(t in score_table[model] for t in types) else None)
            for table, types in tables.items()
        }
        for model in names
    }
    confidence = {model: Counter() for model in names}
    for s in samples:
        if s.task.family in CONVERGENT_TYPES and s.status == C2Sample.Status.DONE:
            confidence[models[s.subject_model_id]][s.confidence_status] += 1
    return {
        "version": 1,
        "models": names,
        "task_types": present,
        "tables": tables,
        "scores": score_table,
        "combined": combined,
        "regimes": {model: _regimes(score_table[model], tables) for model in names},
        "prompts": prompts,
        "confidence": {m: dict(c) for m, c in confidence.items()},
        "failed_samples": sum(1 for s in samples if s.status == C2Sample.Status.FAILED),
        "failed_ratings": sum(1 for r in ratings if r.status == C2Rating.Status.FAILED),
        "reliability": _test_retest(ratings),
        "settings": {
            "template": run.template, "n_samples": run.n_samples, "surprise_policy": run.surprise_policy,
            "tau": run.tau, "temperature": run.temperature, "embedder": run.embedder, "rater": run.rater_name,
            "seed": run.seed, "rerate_share": run.rerate_share, **{k: v for k, v in run.config.items() if k.endswith("_version")},
        },
        "is_simulated": run.is_simulated,
        "is_demo": run.task_set.is_demo,
    }


def _regimes(scores: dict[str, dict], tables: dict[str, list[str]]) -> dict:
    """Figure 4's axes: per table, the mean of U, O, S, creativity over its convergent and its divergent types."""
    out: dict[str, dict] = {}
    for table, types in tables.items():
        out[table] = {}
        for regime, members in (("convergent", CONVERGENT_TYPES), ("divergent", DIVERGENT_TYPES)):
            chosen = [scores[t] for t in types if t in members and t in scores]
            if chosen:
                out[table][regime] = {m: float(np.mean([c[m]["value"] for c in chosen])) for m in METRICS}
    return out
