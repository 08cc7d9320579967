"""Sampling of source variables S_t ~ P_f under each grid cell's constraint (Ekphrasis Algorithm 1
line 6, Table 2, App. B Figures 6–8).

* Abstraction: nouns of the cell's subtype whose Zipf frequency (``wordfreq``'s bundled English data,
  offline) lies inside the subtype's frequency belt, the [P10, P90] interval of that subtype's
  frequencies (:data:`FREQUENCY_BELT_PERCENTILES`), "to avoid extremely rare or ubiquitous lexical
  items" (Fig. 6).
* Combination: concept pairs of one pair type (AA, AC, CC), stratified by the cosine distance of their
  MiniLM embeddings into near / medium / far bands at the [P25, P75] percentiles of that pair type's
  distances (:data:`COMBINATION_BAND_PERCENTILES`; Fig. 7).
* Transformation: object × condition pairs of one subtype, bucketed near / medium / far at the
  terciles of their embedding distances (:data:`TRANSFORMATION_BUCKET_PERCENTILES`; Fig. 8).
* Adaptation: the domain's situations, each with its constraint set.

Every sampler returns an ordered stream of candidates' source variables for one cell, shuffled by a
``random.Random`` the caller seeds; the builder takes from the stream until the quota is met.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.task_construction.grid import COMBINATION_BANDS, TRANSFORMATION_BUCKETS
from engine.task_construction.pools import PoolRecord

__all__ = [
    "COMBINATION_BAND_PERCENTILES",
    "FREQUENCY_BELT_PERCENTILES",
    "REPETITION_CAP",
    "TRANSFORMATION_BUCKET_PERCENTILES",
    "FrequencyBelt",
    "PairStrata",
    "cosine_distances",
    "frequency_belt",
    "stratify_pairs",
    "wordfreq_zipf",
]

#: Fig. 6's belt: the P10–P90 interval of a subtype's Zipf frequencies (the demo's choice; the paper shades it without numbers).
FREQUENCY_BELT_PERCENTILES = (10.0, 90.0)
#: Combination distance bands: near ≤ P25 < medium ≤ P75 < far, per pair type.
COMBINATION_BAND_PERCENTILES = (25.0, 75.0)
#: Transformation buckets: terciles of the object–condition distances, per subtype.
TRANSFORMATION_BUCKET_PERCENTILES = (100.0 / 3.0, 200.0 / 3.0)
#: Table 2's repetition cap: a concept (Combination) or object (Transformation) enters at most this many kept tasks of its family.
REPETITION_CAP = 2


def wordfreq_zipf(word: str) -> float:
    """Zipf frequency (log10 of occurrences per billion words) from wordfreq's bundled English lists;
    0.0 for an unknown word. Offline: wordfreq ships its data in the package."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "en"))


@dataclass(frozen=True)
class FrequencyBelt:
    """One Abstraction subtype's frequencies and its belt (the shaded interval of Fig. 6)."""

    subtype: str
    frequencies: dict[str, float]  # concept -> Zipf
    low: float
    high: float

    def inside(self, concept: str) -> bool:
        return self.low <= self.frequencies[concept] <= self.high

    def to_dict(self) -> dict:
        return {"subtype": self.subtype, "low": self.low, "high": self.high, "frequencies": self.frequencies}


def frequency_belt(subtype: str, records: Sequence[PoolRecord], frequency: Callable[[str], float] = wordfreq_zipf,
                   percentiles: tuple[float, float] = FREQUENCY_BELT_PERCENTILES) -> FrequencyBelt:
    """The subtype's belt [P_lo, P_hi] of its nouns' Zipf frequencies (a pool norm ``zipf`` overrides wordfreq)."""
    freqs = {r.concept: float(r.norms["zipf"]) if "zipf" in r.norms else frequency(r.concept) for r in records}
    if not freqs:
        return FrequencyBelt(subtype, {}, 0.0, 0.0)
    # belt = [P10, P90] of the subtype's Zipf values (linear interpolation, numpy's default)
    low, high = np.percentile(np.fromiter(freqs.values(), float), percentiles)
    return FrequencyBelt(subtype, freqs, float(low), float(high))


