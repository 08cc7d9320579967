"""Usefulness, Originality and Surprise, and their aggregation (c2-eval.txt §3.2).

Convergent regime (§3.2.1), per prompt over its ``n`` samples ``y_i`` with correctness ``z_i``:

* Usefulness ``U = (1/n) Σ z_i`` (:func:`usefulness`);
* Originality ``O = K_p``, the number of clusters of the *correct* samples where two samples share a
  cluster when their embedding cosine is ≥ τ (default 0.9). The rule is transitive, so clusters are the
  connected components of the cos ≥ τ graph (:func:`originality_clusters`); scaled ``100·K_p/n``
  (:func:`originality_score`) so it lies in [0, 100] like the other two;
* Surprise ``S = 1 − C`` with ``C = Σ z_i c_i / max(1, Σ z_i)`` (Kadavath et al. 2022) over the model's
  own confidences ``c_i`` (:func:`surprise`). With no correct sample the printed formula gives S = 1,
  which rewards failure; the default policy ``none_correct="zero"`` scores 0 there and
  ``"formula"`` keeps the literal value.

Divergent regime (§3.2.2): a rater gives integer U, O, S in 0–5 per sample, scaled ×20
(:data:`RATING_SCALE`).

Aggregation: per sample → per prompt mean → per task-type mean in [0, 100]; creativity is the mean of
U, O, S (§3.2.2 "Overall Creativity Score"); Combined Creativity is the mean of the task types'
creativity (Table 1 caption). Intervals are percentile bootstraps over prompts; the creative-instruction
ablation (Figure 5) uses a paired bootstrap over the prompts both templates answered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

__all__ = [
    "DEFAULT_TAU",
    "RATING_SCALE",
    "NONE_CORRECT_POLICIES",
    "PromptScores",
    "TaskTypeScores",
    "Interval",
    "PairedDifference",
    "usefulness",
    "cluster_labels",
    "originality_clusters",
    "originality_score",
    "surprise",
    "convergent_prompt_scores",
    "divergent_prompt_scores",
    "creativity",
    "combined_creativity",
    "task_type_scores",
    "bootstrap_interval",
    "paired_bootstrap_difference",
]

#: §3.2.1 "a pre-defined threshold τ (e.g., 0.9)".
DEFAULT_TAU = 0.9
#: §3.2.2 rater scores lie in [0, 5]; "we first scale the range of evaluated values into [0, 100]".
RATING_SCALE = 20
#: What Surprise is when no sample is correct: "zero" (default) or "formula" (the literal 1 − 0 = 1).
NONE_CORRECT_POLICIES = ("zero", "formula")
#: Bootstrap defaults: resamples and two-sided level.
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_LEVEL = 0.95

NoneCorrect = Literal["zero", "formula"]


@dataclass(frozen=True)
class PromptScores:
    """One prompt's U, O, S in [0, 100] (and their mean), for one model and template.

    ``missing_confidences`` counts convergent samples whose confidence reply could not be parsed
    (recorded, never invented); ``clusters`` is K_p (convergent only)."""

    prompt_id: str
    usefulness: float
    originality: float
    surprise: float
    missing_confidences: int = 0
    clusters: int | None = None

    @property
    def creativity(self) -> float:
        return creativity(self.usefulness, self.originality, self.surprise)


@dataclass(frozen=True)
class Interval:
    """A point estimate and its percentile bootstrap interval over prompts."""

    value: float
    low: float
    high: float
    level: float = BOOTSTRAP_LEVEL
    method: str = "percentile bootstrap over prompts"


@dataclass(frozen=True)
class TaskTypeScores:
    """One model's task-type means in [0, 100], each with its bootstrap-over-prompts interval."""

    n_prompts: int
    usefulness: Interval
    originality: Interval
    surprise: Interval
    creativity: Interval


@dataclass(frozen=True)
class PairedDifference:
    """creative − standard over the prompts both templates answered, with a paired bootstrap interval."""

    n_prompts: int
    difference: Interval
    creative_mean: float
    standard_mean: float


def _as_bool_array(correct: Sequence[bool] | np.ndarray) -> np.ndarray:
    z = np.asarray(correct)
    if z.ndim != 1:
        raise ValueError(f"correct must be 1-D, got shape {z.shape}")
    return z.astype(bool)


def usefulness(correct: Sequence[bool] | np.ndarray) -> float:
    """U = (1/n) Σ I(y_i), in [0, 1] (§3.2.1 "Usefulness")."""
    z = _as_bool_array(correct)
    if z.size == 0:
        raise ValueError("usefulness needs at least one sample")
    return float(z.mean())


