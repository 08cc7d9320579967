"""Agreement and reliability statistics for human and judge labels (Ekphrasis App. H.6, I.4, §5.4).

* :func:`fleiss_kappa`, :func:`fleiss_kappa_test` — Fleiss (1971) κ for a fixed number of raters per
  item, with the Fleiss, Nee & Landis (1979) null standard error.
* :func:`intraclass_correlation` — the six Shrout & Fleiss (1979) ICC forms with F tests and the
  McGraw & Wong (1996) 95% intervals.
* :func:`krippendorff_alpha` — Krippendorff's α via the ``krippendorff`` package.
* :func:`pairwise_agreement`, :func:`majority_label`, :func:`consensus_summary` — A/B/tie agreement
  where a tie agrees only with a tie (App. H.6).
* :func:`rank_correlation` — Spearman ρ and Kendall τ-b (scipy).
* :func:`mcnemar`, :func:`paired_difference_interval` — paired proportions (§5.4 novelty ablation).
* :func:`pair_sign_agreement` — sign(Δtext) vs sign(p_img − 0.5) (App. I.4).

Interval methods are always named in the returned objects so the UI can state them.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy import stats

__all__ = [
    "KappaTest",
    "ICCResult",
    "McNemarResult",
    "PairedInterval",
    "SignAgreement",
    "ICC_FORMS",
    "ICC_FORM_LABELS",
    "fleiss_kappa",
    "fleiss_kappa_test",
    "intraclass_correlation",
    "krippendorff_alpha",
    "pairwise_agreement",
    "majority_label",
    "consensus_summary",
    "rank_correlation",
    "mcnemar",
    "paired_difference_interval",
    "pair_sign_agreement",
]

#: McNemar switches from the exact binomial test to χ² with continuity correction at b + c >= this.
MCNEMAR_EXACT_BELOW = 25
#: ICC forms in Shrout & Fleiss (1979) notation, in their Table 4 order.
ICC_FORMS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")
#: Unambiguous names for the UI: Shrout–Fleiss label with the McGraw–Wong (1996) equivalent.
ICC_FORM_LABELS = {
    "ICC1": "ICC(1,1) one-way random, single rater",
    "ICC2": "ICC(2,1) = ICC(A,1) two-way random, absolute agreement, single rater",
    "ICC3": "ICC(3,1) = ICC(C,1) two-way mixed, consistency, single rater",
    "ICC1k": "ICC(1,k) one-way random, mean of k raters",
    "ICC2k": "ICC(2,k) = ICC(A,k) two-way random, absolute agreement, mean of k raters",
    "ICC3k": "ICC(3,k) = ICC(C,k) two-way mixed, consistency, mean of k raters",
}
#: Labels of a pairwise preference.
PAIR_LABELS = ("A", "B", "tie")


# --------------------------------------------------------------------------------------------------
# Fleiss kappa
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KappaTest:
    """Fleiss κ with its test of H0: κ = 0 (Fleiss, Nee & Landis 1979)."""

    kappa: float
    se0: float
    z: float
    p: float
    n_items: int
    n_raters: int


def _fleiss_counts(counts: np.ndarray | Sequence[Sequence[float]]) -> tuple[np.ndarray, int]:
    c = np.asarray(counts, dtype=float)
    if c.ndim != 2 or c.shape[0] < 1 or c.shape[1] < 2:
        raise ValueError(f"counts must be a 2-D array [item, category] with >= 2 categories, got {c.shape}")
    if np.any(c < 0) or not np.all(np.isfinite(c)) or np.any(c != np.round(c)):
        raise ValueError("counts must be non-negative integers")
    per_item = c.sum(axis=1)
    if np.any(per_item != per_item[0]):
        raise ValueError(
            "Fleiss' kappa needs the same number of raters for every item; row totals range from "
            f"{int(per_item.min())} to {int(per_item.max())}"
        )
    n = int(per_item[0])
    if n < 2:
        raise ValueError("Fleiss' kappa needs at least two raters per item")
    return c, n


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[float]]) -> float:
    """Fleiss' κ for ``counts[item, category]`` = raters assigning the item to the category.

    κ = (P̄ − P̄e) / (1 − P̄e) with P̄ the mean per-item agreement and P̄e = Σ_j p_j² (Fleiss 1971).
    Every item must have the same number of raters, else ValueError.
    """
    c, n = _fleiss_counts(counts)
    p_j = c.sum(axis=0) / c.sum()
    # P_i = (Σ_j n_ij² − n) / (n(n − 1))  (Fleiss 1971, eq. 2)
    p_i = ((c**2).sum(axis=1) - n) / (n * (n - 1))
    p_bar, p_e = p_i.mean(), (p_j**2).sum()
    if p_e == 1.0:
        raise ValueError("Fleiss' kappa is undefined when every rating falls in one category")
    # κ = (P̄ − P̄e)/(1 − P̄e)  (Fleiss 1971, eq. 7)
    return float((p_bar - p_e) / (1.0 - p_e))


def fleiss_kappa_test(counts: np.ndarray | Sequence[Sequence[float]]) -> KappaTest:
    """Fleiss' κ with z and two-sided p for H0: κ = 0 using the Fleiss–Nee–Landis (1979) null SE.

    SE0 = √2 / (Σ p_j q_j √(N n (n − 1))) · √((Σ p_j q_j)² − Σ p_j q_j (q_j − p_j)), q_j = 1 − p_j
    (the statistic R's ``irr::kappam.fleiss`` reports).
    """
    c, n = _fleiss_counts(counts)
    kappa = fleiss_kappa(c)
    n_items = c.shape[0]
    p_j = c.sum(axis=0) / c.sum()
    q_j = 1.0 - p_j
    pq = (p_j * q_j).sum()
    # null standard error (Fleiss, Nee & Landis 1979, eq. 12)
    se0 = np.sqrt(2.0) / (pq * np.sqrt(n_items * n * (n - 1))) * np.sqrt(pq**2 - (p_j * q_j * (q_j - p_j)).sum())
    z = kappa / se0
    p = 2.0 * stats.norm.sf(abs(z))
    return KappaTest(kappa=kappa, se0=float(se0), z=float(z), p=float(p), n_items=n_items, n_raters=n)


# --------------------------------------------------------------------------------------------------
# Intraclass correlation
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ICCResult:
    """One ICC form: estimate, 95% interval (McGraw & Wong 1996), F test of ICC = 0."""

    form: str
    label: str
    value: float
    ci95: tuple[float, float]
    F: float
    df1: float
    df2: float
    p: float


def intraclass_correlation(
    ratings: np.ndarray | Sequence[Sequence[float]], missing: Literal["error", "drop"] = "error"
) -> dict[str, ICCResult]:
    """The six Shrout & Fleiss (1979) intraclass correlations of ``ratings[target, rater]``.

    Forms: ICC1 = ICC(1,1), ICC2 = ICC(2,1) (McGraw–Wong ICC(A,1)), ICC3 = ICC(3,1) (ICC(C,1)) and
    their k-rater averages ICC1k, ICC2k, ICC3k; see :data:`ICC_FORM_LABELS` for unambiguous names.
    Each result carries the point estimate, the 95% interval of McGraw & Wong (1996, Table 7), the F
    statistic with its degrees of freedom and the upper-tail p of H0: ICC = 0.

    Missing ratings (NaN): ``missing="error"`` (default) raises ValueError; ``missing="drop"`` removes
    every target that lacks any rating (listwise deletion), needing >= 2 complete targets.
    """
    x = np.asarray(ratings, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"ratings must be a 2-D array [target, rater], got shape {x.shape}")
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    if np.any(np.isinf(x)):
        raise ValueError("ratings contain infinite values")
    incomplete = np.isnan(x).any(axis=1)
    if incomplete.any():
        if missing == "error":
            raise ValueError(
                f"{int(incomplete.sum())} target(s) have missing ratings; pass missing='drop' to "
                "remove those targets"
            )
        x = x[~incomplete]
    n, k = x.shape
    if n < 2 or k < 2:
        raise ValueError(f"ICC needs at least 2 complete targets and 2 raters, got {n} x {k}")

    grand = x.mean()
    # two-way ANOVA mean squares (Shrout & Fleiss 1979, Table 1)
    ss_rows = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_total = ((x - grand) ** 2).sum()
    ss_err = ss_total - ss_rows - ss_cols
    msr = ss_rows / (n - 1)  # between targets (BMS)
    msc = ss_cols / (k - 1)  # between judges (JMS)
    mse = ss_err / ((n - 1) * (k - 1))  # residual (EMS)
    msw = (ss_cols + ss_err) / (n * (k - 1))  # within targets (WMS)
    if (msw == 0 or mse == 0) and msr == 0:
        raise ValueError("ICC is undefined when the targets do not differ and the raters leave no residual")
    # Raters in perfect agreement (msw = 0), or differing by constant offsets only (mse = 0), leave F
    # infinite: the forms that measure that agreement are exactly 1 (pingouin.intraclass_corr gives 1.0
    # too) and their intervals, whose arithmetic gives inf/inf, are the point (1, 1). See _exact_one.
    with np.errstate(divide="ignore", invalid="ignore"):
        return _icc_forms(n, k, msr, msc, mse, msw)


def _exact_one(value: float, ci: tuple[float, float]) -> tuple[float, float]:
    """The interval of an ICC of exactly 1 reached with an infinite F (zero residual): (1, 1)."""
    return (1.0, 1.0) if value == 1.0 and not all(np.isfinite(ci)) else ci


def _icc_forms(n: int, k: int, msr: float, msc: float, mse: float, msw: float) -> dict[str, ICCResult]:
    alpha = 0.05
    df_b, df_w, df_e = n - 1, n * (k - 1), (n - 1) * (k - 1)
    out: dict[str, ICCResult] = {}

    # ICC(1,1), ICC(1,k): one-way random (Shrout & Fleiss 1979, eqs. 2 and 5)
    icc1 = (msr - msw) / (msr + (k - 1) * msw)
    icc1k = (msr - msw) / msr
    f1 = msr / msw
    f1_lo = f1 / stats.f.ppf(1 - alpha / 2, df_b, df_w)
    f1_hi = f1 * stats.f.ppf(1 - alpha / 2, df_w, df_b)
    p1 = float(stats.f.sf(f1, df_b, df_w))
    out["ICC1"] = ICCResult(
        "ICC1", ICC_FORM_LABELS["ICC1"], float(icc1),
        _exact_one(icc1, (float((f1_lo - 1) / (f1_lo + k - 1)), float((f1_hi - 1) / (f1_hi + k - 1)))),
        float(f1), df_b, df_w, p1,
    )
    out["ICC1k"] = ICCResult(
        "ICC1k", ICC_FORM_LABELS["ICC1k"], float(icc1k),
        _exact_one(icc1k, (float(1 - 1 / f1_lo), float(1 - 1 / f1_hi))), float(f1), df_b, df_w, p1,
    )

    # ICC(2,1), ICC(2,k): two-way random, absolute agreement (Shrout & Fleiss 1979, eqs. 3 and 6)
    icc2 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    icc2k = (msr - mse) / (msr + (msc - mse) / n)
    # Satterthwaite df and interval for ICC(A,1) (McGraw & Wong 1996, Table 7, case 2A)
    a = k * icc2 / (n * (1 - icc2))
    b = 1 + k * icc2 * (n - 1) / (n * (1 - icc2))
    v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / df_e)
    fc = stats.f.ppf(1 - alpha / 2, df_b, v)
    fd = stats.f.ppf(1 - alpha / 2, v, df_b)
    lo2 = n * (msr - fc * mse) / (fc * (k * msc + (k * n - k - n) * mse) + n * msr)
    hi2 = n * (fd * msr - mse) / (k * msc + (k * n - k - n) * mse + n * fd * msr)
    f3 = msr / mse
    p3 = float(stats.f.sf(f3, df_b, df_e))
    out["ICC2"] = ICCResult("ICC2", ICC_FORM_LABELS["ICC2"], float(icc2), _exact_one(icc2, (float(lo2), float(hi2))),
                            float(f3), df_b, df_e, p3)
    # Spearman–Brown step-up of the ICC(A,1) limits (McGraw & Wong 1996, Table 7)
    out["ICC2k"] = ICCResult(
        "ICC2k", ICC_FORM_LABELS["ICC2k"], float(icc2k),
        _exact_one(icc2k, (float(lo2 * k / (1 + lo2 * (k - 1))), float(hi2 * k / (1 + hi2 * (k - 1))))),
        float(f3), df_b, df_e, p3,
    )

    # ICC(3,1), ICC(3,k): two-way mixed, consistency (Shrout & Fleiss 1979, eqs. 4 and 7)
    icc3 = (msr - mse) / (msr + (k - 1) * mse)
    icc3k = (msr - mse) / msr
    f3_lo = f3 / stats.f.ppf(1 - alpha / 2, df_b, df_e)
    f3_hi = f3 * stats.f.ppf(1 - alpha / 2, df_e, df_b)
    out["ICC3"] = ICCResult(
        "ICC3", ICC_FORM_LABELS["ICC3"], float(icc3),
        _exact_one(icc3, (float((f3_lo - 1) / (f3_lo + k - 1)), float((f3_hi - 1) / (f3_hi + k - 1)))),
        float(f3), df_b, df_e, p3,
    )
    out["ICC3k"] = ICCResult(
        "ICC3k", ICC_FORM_LABELS["ICC3k"], float(icc3k),
        _exact_one(icc3k, (float(1 - 1 / f3_lo), float(1 - 1 / f3_hi))), float(f3), df_b, df_e, p3,
    )
    return {form: out[form] for form in ICC_FORMS}


# --------------------------------------------------------------------------------------------------
# Krippendorff's alpha
# --------------------------------------------------------------------------------------------------

_ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def krippendorff_alpha(
    data: np.ndarray | Sequence[Sequence[float]],
    level: Literal["nominal", "ordinal", "interval", "ratio"] = "nominal",
) -> float:
    """Krippendorff's α for reliability data ``data[rater, unit]`` with NaN for missing values.

    α = 1 − D_o / D_e with the metric of the given level of measurement (Krippendorff 2011),
    computed by the ``krippendorff`` package (same data layout).
    """
    import krippendorff  # local import: optional at module import time

    if level not in _ALPHA_LEVELS:
        raise ValueError(f"level must be one of {_ALPHA_LEVELS}, got {level!r}")
    x = np.asarray(data, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"data must be a 2-D array [rater, unit], got shape {x.shape}")
    pairable = np.sum(~np.isnan(x), axis=0) >= 2
    if not pairable.any():
        raise ValueError("no unit has two or more values; Krippendorff's alpha is undefined")
    # Only values in units with two or more of them enter D_e: a lone value elsewhere cannot make the
    # expected disagreement non-zero, and the package then returns NaN instead of saying why.
    paired = x[:, pairable]
    if np.unique(paired[~np.isnan(paired)]).size < 2:
        raise ValueError("all paired values are identical; Krippendorff's alpha is undefined (no variation)")
    return float(krippendorff.alpha(reliability_data=x, level_of_measurement=level))


# --------------------------------------------------------------------------------------------------
# Pairwise preference agreement (App. H.6)
# --------------------------------------------------------------------------------------------------


def _check_labels(labels: Sequence[str], name: str) -> list[str]:
    out = list(labels)
    bad = sorted({str(x) for x in out if x not in PAIR_LABELS})
    if bad:
        raise ValueError(f"{name} has labels {bad}; expected one of {PAIR_LABELS}")
    return out


def pairwise_agreement(human: Sequence[str], judge: Sequence[str]) -> float:
    """Share of pairs where the two preference labels agree: Agree = (1/|P|) Σ 1[h = a] (App. H.6).

    Labels are "A", "B" or "tie"; a tie counts as agreement only when both sides tie.
    """
    h, a = _check_labels(human, "human"), _check_labels(judge, "judge")
    if len(h) != len(a):
        raise ValueError(f"human and judge differ in length ({len(h)} vs {len(a)})")
    if not h:
        raise ValueError("pairwise_agreement needs at least one pair")
    # Agree = (1/|P|) Σ 1[h_ij = a_ij]  (Ekphrasis App. H.6)
    return float(np.mean([x == y for x, y in zip(h, a)]))


def majority_label(labels: Sequence[Hashable]) -> Hashable | None:
    """The label chosen by a strict majority (> half) of raters, or None when there is none."""
    if not labels:
        raise ValueError("majority_label needs at least one label")
    label, count = Counter(labels).most_common(1)[0]
    return label if count * 2 > len(labels) else None


def consensus_summary(items: Sequence[Sequence[Hashable]]) -> dict[str, object]:
    """Consensus of several raters per item (Ekphrasis Table 17 columns).

    ``items[i]`` is the list of labels given to item ``i``. Returns ``n_items``, ``unanimous_rate``
    (all raters agree), ``majority_rate`` (a strict majority exists), ``no_majority`` (count) and
    ``majority_counts`` (items per majority label).
    """
    if not items:
        raise ValueError("consensus_summary needs at least one item")
    majorities = [majority_label(list(labels)) for labels in items]
    unanimous = [len(set(labels)) == 1 for labels in items]
    counts = Counter(m for m in majorities if m is not None)
    return {
        "n_items": len(items),
        "unanimous_rate": float(np.mean(unanimous)),
        "majority_rate": float(np.mean([m is not None for m in majorities])),
        "no_majority": int(sum(m is None for m in majorities)),
        "majority_counts": dict(counts),
    }


# --------------------------------------------------------------------------------------------------
# Rank correlation
# --------------------------------------------------------------------------------------------------


def rank_correlation(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> dict[str, tuple[float, float]]:
    """Spearman ρ (mid-ranks for ties) and Kendall τ-b with their two-sided p values (scipy).

    Returns ``{"spearman": (rho, p), "kendall": (tau_b, p)}``.
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"x and y must be 1-D and of equal length ({a.shape} vs {b.shape})")
    if a.size < 3:
        raise ValueError("rank_correlation needs at least 3 paired values")
    if np.any(~np.isfinite(a)) or np.any(~np.isfinite(b)):
        raise ValueError("x and y must be finite")
    if np.all(a == a[0]) or np.all(b == b[0]):
        raise ValueError("rank correlation is undefined when one variable is constant")
    rho = stats.spearmanr(a, b)
    tau = stats.kendalltau(a, b, variant="b")
    rho_p = float(rho.pvalue) if a.size > EXACT_SPEARMAN_MAX_N else spearman_exact_p(a, b)
    return {"spearman": (float(rho.statistic), rho_p), "kendall": (float(tau.statistic), float(tau.pvalue))}


