"""Judge reliability diagnostics per dimension (Ekphrasis App. D.2, Tables 11 and 12).

Input is a flat list of :class:`ComparisonRecord` — one judge call each, with its role:

* ``primary`` — the leaderboard judgment (active BT sampling);
* ``swap`` — the same pair re-judged with A and B exchanged (order-swap diagnostics);
* ``duplicate`` — a repeated judgment of a fixed sampled pair in the same order (repeatability);
* ``auxiliary`` — the same pair judged by another judge model (``judge`` names it).

:func:`judge_reliability` returns, per dimension, the diagnostics of Tables 11–12:

==============================  ============================================================================
key                             definition
==============================  ============================================================================
``json_repair_rate``            share of primary calls whose JSON needed repair
``tie_rate``                    share of primary calls judged a tie
``a_position_bias_pp``          (share of decisive primary calls won by position A − 0.5) × 100, in points
``swap_decisive_consistency``   among primary/swap pairs decisive both times, share with the same winning model
``primary_swap_rank_corr``      Spearman ρ between BT skills fitted on those pairs' primary and swap judgments
``winner_longer_rate``          among decisive primary calls with unequal lengths, share won by the longer one
``duplicate_consistency``       share of agreeing label pairs (A/B/tie, same model orientation) among repeats
``aux_rank_corr``               per auxiliary judge: Spearman ρ between its BT skills and the primary BT skills
``aux_repair_rate``             per auxiliary judge: share of its calls whose JSON needed repair
==============================  ============================================================================

A diagnostic with no data is ``None`` (Table 12 prints "n/a"). Sample sizes are reported beside each
rate (``n_*`` keys). BT fits here use a small ridge :data:`DIAGNOSTIC_L2` so that sparse diagnostic
subsets (e.g. 100 auxiliary calls over 14 models) still give finite skills.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from engine.bt import fit_win_matrix

__all__ = ["ComparisonRecord", "judge_reliability", "DIAGNOSTIC_L2", "RECORD_KINDS"]

#: Ridge λ for the diagnostic BT fits (primary vs swap, auxiliary vs primary).
DIAGNOSTIC_L2 = 0.01
#: Roles a judge call can have.
RECORD_KINDS = ("primary", "swap", "duplicate", "auxiliary")
_WINNERS = ("A", "B", "tie")


@dataclass(frozen=True)
class ComparisonRecord:
    """One judge call on one pair for one dimension.

    Attributes:
        task: task id.
        dimension: evaluation dimension, e.g. "U", "E", "N".
        model_a, model_b: the models shown in positions A and B.
        winner: "A", "B" or "tie" (position labels, as the judge answered).
        kind: "primary", "swap", "duplicate" or "auxiliary".
        repaired: the judge's JSON needed repair before it parsed.
        len_a, len_b: lengths of the two responses (characters or tokens, consistently).
        pair_key: links a swap / duplicate / auxiliary call to its primary call. Default: the task and
            the unordered model pair (enough when a pair is judged once per task and dimension).
        repeat: index of a duplicate judgment (0, 1, …).
        judge: judge model id (auxiliary judges are told apart by it).
    """

    task: str
    dimension: str
    model_a: int | str
    model_b: int | str
    winner: Literal["A", "B", "tie"]
    kind: Literal["primary", "swap", "duplicate", "auxiliary"] = "primary"
    repaired: bool = False
    len_a: int = 0
    len_b: int = 0
    pair_key: str | None = None
    repeat: int = 0
    judge: str = "primary"

    def __post_init__(self) -> None:
        if self.winner not in _WINNERS:
            raise ValueError(f"winner must be one of {_WINNERS}, got {self.winner!r}")
        if self.kind not in RECORD_KINDS:
            raise ValueError(f"kind must be one of {RECORD_KINDS}, got {self.kind!r}")
        if self.model_a == self.model_b:
            raise ValueError(f"a comparison needs two different models, got {self.model_a!r} twice")

    @property
    def key(self) -> Hashable:
        """The pair identity used to match primary, swap, duplicate and auxiliary calls."""
        if self.pair_key is not None:
            return self.pair_key
        a, b = sorted((str(self.model_a), str(self.model_b)))
        return (self.task, a, b)

    @property
    def winning_model(self) -> int | str | None:
        """The model that won (None for a tie)."""
        return {"A": self.model_a, "B": self.model_b}.get(self.winner)


def _index(models: int | Sequence[int | str]) -> dict[int | str, int]:
    if isinstance(models, (int, np.integer)):
        if models < 2:
            raise ValueError("need at least two models")
        return {m: m for m in range(int(models))}
    ids = list(models)
    if len(set(ids)) != len(ids) or len(ids) < 2:
        raise ValueError("models must list at least two distinct model ids")
    return {m: i for i, m in enumerate(ids)}


def _wins(records: Iterable[ComparisonRecord], index: dict[int | str, int]) -> np.ndarray:
    n = len(index)
    w = np.zeros((n, n))
    for r in records:
        if r.winner == "tie":
            continue
        win, lose = (r.model_a, r.model_b) if r.winner == "A" else (r.model_b, r.model_a)
        w[index[win], index[lose]] += 1.0
    return w


def _rank_corr(w1: np.ndarray, w2: np.ndarray) -> float | None:
    if w1.sum() == 0 or w2.sum() == 0:
        return None
    t1 = fit_win_matrix(w1, l2=DIAGNOSTIC_L2).theta
    t2 = fit_win_matrix(w2, l2=DIAGNOSTIC_L2).theta
    if np.ptp(t1) == 0 or np.ptp(t2) == 0:
        return None
    return float(stats.spearmanr(t1, t2).statistic)


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _oriented(record: ComparisonRecord) -> str:
    """The label from the point of view of the lower-sorted model of the pair ("first", "second", "tie")."""
    if record.winner == "tie":
        return "tie"
    first = sorted((str(record.model_a), str(record.model_b)))[0]
    return "first" if str(record.winning_model) == first else "second"


def judge_reliability(
    records: Iterable[ComparisonRecord], models: int | Sequence[int | str]
) -> dict[str, dict[str, object]]:
    """Tables 11–12 diagnostics per dimension (see the module docstring for each key).

    Args:
        records: judge calls of every kind and dimension.
        models: the number of models (ids 0..n−1) or the list of model ids used in the records.

    Returns:
        ``{dimension: {diagnostic: value}}``; rates are fractions in [0, 1] except the position bias,
        which is in percentage points; a diagnostic without data is None.
    """
    index = _index(models)
    by_dim: dict[str, list[ComparisonRecord]] = defaultdict(list)
    for r in records:
        if r.model_a not in index or r.model_b not in index:
            raise ValueError(f"record names a model not in models: {r.model_a!r} vs {r.model_b!r}")
        by_dim[r.dimension].append(r)
    return {dim: _dimension_report(recs, index) for dim, recs in sorted(by_dim.items())}


def _dimension_report(recs: list[ComparisonRecord], index: dict[int | str, int]) -> dict[str, object]:
    primary = [r for r in recs if r.kind == "primary"]
    swaps = [r for r in recs if r.kind == "swap"]
    dups = [r for r in recs if r.kind == "duplicate"]
    aux = [r for r in recs if r.kind == "auxiliary"]
    out: dict[str, object] = {"n_primary": len(primary)}

    # Table 11: format and order diagnostics
    out["json_repair_rate"] = _rate(sum(r.repaired for r in primary), len(primary))
    out["tie_rate"] = _rate(sum(r.winner == "tie" for r in primary), len(primary))
    decisive = [r for r in primary if r.winner != "tie"]
    a_share = _rate(sum(r.winner == "A" for r in decisive), len(decisive))
    # position bias = (share of decisive outcomes won by A − 0.5) in points (Ekphrasis Table 11)
    out["a_position_bias_pp"] = None if a_share is None else 100.0 * (a_share - 0.5)
    out["n_primary_decisive"] = len(decisive)

    first_primary: dict[Hashable, ComparisonRecord] = {}
    for r in primary:
        first_primary.setdefault(r.key, r)
    matched = [(first_primary[s.key], s) for s in swaps if s.key in first_primary]
    both = [(p, s) for p, s in matched if p.winner != "tie" and s.winner != "tie"]
    # swap decisive consistency = share of decisive/decisive swap pairs naming the same winning model
    out["swap_decisive_consistency"] = _rate(sum(p.winning_model == s.winning_model for p, s in both), len(both))
    out["n_swap_decisive_pairs"] = len(both)
    out["primary_swap_rank_corr"] = (
        _rank_corr(_wins([p for p, _ in matched], index), _wins([s for _, s in matched], index)) if matched else None
    )

    # Table 12: length, duplicate and auxiliary diagnostics
    unequal = [r for r in decisive if r.len_a != r.len_b]
    longer_won = sum((r.len_a > r.len_b) == (r.winner == "A") for r in unequal)
    out["winner_longer_rate"] = _rate(longer_won, len(unequal))
    out["n_winner_longer"] = len(unequal)

    groups: dict[Hashable, list[str]] = defaultdict(list)
    for r in dups:
        groups[r.key].append(_oriented(r))
    agree = total = 0
    for labels in groups.values():
        for i in range(len(labels)):
            for j in range(i + 1, len(labels)):
                agree += labels[i] == labels[j]
                total += 1
    # duplicate consistency = agreeing pairs of repeated judgments / all such pairs
    out["duplicate_consistency"] = _rate(agree, total)
    out["n_duplicate_pairs"] = total

    primary_wins = _wins(primary, index)
    aux_corr: dict[str, float | None] = {}
    aux_repair: dict[str, float | None] = {}
    for judge in sorted({r.judge for r in aux}):
        mine = [r for r in aux if r.judge == judge]
        aux_corr[judge] = _rank_corr(_wins(mine, index), primary_wins)
        aux_repair[judge] = _rate(sum(r.repaired for r in mine), len(mine))
    out["aux_rank_corr"] = aux_corr
    out["aux_repair_rate"] = aux_repair
    return out
