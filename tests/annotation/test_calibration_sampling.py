"""annotation.calibration_sampling: the calibration rule's priorities and batches on a synthetic fit."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from annotation.calibration_sampling import (
    CALIBRATION_RULE,
    calibration_batch,
    calibration_pairs_for_tasks,
    disagreement_rates,
    pair_priorities,
)
from engine.calibration import ppi_bradley_terry

K = 5
THETA = np.array([1.5, 0.2, 0.1, -0.8, -1.6])  # models 1 and 2 are hard to separate


def _fit(seed=0, n=400):
    rng = np.random.default_rng(seed)
    i = rng.integers(0, K, n)
    j = (i + rng.integers(1, K, n)) % K
    y = (rng.random(n) < expit(THETA[i] - THETA[j])).astype(float)
    return ppi_bradley_terry(K, (i, j, y)), (i, j, y)


def test_the_close_neighbours_come_first():
    fit, _ = _fit()
    priorities = pair_priorities(fit)
    best = max(priorities, key=priorities.get)
    assert best == frozenset((1, 2))
    assert priorities[frozenset((1, 2))] > priorities[frozenset((0, 4))]


def test_judge_human_disagreement_raises_a_pairs_priority():
    fit, _ = _fit()
    plain = pair_priorities(fit, {}, 0.1)
    disputed = pair_priorities(fit, {frozenset((3, 4)): 0.9}, 0.1)
    assert disputed[frozenset((3, 4))] > plain[frozenset((3, 4))]
    assert disputed[frozenset((1, 2))] == plain[frozenset((1, 2))]


def test_a_batch_spreads_over_pairs():
    fit, _ = _fit()
    batch = calibration_batch(fit, 40)
    assert len(batch) == 40
    assert len(set(batch)) > 1  # the rank-one updates lower a pair's worth once it was chosen


def test_a_model_no_person_compared_is_compared_first():
    rng = np.random.default_rng(3)
    i = rng.integers(0, K - 1, 300)
    j = (i + rng.integers(1, K - 1, 300)) % (K - 1)  # model 4 never compared
    y = (rng.random(300) < expit(THETA[i] - THETA[j])).astype(float)
    fit = ppi_bradley_terry(K, (i, j, y))
    first = calibration_batch(fit, 1)[0]
    assert 4 in first


def test_pairs_are_spread_over_tasks_once_per_task():
    plan = calibration_pairs_for_tasks([(1, 2), (1, 2), (1, 2), (0, 1)], ["t1", "t2"], 2)
    for pairs in plan.values():
        keys = [frozenset((p.model_a, p.model_b)) for p in pairs]
        assert len(keys) == len(set(keys)) <= 2
        assert all(p.stratum == CALIBRATION_RULE for p in pairs)
    assert sum(len(p) for p in plan.values()) == 3  # the third (1, 2) has no task left


def test_disagreement_rates_count_a_tie_only_against_a_tie():
    i, j = np.array([0, 0, 1]), np.array([1, 1, 2])
    rates, overall = disagreement_rates((i, j, np.array([1.0, 0.5, 0.0])), np.array([0.9, 0.5, 0.5]))
    assert rates[frozenset((0, 1))] == 0.0 and rates[frozenset((1, 2))] == 1.0
    assert overall == 1 / 3