#: Up to this many pairs the Spearman p value is exact (8! = 40,320 orderings); beyond it, scipy's t approximation.
EXACT_SPEARMAN_MAX_N = 8


@lru_cache(maxsize=EXACT_SPEARMAN_MAX_N + 1)
def _orderings(n: int) -> np.ndarray:
    """The n! orderings of range(n), one per row (built once per n: at n = 8 building them costs far
    more than the 40,320 dot products of the test itself). Read-only, since it is shared."""
    orderings = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    orderings.setflags(write=False)
    return orderings


def spearman_exact_p(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Two-sided exact permutation p value of Spearman's ρ: the share of the n! orderings of ``y`` whose
    |ρ| is at least the observed |ρ| (Kendall & Gibbons, *Rank Correlation Methods*, 5th ed., §3.3).

    scipy's t approximation is far off for the handful of models a human subset ranks (n = 4 and ρ = 1
    give p ≈ 0 instead of the exact 2/24 = 0.083). Mid-ranks carry ties; only for n ≤ 8.
    """
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    n = rx.size
    if n > EXACT_SPEARMAN_MAX_N:
        raise ValueError(f"exact enumeration is for n <= {EXACT_SPEARMAN_MAX_N}, got {n}")
    orderings = _orderings(n)
    # ρ is Pearson's r of the ranks (Spearman 1904); centring once makes every permutation's r a dot product
    cx, cy = rx - rx.mean(), ry - ry.mean()
    scale = np.sqrt((cx @ cx) * (cy @ cy))
    observed = abs(cx @ cy) / scale
    permuted = np.abs(cy[orderings] @ cx) / scale
    return float(np.mean(permuted >= observed - 1e-12))


# --------------------------------------------------------------------------------------------------
# Paired proportions (§5.4 novelty ablation)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test of marginal homogeneity on the discordant counts b and c."""

    statistic: float
    p: float
    method: str
    b: int
    c: int


