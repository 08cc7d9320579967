"""Tests for engine.bt — Bradley–Terry fit, bootstrap, rank uncertainty and win rates."""

from __future__ import annotations

import choix
import numpy as np
import pytest
import statsmodels.api as sm
from scipy.optimize import check_grad
from scipy.special import expit
from scipy.stats import norm

from engine import bt
from engine.bt import (
    BTFit,
    bootstrap_bradley_terry,
    diagnostic_winrate,
    expected_winrate,
    fit_bradley_terry,
    fit_win_matrix,
    indistinguishable_tiers,
    rank_probabilities,
    task_win_matrices,
    win_matrix,
)

CHOIX_TOL = 1e-6  # issue 6: agree with an independent implementation to 1e-6
GLM_TOL = 1e-6  # statsmodels IRLS default convergence is 1e-8 on the deviance
PUBLISHED_4DP_TOL = 5e-5  # the published table prints 4 decimals
GRAD_TOL = 1e-5  # check_grad with finite differences of step ~1.5e-8

# Stigler (1994) inter-journal citations as printed on p. 448 of Agresti (2002) and shipped as
# BradleyTerry2::citations; rows = cited (winner), columns = citing (loser). Order:
# Biometrika, Comm Statist, JASA, JRSS-B. Self-citations (diagonal) are ignored.
CITATIONS = np.array(
    [[714, 730, 498, 221], [33, 425, 68, 17], [320, 813, 1072, 142], [284, 276, 325, 188]], dtype=float
)
# BradleyTerry2 vignette (Turner & Firth), §2.1 `citeModel` coefficients, Biometrika = 0:
# ..Comm Statist -2.9491, ..JASA -0.4796, ..JRSS-B 0.2690 (Agresti 2002 reports -2.95, -0.48, 0.27).
CITATIONS_BT2 = np.array([0.0, -2.9491, -0.4796, 0.2690])
# BradleyTerryScalable README (EllaKaye/BradleyTerryScalable), `vcov(citations_fit, ref = "JASA")`:
# Var(JRSS-B − JASA), Var(Biometrika − JASA), Var(Comm − JASA), Cov(JRSS-B − JASA, Biometrika − JASA).
CITATIONS_VCOV_REF_JASA = {"jrssb": 0.005323938, "biometrika": 0.003671841, "comm": 0.009638953, "jrssb_biom": 0.001988435}
# That README's MM fit stopped after 2 iterations (its estimates differ from the exact MLE in the
# 4th decimal), so its variances agree only to ~1e-3 relative.
SCALABLE_VCOV_RTOL = 2e-3


def _citation_wins() -> np.ndarray:
    w = CITATIONS.copy()
    np.fill_diagonal(w, 0.0)
    return w


