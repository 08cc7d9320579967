"""The five semantic tasks and their scores (engine/easel/semantic.py, EASEL §3.2–§3.3)."""

import json
import math
import shutil

import numpy as np
import pytest

from engine.easel.episode import Environment
from engine.easel.semantic import (
    CIRCLE_OUTLINE,
    HANDWRITING_HELLO,
    HORSE_OUTLINE,
    MAZE,
    SIMPLE_MAZE,
    TesseractRecogniser,
    letter_match_rate,
    semantic_diagnostics,
    semantic_episode_summary,
    semantic_tasks,
    target_mask,
)
from engine.easel.task import task_from_record, task_to_record


def tasks_by_name(seed=0):
    return {t.id: t for t in semantic_tasks(seed)}


def stroke(x0, y0, xc, yc, x1, y1):
    return json.dumps({"action": "brush_stroke", "xs": x0, "ys": y0, "xc": xc, "yc": yc, "xe": x1, "ye": y1})


def circle_strokes(cx, cy, r, arcs=8):
    """Quadratic Bézier arcs along a circle: control point at r / cos(π/arcs) on the mid angle."""
    out = []
    for k in range(arcs):
        a0, a1 = 2 * math.pi * k / arcs, 2 * math.pi * (k + 1) / arcs
        am, rc = (a0 + a1) / 2, r / math.cos(math.pi / arcs)
        out.append(stroke(cx + r * math.cos(a0), cy + r * math.sin(a0), cx + rc * math.cos(am),
                          cy + rc * math.sin(am), cx + r * math.cos(a1), cy + r * math.sin(a1)))
    return out


def centre(cell, task):
    pitch = 1.0 / task.spec["cells"]
    return (cell[1] + 0.5) * pitch, (cell[0] + 0.5) * pitch


def route_strokes(task):
    route = task.spec["route"]
    out = []
    for a, b in zip(route, route[1:]):
        (x0, y0), (x1, y1) = centre(a, task), centre(b, task)
        out.append(stroke(x0, y0, (x0 + x1) / 2, (y0 + y1) / 2, x1, y1))
    return out


def test_there_are_five_semantic_tasks_within_table_one_ranges():
    tasks = semantic_tasks(0)
    assert [t.id for t in tasks] == [CIRCLE_OUTLINE, HORSE_OUTLINE, HANDWRITING_HELLO, SIMPLE_MAZE, MAZE]
    assert all(64 <= t.size <= 512 and 64 <= t.budget <= 128 for t in tasks)


def test_a_perfect_circle_outline_scores_dice_near_one():
    task = tasks_by_name()[CIRCLE_OUTLINE]
    env = Environment(task)
    env.replay(circle_strokes(task.spec["cx"], task.spec["cy"], task.spec["radius"]))
    assert env.final_score().value > 0.97
    assert env.final_score().recogniser == "mask-dice"


def test_an_open_scribble_encloses_nothing():
    task = tasks_by_name()[CIRCLE_OUTLINE]
    env = Environment(task)
    env.step(stroke(0.1, 0.1, 0.5, 0.2, 0.9, 0.1))
    assert env.final_score().value == 0.0


def test_horse_mask_is_rebuilt_from_its_spec():
    task = tasks_by_name()[HORSE_OUTLINE]
    rebuilt = task_from_record(*task_to_record(task))
    mask = target_mask(rebuilt)
    assert 0.1 < mask.mean() < 0.6
    np.testing.assert_array_equal(rebuilt.reference[mask][:, 0], task.reference[mask][:, 0])


def blocked_neighbour(task):
    start = tuple(task.spec["route"][0])
    open_cells = {tuple(b) for a, b in task.spec["passages"] if tuple(a) == start}
    open_cells |= {tuple(a) for a, b in task.spec["passages"] if tuple(b) == start}
    for cell in ((start[0] + 1, start[1]), (start[0], start[1] + 1)):
        if cell not in open_cells:
            return start, cell
    raise AssertionError("the start cell has both neighbours open")


@pytest.mark.parametrize("name", [SIMPLE_MAZE, MAZE])
def test_a_maze_stroke_through_a_wall_is_rejected_and_costs_a_step(name):
    task = tasks_by_name()[name]
    env = Environment(task)
    before = env.canvas.copy()
    start, blocked = blocked_neighbour(task)
    (x0, y0), (x1, y1) = centre(start, task), centre(blocked, task)
    outcome = env.step(stroke(x0, y0, (x0 + x1) / 2, (y0 + y1) / 2, x1, y1))
    assert outcome.collision and not outcome.valid and outcome.kind == "stroke"
    assert "wall" in outcome.feedback
    assert env.step_index == 1
    np.testing.assert_array_equal(env.canvas, before)


@pytest.mark.parametrize("name", [SIMPLE_MAZE, MAZE])
def test_following_the_route_scores_one(name):
    task = tasks_by_name()[name]
    env = Environment(task)
    outcomes = env.replay(route_strokes(task))
    assert not any(o.collision for o in outcomes)
    assert env.final_score().value == 1.0