def _check_count(value: float, name: str) -> int:
    if int(value) != value or value < 0:
        raise ValueError(f"{name} must be a non-negative integer count, got {value!r}")
    return int(value)


def mcnemar(b: int, c: int, correction: bool = True) -> McNemarResult:
    """McNemar's test from the discordant counts b (first yes, second no) and c (first no, second yes).

    When b + c < 25 the exact two-sided binomial test is used (statistic = min(b, c)); otherwise the
    χ² statistic (|b − c| − 1)² / (b + c) with continuity correction, or (b − c)² / (b + c) when
    ``correction=False`` (the textbook form). ``method`` names the test that was used.
    """
    b, c = _check_count(b, "b"), _check_count(c, "c")
    if b + c == 0:
        raise ValueError("McNemar's test needs at least one discordant pair (b + c > 0)")
    if b + c < MCNEMAR_EXACT_BELOW:
        # exact conditional test: min(b, c) ~ Binomial(b + c, 1/2)  (McNemar 1947; Agresti 2013 §11.1)
        p = stats.binomtest(min(b, c), b + c, 0.5).pvalue
        return McNemarResult(float(min(b, c)), float(min(p, 1.0)), "exact binomial", b, c)
    if correction:
        # χ² = (|b − c| − 1)² / (b + c)  (Edwards 1948 continuity correction)
        stat = (abs(b - c) - 1.0) ** 2 / (b + c)
        method = "chi-square with continuity correction"
    else:
        # χ² = (b − c)² / (b + c)  (McNemar 1947; Agresti 2007 §8.1.1)
        stat = (b - c) ** 2 / (b + c)
        method = "chi-square without continuity correction"
    return McNemarResult(float(stat), float(stats.chi2.sf(stat, 1)), method, b, c)


