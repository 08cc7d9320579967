"""Algorithm 1 of Ekphrasis (App. A): controlled task construction, as one deterministic driver.

    T ← ∅
    for f in F:
        construct the subtype grid G_f and its cell quotas            (grid.py)
        sample candidate variables S_t ~ P_f under each cell constraint   (sampling.py)
        compose x_t = (f, b_t, C_t, S_t)                                (compose.py)
        keep x_t iff visual, unambiguous, safe and non-duplicate        (keep.py)
        add validated instances until the family quota n_f is met
    assign stable ids and return the balanced task set T

:func:`build_task_set` returns the kept tasks, every rejected candidate with its reason, and the
construction record (template version, pools' hashes, grid, seed, screen, sampling constants and the
diagnostics of Figures 6–8). The same pools, grid, seed and screen give the same tasks in the same
order with the same ids. Candidates are screened in batches (one provider round per batch for a model
screen); a cell whose stream runs dry stops short of its quota and says so in the record.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.task_construction import sampling
from engine.task_construction.compose import TEMPLATE_VERSION, Candidate, compose_candidate
from engine.task_construction.grid import (
    ABSTRACTION_SUBTYPES,
    COMBINATION_PAIR_TYPES,
    FAMILIES,
    TABLE5_GRID,
    TRANSFORMATION_SUBTYPES,
    GridCell,
    SubtypeGrid,
)
from engine.task_construction.keep import DUPLICATE_COSINE_THRESHOLD, DuplicateIndex, OfflineScreen, Screen
from engine.task_construction.pools import SourcePool, merge_pools

__all__ = ["BATCH_SLACK", "ConstructionResult", "RejectedCandidate", "build_task_set"]

#: A screening batch is the cell's remaining quota plus this many spare candidates (rejections are rare).
BATCH_SLACK = 4
#: A cell examines at most this many candidates per unit of quota (plus the slack) before it stops short:
#: a pool that cannot fill a cell must not make the build screen every pair of a large pool.
CANDIDATES_PER_QUOTA = 10

Progress = Callable[[int, int, str], None]  # (tasks kept so far, total quota, cell id)


@dataclass(frozen=True)
class RejectedCandidate:
    candidate: Candidate
    reason: str
    rule: str  # "duplicate" | "screen" | "repetition cap"

    def to_dict(self) -> dict[str, Any]:
        return {**self.candidate.to_dict(), "reason": self.reason, "rule": self.rule}


@dataclass
class ConstructionResult:
    tasks: list[Candidate]
    rejected: list[RejectedCandidate]
    record: dict[str, Any] = field(default_factory=dict)

    def task_records(self) -> list[dict[str, Any]]:
        return [t.task_record() for t in self.tasks]


class _Embeddings:
    """Embeds texts once per build (the embedder is any engine TextEmbedder: MiniLM by default)."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.memo: dict[str, np.ndarray] = {}

    def vectors(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        missing = sorted({t for t in texts if t not in self.memo})
        if missing:
            rows = self.embedder.embed(missing)
            self.memo.update(zip(missing, np.asarray(rows, dtype=np.float32), strict=True))
        return {t: self.memo[t] for t in texts}


def _cell_rng(seed: int, cell: GridCell) -> random.Random:
    # str seeds are hashed with SHA-512 by random.Random: stable across processes and platforms
    return random.Random(f"ekphrasis-construction:{seed}:{cell.cell_id}")


class _Sources:
    """Per-cell candidate streams over the merged pool, with the diagnostics the figures need."""

    def __init__(self, pool: SourcePool, seed: int, embeddings: _Embeddings, frequency: Callable[[str], float]):
        self.pool, self.seed, self.embeddings, self.frequency = pool, seed, embeddings, frequency
        self.belts = {s: sampling.frequency_belt(s, pool.of_type("abstract", s), frequency) for s in ABSTRACTION_SUBTYPES}
        self._pair_strata: dict[str, sampling.PairStrata] = {}
        self.uses: Counter = Counter()  # (family, concept) -> kept tasks using it (repetition cap)

    def _strata(self, key: str, cell: GridCell) -> sampling.PairStrata:
        if key not in self._pair_strata:
            rng = random.Random(f"ekphrasis-construction:{self.seed}:{cell.family}:{key}")
            if cell.family == "combination":
                abstract = sorted({r.concept for r in self.pool.of_type("abstract")})
                concrete = sorted({r.concept for r in self.pool.of_type("concrete")})
                vectors = self.embeddings.vectors(abstract + concrete)
                self._pair_strata[key] = sampling.combination_strata(key, abstract, concrete, vectors, rng)
            else:
                objects = sorted({r.concept for r in self.pool.of_type("concrete")})
                conditions = sorted({r.concept for r in self.pool.of_type("condition", key)})
                vectors = self.embeddings.vectors(objects + conditions)
                self._pair_strata[key] = sampling.transformation_strata(key, objects, conditions, vectors, rng)
        return self._pair_strata[key]

    def stream(self, cell: GridCell) -> Iterator[Candidate]:
        rng = _cell_rng(self.seed, cell)
        if cell.family == "abstraction":
            belt = self.belts[cell.subtype]
            nouns = sorted(c for c in belt.frequencies if belt.inside(c))
            rng.shuffle(nouns)
            for noun in nouns:
                yield compose_candidate(family="abstraction", subtype=cell.subtype, cell_id=cell.cell_id,
                                        source={"concept": noun},
                                        diagnostics={"zipf": belt.frequencies[noun], "belt": [belt.low, belt.high]})
        elif cell.family == "combination":
            pair_type = cell.subtype.split("-")[0]
            strata = self._strata(pair_type, cell)
            for first, second, distance in strata.strata[cell.stratum]:
                yield compose_candidate(
                    family="combination", subtype=cell.subtype, cell_id=cell.cell_id,
                    source={"concept_a": first, "concept_b": second, "pair_type": pair_type, "distance": cell.stratum},
                    diagnostics={"cosine_distance": distance, "band_edges": list(strata.edges)})
        elif cell.family == "transformation":
            strata = self._strata(cell.subtype, cell)
            for obj, condition, distance in strata.strata[cell.stratum]:
                yield compose_candidate(
                    family="transformation", subtype=cell.subtype, cell_id=cell.cell_id,
                    source={"object": obj, "condition": condition, "bucket": cell.stratum},
                    diagnostics={"cosine_distance": distance, "bucket_edges": list(strata.edges)})
        elif cell.family == "adaptation":
            situations = sorted(self.pool.of_type("situation", cell.subtype), key=lambda r: r.concept)
            rng.shuffle(situations)
            for r in situations:
                source = {"situation": r.concept}
                source.update({k: getattr(r, k) for k in ("audience", "medium", "deliverable") if getattr(r, k)})
                yield compose_candidate(family="adaptation", subtype=cell.subtype, cell_id=cell.cell_id, source=source)

    def capped_concepts(self, candidate: Candidate) -> list[str]:
        """The candidate's reused concepts that already reached the repetition cap of their family."""
        if candidate.family == "combination":
            names = [candidate.source["concept_a"], candidate.source["concept_b"]]
        elif candidate.family == "transformation":
            names = [candidate.source["object"]]
        else:
            return []
        return [n for n in names if self.uses[(candidate.family, n)] >= sampling.REPETITION_CAP]

    def count_use(self, candidate: Candidate) -> None:
        if candidate.family == "combination":
            self.uses[("combination", candidate.source["concept_a"])] += 1
            self.uses[("combination", candidate.source["concept_b"])] += 1
        elif candidate.family == "transformation":
            self.uses[("transformation", candidate.source["object"])] += 1


def _default_embedder():
    from engine.embed import text_embedder

    return text_embedder("minilm")


def build_task_set(
    pools: Sequence[SourcePool],
    *,
    grid: SubtypeGrid = TABLE5_GRID,
    seed: int = 0,
    screen: Screen | None = None,
    embedder=None,
    frequency: Callable[[str], float] = sampling.wordfreq_zipf,
    duplicate_threshold: float = DUPLICATE_COSINE_THRESHOLD,
    progress: Progress | None = None,
) -> ConstructionResult:
    """Algorithm 1 over ``pools`` and ``grid`` (Table 5 by default) for ``seed``.

    ``screen`` defaults to the labelled :class:`~engine.task_construction.keep.OfflineScreen`;
    ``embedder`` (MiniLM by default) embeds concepts for the distance bands and briefs for the
    duplicate check; ``progress(kept, total, cell_id)`` is called after every screened batch.
    """
    if not pools:
        raise ValueError("at least one source pool is needed")
    screen = screen or OfflineScreen()
    embeddings = _Embeddings(embedder or _default_embedder())
    pool = merge_pools(pools)
    sources = _Sources(pool, seed, embeddings, frequency)
    kept: list[Candidate] = []
    rejected: list[RejectedCandidate] = []
    achieved: dict[str, int] = {}
    duplicates: DuplicateIndex | None = None
    total = grid.total
    for family in FAMILIES:
        for cell in grid.cells_of(family):
            achieved[cell.cell_id] = 0
            stream = sources.stream(cell)
            exhausted = False
            budget = CANDIDATES_PER_QUOTA * cell.quota + BATCH_SLACK
            while achieved[cell.cell_id] < cell.quota and not exhausted and budget > 0:
                batch: list[Candidate] = []
                want = min(cell.quota - achieved[cell.cell_id] + BATCH_SLACK, budget)
                for candidate in stream:
                    if sources.capped_concepts(candidate):
                        continue  # not a rejection of the brief: the sampler skips over-used concepts
                    batch.append(candidate)
                    if len(batch) >= want:
                        break
                else:
                    exhausted = True
                if not batch:
                    break
                budget -= len(batch)
                vectors = embeddings.vectors([c.brief for c in batch])
                if duplicates is None:
                    duplicates = DuplicateIndex(len(next(iter(vectors.values()))), duplicate_threshold)
                verdicts = screen.screen(batch)
                for candidate, verdict in zip(batch, verdicts, strict=True):
                    if achieved[cell.cell_id] >= cell.quota:
                        break  # spare candidates of a full cell are neither kept nor rejected
                    twin, similarity = duplicates.nearest(vectors[candidate.brief])
                    if twin is not None and similarity >= duplicate_threshold:
                        rejected.append(RejectedCandidate(
                            candidate, f"duplicate: cosine {similarity:.3f} ≥ {duplicate_threshold} to kept task {twin}",
                            "duplicate"))
                    elif not verdict.keep:
                        rejected.append(RejectedCandidate(candidate, verdict.reason, "screen"))
                    elif sources.capped_concepts(candidate):
                        continue  # an earlier candidate of this batch used the concept up
                    else:
                        kept.append(candidate)
                        duplicates.add(candidate.external_id, vectors[candidate.brief])
                        sources.count_use(candidate)
                        achieved[cell.cell_id] += 1
                if progress:
                    progress(len(kept), total, cell.cell_id)
    record = _construction_record(pools, grid, seed, screen, embeddings, duplicate_threshold, sources, kept, achieved)
    return ConstructionResult(tasks=kept, rejected=rejected, record=record)


def _construction_record(pools, grid, seed, screen, embeddings, threshold, sources, kept, achieved) -> dict[str, Any]:
    embedder = embeddings.embedder
    combination = {
        pair_type: {"band_edges": list(strata.edges), "candidates": strata.counts()}
        for pair_type, strata in sorted(sources._pair_strata.items()) if pair_type in COMBINATION_PAIR_TYPES
    }
    transformation = {
        subtype: {"bucket_edges": list(strata.edges), "candidates": strata.counts()}
        for subtype, strata in sorted(sources._pair_strata.items()) if subtype in TRANSFORMATION_SUBTYPES
    }
    return {
        "algorithm": "Ekphrasis Algorithm 1 (App. A)",
        "template_version": TEMPLATE_VERSION,
        "pools": [p.citation() for p in pools],
        "is_demo": all(p.is_demo for p in pools),
        "grid": grid.to_dict(),
        "seed": seed,
        "screen": screen.name,
        # the wording a model screen was sent (the offline rules read no prompt)
        **({"screen_prompt_version": screen.prompt_version} if getattr(screen, "prompt_version", None) else {}),
        "embedder": f"{getattr(embedder, 'backend', '?')}:{getattr(embedder, 'model', '?')}",
        "frequency_source": "wordfreq zipf_frequency(word, 'en') (bundled data); a pool norm 'zipf' overrides",
        "constants": {
            "frequency_belt_percentiles": list(sampling.FREQUENCY_BELT_PERCENTILES),
            "combination_band_percentiles": list(sampling.COMBINATION_BAND_PERCENTILES),
            "transformation_bucket_percentiles": list(sampling.TRANSFORMATION_BUCKET_PERCENTILES),
            "repetition_cap": sampling.REPETITION_CAP,
            "duplicate_cosine_threshold": threshold,
        },
        "achieved": achieved,
        "quotas": grid.quotas(),
        "diagnostics": {
            "abstraction": {
                s: {**belt.to_dict(),
                    "selected": sorted(c.source["concept"] for c in kept if c.family == "abstraction" and c.subtype == s)}
                for s, belt in sources.belts.items()
            },
            "combination": combination,
            "transformation": transformation,
        },
    }
