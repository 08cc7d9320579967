"""Bradley–Terry aggregation of pairwise judgments (Ekphrasis App. F).

Model (Bradley & Terry 1952; Ekphrasis §4.1 and App. F)::

    P(i ≻ j) = σ(θ_i − θ_j) = 1 / (1 + exp(−(θ_i − θ_j)))

    L(θ) = −Σ_r w_r log σ(θ_{a_r} − θ_{b_r}) + λ Σ_m θ_m²,    Σ_m θ_m = 0

where ``a_r`` is the preferred and ``b_r`` the non-preferred model of decisive comparison ``r`` and
``w_r`` its weight (judge confidence). Ties never enter the likelihood; they are kept elsewhere for
diagnostics (:func:`diagnostic_winrate`).

Everything here works on *win matrices*: ``wins[i, j]`` is the total weight of comparisons in which
model ``i`` beat model ``j``. The likelihood depends on the data only through that matrix, so a refit
costs O(models²) whatever the number of comparisons, and a task-level (cluster) bootstrap is a
matrix product of resampling counts with per-task win matrices (:func:`bootstrap_bradley_terry`).

The fit is Newton's method on the sum-zero subspace; the covariance is the inverse of the
(regularised) Hessian restricted to that subspace. With ``l2 = 0`` this is the plain maximum
likelihood estimate, which exists iff the directed "i beat j" graph is strongly connected
(Ford 1957); otherwise a :class:`ValueError` says which condition fails.

Active pair selection (App. F.1: ``select_pairs``, ``ActiveState``) is :mod:`engine.active_sampling`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.linalg import LinAlgError, _umath_linalg
from scipy.sparse.csgraph import connected_components
from scipy.special import expit
from scipy.stats import norm

from engine.bt_kernel import bt_grad_hess, bt_line_search, bt_nll

__all__ = [
    "fit_win_matrices",
    "BTFit",
    "BTBootstrap",
    "win_matrix",
    "task_win_matrices",
    "fit_win_matrix",
    "fit_bradley_terry",
    "bootstrap_bradley_terry",
    "rank_probabilities",
    "indistinguishable_tiers",
    "bootstrap_tiers",
    "expected_winrate",
    "diagnostic_winrate",
    "check_identifiable",
]

#: Newton stops when the largest parameter step is below this (in logits).
NEWTON_STEP_TOL = 1e-11
#: Newton gives up (ValueError) after this many iterations.
NEWTON_MAX_ITER = 200
#: Percentiles reported by the task bootstrap (Ekphrasis App. F.3: 5th, 50th, 95th).
BOOTSTRAP_PERCENTILES = (5.0, 50.0, 95.0)
#: A bootstrap difference this close to 0 is 0: two models the data cannot tell apart (the same record against
#: the same opponents) come out of the float arithmetic a few ulps apart, e.g. 7e-15, in every replicate.
TIER_ZERO_TOL = 1e-9


# --------------------------------------------------------------------------------------------------
# Result types
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BTFit:
    """A fitted Bradley–Terry model for one dimension.

    Attributes:
        theta: skills θ, shape (n_models,), summing to zero.
        cov: covariance of θ from the inverse regularised Hessian on the sum-zero subspace,
            shape (n_models, n_models); rows and columns sum to zero.
        wins: the weighted win matrix the fit was computed from (``wins[i, j]`` = weight of i ≻ j).
        l2: the ridge penalty λ used.
        n_iter: Newton iterations taken.
    """

    theta: np.ndarray
    cov: np.ndarray
    wins: np.ndarray
    l2: float
    n_iter: int

    @property
    def n_models(self) -> int:
        return int(self.theta.shape[0])

    @property
    def se(self) -> np.ndarray:
        """Standard errors sqrt(diag Σ̂) of the sum-zero θ."""
        return np.sqrt(np.clip(np.diag(self.cov), 0.0, None))

    def difference_se(self, i: int, j: int) -> float:
        """Standard error of θ_i − θ_j: sqrt(Σ_ii + Σ_jj − 2Σ_ij)."""
        # Var(θi − θj) = Σii + Σjj − 2Σij (variance of a difference)
        var = self.cov[i, i] + self.cov[j, j] - 2.0 * self.cov[i, j]
        return float(np.sqrt(max(var, 0.0)))


@dataclass(frozen=True)
class BTBootstrap:
    """Task-level (cluster) bootstrap of a Bradley–Terry fit (Ekphrasis App. F.3).

    Attributes:
        fit: the point estimate on all tasks.
        lower, median, upper: 5th, 50th and 95th percentiles of θ per model.
        replicates: θ of every bootstrap replicate, shape (n_boot, n_models).
        tasks: the distinct task ids, in the order used for resampling.
        percentiles: the percentiles reported (5, 50, 95).
        n_dropped: replicates removed because their resampled data had no finite MLE
            (only with ``on_degenerate="drop"``).
    """

    fit: BTFit
    lower: np.ndarray
    median: np.ndarray
    upper: np.ndarray
    replicates: np.ndarray
    tasks: np.ndarray
    percentiles: tuple[float, float, float] = BOOTSTRAP_PERCENTILES
    n_dropped: int = 0


# --------------------------------------------------------------------------------------------------
# Aggregation
# --------------------------------------------------------------------------------------------------


def _as_index_array(values: Any, n_models: int, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.equal(np.mod(arr, 1), 0)):
            raise ValueError(f"{name} must hold integer model indices")
        arr = arr.astype(np.int64)
    arr = arr.astype(np.int64, copy=False)
    if arr.size and (arr.min() < 0 or arr.max() >= n_models):
        raise ValueError(f"{name} holds a model index outside 0..{n_models - 1}")
    return arr


def _validated_rows(
    winners: Any, losers: Any, n_models: int, weights: Any | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if int(n_models) != n_models or n_models < 2:
        raise ValueError(f"n_models must be an integer >= 2, got {n_models!r}")
    w = _as_index_array(winners, n_models, "winners")
    l = _as_index_array(losers, n_models, "losers")  # noqa: E741
    if w.shape != l.shape:
        raise ValueError(f"winners and losers differ in length ({w.size} vs {l.size})")
    if np.any(w == l):
        raise ValueError("a comparison has the same model as winner and loser")
    if weights is None:
        wt = np.ones(w.size)
    else:
        wt = np.asarray(weights, dtype=float)
        if wt.shape != w.shape:
            raise ValueError(f"weights must have one entry per comparison ({wt.size} vs {w.size})")
        if not np.all(np.isfinite(wt)) or np.any(wt < 0):
            raise ValueError("weights must be finite and non-negative")
    return w, l, wt


def win_matrix(
    winners: Sequence[int] | np.ndarray,
    losers: Sequence[int] | np.ndarray,
    n_models: int,
    weights: Sequence[float] | np.ndarray | None = None,
) -> np.ndarray:
    """Aggregate decisive comparisons into a weighted win matrix.

    Returns ``W`` of shape (n_models, n_models) with ``W[i, j]`` = Σ w_r over comparisons in which
    model ``i`` beat model ``j`` (weight 1 each when ``weights`` is None). The BT likelihood
    depends on the data only through ``W`` (sufficient statistic; Ekphrasis App. F).
    """
    w, l, wt = _validated_rows(winners, losers, n_models, weights)  # noqa: E741
    flat = np.bincount(w * n_models + l, weights=wt, minlength=n_models * n_models)
    return flat.reshape(n_models, n_models)


def task_win_matrices(
    tasks: Sequence[Any] | np.ndarray,
    winners: Sequence[int] | np.ndarray,
    losers: Sequence[int] | np.ndarray,
    n_models: int,
    weights: Sequence[float] | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-task weighted win matrices.

    Returns ``(task_ids, W)`` where ``task_ids`` are the sorted distinct task ids and ``W`` has shape
    (n_tasks, n_models, n_models), ``W[t]`` being :func:`win_matrix` of the rows of task ``t``.
    """
    w, l, wt = _validated_rows(winners, losers, n_models, weights)  # noqa: E741
    task_arr = np.asarray(tasks)
    if task_arr.shape != w.shape:
        raise ValueError(f"tasks must have one entry per comparison ({task_arr.size} vs {w.size})")
    task_ids, t = np.unique(task_arr, return_inverse=True)
    n2 = n_models * n_models
    flat = np.bincount(t * n2 + w * n_models + l, weights=wt, minlength=task_ids.size * n2)
    return task_ids, flat.reshape(task_ids.size, n_models, n_models)


