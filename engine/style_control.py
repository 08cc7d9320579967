"""Style-controlled Bradley–Terry: the model skills once the judge's (or people's) taste for style is
taken out, as LMArena's style control (FastChat ``fit_contextual_bt``) and alpaca_eval's
length-controlled win rate do.

Model (Bradley & Terry 1952 with covariates; FastChat style control, LMArena 2024)::

    P(i ≻ j) = σ(θ_i − θ_j + γᵀ z_ij),    z_ij,k = standardise((f_k(i) − f_k(j)) / (f_k(i) + f_k(j)))

``f_k`` are style features of the two answers shown: their length, the number of list items and the
number of adjectives. Why these for Ekphrasis answers: the judge prefers the longer answer
(Ekphrasis Table 12, winner-longer rate 0.56–0.67) and launch criterion (vi) of App. D.3 asks that
"length and adjective-density correlations do not dominate scores"; list items are LMArena's markdown
covariate, and a visual plan written as a list reads as "more concrete" without being so. The
normalised difference is 0 when both answers have none of a feature. θ (centred, Σθ = 0) are the
style-adjusted skills — what the board would be if both answers had the same style; γ_k is the
log-odds a one-standard-deviation style difference adds. Ties enter with outcome ½.

Intervals: percentile bootstrap (Efron 1979) over comparisons, or over clusters (tasks, as Ekphrasis
App. F.3 resamples tasks) when ``clusters`` is given.

What cannot be estimated is not reported: as in :mod:`engine.calibration`, only the models of the largest
strongly connected component of the comparisons are ranked (a model nobody compared, or one that won
every comparison, has no finite skill: NaN score and interval), and a feature that never differs between
the two answers has no coefficient (NaN). Comparisons that are all ties are refused: every resample
would fit 0, an interval of width 0 that no data gave.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from engine.adjectives import adjective_count
from engine.calibration import identified_models

__all__ = ["STYLE_FEATURES", "StyleControlledBT", "style_features", "style_controlled_bradley_terry"]

STYLE_FEATURES = ("length", "list_items", "adjectives")
#: Bootstrap resamples for the intervals, and a tiny ridge that keeps a resample without some model finite.
DEFAULT_BOOTSTRAP = 200
RIDGE = 1e-4
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+\S", re.MULTILINE)


def style_features(text: str) -> dict[str, float]:
    """The style features of one shown answer: characters, list items ('- ', '* ', '1.' lines) and
    adjectives (:func:`engine.adjectives.adjective_count`)."""
    return {"length": float(len(text)), "list_items": float(len(_LIST_ITEM.findall(text))),
            "adjectives": float(adjective_count(text))}


@dataclass
class StyleControlledBT:
    scores: np.ndarray  # style-adjusted θ, centred
    score_intervals: list[tuple[float, float]]
    coefficients: dict[str, tuple[float, float, float]]  # feature -> (γ, lo, hi)
    unadjusted_scores: np.ndarray  # the same fit without covariates
    feature_scale: dict[str, float]  # the std the normalised differences were divided by
    n: int
    alpha: float
    n_bootstrap: int


def _normalised_differences(fi: np.ndarray, fj: np.ndarray) -> np.ndarray:
    total = fi + fj
    with np.errstate(invalid="ignore", divide="ignore"):
        # FastChat style control: (a − b) / (a + b), 0 when both are 0
        return np.where(total > 0, (fi - fj) / np.where(total > 0, total, 1.0), 0.0)


def _fit(X: np.ndarray, y: np.ndarray, w: np.ndarray, start: np.ndarray, n_model_cols: int) -> np.ndarray:
    ridge = np.zeros(X.shape[1])
    ridge[:n_model_cols] = RIDGE

    def loss(b):
        eta = X @ b
        # logistic loss with outcome y ∈ [0, 1] (Bradley–Terry with ties as ½)
        return float(np.sum(w * (np.logaddexp(0, eta) - y * eta)) + np.sum(ridge * b * b))

    def grad(b):
        return X.T @ (w * (expit(X @ b) - y)) + 2 * ridge * b

    return minimize(loss, start, jac=grad, method="L-BFGS-B").x


def style_controlled_bradley_terry(
    n_models: int,
    i: Sequence[int],
    j: Sequence[int],
    y: Sequence[float],
    features_i: Mapping[str, Sequence[float]],
    features_j: Mapping[str, Sequence[float]],
    *,
    alpha: float = 0.1,
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    clusters: Sequence | None = None,
    seed: int = 0,
) -> StyleControlledBT:
    """BT with style covariates (module docstring): ``features_i[name][r]`` is feature ``name`` of
    model i's answer in comparison r (likewise ``features_j``); y = 1 when i was preferred, 0 when
    j, 0.5 a tie. Returns style-adjusted centred scores with bootstrap intervals and γ per feature."""
    i, j, y = np.asarray(i, int), np.asarray(j, int), np.asarray(y, float)
    names = [k for k in features_i if k in features_j]
    if not names:
        raise ValueError("no style feature is given for both sides")
    if i.size < 2:
        raise ValueError("style control needs at least two comparisons")
    if np.all(y == 0.5):
        raise ValueError(f"every comparison is a tie ({i.size}): no preference for style control to explain")
    # the models whose skill the comparisons identify (engine.calibration's rule); the others get no score
    ranked = identified_models(n_models, i, j, y)
    if ranked.size < 2:
        raise ValueError("no two models are compared with both outcomes: nothing to rank")
    keep = np.isin(i, ranked) & np.isin(j, ranked)
    i, j, y = i[keep], j[keep], y[keep]
    Z = np.column_stack([_normalised_differences(np.asarray(features_i[k], float)[keep],
                                                 np.asarray(features_j[k], float)[keep]) for k in names])
    scale = Z.std(axis=0)
    constant = scale == 0  # a feature that never differs: γ is not estimable (reported NaN), its column stays 0
    scale[constant] = 1.0
    Z = Z / scale
    column = np.full(n_models, -1)
    column[ranked[1:]] = np.arange(ranked.size - 1)  # the first ranked model the reference
    M = np.zeros((i.size, ranked.size - 1))
    rows = np.arange(i.size)
    M[rows[column[i] >= 0], column[i][column[i] >= 0]] += 1.0
    M[rows[column[j] >= 0], column[j][column[j] >= 0]] -= 1.0
    X = np.hstack([M, Z])
    k = ranked.size - 1

    def centred(b):
        theta = np.full(n_models, np.nan)
        theta[ranked] = np.concatenate([[0.0], b[:k]])
        return theta - np.nanmean(theta)

    full = _fit(X, y, np.ones(i.size), np.zeros(X.shape[1]), k)
    plain = _fit(M, y, np.ones(i.size), np.zeros(k), k)
    rng = np.random.default_rng(seed)
    groups = np.unique(np.asarray(clusters)[keep], return_inverse=True)[1].ravel() if clusters is not None else rows
    n_groups = int(groups.max()) + 1
    draws_theta, draws_gamma = [], []
    for _ in range(n_bootstrap):
        # resample clusters with replacement: a row's weight is how often its cluster was drawn
        w = np.bincount(rng.integers(0, n_groups, n_groups), minlength=n_groups)[groups].astype(float)
        b = _fit(X, y, w, full, k)
        draws_theta.append(centred(b))
        draws_gamma.append(b[k:])
    lo_q, hi_q = 100 * alpha / 2, 100 * (1 - alpha / 2)
    T, G = np.array(draws_theta), np.array(draws_gamma)
    t_lo, t_hi = np.percentile(T, [lo_q, hi_q], axis=0) if n_bootstrap else (np.full(n_models, np.nan),) * 2
    g_lo, g_hi = np.percentile(G, [lo_q, hi_q], axis=0) if n_bootstrap else (np.full(len(names), np.nan),) * 2
    nan = float("nan")
    return StyleControlledBT(
        scores=centred(full), score_intervals=[(float(a), float(b)) for a, b in zip(t_lo, t_hi)],
        coefficients={name: (nan, nan, nan) if constant[c] else (float(full[k + c]), float(g_lo[c]), float(g_hi[c]))
                      for c, name in enumerate(names)},
        unadjusted_scores=centred(plain), feature_scale={name: float(scale[c]) for c, name in enumerate(names)},
        n=int(i.size), alpha=alpha, n_bootstrap=n_bootstrap,
    )
