"""Tests for engine.reliability — Ekphrasis Tables 11–12 diagnostics from comparison records."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from engine.reliability import ComparisonRecord, judge_reliability

RATE_TOL = 1e-12


def rec(task, a, b, winner, kind="primary", dim="E", **kw) -> ComparisonRecord:
    return ComparisonRecord(task=task, dimension=dim, model_a=a, model_b=b, winner=winner, kind=kind, **kw)


def test_repair_tie_and_position_bias_are_computed_over_primary_calls():
    records = [
        rec("t1", 0, 1, "A", repaired=True),
        rec("t2", 0, 2, "A"),
        rec("t3", 1, 2, "A"),
        rec("t4", 2, 0, "B"),
        rec("t5", 1, 0, "tie"),
        rec("t6", 0, 1, "B", kind="swap", repaired=True),  # not primary: ignored by these three
    ]
    report = judge_reliability(records, 3)["E"]
    assert report["json_repair_rate"] == pytest.approx(1 / 5, abs=RATE_TOL)
    assert report["tie_rate"] == pytest.approx(1 / 5, abs=RATE_TOL)
    # decisive primary: A, A, A, B → A share 0.75 → +25 points
    assert report["a_position_bias_pp"] == pytest.approx(25.0, abs=RATE_TOL)


def test_swap_consistency_compares_winning_models_not_positions():
    records = [
        rec("t1", 0, 1, "A"), rec("t1", 1, 0, "B", kind="swap"),  # model 0 both times: consistent
        rec("t2", 0, 2, "A"), rec("t2", 2, 0, "A", kind="swap"),  # position A both times: inconsistent
        rec("t3", 1, 2, "B"), rec("t3", 2, 1, "A", kind="swap"),  # model 2 both times: consistent
        rec("t4", 1, 2, "tie"), rec("t4", 2, 1, "A", kind="swap"),  # a tie: excluded
    ]
    report = judge_reliability(records, 3)["E"]
    assert report["swap_decisive_consistency"] == pytest.approx(2 / 3, abs=RATE_TOL)
    assert report["n_swap_decisive_pairs"] == 3


def test_winner_longer_rate_skips_ties_and_equal_lengths():
    records = [
        rec("t1", 0, 1, "A", len_a=300, len_b=100),  # longer won
        rec("t2", 0, 1, "A", len_a=100, len_b=300),  # shorter won
        rec("t3", 0, 1, "B", len_a=100, len_b=300),  # longer won
        rec("t4", 0, 1, "B", len_a=200, len_b=200),  # equal: skipped
        rec("t5", 0, 1, "tie", len_a=100, len_b=300),  # tie: skipped
    ]
    report = judge_reliability(records, 2)["E"]
    assert report["winner_longer_rate"] == pytest.approx(2 / 3, abs=RATE_TOL)
    assert report["n_winner_longer"] == 3


def test_duplicate_consistency_counts_agreeing_repeats_and_ties():
    records = [
        rec("t1", 0, 1, "A", kind="duplicate", repeat=0), rec("t1", 0, 1, "A", kind="duplicate", repeat=1),
        rec("t2", 0, 2, "tie", kind="duplicate", repeat=0), rec("t2", 0, 2, "tie", kind="duplicate", repeat=1),
        rec("t3", 1, 2, "A", kind="duplicate", repeat=0), rec("t3", 1, 2, "B", kind="duplicate", repeat=1),
        rec("t4", 1, 2, "A", kind="duplicate", repeat=0), rec("t4", 1, 2, "tie", kind="duplicate", repeat=1),
    ]
    report = judge_reliability(records, 3)["E"]
    assert report["duplicate_consistency"] == pytest.approx(2 / 4, abs=RATE_TOL)


def test_dimension_without_duplicates_reports_none():
    report = judge_reliability([rec("t1", 0, 1, "A", dim="U"), rec("t2", 1, 0, "A", dim="U")], 2)["U"]
    assert report["duplicate_consistency"] is None
    assert report["swap_decisive_consistency"] is None
    assert report["aux_rank_corr"] == {}


def _simulated_records(rng, theta, n_tasks, bias_logit, judge="primary", kind="primary"):
    out = []
    n = theta.size
    for t in range(n_tasks):
        a, b = rng.choice(n, 2, replace=False)
        p_a = expit(theta[a] - theta[b] + bias_logit)
        out.append(rec(f"t{t}", int(a), int(b), "A" if rng.random() < p_a else "B", kind=kind, judge=judge))
    return out


def test_simulated_position_bias_is_recovered():
    rng = np.random.default_rng(0)
    theta = np.zeros(6)
    records = _simulated_records(rng, theta, 4000, bias_logit=0.4)
    bias = judge_reliability(records, 6)["E"]["a_position_bias_pp"]
    assert bias == pytest.approx(100 * (expit(0.4) - 0.5), abs=3.0)  # s.e. ≈ 0.8 points


def test_auxiliary_judge_rank_correlation_is_high_for_a_faithful_judge_and_low_for_a_random_one():
    rng = np.random.default_rng(1)
    theta = np.linspace(-2, 2, 8)
    primary = _simulated_records(rng, theta, 3000, 0.0)
    faithful = _simulated_records(rng, theta, 1500, 0.0, judge="aux-good", kind="auxiliary")
    noise = _simulated_records(rng, np.zeros(8), 1500, 0.0, judge="aux-random", kind="auxiliary")
    report = judge_reliability(primary + faithful + noise, 8)["E"]
    assert report["aux_rank_corr"]["aux-good"] > 0.95
    assert abs(report["aux_rank_corr"]["aux-random"]) < 0.8


def test_primary_swap_rank_correlation_uses_the_swapped_pairs():
    rng = np.random.default_rng(2)
    theta = np.linspace(-1.5, 1.5, 6)
    primary = _simulated_records(rng, theta, 2000, 0.0)
    swaps = []
    for r in primary:
        p_model_b_first = expit(theta[r.model_b] - theta[r.model_a])
        swaps.append(rec(r.task, r.model_b, r.model_a, "A" if rng.random() < p_model_b_first else "B", kind="swap"))
    report = judge_reliability(primary + swaps, 6)["E"]
    assert report["primary_swap_rank_corr"] > 0.9


def test_models_may_be_named_by_string_ids():
    records = [rec("t1", "gpt", "claude", "A"), rec("t2", "claude", "gpt", "A")]
    report = judge_reliability(records, ["gpt", "claude"])["E"]
    assert report["n_primary"] == 2


def test_records_reject_unknown_winner_and_kind():
    with pytest.raises(ValueError, match="winner"):
        rec("t1", 0, 1, "C")
    with pytest.raises(ValueError, match="kind"):
        rec("t1", 0, 1, "A", kind="pilot")


def test_unknown_model_in_records_raises():
    with pytest.raises(ValueError, match="not in models"):
        judge_reliability([rec("t1", 0, 7, "A")], 3)
