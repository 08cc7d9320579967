"""Does Eq. 1's weighting of SSIM, 1 − L1 and Edge IoU match what people see? (EASEL Eq. 1, issue 13)

EASEL scores a canvas by S = 0.5·SSIM + 0.3·(1 − L1) + 0.2·EdgeIoU (easel.txt Eq. 1); the weights are
asserted. People shown a reference and two canvases A and B pick the one that looks more like the
reference (or tie). If people chose as S does, with noise, then

    P(A chosen | not tie) = σ(β · Δx),   Δx = x_A − x_B,   x = (SSIM, 1 − L1, EdgeIoU)

(a Bradley–Terry / logistic choice model on the component differences, McFadden 1974) with
β ∝ (0.5, 0.3, 0.2). The model has no intercept: the canonical A/B order of an item is random and the
shown order counterbalanced, so relabelling A ↔ B must flip the prediction (Δx → −Δx, y → 1 − y).

:func:`logistic_fit` is the maximum-likelihood fit by Newton–Raphson (IRLS); :func:`implied_weights`
normalises β to sum to one, the scale Eq. 1's weights are on; :func:`perception_weights` adds
percentile bootstrap intervals resampling *items* (an item's several labels stay together).
Ties are left out of the fit (a tie says neither side looks more like the reference).

Plain numpy; checked against statsmodels' ``Logit`` in tests/engine/test_perception_fit.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "EQ1_WEIGHTS",
    "COMPONENTS",
    "LogisticFit",
    "PerceptionWeights",
    "logistic_fit",
    "implied_weights",
    "perception_weights",
]

#: Eq. 1's weights on SSIM, 1 − L1 and Edge IoU (easel.txt Eq. 1).
EQ1_WEIGHTS = (0.5, 0.3, 0.2)
COMPONENTS = ("ssim", "one_minus_l1", "edge_iou")
#: Newton–Raphson stops when the largest coefficient step is below this.
NEWTON_TOLERANCE = 1e-10
NEWTON_MAX_ITER = 100
#: A log-likelihood within this of 0 that has stopped moving: the choices are (quasi-)separated.
SEPARATED_LOG_LIK = 1e-6
#: |β| beyond this means the data are (quasi-)separated: the MLE does not exist.
SEPARATION_BOUND = 1e4
BOOTSTRAP_REPLICATES = 1000
INTERVAL_LEVEL = 0.95


@dataclass(frozen=True)
class LogisticFit:
    """β of P(y = 1) = σ(X β) with its standard errors (inverse observed information)."""

    coef: tuple[float, ...]
    se: tuple[float, ...]
    n: int
    converged: bool
    separated: bool
    log_likelihood: float


@dataclass(frozen=True)
class PerceptionWeights:
    """Normalised weights implied by people's choices, beside Eq. 1's, with bootstrap intervals."""

    fit: LogisticFit
    weights: tuple[float, float, float]
    intervals: tuple[tuple[float, float], tuple[float, float], tuple[float, float]]
    paper: tuple[float, float, float]
    n_choices: int
    n_items: int
    n_ties: int
    replicates: int
    method: str = "percentile bootstrap over items, 95%"


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # σ(z), overflow-free form


def logistic_fit(x: np.ndarray | Sequence[Sequence[float]], y: np.ndarray | Sequence[float]) -> LogisticFit:
    """Maximum-likelihood logistic regression without intercept, by Newton–Raphson.

    ℓ(β) = Σ yᵢ log σ(xᵢβ) + (1 − yᵢ) log(1 − σ(xᵢβ)); step β ← β + (XᵀWX)⁻¹ Xᵀ(y − p), W = diag(p(1 − p))
    (McCullagh & Nelder 1989, §4.4). Separated data (a β that classifies every choice perfectly) have no
    finite MLE: the fit stops once |β| passes :data:`SEPARATION_BOUND` and says so.
    """
    X = np.asarray(x, dtype=float)
    t = np.asarray(y, dtype=float)
    if X.ndim != 2 or t.ndim != 1 or X.shape[0] != t.size:
        raise ValueError(f"x must be [n, p] and y [n], got {X.shape} and {t.shape}")
    if t.size <= X.shape[1]:
        raise ValueError(f"a logistic fit of {X.shape[1]} coefficients needs more than {X.shape[1]} choices, got {t.size}")
    if not np.all(np.isin(t, (0.0, 1.0))) or not np.all(np.isfinite(X)):
        raise ValueError("y must be 0/1 and x finite")
    if np.linalg.matrix_rank(X) < X.shape[1]:
        raise ValueError("the component differences are collinear: the weights are not identified")
    beta = np.zeros(X.shape[1])
    converged = separated = False
    previous = -np.inf
    for _ in range(NEWTON_MAX_ITER):
        p = _sigmoid(X @ beta)
        w = np.clip(p * (1 - p), 1e-12, None)
        step = np.linalg.solve(X.T @ (X * w[:, None]), X.T @ (t - p))
        beta = beta + step
        if np.max(np.abs(beta)) > SEPARATION_BOUND:
            separated = True
            break
        if np.max(np.abs(step)) < NEWTON_TOLERANCE:
            converged = True
            break
        q = np.clip(_sigmoid(X @ beta), 1e-300, 1 - 1e-16)
        current = float(np.sum(t * np.log(q) + (1 - t) * np.log1p(-q)))
        # separated data: ℓ creeps towards 0 while β grows without bound; stop once ℓ no longer moves
        if current > -SEPARATED_LOG_LIK and abs(current - previous) < SEPARATED_LOG_LIK:
            separated = True
            break
        previous = current
    p = np.clip(_sigmoid(X @ beta), 1e-300, 1 - 1e-16)
    w = p * (1 - p)
    info = X.T @ (X * w[:, None])
    try:
        se = np.sqrt(np.diag(np.linalg.inv(info)))
    except np.linalg.LinAlgError:
        se = np.full(X.shape[1], np.inf)
    log_lik = float(np.sum(t * np.log(p) + (1 - t) * np.log1p(-p)))
    return LogisticFit(tuple(map(float, beta)), tuple(map(float, se)), int(t.size), converged, separated, log_lik)


def implied_weights(coef: Sequence[float]) -> tuple[float, ...]:
    """wⱼ = βⱼ / Σₖ βₖ: the coefficients on Eq. 1's scale (weights summing to one); NaN when Σβ = 0."""
    b = np.asarray(coef, dtype=float)
    total = b.sum()
    if total == 0 or not np.isfinite(total):
        return tuple(float("nan") for _ in b)
    return tuple(map(float, b / total))


