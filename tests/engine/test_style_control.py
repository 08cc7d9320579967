"""engine.style_control: a planted length preference is recovered and taken out of the scores."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from engine.style_control import style_controlled_bradley_terry, style_features

K = 5
TRUE_THETA = np.array([0.6, 0.3, 0.0, -0.3, -0.6])
LENGTH_EFFECT = 1.2  # log-odds per unit of normalised length difference, before standardising


def _data(rng, n, length_effect):
    i = rng.integers(0, K, n)
    j = (i + rng.integers(1, K, n)) % K
    # the weakest model writes the longest answers: a judge that likes length flatters it
    mean_len = np.linspace(300, 900, K)
    li, lj = rng.normal(mean_len[i], 80), rng.normal(mean_len[j], 80)
    z = (li - lj) / (li + lj)
    y = (rng.random(n) < expit(TRUE_THETA[i] - TRUE_THETA[j] + length_effect * z)).astype(float)
    return i, j, y, li, lj, z


def test_a_planted_length_effect_is_recovered_and_removed():
    rng = np.random.default_rng(1)
    i, j, y, li, lj, z = _data(rng, 4000, LENGTH_EFFECT)
    fit = style_controlled_bradley_terry(K, i, j, y, {"length": li}, {"length": lj}, n_bootstrap=60)
    gamma, lo, hi = fit.coefficients["length"]
    # γ is per standard deviation of the normalised difference
    assert lo <= LENGTH_EFFECT * z.std() <= hi
    assert lo > 0
    np.testing.assert_allclose(fit.scores, TRUE_THETA - TRUE_THETA.mean(), atol=0.15)
    # without style control the long-winded weakest model looks better than it is
    assert fit.unadjusted_scores[-1] > fit.scores[-1] + 0.1
    for m, (a, b) in enumerate(fit.score_intervals):
        assert a <= fit.scores[m] <= b


def test_no_length_effect_gives_a_coefficient_near_zero():
    rng = np.random.default_rng(2)
    i, j, y, li, lj, _ = _data(rng, 3000, 0.0)
    fit = style_controlled_bradley_terry(K, i, j, y, {"length": li}, {"length": lj}, n_bootstrap=60)
    _, lo, hi = fit.coefficients["length"]
    assert lo <= 0 <= hi


def test_ties_and_task_clusters_are_accepted():
    rng = np.random.default_rng(3)
    i, j, y, li, lj, _ = _data(rng, 600, LENGTH_EFFECT)
    y[::7] = 0.5
    tasks = rng.integers(0, 40, y.size)
    fit = style_controlled_bradley_terry(K, i, j, y, {"length": li}, {"length": lj}, n_bootstrap=30, clusters=tasks)
    assert np.all(np.isfinite(fit.scores))


def test_style_features_count_length_list_items_and_adjectives():
    f = style_features("A vast pale sky.\n- a red door\n- 2 birds\n1. a tiny boat")
    assert f["list_items"] == 3
    assert f["adjectives"] == 4  # vast, pale, red, tiny
    assert f["length"] == len("A vast pale sky.\n- a red door\n- 2 birds\n1. a tiny boat")


def test_a_model_in_no_comparison_gets_no_style_adjusted_score():
    # a model added after the labels (or one nobody compared): no comparison says anything of its skill. The fit
    # gave it the reference's score (its column stayed at the ridge's 0) with a bootstrap interval, so the page
    # ranked it beside the best model
    rng = np.random.default_rng(4)
    i, j, y, li, lj, _ = _data(rng, 1500, LENGTH_EFFECT)
    for absent in (0, K - 1):  # the reference model too
        keep = (i != absent) & (j != absent)
        fit = style_controlled_bradley_terry(K, i[keep], j[keep], y[keep], {"length": li[keep]}, {"length": lj[keep]},
                                             n_bootstrap=20)
        assert np.isnan(fit.scores[absent]) and np.isnan(fit.unadjusted_scores[absent])
        assert all(np.isnan(fit.score_intervals[absent]))
        # the others: the fit of the four models alone, renumbered
        others = [m for m in range(K) if m != absent]
        renumber = {m: k for k, m in enumerate(others)}
        alone = style_controlled_bradley_terry(K - 1, [renumber[a] for a in i[keep]], [renumber[b] for b in j[keep]],
                                               y[keep], {"length": li[keep]}, {"length": lj[keep]}, n_bootstrap=0)
        np.testing.assert_allclose(fit.scores[others], alone.scores, atol=1e-4)
        assert np.nansum(fit.scores) == pytest.approx(0, abs=1e-9)


def test_a_model_that_won_every_comparison_is_not_ranked():
    # its skill has no finite estimate (Ford 1957): as in engine.calibration, it gets no score
    rng = np.random.default_rng(5)
    i, j, y, li, lj, _ = _data(rng, 1500, LENGTH_EFFECT)
    y = np.where(i == 0, 1.0, np.where(j == 0, 0.0, y))
    fit = style_controlled_bradley_terry(K, i, j, y, {"length": li}, {"length": lj}, n_bootstrap=10)
    assert np.isnan(fit.scores[0]) and np.all(np.isfinite(fit.scores[1:]))


def test_a_feature_that_never_differs_has_no_coefficient():
    # no list items in any answer: γ is not estimable; it was reported as exactly 0 with the interval [0, 0]
    rng = np.random.default_rng(6)
    i, j, y, li, lj, _ = _data(rng, 1500, LENGTH_EFFECT)
    none = np.zeros(i.size)
    fit = style_controlled_bradley_terry(K, i, j, y, {"length": li, "list_items": none},
                                         {"length": lj, "list_items": none}, n_bootstrap=20)
    assert all(np.isnan(fit.coefficients["list_items"]))
    assert np.isfinite(fit.coefficients["length"][0])
    alone = style_controlled_bradley_terry(K, i, j, y, {"length": li}, {"length": lj}, n_bootstrap=0)
    np.testing.assert_allclose(fit.scores, alone.scores, atol=1e-6)


def test_every_comparison_a_tie_is_refused_with_a_message():
    # every resample of all-tie outcomes fits 0, so the intervals were [0, 0]: a certainty no data gave
    rng = np.random.default_rng(7)
    i, j, _, li, lj, _ = _data(rng, 200, 0.0)
    with pytest.raises(ValueError, match="every comparison is a tie"):
        style_controlled_bradley_terry(K, i, j, np.full(i.size, 0.5), {"length": li}, {"length": lj}, n_bootstrap=5)
