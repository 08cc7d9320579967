"""Trajectory diagnostics (engine/easel/trajectory.py, EASEL §3.3)."""

import json

import pytest

from engine.easel.trajectory import REPEAT_RATE_METHOD_VERSION, trajectory_diagnostics

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


def _stroke(**changes):
    stroke = {"action": "brush_stroke", "xs": 0.25, "ys": 0.5, "xc": 0.5, "yc": 0.5, "xe": 0.75, "ye": 0.5,
              "rs": 0.5, "alpha_s": 1, "re": 0.5, "alpha_e": 1, "cr": 0, "cg": 0, "cb": 0}
    return {**stroke, **changes}


QUANTISED = _stroke(xs=250, ys=500, xc=500, yc=500, xe=750, ye=500)  # EASEL-Data's integers: k/1000
SPELLINGS = [_stroke(), json.loads(json.dumps(_stroke()).replace("0.5", "0.50000")), _stroke(alpha_s=1.0, alpha_e=1.0, cr=0.0),
             QUANTISED]


def test_actions_meaning_the_same_stroke_are_repeats_however_their_numbers_are_written():
    # {"alpha_s": 1} and {"alpha_s": 1.0}, 0.5 and 0.50000, the quantised 250 and the normalised 0.25: one stroke
    d = trajectory_diagnostics([0.1] * 4, SPELLINGS, [True] * 4)
    assert d.repeat_rate == 1.0


def test_strokes_that_differ_are_not_repeats():
    d = trajectory_diagnostics([0.1] * 3, [_stroke(), _stroke(xs=0.26), _stroke(xs=270, ys=500, xc=500, yc=500, xe=750, ye=500)],
                               [True] * 3)
    assert d.repeat_rate == 0.0


def test_method_version_1_still_compares_the_json_text_for_runs_computed_with_it():
    d = trajectory_diagnostics([0.1] * 4, SPELLINGS, [True] * 4, repeat_method=1)
    assert d.repeat_rate == pytest.approx(1 / 3)  # 0.5 and 0.50000 read as one number; the rest differ
    assert REPEAT_RATE_METHOD_VERSION == 2
    with pytest.raises(ValueError, match="unknown repeat-rate method version 3"):
        trajectory_diagnostics([0.1], [_stroke()], [True], repeat_method=3)


def test_only_a_whole_number_of_a_known_method_is_a_known_repeat_method():
    from engine.easel.trajectory import REPEAT_RATE_METHODS, known_repeat_method

    assert [known_repeat_method(m) for m in REPEAT_RATE_METHODS] == list(REPEAT_RATE_METHODS)
    for recorded in (99, 0, True, False, "2", 2.0, [2], {"v": 2}, None):
        assert known_repeat_method(recorded) is None, recorded