def perception_weights(
    deltas: Sequence[Sequence[float]],
    choices: Sequence[str],
    items: Sequence[int | str],
    *,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = 0,
) -> PerceptionWeights:
    """Fit the choice model on every non-tie choice and bootstrap its implied weights over items.

    ``deltas[i]`` = (ΔSSIM, Δ(1 − L1), ΔEdgeIoU) of canvas A minus canvas B (canonical order) for
    choice i; ``choices[i]`` ∈ {"A", "B", "tie"}; ``items[i]`` the item the choice belongs to.
    """
    D = np.asarray(deltas, dtype=float)
    labels = list(choices)
    if D.ndim != 2 or D.shape[1] != 3 or D.shape[0] != len(labels) or len(items) != len(labels):
        raise ValueError("deltas must be [n, 3] with one choice and one item per row")
    bad = sorted({c for c in labels if c not in ("A", "B", "tie")})
    if bad:
        raise ValueError(f"choices must be A, B or tie, got {bad}")
    keep = np.array([c != "tie" for c in labels])
    X = D[keep]
    y = np.array([1.0 if c == "A" else 0.0 for c, k in zip(labels, keep) if k])
    groups = np.array([str(i) for i in items], dtype=object)[keep]
    fit = logistic_fit(X, y)
    weights = implied_weights(fit.coef)
    unique = np.unique(groups)
    index = {g: np.flatnonzero(groups == g) for g in unique}
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(replicates):
        picked = np.concatenate([index[g] for g in rng.choice(unique, size=unique.size, replace=True)])
        try:
            draws.append(implied_weights(logistic_fit(X[picked], y[picked]).coef))
        except (ValueError, np.linalg.LinAlgError):
            continue  # a resample without enough distinct choices identifies no weights
    draws_arr = np.asarray(draws, dtype=float).reshape(-1, 3)
    tail = 100 * (1 - INTERVAL_LEVEL) / 2
    intervals = []
    for j in range(3):
        column = draws_arr[:, j][np.isfinite(draws_arr[:, j])]
        if column.size:
            lo, hi = np.percentile(column, [tail, 100 - tail])
            intervals.append((float(lo), float(hi)))
        else:
            intervals.append((float("nan"), float("nan")))
    return PerceptionWeights(
        fit=fit, weights=weights, intervals=tuple(intervals), paper=EQ1_WEIGHTS,  # type: ignore[arg-type]
        n_choices=int(keep.sum()), n_items=int(unique.size), n_ties=int((~keep).sum()), replicates=len(draws),
    )
