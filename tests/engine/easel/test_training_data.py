"""Next-action samples and curricula (engine/easel/training_data.py, EASEL §4)."""

import json

import numpy as np
import pytest

from engine.easel.episode import Environment
from engine.easel.painter import SearchPainter
from engine.easel.references import generate_suite
from engine.easel.training_data import (
    curriculum_steps,
    next_action_samples,
    quantise_action,
    sample_record,
)


@pytest.fixture(scope="module")
def trajectory():
    task = generate_suite(6, per_category={"programmatic": 1})[0]
    env = Environment(task, budget=20)
    env.run(SearchPainter(seed=0, candidates=6, refinements=2))
    return task, [o.action if o.valid else None for o in env.outcomes]


def test_c1_keeps_every_early_step_and_samples_up_to_step_49():
    steps = curriculum_steps(250, "C1", seed=0)
    assert steps[:16] == list(range(16))
    assert max(steps) <= 49 and 16 < len(steps) < 50


def test_c2_spans_the_trajectory_with_decreasing_density():
    steps = curriculum_steps(250, "C2", seed=0)
    first, last = sum(t < 125 for t in steps), sum(t >= 125 for t in steps)
    assert max(steps) > 200 and first > last


def test_curricula_are_seeded():
    assert curriculum_steps(250, "C2", seed=1) == curriculum_steps(250, "C2", seed=1)
    assert curriculum_steps(250, "C2", seed=1) != curriculum_steps(250, "C2", seed=2)


def test_coordinates_are_quantised_to_integers_in_0_1000():
    action = {"action": "brush_stroke", "xs": 0.1234, "ys": 1.0, "xc": 0.0, "yc": 0.5, "xe": 0.9996, "ye": 0.25,
              "rs": 0.3, "alpha_s": 1.0, "re": 0.2, "alpha_e": 0.5, "cr": 0.1, "cg": 0.2, "cb": 0.3}
    q = quantise_action(action)
    assert [q[k] for k in ("xs", "ys", "xc", "yc", "xe", "ye")] == [123, 1000, 0, 500, 1000, 250]
    assert q["rs"] == 0.3 and q["cb"] == 0.3


@pytest.mark.parametrize("curriculum", ["C1", "C2"])
def test_replaying_a_samples_prior_actions_reproduces_its_canvas(trajectory, curriculum):
    task, actions = trajectory
    samples = next_action_samples(task, actions, curriculum=curriculum, seed=0)
    assert samples
    for sample in samples:
        env = Environment(task, budget=len(sample.prior_actions) + 1)
        env.replay(json.loads(json.dumps(sample.prior_actions)))  # through JSON, as exported
        np.testing.assert_array_equal(env.canvas, sample.canvas)
        assert all(isinstance(sample.target[k], int) for k in ("xs", "ys", "xc", "yc", "xe", "ye"))


def test_sample_records_are_json_with_a_png(trajectory):
    task, actions = trajectory
    record, png = sample_record(next_action_samples(task, actions, curriculum="C1")[3])
    assert json.loads(json.dumps(record))["step"] == record["step"]
    assert png.startswith(b"\x89PNG")
