"""The EASEL brush renderer and strict action parsing (engine/easel/render.py, EASEL §3.4)."""

import json
import math

import numpy as np
import pytest

from engine.easel.episode import Environment
from engine.easel.render import (
    MAX_RADIUS_FRACTION,
    PARAM_KEYS,
    InvalidAction,
    Stroke,
    blank_canvas,
    composite,
    parse_reconstruction_action,
    parse_semantic_action,
    render_stroke,
    stroke_box,
    stroke_coverage,
)
from engine.easel.task import KIND_RECONSTRUCTION, EaselTask

RED = (1.0, 0.0, 0.0)


def horizontal(alpha=1.0, colour=RED, radius=0.5, y=0.5):
    return Stroke(0.2, y, 0.5, y, 0.8, y, radius, alpha, radius, alpha, *colour)


def action(**overrides):
    base = {"action": "brush_stroke", **horizontal().as_dict()}
    base.update(overrides)
    return base


def test_opaque_horizontal_stroke_paints_its_colour_at_the_centre():
    out = render_stroke(blank_canvas(64), horizontal())
    np.testing.assert_array_equal(out[32, 32], np.float32(RED))


def test_far_pixels_are_untouched():
    canvas = blank_canvas(64)
    out = render_stroke(canvas, horizontal())
    radius_px = 0.5 * MAX_RADIUS_FRACTION * 64
    far_rows = np.r_[0:int(32 - radius_px - 2), int(32 + radius_px + 2):64]
    np.testing.assert_array_equal(out[far_rows], canvas[far_rows])


def test_zero_opacity_changes_nothing():
    canvas = np.random.default_rng(0).random((64, 64, 3)).astype(np.float32)
    np.testing.assert_array_equal(render_stroke(canvas, horizontal(alpha=0.0)), canvas)


def test_half_opacity_stroke_blends_exactly_once_over_white():
    colour = (0.2, 0.4, 0.6)
    out = render_stroke(blank_canvas(64), horizontal(alpha=0.5, colour=colour))
    expected = (0.5 * np.array(colour) + 0.5).astype(np.float32)
    np.testing.assert_array_equal(out[32, 32], expected)
    # The stroke overlaps itself along its length; the blend is still one, nowhere darker.
    assert np.all(out[..., 0] >= expected[0])


def test_self_overlapping_stroke_never_darkens():
    loop = Stroke(0.2, 0.5, 0.9, 0.1, 0.2, 0.55, 0.6, 0.5, 0.6, 0.5, 0.0, 0.0, 0.0)
    out = render_stroke(blank_canvas(64), loop)
    assert out.min() >= 0.5 - 1e-7


def test_long_thin_stroke_has_no_gaps():
    thin = Stroke(0.02, 0.5, 0.5, 0.5, 0.98, 0.5, 0.05, 1.0, 0.05, 1.0, 0.0, 0.0, 0.0)
    out = render_stroke(blank_canvas(128), thin)
    darkest_per_column = out[:, 4:124, 0].min(axis=0)
    assert np.all(darkest_per_column < 0.5)


def test_render_does_not_modify_its_input():
    canvas = blank_canvas(32)
    render_stroke(canvas, horizontal())
    assert np.all(canvas == 1.0)


def test_stroke_box_contains_every_changed_pixel():
    stroke = Stroke(0.1, 0.8, 0.9, 0.9, 0.6, 0.1, 0.3, 1.0, 0.1, 0.7, 0.1, 0.2, 0.3)
    out = render_stroke(blank_canvas(64), stroke)
    changed = np.argwhere(np.any(out != 1.0, axis=2))
    box = stroke_box(stroke, 64, 64)
    assert changed[:, 0].min() >= box.r0 and changed[:, 0].max() < box.r1
    assert changed[:, 1].min() >= box.c0 and changed[:, 1].max() < box.c1


def test_integer_coordinates_render_identically_to_floats():
    floats = action(xs=0.25, ys=0.125, xc=0.5, yc=0.75, xe=0.875, ye=0.3)
    ints = action(xs=250, ys=125, xc=500, yc=750, xe=875, ye=300)
    a, b = parse_reconstruction_action(floats), parse_reconstruction_action(ints)
    assert a == b
    np.testing.assert_array_equal(render_stroke(blank_canvas(64), a), render_stroke(blank_canvas(64), b))


@pytest.mark.parametrize("bad", [
    {"xs": 1.2},  # out of range: never clamped
    {"alpha_s": -0.1},
    {"cr": "0.5"},  # strings are not numbers
    {"rs": True},  # booleans are not numbers
    {"xs": float("nan")},
    {"extra": 0.5},  # exactly the expected keys
    {"action": "undo"},  # reconstruction has no undo
])
def test_malformed_reconstruction_actions_are_invalid(bad):
    assert isinstance(parse_reconstruction_action(action(**bad)), InvalidAction)


def test_missing_key_is_invalid():
    incomplete = action()
    del incomplete["cb"]
    assert "missing cb" in parse_reconstruction_action(incomplete).reason


