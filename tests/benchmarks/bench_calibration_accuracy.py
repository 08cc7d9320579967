"""Benchmark: the calibrated estimators (issue 24) against independent computations, and their coverage.

1. Against ``ppi_py`` called directly, as its documentation calls it: for ``--cases`` random, realistic
   data sets (2–8 models with random skills, 60–600 human labels, 200–6,000 judge-only comparisons, a
   judge agreeing with people 50–95 % of the time and otherwise preferring the weaker model, α of 0.05,
   0.1 or 0.2), :func:`engine.calibration.ppi_bradley_terry`'s difference intervals θ_m − θ_0 against
   ``ppi_logistic_ci`` on the ±1 design (model 0 the reference), and :func:`~engine.calibration.ppi_means`
   against ``ppi_mean_ci`` per group. Printed: the largest |difference| over the cases where both use
   ppi_py's tuned λ, and how many cases the engine answers differently on purpose (the tuned λ would make
   the board wider than people only, so λ = 0; a group whose people all gave one value has no interval).
2. The people-only fit (ties as ½) against statsmodels' binomial GLM on the same design (point estimate;
   standard errors against HC0 × n/(n − 1), ppi_py's ``np.cov`` normalisation) and against ``choix``'s
   maximum-likelihood BT (decisive labels only); the style-controlled fit against the GLM with the same
   covariates.
3. Coverage by simulation, at the page's level (90 %): repeated data sets from known BT skills with the
   75 % judge above; the share of true differences inside the marginal intervals, of data sets whose
   every difference lies inside the simultaneous intervals, and of data sets whose true ranking lies in
   every rank-set; people only beside it. Two designs: plenty of labels (6 models, 300 human, 4,000
   judge) and few (8 models, 120 human, ~4 per pair, 5,000 judge). Means: 4 groups, 60 binary human
   values each, 1,500 judge values, the same judge.

Run: ``.venv/bin/python -m tests.benchmarks.bench_calibration_accuracy [--cases 60] [--draws 300]``
(under a minute on the shared 2-core machine).
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from engine.calibration import bt_design, ppi_bradley_terry, ppi_means


def _draw(rng, theta, m):
    k = theta.size
    i = rng.integers(0, k, m)
    j = (i + rng.integers(1, k, m)) % k
    return i, j, (rng.random(m) < expit(theta[i] - theta[j])).astype(float)


def _judge(rng, theta, i, j, y, accuracy=0.75):
    weaker_is_i = (theta[i] < theta[j]).astype(float)
    return np.where(rng.random(y.size) < accuracy, y, weaker_is_i)


def against_ppi_py(cases: int, seed: int = 0) -> None:
    from ppi_py import ppi_logistic_ci, ppi_mean_ci

    rng = np.random.default_rng(seed)
    worst, same, differ = 0.0, 0, 0
    for _ in range(cases):
        k = int(rng.integers(2, 9))
        theta = rng.normal(0, 0.8, k)
        accuracy, alpha = rng.uniform(0.5, 0.95), float(rng.choice([0.05, 0.1, 0.2]))
        hi, hj, hy = _draw(rng, theta, int(rng.integers(60, 600)))
        ui, uj, uy = _draw(rng, theta, int(rng.integers(200, 6000)))
        yhat, uhat = _judge(rng, theta, hi, hj, hy, accuracy), _judge(rng, theta, ui, uj, uy, accuracy)
        fit = ppi_bradley_terry(k, (hi, hj, hy), (hi, hj, yhat), (ui, uj, uhat), alpha=alpha)
        if not fit.identified.all():
            continue
        columns = np.arange(1, k)
        lo, hi_ = ppi_logistic_ci(bt_design(hi, hj, columns), hy, yhat, bt_design(ui, uj, columns), uhat, alpha=alpha)
        mine = np.array([fit.difference_interval(m, 0) for m in range(1, k)])
        gap = float(np.max(np.abs(mine - np.column_stack([lo, hi_]))))
        if fit.lam == 0 and gap > 1e-4:
            differ += 1  # the tuned λ widened the board: the people's own fit (see engine.calibration)
        else:
            same += 1
            worst = max(worst, gap)
    print(f"ppi_bradley_terry vs ppi_logistic_ci: max |Δ interval end| {worst:.1e} over {same} cases; "
          f"{differ} cases λ = 0 on purpose (tuned λ would widen the board)")

    worst, same, differ = 0.0, 0, 0
    for _ in range(cases):
        groups = int(rng.integers(1, 6))
        mu = rng.uniform(0.1, 0.9, groups)
        n, big_n = int(rng.integers(10, 200)), int(rng.integers(50, 3000))
        g, ug = rng.integers(0, groups, n), rng.integers(0, groups, big_n)
        y = (rng.random(n) < mu[g]).astype(float)
        uy = (rng.random(big_n) < mu[ug]).astype(float)
        accuracy = rng.uniform(0.5, 0.95)
        yhat = np.where(rng.random(n) < accuracy, y, 1 - y)
        uhat = np.where(rng.random(big_n) < accuracy, uy, 1 - uy)
        fit = ppi_means(groups, (g, y), (g, yhat), (ug, uhat), alpha=0.1)
        for k in range(groups):
            if (g == k).sum() < 2 or (ug == k).sum() < 2:
                continue
            lo, hi_ = ppi_mean_ci(y[g == k], yhat[g == k], uhat[ug == k], alpha=0.1)
            gap = max(abs(fit.intervals[k][0] - lo[0]), abs(fit.intervals[k][1] - hi_[0]))
            if not math.isfinite(gap) or gap > 1e-9:
                differ += 1  # λ = 0 (narrower) or the people all agreed (no interval)
            else:
                same += 1
                worst = max(worst, gap)
    print(f"ppi_means vs ppi_mean_ci: max |Δ interval end| {worst:.1e} over {same} groups; "
          f"{differ} groups answered differently on purpose")


def against_glm(seed: int = 4) -> None:
    import choix
    import statsmodels.api as sm

    from engine.style_control import style_controlled_bradley_terry

    rng = np.random.default_rng(seed)
    beta_gap = se_gap = choix_gap = 0.0
    fits = 0
    for _ in range(40):
        k = int(rng.integers(2, 9))
        theta = rng.normal(0, 0.8, k)
        n = int(rng.integers(80, 800))
        i, j, y = _draw(rng, theta, n)
        y[rng.random(n) < 0.15] = 0.5
        fit = ppi_bradley_terry(k, (i, j, y))
        if not fit.identified.all():
            continue
        fits += 1
        glm = sm.GLM(y, bt_design(i, j, np.arange(1, k)), family=sm.families.Binomial()).fit(cov_type="HC0")
        beta_gap = max(beta_gap, float(np.max(np.abs((fit.scores[1:] - fit.scores[0]) - glm.params))))
        se = np.sqrt(np.diag(glm.cov_params()) * n / (n - 1))
        z = norm.ppf(1 - fit.alpha / 2)
        mine = np.array([np.subtract(*fit.difference_interval(m, 0)[::-1]) / (2 * z) for m in range(1, k)])
        se_gap = max(se_gap, float(np.max(np.abs(mine / se - 1))))
        decisive = y != 0.5
        plain = ppi_bradley_terry(k, (i[decisive], j[decisive], y[decisive]))
        if plain.identified.all():
            wins = [(a, b) if w == 1 else (b, a) for a, b, w in zip(i[decisive], j[decisive], y[decisive])]
            p = choix.opt_pairwise(k, wins, alpha=0, method="Newton-CG")
            choix_gap = max(choix_gap, float(np.max(np.abs((p - p.mean()) - plain.scores))))
    print(f"people-only BT vs statsmodels GLM over {fits} fits with ties: max |Δβ| {beta_gap:.1e}, "
          f"max relative |Δse| {se_gap:.1e}; vs choix (decisive labels): max |Δθ| {choix_gap:.1e}")

    gap = 0.0
    for _ in range(20):
        k = int(rng.integers(3, 8))
        theta = rng.normal(0, 0.6, k)
        n = int(rng.integers(300, 2000))
        i = rng.integers(0, k, n)
        j = (i + rng.integers(1, k, n)) % k
        li, lj = rng.normal(500, 150, n).clip(50), rng.normal(500, 150, n).clip(50)
        z = (li - lj) / (li + lj)
        y = (rng.random(n) < expit(theta[i] - theta[j] + 1.5 * z)).astype(float)
        y[rng.random(n) < 0.1] = 0.5
        fit = style_controlled_bradley_terry(k, i, j, y, {"length": li}, {"length": lj}, n_bootstrap=0)
        X = np.hstack([bt_design(i, j, np.arange(1, k)), (z / z.std())[:, None]])
        b = sm.GLM(y, X, family=sm.families.Binomial()).fit().params
        th = np.concatenate([[0.0], b[:k - 1]])
        gap = max(gap, float(np.max(np.abs(th - th.mean() - fit.scores))), abs(b[-1] - fit.coefficients["length"][0]))
    print(f"style-controlled BT vs statsmodels GLM with the covariate, 20 fits: max |Δ| of θ and γ {gap:.1e} "
          "(the fit's 1e-4 ridge and L-BFGS tolerance)")


def bt_coverage(k: int, n: int, big_n: int, draws: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    theta = np.linspace(1.0, -1.0, k)
    a, b = np.triu_indices(k, 1)
    z = norm.ppf(0.95)
    marginal = {"calibrated": 0.0, "people": 0.0}
    simultaneous = {"calibrated": 0, "people": 0}
    rank_sets = {"calibrated": 0, "people": 0}
    true_rank = np.arange(1, k + 1)
    lams = []
    t0 = time.perf_counter()
    for _ in range(draws):
        hi, hj, hy = _draw(rng, theta, n)
        ui, uj, uy = _draw(rng, theta, big_n)
        fits = {"calibrated": ppi_bradley_terry(k, (hi, hj, hy), (hi, hj, _judge(rng, theta, hi, hj, hy)),
                                                (ui, uj, _judge(rng, theta, ui, uj, uy)), alpha=0.1),
                "people": ppi_bradley_terry(k, (hi, hj, hy), alpha=0.1)}
        lams.append(fits["calibrated"].lam)
        for name, fit in fits.items():
            sd = np.sqrt(fit.cov[a, a] + fit.cov[b, b] - 2 * fit.cov[a, b])
            err = np.abs(fit.scores[a] - fit.scores[b] - (theta[a] - theta[b])) / sd
            marginal[name] += float(np.mean(err <= z))
            simultaneous[name] += bool(np.all(err <= fit.critical_value))
            rank_sets[name] += all(lo <= r <= hi_ for r, (lo, hi_) in zip(true_rank, fit.rank_sets))
    print(f"BT coverage at 90 %, {k} models, {n} human labels, {big_n} judge-only, {draws} data sets "
          f"(mean λ {np.mean(lams):.2f}, {time.perf_counter() - t0:.0f} s):")
    for name in ("calibrated", "people"):
        print(f"  {name:10s}: marginal {marginal[name] / draws:.3f}, simultaneous {simultaneous[name] / draws:.3f}, "
              f"rank-sets {rank_sets[name] / draws:.3f}")


def means_coverage(draws: int, seed: int = 9) -> None:
    rng = np.random.default_rng(seed)
    mu = np.array([0.2, 0.4, 0.6, 0.8])
    hits = {"calibrated": 0, "people": 0}
    widths = []
    g, ug = np.repeat(np.arange(4), 60), np.repeat(np.arange(4), 1500)
    for _ in range(draws):
        y, uy = (rng.random(g.size) < mu[g]).astype(float), (rng.random(ug.size) < mu[ug]).astype(float)
        yhat = np.where(rng.random(g.size) < 0.75, y, 1 - y)
        uhat = np.where(rng.random(ug.size) < 0.75, uy, 1 - uy)
        fit, people = ppi_means(4, (g, y), (g, yhat), (ug, uhat), alpha=0.1), ppi_means(4, (g, y), alpha=0.1)
        for k in range(4):
            hits["calibrated"] += fit.intervals[k][0] <= mu[k] <= fit.intervals[k][1]
            hits["people"] += people.intervals[k][0] <= mu[k] <= people.intervals[k][1]
            widths.append((fit.intervals[k][1] - fit.intervals[k][0]) / (people.intervals[k][1] - people.intervals[k][0]))
    print(f"means coverage at 90 %, 4 groups × 60 human + 1,500 judge values, {draws} data sets: calibrated "
          f"{hits['calibrated'] / (4 * draws):.3f}, people {hits['people'] / (4 * draws):.3f}; mean width ratio "
          f"{np.mean(widths):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=60)
    parser.add_argument("--draws", type=int, default=300)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # ppi_py's scikit-learn start fit warns of a deprecated argument per call
    against_ppi_py(args.cases)
    against_glm()
    bt_coverage(6, 300, 4000, args.draws, seed=1)
    bt_coverage(8, 120, 5000, args.draws, seed=2)
    means_coverage(args.draws)


if __name__ == "__main__":
    main()