# --------------------------------------------------------------------------------------------------
# Identifiability
# --------------------------------------------------------------------------------------------------


def check_identifiable(wins: np.ndarray) -> None:
    """Raise ValueError unless the unpenalised BT maximum likelihood estimate exists.

    The MLE exists and is unique iff the directed graph with an edge i → j whenever i beat j is
    strongly connected (Ford 1957; Hunter 2004, Assumption 1). The message names the failure:
    an uncompared model, a disconnected comparison graph, or a model that never loses / never wins.
    """
    wins = _validated_wins(wins)
    n = wins.shape[0]
    beat = wins > 0
    compared = beat | beat.T
    never = np.flatnonzero(~compared.any(axis=1))
    if never.size:
        raise ValueError(
            f"model(s) {never.tolist()} have no decisive comparisons; "
            "their skill is not identifiable with l2=0 (use l2>0 or drop them)"
        )
    n_comp, labels = connected_components(compared, directed=False)
    if n_comp > 1:
        groups = [np.flatnonzero(labels == c).tolist() for c in range(n_comp)]
        raise ValueError(
            f"the comparison graph is disconnected into {n_comp} components {groups}; "
            "skills are not comparable across components with l2=0 (use l2>0)"
        )
    no_loss = np.flatnonzero(~beat.any(axis=0))
    if no_loss.size:
        raise ValueError(
            f"model(s) {no_loss.tolist()} never lose a decisive comparison; the maximum likelihood "
            "skill is +infinity with l2=0 (use l2>0)"
        )
    no_win = np.flatnonzero(~beat.any(axis=1))
    if no_win.size:
        raise ValueError(
            f"model(s) {no_win.tolist()} never win a decisive comparison; the maximum likelihood "
            "skill is -infinity with l2=0 (use l2>0)"
        )
    n_strong, _ = connected_components(beat, directed=True, connection="strong")
    if n_strong > 1:
        raise ValueError(
            "the directed win graph is not strongly connected (some group of models never loses to "
            f"the rest; Ford 1957), so the maximum likelihood estimate is infinite with l2=0 (n={n})"
        )


