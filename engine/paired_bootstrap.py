"""Paired, stratified bootstrap of several agents scored on the same items: the interval of each
agent's score, the interval of every pairwise difference, P(A > B) and rank probabilities.

Model. ``values[a, i]`` is agent ``a``'s score on item ``i`` (an EASEL reference's Final S, a C²
prompt's creativity); every item belongs to one stratum ``h`` (an EASEL category, a C² task type).
The score of agent ``a`` is either

* ``weighting="items"``: the mean over items, ``T_a = (1/n) Σ_i x_{a,i}`` (EASEL's Final S, Table 3), or
* ``weighting="strata"``: the mean over strata of the stratum means,
  ``T_a = (1/H) Σ_h (1/n_h) Σ_{i∈h} x_{a,i}`` (C²'s Combined creativity, Tables 1–2).

One bootstrap replicate draws, within every stratum, ``n_h`` items with replacement — the SAME items
for every agent (the pairing: a hard reference is hard for everyone, so it cancels in A − B) — and
recomputes every ``T_a``. From ``B`` replicates ``T*_{a,b}``:

* interval of ``T_a`` and of ``T_a − T_c``: the percentile interval, the ``(1 − level)/2`` and
  ``(1 + level)/2`` quantiles of the replicates (Efron & Tibshirani 1993, *An Introduction to the
  Bootstrap*, §13.3; the paired difference as in their §7.2 / Davison & Hinkley 1997, §3.2 for strata);
* ``P(A > B) = (1/B) Σ_b [T*_{A,b} > T*_{B,b}] + ½ [T*_{A,b} = T*_{B,b}]``: the bootstrap probability that A
  scores above B (ties count half);
* rank probabilities ``P[a, r]``: the share of replicates in which agent ``a`` holds rank ``r`` (0 = best)
  (Ekphrasis App. F.3 draws its rank probabilities from N(θ̂, Σ̂) instead; a mean score has no Σ̂, so the
  replicates are counted); the *rank set* of ``a`` is the central ``level`` range of its bootstrap rank.

Missing scores are NaN: a stratum mean is over the agent's drawn items that have a score; a replicate in
which an agent has no score at all is left out of that agent's quantiles and of the rank counts.
Plain numpy, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["PairedBootstrap", "WEIGHTINGS", "bootstrap_payload", "shared_rank_distribution", "stratified_paired_bootstrap"]

WEIGHTINGS = ("items", "strata")


@dataclass(frozen=True)
class PairedBootstrap:
    """The result: agents in the order given; matrices are ``[row agent, column agent]``."""

    point: np.ndarray  #: (k,) T_a on the data
    low: np.ndarray  #: (k,) lower percentile bound of T_a (NaN when not asked for: ``agent_intervals=False``)
    high: np.ndarray  #: (k,) upper percentile bound of T_a (idem)
    diff_low: np.ndarray  #: (k, k) lower bound of T_row − T_col
    diff_high: np.ndarray  #: (k, k) upper bound of T_row − T_col
    p_greater: np.ndarray  #: (k, k) P(T_row > T_col) over replicates, ties half; NaN on the diagonal
    rank_probabilities: np.ndarray  #: (k, k) P(agent holds rank r), r = 0 best; rows and columns sum to 1
    rank_low: np.ndarray  #: (k,) 1-based best rank of the agent's central ``level`` rank range
    rank_high: np.ndarray  #: (k,) 1-based worst rank of that range
    n_items: int
    n_boot: int
    level: float


def _statistic(sums: np.ndarray, counts: np.ndarray, weighting: str) -> np.ndarray:
    """T per agent from per-stratum sums and counts (..., k, H)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if weighting == "items":
            return sums.sum(axis=-1) / counts.sum(axis=-1)
        return np.mean(sums / counts, axis=-1)  # a stratum with no score makes T NaN (a Combined needs every type)


