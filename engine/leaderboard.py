"""An Ekphrasis leaderboard from judge comparison records (Ekphrasis §4.3, App. F, D.2, K).

Everything the results pages show is computed here, once, into a plain
JSON-serialisable dictionary that the site stores as a snapshot:

* per dimension: the BT fit on the primary decisive comparisons, weighted by
  judge confidence (App. F: w_r is judge confidence), with a small ridge λ so
  that sparse pilot runs still have finite estimates; expected win rates;
  a task-level cluster bootstrap of θ (5th/50th/95th percentiles, App. F.3)
  mapped to expected win rates; rank probabilities and indistinguishable tiers
  (App. F.4); the diagnostic win rate with ties as half wins;
* z per dimension and Overall VCI (§4.3), with bootstrap intervals of Overall
  from the same resampled tasks in every dimension;
* the task-family table (Table 3 shape) and residuals (App. K.2);
* the Usefulness–Novelty trade-off coordinates (Figure 3B);
* judge reliability (Tables 11–12) and calls by layer (Table 9 shape).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.bt import (
    TIER_ZERO_TOL,
    bootstrap_tiers,
    diagnostic_winrate,
    expected_winrate,
    fit_win_matrices,
    fit_win_matrix,
    rank_probabilities,
    task_win_matrices,
)
from engine.paired_bootstrap import shared_rank_distribution
from engine.reliability import ComparisonRecord, judge_reliability
from engine.scoring import dimensions_without_spread, family_table, tradeoff_percentiles, vci_scores

__all__ = ["LEADERBOARD_L2", "MIN_MODELS_FOR_Z", "JudgedComparison", "board_uncertainty", "build_leaderboard"]

#: Ridge λ of the leaderboard fits: keeps θ finite when a model never loses in a small run.
LEADERBOARD_L2 = 0.01
#: z standardises over the pool; with two models it is ±1 whatever the data (population SD of two
#: values is half their distance), so z and Overall VCI are reported from three models up.
MIN_MODELS_FOR_Z = 3
#: Rank-probability draws from N(θ̂, Σ̂).
RANK_DRAWS = 10000


@dataclass(frozen=True)
class JudgedComparison:
    """A judge call as the leaderboard needs it: the reliability record plus weight and family.

    ``kind`` "automatic" (empty responses, App. F.2) enters the BT fit like a primary
    call but is left out of the judge's reliability diagnostics.
    """

    record: ComparisonRecord
    confidence: float
    family: str
    automatic: bool = False


def _task_wins(comparisons: Sequence[JudgedComparison], n: int):
    """Per-task win matrices of the decisive comparisons, weighted by judge confidence (App. F: w_r),
    or None when every comparison is a tie."""
    decisive = [c for c in comparisons if c.record.winner != "tie"]
    if not decisive:
        return None
    winners = [c.record.winning_model for c in decisive]
    losers = [c.record.model_b if c.record.winner == "A" else c.record.model_a for c in decisive]
    weights = [max(c.confidence, 1e-3) for c in decisive]
    return task_win_matrices([c.record.task for c in decisive], winners, losers, n, weights)


def _fit_dimension(comparisons: Sequence[JudgedComparison], n: int):
    wins = _task_wins(comparisons, n)
    if wins is None:
        return None
    task_ids, per_task = wins
    return fit_win_matrix(per_task.sum(axis=0), l2=LEADERBOARD_L2), task_ids, per_task


def _bootstrap_thetas(per_task_by_dim, fits, all_tasks, n_boot: int, seed: int) -> dict[str, np.ndarray]:
    """Resample tasks once and refit every dimension on the same draw (App. F.3), so that
    Overall VCI gets an interval consistent across dimensions."""
    rng = np.random.default_rng(seed)
    n_tasks = len(all_tasks)
    counts = rng.multinomial(n_tasks, np.full(n_tasks, 1.0 / n_tasks), size=n_boot).astype(float)
    index = {t: k for k, t in enumerate(all_tasks)}
    out = {}
    for dim, (task_ids, per_task) in per_task_by_dim.items():
        columns = counts[:, [index[t] for t in task_ids]]
        n = per_task.shape[1]
        # replicate win matrix Σ_t count_bt W_t: tasks resampled with replacement (App. F.3 task-level bootstrap)
        boot_wins = (columns @ per_task.reshape(len(task_ids), n * n)).reshape(n_boot, n, n)
        out[dim] = fit_win_matrices(boot_wins, l2=LEADERBOARD_L2, theta0=fits[dim].theta)
    return out


def _rounded(values, digits: int = 6):
    return [None if v is None or not np.isfinite(v) else round(float(v), digits) for v in np.asarray(values, dtype=float)]


def build_leaderboard(
    comparisons: Sequence[JudgedComparison],
    models: Sequence[str],
    *,
    dimensions: Sequence[str] = ("U", "E", "N"),
    n_boot: int = 1000,
    seed: int = 42,
) -> dict:
    """The full leaderboard payload for ``models`` (indices in the records are positions in ``models``)."""
    return _build(comparisons, models, dimensions=dimensions, n_boot=n_boot, seed=seed)[0]


def board_uncertainty(
    comparisons: Sequence[JudgedComparison],
    models: Sequence[str],
    *,
    dimensions: Sequence[str] = ("U", "E", "N"),
    n_boot: int = 1000,
    seed: int = 42,
    summary_only: bool = False,
) -> dict:
    """What the stored payload leaves out, from the very replicates :func:`build_leaderboard` draws (same
    records, ``n_boot`` and ``seed``: the same resampled tasks):

    * ``overall_tiers``: tiers of Overall (VCI, or the mean win rate in a small pool) by the rule of the
      per-dimension tiers (:func:`engine.bt.bootstrap_tiers`, 90%: neighbours share a tier when the
      interval of their paired bootstrap difference contains 0 and their own intervals overlap);
    * ``z_ci90``: per dimension the 5th/95th percentiles of z(m, d) = (s*(m, d) − μ*_d)/σ*_d recomputed in
      every replicate (Ekphrasis §4.3), the interval of the z a family table (Table 3) prints;
    * ``payload``: the board itself.

    Run on a family's (or subtype's) comparisons only, this is that slice's board with its intervals.

    With ``summary_only`` the payload leaves out what a slice's summary never reads — rank probabilities,
    the family table, the trade-off, judge reliability and budget — all computed after the bootstrap from
    their own seeds, so every number kept is the one the full payload holds (a third of the time saved)."""
    payload, boot_overall, boot_winrates = _build(comparisons, models, dimensions=dimensions, n_boot=n_boot, seed=seed,
                                                  extras=not summary_only)
    point = np.asarray([np.nan if v is None else v for v in payload["overall"]], dtype=float)
    finite = boot_overall[np.all(np.isfinite(boot_overall), axis=1)]
    tiers = bootstrap_tiers(finite, point, level=0.90) if len(finite) >= 2 and np.isfinite(point).all() else []
    z_ci90 = {}
    if payload["z_available"]:
        for d, w in boot_winrates.items():
            with np.errstate(invalid="ignore", divide="ignore"):
                # z(m,d) = (s(m,d) − μ_d)/σ_d in every replicate, σ the population SD (Ekphrasis §4.3)
                z = (w - w.mean(axis=1, keepdims=True)) / w.std(axis=1, keepdims=True)
            z = z[np.all(np.isfinite(z), axis=1)]
            z_ci90[d] = [_rounded(np.percentile(z, 5, axis=0)), _rounded(np.percentile(z, 95, axis=0))] if len(z) else None
    return {"payload": payload, "overall_tiers": tiers, "z_ci90": z_ci90,
            "tier_rule": "neighbours share a tier when the 90% bootstrap interval of their paired Overall difference "
                         "contains 0 and their 90% intervals overlap (as the per-dimension tiers, App. F.4)"}


def _build(
    comparisons: Sequence[JudgedComparison],
    models: Sequence[str],
    *,
    dimensions: Sequence[str],
    n_boot: int,
    seed: int,
    extras: bool = True,
) -> tuple[dict, np.ndarray, dict[str, np.ndarray]]:
    """The payload, Overall's bootstrap replicates (n_boot, n) and each dimension's replicated win rates;
    without ``extras`` no rank probabilities, family table, trade-off, reliability or budget."""
    n = len(models)
    if n < 2:
        raise ValueError("a leaderboard needs at least two models")
    by_dim: dict[str, list[JudgedComparison]] = defaultdict(list)
    for c in comparisons:
        if c.record.kind == "primary" or c.automatic:
            by_dim[c.record.dimension].append(c)
    dims = [d for d in dimensions if by_dim.get(d)]
    if not dims:
        raise ValueError("no primary comparisons to rank")

    fits, per_task_by_dim, winrates, dim_payload = {}, {}, {}, {}
    for d in dims:
        fitted = _fit_dimension(by_dim[d], n)
        if fitted is None:
            # Every verdict a tie: nothing enters the likelihood (App. F.2), so the ridge fit is θ = 0 and every
            # model's expected win rate 0.5 — the dimension stays on the board (z is then undefined, §4.3)
            # rather than being dropped and leaving "Overall" to the other dimensions.
            fitted = (fit_win_matrix(np.zeros((n, n)), l2=LEADERBOARD_L2), np.array([], dtype=object),
                      np.zeros((0, n, n)))
        fit, task_ids, per_task = fitted
        fits[d], per_task_by_dim[d] = fit, (task_ids, per_task)
        winrates[d] = expected_winrate(fit.theta)
    # The bootstrap resamples every task with a primary or automatic record (App. F.3), ties-only tasks included.
    all_tasks = sorted({c.record.task for d in dims for c in by_dim[d]}, key=str)
    boot = _bootstrap_thetas(per_task_by_dim, fits, all_tasks, n_boot, seed)

    boot_winrates = {d: np.apply_along_axis(expected_winrate, 1, boot[d]) for d in dims}
    # z needs ≥ 3 models: with two, z = ±1 in every replicate and Overall's interval collapses to [1, 1]. It also
    # needs a spread on every dimension: where every model has the same expected win rate (σ_d = 0, as when a small
    # run's verdicts form a cycle) z = (s − μ)/σ is undefined (Ekphrasis §4.3). Either way the board ranks as a
    # small pool does, by the mean expected win rate.
    alike = dimensions_without_spread({d: winrates[d] for d in dims})
    z_available = n >= MIN_MODELS_FOR_Z and not alike
    if z_available:
        # Overall VCI per bootstrap replicate: z of each dimension's expected win rate, averaged (§4.3).
        # A replicate where every model scores alike has no z (σ = 0): it is left out (NaN) of the percentiles.
        with np.errstate(invalid="ignore", divide="ignore"):
            boot_overall = np.mean(
                [(w - w.mean(axis=1, keepdims=True)) / w.std(axis=1, keepdims=True) for w in boot_winrates.values()],
                axis=0,
            )
        scores = vci_scores({d: winrates[d] for d in dims})
    else:
        # Small pool: rank by the mean expected win rate over dimensions, and its bootstrap.
        boot_overall = np.mean(list(boot_winrates.values()), axis=0)
        scores = None

    for d in dims:
        w_count, l_count, t_count = np.zeros(n), np.zeros(n), np.zeros(n)
        for c in by_dim[d]:
            a, b = c.record.model_a, c.record.model_b
            if c.record.winner == "tie":
                t_count[a] += 1
                t_count[b] += 1
            else:
                winner = c.record.winning_model
                loser = b if winner == a else a
                w_count[winner] += 1
                l_count[loser] += 1
        pair_wins, pair_n = np.zeros((n, n)), np.zeros((n, n))
        for c in by_dim[d]:
            a, b = c.record.model_a, c.record.model_b
            pair_n[a, b] += 1
            pair_n[b, a] += 1
            if c.record.winner == "tie":
                pair_wins[a, b] += 0.5
                pair_wins[b, a] += 0.5
            else:
                winner = c.record.winning_model
                pair_wins[winner, b if winner == a else a] += 1
        # 5th and 95th percentiles of the task-bootstrap replicates (Ekphrasis App. F.3)
        lo, hi = np.percentile(boot_winrates[d], [5, 95], axis=0)
        theta_lo, theta_hi = np.percentile(boot[d], [5, 95], axis=0)
        dim_payload[d] = {
            "theta": _rounded(fits[d].theta),
            "theta_ci90": [_rounded(theta_lo), _rounded(theta_hi)],
            "se": _rounded(fits[d].se),
            "winrate": _rounded(winrates[d]),
            "winrate_ci90": [_rounded(lo), _rounded(hi)],
            "z": _rounded(scores.z[d]) if scores is not None else [None] * n,
            "diagnostic_winrate": _rounded(diagnostic_winrate(w_count, l_count, t_count)),
            "wins": _rounded(w_count, 0), "losses": _rounded(l_count, 0), "ties": _rounded(t_count, 0),
            "rank_probabilities": [_rounded(row, 4) for row in rank_probabilities(fits[d], RANK_DRAWS, seed)]
            if extras else None,
            # Tiers from the same 90% bootstrap as the intervals, so they never contradict them (App. F.4).
            "tiers": bootstrap_tiers(boot_winrates[d], winrates[d], level=0.90),
            "tier_rule": "neighbours share a tier when the 90% bootstrap interval of their paired difference "
                         "contains 0 and their 90% intervals overlap",
            # Observed pairwise win rate of row over column, ties as half a win (App. F diagnostic).
            "pairwise_winrate": [
                [None if r == c or pair_n[r, c] == 0 else round(float(pair_wins[r, c] / pair_n[r, c]), 4) for c in range(n)]
                for r in range(n)
            ],
            "pairwise_n": [[int(v) for v in row] for row in pair_n],
            "n_comparisons": len(by_dim[d]),
        }

    boot_overall_all = boot_overall
    overall_lo, overall_hi = np.nanpercentile(boot_overall, [5, 95], axis=0)
    point = scores.overall if scores is not None else np.mean([winrates[d] for d in dims], axis=0)
    # Overall ranks per replicate → rank probabilities of Overall VCI from the bootstrap. Models within
    # TIER_ZERO_TOL of each other in a replicate share their ranks: two models with the same record against the
    # same opponents differ by rounding only (7e-15), which ranked one of them first in 87 % of replicates.
    boot_overall = boot_overall[np.all(np.isfinite(boot_overall), axis=1)]
    overall_rank_p = shared_rank_distribution(boot_overall, 5.0, tolerance=TIER_ZERO_TOL)[0]

    payload: dict = {
        "models": list(models),
        "dimensions": dims,
        "z_available": z_available,
        "overall_measure": _overall_measure(n, alike),
        "overall": _rounded(point),
        "overall_ci90": [_rounded(overall_lo), _rounded(overall_hi)],
        "overall_rank_probabilities": [_rounded(row, 4) for row in overall_rank_p],
        "order": [int(i) for i in np.argsort(-point, kind="stable")],
        "per_dimension": dim_payload,
        "n_boot": n_boot,
        "seed": seed,
        "l2": LEADERBOARD_L2,
        "interval": "90% task-level cluster bootstrap (5th-95th percentiles), Ekphrasis App. F.3",
    }
    if not extras:
        return payload, boot_overall_all, boot_winrates
    payload["families"] = _families(by_dim, dims, n, winrates) if z_available else {}
    if "U" in dims and "N" in dims:
        u_pct, n_pct = tradeoff_percentiles(winrates["U"], winrates["N"])
        payload["tradeoff"] = {"usefulness_pct": _rounded(u_pct, 2), "novelty_pct": _rounded(n_pct, 2)}
    judged = [c.record for c in comparisons if not c.automatic]
    payload["reliability"] = _json_safe(judge_reliability(judged, n)) if judged else {}
    payload["budget"] = _budget(comparisons)
    return payload, boot_overall_all, boot_winrates


def _overall_measure(n: int, alike: list[str]) -> str:
    """What Overall is on this board, and why z is missing when it is."""
    if n < MIN_MODELS_FOR_Z:
        return f"mean expected win rate over dimensions (z needs at least {MIN_MODELS_FOR_Z} models)"
    if alike:
        return (f"mean expected win rate over dimensions (z is undefined: every model has the same expected win "
                f"rate on {', '.join(alike)})")
    return "Overall VCI (mean z over dimensions)"


def _families(by_dim, dims, n: int, winrates) -> dict:
    families = sorted({c.family for d in dims for c in by_dim[d]})
    fam_rates: dict[str, dict[str, np.ndarray]] = {}
    for f in families:
        rates = {}
        for d in dims:
            fitted = _fit_dimension([c for c in by_dim[d] if c.family == f], n)
            if fitted is None:
                break
            rates[d] = expected_winrate(fitted[0].theta)
        if len(rates) == len(dims):
            fam_rates[f] = rates
    if not fam_rates:
        return {}
    try:
        table = family_table(fam_rates, {d: winrates[d] for d in dims})
    except ValueError:
        return {}  # a family where every model scored alike has no z
    return {
        f: {
            "z": {d: _rounded(table.z[f][d]) for d in dims},
            "task_avg": _rounded(table.task_avg[f]),
            "residual": {d: round(table.residuals[f][d], 6) for d in dims},
        }
        for f in fam_rates
    }


def _budget(comparisons: Sequence[JudgedComparison]) -> dict:
    calls = Counter()
    repaired = Counter()
    for c in comparisons:
        layer = "automatic" if c.automatic else c.record.kind
        calls[(layer, c.record.dimension)] += 1
        repaired[layer] += int(c.record.repaired)
    layers = sorted({layer for layer, _ in calls})
    return {
        "calls": {layer: {d: calls[(layer, d)] for (lay, d) in calls if lay == layer} for layer in layers},
        "judge_calls_total": sum(v for (layer, _), v in calls.items() if layer != "automatic"),
        "repaired": dict(repaired),
    }


def _json_safe(value):
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return None if not np.isfinite(value) else round(float(value), 6)
    if isinstance(value, np.integer):
        return int(value)
    return value
