"""Scoring a finished C² run: the stored samples and ratings as the engine's plain records, scored by
:func:`engine.c2.results.c2_results` (c2-eval.txt §3.2) — the results stored on the run and read by every
page and export. The formulas are described there."""

from __future__ import annotations

from engine.c2.results import RatingRecord, RunSettings, SampleRecord, c2_results
from leaderboard.c2.models import C2Rating, C2Run, C2Sample

__all__ = ["run_records", "run_results"]

def run_records(run: C2Run) -> tuple[RunSettings, list[SampleRecord], list[RatingRecord]]:
    """The run's settings, samples and ratings as the engine's records, in the order scoring reads them."""
    models = {m.pk: m.display_name for m in run.subjects.all()}
    samples = [
        SampleRecord(key=s.pk, model=models[s.subject_model_id], task=s.task.external_id, task_type=s.task.family,
                     status=s.status, correct=s.correct, usefulness=s.usefulness, confidence=s.confidence,
                     confidence_status=s.confidence_status, cluster=s.cluster)
        for s in C2Sample.objects.filter(run=run).select_related("task").order_by("task_id", "subject_model_id",
                                                                                  "sample_index")
    ]
    ratings = [
        RatingRecord(sample=r.sample_id, rater=r.rater_name, repeat=r.repeat, status=r.status, u=r.u, o=r.o, s=r.s,
                     rationale_u=r.rationale_u, rationale_o=r.rationale_o, rationale_s=r.rationale_s)
        for r in C2Rating.objects.filter(sample__run=run).order_by("sample_id", "repeat")
    ]
    settings = RunSettings(
        models=list(run.subject_names), seed=run.seed, surprise_policy=run.surprise_policy, rater=run.rater_name,
        second_rater=run.second_rater_name, is_simulated=run.is_simulated, is_demo=run.task_set.is_demo,
        settings={
            "template": run.template, "n_samples": run.n_samples, "surprise_policy": run.surprise_policy,
            "tau": run.tau, "temperature": run.temperature, "embedder": run.embedder, "rater": run.rater_name,
            "second_rater": run.second_rater_name, "seed": run.seed, "rerate_share": run.rerate_share,
            **{k: v for k, v in run.config.items() if k.endswith("_version")},
        },
    )
    return settings, samples, ratings


def run_results(run: C2Run) -> dict:
    """The stored results of a run (JSON-ready)."""
    return c2_results(*run_records(run))
