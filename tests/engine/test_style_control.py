"""engine.style_control: a planted length preference is recovered and taken out of the scores."""

from __future__ import annotations

import numpy as np
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
