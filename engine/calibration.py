"""Human-calibrated rankings: prediction-powered Bradley–Terry and means (PPI++), with simultaneous
rank-sets and a label budget planner.

Model. Human pairwise labels ``(i, j, y)`` (y = 1: i preferred, 0: j, 0.5: a tie) on ``n`` comparisons,
the judge's outcome ``ŷ`` on the same ``n`` comparisons, and the judge's outcome ``ỹ`` on ``N`` more
comparisons nobody labelled. Bradley–Terry is a logistic regression without intercept on the design
row ``x`` with ``x_i = +1``, ``x_j = −1`` (one model's column dropped: the reference, θ = 0)::

    P(i ≻ j) = σ(θ_i − θ_j) = σ(xᵀβ)                                      (Bradley & Terry 1952)

    β̂_λ = argmin_β  λ/N Σ_unl ℓ(β; x̃, ỹ) − λ/n Σ_lab ℓ(β; x, ŷ) + 1/n Σ_lab ℓ(β; x, y)   (PPI++, ADZ 2023 eq. 4)

    Cov(β̂_λ) = H⁻¹ [ Var(∇ℓ_y − λ∇ℓ_ŷ)/n + λ² Var(∇ℓ_ỹ)/N ] H⁻¹          (PPI++ Thm 1, the sandwich)

λ is power-tuned (ADZ 2023 §2.2) and clipped to [0, 1]: λ = 0 is the classical human-only fit, so a
useless judge cannot make the intervals wider than the people's own (up to the estimate of λ).
The point estimate and λ are ``ppi_py``'s (``ppi_logistic_pointestimate``, ``_calc_lam_glm``: the
pieces ``ppi_logistic_ci`` is made of); the sandwich is ``ppi_logistic_ci``'s formula, kept whole
(``ppi_logistic_ci`` returns only its diagonal) for differences and rank-sets, and vectorised over
identical judge rows (a BT row depends only on the pair: 50,000 judge comparisons of 20 models are
at most 570 distinct rows, passed to ppi_py as weights). tests/engine/test_calibration.py checks the
intervals against ``ppi_logistic_ci`` called directly on the unaggregated rows.

Ties. ppi_py's logistic fit starts from scikit-learn's classifier, which refuses y = 0.5; for the
point estimate a human tie (or any fractional y, e.g. the share of annotators preferring i) enters as
two rows, y = 1 with weight y and y = 0 with weight 1 − y, whose loss and gradient are exactly those
of the outcome y. The variance is computed per observation with the outcome y itself. Judge ties
(ŷ = 0.5, or the mean of several verdicts) enter as they are.

Rank-sets (Chatzi et al. 2024, "Prediction-Powered Ranking of LLMs", NeurIPS): model ``i`` is ranked
above ``j`` when the *simultaneous* interval for θ_i − θ_j lies above 0. The simultaneous level uses
the max-statistic over all pairs (the 1 − α quantile of max |Z_i − Z_j| / sd_ij for Z ~ N(0, Cov),
Monte Carlo with a fixed seed) — less conservative than Bonferroni, exact for the Gaussian limit.
Then rank-set(i) = [1 + #{j above i}, K − #{j below i}]; all K rank-sets cover the true order
together with probability ≥ 1 − α (asymptotically). Chatzi et al. build the region from per-model
win-rate intervals; pairwise differences give rank-sets at least as narrow for the same level.

Identifiability. The plain BT estimate exists only on a strongly connected "i beat j" graph (Ford
1957). Models outside the largest strongly connected component of the *human* comparisons (e.g.
models no person compared) get no score, an infinite interval and the full rank-set [1, K]; judge
comparisons involving them are left out, because the judge alone cannot be corrected there. So are
models that only a pair with a single outcome strictly between 0 and 1 (only ties, one split item) links to
the rest: that pair fixes their difference without residual, and the sandwich would give it width 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.stats import norm
from threadpoolctl import threadpool_limits

__all__ = [
    "CalibratedBT",
    "CalibratedMeans",
    "PairBudget",
    "ppi_bradley_terry",
    "ppi_means",
    "bt_design",
    "labels_to_separate",
    "board_budget",
    "identified_models",
    "simultaneous_critical_value",
]

#: Monte Carlo draws for the max-statistic critical value; seeded so a board is reproducible.
MAX_STAT_DRAWS = 20_000
MAX_STAT_SEED = 20240
#: The fewest draws beyond the max-statistic's quantile (α · draws) for its Monte Carlo value; below, Bonferroni.
MAX_STAT_MIN_TAIL_DRAWS = 100
#: Draws per block of the max-statistic (the same draws and result as one block, less memory traffic).
MAX_STAT_CHUNK = 2_000
#: A difference whose variance is below this fraction of the largest score variance has none (rounding only).
ZERO_VARIANCE_RTOL = 1e-12
#: L-BFGS iterations per fit: a convergent BT fit of 20 models needs well under 100.
OPTIMISER_MAX_ITER = 1000
#: |θ| beyond this (odds of e^50) is a diverged fit, not a skill.
MAX_ABS_SKILL = 50.0
#: Power at which the budget planner plans (the usual 80 %).
DEFAULT_POWER = 0.8

Pairs = tuple[Sequence[int], Sequence[int], Sequence[float]]


def _as_pairs(data: Pairs | None, n_models: int, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if data is None:
        return np.zeros(0, int), np.zeros(0, int), np.zeros(0)
    i, j, y = (np.asarray(a) for a in data)
    if not (i.shape == j.shape == y.shape) or i.ndim != 1:
        raise ValueError(f"{what}: i, j and the outcomes must be 1-d arrays of one length")
    i, j, y = _indices(i, what), _indices(j, what), y.astype(float)
    if i.size and (min(i.min(), j.min()) < 0 or max(i.max(), j.max()) >= n_models):
        raise ValueError(f"{what}: a model index is outside 0..{n_models - 1}")
    if np.any(i == j):
        raise ValueError(f"{what}: comparison {int(np.argmax(i == j))} compares a model with itself")
    if np.any((y < 0) | (y > 1)) or np.any(np.isnan(y)):
        raise ValueError(f"{what}: outcomes must lie in [0, 1] (1: i preferred, 0: j, 0.5: a tie)")
    return i, j, y


def _indices(a: np.ndarray, what: str) -> np.ndarray:
    """``a`` as integer indices; a value that is no whole number (1.7, NaN) is refused, never truncated."""
    if a.dtype.kind in "fc" and a.size and not np.all(np.isfinite(a) & (a == np.round(a))):
        raise ValueError(f"{what}: a model or group index is no whole number")
    return a.astype(int)


def bt_design(i: np.ndarray, j: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """The ±1 model-indicator design (x_i = +1, x_j = −1) restricted to ``columns`` (the identified
    models but the reference)."""
    position = np.full(int(max(columns.max(initial=-1), i.max(initial=-1), j.max(initial=-1))) + 1, -1)
    position[columns] = np.arange(columns.size)
    X = np.zeros((i.size, columns.size))
    rows = np.arange(i.size)
    pi, pj = position[i], position[j]
    X[rows[pi >= 0], pi[pi >= 0]] = 1.0
    X[rows[pj >= 0], pj[pj >= 0]] = -1.0
    return X


def identified_models(n_models: int, i: np.ndarray, j: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Largest strongly connected component of the human win graph (a tie is a win both ways):
    where the plain BT estimate exists (Ford 1957)."""
    src = np.concatenate([j[y > 0], i[y < 1]])  # edge loser -> winner (direction does not matter for SCC)
    dst = np.concatenate([i[y > 0], j[y < 1]])
    graph = coo_matrix((np.ones(src.size), (src, dst)), shape=(n_models, n_models))
    _, labels = connected_components(graph, directed=True, connection="strong")
    seen = np.zeros(n_models, bool)
    seen[i] = seen[j] = True
    counts = np.bincount(labels[seen], minlength=labels.max() + 1) if seen.any() else np.zeros(1, int)
    best = int(np.argmax(counts))
    keep = (labels == best) & seen
    return np.flatnonzero(keep) if keep.sum() >= 2 else np.zeros(0, int)


