"""The paired, stratified bootstrap (engine.paired_bootstrap) against independent computations: exact
enumeration of every resample of a tiny design, scipy's own bootstrap, and designs whose answer is known."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from engine.paired_bootstrap import stratified_paired_bootstrap

#: Monte-Carlo tolerance of a bootstrap probability with 40,000 resamples: 4 standard errors of a share
#: (√(0.25/40000) = 0.0025).
SHARE_TOLERANCE = 0.01
#: Two bootstraps of the same statistic with 20,000 resamples each (different random streams) agree on a
#: percentile bound of a mean of values in [0, 1] to about this much.
BOUND_TOLERANCE = 0.01


def test_the_point_score_is_the_mean_over_items_or_the_mean_of_stratum_means():
    values = [[0.2, 0.4, 0.9], [0.5, 0.5, 0.5]]
    strata = ["a", "a", "b"]
    by_items = stratified_paired_bootstrap(values, strata, weighting="items", n_boot=10)
    by_strata = stratified_paired_bootstrap(values, strata, weighting="strata", n_boot=10)
    assert by_items.point == pytest.approx([0.5, 0.5])
    assert by_strata.point == pytest.approx([(0.3 + 0.9) / 2, 0.5])


def test_p_greater_matches_the_exact_enumeration_of_every_resample():
    a = np.array([0.9, 0.1, 0.6])
    b = np.array([0.5, 0.4, 0.3])
    # exact: every ordered resample of the 3 items (3^3, equally likely), mean(a) − mean(b) of the draw
    diffs = [np.mean(a[list(d)] - b[list(d)]) for d in itertools.product(range(3), repeat=3)]
    exact = np.mean([1.0 if d > 1e-12 else 0.5 if abs(d) <= 1e-12 else 0.0 for d in diffs])
    result = stratified_paired_bootstrap([a, b], ["x"] * 3, n_boot=40_000, seed=1)
    assert result.p_greater[0, 1] == pytest.approx(exact, abs=SHARE_TOLERANCE)
    assert result.p_greater[1, 0] == pytest.approx(1 - exact, abs=SHARE_TOLERANCE)
    assert np.isnan(result.p_greater[0, 0])


def test_the_difference_interval_matches_scipys_percentile_bootstrap_of_the_paired_differences():
    rng = np.random.default_rng(7)
    a = rng.uniform(0.3, 0.7, size=12)
    b = a - 0.05 + rng.normal(0, 0.05, size=12)
    ours = stratified_paired_bootstrap([a, b], ["x"] * 12, n_boot=20_000, level=0.90, seed=3)
    theirs = stats.bootstrap((a - b,), np.mean, method="percentile", confidence_level=0.90, n_resamples=20_000,
                             random_state=np.random.default_rng(4)).confidence_interval
    assert ours.diff_low[0, 1] == pytest.approx(theirs.low, abs=BOUND_TOLERANCE)
    assert ours.diff_high[0, 1] == pytest.approx(theirs.high, abs=BOUND_TOLERANCE)
    assert ours.diff_low[1, 0] == pytest.approx(-ours.diff_high[0, 1])


def test_resampling_stays_within_strata():
    # A wins every item of stratum "p" by 1 and loses every item of "q" by 1: with one mean per stratum,
    # every replicate's Combined difference is exactly 0, whatever items are drawn.
    a = [1.0, 1.0, 1.0, 0.0, 0.0]
    b = [0.0, 0.0, 0.0, 1.0, 1.0]
    result = stratified_paired_bootstrap([a, b], ["p", "p", "p", "q", "q"], weighting="strata", n_boot=500)
    assert result.diff_low[0, 1] == result.diff_high[0, 1] == 0.0
    assert result.p_greater[0, 1] == 0.5


def test_rank_probabilities_sum_to_one_and_a_dominant_agent_is_always_first():
    values = [[0.9, 0.8, 0.95, 0.85], [0.5, 0.4, 0.6, 0.45], [0.55, 0.35, 0.5, 0.5]]
    result = stratified_paired_bootstrap(values, ["x", "x", "y", "y"], n_boot=2000, seed=5)
    assert result.rank_probabilities.sum(axis=0) == pytest.approx(np.ones(3))
    assert result.rank_probabilities.sum(axis=1) == pytest.approx(np.ones(3))
    assert result.rank_probabilities[0, 0] == 1.0
    assert (result.rank_low[0], result.rank_high[0]) == (1, 1)
    assert result.p_greater[0, 1] == 1.0 and result.p_greater[0, 2] == 1.0


def test_a_missing_score_is_left_out_of_its_agents_mean():
    result = stratified_paired_bootstrap([[0.2, np.nan, 0.4], [0.1, 0.2, 0.3]], ["x"] * 3, n_boot=50)
    assert result.point == pytest.approx([0.3, 0.2])


@pytest.mark.parametrize("kwargs", [{"weighting": "median"}, {"level": 1.0}, {"n_boot": 1}])
def test_bad_arguments_are_refused(kwargs):
    with pytest.raises(ValueError):
        stratified_paired_bootstrap([[0.1, 0.2]], ["x", "x"], **kwargs)


def test_a_stratum_label_per_item_is_required():
    with pytest.raises(ValueError, match="stratum labels"):
        stratified_paired_bootstrap([[0.1, 0.2]], ["x"])


def test_agents_that_tie_in_a_replicate_share_its_ranks():
    # agents 0 and 1 score alike on every item (two EASEL agents that never paint: the blank canvas's S), so they tie
    # in every replicate: each holds each of their ranks half the time, as P(0 > 1) = 0.5 says. They were ranked by
    # index: agent 0 above agent 1 in every replicate, rank-sets [1, 2] and [2, 3] here, [1, 1] and [2, 2] alone.
    third = [0.1, 0.2, 0.5, 0.4, 0.3, 0.2, 0.1, 0.3, 0.2, 0.3]
    result = stratified_paired_bootstrap([[0.333] * 10, [0.333] * 10, third], ["a"] * 10, n_boot=2000, seed=3)
    assert result.p_greater[0, 1] == 0.5
    np.testing.assert_array_equal(result.rank_probabilities[0], result.rank_probabilities[1])
    assert (result.rank_low[0], result.rank_high[0]) == (result.rank_low[1], result.rank_high[1]) == (1, 2)
    np.testing.assert_allclose(result.rank_probabilities.sum(axis=0), 1.0)
    np.testing.assert_allclose(result.rank_probabilities.sum(axis=1), 1.0)
    # agent 2 (never at 0.333: its values are tenths) is above both or below both: it never holds rank 2
    assert result.rank_probabilities[2, 1] == 0.0
    alone = stratified_paired_bootstrap([[0.3] * 4, [0.3] * 4], ["a"] * 4, n_boot=100)
    np.testing.assert_array_equal(alone.rank_probabilities, [[0.5, 0.5], [0.5, 0.5]])
    assert alone.rank_low.tolist() == [1, 1] and alone.rank_high.tolist() == [2, 2]


def test_rank_ranges_without_ties_are_the_replicates_inverted_cdf_percentiles():
    rng = np.random.default_rng(4)
    values = rng.random((4, 12))
    result = stratified_paired_bootstrap(values, ["a"] * 6 + ["b"] * 6, n_boot=500, level=0.8, seed=5)
    # the same replicates, drawn as the function draws them, ranked directly
    draws = np.random.default_rng(5)
    means = np.zeros((500, 4, 2))
    for h, members in enumerate((np.arange(6), np.arange(6, 12))):
        picked = members[draws.integers(0, 6, size=(500, 6))]
        means[:, :, h] = values[:, picked].sum(axis=2).T
    boot = means.sum(axis=2) / 12
    ranks = np.argsort(np.argsort(-boot, axis=1), axis=1) + 1
    low, high = np.percentile(ranks, [10, 90], axis=0, method="inverted_cdf")
    assert result.rank_low.tolist() == low.tolist() and result.rank_high.tolist() == high.tolist()
