"""Deterministic A/B order, swap share and fixed samples (App. D)."""

from __future__ import annotations

from engine.judge.sampling import ReliabilityPlan, ab_order, fixed_pair_sample, is_swap_sampled, swap_order

MODELS = [f"model-{n}" for n in range(14)]
PAIRS = [(a, b) for i, a in enumerate(MODELS) for b in MODELS[i + 1 :]]


def test_ab_order_does_not_depend_on_argument_order():
    assert ab_order(42, "run", "t1", "novelty", "x", "y") == ab_order(42, "run", "t1", "novelty", "y", "x")


def test_ab_order_puts_each_model_first_about_half_the_time():
    firsts = [ab_order(42, "run", f"t{n}", "usefulness", "x", "y")[0] == "x" for n in range(1000)]
    assert 0.45 < sum(firsts) / 1000 < 0.55


def test_swap_reverses_the_order():
    order = ab_order(42, "run", "t1", "novelty", "x", "y")
    assert swap_order(order) == (order[1], order[0])


def test_about_ten_percent_of_pairs_are_swap_sampled():
    sampled = [is_swap_sampled(42, f"t{n}", "expressiveness", a, b) for n in range(20) for a, b in PAIRS]
    assert 0.08 < sum(sampled) / len(sampled) < 0.12


def test_swap_sampling_is_deterministic_per_pair():
    assert is_swap_sampled(42, "t1", "novelty", "x", "y") == is_swap_sampled(42, "t1", "novelty", "y", "x")


def test_fixed_sample_ignores_input_order():
    items = [(f"t{n}", pair) for n in range(10) for pair in PAIRS]
    forward = fixed_pair_sample(items, 100, seed=42, purpose="auxiliary:novelty")
    backward = fixed_pair_sample(list(reversed(items)), 100, seed=42, purpose="auxiliary:novelty")
    assert forward == backward
    assert len(set(forward)) == 100


def test_a_larger_fixed_sample_extends_a_smaller_one():
    items = [(f"t{n}", pair) for n in range(10) for pair in PAIRS]
    small = fixed_pair_sample(items, 50, seed=42, purpose="duplicate:novelty")
    large = fixed_pair_sample(items, 200, seed=42, purpose="duplicate:novelty")
    assert large[:50] == small


def test_purposes_draw_different_samples():
    items = [(f"t{n}", pair) for n in range(10) for pair in PAIRS]
    assert fixed_pair_sample(items, 50, seed=42, purpose="a") != fixed_pair_sample(
        items, 50, seed=42, purpose="b"
    )


def test_default_plan_matches_app_d():
    plan = ReliabilityPlan()
    assert plan.calls_per_task_per_dimension == 50
    assert plan.swap_share == 0.10
    assert (plan.duplicate_pairs_per_dimension, plan.duplicate_repeats) == (200, 2)
    assert plan.auxiliary_pairs_per_dimension == 100