def _strongly_connected_batch(wins: np.ndarray) -> np.ndarray:
    """Strong connectivity of each (n, n) win matrix in a (B, n, n) stack, by boolean closure."""
    b, n, _ = wins.shape
    reach = (wins > 0) | np.eye(n, dtype=bool)[None]
    steps = 1
    while steps < n:
        reach = np.matmul(reach.astype(np.float32), reach.astype(np.float32)) > 0
        steps *= 2
    return reach.all(axis=(1, 2))


def _validated_wins(wins: Any) -> np.ndarray:
    """``wins`` as a float matrix, checked. The checks are the arrays' own methods (``x.all()`` is what
    ``np.all(x)`` computes, without its Python wrapper): the active planner fits ~8,400 times a judge run."""
    w = np.asarray(wins, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] < 2:
        raise ValueError(f"wins must be a square (n_models, n_models) matrix with n >= 2, got {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("wins must be finite and non-negative")
    if (w.diagonal() != 0).any():
        raise ValueError("wins has a non-zero diagonal (a model cannot beat itself)")
    return w


# --------------------------------------------------------------------------------------------------
# Fitting
# --------------------------------------------------------------------------------------------------


def _nll(wins: np.ndarray, theta: np.ndarray, l2: float) -> np.ndarray:
    """Penalised negative log-likelihood for a stack of win matrices (..., n, n)."""
    diff = theta[..., :, None] - theta[..., None, :]
    # −Σ W_ij log σ(θi − θj) + λ Σ θ²  (Ekphrasis App. F); log σ(x) = −log(1 + e^(−x))
    return (wins * np.logaddexp(0.0, -diff)).sum(axis=(-2, -1)) + l2 * (theta**2).sum(axis=-1)


def _grad_hess(wins: np.ndarray, theta: np.ndarray, l2: float) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Hessian of :func:`_nll` for a stack (..., n, n)."""
    return _grad_hess_of_games(wins + np.swapaxes(wins, -1, -2), wins.sum(axis=-1), theta, l2)


def _grad_hess_of_games(
    games: np.ndarray, won: np.ndarray, theta: np.ndarray, l2: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_grad_hess` from the games N = W + Wᵀ and the row sums of W, which do not change with θ."""
    n = theta.shape[-1]
    p = expit(theta[..., :, None] - theta[..., None, :])
    # ∂L/∂θi = Σj (N_ij p_ij − W_ij) + 2λθi  (logistic-regression score; Agresti 2002 §10.6)
    grad = (games * p).sum(axis=-1) - won + 2.0 * l2 * theta
    # ∂²L/∂θi∂θj = −N_ij p_ij (1 − p_ij), diagonal = Σj N_ij p_ij (1 − p_ij) + 2λ (Fisher information)
    info = games * p * (1.0 - p)
    hess = -info
    # the diagonal, as a strided view of the new (contiguous) array
    hess.reshape(*hess.shape[:-2], n * n)[..., :: n + 1] = info.sum(axis=-1) + 2.0 * l2
    return grad, hess


def _newton(
    wins: np.ndarray, l2: float, theta0: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, int]:
    """Damped Newton on the sum-zero subspace for a stack of win matrices (B, n, n).

    Returns (theta (B, n), hessian (B, n, n), iterations). Adding J = 11ᵀ/n to the Hessian makes it
    invertible without changing the step: the gradient is orthogonal to 1 (Σ_i ∂L/∂θi = 2λΣθ = 0).

    The games N = W + Wᵀ and the row sums of W are computed once, not at every iteration, and while every
    replicate is still moving (a single fit's every iteration) the stack is used as it is rather than
    copied through the mask of the moving ones: the same operations on the same numbers, so the same bits.
    """
    b, n, _ = wins.shape
    theta = np.zeros((b, n)) if theta0 is None else np.array(np.broadcast_to(theta0, (b, n)), dtype=float)
    theta -= theta.mean(axis=-1, keepdims=True)
    ones = np.full((n, n), 1.0 / n)
    games, won = wins + np.swapaxes(wins, -1, -2), wins.sum(axis=-1)
    nll = _nll(wins, theta, l2)
    moving = None  # indices of the replicates still moving; None while all of them are
    for it in range(1, NEWTON_MAX_ITER + 1):
        if moving is None:
            w_act, games_act, won_act, th_act, nll_act = wins, games, won, theta, nll
        else:
            w_act, games_act, won_act = wins[moving], games[moving], won[moving]
            th_act, nll_act = theta[moving], nll[moving]
        grad, hess = _grad_hess_of_games(games_act, won_act, th_act, l2)
        step = np.linalg.solve(hess + ones, grad[..., None])[..., 0]
        step -= step.sum(axis=-1, keepdims=True) / n  # its mean (what np.mean computes, without its wrapper)
        # backtracking: halve the step of any replicate whose objective would increase
        t = np.ones(step.shape[0])
        for _ in range(60):
            trial = th_act - t[:, None] * step
            trial_nll = _nll(w_act, trial, l2)
            bad = trial_nll > nll_act + 1e-12 * np.maximum(1.0, np.abs(nll_act))
            if not bad.any():
                break
            t[bad] *= 0.5
        if moving is None:
            theta, nll = trial, trial_nll
        else:
            theta[moving] = trial
            nll[moving] = trial_nll
        moved = np.abs(t[:, None] * step).max(axis=-1)
        still = moved > NEWTON_STEP_TOL
        if not still.all():
            moving = (np.arange(b) if moving is None else moving)[still]
            if moving.size == 0:
                _, hess = _grad_hess_of_games(games, won, theta, l2)
                return theta, hess, it
    raise ValueError(
        f"Bradley–Terry Newton iterations did not converge in {NEWTON_MAX_ITER} steps; "
        "the data may be (nearly) separable — use l2>0"
    )


def _singular_system(err: str, flag: int) -> None:
    """np.linalg.solve's error for a singular system (its error-state callback)."""
    raise LinAlgError("Singular matrix")


def _newton_single(wins: np.ndarray, l2: float, theta0: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`_newton` for one win matrix (n, n): the same iterations on the same numbers, so the same bits
    (``tests/engine/test_bt.py`` compares the two), without a stack of one. The active planner fits once per
    round of every task and dimension (~6,000 fits in a paper-scale run), and with 14 models each numpy
    call's own overhead, not its arithmetic, is most of a fit: the gradient and Hessian, and the step's
    backtracking with its objective, are compiled (:mod:`engine.bt_kernel`, the same IEEE operations in the
    same order as the numpy form, kept as the oracle in ``tests/engine/test_bt_kernel.py``) into buffers made
    once a fit; the linear solve stays numpy's LAPACK call. Returns (theta (n,), hessian (n, n), iterations)."""
    n = wins.shape[0]
    if theta0 is None:
        theta = np.zeros(n)  # centred already: zeros less their mean are the same zeros
    else:
        theta = np.array(np.broadcast_to(theta0, (n,)), dtype=float)
        theta -= theta.mean(axis=-1, keepdims=True)
    ones = np.full((n, n), 1.0 / n)
    wins = np.ascontiguousarray(wins)
    games, won = wins + wins.T, wins.sum(axis=-1)
    grad, hess, system = np.empty(n), np.empty((n, n)), np.empty((n, n))
    trial, products, squares, terms = np.empty(n), np.empty(n), np.empty(n), np.empty(n * n)
    # the solve's right-hand side (a column view of grad, which bt_grad_hess refills) and its solution (the step,
    # a contiguous column the line search centres in place), made once a fit rather than at every step
    grad_column, solution = grad[:, None], np.empty((n, 1))
    step = solution[:, 0]
    nll = bt_nll(wins, theta, l2, terms, squares)
    # np.linalg.solve's own gufunc under its error state, entered once a fit rather than at every step (its
    # checks and wrapping were about half of a 14-model solve's instructions): the same LAPACK call on the
    # same arrays, a singular system raising the same LinAlgError
    with np.errstate(call=_singular_system, invalid="call", over="ignore", divide="ignore", under="ignore"):
        for it in range(1, NEWTON_MAX_ITER + 1):
            bt_grad_hess(games, won, theta, l2, ones, grad, hess, system, products)
            _umath_linalg.solve(system, grad_column, signature="dd->d", out=solution)
            # centres the step, backtracks (halving while the objective would rise), leaves θ − t·step in trial
            nll, moved = bt_line_search(wins, theta, step, nll, l2, trial, terms, squares)
            theta, trial = trial, theta
            if not moved > NEWTON_STEP_TOL:
                bt_grad_hess(games, won, theta, l2, ones, grad, hess, system, products)
                return theta, hess, it
    raise ValueError(
        f"Bradley–Terry Newton iterations did not converge in {NEWTON_MAX_ITER} steps; "
        "the data may be (nearly) separable — use l2>0"
    )


#: J = 11ᵀ/n and P = I − J by n, made once (read only): every fit's covariance uses both.
_SUM_ZERO_PROJECTIONS: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _sum_zero_covariance(hess: np.ndarray) -> np.ndarray:
    """Σ = P (H + J)⁻¹ P, the inverse Hessian on the sum-zero subspace (P = I − J, J = 11ᵀ/n), for one (n, n)
    Hessian. The inverse is np.linalg.inv's own gufunc under its error state, as it calls it (a singular matrix
    raises the same LinAlgError), without its checks and wrapping: the same LAPACK call on the same array."""
    n = hess.shape[-1]
    found = _SUM_ZERO_PROJECTIONS.get(n)
    if found is None:
        ones = np.full((n, n), 1.0 / n)
        found = _SUM_ZERO_PROJECTIONS[n] = (ones, np.eye(n) - ones)
    ones, proj = found
    with np.errstate(call=_singular_system, invalid="call", over="ignore", divide="ignore", under="ignore"):
        inverse = _umath_linalg.inv(hess + ones, signature="d->d")
    # generalised inverse restricted to {Σθ = 0}: P (H + J)⁻¹ P (Harville 1997, Thm 12.2)
    return proj @ inverse @ proj


def fit_win_matrix(wins: np.ndarray, l2: float = 0.0, theta0: np.ndarray | None = None) -> BTFit:
    """Fit the Bradley–Terry model to a weighted win matrix (``wins[i, j]`` = weight of i ≻ j).

    Minimises −Σ_ij W_ij log σ(θi − θj) + λ Σ θ² subject to Σθ = 0 (Ekphrasis App. F) by Newton's
    method. With ``l2 = 0`` the data must identify the MLE (:func:`check_identifiable`).
    ``theta0`` optionally warm-starts the iterations (e.g. from a previous fit).
    """
    w = _validated_wins(wins)
    l2 = float(l2)
    if not np.isfinite(l2) or l2 < 0:
        raise ValueError(f"l2 must be a finite non-negative number, got {l2!r}")
    if l2 == 0.0:
        check_identifiable(w)
    theta, hess, n_iter = _newton_single(w, l2, None if theta0 is None else np.asarray(theta0, float))
    return BTFit(theta=theta, cov=_sum_zero_covariance(hess), wins=w, l2=l2, n_iter=n_iter)


def fit_win_matrices(wins: np.ndarray, l2: float, theta0: np.ndarray | None = None) -> np.ndarray:
    """θ for a stack of win matrices (B, n, n) in one vectorised Newton solve (the bootstrap's kernel).

    Needs ``l2 > 0`` (resampled data need not identify an MLE). Returns θ with shape (B, n), rows
    summing to zero; same objective as :func:`fit_win_matrix` (Ekphrasis App. F).
    """
    stack = np.asarray(wins, dtype=float)
    if stack.ndim != 3 or stack.shape[1] != stack.shape[2]:
        raise ValueError(f"wins must have shape (B, n, n), got {stack.shape}")
    if not float(l2) > 0.0:
        raise ValueError("fit_win_matrices needs l2 > 0")
    theta, _, _ = _newton(stack, float(l2), None if theta0 is None else np.asarray(theta0, float))
    return theta


def fit_bradley_terry(
    winners: Sequence[int] | np.ndarray,
    losers: Sequence[int] | np.ndarray,
    n_models: int,
    weights: Sequence[float] | np.ndarray | None = None,
    l2: float = 0.0,
) -> BTFit:
    """Fit P(i ≻ j) = σ(θi − θj) to decisive comparisons (Ekphrasis App. F).

    Args:
        winners, losers: model index (0..n_models−1) of the preferred / non-preferred response of each
            decisive comparison. Ties must not be passed (they are diagnostics only, App. F.2).
        n_models: number of models.
        weights: optional per-comparison weight w_r (judge confidence); default 1.
        l2: ridge penalty λ on Σθ². ``0`` gives the plain maximum likelihood estimate and raises
            ValueError when it does not exist (disconnected graph, a model that never wins/loses).

    Returns:
        :class:`BTFit` with sum-zero ``theta`` and its covariance ``cov`` (inverse regularised Hessian
        on the sum-zero subspace). With weights the covariance is the model-based (weighted
        pseudo-likelihood) one; prefer :func:`bootstrap_bradley_terry` for intervals.
    """
    return fit_win_matrix(win_matrix(winners, losers, n_models, weights), l2=l2)


def bootstrap_bradley_terry(
    tasks: Sequence[Any] | np.ndarray,
    winners: Sequence[int] | np.ndarray,
    losers: Sequence[int] | np.ndarray,
    n_models: int,
    weights: Sequence[float] | np.ndarray | None = None,
    l2: float = 0.0,
    n_boot: int = 1000,
    seed: int = 42,
    on_degenerate: Literal["raise", "drop"] = "raise",
) -> BTBootstrap:
    """Task-level (cluster) bootstrap of the BT fit (Ekphrasis App. F.3).

    Each replicate draws the tasks with replacement (multinomial counts over tasks), forms its win
    matrix as Σ_t count_t · W_t from the per-task win matrices, and refits. All replicates are fitted
    together by a vectorised Newton iteration warm-started at the full-data estimate.

    Args:
        tasks, winners, losers, weights: equal-length arrays, one entry per decisive comparison.
        n_boot: number of bootstrap replicates; seed: seed of ``numpy.random.default_rng``.
        on_degenerate: with ``l2 = 0`` a resample can lack a finite MLE (e.g. a model never loses in
            it). ``"raise"`` (default) raises ValueError; ``"drop"`` removes those replicates and
            records how many in ``n_dropped`` (the percentiles are then conditional on existence).

    Returns:
        :class:`BTBootstrap` with the 5th/50th/95th percentiles of θ per model and the replicates.
    """
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    if on_degenerate not in ("raise", "drop"):
        raise ValueError(f"on_degenerate must be 'raise' or 'drop', got {on_degenerate!r}")
    task_ids, per_task = task_win_matrices(tasks, winners, losers, n_models, weights)
    total = per_task.sum(axis=0)
    fit = fit_win_matrix(total, l2=l2)
    rng = np.random.default_rng(seed)
    n_tasks = task_ids.size
    counts = rng.multinomial(n_tasks, np.full(n_tasks, 1.0 / n_tasks), size=int(n_boot)).astype(float)
    # resampled win matrices: Σ_t count_bt W_t, one matrix product (cluster bootstrap; Efron & Tibshirani 1993 §8.4)
    boot_wins = (counts @ per_task.reshape(n_tasks, -1)).reshape(int(n_boot), n_models, n_models)
    n_dropped = 0
    if float(l2) == 0.0:
        ok = _strongly_connected_batch(boot_wins)
        if not ok.all():
            bad = int((~ok).sum())
            if on_degenerate == "raise":
                raise ValueError(
                    f"{bad} of {n_boot} bootstrap resamples have no finite MLE (a resampled win graph is "
                    "not strongly connected); use l2>0 or on_degenerate='drop'"
                )
            boot_wins = boot_wins[ok]
            n_dropped = bad
            if boot_wins.shape[0] == 0:
                raise ValueError("every bootstrap resample lacks a finite MLE; use l2>0")
    theta, _, _ = _newton(boot_wins, float(l2), fit.theta)
    lo, med, hi = np.percentile(theta, BOOTSTRAP_PERCENTILES, axis=0)
    return BTBootstrap(
        fit=fit, lower=lo, median=med, upper=hi, replicates=theta, tasks=task_ids, n_dropped=n_dropped
    )


# --------------------------------------------------------------------------------------------------
# Rank uncertainty
# --------------------------------------------------------------------------------------------------


def rank_probabilities(fit: BTFit, draws: int = 10000, seed: int = 42) -> np.ndarray:
    """P[model, rank]: how often each model takes each rank when θ̃ ~ N(θ̂, Σ̂) (Ekphrasis App. F.3).

    Rank 0 is the best (highest θ). Rows and columns each sum to 1.
    """
    if int(draws) != draws or draws < 1:
        raise ValueError(f"draws must be a positive integer, got {draws!r}")
    n = fit.n_models
    rng = np.random.default_rng(seed)
    # Σ̂ is singular along 1 (sum-zero): sample through its eigen-decomposition
    vals, vecs = np.linalg.eigh(fit.cov)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    sample = fit.theta + rng.standard_normal((int(draws), n)) @ root.T
    order = np.argsort(-sample, axis=1, kind="stable")
    probs = np.zeros((n, n))
    np.add.at(probs, (order, np.broadcast_to(np.arange(n), order.shape)), 1.0)
    return probs / draws


def indistinguishable_tiers(fit: BTFit, level: float = 0.95) -> list[list[int]]:
    """Group models into tiers of statistically indistinguishable neighbours (Ekphrasis App. F.4).

    Models are sorted by θ̂ (best first); two neighbours share a tier when |θ̂a − θ̂b| is smaller than
    the half-width z_{(1+level)/2} · SE(θa − θb) of its Wald interval. Tiers chain: if A~B and B~C
    then A, B and C share a tier even if A and C are distinguishable.

    Returns a list of tiers, best first, each a list of model indices in descending θ̂.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    z = norm.ppf(0.5 + level / 2.0)
    order = np.argsort(-fit.theta, kind="stable")
    tiers: list[list[int]] = [[int(order[0])]]
    for prev, cur in zip(order[:-1], order[1:]):
        # Wald interval for θa − θb: difference ± z · sqrt(Σaa + Σbb − 2Σab) (Wald 1943)
        if abs(fit.theta[prev] - fit.theta[cur]) < z * fit.difference_se(int(prev), int(cur)):
            tiers[-1].append(int(cur))
        else:
            tiers.append([int(cur)])
    return tiers


def bootstrap_tiers(
    samples: np.ndarray, estimate: Sequence[float] | np.ndarray, level: float = 0.90
) -> list[list[int]]:
    """Tiers of indistinguishable neighbours from bootstrap replicates (Ekphrasis App. F.3–F.4).

    ``samples`` is (n_boot, n_models) of a score (θ or expected win rate) refitted on resampled
    tasks; ``estimate`` the point estimate that orders the models (best first). Two neighbours share
    a tier only when both hold:

    * the ``level`` percentile interval of their paired difference (same replicate) contains 0;
    * their own ``level`` percentile intervals overlap,

    so a tier never joins two models whose displayed intervals are apart, whatever the Wald standard
    errors say (a model that never loses has a huge ridge SE). Tiers chain like
    :func:`indistinguishable_tiers`. Returns tiers best first, each a list of model indices.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    draws = np.asarray(samples, dtype=float)
    est = np.asarray(estimate, dtype=float)
    if draws.ndim != 2 or draws.shape[1] != est.size or draws.shape[0] < 2:
        raise ValueError(f"samples must be (n_boot ≥ 2, {est.size}), got {draws.shape}")
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.nanpercentile(draws, [tail, 100.0 - tail], axis=0)
    order = np.argsort(-est, kind="stable")
    tiers: list[list[int]] = [[int(order[0])]]
    for prev, cur in zip(order[:-1], order[1:]):
        # percentile interval of the paired bootstrap difference (Efron & Tibshirani 1993, §13.3)
        d_low, d_high = np.nanpercentile(draws[:, prev] - draws[:, cur], [tail, 100.0 - tail])
        overlap = low[prev] <= high[cur] + TIER_ZERO_TOL and low[cur] <= high[prev] + TIER_ZERO_TOL
        if d_low <= TIER_ZERO_TOL and d_high >= -TIER_ZERO_TOL and overlap:
            tiers[-1].append(int(cur))
        else:
            tiers.append([int(cur)])
    return tiers


# --------------------------------------------------------------------------------------------------
# Win rates
# --------------------------------------------------------------------------------------------------


def expected_winrate(theta: Sequence[float] | np.ndarray) -> np.ndarray:
    """BT expected win rate of each model against the others: s_m = mean_{n≠m} σ(θm − θn) (§4.3).

    ``theta`` may be (n_models,) or a stack (..., n_models) such as bootstrap replicates.
    """
    th = np.asarray(theta, dtype=float)
    n = th.shape[-1]
    if n < 2:
        raise ValueError("expected_winrate needs at least two models")
    p = expit(th[..., :, None] - th[..., None, :])
    # mean over n ≠ m of σ(θm − θn); the diagonal contributes σ(0) = 0.5 and is removed
    return (p.sum(axis=-1) - 0.5) / (n - 1)


def diagnostic_winrate(
    wins: Sequence[float] | np.ndarray, losses: Sequence[float] | np.ndarray, ties: Sequence[float] | np.ndarray
) -> np.ndarray:
    """Tie-as-half-win rate Ŵ_m = (W_m + 0.5 T_m) / (W_m + L_m + T_m) (Ekphrasis App. F).

    Returns NaN for a model with no comparisons.
    """
    w, l, t = (np.asarray(x, dtype=float) for x in (wins, losses, ties))  # noqa: E741
    if not (w.shape == l.shape == t.shape):
        raise ValueError(f"wins, losses and ties must have the same shape ({w.shape}, {l.shape}, {t.shape})")
    if np.any(w < 0) or np.any(l < 0) or np.any(t < 0):
        raise ValueError("wins, losses and ties must be non-negative counts")
    total = w + l + t
    with np.errstate(invalid="ignore", divide="ignore"):
        # Ŵ = (W + 0.5T)/(W + L + T)  (Ekphrasis App. F)
        return np.where(total > 0, (w + 0.5 * t) / np.where(total > 0, total, 1.0), np.nan)