@dataclass(frozen=True)
class PairedInterval:
    """Interval for the difference of paired proportions p1 − p2 = (b − c)/n."""

    estimate: float
    low: float
    high: float
    method: str
    level: float


def paired_difference_interval(
    b: int,
    c: int,
    n: int,
    method: Literal["wald", "newcombe", "bootstrap"] = "newcombe",
    level: float = 0.95,
    a: int | None = None,
    n_boot: int = 10000,
    seed: int = 42,
) -> PairedInterval:
    """Interval for p1 − p2 from paired binary outcomes with discordant counts b, c out of n pairs.

    ``b`` = pairs correct under condition 1 only, ``c`` = correct under condition 2 only, ``a`` =
    pairs correct under both (needed only by ``"newcombe"``, whose φ correction uses all four cells).
    Methods (the returned ``method`` names the one used):

    * ``"wald"`` — (b − c)/n ± z √((b + c) − (b − c)²/n) / n (Agresti 2007 §8.1.2);
    * ``"newcombe"`` — Newcombe (1998) method 10: Wilson score limits of each margin combined with
      the φ correlation correction;
    * ``"bootstrap"`` — percentile bootstrap resampling the n pairs (multinomial over the four cells,
      concordant pairs a + d split as needed; only b, c and n matter), ``n_boot`` draws.
    """
    b, c, n = _check_count(b, "b"), _check_count(c, "c"), _check_count(n, "n")
    if n == 0 or b + c > n:
        raise ValueError(f"need n > 0 and b + c <= n (b={b}, c={c}, n={n})")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    z = stats.norm.ppf(0.5 + level / 2.0)
    est = (b - c) / n
    if method == "wald":
        # SE = √((b + c) − (b − c)²/n)/n  (Agresti 2007 §8.1.2)
        se = np.sqrt(max((b + c) - (b - c) ** 2 / n, 0.0)) / n
        return PairedInterval(est, float(est - z * se), float(est + z * se), "Wald", level)
    if method == "newcombe":
        if a is None:
            raise ValueError("the Newcombe interval needs a, the number of pairs correct under both conditions")
        a = _check_count(a, "a")
        if a + b + c > n:
            raise ValueError(f"a + b + c exceeds n (a={a}, b={b}, c={c}, n={n})")
        lo, hi = _newcombe_paired_cells(a, b, c, n - a - b - c, z)
        return PairedInterval(est, lo, hi, "Newcombe (1998) method 10 (Wilson score, paired)", level)
    if method == "bootstrap":
        if int(n_boot) != n_boot or n_boot < 100:
            raise ValueError("n_boot must be an integer >= 100")
        rng = np.random.default_rng(seed)
        draws = rng.multinomial(n, [b / n, c / n, 1.0 - (b + c) / n], size=int(n_boot))
        diffs = (draws[:, 0] - draws[:, 1]) / n
        lo, hi = np.percentile(diffs, [50.0 * (1 - level), 50.0 * (1 + level)])
        return PairedInterval(est, float(lo), float(hi), f"percentile bootstrap ({int(n_boot)} resamples of pairs)", level)
    raise ValueError(f"method must be 'wald', 'newcombe' or 'bootstrap', got {method!r}")