def _oriented(i: np.ndarray, j: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every comparison written with the lower index first (x → −x, y → 1 − y leaves BT unchanged) so
    that both outcomes occur, which scikit-learn's starting fit needs. Returns the flip mask too."""
    flip = i > j
    return np.where(flip, j, i), np.where(flip, i, j), np.where(flip, 1 - y, y), flip


def simultaneous_critical_value(cov: np.ndarray, alpha: float, *, draws: int = MAX_STAT_DRAWS,
                                seed: int = MAX_STAT_SEED) -> float:
    """c with P(max_{i<j} |Z_i − Z_j| / sd(Z_i − Z_j) ≤ c) = 1 − α for Z ~ N(0, cov): the
    max-statistic (Tukey-style) simultaneous critical value over all pairs, kept between one pair's z and
    Bonferroni's over the pairs (its bounds), and Bonferroni's when α · draws < MAX_STAT_MIN_TAIL_DRAWS."""
    k = cov.shape[0]
    if k < 2:
        return float(norm.ppf(1 - alpha / 2))
    if k == 2:
        return float(norm.ppf(1 - alpha / 2))  # one pair: the marginal quantile, exactly
    a, b = np.triu_indices(k, 1)
    var = cov[a, a] + cov[b, b] - 2 * cov[a, b]
    # a pair whose difference has no variance (Z_a = Z_b: its var is 0 up to rounding) adds 0 to the max; it
    # was divided by a floor of 1e-150 instead, so the draws' rounding noise (1e-17) made c 1e141 and every
    # simultaneous interval and rank-set of the board unbounded
    spread = var > ZERO_VARIANCE_RTOL * np.max(np.abs(np.diag(cov)), initial=0.0)
    if not spread.any():
        return float(norm.ppf(1 - alpha / 2))
    a, b = a[spread], b[spread]
    sd = np.sqrt(var[spread])
    # c lies between one pair's quantile and Bonferroni's over the P pairs (max ≥ any one; P(max > c_B) ≤ α).
    # The Monte Carlo quantile rests on the α·draws largest draws: with few of them (α = 1e-6: none) it fell
    # below even the one pair's z (4.16 < 4.89 for three models), so the bound is used instead
    marginal, bonferroni = float(norm.ppf(1 - alpha / 2)), float(norm.ppf(1 - alpha / (2 * a.size)))
    if alpha * draws < MAX_STAT_MIN_TAIL_DRAWS:
        return bonferroni
    rng = np.random.default_rng(seed)
    # draws of Z through the covariance's symmetric square root (cov may be singular: centred scores)
    w, v = np.linalg.eigh(cov)
    root = v * np.sqrt(np.clip(w, 0, None))
    z = rng.standard_normal((draws, k)) @ root.T
    stat = np.empty(draws)
    inv_sd = 1.0 / sd
    for start in range(0, draws, MAX_STAT_CHUNK):  # in chunks that stay in cache, in place
        part = z[start:start + MAX_STAT_CHUNK]
        diff = np.subtract(part[:, a], part[:, b])
        np.abs(diff, out=diff)
        diff *= inv_sd
        stat[start:start + MAX_STAT_CHUNK] = diff.max(axis=1)
    return float(np.clip(np.quantile(stat, 1 - alpha), marginal, bonferroni))


@dataclass
class CalibratedBT:
    """A (prediction-powered or classical) Bradley–Terry fit: centred scores (Σθ = 0 over the
    identified models, Ekphrasis App. F), their covariance, λ, the effective human n and rank-sets."""

    n_models: int
    alpha: float
    scores: np.ndarray  # θ per model, NaN where unidentified
    cov: np.ndarray  # K×K covariance of the scores (NaN rows/columns where unidentified)
    lam: float
    effective_human_n: float
    n_human: int
    n_judge_unpaired: int
    identified: np.ndarray  # bool per model
    critical_value: float  # simultaneous (max-statistic) critical value
    rank_sets: list[tuple[int, int]] = field(default_factory=list)
    method: str = "classical"  # "ppi++" or "classical"
    # the two parts of Cov (per human label / from the judge) for the budget planner
    cov_per_label: np.ndarray | None = None
    cov_judge: np.ndarray | None = None

    def _difference_sd(self, i: int, j: int) -> float:
        c = self.cov
        return math.sqrt(max(c[i, i] + c[j, j] - 2 * c[i, j], 0.0))

    def difference_interval(self, i: int, j: int) -> tuple[float, float]:
        """Marginal 1 − α interval for θ_i − θ_j (infinite when either model is unidentified)."""
        return self._interval(i, j, float(norm.ppf(1 - self.alpha / 2)))

    def simultaneous_difference_interval(self, i: int, j: int) -> tuple[float, float]:
        """θ_i − θ_j at 1 − α simultaneously over all pairs (what the rank-sets are built from)."""
        return self._interval(i, j, self.critical_value)

    def _interval(self, i: int, j: int, z: float) -> tuple[float, float]:
        if not (self.identified[i] and self.identified[j]):
            return (-math.inf, math.inf)
        if i == j:
            return (0.0, 0.0)
        d = float(self.scores[i] - self.scores[j])
        half = z * self._difference_sd(i, j)
        return (d - half, d + half)

    def score_interval(self, i: int) -> tuple[float, float]:
        """Marginal 1 − α interval for the centred score θ_i."""
        if not self.identified[i]:
            return (-math.inf, math.inf)
        half = float(norm.ppf(1 - self.alpha / 2)) * math.sqrt(max(self.cov[i, i], 0.0))
        return (float(self.scores[i]) - half, float(self.scores[i]) + half)

    def rank(self) -> list[int]:
        """1-based rank by score (unidentified models last, in index order)."""
        order = sorted(range(self.n_models), key=lambda m: (not self.identified[m], -np.nan_to_num(self.scores[m]), m))
        out = [0] * self.n_models
        for r, m in enumerate(order, start=1):
            out[m] = r
        return out


def _rank_sets(n_models: int, scores: np.ndarray, cov: np.ndarray, identified: np.ndarray, c: float) -> list[tuple[int, int]]:
    ids = np.flatnonzero(identified)
    sets = [(1, n_models)] * n_models
    if ids.size < 2:
        return sets
    s = scores[ids]
    sub = cov[np.ix_(ids, ids)]
    var = np.diag(sub)
    sd = np.sqrt(np.maximum(var[:, None] + var[None, :] - 2 * sub, 0.0))
    diff = s[:, None] - s[None, :]
    above = diff - c * sd > 0  # above[a, b]: a surely better than b
    np.fill_diagonal(above, False)
    for pos, m in enumerate(ids):
        # Chatzi et al. 2024: rank-set = [1 + #surely better, K − #surely worse]
        sets[m] = (1 + int(above[:, pos].sum()), n_models - int(above[pos, :].sum()))
    return sets


def _aggregate(i: np.ndarray, j: np.ndarray, y: np.ndarray, w: np.ndarray | None = None):
    """Identical (i, j, outcome) rows collapsed to one row with a count: a BT design row depends only
    on the pair, so 50,000 judge comparisons of 20 models are at most 190 × 3 distinct rows."""
    w = np.ones(i.size) if w is None else w
    # one integer key per (i, j, outcome): a 1-d unique (a row-wise unique of 50,000 × 3 floats sorts
    # lexicographically and took most of the board's time)
    outcomes, y_code = np.unique(y, return_inverse=True)
    width = int(max(i.max(initial=0), j.max(initial=0))) + 1
    key = (i.astype(np.int64) * width + j) * outcomes.size + y_code.ravel()
    keys, inverse = np.unique(key, return_inverse=True)
    counts = np.bincount(inverse.ravel(), weights=w)
    pair, code = np.divmod(keys, outcomes.size)
    return (pair // width).astype(int), (pair % width).astype(int), outcomes[code], counts


def _point_estimate(X, Y, Yhat, w, Xu, Yu, wu, lam: float) -> np.ndarray:
    """ppi_py's PPI++ logistic point estimate at a fixed λ (its weights carry the row counts)."""
    from ppi_py import ppi_logistic_pointestimate

    # ppi_py's own ftol; an iteration cap so that a diverging λ = 1 fit (see _Diverged) stops early
    options = {"ftol": 1e-15, "maxiter": OPTIMISER_MAX_ITER}
    beta = np.atleast_1d(ppi_logistic_pointestimate(X, Y, Yhat, Xu, Yu, lam=lam, w=w, w_unlabeled=wu,
                                                    optimizer_options=options))
    if not np.all(np.isfinite(beta)) or np.max(np.abs(beta), initial=0) > MAX_ABS_SKILL:
        raise _Diverged(lam)
    return beta


class _Diverged(ArithmeticError):
    """The rectified loss at this λ has no finite minimum on these data (its correction pushes a
    win rate outside (0, 1)): PPI++ then has nothing to offer and the fit falls back to λ = 0."""


@dataclass
class _Stats:
    """Per-observation gradients and the inverse Hessian, as ppi_py's ``_logistic_get_stats``
    forms them (vectorised here, and with a tie as one observation of outcome ½)."""

    grads: np.ndarray
    grads_hat: np.ndarray
    grads_hat_unlabeled: np.ndarray
    inv_hessian: np.ndarray


def _stats(beta, X1, y1, yhat1, Xu, yu, cu, use_unlabeled: bool) -> _Stats:
    from scipy.special import expit

    mu, mu_u = expit(X1 @ beta), expit(Xu @ beta)
    n, N = y1.size, float(cu.sum())
    # ℓ's gradient x(σ(xᵀβ) − y) per observation; Hessian mean of σ(1 − σ) x xᵀ (ppi_py's normalisation)
    h = (X1 * (mu * (1 - mu))[:, None]).T @ X1
    if use_unlabeled:
        h = (h + (Xu * (cu * mu_u * (1 - mu_u))[:, None]).T @ Xu) / (N + n)
    else:
        h = h / n
    g = X1 * (mu - y1)[:, None]
    gh = X1 * (mu - yhat1)[:, None]
    gu = np.repeat(Xu * (mu_u - yu)[:, None], cu.astype(int), axis=0) if use_unlabeled else np.zeros((2, X1.shape[1]))
    return _Stats(g, gh, gu, np.linalg.inv(h))


def _covariance_parts(s: _Stats, lam: float) -> tuple[np.ndarray, np.ndarray]:
    d = s.inv_hessian.shape[0]
    N = s.grads_hat_unlabeled.shape[0]
    # PPI++ (ADZ 2023, as ppi_logistic_ci): Σ = H⁻¹ (n/N Var(λ∇ℓ̃) + Var(∇ℓ − λ∇ℓ̂)) H⁻¹, Cov = Σ / n
    var_rect = np.cov(s.grads.T - lam * s.grads_hat.T).reshape(d, d)
    var_unl = np.cov(lam * s.grads_hat_unlabeled.T).reshape(d, d)
    per_label = s.inv_hessian @ var_rect @ s.inv_hessian  # over n: the human part
    judge = s.inv_hessian @ var_unl @ s.inv_hessian / N
    return per_label, judge


# The matrices are small (≤ models²): BLAS threads only fight other processes for the cores
# (measured: 2.2 s with the default pool on a loaded 2-core machine, 0.27 s with one thread).
@threadpool_limits.wrap(limits=1)
def ppi_bradley_terry(
    n_models: int,
    human: Pairs,
    judge_paired: Pairs | None = None,
    judge_unpaired: Pairs | None = None,
    alpha: float = 0.1,
) -> CalibratedBT:
    """Prediction-powered Bradley–Terry (Boyeau et al. 2024 "AutoEval Done Right"; PPI++ of
    Angelopoulos, Duchi & Zrnic 2023) with simultaneous rank-sets (Chatzi et al. 2024).

    ``human`` = (i, j, y): y = 1 when i was preferred, 0 when j, 0.5 a tie (any y in [0, 1] is
    accepted, e.g. the share of annotators preferring i); ``judge_paired`` = (i, j, ŷ) on exactly the
    same comparisons in the same order; ``judge_unpaired`` = (i, j, ỹ) on comparisons no person
    labelled. Without judge data (or without unpaired judge data: nothing to borrow strength from)
    this is the classical human-only fit (λ = 0) with the same interface."""
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie in (0, 1)")
    if n_models < 2:
        raise ValueError("n_models must be at least 2")
    hi, hj, hy = _as_pairs(human, n_models, "human")
    pi, pj, py = _as_pairs(judge_paired, n_models, "judge_paired")
    ui, uj, uy = _as_pairs(judge_unpaired, n_models, "judge_unpaired")
    if judge_paired is not None and not (np.array_equal(pi, hi) and np.array_equal(pj, hj)):
        raise ValueError("judge_paired must hold the judge's outcome on the human comparisons, same order and sides")
    if judge_unpaired is not None and judge_paired is None and ui.size:
        raise ValueError("judge_unpaired needs judge_paired: the judge's bias is measured on the human comparisons")
    identified_idx = identified_models(n_models, hi, hj, hy)
    identified = np.zeros(n_models, bool)
    identified[identified_idx] = True
    if identified_idx.size < 2:
        return _unidentified(n_models, alpha, hy.size, ui.size)

    keep = identified[hi] & identified[hj]
    hi, hj, hy = hi[keep], hj[keep], hy[keep]
    yhat = py[keep] if judge_paired is not None else np.zeros(hy.size)
    ukeep = identified[ui] & identified[uj]
    ui, uj, uy = ui[ukeep], uj[ukeep], uy[ukeep]
    calibrated = judge_paired is not None and ui.size >= 2

    hi, hj, hy, flip = _oriented(hi, hj, hy)
    yhat = np.where(flip, 1 - yhat, yhat)
    ui, uj, uy, _ = _oriented(ui, uj, uy)
    _check_outcomes(hy)
    estimable = _without_spreadless_bridges(n_models, hi, hj, hy, identified_idx)
    if estimable.size < identified_idx.size:
        identified[:] = False
        identified[estimable] = True
        identified_idx = estimable
        if identified_idx.size < 2:
            return _unidentified(n_models, alpha, hy.size, ui.size)
        keep = identified[hi] & identified[hj]
        hi, hj, hy, yhat = hi[keep], hj[keep], hy[keep], yhat[keep]
        ukeep = identified[ui] & identified[uj]
        ui, uj, uy = ui[ukeep], uj[ukeep], uy[ukeep]
        calibrated = judge_paired is not None and ui.size >= 2
        _check_outcomes(hy)
    columns = identified_idx[1:]  # the first identified model is the reference (θ = 0 before centring)
    X1 = bt_design(hi, hj, columns)  # one row per human observation (a tie: outcome ½)
    # for ppi_py's fit: a tie (any 0 < y < 1) as two rows, y = 1 weighted y and y = 0 weighted 1 − y
    # (see the module docstring): the same loss and gradient as the outcome y itself
    tie = (hy > 0) & (hy < 1)
    X = np.vstack([X1, X1[tie]])
    Y = np.concatenate([np.where(tie, 1.0, hy), np.zeros(int(tie.sum()))])
    Yhat = np.concatenate([yhat, yhat[tie]])
    w = np.concatenate([np.where(tie, hy, 1.0), 1.0 - hy[tie]])
    if calibrated:
        ai, aj, ay, cu = _aggregate(ui, uj, uy)
        Xu, Yu = bt_design(ai, aj, columns), ay
    else:  # λ = 0: the unlabeled term vanishes (ppi_py still wants rows there)
        Xu, Yu, cu = X1[:2], np.zeros(2), np.ones(2)

    # β (reference = 0) -> centred θ over the identified models: θ = C T β
    k = identified_idx.size
    T = np.zeros((k, k - 1))
    T[1:, :] = np.eye(k - 1)
    C = np.eye(k) - 1.0 / k
    A = C @ T

    from ppi_py.ppi import _calc_lam_glm

    # classical (λ = 0) fit: the human-only view, and the baseline of the effective human n
    beta0 = _point_estimate(X, Y, Yhat, w, Xu, Yu, cu, 0.0)
    per0, judge0 = _covariance_parts(_stats(beta0, X1, hy, yhat, Xu, Yu, cu, False), 0.0)
    n = hy.size
    cov0 = per0 / n
    baseline = cov0
    lam = 0.0
    beta, cov_per, cov_judge = beta0, per0, np.zeros_like(per0)
    if calibrated:
        # as ppi_logistic_ci with lam=None: λ₁ at the λ = 1 estimate (ppi_logistic_pointestimate's
        # tuning), λ at the λ₁ estimate (ppi_logistic_ci's own), each clipped to [0, 1]; then refit
        try:
            beta_at = _point_estimate(X, Y, Yhat, w, Xu, Yu, cu, 1.0)
        except _Diverged:
            # the λ = 1 loss has no finite minimum on a small labelled set (its full correction pushes
            # a win rate outside (0, 1)); λ's formula needs only a consistent estimate of β, and the
            # people's own fit is one: tune there, then refit at the (smaller) tuned λ
            beta_at = beta0
        try:
            for _ in range(2):
                s = _stats(beta_at, X1, hy, yhat, Xu, Yu, cu, True)
                lam = float(_calc_lam_glm(s.grads, s.grads_hat, s.grads_hat_unlabeled, s.inv_hessian, clip=True))
                beta_at = _point_estimate(X, Y, Yhat, w, Xu, Yu, cu, lam)
        except (_Diverged, np.linalg.LinAlgError):
            lam = 0.0
        if lam > 0:
            beta = beta_at
            final = _stats(beta, X1, hy, yhat, Xu, Yu, cu, True)
            cov_per, cov_judge = _covariance_parts(final, lam)
            # the people's own variance with the same (pooled) Hessian: the baseline of the effective n,
            # so that it measures what the judge's verdicts add and not the Hessian's estimate
            baseline = _covariance_parts(final, 0.0)[0] / n
    cov_beta = cov_per / n + cov_judge
    if np.trace(A @ cov_beta @ A.T) > np.trace(A @ cov0 @ A.T):
        # λ is estimated (at the λ = 1 point); λ = 0 is a candidate too, and the people's own fit
        # wins when the estimated λ would widen the board: a useless judge never widens it
        lam, beta, cov_per, cov_judge, cov_beta, baseline = 0.0, beta0, per0, np.zeros_like(per0), cov0, cov0

    theta = A @ beta

    def full(m: np.ndarray) -> np.ndarray:
        out = np.full((n_models, n_models), np.nan)
        out[np.ix_(identified_idx, identified_idx)] = A @ m @ A.T
        return out

    scores = np.full(n_models, np.nan)
    scores[identified_idx] = theta
    cov = full(cov_beta)
    sub = A @ cov_beta @ A.T
    n_human = int(hy.size)
    # effective human n (Boyeau et al. 2024): n × tr Cov_classical / tr Cov_PPI
    ratio = float(np.trace(A @ baseline @ A.T) / np.trace(sub)) if np.trace(sub) > 0 else 1.0
    c = simultaneous_critical_value(sub, alpha)
    return CalibratedBT(
        n_models=n_models, alpha=alpha, scores=scores, cov=cov, lam=lam, effective_human_n=n_human * ratio,
        n_human=n_human, n_judge_unpaired=int(ui.size) if calibrated else 0, identified=identified,
        critical_value=c, rank_sets=_rank_sets(n_models, scores, cov, identified, c),
        method="ppi++" if calibrated else "classical", cov_per_label=full(cov_per), cov_judge=full(cov_judge),
    )


def _check_outcomes(hy: np.ndarray) -> None:
    if np.all(hy == 1) or np.all(hy == 0):
        raise ValueError("the human labels need both outcomes (no plain BT estimate otherwise)")
    if np.all(hy == 0.5):
        # θ = 0 fits every label exactly, so every gradient and the sandwich variance are 0: intervals of
        # width 0 and ranks by index, a certainty the labels do not give
        raise ValueError(f"every comparison is a tie ({hy.size}): the models look alike, but ties alone give no "
                         "spread to estimate an interval or a rank from")


def _without_spreadless_bridges(n_models: int, i: np.ndarray, j: np.ndarray, y: np.ndarray,
                                ids: np.ndarray) -> np.ndarray:
    """``ids`` (the identified models) less those only a *spreadless bridge* links to the rest: a pair of
    models whose comparisons all have one outcome strictly between 0 and 1 (only ties, or one item the
    people split 2 : 1), and whose removal disconnects the comparison graph. ``i < j`` on every row.

    Such a pair fixes θ_a − θ_b = logit(y) exactly: each of its comparisons is fitted without residual, and
    no other path measures the difference, so the sandwich variance of every difference across it is 0 —
    an interval of width 0 (±5e-7 for a model whose three items against one other model were all ties)
    and, for an exact 0, a max-statistic critical value of 1e142 that made every rank-set [1, K]. As for
    all ties (:func:`_check_outcomes`), the labels give a difference but no spread: the bridge does not link,
    the smaller side is unranked like a model no person compared, and the largest strongly connected
    component of the rest is taken again until no such bridge is left."""
    rows = np.ones(i.size, bool)
    while ids.size >= 2:
        member = np.zeros(n_models, bool)
        member[ids] = True
        rows &= member[i] & member[j]
        at = np.flatnonzero(rows)
        keys, pair = np.unique(i[at] * n_models + j[at], return_inverse=True)
        low, high = np.full(keys.size, np.inf), np.full(keys.size, -np.inf)
        np.minimum.at(low, pair, y[at])
        np.maximum.at(high, pair, y[at])
        cut = None
        for k in np.flatnonzero((low == high) & (low > 0) & (low < 1)):
            others = rows.copy()
            others[at[pair == k]] = False
            graph = coo_matrix((np.ones(int(others.sum())), (i[others], j[others])), shape=(n_models, n_models))
            _, labels = connected_components(graph, directed=False)
            if np.unique(labels[ids]).size > 1:
                cut = others
                break
        if cut is None:
            break
        rows = cut
        ids = identified_models(n_models, i[rows], j[rows], y[rows])
    return ids


def _unidentified(n_models: int, alpha: float, n_human: int, n_unpaired: int) -> CalibratedBT:
    nan = np.full((n_models, n_models), np.nan)
    return CalibratedBT(n_models, alpha, np.full(n_models, np.nan), nan, 0.0, 0.0, n_human, n_unpaired,
                        np.zeros(n_models, bool), math.inf, [(1, n_models)] * n_models)


# --- means (C² divergent U/O/S per model; EASEL human preference rate) ---------------------------


@dataclass
class CalibratedMeans:
    """Per-group prediction-powered means (PPI++ for a mean, ADZ 2023 §3): estimate, 1 − α interval,
    λ and effective human n per group (NaN / infinite where a group has fewer than two human labels;
    an infinite interval, no width-0 one, where its human values are all equal)."""

    alpha: float
    estimates: np.ndarray
    intervals: list[tuple[float, float]]
    lam: np.ndarray
    effective_human_n: np.ndarray
    n_human: np.ndarray
    n_judge_unpaired: np.ndarray


@threadpool_limits.wrap(limits=1)
def ppi_means(
    n_groups: int,
    human: tuple[Sequence[int], Sequence[float]],
    judge_paired: tuple[Sequence[int], Sequence[float]] | None = None,
    judge_unpaired: tuple[Sequence[int], Sequence[float]] | None = None,
    alpha: float = 0.1,
) -> CalibratedMeans:
    """Per group g (a model, an agent): the mean of the human outcome, corrected by the judge's
    (a rater's score, a sign of S) on the same items (``judge_paired``, same order) and on items no
    person rated (``judge_unpaired``), by ``ppi_py.ppi_mean_ci`` with power-tuned λ ∈ [0, 1]; where
    that interval would be wider than the people's own (CLT) interval, λ = 0 and the people's."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
    from ppi_py.ppi import _calc_lam_glm

    if not 0 < alpha < 1:
        raise ValueError("alpha must lie in (0, 1)")
    hg, hy = (np.asarray(a) for a in human)
    hg, hy = _indices(hg, "human"), hy.astype(float)
    pg, py = (np.asarray(a) for a in judge_paired) if judge_paired is not None else (hg, np.zeros(hy.size))
    if judge_paired is not None and not np.array_equal(np.asarray(pg), hg):
        raise ValueError("judge_paired must hold the judge's value on the human items, same order")
    py = np.asarray(py, float)
    ug, uy = (np.asarray(a) for a in judge_unpaired) if judge_unpaired is not None else (np.zeros(0, int), np.zeros(0))
    ug, uy = _indices(np.asarray(ug), "judge_unpaired"), np.asarray(uy, float)
    for name, g, v in (("human", hg, hy), ("judge_paired", hg, py), ("judge_unpaired", ug, uy)):
        if g.shape != v.shape or g.ndim != 1:
            raise ValueError(f"{name}: groups and values must be 1-d arrays of one length")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name}: every value must be finite (a missing rating is left out, not NaN)")
        if g.size and (g.min() < 0 or g.max() >= n_groups):
            raise ValueError(f"{name}: a group index is outside 0..{n_groups - 1}")
    est = np.full(n_groups, np.nan)
    lams = np.zeros(n_groups)
    eff = np.zeros(n_groups)
    intervals: list[tuple[float, float]] = []
    z = float(norm.ppf(1 - alpha / 2))
    for g in range(n_groups):
        Y, Yh, Yu = hy[hg == g], py[hg == g], uy[ug == g]
        n = Y.size
        if n < 2:
            intervals.append((-math.inf, math.inf))
            continue
        if np.ptp(Y) == 0:
            # every person gave the same value (all preferred it, all rated it 4): the CLT interval has width
            # 0, a certainty n labels do not give, and λ's formula has no covariance to work with. The
            # people's mean stands; its interval is not defined (infinite, None on the pages)
            est[g] = Y.mean()
            intervals.append((-math.inf, math.inf))
            eff[g] = n
            continue
        classical_sd = Y.std() / math.sqrt(n)
        if judge_paired is None or Yu.size < 2:
            est[g] = Y.mean()
            intervals.append((Y.mean() - z * classical_sd, Y.mean() + z * classical_sd))  # CLT interval
            eff[g] = n
            continue
        # λ as ppi_mean_ci computes it (its own λ = 1 estimate, clipped to [0, 1]); a judge whose value
        # never varies carries no information and makes ppi_py's λ 0/0: λ = 0, the people's mean
        if np.ptp(np.concatenate([Yh, Yu])) == 0:
            lam = 0.0
        else:
            p1 = ppi_mean_pointestimate(Y, Yh, Yu, lam=1)
            lam = float(np.atleast_1d(_calc_lam_glm((Y - p1).reshape(-1, 1), (Yh - p1).reshape(-1, 1),
                                                     (Yu - p1).reshape(-1, 1), np.eye(1), clip=True))[0])
        lo, hi = ppi_mean_ci(Y, Yh, Yu, alpha=alpha, lam=lam)
        lo, hi = float(np.atleast_1d(lo)[0]), float(np.atleast_1d(hi)[0])
        if hi - lo > 2 * z * classical_sd:
            # λ is estimated (from the pooled variance of the judge's values): when the judge's values on the
            # labelled items are unlike those on the rest, the tuned λ widens the interval. λ = 0 is a
            # candidate too, as in ppi_bradley_terry: the people's own interval wins, a judge never widens it
            lam, lo, hi = 0.0, Y.mean() - z * classical_sd, Y.mean() + z * classical_sd
        est[g] = float(np.atleast_1d(ppi_mean_pointestimate(Y, Yh, Yu, lam=lam))[0])
        lams[g] = lam
        intervals.append((lo, hi))
        half = (hi - lo) / 2
        eff[g] = n * (z * classical_sd / half) ** 2 if half > 0 else float(n)
    return CalibratedMeans(alpha, est, intervals, lams, eff, np.bincount(hg, minlength=n_groups),
                           np.bincount(ug, minlength=n_groups))


# --- the budget planner -------------------------------------------------------------------------


@dataclass(frozen=True)
class PairBudget:
    """How many more human labels (at the current mix of pairs, λ and variances) are expected to
    separate models i and j at level α with the given power; None when more human labels alone
    cannot (the difference is 0, or the judge's own variance term is already too large)."""

    i: int
    j: int
    difference: float
    labels_now: int
    labels_needed: int | None
    more_labels: int | None
    note: str = ""


def labels_to_separate(fit: CalibratedBT, i: int, j: int, *, power: float = DEFAULT_POWER) -> PairBudget:
    """PPI power analysis for one difference (ADZ 2023's variance split): with n' human labels,
    Var(θ̂_i − θ̂_j) = a/n' + b (a: per-label rectifier variance, b: the judge's part, both at today's
    λ); the test at α has power ``power`` when |d| ≥ (z_{1−α/2} + z_power)·sd, so
    n' = a / (d²/(z_{1−α/2} + z_power)² − b)."""
    d = float(fit.scores[i] - fit.scores[j]) if fit.identified[i] and fit.identified[j] else math.nan
    if fit.cov_per_label is None or math.isnan(d):
        return PairBudget(i, j, d, fit.n_human, None, None, "a model without human labels: no variance to plan from")
    e = np.zeros(fit.n_models)
    e[i], e[j] = 1.0, -1.0
    ids = fit.identified
    a = float(e[ids] @ fit.cov_per_label[np.ix_(ids, ids)] @ e[ids])
    b = float(e[ids] @ fit.cov_judge[np.ix_(ids, ids)] @ e[ids])
    zz = (norm.ppf(1 - fit.alpha / 2) + norm.ppf(power)) ** 2  # two-sided test at α with the given power
    room = d * d / zz - b
    if d == 0 or room <= 0:
        return PairBudget(i, j, d, fit.n_human, None, None,
                          "not separable by human labels alone at today's judge data" if d else "equal scores")
    needed = math.ceil(a / room)
    return PairBudget(i, j, d, fit.n_human, needed, max(0, needed - fit.n_human))


def board_budget(fit: CalibratedBT, *, power: float = DEFAULT_POWER) -> list[PairBudget]:
    """The budget for every adjacent pair of the board (by score), i.e. what separating the whole
    board needs; the largest ``more_labels`` is the board's figure."""
    order = [m for m in np.argsort(-np.nan_to_num(fit.scores, nan=-np.inf)) if fit.identified[m]]
    return [labels_to_separate(fit, int(a), int(b), power=power) for a, b in zip(order, order[1:])]
