"""VCI scoring from Bradley–Terry expected win rates (Ekphrasis §4.3, Table 3, App. K.1–K.2).

For each dimension d ∈ {U, E, N} the score of model m is its BT expected win rate s(m, d)
(:func:`engine.bt.expected_winrate`). Scores are standardised over the subject models,

    z(m, d) = (s(m, d) − μ_d) / σ_d,

with μ_d and σ_d the mean and *population* standard deviation (divisor n) over subject models —
the choice that reproduces Ekphrasis Table 19 from its published win rates — and

    Overall VCI(m) = (z(m, U) + z(m, E) + z(m, N)) / 3.

:func:`family_table` applies the same standardisation within each task family (Table 3 rows U, E, N
and "Task avg.") and reports residuals R(f, d) = s̄(f, d) − s̄(·, d) (App. K.2).
:func:`tradeoff_percentiles` gives the median-centred rank percentiles of the Usefulness–Novelty
display (Figure 3B; visualisation only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

__all__ = ["VCIScores", "FamilyTable", "DIMENSIONS", "vci_scores", "family_table", "tradeoff_percentiles"]

#: The Ekphrasis dimensions: Usefulness, Expressiveness, Novelty.
DIMENSIONS = ("U", "E", "N")


@dataclass(frozen=True)
class VCIScores:
    """Standardised scores per dimension and Overall VCI.

    Attributes:
        z: {dimension: z per model}.
        overall: mean of the dimension z per model (Overall VCI).
        mean, sd: μ_d and σ_d used for each dimension (over subject models).
    """

    z: dict[str, np.ndarray]
    overall: np.ndarray
    mean: dict[str, float]
    sd: dict[str, float]


@dataclass(frozen=True)
class FamilyTable:
    """Family-level scores (Ekphrasis Table 3) and residuals (App. K.2).

    Attributes:
        z: {family: {dimension: z per model}} standardised within family and dimension.
        task_avg: {family: mean over dimensions of z, per model} (Table 3 "Task avg.").
        model_residuals: {family: {dimension: s(m, f, d) − s(m, ·, d) per model}}.
        residuals: {family: {dimension: R(f, d) = mean over subject models of model_residuals}}.
    """

    z: dict[str, dict[str, np.ndarray]]
    task_avg: dict[str, np.ndarray]
    model_residuals: dict[str, dict[str, np.ndarray]]
    residuals: dict[str, dict[str, float]]


def _as_scores(winrates: Mapping[str, Sequence[float] | np.ndarray], where: str) -> dict[str, np.ndarray]:
    if not winrates:
        raise ValueError(f"{where}: no dimensions given")
    out = {d: np.asarray(v, dtype=float) for d, v in winrates.items()}
    sizes = {v.shape for v in out.values()}
    if len(sizes) != 1 or next(iter(sizes)) == () or len(next(iter(sizes))) != 1:
        raise ValueError(f"{where}: every dimension needs a 1-D array of the same length, got {sizes}")
    for d, v in out.items():
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{where}: dimension {d!r} has non-finite scores")
    return out


def _subject_mask(subjects: Sequence[bool] | np.ndarray | None, n: int) -> np.ndarray:
    if subjects is None:
        return np.ones(n, dtype=bool)
    mask = np.asarray(subjects, dtype=bool)
    if mask.shape != (n,):
        raise ValueError(f"subjects must be a boolean mask of length {n}, got shape {mask.shape}")
    if mask.sum() < 2:
        raise ValueError("standardising needs at least two subject models")
    return mask


def dimensions_without_spread(
    winrates: Mapping[str, Sequence[float] | np.ndarray],
    subjects: Sequence[bool] | np.ndarray | None = None,
) -> list[str]:
    """The dimensions where every subject model has the same expected win rate: σ_d = 0, so
    z = (s − μ_d)/σ_d is undefined there (Ekphrasis §4.3); :func:`vci_scores` refuses them."""
    scores = _as_scores(winrates, "dimensions_without_spread")
    mask = _subject_mask(subjects, next(iter(scores.values())).size)
    # σ_d = population standard deviation over the subject models (Ekphrasis §4.3)
    return [d for d, s in scores.items() if float(s[mask].std(ddof=0)) == 0.0]


def vci_scores(
    winrates: Mapping[str, Sequence[float] | np.ndarray],
    subjects: Sequence[bool] | np.ndarray | None = None,
) -> VCIScores:
    """z per dimension and Overall VCI from BT expected win rates (Ekphrasis §4.3).

    Args:
        winrates: {dimension: expected win rate s(m, d) per model}, e.g. {"U": …, "E": …, "N": …};
            all arrays list the models in the same order.
        subjects: optional boolean mask of the subject models over which μ_d and σ_d are computed
            (default: all models). z is reported for every model.
    """
    scores = _as_scores(winrates, "vci_scores")
    n = next(iter(scores.values())).size
    mask = _subject_mask(subjects, n)
    z: dict[str, np.ndarray] = {}
    mean: dict[str, float] = {}
    sd: dict[str, float] = {}
    flat = dimensions_without_spread(scores, subjects)
    if flat:
        raise ValueError(f"dimension {flat[0]!r} has zero spread over subject models; z is undefined")
    for d, s in scores.items():
        mu, sigma = float(s[mask].mean()), float(s[mask].std(ddof=0))
        # z(m,d) = (s(m,d) − μ_d)/σ_d  (Ekphrasis §4.3)
        z[d] = (s - mu) / sigma
        mean[d], sd[d] = mu, sigma
    # Overall VCI = equal-weight mean of the dimension z  (Ekphrasis §4.3)
    overall = np.mean(np.stack(list(z.values())), axis=0)
    return VCIScores(z=z, overall=overall, mean=mean, sd=sd)


def family_table(
    family_winrates: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]],
    overall_winrates: Mapping[str, Sequence[float] | np.ndarray],
    subjects: Sequence[bool] | np.ndarray | None = None,
) -> FamilyTable:
    """Family-specific standardised scores (Table 3) and residuals R(f, d) (App. K.2).

    Args:
        family_winrates: {family: {dimension: s(m, f, d) per model}} — expected win rates from a BT
            model fitted on that family's tasks only.
        overall_winrates: {dimension: s(m, ·, d) per model} from the fit on all tasks.
        subjects: optional mask of subject models for the standardisation and the residual means.

    Note: expected win rates of a full model pool average exactly 0.5 in every fit, so the family
    residual R(f, d) averaged over *all* models is 0 by construction; it is informative per model
    (``model_residuals``) or over a subset of subject models.
    """
    overall = _as_scores(overall_winrates, "family_table overall")
    n = next(iter(overall.values())).size
    mask = _subject_mask(subjects, n)
    z: dict[str, dict[str, np.ndarray]] = {}
    task_avg: dict[str, np.ndarray] = {}
    model_res: dict[str, dict[str, np.ndarray]] = {}
    res: dict[str, dict[str, float]] = {}
    for family, dims in family_winrates.items():
        fam = _as_scores(dims, f"family {family!r}")
        if next(iter(fam.values())).size != n:
            raise ValueError(f"family {family!r} lists a different number of models than overall_winrates")
        missing = set(fam) - set(overall)
        if missing:
            raise ValueError(f"family {family!r} has dimensions {sorted(missing)} missing from overall_winrates")
        scored = vci_scores(fam, mask)
        z[family] = scored.z
        # Table 3 "Task avg." = mean of the family's U, E, N z scores
        task_avg[family] = scored.overall
        # R(f,d) = s̄(f,d) − s̄(·,d)  (Ekphrasis App. K.2)
        model_res[family] = {d: fam[d] - overall[d] for d in fam}
        res[family] = {d: float((fam[d] - overall[d])[mask].mean()) for d in fam}
    return FamilyTable(z=z, task_avg=task_avg, model_residuals=model_res, residuals=res)


def tradeoff_percentiles(
    usefulness: Sequence[float] | np.ndarray, novelty: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Median-centred rank percentiles for the Usefulness–Novelty trade-off plot (Figure 3B).

    Each score vector is turned into rank percentiles 100·(rank − 1)/(n − 1) (average ranks for ties,
    lowest = 0, highest = 100) and centred by subtracting the median percentile, so the median model
    sits at 0. These are display coordinates, not quality percentages (Ekphrasis §4.3).
    """
    out = []
    for name, values in (("usefulness", usefulness), ("novelty", novelty)):
        v = np.asarray(values, dtype=float)
        if v.ndim != 1 or v.size < 2 or not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be a finite 1-D array of at least two scores")
        out.append(v)
    if out[0].size != out[1].size:
        raise ValueError("usefulness and novelty must score the same models")
    result = []
    for v in out:
        # rank percentile = 100 (rank − 1)/(n − 1) with average ranks for ties (empirical percentile rank)
        pct = 100.0 * (rankdata(v, method="average") - 1.0) / (v.size - 1)
        result.append(pct - np.median(pct))
    return result[0], result[1]