def originality_clusters(embeddings: np.ndarray | Sequence[Sequence[float]], tau: float = DEFAULT_TAU) -> int:
    """K_p: connected components of the graph joining samples whose cosine is ≥ τ (§3.2.1 "Originality").

    ``embeddings`` are the *correct* samples' vectors (rows; any norm — they are normalised here). Zero
    correct samples give 0 clusters.
    """
    return int(cluster_labels(embeddings, tau).max(initial=-1) + 1)


def cluster_labels(embeddings: np.ndarray | Sequence[Sequence[float]], tau: float = DEFAULT_TAU) -> np.ndarray:
    """Cluster index of every row (components of the cos ≥ τ graph, §3.2.1), numbered by first appearance."""
    x = np.asarray(embeddings, dtype=float)
    if x.size == 0:
        return np.zeros(0, dtype=int)
    if x.ndim != 2:
        raise ValueError(f"embeddings must be 2-D (samples × dims), got shape {x.shape}")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("an embedding is the zero vector; its cosine is undefined")
    unit = x / norms
    adjacency = (unit @ unit.T) >= tau  # cosine similarity ≥ τ joins two samples (§3.2.1)
    _, labels = connected_components(csr_matrix(adjacency), directed=False)
    # renumber by first appearance so labels are stable for display
    order: dict[int, int] = {}
    return np.array([order.setdefault(int(label), len(order)) for label in labels], dtype=int)


def originality_score(k_p: int, n: int) -> float:
    """Originality in [0, 100]: 100·K_p/n (K_p ≤ n, §3.2.1 scaled as §3.2.2 "Overall Creativity Score")."""
    if n <= 0:
        raise ValueError("n must be positive")
    if not 0 <= k_p <= n:
        raise ValueError(f"K_p must lie in [0, n], got {k_p} with n={n}")
    return 100.0 * k_p / n


def surprise(
    correct: Sequence[bool] | np.ndarray,
    confidence: Sequence[float | None] | np.ndarray,
    *,
    none_correct: NoneCorrect = "zero",
) -> float:
    """S = 1 − C, C = Σ z_i c_i / max(1, Σ z_i), in [0, 1] (§3.2.1, Kadavath et al. 2022).

    Samples whose confidence is missing (``None``/NaN) are left out of both sums — a missing confidence
    is never invented. With no correct (and confident) sample, ``none_correct="zero"`` returns 0 and
    ``"formula"`` returns the literal 1.
    """
    if none_correct not in NONE_CORRECT_POLICIES:
        raise ValueError(f"none_correct must be one of {NONE_CORRECT_POLICIES}, got {none_correct!r}")
    z = _as_bool_array(correct)
    c = np.array([np.nan if v is None else float(v) for v in confidence], dtype=float)
    if c.shape != z.shape:
        raise ValueError(f"correct and confidence differ in length: {z.size} vs {c.size}")
    known = ~np.isnan(c)
    if np.any((c[known] < 0) | (c[known] > 1)):
        raise ValueError("confidences must lie in [0, 1]")
    used = z & known
    if not used.any() and none_correct == "zero":
        return 0.0
    confidence_of_correct = c[used].sum() / max(1, int(used.sum()))  # C (§3.2.1)
    return float(1.0 - confidence_of_correct)


def convergent_prompt_scores(
    prompt_id: str,
    correct: Sequence[bool],
    confidence: Sequence[float | None],
    correct_embeddings: np.ndarray | Sequence[Sequence[float]],
    *,
    accuracy: Sequence[float] | None = None,
    tau: float = DEFAULT_TAU,
    none_correct: NoneCorrect = "zero",
) -> PromptScores:
    """One convergent prompt's U, O, S in [0, 100] from its n samples (§3.2.1).

    ``correct`` is z_i = I(y_i); ``correct_embeddings`` holds one row per correct sample, in sample
    order. ``accuracy`` (optional, per sample in [0, 1]) replaces z_i in Usefulness only: OK-VQA's
    official metric is a soft accuracy, and U = its mean keeps U comparable with published OK-VQA
    numbers, while O and S still need the binary z_i.
    """
    z = _as_bool_array(correct)
    n = z.size
    x = np.asarray(correct_embeddings, dtype=float)
    n_rows = 0 if x.size == 0 else x.shape[0]
    if n_rows != int(z.sum()):
        raise ValueError(f"expected {int(z.sum())} embeddings of correct samples, got {n_rows}")
    if accuracy is None:
        u = usefulness(z)
    else:
        a = np.asarray(accuracy, dtype=float)
        if a.shape != z.shape or np.any((a < 0) | (a > 1)):
            raise ValueError("accuracy needs one value in [0, 1] per sample")
        u = float(a.mean())
    k_p = originality_clusters(x, tau)
    return PromptScores(
        prompt_id=prompt_id,
        usefulness=100.0 * u,
        originality=originality_score(k_p, n),
        surprise=100.0 * surprise(z, confidence, none_correct=none_correct),
        missing_confidences=sum(1 for value in confidence if value is None or value != value),
        clusters=k_p,
    )