def stratified_paired_bootstrap(
    values: Sequence[Sequence[float]] | np.ndarray,
    strata: Sequence[str],
    *,
    weighting: str = "items",
    n_boot: int = 1000,
    level: float = 0.90,
    seed: int = 0,
    agent_intervals: bool = True,
) -> PairedBootstrap:
    """The paired, stratified percentile bootstrap of the module docstring.

    ``values``: (k agents, n items), NaN where an agent has no score on an item; ``strata``: the stratum
    label of each item. ``agent_intervals=False`` skips the percentile interval of each ``T_a`` (``low`` and
    ``high`` are NaN) for a caller that reports an interval of its own for the same score (EASEL's board);
    the replicates, hence the differences, P(A > B) and ranks, are the same draws either way. Raises ValueError for an empty or misshapen input, an unknown weighting, a level
    outside (0, 1) or fewer than two resamples."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"values must be (agents ≥ 1, items ≥ 1), got shape {x.shape}")
    if len(strata) != x.shape[1]:
        raise ValueError(f"{len(strata)} stratum labels for {x.shape[1]} items")
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    if int(n_boot) != n_boot or n_boot < 2:
        raise ValueError(f"n_boot must be an integer ≥ 2, got {n_boot!r}")
    k = x.shape[0]
    labels = list(dict.fromkeys(strata))
    members = [np.flatnonzero(np.asarray([s == h for s in strata])) for h in labels]
    present = ~np.isnan(x)
    filled = np.where(present, x, 0.0)

    point = _statistic(np.stack([filled[:, m].sum(axis=1) for m in members], axis=-1),
                       np.stack([present[:, m].sum(axis=1) for m in members], axis=-1), weighting)

    rng = np.random.default_rng(seed)
    sums = np.zeros((n_boot, k, len(labels)))
    counts = np.zeros((n_boot, k, len(labels)))
    for h, m in enumerate(members):
        # one draw of the stratum's items per replicate, shared by every agent (the pairing)
        draws = m[rng.integers(0, len(m), size=(n_boot, len(m)))]
        sums[:, :, h] = filled[:, draws].sum(axis=2).T
        counts[:, :, h] = present[:, draws].sum(axis=2).T
    boot = _statistic(sums, counts, weighting)  # (n_boot, k)

    tail = 50.0 * (1.0 - level)
    low, high = _column_percentiles(boot, tail) if agent_intervals else (np.full(k, np.nan), np.full(k, np.nan))
    diff = boot[:, :, None] - boot[:, None, :]  # (n_boot, k, k)
    diff_low, diff_high = _column_percentiles(diff.reshape(n_boot, k * k), tail)
    finite_pair = np.isfinite(diff)
    wins = np.where(finite_pair, (diff > 0) + 0.5 * (diff == 0), 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_greater = wins / finite_pair.sum(axis=0)
    np.fill_diagonal(p_greater, np.nan)

    complete = boot[np.all(np.isfinite(boot), axis=1)]
    rank_p = np.zeros((k, k))
    rank_low = np.full(k, np.nan)
    rank_high = np.full(k, np.nan)
    if len(complete):
        rank_p, rank_low, rank_high = shared_rank_distribution(complete, tail)
    return PairedBootstrap(
        point=point, low=np.asarray(low), high=np.asarray(high),
        diff_low=diff_low.reshape(k, k), diff_high=diff_high.reshape(k, k), p_greater=p_greater,
        rank_probabilities=rank_p, rank_low=np.asarray(rank_low), rank_high=np.asarray(rank_high),
        n_items=x.shape[1], n_boot=int(n_boot), level=level,
    )


def shared_rank_distribution(replicates: np.ndarray, tail: float, *,
                             tolerance: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank probabilities ``(k, k)`` (rank 0 best) and the central rank range (1-based ``tail`` and
    ``100 − tail`` percentiles) from finite replicates ``(B, k)``, agents that tie in a replicate sharing
    their ranks equally (as P(A > B) counts a tie half).

    A tie is a run of the replicate's sorted scores each within ``tolerance`` of the next (0: equal
    scores). In a replicate where ``e`` agents tie below ``g`` others, each of them holds ranks
    g + 1 … g + e with probability 1/e. They were ordered by index (or by rounding noise) instead: two
    agents with the same score on every item (two EASEL agents that never paint score the blank canvas's S)
    came out rank 1 and rank 2 in every replicate, rank-sets [1, 1] and [2, 2] beside P(A > B) = 0.5. The
    range is the inverted-CDF quantiles of that distribution (the smallest rank whose cumulative share
    reaches the tail), which without ties are the replicates' own ``inverted_cdf`` percentiles."""
    b, k = replicates.shape
    order = np.argsort(-replicates, axis=1, kind="stable")
    ranked = np.take_along_axis(replicates, order, axis=1)
    position = np.broadcast_to(np.arange(k), (b, k))
    starts = np.ones((b, k), bool)  # a sorted position that starts a new group of tied agents
    starts[:, 1:] = (ranked[:, :-1] - ranked[:, 1:]) > tolerance
    ends = np.ones((b, k), bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, position, k)[:, ::-1], axis=1)[:, ::-1]
    above, tied = np.empty((b, k), int), np.empty((b, k), int)
    np.put_along_axis(above, order, first, axis=1)  # agents strictly above each agent's group
    np.put_along_axis(tied, order, last - first + 1, axis=1)  # the group's size, the agent included
    steps = np.zeros((k, k + 1))
    agent = np.broadcast_to(np.arange(k), (b, k))
    np.add.at(steps, (agent, above), 1.0 / tied)
    np.add.at(steps, (agent, above + tied), -1.0 / tied)
    held = np.cumsum(steps, axis=1)[:, :k]  # held[a, r]: replicates (shares of them) where a holds rank r + 1
    cumulative = np.cumsum(held, axis=1)
    eps = 1e-9 * b

    def quantile(share: float) -> np.ndarray:
        return 1.0 + np.argmax(cumulative >= share * b - eps, axis=1)

    return held / b, quantile(tail / 100.0), quantile(1.0 - tail / 100.0)


