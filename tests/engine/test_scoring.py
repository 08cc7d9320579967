"""Tests for engine.scoring — VCI z scores, family tables, trade-off percentiles."""

from __future__ import annotations

import numpy as np
import pytest

from engine.bt import expected_winrate
from engine.scoring import dimensions_without_spread, family_table, tradeoff_percentiles, vci_scores

# Ekphrasis Table 19 (App. K.1), one row per model (Gemini-3.1 Pro … Llama-4-Mav):
# Overall, U z, E z, N z, U win, E win, N win.
TABLE19 = np.array(
    [
        [0.96, 0.61, 1.19, 1.08, 0.61, 0.80, 0.66],
        [0.92, 1.53, 0.65, 0.60, 0.78, 0.66, 0.59],
        [0.73, 0.59, 1.20, 0.39, 0.61, 0.80, 0.56],
        [0.70, 0.49, 0.70, 0.90, 0.59, 0.68, 0.64],
        [0.68, 0.13, 0.26, 1.66, 0.52, 0.57, 0.75],
        [0.49, 1.10, 0.55, -0.17, 0.70, 0.64, 0.47],
        [0.49, 0.38, 0.88, 0.20, 0.57, 0.72, 0.53],
        [0.39, 0.43, 0.44, 0.31, 0.58, 0.61, 0.55],
        [0.29, 0.12, 0.37, 0.37, 0.52, 0.59, 0.56],
        [-0.15, 0.45, -0.37, -0.52, 0.58, 0.41, 0.42],
        [-1.22, -1.37, -1.37, -0.92, 0.25, 0.15, 0.36],
        [-1.23, -1.95, -1.46, -0.28, 0.14, 0.13, 0.46],
        [-1.42, -1.46, -1.57, -1.24, 0.23, 0.11, 0.31],
        [-1.64, -1.06, -1.46, -2.39, 0.31, 0.13, 0.14],
    ]
)
TABLE19_WIN = {"U": TABLE19[:, 4], "E": TABLE19[:, 5], "N": TABLE19[:, 6]}
TABLE19_Z = {"U": TABLE19[:, 1], "E": TABLE19[:, 2], "N": TABLE19[:, 3]}
PRINT_HALF_UNIT = 0.005  # Table 19 prints 2 decimals


def _z_tolerance(sd: float) -> float:
    # win rates rounded by ±0.005 move z by ≤ 0.005/σ_d; z itself is rounded by ±0.005;
    # 0.001 covers the effect of rounding on μ_d and σ_d themselves
    return PRINT_HALF_UNIT / sd + PRINT_HALF_UNIT + 0.001


def test_vci_reproduces_table19_z_from_its_published_win_rates():
    result = vci_scores(TABLE19_WIN)
    for d in "UEN":
        np.testing.assert_allclose(result.z[d], TABLE19_Z[d], atol=_z_tolerance(result.sd[d]), err_msg=d)


def test_vci_overall_reproduces_table19_overall():
    result = vci_scores(TABLE19_WIN)
    tol = np.mean([_z_tolerance(result.sd[d]) for d in "UEN"]) + PRINT_HALF_UNIT
    np.testing.assert_allclose(result.overall, TABLE19[:, 0], atol=tol)


def test_vci_standardises_with_the_population_standard_deviation():
    # the sample SD (n − 1) would put GPT-5.4's U z at 1.48, outside rounding of the published 1.53
    result = vci_scores(TABLE19_WIN)
    for d in "UEN":
        assert result.z[d].mean() == pytest.approx(0.0, abs=1e-12)
        assert result.z[d].std(ddof=0) == pytest.approx(1.0)


def test_vci_moments_come_from_subject_models_only():
    s = {"U": [0.9, 0.5, 0.3, 0.2], "E": [0.1, 0.5, 0.6, 0.7]}
    subjects = [False, True, True, True]
    result = vci_scores(s, subjects)
    sub = np.array([0.5, 0.3, 0.2])
    assert result.mean["U"] == pytest.approx(sub.mean())
    assert result.z["U"][0] == pytest.approx((0.9 - sub.mean()) / sub.std())


def test_vci_rejects_a_dimension_without_spread():
    with pytest.raises(ValueError, match="zero spread"):
        vci_scores({"U": [0.5, 0.5, 0.5]})


def test_vci_rejects_dimensions_of_different_lengths():
    with pytest.raises(ValueError, match="same length"):
        vci_scores({"U": [0.1, 0.9], "E": [0.2, 0.3, 0.5]})


def _family_winrates(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    return {d: expected_winrate(rng.normal(0.0, 1.0, n)) for d in "UEN"}


def test_family_table_standardises_within_each_family_and_averages_dimensions():
    rng = np.random.default_rng(0)
    families = {f: _family_winrates(rng, 6) for f in ("abstraction", "combination")}
    overall = _family_winrates(rng, 6)
    table = family_table(families, overall)
    for f, dims in families.items():
        for d in "UEN":
            np.testing.assert_allclose(table.z[f][d], vci_scores(dims).z[d])
        np.testing.assert_allclose(table.task_avg[f], np.mean([table.z[f][d] for d in "UEN"], axis=0))


def test_family_residuals_are_family_minus_overall_scores():
    rng = np.random.default_rng(1)
    fam = _family_winrates(rng, 5)
    overall = _family_winrates(rng, 5)
    table = family_table({"adaptation": fam}, overall, subjects=[True, True, True, False, False])
    for d in "UEN":
        np.testing.assert_allclose(table.model_residuals["adaptation"][d], fam[d] - overall[d])
        assert table.residuals["adaptation"][d] == pytest.approx((fam[d] - overall[d])[:3].mean())


def test_family_residual_over_the_full_pool_of_bt_win_rates_is_zero():
    rng = np.random.default_rng(2)
    table = family_table({"transformation": _family_winrates(rng, 7)}, _family_winrates(rng, 7))
    for d in "UEN":
        assert table.residuals["transformation"][d] == pytest.approx(0.0, abs=1e-12)


def test_tradeoff_percentiles_put_the_median_model_at_zero():
    u, n = tradeoff_percentiles([0.1, 0.5, 0.9, 0.3, 0.7], [5, 4, 3, 2, 1])
    np.testing.assert_allclose(u, [-50, 0, 50, -25, 25])
    np.testing.assert_allclose(n, [50, 25, 0, -25, -50])


def test_tradeoff_percentiles_give_tied_scores_the_same_coordinate():
    u, _ = tradeoff_percentiles([0.2, 0.2, 0.8, 0.9], [1, 2, 3, 4])
    assert u[0] == u[1]


def test_dimensions_without_spread_names_the_flat_ones_among_the_subject_models():
    winrates = {"U": [0.5, 0.5, 0.5, 0.9], "E": [0.2, 0.5, 0.8, 0.5]}
    assert dimensions_without_spread(winrates) == []
    # the fourth model is a reference, not a subject: among the subjects U has no spread
    assert dimensions_without_spread(winrates, subjects=[True, True, True, False]) == ["U"]
    with pytest.raises(ValueError, match="'U' has zero spread"):
        vci_scores(winrates, subjects=[True, True, True, False])
