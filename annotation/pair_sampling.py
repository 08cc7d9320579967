"""Sampling of validation pairs for human campaigns (Ekphrasis App. H.5): per task, pairs drawn from the
judge's ranking in strata (top–bottom, top–middle, middle–middle, trade-off) with quotas. Reachable from
:mod:`annotation.selectors` under the same names."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

#: Default pairs per task and per-stratum quotas for validation pairs (App. H.5: six per task).
PAIRS_PER_TASK = 6
STRATUM_QUOTAS = (("top_bottom", 2), ("top_middle", 1), ("middle_middle", 1), ("tradeoff", 2))
RANDOM_ORDER = "random_order"


@dataclass(frozen=True)
class SampledPair:
    model_a: Any
    model_b: Any
    stratum: str


def _tiers(ordered: Sequence[Any]) -> dict[Any, str]:
    n = len(ordered)
    size = max(1, round(n / 3))
    tiers = {}
    for rank, model in enumerate(ordered):
        tiers[model] = "top" if rank < size else "bottom" if rank >= n - size else "middle"
    return tiers


def validation_pairs_sample(
    *, models: Sequence[Any], ranking: Mapping[Any, float] | None, other_rankings: Sequence[Mapping[Any, float]] = (),
    n_pairs: int = PAIRS_PER_TASK, rng: random.Random | None = None,
) -> list[SampledPair]:
    """Model pairs for one task (Ekphrasis App. H.5): top–bottom, top–middle, middle–middle and
    dimension trade-off pairs from the current judge ranking, ``n_pairs`` per task (default 6, with
    quotas 2 / 1 / 1 / 2; a stratum short of pairs is filled from the others).

    ``ranking`` maps model -> θ for the current dimension. A trade-off pair is ordered one way by
    ``ranking`` and the other way by one of ``other_rankings`` (e.g. a highly expressive response
    against a more novel but less polished one). With no ranking (no judge run yet) the pairs are
    drawn in a random order, independent of response length, and every stratum is "random_order".
    """
    rng = rng or random.Random(0)
    models = list(dict.fromkeys(models))
    all_pairs = list(combinations(models, 2))
    if len(models) < 2:
        return []
    if not ranking:
        rng.shuffle(all_pairs)
        return [SampledPair(a, b, RANDOM_ORDER) for a, b in all_pairs[:n_pairs]]
    ordered = sorted((m for m in models if m in ranking), key=lambda m: (-float(ranking[m]), str(m)))
    ordered += [m for m in models if m not in ranking]
    rank = {m: i for i, m in enumerate(ordered)}
    tiers = _tiers(ordered)
    buckets: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
    for a, b in all_pairs:
        a, b = (a, b) if rank[a] < rank[b] else (b, a)
        buckets[f"{tiers[a]}_{tiers[b]}"].append((a, b))
    for name, pairs in buckets.items():
        # extremes first for top–bottom; otherwise random within the stratum
        if name == "top_bottom":
            pairs.sort(key=lambda p: (rank[p[0]], -rank[p[1]]))
        else:
            rng.shuffle(pairs)
    tradeoffs: list[tuple[float, tuple[Any, Any]]] = []
    for other in other_rankings:
        for a, b in all_pairs:
            if a in other and b in other and a in ranking and b in ranking:
                d_here = float(ranking[a]) - float(ranking[b])
                d_there = float(other[a]) - float(other[b])
                if d_here * d_there < 0:
                    tradeoffs.append((abs(d_here) * abs(d_there), (a, b) if d_here > 0 else (b, a)))
    tradeoffs.sort(key=lambda t: -t[0])
    buckets["tradeoff"] = [p for _, p in tradeoffs]
    chosen: list[SampledPair] = []
    used: set[frozenset] = set()

    def take(stratum: str, limit: int) -> None:
        for a, b in buckets.get(stratum, []):
            if len([c for c in chosen if c.stratum == stratum]) >= limit or len(chosen) >= n_pairs:
                return
            if frozenset((a, b)) not in used:
                used.add(frozenset((a, b)))
                chosen.append(SampledPair(a, b, stratum))

    for stratum, quota in STRATUM_QUOTAS:
        take(stratum, quota)
    for stratum in ("top_middle", "middle_bottom", "middle_middle", "top_bottom", "tradeoff", "top_top", "bottom_bottom"):
        take(stratum, n_pairs)
    return chosen[:n_pairs]