def test_quantised_coordinates_above_1000_are_invalid():
    assert isinstance(parse_reconstruction_action(action(xs=1001, ys=0, xc=0, yc=0, xe=0, ye=0)), InvalidAction)


def test_semantic_actions_take_only_the_path():
    path = {"action": "brush_stroke", "xs": 0.1, "ys": 0.1, "xc": 0.5, "yc": 0.5, "xe": 0.9, "ye": 0.9}
    assert isinstance(parse_semantic_action(path), Stroke)
    assert isinstance(parse_semantic_action({**path, "cr": 0.5}), InvalidAction)
    assert parse_semantic_action({"action": "undo"}) == "undo"
    assert parse_semantic_action({"action": "submit"}) == "submit"


def test_out_of_range_actions_are_counted_invalid_and_change_nothing():
    reference = np.zeros((64, 64, 3), np.float32)
    task = EaselTask(id="t", kind=KIND_RECONSTRUCTION, category="programmatic", size=64, budget=3,
                     reference=reference)
    env = Environment(task)
    before = env.canvas.copy()
    outcome = env.step(json.dumps(action(xe=1.5)))
    assert not outcome.valid and outcome.kind == "invalid" and "xe" in outcome.error
    np.testing.assert_array_equal(env.canvas, before)
    assert env.step_index == 1


def test_stroke_keys_are_the_papers_order():
    assert PARAM_KEYS == ("xs", "ys", "xc", "yc", "xe", "ye", "rs", "alpha_s", "re", "alpha_e", "cr", "cg", "cb")


def array_coverage(params, height, width):
    """The array formulation stroke_coverage had before it was compiled (kept here as the reference)."""
    from engine.easel.render import Box, _polyline

    stroke = Stroke.from_params(params)
    if stroke.alpha_s == 0.0 and stroke.alpha_e == 0.0:
        return None
    x, y, radius, alpha = _polyline(stroke, height, width)
    reach_all = radius + 0.5
    box = Box(max(0, math.floor((y - reach_all).min() - 0.5)), min(height, math.ceil((y + reach_all).max() + 0.5) + 1),
              max(0, math.floor((x - reach_all).min() - 0.5)), min(width, math.ceil((x + reach_all).max() + 0.5) + 1))
    if box.area <= 0:
        return None
    ax, ay, bx, by = x[:-1], y[:-1], x[1:], y[1:]
    reach = np.maximum(radius[:-1], radius[1:]) + 0.5
    r0 = np.maximum(box.r0, np.floor(np.minimum(ay, by) - reach - 0.5).astype(int))
    c0 = np.maximum(box.c0, np.floor(np.minimum(ax, bx) - reach - 0.5).astype(int))
    bh = int(np.max(np.ceil(np.maximum(ay, by) + reach + 0.5).astype(int) + 1 - r0))
    bw = int(np.max(np.ceil(np.maximum(ax, bx) + reach + 0.5).astype(int) + 1 - c0))
    py = (r0[:, None] + np.arange(bh) + 0.5)[:, :, None] - ay[:, None, None]
    px = (c0[:, None] + np.arange(bw) + 0.5)[:, None, :] - ax[:, None, None]
    ex, ey = (bx - ax)[:, None, None], (by - ay)[:, None, None]
    length2 = ex * ex + ey * ey
    inverse = np.divide(1.0, length2, out=np.zeros_like(length2), where=length2 > 0)
    u = np.clip((px * ex + py * ey) * inverse, 0.0, 1.0)
    dx, dy = px - u * ex, py - u * ey
    dist = np.sqrt(dx * dx + dy * dy)
    rho = radius[:-1, None, None] + u * (radius[1:] - radius[:-1])[:, None, None]
    opacity = alpha[:-1, None, None] + u * (alpha[1:] - alpha[:-1])[:, None, None]
    local = np.clip(rho + 0.5 - dist, 0.0, 1.0) * opacity
    h, w = box.r1 - box.r0, box.c1 - box.c0
    padded = np.zeros((h + bh, w + bw))
    for k in range(len(ax)):
        a, b = r0[k] - box.r0, c0[k] - box.c0
        view = padded[a:a + bh, b:b + bw]
        np.maximum(view, local[k], out=view)
    mask = padded[:h, :w]
    return (np.ascontiguousarray(mask), box) if mask.any() else None


def test_compiled_coverage_is_bit_identical_to_the_array_formulation():
    rng = np.random.default_rng(7)
    for trial in range(400):
        params = rng.random(13)
        params[[6, 8]] *= rng.choice([0.05, 0.3, 1.0])  # thin to wide
        size = (128, 64, 97)[trial % 3]
        expected, got = array_coverage(params, size, size), stroke_coverage(params, size, size)
        assert (expected is None) == (got is None)
        if expected is not None:
            assert got[1] == expected[1]
            assert got[0].tobytes() == expected[0].tobytes()