def _wilson(x: int, n: int, z: float) -> tuple[float, float]:
    # Wilson (1927) score interval: (2x + z² ± z√(z² + 4x(n − x)/n)) / (2(n + z²))
    centre = 2 * x + z**2
    half = z * np.sqrt(z**2 + 4.0 * x * (n - x) / n)
    denom = 2.0 * (n + z**2)
    return (centre - half) / denom, (centre + half) / denom


def _newcombe_paired_cells(a: int, b: int, c: int, d: int, z: float) -> tuple[float, float]:
    """Newcombe (1998) method 10 interval for p1 − p2 with p1 = (a + b)/n, p2 = (a + c)/n."""
    n = a + b + c + d
    x1, x2 = a + b, a + c
    p1, p2 = x1 / n, x2 / n
    l1, u1 = _wilson(x1, n, z)
    l2, u2 = _wilson(x2, n, z)
    # φ = C/√((a+b)(c+d)(a+c)(b+d)) with C = ad − bc − n/2 if ad − bc > n/2, 0 if 0 <= ad − bc <= n/2,
    # ad − bc if negative, and φ = 0 when a margin is empty (Newcombe 1998, method 10)
    denom = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    corrected = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
    phi = corrected / np.sqrt(denom) if denom > 0 else 0.0
    # δ² and ε² of Newcombe (1998) method 10: squared-and-added Wilson distances with φ correction
    dl2 = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    du2 = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    est = p1 - p2
    return float(est - np.sqrt(max(dl2, 0.0))), float(est + np.sqrt(max(du2, 0.0)))


