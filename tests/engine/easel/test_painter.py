"""Anchors and the search painter (engine/easel/painter.py, EASEL Table 2)."""

import json

import numpy as np
import pytest

from engine.easel.episode import Environment
from engine.easel.metrics import similarity
from engine.easel.painter import (
    SearchPainter,
    blank_fill,
    dominant_colour,
    dominant_colour_fill,
    mean_colour_fill,
)
from engine.easel.references import generate_suite


@pytest.fixture(scope="module")
def task():
    return generate_suite(4, per_category={"programmatic": 1})[0]


def small_painter(seed):
    return SearchPainter(seed=seed, candidates=8, refinements=4)


def test_blank_fill_is_white(task):
    assert np.all(blank_fill(task.reference) == 1.0)


def test_mean_colour_fill_is_the_reference_mean(task):
    fill = mean_colour_fill(task.reference)
    np.testing.assert_allclose(fill[0, 0], task.reference.reshape(-1, 3).astype(np.float64).mean(axis=0), atol=1e-6)
    assert np.all(fill == fill[0, 0])


def test_dominant_colour_is_the_mean_of_the_most_populous_histogram_cell():
    image = np.zeros((10, 10, 3), np.float32)
    image[:6] = (0.80, 0.10, 0.10)  # 60 pixels in cell (6, 0, 0)
    image[:3, :5] = (0.87, 0.12, 0.12)  # 15 of them shifted, same 1/8-wide cell
    image[6:] = (0.10, 0.10, 0.90)  # 40 pixels elsewhere
    np.testing.assert_allclose(dominant_colour(image), (0.80 * 45 + 0.87 * 15) / 60 * np.array([1, 0, 0])
                               + (0.10 * 45 + 0.12 * 15) / 60 * np.array([0, 1, 1]), atol=1e-6)
    assert np.all(dominant_colour_fill(image) == dominant_colour_fill(image)[0, 0])


def run(task, painter, budget=10):
    env = Environment(task, budget=budget)
    env.run(painter)
    return env


def test_painter_is_deterministic_for_a_seed(task):
    a, b = run(task, small_painter(5)), run(task, small_painter(5))
    assert [o.raw for o in a.outcomes] == [o.raw for o in b.outcomes]
    np.testing.assert_array_equal(a.canvas, b.canvas)


def test_different_seeds_paint_differently(task):
    assert [o.raw for o in run(task, small_painter(1)).outcomes] != [o.raw for o in run(task, small_painter(2)).outcomes]


def test_painter_never_lowers_s_and_beats_the_mean_fill(task):
    env = run(task, small_painter(0), budget=task.budget)
    s = env.s_values()
    assert all(b >= a - 1e-12 for a, b in zip(s, s[1:]))
    assert s[-1] > similarity(mean_colour_fill(task.reference), task.reference).s
    assert env.similarity.edge_iou > 0


def test_painter_actions_are_valid_reconstruction_json(task):
    env = run(task, small_painter(0), budget=3)
    assert all(o.valid for o in env.outcomes)
    assert json.loads(env.outcomes[0].raw)["action"] == "brush_stroke"


def test_painter_is_labelled_as_a_stand_in_and_not_simulated():
    painter = SearchPainter()
    assert painter.is_simulated is False
    assert "Learning-to-Paint" in painter.label
