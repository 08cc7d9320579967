"""Comparing an automatic instrument with people on the same targets (issue 13: C²'s rubric rater
against human U-O-S ratings, EASEL's recogniser against human readings).

* :func:`bland_altman` — mean difference (bias) and 95% limits of agreement, bias ± 1.96·SD of the
  differences (Bland & Altman 1986, Lancet i:307).
* :func:`instrument_agreement` — ICC(A,1) between the human mean and the instrument (two "raters" per
  target, Shrout & Fleiss 1979 ICC(2,1) via :func:`engine.agreement.intraclass_correlation`), Spearman ρ
  and the mean absolute difference (1/n) Σ |hᵢ − mᵢ|.
* :func:`ordering_agreement` — Kendall τ-b between two orderings of the same models (scipy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from engine.agreement import ICC_FORM_LABELS, intraclass_correlation

__all__ = ["BlandAltman", "InstrumentAgreement", "OrderingAgreement", "bland_altman", "instrument_agreement",
           "ordering_agreement"]

#: z of the 95% limits of agreement (Bland & Altman 1986).
LIMITS_Z = 1.96


@dataclass(frozen=True)
class BlandAltman:
    """Bias and 95% limits of agreement of differences (human − instrument) against their means."""

    means: tuple[float, ...]
    differences: tuple[float, ...]
    bias: float
    sd: float
    lower: float
    upper: float
    n: int


@dataclass(frozen=True)
class InstrumentAgreement:
    n: int
    icc_a1: float | None
    icc_ci95: tuple[float, float] | None
    spearman: float | None
    mean_absolute_difference: float
    icc_label: str = ICC_FORM_LABELS["ICC2"]
    note: str = ""


@dataclass(frozen=True)
class OrderingAgreement:
    tau: float | None
    p: float | None
    n: int


def _pair(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"need two non-empty 1-D series of equal length, got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("values must be finite")
    return x, y


def bland_altman(human: Sequence[float], instrument: Sequence[float]) -> BlandAltman:
    """dᵢ = hᵢ − mᵢ, bias = mean(d), SD = sample SD of d, limits = bias ± 1.96·SD (Bland & Altman 1986)."""
    x, y = _pair(human, instrument)
    d = x - y
    sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
    bias = float(d.mean())
    return BlandAltman(tuple(map(float, (x + y) / 2)), tuple(map(float, d)), bias, sd,
                       bias - LIMITS_Z * sd, bias + LIMITS_Z * sd, int(d.size))


def instrument_agreement(human: Sequence[float], instrument: Sequence[float]) -> InstrumentAgreement:
    """ICC(A,1) of the table [hᵢ, mᵢ], Spearman ρ and mean |hᵢ − mᵢ|; an undefined statistic is None."""
    x, y = _pair(human, instrument)
    mad = float(np.mean(np.abs(x - y)))
    notes = []
    icc = ci = rho = None
    try:
        result = intraclass_correlation(np.column_stack([x, y]))["ICC2"]
        icc, ci = result.value, result.ci95
    except ValueError as exc:
        notes.append(f"ICC undefined: {exc}")
    if x.size >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
        rho = float(stats.spearmanr(x, y).statistic)
    else:
        notes.append("Spearman ρ undefined (fewer than 3 targets or a constant series)")
    return InstrumentAgreement(int(x.size), icc, ci, rho, mad, note="; ".join(notes))


def ordering_agreement(first: Sequence[float], second: Sequence[float]) -> OrderingAgreement:
    """Kendall τ-b between two scorings of the same n models (scipy.stats.kendalltau); None below n = 2,
    n = 0 included (a dashboard asks before any model has a complete item)."""
    if len(first) == 0 and len(second) == 0:
        return OrderingAgreement(None, None, 0)
    x, y = _pair(first, second)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return OrderingAgreement(None, None, int(x.size))
    result = stats.kendalltau(x, y, variant="b")
    return OrderingAgreement(float(result.statistic), float(result.pvalue), int(x.size))