def cosine_distances(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """1 − cos(u, v) for L2-normalised rows (MiniLM rows are normalised): a (len(left), len(right)) matrix."""
    # cosine distance = 1 − u·v for unit vectors
    return 1.0 - np.clip(left @ right.T, -1.0, 1.0)


@dataclass(frozen=True)
class PairStrata:
    """Candidate pairs of one pair type or subtype, split into distance strata at percentile edges."""

    name: str
    edges: tuple[float, float]  # distance values at the two percentiles
    strata: dict[str, list[tuple[str, str, float]]]  # stratum -> [(first, second, distance)]

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self.strata.items()}


def stratify_pairs(name: str, pairs: Sequence[tuple[str, str]], distances: Sequence[float],
                   percentiles: tuple[float, float], labels: Sequence[str], rng: random.Random) -> PairStrata:
    """Split ``pairs`` into three strata at the distance percentiles; each stratum shuffled by ``rng``."""
    values = np.asarray(distances, float)
    if len(values) == 0:
        return PairStrata(name, (0.0, 0.0), {label: [] for label in labels})
    lo, hi = (float(v) for v in np.percentile(values, percentiles))
    strata: dict[str, list[tuple[str, str, float]]] = {label: [] for label in labels}
    for (first, second), d in zip(pairs, values, strict=True):
        # near: d ≤ P_lo; medium: P_lo < d ≤ P_hi; far: d > P_hi
        label = labels[0] if d <= lo else labels[1] if d <= hi else labels[2]
        strata[label].append((first, second, float(d)))
    for rows in strata.values():
        rows.sort()  # a fixed order before the seeded shuffle, whatever order the pairs came in
        rng.shuffle(rows)
    return PairStrata(name, (lo, hi), strata)


def combination_strata(pair_type: str, abstract: Sequence[str], concrete: Sequence[str],
                       vectors: dict[str, np.ndarray], rng: random.Random) -> PairStrata:
    """AA, AC or CC pairs with their embedding-distance bands (Table 5's Combination rows)."""
    if pair_type == "AA":
        pairs = list(itertools.combinations(sorted(abstract), 2))
    elif pair_type == "CC":
        pairs = list(itertools.combinations(sorted(concrete), 2))
    elif pair_type == "AC":
        pairs = [(a, c) for a in sorted(abstract) for c in sorted(concrete)]
    else:
        raise ValueError(f"unknown pair type {pair_type!r}")
    if pairs:
        left = np.stack([vectors[a] for a, _ in pairs])
        right = np.stack([vectors[b] for _, b in pairs])
        # row-wise cosine distance 1 − u·v
        distances = (1.0 - np.clip(np.einsum("ij,ij->i", left, right), -1.0, 1.0)).tolist()
    else:
        distances = []
    return stratify_pairs(pair_type, pairs, distances, COMBINATION_BAND_PERCENTILES, COMBINATION_BANDS, rng)


def transformation_strata(subtype: str, objects: Sequence[str], conditions: Sequence[str],
                          vectors: dict[str, np.ndarray], rng: random.Random) -> PairStrata:
    """Object × condition pairs of one Transformation subtype in near / medium / far buckets (Fig. 8)."""
    pairs = [(o, r) for o in sorted(objects) for r in sorted(conditions)]
    if not pairs:
        return stratify_pairs(subtype, [], [], TRANSFORMATION_BUCKET_PERCENTILES, TRANSFORMATION_BUCKETS, rng)
    left = np.stack([vectors[o] for o, _ in pairs])
    right = np.stack([vectors[r] for _, r in pairs])
    # row-wise cosine distance 1 − u·v
    distances = 1.0 - np.clip(np.einsum("ij,ij->i", left, right), -1.0, 1.0)
    return stratify_pairs(subtype, pairs, distances.tolist(), TRANSFORMATION_BUCKET_PERCENTILES,
                          TRANSFORMATION_BUCKETS, rng)
