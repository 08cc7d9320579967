"""A C² run's results from its graded samples and ratings (c2-eval.txt §3.2, Tables 1–2, Figure 4).

Plain records in, the JSON-ready results dictionary out: the site stores it on the run when the run
finishes (:func:`leaderboard.c2.services.scoring.run_results` turns the stored rows into these records),
and a reproducibility bundle's verifier (:mod:`engine.bundle.c2`) recomputes it from the same records
read from the bundle, with this one function.

* convergent prompt: U = 100·(1/n) Σ z_i (VQA: the mean of the fractional VQA accuracies), O = 100·K_p/n
  with K_p the number of clusters of the correct samples (as recorded per sample when the prompt was
  graded), S = 100·(1 − C) under the run's Surprise policy;
* divergent prompt: the mean of the primary ratings' U, O, S (0–5) × 20;
* task type: the mean over prompts with a bootstrap-over-prompts interval (seeded by the run's seed);
  Combined = the mean of a table's task types' creativity (Tables 1 and 2);
* reliability: the rater's test–retest ICC(2,1) on the re-rated samples (Shrout & Fleiss 1979).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.c2 import uos
from engine.c2.rater import Rating, rater_icc

__all__ = ["CONVERGENT_TYPES", "DIVERGENT_TYPES", "METRICS", "TABLES", "RatingRecord", "RunSettings",
           "SampleRecord", "c2_results"]

CONVERGENT_TYPES = ("qa", "code", "vqa")
DIVERGENT_TYPES = ("story", "idea", "visual_story")
#: Table 1 (text) and Table 2 (vision) columns, in the paper's order.
TABLES = {"text": ("qa", "code", "story", "idea"), "vision": ("vqa", "visual_story")}
METRICS = ("usefulness", "originality", "surprise", "creativity")
DONE, FAILED, OK = "done", "failed", "ok"


@dataclass(frozen=True)
class SampleRecord:
    """One sample as scoring reads it; ``key`` identifies it for its ratings, ``task`` is the task's
    external id. Records are given in (task, model, sample index) order, the order the site reads them."""

    key: int
    model: str
    task: str
    task_type: str
    status: str
    correct: bool | None = None
    usefulness: float | None = None
    confidence: float | None = None
    confidence_status: str = ""
    cluster: int | None = None


@dataclass(frozen=True)
class RatingRecord:
    """One rating of a divergent sample (``sample`` is its :attr:`SampleRecord.key`), in (sample, repeat) order."""

    sample: int
    rater: str
    repeat: int
    status: str
    u: int | None = None
    o: int | None = None
    s: int | None = None
    rationale_u: str = ""
    rationale_o: str = ""
    rationale_s: str = ""


@dataclass(frozen=True)
class RunSettings:
    """What of the run scoring needs: the models in run order, policies and the seed of the bootstraps."""

    models: Sequence[str]
    seed: int
    surprise_policy: str
    rater: str
    second_rater: str = ""
    is_simulated: bool = False
    is_demo: bool = False
    settings: Mapping = field(default_factory=dict)


def _interval(interval) -> dict:
    return {"value": interval.value, "low": interval.low, "high": interval.high}


def _convergent_prompt(task_id: str, task_type: str, samples: list[SampleRecord], policy: str) -> uos.PromptScores | None:
    answered = [s for s in samples if s.status == DONE and s.correct is not None]
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


def _divergent_prompt(task_id: str, ratings: list[RatingRecord]) -> uos.PromptScores | None:
    triples = [(r.u, r.o, r.s) for r in ratings if r.repeat == 0 and r.status == OK]  # the primary rater's
    return uos.divergent_prompt_scores(task_id, triples) if triples else None


def _icc(both: list[tuple[RatingRecord, RatingRecord]], form: str) -> dict:
    """ICC(2,1) per component over paired ratings of the same samples (engine ``rater_icc``)."""
    def engine(r: RatingRecord) -> Rating:
        return Rating(r.u, r.o, r.s, r.rationale_u, r.rationale_o, r.rationale_s)

    out: dict = {"pairs": len(both), "form": form, "icc": {}}
    if both:
        for component, result in rater_icc([engine(a) for a, _ in both], [engine(b) for _, b in both]).items():
            out["icc"][component] = None if result is None or np.isnan(result.value) else result.value
    return out


def _reliability(run: RunSettings, ratings: Sequence[RatingRecord]) -> dict:
    """Test–retest (the rater's first rating vs its re-rate) and, with a second rater, inter-rater ICC."""
    by: dict[int, dict[tuple[str, int], RatingRecord]] = defaultdict(dict)
    for r in ratings:
        if r.status == OK:
            by[r.sample][(r.rater, r.repeat)] = r
    first, retest, second = (run.rater, 0), (run.rater, 1), (run.second_rater, 0)
    out = _icc([(p[first], p[retest]) for p in by.values() if first in p and retest in p],
               "ICC(2,1), absolute agreement: first rating vs re-rate")
    out["rerated"] = out["pairs"]
    if run.second_rater:
        out["inter_rater"] = _icc([(p[first], p[second]) for p in by.values() if first in p and second in p],
                                  f"ICC(2,1), absolute agreement: {run.rater} vs {run.second_rater}")
    return out


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


def c2_results(run: RunSettings, samples: Sequence[SampleRecord], ratings: Sequence[RatingRecord]) -> dict:
    """The results of a run (JSON-ready): scores per model × task type, Combined, Figure 4's regimes,
    per-prompt scores, confidence reply counts, failures and the rater's reliability."""
    names = list(run.models)
    ratings_of: dict[int, list[RatingRecord]] = defaultdict(list)
    for r in ratings:
        ratings_of[r.sample].append(r)
    grouped: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    task_types: set[str] = set()
    for s in samples:
        grouped[(s.model, s.task)].append(s)
        task_types.add(s.task_type)
    per_prompt: dict[str, dict[str, list[uos.PromptScores]]] = defaultdict(lambda: defaultdict(list))
    prompts: dict[str, dict[str, dict]] = defaultdict(dict)
    for (model, task), group in grouped.items():
        task_type = group[0].task_type
        if task_type in CONVERGENT_TYPES:
            scores = _convergent_prompt(task, task_type, group, run.surprise_policy)
        else:
            scores = _divergent_prompt(task, [r for s in group for r in ratings_of[s.key] if r.rater == run.rater])
        if scores is None:
            continue
        per_prompt[model][task_type].append(scores)
        prompts[model][task] = {
            "task_type": task_type, "u": scores.usefulness, "o": scores.originality, "s": scores.surprise,
            "c": scores.creativity, "clusters": scores.clusters, "missing_confidences": scores.missing_confidences,
        }
    present = [t for t in CONVERGENT_TYPES + DIVERGENT_TYPES if t in task_types]
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
        if s.task_type in CONVERGENT_TYPES and s.status == DONE:
            confidence[s.model][s.confidence_status] += 1
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
        "failed_samples": sum(1 for s in samples if s.status == FAILED),
        "failed_ratings": sum(1 for r in ratings if r.status == FAILED),
        "reliability": _reliability(run, ratings),
        "settings": dict(run.settings),
        "is_simulated": run.is_simulated,
        "is_demo": run.is_demo,
    }
