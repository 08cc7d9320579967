"""engine.method_comparison: Bland–Altman limits, human-vs-instrument agreement, ordering agreement."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from engine.agreement import intraclass_correlation
from engine.method_comparison import OrderingAgreement, bland_altman, instrument_agreement, ordering_agreement


def test_bland_altman_limits_are_bias_plus_minus_1_96_sd():
    human, machine = [3.0, 4.0, 2.0, 5.0, 1.0], [2.0, 4.0, 3.0, 4.0, 1.0]
    result = bland_altman(human, machine)
    d = np.subtract(human, machine)
    assert result.bias == pytest.approx(d.mean())
    assert result.upper - result.bias == pytest.approx(1.96 * d.std(ddof=1))
    assert result.means == pytest.approx(tuple((np.add(human, machine)) / 2))


def test_instrument_agreement_is_icc_a1_of_the_two_columns():
    human, machine = [1.0, 2.3, 3.0, 4.7, 2.0, 5.0], [1.0, 2.0, 3.5, 4.0, 2.5, 4.0]
    result = instrument_agreement(human, machine)
    assert result.icc_a1 == pytest.approx(intraclass_correlation(np.column_stack([human, machine]))["ICC2"].value)
    assert result.spearman == pytest.approx(stats.spearmanr(human, machine).statistic)
    assert result.mean_absolute_difference == pytest.approx(np.mean(np.abs(np.subtract(human, machine))))


def test_a_constant_instrument_leaves_rho_undefined_with_a_note():
    result = instrument_agreement([1.0, 2.0, 3.0], [2.0, 2.0, 2.0])
    assert result.spearman is None and "Spearman" in result.note


def test_ordering_agreement_is_kendall_tau_b_with_its_n():
    result = ordering_agreement([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0])
    assert result.tau == pytest.approx(stats.kendalltau([1, 2, 3, 4], [1, 3, 2, 4]).statistic)
    assert result.n == 4
    assert ordering_agreement([1.0], [2.0]).tau is None


def test_ordering_agreement_of_no_models_is_undefined_not_an_error():
    assert ordering_agreement([], []) == OrderingAgreement(None, None, 0)