def _simulate(rng: np.random.Generator, theta: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    n = theta.size
    i = rng.integers(0, n, n_rows)
    j = (i + rng.integers(1, n, n_rows)) % n
    i_wins = rng.random(n_rows) < expit(theta[i] - theta[j])
    return np.where(i_wins, i, j), np.where(i_wins, j, i)


# ---------------------------------------------------------------------------------------------- fit


def test_fit_reproduces_published_citation_strengths():
    fit = fit_win_matrix(_citation_wins())
    np.testing.assert_allclose(fit.theta - fit.theta[0], CITATIONS_BT2, atol=PUBLISHED_4DP_TOL)


def test_covariance_reproduces_published_citation_vcov():
    fit = fit_win_matrix(_citation_wins())
    c = fit.cov
    jasa = 2

    def cov_diff(a: int, b: int) -> float:
        # Cov(θa − θJASA, θb − θJASA)
        return c[a, b] - c[a, jasa] - c[jasa, b] + c[jasa, jasa]

    ref = CITATIONS_VCOV_REF_JASA
    np.testing.assert_allclose(cov_diff(3, 3), ref["jrssb"], rtol=SCALABLE_VCOV_RTOL)
    np.testing.assert_allclose(cov_diff(0, 0), ref["biometrika"], rtol=SCALABLE_VCOV_RTOL)
    np.testing.assert_allclose(cov_diff(1, 1), ref["comm"], rtol=SCALABLE_VCOV_RTOL)
    np.testing.assert_allclose(cov_diff(3, 0), ref["jrssb_biom"], rtol=SCALABLE_VCOV_RTOL)


def test_fit_matches_choix_on_connected_data():
    rng = np.random.default_rng(1)
    theta = rng.normal(0.0, 1.0, 10)
    winners, losers = _simulate(rng, theta, 3000)
    fit = fit_bradley_terry(winners, losers, 10)
    reference = choix.ilsr_pairwise(10, list(zip(winners.tolist(), losers.tolist())), tol=1e-12)
    np.testing.assert_allclose(fit.theta, reference - reference.mean(), atol=CHOIX_TOL)


def test_regularised_fit_matches_choix_map_estimate():
    # choix.opt_pairwise minimises NLL + alpha·Σθ² (choix/opt.py PairwiseFcts.objective): alpha = λ
    rng = np.random.default_rng(2)
    winners, losers = _simulate(rng, rng.normal(0.0, 1.0, 6), 400)
    lam = 0.7
    fit = fit_bradley_terry(winners, losers, 6, l2=lam)
    reference = choix.opt_pairwise(6, list(zip(winners.tolist(), losers.tolist())), alpha=lam, tol=1e-12)
    np.testing.assert_allclose(fit.theta, reference - reference.mean(), atol=CHOIX_TOL)


def test_weighted_fit_and_covariance_match_statsmodels_logistic_glm():
    rng = np.random.default_rng(3)
    n = 6
    winners, losers = _simulate(rng, rng.normal(0.0, 1.0, n), 800)
    weights = rng.uniform(0.2, 1.0, winners.size)
    fit = fit_bradley_terry(winners, losers, n, weights=weights)
    # logistic regression of "winner beat loser" on e_winner − e_loser, model 0 as reference
    design = np.zeros((winners.size, n))
    design[np.arange(winners.size), winners] = 1.0
    design[np.arange(winners.size), losers] = -1.0
    glm = sm.GLM(np.ones(winners.size), design[:, 1:], family=sm.families.Binomial(), freq_weights=weights).fit(
        tol=1e-14
    )
    np.testing.assert_allclose(fit.theta[1:] - fit.theta[0], glm.params, atol=GLM_TOL)
    # Var(θk − θ0) from the sum-zero covariance equals the GLM's reference-coded covariance
    c = fit.cov
    ref_cov = c[1:, 1:] - c[1:, :1] - c[:1, 1:] + c[0, 0]
    np.testing.assert_allclose(ref_cov, glm.cov_params(), rtol=1e-6)


def test_weights_act_as_replicated_comparisons():
    rng = np.random.default_rng(4)
    winners, losers = _simulate(rng, rng.normal(0.0, 1.0, 5), 300)
    doubled = fit_bradley_terry(np.tile(winners, 2), np.tile(losers, 2), 5)
    weighted = fit_bradley_terry(winners, losers, 5, weights=np.full(winners.size, 2.0))
    np.testing.assert_allclose(weighted.theta, doubled.theta, atol=1e-10)
    np.testing.assert_allclose(weighted.cov, doubled.cov, atol=1e-10)


def test_gradient_matches_finite_differences():
    wins = _citation_wins()
    theta0 = np.array([0.3, -1.0, 0.2, 0.5])
    lam = 0.3
    err = check_grad(
        lambda t: float(bt._nll(wins[None], t[None], lam)[0]),
        lambda t: bt._grad_hess(wins[None], t[None], lam)[0][0],
        theta0,
    )
    assert err < GRAD_TOL * np.abs(bt._grad_hess(wins[None], theta0[None], lam)[0]).max()


def test_fit_theta_sums_to_zero_and_covariance_lives_on_sum_zero_subspace():
    fit = fit_win_matrix(_citation_wins(), l2=0.5)
    assert abs(fit.theta.sum()) < 1e-12
    np.testing.assert_allclose(fit.cov.sum(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(fit.cov, fit.cov.T, atol=1e-15)


def test_penalised_fit_is_a_stationary_point_of_the_penalised_loss():
    fit = fit_win_matrix(_citation_wins(), l2=2.0)
    grad, _ = bt._grad_hess(fit.wins[None], fit.theta[None], 2.0)
    np.testing.assert_allclose(grad[0], 0.0, atol=1e-8)


def test_ridge_shrinks_skills_toward_zero():
    plain = fit_win_matrix(_citation_wins())
    ridge = fit_win_matrix(_citation_wins(), l2=50.0)
    assert np.abs(ridge.theta).sum() < np.abs(plain.theta).sum()


@pytest.mark.parametrize(
    ("n", "winners", "losers", "message"),
    [
        (4, [0, 1, 2, 3], [1, 0, 3, 2], "disconnected"),
        (3, [0, 0, 1, 2], [1, 2, 2, 1], r"model\(s\) \[0\] never lose"),
        (3, [0, 1, 0, 1], [1, 0, 2, 2], r"model\(s\) \[2\] never win"),
        (4, [0, 1, 2, 0], [1, 2, 0, 2], r"model\(s\) \[3\] have no decisive comparisons"),
    ],
)
def test_unidentifiable_data_raise_a_clear_error_without_ridge(n, winners, losers, message):
    with pytest.raises(ValueError, match=message):
        fit_bradley_terry(winners, losers, n)


def test_ridge_makes_disconnected_data_fittable():
    fit = fit_bradley_terry([0, 1, 2, 3], [1, 0, 3, 2], 4, l2=0.1)
    assert np.all(np.isfinite(fit.theta))
    assert fit.theta[0] == pytest.approx(fit.theta[1]) and fit.theta[0] == pytest.approx(0.0, abs=1e-12)


def test_win_graph_that_is_connected_but_not_strongly_connected_raises():
    # {0,1} beat each other, {2,3} beat each other, and 0 beat 2 but nobody in {2,3} ever beat {0,1}
    with pytest.raises(ValueError, match="strongly connected"):
        fit_bradley_terry([0, 1, 2, 3, 0], [1, 0, 3, 2, 2], 4)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"winners": [0, 1], "losers": [1]}, "differ in length"),
        ({"winners": [0, 5], "losers": [1, 0]}, "outside"),
        ({"winners": [0, 1], "losers": [0, 0]}, "same model"),
        ({"winners": [0, 1], "losers": [1, 0], "weights": [1.0, -1.0]}, "non-negative"),
        ({"winners": [0, 1], "losers": [1, 0], "l2": -1.0}, "l2"),
    ],
)
def test_invalid_inputs_raise_value_error_naming_the_problem(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fit_bradley_terry(n_models=3, **kwargs)


def test_fit_recovers_true_skills_at_60000_comparisons():
    rng = np.random.default_rng(5)
    theta = rng.normal(0.0, 0.8, 14)
    winners, losers = _simulate(rng, theta, 60_000)
    fit = fit_bradley_terry(winners, losers, 14)
    assert np.corrcoef(fit.theta, theta)[0, 1] > 0.99


# ------------------------------------------------------------------------------------ aggregation


def test_a_single_fit_is_bit_identical_to_the_same_matrix_fitted_among_others_in_a_stack():
    # a single fit (every iteration with its one replicate moving) and a bootstrap stack (replicates that stop
    # at different iterations drop out) take the same steps: the active planner's fits and the leaderboard's
    # bootstrap agree to the bit
    rng = np.random.default_rng(11)
    stack = rng.poisson(1.5, size=(40, 9, 9)).astype(float) * rng.random((40, 9, 9))
    for w in stack:
        np.fill_diagonal(w, 0.0)
    stacked = bt.fit_win_matrices(stack, l2=0.01)
    for k, w in enumerate(stack):
        single = fit_win_matrix(w, l2=0.01)
        assert single.theta.tobytes() == stacked[k].tobytes()
    assert len({fit_win_matrix(w, l2=0.01).n_iter for w in stack}) > 1  # replicates stop at different steps


def test_the_single_fit_newton_takes_the_stacks_steps_to_the_bit():
    # fit_win_matrix runs _newton_single (no stack of one); it must give the stack's θ, Hessian and iteration
    # count to the bit, cold and warm-started, for every pool size the planner and the boards fit
    rng = np.random.default_rng(17)
    for n in (2, 3, 5, 9, 14, 17):
        for _ in range(25):
            w = rng.poisson(rng.uniform(0.05, 3.0), size=(n, n)).astype(float) * rng.choice([1.0, 0.7], size=(n, n))
            np.fill_diagonal(w, 0.0)
            for l2, theta0 in ((0.01, None), (0.5, None), (0.01, rng.normal(size=n))):
                stacked_theta, stacked_hess, stacked_iter = bt._newton(w[None], l2, theta0)
                theta, hess, n_iter = bt._newton_single(w, l2, theta0)
                assert theta.tobytes() == stacked_theta[0].tobytes()
                assert hess.tobytes() == stacked_hess[0].tobytes()
                assert n_iter == stacked_iter


def test_win_matrix_sums_weights_per_ordered_pair():
    w = win_matrix([0, 0, 2, 0], [1, 1, 0, 2], 3, weights=[0.5, 1.0, 2.0, 0.25])
    expected = np.array([[0.0, 1.5, 0.25], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    np.testing.assert_array_equal(w, expected)


def test_task_win_matrices_add_up_to_the_overall_win_matrix():
    rng = np.random.default_rng(6)
    winners, losers = _simulate(rng, np.zeros(5), 200)
    tasks = rng.choice(["t1", "t2", "t3"], 200)
    ids, per_task = task_win_matrices(tasks, winners, losers, 5)
    assert ids.tolist() == ["t1", "t2", "t3"]
    np.testing.assert_array_equal(per_task.sum(axis=0), win_matrix(winners, losers, 5))
    np.testing.assert_array_equal(per_task[1], win_matrix(winners[tasks == "t2"], losers[tasks == "t2"], 5))


# -------------------------------------------------------------------------------------- bootstrap


def _task_data(rng: np.random.Generator, theta: np.ndarray, n_tasks: int, per_task: int):
    winners, losers = _simulate(rng, theta, n_tasks * per_task)
    tasks = np.repeat(np.arange(n_tasks), per_task)
    return tasks, winners, losers


def test_bootstrap_replicates_equal_choix_refits_of_the_resampled_tasks():
    rng = np.random.default_rng(7)
    tasks, winners, losers = _task_data(rng, rng.normal(0, 1, 5), 30, 40)
    boot = bootstrap_bradley_terry(tasks, winners, losers, 5, n_boot=5, seed=11)
    # documented resampling: multinomial task counts from numpy.random.default_rng(seed)
    counts = np.random.default_rng(11).multinomial(30, np.full(30, 1 / 30), size=5)
    for b in range(5):
        rows = np.concatenate([np.flatnonzero(tasks == t).repeat(counts[b, t]) for t in range(30)])
        ref = choix.ilsr_pairwise(5, list(zip(winners[rows].tolist(), losers[rows].tolist())), tol=1e-12)
        np.testing.assert_allclose(boot.replicates[b], ref - ref.mean(), atol=CHOIX_TOL)


def test_bootstrap_reports_5th_50th_95th_percentiles_of_replicates():
    rng = np.random.default_rng(8)
    tasks, winners, losers = _task_data(rng, rng.normal(0, 1, 4), 40, 30)
    boot = bootstrap_bradley_terry(tasks, winners, losers, 4, n_boot=300)
    np.testing.assert_allclose(boot.lower, np.percentile(boot.replicates, 5, axis=0))
    np.testing.assert_allclose(boot.median, np.percentile(boot.replicates, 50, axis=0))
    np.testing.assert_allclose(boot.upper, np.percentile(boot.replicates, 95, axis=0))
    assert boot.replicates.shape == (300, 4)
    assert np.all(boot.lower < boot.upper)


def test_bootstrap_90_percent_interval_covers_true_skills_near_nominal_rate():
    rng = np.random.default_rng(9)
    n_models, covered, total = 6, 0, 0
    for _ in range(40):
        theta = rng.normal(0.0, 0.7, n_models)
        theta -= theta.mean()
        tasks, winners, losers = _task_data(rng, theta, 60, 15)
        boot = bootstrap_bradley_terry(tasks, winners, losers, n_models, n_boot=200, seed=int(rng.integers(1 << 31)))
        covered += int(np.sum((boot.lower <= theta) & (theta <= boot.upper)))
        total += n_models
    rate = covered / total
    # 240 intervals at nominal 0.90: binomial s.e. ≈ 0.019; allow ±3 s.e. (intervals are correlated)
    assert 0.84 <= rate <= 0.96, rate


def test_bootstrap_raises_or_drops_resamples_without_an_mle():
    # task 0 holds the only loss of model 0: resamples without task 0 have no finite MLE
    tasks = np.array([0, 1, 1, 1, 2, 2])
    winners = np.array([1, 0, 1, 2, 0, 2])
    losers = np.array([0, 2, 2, 1, 1, 0])
    with pytest.raises(ValueError, match="no finite MLE"):
        bootstrap_bradley_terry(tasks, winners, losers, 3, n_boot=50)
    boot = bootstrap_bradley_terry(tasks, winners, losers, 3, n_boot=50, on_degenerate="drop")
    assert boot.n_dropped > 0 and boot.replicates.shape[0] == 50 - boot.n_dropped


# --------------------------------------------------------------------------------- rank uncertainty


def _fit(theta: list[float], cov: np.ndarray) -> BTFit:
    n = len(theta)
    return BTFit(theta=np.array(theta), cov=cov, wins=np.zeros((n, n)), l2=0.0, n_iter=0)


def test_rank_probabilities_of_two_models_match_the_normal_cdf():
    # θ1 − θ0 ~ N(0.3, Σ00 + Σ11 − 2Σ01 = 0.2): P(model 1 ranks first) = Φ(0.3/√0.2)
    cov = np.array([[0.05, -0.05], [-0.05, 0.05]])
    fit = _fit([-0.15, 0.15], cov)
    probs = rank_probabilities(fit, draws=20000, seed=1)
    expected = norm.cdf(0.3 / np.sqrt(0.2))
    assert probs[1, 0] == pytest.approx(expected, abs=4 * np.sqrt(expected * (1 - expected) / 20000))


def test_rank_probabilities_rows_and_columns_sum_to_one():
    fit = fit_win_matrix(_citation_wins())
    probs = rank_probabilities(fit, draws=2000)
    np.testing.assert_allclose(probs.sum(axis=0), 1.0)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert probs[1, 3] > 0.99  # Comm Statist is last by a wide margin


def test_tiers_join_neighbours_whose_difference_is_inside_the_wald_interval():
    # independent-ish SEs of 0.1 per model: SE of a difference ≈ 0.141, half-width ≈ 0.277
    cov = np.eye(4) * 0.01
    fit = _fit([1.0, 0.9, 0.0, -0.5], cov)
    assert indistinguishable_tiers(fit) == [[0, 1], [2], [3]]
    assert indistinguishable_tiers(_fit([1.0, 0.9, 0.7, -0.5], cov)) == [[0, 1, 2], [3]]


# ---------------------------------------------------------------------------------------- win rates


def test_expected_winrate_is_mean_bt_probability_against_the_other_models():
    theta = np.array([0.4, -0.1, 1.2, -1.5])
    expected = [np.mean([expit(theta[m] - theta[k]) for k in range(4) if k != m]) for m in range(4)]
    np.testing.assert_allclose(expected_winrate(theta), expected, atol=1e-15)
    assert expected_winrate(theta).mean() == pytest.approx(0.5)


def test_expected_winrate_accepts_stacks_of_replicates():
    reps = np.random.default_rng(0).normal(size=(7, 5))
    stacked = expected_winrate(reps)
    np.testing.assert_allclose(stacked[3], expected_winrate(reps[3]))


def test_diagnostic_winrate_counts_ties_as_half_wins():
    rates = diagnostic_winrate([3, 0, 0], [1, 2, 0], [2, 2, 0])
    np.testing.assert_allclose(rates[:2], [(3 + 1) / 6, 1 / 4])
    assert np.isnan(rates[2])


def test_bootstrap_tiers_keep_two_models_the_data_cannot_tell_apart_in_one_tier():
    """App. F.4: neighbours are indistinguishable when their difference is inside its interval. Models 0 and 2 have
    the same record (2–1 against their only opponent in every task), so every replicate gives them the same
    expected win rate up to float noise (~7e-15); that noise made the paired interval [7e-15, 7e-15] miss 0 and
    split them into two tiers."""
    tasks, winners, losers = [], [], []
    for t in range(4):
        for w, l in ((0, 1), (0, 1), (1, 0), (2, 3), (2, 3), (3, 2)):  # noqa: E741
            tasks.append(t)
            winners.append(w)
            losers.append(l)
    boot = bootstrap_bradley_terry(tasks, winners, losers, 4, l2=0.01, n_boot=200)
    rates = expected_winrate(boot.replicates)
    tiers = bt.bootstrap_tiers(rates, expected_winrate(boot.fit.theta), level=0.90)
    assert sorted(map(sorted, tiers)) == [[0, 2], [1, 3]]


def test_bootstrap_tiers_split_neighbours_whose_paired_interval_excludes_zero():
    """App. F.4 by hand: model 0 beats model 1 by 0.2 in every replicate (paired interval [0.2, 0.2]) and model 1
    overlaps model 2 with a paired difference spread over ±0.1, so the tiers are [[0], [1, 2]]."""
    rng = np.random.default_rng(0)
    base = rng.normal(0.5, 0.05, size=500)
    samples = np.column_stack([base + 0.2, base, base + rng.uniform(-0.1, 0.1, size=500)])
    assert bt.bootstrap_tiers(samples, [0.7, 0.5, 0.5], level=0.90) == [[0], [1, 2]]
