"""engine.perception_fit: the logistic choice fit against statsmodels' Logit, the weight normalisation,
and the bootstrap over items."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from engine.perception_fit import EQ1_WEIGHTS, implied_weights, logistic_fit, perception_weights

#: Newton–Raphson to 1e-10 against statsmodels' Newton to its default tolerance (1e-8 on the score).
COEF_TOL = 1e-6


def _simulated_choices(n_items: int, per_item: int, beta, seed: int):
    rng = np.random.default_rng(seed)
    deltas = np.repeat(rng.normal(0.0, 0.25, (n_items, 3)), per_item, axis=0)
    p = 1 / (1 + np.exp(-(deltas @ np.asarray(beta))))
    choices = np.where(rng.random(len(p)) < p, "A", "B")
    return deltas, list(choices), list(np.repeat(np.arange(n_items), per_item))


def test_the_fit_equals_statsmodels_logit_without_intercept():
    deltas, choices, _ = _simulated_choices(80, 2, (6.0, 3.0, 2.0), seed=1)
    y = np.array([c == "A" for c in choices], dtype=float)
    ours = logistic_fit(deltas, y)
    reference = sm.Logit(y, deltas).fit(disp=0, method="newton")
    assert ours.converged and not ours.separated
    assert ours.coef == pytest.approx(tuple(reference.params), abs=COEF_TOL)
    assert ours.se == pytest.approx(tuple(reference.bse), rel=1e-5)
    assert ours.log_likelihood == pytest.approx(reference.llf, rel=1e-9)


def test_separated_choices_are_reported_not_fitted():
    x = np.array([[1.0, 0.2, 0.1], [0.5, -0.1, 0.3], [-0.7, 0.1, -0.2], [-1.0, -0.3, 0.1], [0.3, 0.3, 0.3]])
    y = (x[:, 0] > 0).astype(float)
    assert logistic_fit(x, y).separated


def test_collinear_components_are_refused():
    x = np.array([[1.0, 2.0, 0.1], [0.5, 1.0, 0.3], [-0.7, -1.4, -0.2], [0.2, 0.4, 0.5], [-0.1, -0.2, 0.0]])
    with pytest.raises(ValueError, match="collinear"):
        logistic_fit(x, np.array([1, 0, 0, 1, 0.0]))


def test_implied_weights_sum_to_one():
    assert implied_weights((5.0, 3.0, 2.0)) == pytest.approx((0.5, 0.3, 0.2))
    assert all(np.isnan(implied_weights((1.0, -1.0, 0.0))))


def test_choices_made_with_eq1_weights_recover_them_inside_the_intervals():
    deltas, choices, items = _simulated_choices(400, 3, tuple(20 * w for w in EQ1_WEIGHTS), seed=2)
    result = perception_weights(deltas, choices, items, replicates=200, seed=0)
    for (lo, hi), paper in zip(result.intervals, EQ1_WEIGHTS):
        assert lo <= paper <= hi
    assert result.n_items == 400 and result.n_ties == 0


def test_ties_are_left_out_of_the_fit():
    deltas, choices, items = _simulated_choices(60, 2, (4.0, 2.0, 1.0), seed=3)
    with_ties = perception_weights(np.vstack([deltas, [[0.1, 0.1, 0.1]] * 5]), choices + ["tie"] * 5,
                                   items + [999] * 5, replicates=20)
    without = perception_weights(deltas, choices, items, replicates=20)
    assert with_ties.weights == pytest.approx(without.weights)
    assert with_ties.n_ties == 5