def divergent_prompt_scores(prompt_id: str, ratings: Sequence[tuple[int, int, int]]) -> PromptScores:
    """One divergent prompt's U, O, S in [0, 100]: M_prompt = (1/n) Σ M_i, scaled ×20 (§3.2.2)."""
    r = np.asarray(ratings, dtype=float)
    if r.ndim != 2 or r.shape[1] != 3 or r.shape[0] == 0:
        raise ValueError("ratings must be a non-empty sequence of (u, o, s) triples")
    if np.any((r < 0) | (r > 5)):
        raise ValueError("ratings must lie in 0–5")
    u, o, s = (RATING_SCALE * r.mean(axis=0)).tolist()
    return PromptScores(prompt_id=prompt_id, usefulness=u, originality=o, surprise=s)


def creativity(u: float, o: float, s: float) -> float:
    """Creativity = (U + O + S) / 3 (§3.2.2 "Overall Creativity Score")."""
    return (u + o + s) / 3.0


def combined_creativity(task_scores: Sequence[float] | Mapping[str, float]) -> float:
    """Combined Creativity = mean of the task types' creativity scores (Table 1 and 2 captions)."""
    values = list(task_scores.values()) if isinstance(task_scores, Mapping) else list(task_scores)
    if not values:
        raise ValueError("combined creativity needs at least one task type")
    return float(np.mean(values))


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def bootstrap_interval(
    values: Sequence[float] | np.ndarray,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = BOOTSTRAP_LEVEL,
    seed: int = 0,
) -> Interval:
    """Mean of ``values`` (one per prompt) with a percentile bootstrap interval over prompts (Efron 1979)."""
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or v.size == 0:
        raise ValueError("bootstrap needs a non-empty 1-D array of per-prompt values")
    if not 0 < level < 1:
        raise ValueError("level must lie in (0, 1)")
    index = _rng(seed).integers(0, v.size, size=(resamples, v.size))
    means = v[index].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return Interval(value=float(v.mean()), low=float(low), high=float(high), level=level)


def task_type_scores(
    prompts: Sequence[PromptScores],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = BOOTSTRAP_LEVEL,
    seed: int = 0,
) -> TaskTypeScores:
    """Per-task-type means of the prompts' U, O, S and creativity, each with a bootstrap-over-prompts
    interval; the same resampled prompt sets are used for all four (one seed)."""
    if not prompts:
        raise ValueError("a task type needs at least one scored prompt")
    columns = {
        "usefulness": [p.usefulness for p in prompts],
        "originality": [p.originality for p in prompts],
        "surprise": [p.surprise for p in prompts],
        "creativity": [p.creativity for p in prompts],
    }
    intervals = {
        name: bootstrap_interval(values, resamples=resamples, level=level, seed=seed)
        for name, values in columns.items()
    }
    return TaskTypeScores(n_prompts=len(prompts), **intervals)


def paired_bootstrap_difference(
    creative: Mapping[str, float],
    standard: Mapping[str, float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = BOOTSTRAP_LEVEL,
    seed: int = 0,
) -> PairedDifference:
    """creative − standard (Figure 5) over the prompts present in both, keyed by prompt id; the interval
    resamples prompts, keeping each prompt's pair together (paired bootstrap)."""
    shared = sorted(set(creative) & set(standard))
    if not shared:
        raise ValueError("no prompt was scored under both templates")
    c = np.array([creative[p] for p in shared], dtype=float)
    s = np.array([standard[p] for p in shared], dtype=float)
    interval = bootstrap_interval(c - s, resamples=resamples, level=level, seed=seed)
    interval = Interval(
        value=interval.value,
        low=interval.low,
        high=interval.high,
        level=interval.level,
        method="paired percentile bootstrap over prompts",
    )
    return PairedDifference(
        n_prompts=len(shared), difference=interval, creative_mean=float(c.mean()), standard_mean=float(s.mean())
    )
