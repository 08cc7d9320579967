"""Tests for engine.agreement — published worked examples first, then library cross-checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from engine.agreement import (
    ICC_FORMS,
    consensus_summary,
    fleiss_kappa,
    fleiss_kappa_test,
    intraclass_correlation,
    krippendorff_alpha,
    majority_label,
    mcnemar,
    pair_sign_agreement,
    paired_difference_interval,
    pairwise_agreement,
    rank_correlation,
)

PUBLISHED_2DP = 0.005  # value printed to 2 decimals
PUBLISHED_3DP = 0.0005  # value printed to 3 decimals
PUBLISHED_4DP = 0.00005  # value printed to 4 decimals
LIBRARY_TOL = 1e-10  # same formula computed by another library
PINGOUIN_CI_TOL = 0.005 + 1e-9  # pingouin rounds its CI95 column to 2 decimals

# Wikipedia "Fleiss' kappa" worked example (10 subjects, 14 raters, 5 categories): κ = 0.210.
# The same table is statsmodels' test fixture `table1` (statsmodels/stats/tests/test_inter_rater.py).
WIKIPEDIA_FLEISS = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)
# Fleiss (1971) psychiatric diagnoses: 30 patients, 6 raters, 5 categories (R irr::diagnoses).
# Fleiss (1971) reports overall κ = 0.430; R `irr::kappam.fleiss(diagnoses)` prints
# "Kappa = 0.43, z = 17.7" (Fleiss–Nee–Landis null SE).
FLEISS_1971_DIAGNOSES = np.array(
    [
        [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5], [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4], [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4], [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5], [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4], [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4], [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
    ]
)
# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges; Table 4 reports
# ICC(1,1)=.17, ICC(2,1)=.29, ICC(3,1)=.71, ICC(1,4)=.44, ICC(2,4)=.62, ICC(3,4)=.91.
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)
SHROUT_FLEISS_ICC = {"ICC1": 0.17, "ICC2": 0.29, "ICC3": 0.71, "ICC1k": 0.44, "ICC2k": 0.62, "ICC3k": 0.91}
# Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", example C: 4 observers x 12 units,
# missing values; α nominal = 0.743, ordinal = 0.815, interval = 0.849, ratio = 0.797.
nan = np.nan
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
)
KRIPPENDORFF_2011_ALPHA = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
# Agresti (2007) An Introduction to Categorical Data Analysis, 2nd ed., §8.1, Table 8.1: approval of the
# Prime Minister in two surveys of the same 1600 people: 794 / 150 / 86 / 570.
# McNemar z = (86 − 150)/√236 = −4.17, z² = 17.36; 95% Wald CI for the change 0.04 ± 1.96(0.0095).
AGRESTI_APPROVAL = {"a": 794, "b": 150, "c": 86, "d": 570}
# Fagerland, Lydersen & Laake (2017) Statistical Analysis of Contingency Tables, ch. 8, Cavo et al. (2012)
# table [[59, 6], [16, 80]]: Newcombe square-and-add interval −0.0621 (−0.1186 to −0.0046), as checked
# in the R package contingencytables (tests/testthat/test-ch8.R).
CAVO_2012 = {"a": 59, "b": 6, "c": 16, "d": 80}
CAVO_2012_NEWCOMBE = (-0.0621, -0.1186, -0.0046)


# --------------------------------------------------------------------------------------- Fleiss κ


def test_fleiss_kappa_reproduces_the_wikipedia_worked_example():
    assert fleiss_kappa(WIKIPEDIA_FLEISS) == pytest.approx(0.210, abs=PUBLISHED_3DP)


def test_fleiss_kappa_and_z_reproduce_fleiss_1971_diagnoses():
    counts, _ = aggregate_raters(FLEISS_1971_DIAGNOSES)
    result = fleiss_kappa_test(counts)
    assert result.kappa == pytest.approx(0.430, abs=PUBLISHED_3DP)
    assert result.z == pytest.approx(17.7, abs=0.05)
    assert result.p < 1e-60
    assert (result.n_items, result.n_raters) == (30, 6)


def test_fleiss_kappa_matches_statsmodels_on_random_tables():
    rng = np.random.default_rng(0)
    for _ in range(20):
        labels = rng.integers(0, 4, size=(50, 5))
        labels[:25, 1:] = labels[:25, :1]  # some agreement
        counts, _ = aggregate_raters(labels, n_cat=4)
        assert fleiss_kappa(counts) == pytest.approx(sm_fleiss_kappa(counts), abs=LIBRARY_TOL)


def test_fleiss_kappa_rejects_unequal_rater_counts():
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa([[2, 1], [1, 1]])


# -------------------------------------------------------------------------------------------- ICC


def test_icc_reproduces_shrout_fleiss_table_4():
    result = intraclass_correlation(SHROUT_FLEISS)
    assert list(result) == list(ICC_FORMS)
    for form, published in SHROUT_FLEISS_ICC.items():
        assert result[form].value == pytest.approx(published, abs=PUBLISHED_2DP), form


def _pingouin_icc(ratings: np.ndarray) -> pd.DataFrame:
    n, k = ratings.shape
    frame = pd.DataFrame({"target": np.repeat(np.arange(n), k), "rater": np.tile(np.arange(k), n),
                          "score": ratings.ravel()})
    return pingouin.intraclass_corr(frame, targets="target", raters="rater", ratings="score").set_index("Type")


# pingouin 0.7 labels the Shrout–Fleiss forms with McGraw–Wong names
PINGOUIN_TYPES = {"ICC1": "ICC(1,1)", "ICC2": "ICC(A,1)", "ICC3": "ICC(C,1)", "ICC1k": "ICC(1,k)",
                  "ICC2k": "ICC(A,k)", "ICC3k": "ICC(C,k)"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_icc_value_f_p_and_interval_match_pingouin(seed):
    rng = np.random.default_rng(seed)
    ratings = rng.normal(size=(12, 1)) + rng.normal(size=(1, 4)) * 0.5 + rng.normal(size=(12, 4)) * 0.7
    ours = intraclass_correlation(ratings)
    ref = _pingouin_icc(ratings)
    for form, ptype in PINGOUIN_TYPES.items():
        row = ref.loc[ptype]
        assert ours[form].value == pytest.approx(row["ICC"], abs=LIBRARY_TOL), form
        assert ours[form].F == pytest.approx(row["F"], rel=LIBRARY_TOL), form
        assert ours[form].p == pytest.approx(row["pval"], rel=1e-8, abs=1e-300), form
        np.testing.assert_allclose(ours[form].ci95, row["CI95"], atol=PINGOUIN_CI_TOL, err_msg=form)


def test_icc_missing_ratings_raise_unless_dropping_targets():
    ratings = SHROUT_FLEISS.copy()
    ratings[2, 1] = np.nan
    with pytest.raises(ValueError, match="missing ratings"):
        intraclass_correlation(ratings)
    dropped = intraclass_correlation(ratings, missing="drop")
    complete = intraclass_correlation(np.delete(SHROUT_FLEISS, 2, axis=0))
    assert dropped["ICC2"].value == complete["ICC2"].value


def test_icc_of_raters_in_perfect_agreement_is_one_not_an_error():
    # Every target rated the same by every rater, targets differ: F is infinite and every form is exactly
    # 1 (pingouin.intraclass_corr 0.7.0 on this table: ICC 1.0 for all six); it raised "undefined".
    result = intraclass_correlation([[1, 1], [2, 2], [4, 4]])
    for form in ICC_FORMS:
        assert (result[form].value, result[form].ci95, result[form].p) == (1.0, (1.0, 1.0), 0.0), form


def test_icc_of_raters_offset_by_a_constant_is_one_for_consistency_only():
    # Rater 2 = rater 1 + 1: zero residual, so consistency is perfect; absolute agreement is not.
    # By hand (Shrout & Fleiss 1979, Table 1): BMS = 14/3, JMS = 3/2, EMS = 0, WMS = 1/2, n = 3, k = 2.
    result = intraclass_correlation([[1, 2], [2, 3], [4, 5]])
    assert (result["ICC3"].value, result["ICC3"].ci95) == (1.0, (1.0, 1.0))
    assert result["ICC3k"].value == 1.0
    assert result["ICC2"].value == pytest.approx((14 / 3) / (14 / 3 + 2 * 1.5 / 3))
    assert result["ICC1"].value == pytest.approx((14 / 3 - 0.5) / (14 / 3 + 0.5))
    assert all(np.isfinite(result["ICC2"].ci95)) and all(np.isfinite(result["ICC1"].ci95))


def test_icc_without_any_variance_is_refused():
    with pytest.raises(ValueError, match="undefined"):
        intraclass_correlation([[3, 3], [3, 3]])


def test_icc_labels_name_both_conventions():
    labels = {form: r.label for form, r in intraclass_correlation(SHROUT_FLEISS).items()}
    assert "ICC(A,1)" in labels["ICC2"] and "ICC(C,1)" in labels["ICC3"]


# ----------------------------------------------------------------------------------- Krippendorff α


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_alpha_reproduces_krippendorff_2011_example(level):
    assert krippendorff_alpha(KRIPPENDORFF_2011, level) == pytest.approx(
        KRIPPENDORFF_2011_ALPHA[level], abs=PUBLISHED_3DP
    )


def test_krippendorff_alpha_rejects_unknown_level():
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(KRIPPENDORFF_2011, "cardinal")


# ---------------------------------------------------------------------------- pairwise agreement


def test_tie_counts_as_agreement_only_when_both_sides_tie():
    human = ["A", "tie", "tie", "B", "A"]
    judge = ["A", "tie", "A", "B", "tie"]
    assert pairwise_agreement(human, judge) == pytest.approx(3 / 5)


def test_pairwise_agreement_rejects_unknown_labels():
    with pytest.raises(ValueError, match="expected one of"):
        pairwise_agreement(["A", "C"], ["A", "B"])


def test_majority_label_needs_a_strict_majority():
    assert majority_label(["A", "A", "B"]) == "A"
    assert majority_label(["A", "B", "tie"]) is None
    assert majority_label(["A", "B"]) is None


def test_consensus_summary_counts_unanimous_majority_and_no_majority_items():
    summary = consensus_summary([["A", "A", "A"], ["A", "B", "B"], ["A", "B", "tie"], ["tie", "tie", "A"]])
    assert summary["unanimous_rate"] == pytest.approx(0.25)
    assert summary["majority_rate"] == pytest.approx(0.75)
    assert summary["no_majority"] == 1
    assert summary["majority_counts"] == {"A": 1, "B": 1, "tie": 1}


# ---------------------------------------------------------------------------- rank correlation


def test_rank_correlation_uses_midranks_and_tau_b_like_scipy():
    x = [1, 2, 2, 3, 4, 5, 5, 6, 7, 8]
    y = [2, 1, 3, 3, 5, 4, 6, 6, 8, 7]
    result = rank_correlation(x, y)
    rho, tau = stats.spearmanr(x, y), stats.kendalltau(x, y, variant="b")
    assert result["spearman"] == pytest.approx((rho.statistic, rho.pvalue), abs=LIBRARY_TOL)
    assert result["kendall"] == pytest.approx((tau.statistic, tau.pvalue), abs=LIBRARY_TOL)


def test_spearman_p_of_four_perfectly_ordered_models_is_the_exact_two_in_twenty_four():
    # Of the 4! orderings only the identity and its reverse reach |rho| = 1.
    rho, p = rank_correlation([0.3, 1.2, 2.0, 3.1], [-1.0, 0.1, 0.4, 2.2])["spearman"]
    assert rho == pytest.approx(1.0) and p == pytest.approx(2 / 24)


def test_small_sample_spearman_p_matches_scipys_exact_permutation_test():
    x = [1, 2, 2, 3, 4, 5, 5, 6]
    y = [2, 1, 3, 3, 5, 4, 6, 6]

    def rho(a, axis):  # Spearman as Pearson of mid-ranks against the fixed y, over scipy's batch of orderings
        ra = stats.rankdata(a, axis=axis)
        ra = ra - ra.mean(axis=axis, keepdims=True)
        rb = stats.rankdata(y) - np.mean(stats.rankdata(y))
        return (ra * rb).sum(axis=axis) / np.sqrt((ra**2).sum(axis=axis) * (rb**2).sum())

    # one sample with "pairings": every one of the 8! orderings of x against y, exactly
    reference = stats.permutation_test(
        (x,), rho, permutation_type="pairings", n_resamples=np.inf, alternative="two-sided", vectorized=True
    )
    assert rank_correlation(x, y)["spearman"][1] == pytest.approx(reference.pvalue, abs=1e-12)


def test_rank_correlation_rejects_constant_input():
    with pytest.raises(ValueError, match="constant"):
        rank_correlation([1, 1, 1], [1, 2, 3])


# --------------------------------------------------------------------------------------- McNemar


def test_mcnemar_reproduces_agresti_prime_minister_example():
    result = mcnemar(AGRESTI_APPROVAL["b"], AGRESTI_APPROVAL["c"], correction=False)
    assert result.statistic == pytest.approx(17.36, abs=PUBLISHED_2DP)
    assert result.method == "chi-square without continuity correction"


def test_mcnemar_matches_statsmodels_with_continuity_correction():
    result = mcnemar(150, 86)
    ref = sm_mcnemar([[794, 150], [86, 570]], exact=False, correction=True)
    assert result.statistic == pytest.approx(ref.statistic, rel=LIBRARY_TOL)
    assert result.p == pytest.approx(ref.pvalue, rel=LIBRARY_TOL)
    assert result.method == "chi-square with continuity correction"


@pytest.mark.parametrize(("b", "c"), [(3, 9), (0, 5), (12, 12), (1, 23)])
def test_mcnemar_uses_the_exact_binomial_test_below_25_discordant_pairs(b, c):
    result = mcnemar(b, c)
    ref = sm_mcnemar([[10, b], [c, 10]], exact=True)
    assert result.method == "exact binomial"
    assert result.p == pytest.approx(ref.pvalue, rel=LIBRARY_TOL)


def test_mcnemar_confirms_the_ekphrasis_novelty_ablation_significance():
    # Ekphrasis §5.4, Table 4: discordant correct 64 vs 15 over 235 pairs, McNemar p < 0.001
    assert mcnemar(64, 15).p < 0.001


def test_wald_interval_reproduces_agresti_prime_minister_example():
    interval = paired_difference_interval(AGRESTI_APPROVAL["b"], AGRESTI_APPROVAL["c"], 1600, "wald")
    assert interval.estimate == pytest.approx(0.04)
    assert (interval.estimate - interval.low) / 1.959964 == pytest.approx(0.0095, abs=PUBLISHED_4DP)
    assert interval.method == "Wald"


def test_newcombe_interval_reproduces_fagerland_cavo_example():
    interval = paired_difference_interval(CAVO_2012["b"], CAVO_2012["c"], 161, "newcombe", a=CAVO_2012["a"])
    assert (interval.estimate, interval.low, interval.high) == pytest.approx(CAVO_2012_NEWCOMBE, abs=PUBLISHED_4DP)
    assert "Newcombe" in interval.method


def test_newcombe_interval_requires_the_concordant_count():
    with pytest.raises(ValueError, match="needs a"):
        paired_difference_interval(6, 16, 161, "newcombe")


def test_bootstrap_interval_is_close_to_wald_for_a_large_sample():
    wald = paired_difference_interval(150, 86, 1600, "wald")
    boot = paired_difference_interval(150, 86, 1600, "bootstrap", n_boot=4000)
    assert boot.low == pytest.approx(wald.low, abs=0.003) and boot.high == pytest.approx(wald.high, abs=0.003)
    assert "bootstrap" in boot.method


# ------------------------------------------------------------------------------ sign agreement


def test_pair_sign_agreement_reports_decisive_and_tie_neutral_rates():
    delta = [0.5, -0.2, 0.3, 0.1, -0.4]
    p_img = [0.8, 0.3, 0.5, 0.2, 0.6]  # agree, agree, image tie, disagree, disagree
    result = pair_sign_agreement(delta, p_img)
    assert (result.decisive_agree, result.decisive_pairs) == (2, 4)
    assert result.decisive_rate == pytest.approx(0.5)
    assert (result.neutral_agree, result.all_pairs, result.image_ties) == (2, 5, 1)
    assert result.neutral_rate == pytest.approx(0.4)


def test_krippendorff_alpha_refuses_when_only_unpaired_values_vary():
    # One unit has two values, both 0; the 1 and 2 stand alone in their units, so D_e = 0 and the
    # krippendorff package returns NaN. The dashboard needs a reason, not NaN.
    data = [[0, 1, np.nan], [0, np.nan, 2]]
    with pytest.raises(ValueError, match="identical"):
        krippendorff_alpha(data, "ordinal")
