"""Trajectory diagnostics (engine/easel/trajectory.py, EASEL §3.3)."""

import pytest

from engine.easel.trajectory import trajectory_diagnostics

A = {"action": "brush_stroke", "xs": 0.1}
B = {"action": "brush_stroke", "xs": 0.2}


def test_diagnostics_follow_their_definitions():
    s = [0.40, 0.50, 0.60, 0.55, 0.52]
    d = trajectory_diagnostics(s, [A, A, B, B, None], [True, True, True, True, False])
    assert d.final == 0.52
    assert d.at_50 == 0.60  # S at ⌈5/2⌉ = 3
    assert d.auc == pytest.approx(sum(s) / 5)
    assert d.best == 0.60 and d.fb_gap == pytest.approx(0.08)
    assert d.repeat_rate == pytest.approx(2 / 4)
    assert d.invalid_rate == pytest.approx(1 / 5)


def test_even_length_at_50_takes_the_middle_step():
    assert trajectory_diagnostics([0.1, 0.2, 0.3, 0.4], [A, B, A, B], [True] * 4).at_50 == 0.2


def test_invalid_actions_never_count_as_repeats():
    d = trajectory_diagnostics([0.1, 0.1, 0.1], [None, None, None], [False, False, False])
    assert d.repeat_rate == 0.0 and d.invalid_rate == 1.0


def test_mismatched_lengths_are_rejected():
    with pytest.raises(ValueError):
        trajectory_diagnostics([0.1, 0.2], [A], [True, True])