def test_compiled_composite_is_bit_identical_to_the_blend_formula():
    rng = np.random.default_rng(8)
    canvas = rng.random((64, 64, 3)).astype(np.float32)
    region = canvas[5:40, 9:50]  # a view, as the painter passes it
    mask = rng.random((35, 41)) * (rng.random((35, 41)) > 0.3)
    colour = rng.random(3)
    m = mask[..., None]
    expected = (m * colour + (1.0 - m) * region.astype(np.float64)).astype(np.float32)
    got = composite(region, mask, colour)
    assert got.dtype == np.float32 and got.tobytes() == expected.tobytes()


def test_compiled_coverage_of_horizontal_vertical_and_point_strokes_is_bit_identical_to_the_array_formulation():
    # Row spans: a horizontal segment (ey = 0) takes its own branch; vertical and point strokes are edge cases.
    rng = np.random.default_rng(9)
    for trial in range(300):
        params = rng.random(13)
        params[[6, 8]] *= rng.choice([0.05, 0.3, 1.0])
        kind = trial % 3
        if kind == 0:
            params[[3, 5]] = params[1]  # horizontal
        elif kind == 1:
            params[[2, 4]] = params[0]  # vertical
        else:
            params[2:6] = np.tile(params[0:2], 2)  # a point
        expected, got = array_coverage(params, 96, 96), stroke_coverage(params, 96, 96)
        assert (expected is None) == (got is None)
        if expected is not None:
            assert got[1] == expected[1]
            assert got[0].tobytes() == expected[0].tobytes()


@pytest.mark.parametrize("bad", [[0.5] * 12, [0.5] * 12 + [1.5], [0.5] * 6 + [float("nan")] + [0.5] * 6])
def test_stroke_coverage_refuses_parameters_a_stroke_refuses(bad):
    with pytest.raises(ValueError):
        Stroke.from_params(bad)
    with pytest.raises(ValueError):
        stroke_coverage(bad, 64, 64)


@pytest.mark.parametrize("key", ["xs", "rs", "cb"])
def test_an_integer_too_large_for_a_float_is_an_invalid_action_not_a_crash(key):
    # json reads 1 followed by 400 zeros as a Python int, which no float holds: the validator's finiteness
    # test raised OverflowError, which failed the step, the episode and the run (again on every resume,
    # since a model's cached answer comes back the same). It is an out-of-range value like any other.
    reference = np.zeros((64, 64, 3), np.float32)
    task = EaselTask(id="t", kind=KIND_RECONSTRUCTION, category="programmatic", size=64, budget=2,
                     reference=reference)
    env = Environment(task)
    before = env.canvas.copy()
    outcome = env.step(json.dumps(action(**{key: 10**400})))
    assert not outcome.valid and outcome.kind == "invalid" and key in outcome.error
    np.testing.assert_array_equal(env.canvas, before)
    assert env.step_index == 1


def test_a_semantic_path_coordinate_too_large_for_a_float_is_invalid():
    path = {"action": "brush_stroke", "xs": 10**400, "ys": 1, "xc": 5, "yc": 5, "xe": 9, "ye": 9}
    assert "xs" in parse_semantic_action(path).reason
    floats = {"action": "brush_stroke", "xs": 0.5, "ys": 0.1, "xc": 0.5, "yc": 0.5, "xe": 0.9, "ye": -10**400}
    assert "ye" in parse_semantic_action(floats).reason


@pytest.mark.parametrize("overrides", [
    {"cr": "paint " * 20_000},  # a string where a number goes
    {"action": "brush_stroke" * 10_000},  # an action name
    {"xs": 10**4000},  # an integer of 4,001 digits, out of range
    {**{f"note{k}" + "x" * 1000: k for k in range(2000)}},  # thousands of long unexpected keys
])
def test_an_invalid_actions_reason_echoes_the_agents_value_cut_short(overrides):
    # The reason is stored with every step, shown on the episode page and sent back to a semantic agent as
    # feedback: it echoed the value whole (120,000 characters for the string, 2 MB for the keys).
    reason = parse_reconstruction_action(action(**overrides)).reason
    assert len(reason) < 600
    semantic = {"action": "brush_stroke", "xs": 0.1, "ys": 0.1, "xc": 0.5, "yc": 0.5, "xe": 0.9, "ye": 0.9}
    semantic.update({k: v for k, v in overrides.items() if k not in ("cr",)})
    if "cr" in overrides:
        semantic["ye"] = overrides["cr"]
    assert len(parse_semantic_action(semantic).reason) < 600


def test_a_cut_reason_still_names_the_field_and_the_start_of_the_value():
    reason = parse_reconstruction_action(action(cr="paint " * 20_000)).reason
    assert reason.startswith("cr must be a number, got 'paint paint") and "120,002 characters" in reason
    reason = parse_reconstruction_action(action(**{f"k{n:04d}": 0 for n in range(12)})).reason
    assert reason == "unexpected k0000, k0001, k0002, k0003, k0004 and 7 more"
    assert parse_reconstruction_action(action(extra=0.5)).reason == "unexpected extra"  # short ones as before
