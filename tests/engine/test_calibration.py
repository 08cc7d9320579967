"""engine.calibration: prediction-powered Bradley–Terry and means against a simulated truth, and
against ppi_py called directly (issue 24, "Done when")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ppi_py import ppi_logistic_ci, ppi_mean_ci
from scipy.special import expit
from scipy.stats import norm
from threadpoolctl import threadpool_limits

from engine.calibration import (
    board_budget,
    bt_design,
    labels_to_separate,
    ppi_bradley_terry,
    ppi_means,
    simultaneous_critical_value,
)

K = 6
TRUE_THETA = np.linspace(0.9, -0.9, K)  # model 0 best
N_HUMAN, N_JUDGE = 300, 4000
DRAWS = 60  # repeated draws of the simulation (seeded): ~10 s on the shared machine
COVERAGE_FLOOR = 0.85  # nominal 0.90; the floor of the Done-when
#: A coin-flip judge: the effective human n stays about n (λ estimated from noise is near 0).
USELESS_JUDGE_N_FLOOR = 0.95
#: ppi_py's optimiser stops at ftol 1e-15; two fits of the same loss agree to well below this.
PPI_PY_TOLERANCE = 1e-5


def _comparisons(rng, n):
    i = rng.integers(0, K, n)
    j = (i + rng.integers(1, K, n)) % K
    y = (rng.random(n) < expit(TRUE_THETA[i] - TRUE_THETA[j])).astype(float)
    return i, j, y


def _biased_judge(rng, i, j, y, accuracy=0.75):
    """Agrees with the person 75 % of the time, otherwise prefers the weaker model."""
    weaker_is_i = (TRUE_THETA[i] < TRUE_THETA[j]).astype(float)
    return np.where(rng.random(y.size) < accuracy, y, weaker_is_i)


def _simulate(judge, draws=DRAWS, seed=7):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(draws):
        hi, hj, hy = _comparisons(rng, N_HUMAN)
        ui, uj, uy = _comparisons(rng, N_JUDGE)
        calibrated = ppi_bradley_terry(K, (hi, hj, hy), (hi, hj, judge(rng, hi, hj, hy)),
                                       (ui, uj, judge(rng, ui, uj, uy)), alpha=0.1)
        people = ppi_bradley_terry(K, (hi, hj, hy), alpha=0.1)
        out.append((calibrated, people))
    return out


def _pairs():
    return [(a, b) for a in range(K) for b in range(a + 1, K)]


def _coverage(fits):
    hits = [lo <= TRUE_THETA[a] - TRUE_THETA[b] <= hi for f in fits for a, b in _pairs()
            for lo, hi in [f.difference_interval(a, b)]]
    return float(np.mean(hits))


def _mean_width(fit):
    return float(np.mean([np.subtract(*fit.difference_interval(b, a)) * -1 for a, b in _pairs()]))


def _rms_width(fit):
    return math.sqrt(np.mean([(hi - lo) ** 2 for a, b in _pairs() for lo, hi in [fit.difference_interval(a, b)]]))


@pytest.fixture(scope="module")
def biased_runs():
    return _simulate(_biased_judge)


def test_calibrated_intervals_cover_the_true_differences(biased_runs):
    assert _coverage([c for c, _ in biased_runs]) >= COVERAGE_FLOOR


def test_calibrated_intervals_are_clearly_narrower_than_people_only(biased_runs):
    ratio = np.mean([_mean_width(c) / _mean_width(p) for c, p in biased_runs])
    assert ratio < 0.9
    assert np.mean([c.effective_human_n for c, _ in biased_runs]) > 1.2 * N_HUMAN
    assert all(0 <= c.lam <= 1 for c, _ in biased_runs)


def test_rank_sets_cover_the_true_order(biased_runs):
    true_rank = np.arange(1, K + 1)
    covered = [all(best <= r <= worst for (best, worst), r in zip(c.rank_sets, true_rank)) for c, _ in biased_runs]
    assert np.mean(covered) >= COVERAGE_FLOOR
    # and they say something: on average a rank-set is narrower than the whole board
    assert np.mean([worst - best for c, _ in biased_runs for best, worst in c.rank_sets]) < K - 1


def test_the_judge_alone_would_be_biased(biased_runs):
    # why calibration is needed at all: a judge-only fit of the same design misses the truth
    rng = np.random.default_rng(3)
    ui, uj, uy = _comparisons(rng, 20_000)
    judge_only = ppi_bradley_terry(K, (ui, uj, _biased_judge(rng, ui, uj, uy)))
    lo, hi = judge_only.difference_interval(0, K - 1)
    assert hi < TRUE_THETA[0] - TRUE_THETA[-1]


def test_a_useless_judge_never_widens_the_board():
    def coin(rng, i, j, y):
        return (rng.random(y.size) < 0.5).astype(float)

    runs = _simulate(coin, draws=25, seed=11)
    for calibrated, people in runs:
        assert _rms_width(calibrated) <= _rms_width(people) * (1 + 1e-9)
        # λ estimated from noise may stay a little above 0: the judge then adds (almost) nothing
        assert calibrated.effective_human_n >= N_HUMAN * USELESS_JUDGE_N_FLOOR
    assert _coverage([c for c, _ in runs]) >= COVERAGE_FLOOR


def test_intervals_match_ppi_logistic_ci_called_directly():
    rng = np.random.default_rng(5)
    hi, hj, hy = _comparisons(rng, 400)
    yhat = _biased_judge(rng, hi, hj, hy)
    ui, uj, uy = _comparisons(rng, 3000)
    uhat = _biased_judge(rng, ui, uj, uy)
    fit = ppi_bradley_terry(K, (hi, hj, hy), (hi, hj, yhat), (ui, uj, uhat), alpha=0.1)
    assert fit.lam > 0
    columns = np.arange(1, K)  # model 0 is the reference: β_m = θ_m − θ_0
    with threadpool_limits(limits=1):  # ppi_py's own call; threads only slow it on a shared machine
        lo, hi_ = ppi_logistic_ci(bt_design(hi, hj, columns), hy, yhat, bt_design(ui, uj, columns), uhat, alpha=0.1)
    for m in range(1, K):
        mine = fit.difference_interval(m, 0)
        assert mine == pytest.approx((lo[m - 1], hi_[m - 1]), abs=PPI_PY_TOLERANCE)


def test_people_only_matches_ppi_py_with_lambda_zero():
    rng = np.random.default_rng(6)
    hi, hj, hy = _comparisons(rng, 400)
    fit = ppi_bradley_terry(K, (hi, hj, hy), alpha=0.2)
    X = bt_design(hi, hj, np.arange(1, K))
    lo, hi_ = ppi_logistic_ci(X, hy, np.zeros(hy.size), X, np.zeros(hy.size), alpha=0.2, lam=0)
    assert fit.method == "classical" and fit.lam == 0
    for m in range(1, K):
        assert fit.difference_interval(m, 0) == pytest.approx((lo[m - 1], hi_[m - 1]), abs=PPI_PY_TOLERANCE)


def test_a_tie_counts_as_half_a_win():
    rng = np.random.default_rng(8)
    hi, hj, hy = _comparisons(rng, 300)
    hy[::5] = 0.5
    with_ties = ppi_bradley_terry(K, (hi, hj, hy))
    # the same likelihood: every label twice, a tie as one win and one loss
    tie = hy == 0.5
    i2 = np.concatenate([hi, hi[~tie], hi[tie]])
    j2 = np.concatenate([hj, hj[~tie], hj[tie]])
    y2 = np.concatenate([np.where(tie, 1.0, hy), hy[~tie], np.zeros(int(tie.sum()))])
    doubled = ppi_bradley_terry(K, (i2, j2, y2))
    np.testing.assert_allclose(with_ties.scores, doubled.scores, atol=1e-5)


def test_judge_ties_enter_as_half_outcomes():
    rng = np.random.default_rng(9)
    hi, hj, hy = _comparisons(rng, 300)
    yhat = _biased_judge(rng, hi, hj, hy)
    yhat[::4] = 0.5
    ui, uj, uy = _comparisons(rng, 2000)
    uhat = _biased_judge(rng, ui, uj, uy)
    uhat[::4] = 0.5
    fit = ppi_bradley_terry(K, (hi, hj, hy), (hi, hj, yhat), (ui, uj, uhat))
    assert np.all(np.isfinite(fit.scores))


def test_a_model_no_person_compared_is_unranked_and_the_rest_still_ranked():
    rng = np.random.default_rng(10)
    hi, hj, hy = _comparisons(rng, 300)
    keep = (hi != 3) & (hj != 3)
    hi, hj, hy = hi[keep], hj[keep], hy[keep]
    ui, uj, uy = _comparisons(rng, 2000)  # the judge did compare model 3
    fit = ppi_bradley_terry(K, (hi, hj, hy), (hi, hj, _biased_judge(rng, hi, hj, hy)), (ui, uj, _biased_judge(rng, ui, uj, uy)))
    assert math.isnan(fit.scores[3]) and not fit.identified[3]
    assert fit.rank_sets[3] == (1, K)
    assert fit.difference_interval(3, 0) == (-math.inf, math.inf)
    assert np.all(np.isfinite(np.delete(fit.scores, 3)))
    assert abs(np.nansum(fit.scores)) < 1e-9  # centred over the ranked models
    # a ranked model's worst rank leaves room for the unranked one
    assert all(worst >= best for best, worst in fit.rank_sets)


def test_judge_paired_must_be_the_human_comparisons():
    rng = np.random.default_rng(12)
    hi, hj, hy = _comparisons(rng, 50)
    with pytest.raises(ValueError, match="same order"):
        ppi_bradley_terry(K, (hi, hj, hy), (hj, hi, hy), (hi, hj, hy))
    with pytest.raises(ValueError, match="outside"):
        ppi_bradley_terry(K, (hi, hj + K, hy))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ppi_bradley_terry(K, (hi, hj, hy * 2))


def test_the_budget_planner_asks_more_labels_for_closer_models():
    rng = np.random.default_rng(13)
    hi, hj, hy = _comparisons(rng, 200)
    ui, uj, uy = _comparisons(rng, 3000)
    fit = ppi_bradley_terry(K, (hi, hj, hy), (hi, hj, _biased_judge(rng, hi, hj, hy)), (ui, uj, _biased_judge(rng, ui, uj, uy)))
    far = labels_to_separate(fit, 0, K - 1)
    near = labels_to_separate(fit, 0, 1)
    assert far.labels_needed is not None
    assert near.labels_needed is None or near.labels_needed > far.labels_needed
    assert len(board_budget(fit)) == K - 1


def test_planned_labels_do_separate_the_pair_in_simulation():
    # plan on one draw, then draw that many labels again: the pair is separated about `power` of the time
    rng = np.random.default_rng(14)
    hi, hj, hy = _comparisons(rng, 150)
    plan = labels_to_separate(ppi_bradley_terry(K, (hi, hj, hy)), 0, K - 1, power=0.8)
    assert plan.labels_needed is not None
    separated = []
    for _ in range(30):
        i, j, y = _comparisons(rng, plan.labels_needed)
        lo, _ = ppi_bradley_terry(K, (i, j, y)).difference_interval(0, K - 1)
        separated.append(lo > 0)
    assert 0.5 <= np.mean(separated)


# --- means ----------------------------------------------------------------------------------------

GROUPS = 4
TRUE_MEANS = np.array([0.2, 0.4, 0.6, 0.8])


def _mean_data(rng, n_per, useful=True):
    g = np.repeat(np.arange(GROUPS), n_per)
    y = (rng.random(g.size) < TRUE_MEANS[g]).astype(float)
    if useful:  # agrees 75 % of the time, otherwise says the opposite
        yhat = np.where(rng.random(g.size) < 0.75, y, 1 - y)
    else:
        yhat = (rng.random(g.size) < 0.5).astype(float)
    return g, y, yhat


def test_calibrated_means_cover_and_are_narrower():
    rng = np.random.default_rng(21)
    hits, ratio = [], []
    for _ in range(80):
        g, y, yhat = _mean_data(rng, 60)
        ug, _, uhat = _mean_data(rng, 1500)
        fit = ppi_means(GROUPS, (g, y), (g, yhat), (ug, uhat), alpha=0.1)
        people = ppi_means(GROUPS, (g, y), alpha=0.1)
        for k in range(GROUPS):
            lo, hi = fit.intervals[k]
            hits.append(lo <= TRUE_MEANS[k] <= hi)
            ratio.append((hi - lo) / np.subtract(*people.intervals[k][::-1]))
    assert np.mean(hits) >= COVERAGE_FLOOR
    assert np.mean(ratio) < 0.9


def test_a_useless_judge_never_widens_the_means():
    rng = np.random.default_rng(31)
    hits = []
    for _ in range(25):
        g, y, yhat = _mean_data(rng, 60, useful=False)
        ug, _, uhat = _mean_data(rng, 1500, useful=False)
        fit = ppi_means(GROUPS, (g, y), (g, yhat), (ug, uhat), alpha=0.1)
        people = ppi_means(GROUPS, (g, y), alpha=0.1)
        for k in range(GROUPS):
            (lo, hi), (plo, phi) = fit.intervals[k], people.intervals[k]
            assert hi - lo <= (phi - plo) * (1 + 1e-9)
            assert fit.effective_human_n[k] >= people.n_human[k] * (1 - 1e-9)
            hits.append(lo <= TRUE_MEANS[k] <= hi)
    assert np.mean(hits) >= COVERAGE_FLOOR


def test_means_match_ppi_mean_ci_called_directly():
    rng = np.random.default_rng(22)
    g, y, yhat = _mean_data(rng, 80)
    ug, _, uhat = _mean_data(rng, 1000)
    fit = ppi_means(GROUPS, (g, y), (g, yhat), (ug, uhat), alpha=0.1)
    for k in range(GROUPS):
        lo, hi = ppi_mean_ci(y[g == k], yhat[g == k], uhat[ug == k], alpha=0.1)
        assert fit.intervals[k] == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)


def test_a_group_without_human_labels_has_no_mean():
    rng = np.random.default_rng(23)
    g, y, yhat = _mean_data(rng, 40)
    keep = g != 2
    fit = ppi_means(GROUPS, (g[keep], y[keep]), (g[keep], yhat[keep]), (g, yhat))
    assert math.isnan(fit.estimates[2]) and fit.intervals[2] == (-math.inf, math.inf)


def test_a_judge_that_never_varies_gives_lambda_zero_not_nan():
    # the EASEL canvas-similarity demo: one agent whose canvas S ranks first on every pair, so S's sign
    # is 1 on every labelled and unlabelled pair; ppi_py's power-tuned λ is then 0/0. A constant
    # prediction carries no information: λ = 0 (the people's mean), never NaN (the page showed "nan",
    # the API answered 500 on the non-finite float)
    y = np.array([1.0, 1.0, 0.5, 1.0, 0.0, 1.0])
    g = np.zeros(y.size, int)
    fit = ppi_means(1, (g, y), (g, np.ones(y.size)), (np.zeros(40, int), np.ones(40)), alpha=0.1)
    people = ppi_means(1, (g, y), alpha=0.1)
    assert fit.lam[0] == 0.0
    assert fit.estimates[0] == pytest.approx(y.mean())
    assert fit.intervals[0] == pytest.approx(people.intervals[0])
    assert math.isfinite(fit.effective_human_n[0])


def test_a_judge_whose_correction_diverges_falls_back_to_the_people():
    # judge labels of the unlabelled set unlike those of the labelled set: the λ = 1 loss has no minimum
    rng = np.random.default_rng(15)
    hi, hj, hy = _comparisons(rng, 200)
    ui, uj, uy = _comparisons(rng, 2000)
    fit = ppi_bradley_terry(K, (hi, hj, hy), (hi, hj, 1 - hy), (ui, uj, uy))
    people = ppi_bradley_terry(K, (hi, hj, hy))
    assert fit.lam == 0.0
    np.testing.assert_allclose(fit.scores, people.scores)


def test_a_share_of_annotators_weighs_as_that_many_wins():
    rng = np.random.default_rng(16)
    hi, hj, hy = _comparisons(rng, 300)
    share = np.where(rng.random(hy.size) < 0.3, 2 / 3, hy)  # some items: two of three annotators chose i
    fit = ppi_bradley_terry(K, (hi, hj, share))
    # the same likelihood: every item three times, the 2/3 items as two wins and one loss
    part = (share > 0) & (share < 1)
    i3 = np.concatenate([np.repeat(hi[~part], 3), np.repeat(hi[part], 3)])
    j3 = np.concatenate([np.repeat(hj[~part], 3), np.repeat(hj[part], 3)])
    y3 = np.concatenate([np.repeat(share[~part], 3), np.tile([1.0, 1.0, 0.0], int(part.sum()))])
    np.testing.assert_allclose(fit.scores, ppi_bradley_terry(K, (i3, j3, y3)).scores, atol=1e-5)


def test_all_tie_labels_are_refused_not_reported_as_certain():
    # every person answered "tie": the fit is θ = 0 and the sandwich variance is 0 (every gradient is 0), so the
    # board showed 0.00 [0.00, 0.00] for every model and ranked them 1..K by index
    rng = np.random.default_rng(17)
    hi, hj, _ = _comparisons(rng, 200)
    ties = np.full(hi.size, 0.5)
    ui, uj, uy = _comparisons(rng, 2000)
    with pytest.raises(ValueError, match="every comparison is a tie"):
        ppi_bradley_terry(K, (hi, hj, ties))
    with pytest.raises(ValueError, match="every comparison is a tie"):
        ppi_bradley_terry(K, (hi, hj, ties), (hi, hj, _biased_judge(rng, hi, hj, ties)), (ui, uj, uy))
    # one decisive label among the ties is data: a fit with intervals of positive width
    ties[0] = 1.0 - float(hi[0] > hj[0])
    fit = ppi_bradley_terry(K, (hi, hj, ties))
    assert fit.difference_interval(hi[0], hj[0])[1] > fit.difference_interval(hi[0], hj[0])[0]


def test_a_judge_unlike_on_the_unlabelled_items_never_widens_a_mean():
    # the rater's scores vary on the rated items but are nearly constant on the rest: ppi_py's tuned λ (from the
    # pooled variance of the rater's scores) comes out 1 and its interval is [-5.8, 22.8] for ratings of 1..5,
    # twenty times the people's own [2.3, 3.7]. As for Bradley–Terry, λ = 0 is a candidate and wins then
    y = np.array([1.0, 2, 3, 4, 5, 1, 2, 3, 4, 5])
    rater = np.array([10.0, 50, 40, 90, 80, 30, 20, 70, 60, 100])
    unrated = np.array([60.0, 61] * 200)
    g = np.zeros(y.size, int)
    fit = ppi_means(1, (g, y), (g, rater), (np.zeros(unrated.size, int), unrated), alpha=0.1)
    people = ppi_means(1, (g, y), alpha=0.1)
    lo, hi = ppi_mean_ci(y, rater, unrated, alpha=0.1)
    assert hi[0] - lo[0] > 10 * (people.intervals[0][1] - people.intervals[0][0])  # what ppi_py gives
    assert fit.intervals[0] == pytest.approx(people.intervals[0])
    assert fit.lam[0] == 0.0 and fit.estimates[0] == pytest.approx(y.mean())
    assert fit.effective_human_n[0] == pytest.approx(y.size)


def test_a_group_whose_people_all_agree_has_no_interval_of_width_zero():
    # five people's preference all 1 (or every rating the same): the CLT interval has width 0, [1.00, 1.00],
    # a certainty five labels do not give. The mean is kept; the interval is not defined (infinite: None on pages)
    g = np.array([0] * 5 + [1] * 6)
    y = np.array([1.0] * 5 + [0, 1, 0, 1, 1, 0])
    judge = np.array([1.0, 1, 0, 1, 1] + [0, 1, 1, 1, 0, 0])
    ug = np.array([0] * 50 + [1] * 50)
    uy = np.tile([1.0, 0.0], 50)
    for fit in (ppi_means(2, (g, y), alpha=0.1), ppi_means(2, (g, y), (g, judge), (ug, uy), alpha=0.1)):
        assert fit.estimates[0] == 1.0 and fit.intervals[0] == (-math.inf, math.inf) and fit.lam[0] == 0.0
        assert math.isfinite(fit.intervals[1][0]) and fit.intervals[1][1] > fit.intervals[1][0]


def test_means_refuse_values_that_are_not_finite_or_do_not_line_up():
    # a NaN or an infinite value gave NaN estimates, intervals and λ without a word (a NaN λ is a 500 in the
    # JSON API); groups and values of different lengths an IndexError
    g = np.zeros(5, int)
    y = np.array([1.0, 0, 1, 1, 0])
    u = np.zeros(9, int)
    with pytest.raises(ValueError, match="finite"):
        ppi_means(1, (g, np.array([1.0, 0, np.nan, 1, 0])))
    with pytest.raises(ValueError, match="finite"):
        ppi_means(1, (g, y), (g, np.array([1.0, np.nan, 1, 0, 0])), (u, np.full(9, 0.5)))
    with pytest.raises(ValueError, match="finite"):
        ppi_means(1, (g, y), (g, y), (u, np.r_[np.ones(8), np.inf]))
    with pytest.raises(ValueError, match="one length"):
        ppi_means(1, (g, y[:3]))
    with pytest.raises(ValueError, match="one length"):
        ppi_means(1, (g, y), (g, y), (u, np.ones(4)))


def test_a_model_or_group_index_that_is_no_whole_number_is_refused():
    # 1.7 was truncated to model 1 without a word
    i, j, y = np.array([0, 1.7, 2]), np.array([1, 2, 0]), np.array([1.0, 0, 1])
    with pytest.raises(ValueError, match="whole number"):
        ppi_bradley_terry(3, (i, j, y))
    with pytest.raises(ValueError, match="whole number"):
        ppi_means(3, (np.array([0, 0.5, 1]), y))


@pytest.mark.parametrize("outcomes", [[0.5, 0.5, 0.5], [2 / 3]], ids=["three ties", "one item split 2:1"])
def test_a_model_only_a_spreadless_pair_links_is_unranked_not_certain(outcomes):
    # model 0's only items are against model 1 and all have one outcome strictly between 0 and 1: the fit sets
    # θ_0 − θ_1 = logit(y) with no residual, so the sandwich gave that difference a width-0 interval (±5e-7 for the
    # three ties), and an exact 0 made the max-statistic critical value 1e142 and every rank-set [1, K]
    rng = np.random.default_rng(21)
    hi, hj, hy = _comparisons(rng, N_HUMAN)
    others = (hi != 0) & (hj != 0)
    hi, hj, hy = hi[others], hj[others], hy[others]
    lone = len(outcomes)
    with_lone = ppi_bradley_terry(K, (np.r_[[0] * lone, hi], np.r_[[1] * lone, hj], np.r_[outcomes, hy]))
    without = ppi_bradley_terry(K, (hi, hj, hy))
    assert not with_lone.identified[0] and math.isnan(with_lone.scores[0])
    assert with_lone.difference_interval(0, 1) == (-math.inf, math.inf)
    assert with_lone.rank_sets == without.rank_sets
    np.testing.assert_allclose(with_lone.scores[1:], without.scores[1:], atol=1e-9)


def test_the_smallest_board_linked_by_ties_alone_ranks_the_decisive_pair():
    # 0 ties 1 twice; 1 and 2 beat each other once: only 1 and 2 can be given intervals (was: 0.00 [0.00, 0.00]
    # for θ_0 − θ_1 and a critical value of 1.8e142)
    fit = ppi_bradley_terry(3, ([0, 0, 1, 1], [1, 1, 2, 2], [0.5, 0.5, 1.0, 0.0]))
    assert fit.identified.tolist() == [False, True, True]
    assert fit.critical_value == pytest.approx(1.6448536, abs=1e-6)  # one pair: z at 1 − α/2
    assert fit.difference_interval(0, 1) == (-math.inf, math.inf)


def test_a_split_pair_on_a_cycle_still_links():
    # one 2:1 item per pair of a triangle: no pair is a bridge, the residuals around the cycle give the spread
    fit = ppi_bradley_terry(3, ([0, 1, 0, 0], [1, 2, 2, 1], [2 / 3, 2 / 3, 1 / 3, 1.0]))
    assert fit.identified.all()
    lo, hi = fit.difference_interval(0, 1)
    assert hi - lo > 0.1


def test_a_pair_without_variance_adds_nothing_to_the_simultaneous_critical_value():
    # Z_0 = Z_1 (their difference's variance is 0 but for rounding): that pair's statistic is 0, so c is the one
    # remaining pair's marginal z (Z_0 − Z_2 = Z_1 − Z_2). Its rounding noise over a floor of 1e-150 gave 3e141.
    cov = np.array([[8.0, 8, -16], [8, 8, -16], [-16, -16, 32]]) / 27
    assert simultaneous_critical_value(cov, 0.1) == pytest.approx(1.6448536, abs=0.03)
    assert simultaneous_critical_value(np.zeros((3, 3)), 0.1) == pytest.approx(1.6448536, abs=1e-6)


@pytest.mark.parametrize("alpha", [0.2, 0.1, 0.01, 1e-3, 1e-4, 1e-6])
def test_the_simultaneous_critical_value_lies_between_one_pairs_z_and_bonferronis(alpha):
    # the max over three pairs is at least one pair's |Z| and at most Bonferroni's; at α = 1e-6 the Monte Carlo
    # quantile of 20,000 draws gave 4.16, below one pair's 4.89: rank-sets narrower than a single test's
    for k in (3, 5):
        pairs = k * (k - 1) / 2
        c = simultaneous_critical_value(np.eye(k), alpha)
        assert norm.ppf(1 - alpha / 2) <= c <= norm.ppf(1 - alpha / (2 * pairs)) + 1e-12
    fit = ppi_bradley_terry(3, ([0, 1, 2, 1, 2, 0], [1, 2, 0, 0, 1, 2], [1.0, 1, 1, 1, 0, 0]), alpha=alpha)
    assert fit.critical_value >= norm.ppf(1 - alpha / 2)
