"""C²'s Combined creativity interval and rank probabilities (engine.c2.uncertainty) against the stored
Combined and an independent stratified resampling loop."""

from __future__ import annotations

import numpy as np
import pytest

from engine.c2.uncertainty import combined_comparison

#: Two Monte-Carlo bootstraps (2,000 resamples each, different streams) of a mean of creativity values in
#: [0, 100] agree on a percentile bound to about this much.
BOUND_TOLERANCE = 1.5


def _results() -> dict:
    rng = np.random.default_rng(3)
    prompts = {}
    for m, skill in (("alpha", 80.0), ("beta", 50.0), ("gamma", 49.0)):
        prompts[m] = {}
        for t, n in (("qa", 6), ("story", 4)):
            for k in range(n):
                prompts[m][f"{t}-{k}"] = {"task_type": t, "c": float(np.clip(skill + rng.normal(0, 8), 0, 100))}
    combined = {m: {"text": float(np.mean([np.mean([v["c"] for v in prompts[m].values() if v["task_type"] == t])
                                           for t in ("qa", "story")]))} for m in prompts}
    return {"models": list(prompts), "tables": {"text": ["qa", "story"], "vision": []}, "prompts": prompts,
            "combined": combined}


def test_the_point_is_the_stored_combined_creativity():
    results = _results()
    comparison = combined_comparison(results, "text")
    for agent in comparison["agents"]:
        assert agent["value"] == pytest.approx(results["combined"][agent["name"]]["text"])


def test_the_interval_matches_an_independent_stratified_resampling_loop():
    results = _results()
    rng = np.random.default_rng(11)
    alpha = results["prompts"]["alpha"]
    by_type = {t: np.array([v["c"] for v in alpha.values() if v["task_type"] == t]) for t in ("qa", "story")}
    replicates = [np.mean([rng.choice(v, size=len(v), replace=True).mean() for v in by_type.values()])
                  for _ in range(2000)]
    low, high = np.quantile(replicates, [0.025, 0.975])
    agent = next(a for a in combined_comparison(results, "text")["agents"] if a["name"] == "alpha")
    assert agent["low"] == pytest.approx(low, abs=BOUND_TOLERANCE)
    assert agent["high"] == pytest.approx(high, abs=BOUND_TOLERANCE)


def test_every_pair_has_a_difference_interval_and_p_a_better():
    comparison = combined_comparison(_results(), "text")
    assert [a["name"] for a in comparison["agents"]][0] == "alpha"
    assert len(comparison["pairs"]) == 3
    top = comparison["pairs"][0]
    assert top["a"] == "alpha" and top["p_a_better"] > 0.99 and 0 < top["low"] <= top["difference"] <= top["high"]


def test_a_task_type_slice_ranks_by_that_types_creativity():
    results = _results()
    comparison = combined_comparison(results, "text", task_type="story")
    expected = np.mean([v["c"] for v in results["prompts"]["beta"].values() if v["task_type"] == "story"])
    beta = next(a for a in comparison["agents"] if a["name"] == "beta")
    assert beta["value"] == pytest.approx(expected) and comparison["n_items"] == 4


def test_an_empty_table_or_an_unknown_task_type_has_no_comparison():
    results = _results()
    assert combined_comparison(results, "vision") is None
    assert combined_comparison(results, "text", task_type="vqa") is None