# --------------------------------------------------------------------------------------------------
# Cross-modal sign agreement (App. I.4)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SignAgreement:
    """Pairwise sign agreement between text-level BT differences and image preference rates."""

    decisive_agree: int
    decisive_pairs: int
    decisive_rate: float
    neutral_agree: int
    all_pairs: int
    neutral_rate: float
    image_ties: int


def pair_sign_agreement(
    delta_text: Sequence[float] | np.ndarray, p_image: Sequence[float] | np.ndarray
) -> SignAgreement:
    """PairAgree = (1/|P|) Σ 1[sign(Δtext) = sign(p_img − 0.5)] (Ekphrasis App. I.4).

    Reported two ways: over decisive pairs only (image preference ≠ 0.5 and Δ ≠ 0), and over all
    pairs with image ties (p = 0.5) counted as neutral — they stay in the denominator and count as
    disagreement.
    """
    d, p = np.asarray(delta_text, dtype=float), np.asarray(p_image, dtype=float)
    if d.shape != p.shape or d.ndim != 1 or d.size == 0:
        raise ValueError(f"delta_text and p_image must be non-empty 1-D arrays of equal length ({d.shape}, {p.shape})")
    if np.any((p < 0) | (p > 1)) or not np.all(np.isfinite(d)):
        raise ValueError("p_image must lie in [0, 1] and delta_text must be finite")
    s_text, s_img = np.sign(d), np.sign(p - 0.5)
    agree = (s_text == s_img) & (s_img != 0)
    decisive = (s_img != 0) & (s_text != 0)
    n_dec = int(decisive.sum())
    return SignAgreement(
        decisive_agree=int((agree & decisive).sum()),
        decisive_pairs=n_dec,
        decisive_rate=float((agree & decisive).sum() / n_dec) if n_dec else float("nan"),
        neutral_agree=int(agree.sum()),
        all_pairs=int(d.size),
        neutral_rate=float(agree.sum() / d.size),
        image_ties=int((s_img == 0).sum()),
    )