def _column_percentiles(draws: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentiles of each column over its finite rows (NaN for a column with none)."""
    low = np.full(draws.shape[1], np.nan)
    high = np.full(draws.shape[1], np.nan)
    for c in range(draws.shape[1]):
        column = draws[:, c][np.isfinite(draws[:, c])]
        if len(column):
            low[c], high[c] = np.percentile(column, [tail, 100.0 - tail])
    return low, high


def _number(value, digits: int = 6):
    value = float(value)
    return None if not np.isfinite(value) else round(value, digits)


def bootstrap_payload(result: PairedBootstrap, names: Sequence[str], *, method: str,
                      intervals: Sequence[tuple[float, float, float]] | None = None) -> dict:
    """A result as JSON-ready rows for pages and the API: per agent its score, interval, rank set and rank
    probabilities (agents best first, by ``result.point``), and every ordered pair (A above B on the board)
    with the interval of A − B and P(A > B). ``method`` is the sentence that says how the intervals were made.
    ``intervals``, when given, is each agent's (value, low, high) in the order of ``names``, printed as given
    instead of the bootstrap's own score and interval (a board that already shows one interval for that score)."""
    order = sorted(range(len(names)), key=lambda a: -(result.point[a] if np.isfinite(result.point[a]) else -np.inf))

    def score(a: int) -> dict:
        if intervals is not None:
            return dict(zip(("value", "low", "high"), intervals[a], strict=True))
        return {"value": _number(result.point[a]), "low": _number(result.low[a]), "high": _number(result.high[a])}

    agents = [
        {"name": names[a], "index": a, "rank": r + 1, **score(a),
         "rank_set": [None if not np.isfinite(result.rank_low[a]) else int(result.rank_low[a]),
                      None if not np.isfinite(result.rank_high[a]) else int(result.rank_high[a])],
         "rank_probabilities": [_number(p, 4) for p in result.rank_probabilities[a]]}
        for r, a in enumerate(order)
    ]
    pairs = [
        {"a": names[a], "b": names[b], "difference": _number(result.point[a] - result.point[b]),
         "low": _number(result.diff_low[a, b]), "high": _number(result.diff_high[a, b]),
         "p_a_better": _number(result.p_greater[a, b], 4)}
        for i, a in enumerate(order) for b in order[i + 1:]
    ]
    return {"method": method, "level": result.level, "n_boot": result.n_boot, "n_items": result.n_items,
            "agents": agents, "pairs": pairs}