def test_half_the_route_scores_about_half():
    task = tasks_by_name()[MAZE]
    strokes = route_strokes(task)
    env = Environment(task)
    env.replay(strokes[: len(strokes) // 2])
    score = env.final_score()
    assert score.value == score.detail["cells_reached"] / len(task.spec["route"])
    assert 0.3 < score.value < 0.7


def test_undo_restores_the_previous_canvas_exactly():
    task = tasks_by_name()[CIRCLE_OUTLINE]
    env = Environment(task)
    arcs = circle_strokes(task.spec["cx"], task.spec["cy"], task.spec["radius"])
    env.step(arcs[0])
    canvas, ink = env.canvas.copy(), env.ink.copy()
    env.step(arcs[1])
    outcome = env.step(json.dumps({"action": "undo"}))
    assert outcome.kind == "undo" and outcome.valid
    np.testing.assert_array_equal(env.canvas, canvas)
    np.testing.assert_array_equal(env.ink, ink)


def test_undo_with_nothing_drawn_is_invalid():
    env = Environment(tasks_by_name()[CIRCLE_OUTLINE])
    assert not env.step(json.dumps({"action": "undo"})).valid


def test_submit_ends_the_episode():
    env = Environment(tasks_by_name()[CIRCLE_OUTLINE])
    env.step(json.dumps({"action": "submit"}))
    assert env.done and env.submitted_at == 1


class FixedReader:
    name = "fixed-test-reader"

    def __init__(self, text):
        self.text = text

    def recognise(self, image):
        return self.text


@pytest.mark.parametrize(("text", "rate"), [("hello", 1.0), ("Hello!", 1.0), ("helo", 0.6), ("jello", 0.8), ("", 0.0)])
def test_letter_position_match_rate(text, rate):
    assert letter_match_rate(text) == pytest.approx(rate)


def test_handwriting_score_names_its_recogniser():
    env = Environment(tasks_by_name()[HANDWRITING_HELLO], recogniser=FixedReader("hallo"))
    score = env.final_score()
    assert score.value == pytest.approx(0.8)
    assert score.recogniser == "fixed-test-reader" and score.detail["recognised"] == "hallo"


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")
def test_tesseract_reads_printed_hello():
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (256, 96), "white")
    ImageDraw.Draw(image).text((20, 15), "hello", fill=(0, 0, 128), font=ImageFont.load_default(size=56))
    reader = TesseractRecogniser()
    text = reader.recognise(np.asarray(image, np.float32) / 255.0)
    assert letter_match_rate(text) == 1.0
    assert reader.name.startswith("tesseract")


def test_semantic_diagnostics_count_undos_and_submit_percentile():
    tasks = tasks_by_name()
    maze = semantic_episode_summary(tasks[SIMPLE_MAZE], ["stroke", "undo", "invalid", "submit"],
                                    [True, True, False, True], submitted_at=4)
    circle = semantic_episode_summary(tasks[CIRCLE_OUTLINE], ["stroke", "undo"], [True, True], submitted_at=None)
    table = semantic_diagnostics([{**maze, "steps": 4}, {**circle, "steps": 2}])
    assert table["maze_undo"] == 1 and table["non_maze_undo"] == 1
    assert table["maze_invalid_rate"] == 0.25
    assert table["avg_submit_percentile"] == pytest.approx((100 * 4 / tasks[SIMPLE_MAZE].budget + 100) / 2)


def test_same_seed_gives_identical_semantic_tasks():
    a, b = semantic_tasks(4), semantic_tasks(4)
    for x, y in zip(a, b):
        assert x.spec == y.spec
        np.testing.assert_array_equal(x.reference, y.reference)


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")
def test_hello_written_with_brush_strokes_scores_one_with_tesseract():
    from engine.easel.simulated import hello_paths

    env = Environment(tasks_by_name()[HANDWRITING_HELLO], recogniser=TesseractRecogniser())
    env.replay([stroke(*path) for path in hello_paths()])
    score = env.final_score()
    assert score.value == 1.0 and score.recogniser.startswith("tesseract")


def test_the_maze_invalid_rate_is_pooled_over_all_maze_actions_not_averaged_per_episode():
    # EASEL §5.2, Table 4: "Maze Inv.: fraction of invalid actions on maze tasks"; it was the mean of the
    # episodes' rates, (1/4 + 0/12) / 2 = 0.125
    tasks = tasks_by_name()
    short = semantic_episode_summary(tasks[SIMPLE_MAZE], ["stroke", "invalid", "stroke", "submit"],
                                     [True, False, True, True], submitted_at=4)
    long = semantic_episode_summary(tasks[MAZE], ["stroke"] * 12, [True] * 12, submitted_at=None)
    circle = semantic_episode_summary(tasks[CIRCLE_OUTLINE], ["invalid", "stroke"], [False, True], submitted_at=None)
    table = semantic_diagnostics([{**short, "steps": 4}, {**long, "steps": 12}, {**circle, "steps": 2}])
    assert table["maze_invalid_rate"] == pytest.approx(1 / 16)
