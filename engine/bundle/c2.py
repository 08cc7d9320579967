"""Recompute a C² run's results from a bundle's graded samples and ratings (c2-eval.txt §3.2).

``records/samples.jsonl`` holds every sample with its text, the grader's verdict and grade, the
confidence reply, and the Originality cluster recorded when the prompt was graded (embeddings are not
recomputed: the cluster labels are taken as recorded); ``records/ratings.jsonl`` every rating with its
raw reply. The results are recomputed with :func:`engine.c2.results.c2_results` — the site's own
function — and compared number by number with ``board/board.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.bundle.manifest import read_json, read_jsonl
from engine.bundle.numbers import NumberCheck, compare
from engine.c2.results import RatingRecord, RunSettings, SampleRecord, c2_results

__all__ = ["RATINGS", "SAMPLES", "recompute"]

SAMPLES = "records/samples.jsonl"
RATINGS = "records/ratings.jsonl"
SAMPLE_FIELDS = ("key", "model", "task", "task_type", "status", "correct", "usefulness", "confidence",
                 "confidence_status", "cluster")
RATING_FIELDS = ("sample", "rater", "repeat", "status", "u", "o", "s", "rationale_u", "rationale_o", "rationale_s")


def recompute(root: Path, manifest: Mapping[str, Any]) -> list[NumberCheck]:
    config = manifest["configuration"]
    stored = read_json(root, manifest["board"])
    samples = [SampleRecord(**{f: row.get(f) for f in SAMPLE_FIELDS}) for row in read_jsonl(root, SAMPLES)]
    ratings = [RatingRecord(**{f: row.get(f) for f in RATING_FIELDS}) for row in read_jsonl(root, RATINGS)]
    settings = RunSettings(models=config["models"], seed=int(config["seed"]), surprise_policy=config["surprise_policy"],
                           rater=config["rater"], second_rater=config.get("second_rater", ""),
                           is_simulated=bool(config["simulated"]), is_demo=bool(config["demo"]),
                           settings=config["settings"])
    return compare(stored, c2_results(settings, samples, ratings))
