"""The EASEL brush: one quadratic Bézier stroke of 13 normalised parameters (EASEL §3.4, Eq. 2).

Parameters, in order (all in [0, 1]): path ``xs, ys, xc, yc, xe, ye`` — a quadratic Bézier from
(xs, ys) through the control point (xc, yc) to (xe, ye), x to the right (column), y down (row),
0 and 1 at the canvas edges; appearance ``rs, alpha_s, re, alpha_e`` — radius and opacity at the
start and the end, linear in the curve parameter t; colour ``cr, cg, cb``.

Geometry. A normalised point (x, y) is at pixel position (x·W, y·H); pixel (row i, column j) has its
centre at (j + ½, i + ½). The radius in pixels is r·``MAX_RADIUS_FRACTION``·W.

Coverage (the stroke's mask m, computed once per stroke). The curve is flattened into a polyline
of n segments at t_k = k/n; on segment k a pixel centre p projects to the parameter
t(p) = t_k + u·(t_{k+1} − t_k) with u = clip((p − a)·(b − a)/|b − a|², 0, 1) at distance d from the
segment, where the radius ρ(t) and opacity α(t) are the linear interpolations. Its coverage there is
α(t)·clip(ρ(t) + ½ − d, 0, 1) — a one-pixel linear ramp of the exact distance (analytic distance
anti-aliasing, no supersampling) — and the stroke's mask is the maximum over the segments,
m(p) = max_k α·clip(ρ + ½ − d, 0, 1): overlaps of the stroke with itself never darken. It is
composited once: out = m·colour + (1 − m)·canvas (alpha blending, §3.4), so a 0.5-opacity stroke over
white gives exactly the 50 % blend wherever the ramp is 1 (within ρ − ½ of the curve).

Adaptive sampling: distance to segments leaves no gaps however long and thin the stroke is. The
segment count adapts to the bend and the length of the curve: enough segments that the polyline
stays within ``FLATTENING_TOLERANCE_PX`` of the Bézier (|P0 − 2P1 + P2|/(4n²) bounds the chord error
of a quadratic), and at most max(``SEGMENT_PX``, stroke diameter) pixels of control-polygon length per
segment (so every segment is evaluated on a small window around itself).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.compiled import compiled_kernel

__all__ = [
    "ACTION_BRUSH_STROKE",
    "ACTION_SUBMIT",
    "ACTION_UNDO",
    "APPEARANCE_KEYS",
    "Box",
    "InvalidAction",
    "MAX_RADIUS_FRACTION",
    "PARAM_KEYS",
    "PATH_KEYS",
    "QUANTISATION_LEVELS",
    "SEMANTIC_BRUSH_ALPHA",
    "SEMANTIC_BRUSH_COLOUR",
    "SEMANTIC_BRUSH_RADIUS",
    "Stroke",
    "blank_canvas",
    "composite",
    "parse_reconstruction_action",
    "parse_semantic_action",
    "render_stroke",
    "semantic_stroke",
    "stroke_box",
    "stroke_coverage",
]

# Radius r ∈ [0, 1] maps to r·MAX_RADIUS_FRACTION·W pixels. With 0.25 the widest stroke (r = 1) is half
# the canvas across (64 px on a 128-px canvas, 32 px on 64 px), as in Learning-to-Paint's renderer
# (radius up to a quarter of the canvas side); the largest single stroke, a wide curve from corner to
# corner, can cover the whole canvas.
MAX_RADIUS_FRACTION = 0.25

# Semantic tasks fix the brush (EASEL §3.1: "fully opaque dark-blue, medium width").
SEMANTIC_BRUSH_COLOUR = (0.0, 0.0, 0.5)  # navy, #000080 rounded to 0.5
SEMANTIC_BRUSH_ALPHA = 1.0  # fully opaque
SEMANTIC_BRUSH_RADIUS = 0.08  # medium: 0.08·0.25·W = 2.6 px radius (~5 px wide) on a 128-px canvas

# EASEL-Data §4: spatial coordinates quantised to integers in [0, 1000].
QUANTISATION_LEVELS = 1000

PATH_KEYS = ("xs", "ys", "xc", "yc", "xe", "ye")
APPEARANCE_KEYS = ("rs", "alpha_s", "re", "alpha_e", "cr", "cg", "cb")
PARAM_KEYS = PATH_KEYS + APPEARANCE_KEYS

ACTION_BRUSH_STROKE = "brush_stroke"
ACTION_UNDO = "undo"
ACTION_SUBMIT = "submit"

FLATTENING_TOLERANCE_PX = 0.05  # the polyline stays this close to the Bézier
SEGMENT_PX = 8.0  # at most this much control-polygon length per segment
_MAX_SEGMENTS = 256


@dataclass(frozen=True)
class Stroke:
    """One brush stroke: the 13 normalised parameters of EASEL Eq. 2, in the paper's order."""

    xs: float
    ys: float
    xc: float
    yc: float
    xe: float
    ye: float
    rs: float
    alpha_s: float
    re: float
    alpha_e: float
    cr: float
    cg: float
    cb: float

    def __post_init__(self) -> None:
        values = self.__dict__
        for name in PARAM_KEYS:
            value = values[name]
            if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):  # NaN fails the range test
                raise ValueError(f"stroke parameter {name}={value!r} is not a number in [0, 1]")

    @classmethod
    def from_params(cls, params: Sequence[float] | Stroke) -> Stroke:
        """A stroke from a sequence of 13 numbers (or a stroke, returned as is)."""
        if isinstance(params, Stroke):
            return params
        values = [float(v) for v in params]
        if len(values) != len(PARAM_KEYS):
            raise ValueError(f"a stroke has {len(PARAM_KEYS)} parameters, got {len(values)}")
        return cls(*values)

    def as_tuple(self) -> tuple[float, ...]:
        return tuple(self.__dict__[name] for name in PARAM_KEYS)

    def as_dict(self) -> dict[str, float]:
        return dict(zip(PARAM_KEYS, self.as_tuple(), strict=True))


@dataclass(frozen=True)
class Box:
    """A half-open pixel rectangle rows [r0, r1) × columns [c0, c1)."""

    r0: int
    r1: int
    c0: int
    c1: int

    @property
    def slices(self) -> tuple[slice, slice]:
        return slice(self.r0, self.r1), slice(self.c0, self.c1)

    def grow(self, margin: int, height: int, width: int) -> Box:
        """This box widened by ``margin`` pixels on every side, clipped to the canvas."""
        return Box(max(0, self.r0 - margin), min(height, self.r1 + margin),
                   max(0, self.c0 - margin), min(width, self.c1 + margin))

    def union(self, other: Box | None) -> Box:
        if other is None:
            return self
        return Box(min(self.r0, other.r0), max(self.r1, other.r1), min(self.c0, other.c0), max(self.c1, other.c1))

    @property
    def area(self) -> int:
        return max(0, self.r1 - self.r0) * max(0, self.c1 - self.c0)


@dataclass(frozen=True)
class InvalidAction:
    """An action that failed validation: counted as invalid, never clamped or repaired."""

    reason: str
    raw: str = ""


def blank_canvas(size: int | tuple[int, int]) -> np.ndarray:
    """A white float32 H×W×3 canvas (EASEL §3.1: C_0 is blank)."""
    height, width = (size, size) if isinstance(size, int) else size
    return np.ones((height, width, 3), dtype=np.float32)


def segment_count(p0: tuple[float, float], p1: tuple[float, float], p2: tuple[float, float],
                  radius_px: float = 0.0) -> int:
    """Segments for a quadratic Bézier (pixel control points): the flattening and length rules above."""
    bend = math.hypot(p0[0] - 2 * p1[0] + p2[0], p0[1] - 2 * p1[1] + p2[1])
    # The control polygon's length bounds the arc length from above.
    length = math.hypot(p1[0] - p0[0], p1[1] - p0[1]) + math.hypot(p2[0] - p1[0], p2[1] - p1[1])
    by_bend = math.ceil(math.sqrt(bend / (4.0 * FLATTENING_TOLERANCE_PX))) if bend > 0 else 1
    # Wide strokes take segments as long as their diameter: each window is mostly the stroke itself.
    return int(min(_MAX_SEGMENTS, max(1, by_bend, math.ceil(length / max(SEGMENT_PX, 2.0 * radius_px)))))


def _polyline(stroke: Stroke, height: int, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vertices (x px, y px), radii (px) and opacities of the flattened curve at t_k = k/n."""
    p0 = (stroke.xs * width, stroke.ys * height)
    p1 = (stroke.xc * width, stroke.yc * height)
    p2 = (stroke.xe * width, stroke.ye * height)
    scale = MAX_RADIUS_FRACTION * width
    n = segment_count(p0, p1, p2, max(stroke.rs, stroke.re) * scale)
    t = np.arange(n + 1) / n
    u = 1.0 - t
    # Quadratic Bézier B(t) = (1−t)²P0 + 2(1−t)t P1 + t² P2.
    a, b, c = u * u, 2 * u * t, t * t
    x = a * p0[0] + b * p1[0] + c * p2[0]
    y = a * p0[1] + b * p1[1] + c * p2[1]
    radius = (stroke.rs + (stroke.re - stroke.rs) * t) * scale  # linear along the curve (§3.4)
    alpha = stroke.alpha_s + (stroke.alpha_e - stroke.alpha_s) * t
    return x, y, radius, alpha


def _box_of(x: np.ndarray, y: np.ndarray, reach: np.ndarray, height: int, width: int) -> Box:
    return Box(max(0, math.floor((y - reach).min() - 0.5)), min(height, math.ceil((y + reach).max() + 0.5) + 1),
               max(0, math.floor((x - reach).min() - 0.5)), min(width, math.ceil((x + reach).max() + 0.5) + 1))


def stroke_box(params: Sequence[float] | Stroke, height: int, width: int) -> Box | None:
    """The pixels a stroke can touch (its samples' discs plus the anti-aliasing ramp), or None."""
    stroke = Stroke.from_params(params)
    if stroke.alpha_s == 0.0 and stroke.alpha_e == 0.0:
        return None
    x, y, radius, _ = _polyline(stroke, height, width)
    box = _box_of(x, y, radius + 0.5, height, width)
    return box if box.area > 0 else None


def _path_and_brush(params: Sequence[float] | Stroke) -> tuple[float, ...]:
    """The first ten parameters (path, radii, opacities) as ``Stroke.from_params`` would check and convert
    them, without building the Stroke: the painter scores thousands of candidates per episode."""
    if isinstance(params, Stroke):
        return params.as_tuple()[:10]
    values = [float(v) for v in params]
    if len(values) != len(PARAM_KEYS):
        raise ValueError(f"a stroke has {len(PARAM_KEYS)} parameters, got {len(values)}")
    for name, value in zip(PARAM_KEYS, values, strict=True):
        if not 0.0 <= value <= 1.0:  # Stroke's own check (NaN fails the range test)
            raise ValueError(f"stroke parameter {name}={value!r} is not a number in [0, 1]")
    return tuple(values[:10])


def stroke_coverage(params: Sequence[float] | Stroke, height: int, width: int) -> tuple[np.ndarray, Box] | None:
    """The stroke's mask m over its box (float64, in [0, 1]) and the box, or None if it touches nothing.

    m(p) = max over the polyline's segments of α(t)·clip(ρ(t) + ½ − d, 0, 1) at the pixel's projection
    (module docstring).
    """
    xs, ys, xc, yc, xe, ye, rs, alpha_s, re, alpha_e = _path_and_brush(params)
    if alpha_s == 0.0 and alpha_e == 0.0:
        return None
    p0 = (xs * width, ys * height)
    p1 = (xc * width, yc * height)
    p2 = (xe * width, ye * height)
    scale = MAX_RADIUS_FRACTION * width
    n = segment_count(p0, p1, p2, max(rs, re) * scale)
    mask, r0, r1, c0, c1, touched = _stroke_mask(p0[0], p0[1], p1[0], p1[1], p2[0], p2[1], n, rs, re, alpha_s,
                                                 alpha_e, scale, height, width)
    if not touched:
        return None
    return mask, Box(r0, r1, c0, c1)


@compiled_kernel()
def _stroke_mask(p0x: float, p0y: float, p1x: float, p1y: float, p2x: float, p2y: float, n: int, rs: float,
                 re: float, alpha_s: float, alpha_e: float, scale: float, height: int,
                 width: int) -> tuple[np.ndarray, int, int, int, int, bool]:
    """(mask, box r0, r1, c0, c1, touches anything): ``_polyline``, ``_box_of`` and ``_coverage_mask`` in one
    compiled call, with ``_polyline``'s and ``_box_of``'s operations in their order (bit-identical)."""
    t = np.arange(n + 1) / n
    x = np.empty(n + 1)
    y = np.empty(n + 1)
    radius = np.empty(n + 1)
    alpha = np.empty(n + 1)
    top, bottom, left, right = np.inf, -np.inf, np.inf, -np.inf
    for k in range(n + 1):
        u = 1.0 - t[k]
        # Quadratic Bézier B(t) = (1−t)²P0 + 2(1−t)t P1 + t² P2.
        a, b, c = u * u, 2 * u * t[k], t[k] * t[k]
        x[k] = a * p0x + b * p1x + c * p2x
        y[k] = a * p0y + b * p1y + c * p2y
        radius[k] = (rs + (re - rs) * t[k]) * scale  # linear along the curve (§3.4)
        alpha[k] = alpha_s + (alpha_e - alpha_s) * t[k]
        reach = radius[k] + 0.5
        top = min(top, y[k] - reach)
        bottom = max(bottom, y[k] + reach)
        left = min(left, x[k] - reach)
        right = max(right, x[k] + reach)
    r0 = max(0, int(np.floor(top - 0.5)))
    r1 = min(height, int(np.ceil(bottom + 0.5)) + 1)
    c0 = max(0, int(np.floor(left - 0.5)))
    c1 = min(width, int(np.ceil(right + 0.5)) + 1)
    if r1 <= r0 or c1 <= c0:
        return np.zeros((0, 0)), r0, r1, c0, c1, False
    mask = _coverage_mask(x, y, radius, alpha, r0, r1, c0, c1)
    return mask, r0, r1, c0, c1, bool(np.any(mask > 0))


@compiled_kernel()
def _coverage_mask(x: np.ndarray, y: np.ndarray, radius: np.ndarray, alpha: np.ndarray, box_r0: int, box_r1: int,
                   box_c0: int, box_c1: int) -> np.ndarray:
    """m on the box: max over segments of α(t)·clip(ρ(t) + ½ − d, 0, 1) (module docstring), compiled.

    Each segment is evaluated on its own reach box (its end points' extent plus the larger radius and
    the ramp): outside it a pixel centre is farther than ρ + ½ from the segment, so its coverage is 0
    there. The values are the same operations in the same order as the array formulation this replaced
    (which evaluated every segment on a window as large as the largest reach box), so the mask is
    bit-identical to it (tests/engine/easel/test_render.py).
    """
    n = x.shape[0] - 1
    mask = np.zeros((box_r1 - box_r0, box_c1 - box_c0))
    for k in range(n):
        reach = max(radius[k], radius[k + 1]) + 0.5
        row0 = max(box_r0, int(np.floor(min(y[k], y[k + 1]) - reach - 0.5)))
        col0 = max(box_c0, int(np.floor(min(x[k], x[k + 1]) - reach - 0.5)))
        row1 = min(box_r1, int(np.ceil(max(y[k], y[k + 1]) + reach + 0.5)) + 1)
        col1 = min(box_c1, int(np.ceil(max(x[k], x[k + 1]) + reach + 0.5)) + 1)
        ax, ay = x[k], y[k]
        ex, ey = x[k + 1] - ax, y[k + 1] - ay
        length2 = ex * ex + ey * ey
        inverse = 1.0 / length2 if length2 > 0 else 0.0  # a point segment: u = 0
        d_radius = radius[k + 1] - radius[k]
        d_alpha = alpha[k + 1] - alpha[k]
        # Row by row, only the columns where the segment can reach: a pixel centre within reach of the
        # segment lies within reach of a point A + tE whose row is within reach too, so the columns of the
        # segment points with |py − t·ey| ≤ reach + 1, widened by reach + 1, hold every such pixel; the
        # rest are farther than reach + 1 (a margin over any rounding) and their coverage is exactly 0.
        wide = reach + 1.0
        for row in range(row0, row1):
            py = (row + 0.5) - ay
            if ey == 0.0:
                if abs(py) > wide:
                    continue
                t_lo, t_hi = 0.0, 1.0
            else:
                t_a, t_b = (py - wide) / ey, (py + wide) / ey
                t_lo, t_hi = max(0.0, min(t_a, t_b)), min(1.0, max(t_a, t_b))
                if t_lo > t_hi:
                    continue
            x_lo = ax + min(t_lo * ex, t_hi * ex) - wide
            x_hi = ax + max(t_lo * ex, t_hi * ex) + wide
            span0 = max(col0, int(np.floor(x_lo - 0.5)))
            span1 = min(col1, int(np.ceil(x_hi - 0.5)) + 1)
            # The row's span as a view indexed from 0 and the maximum as a select: the loop vectorises.
            mask_span = mask[row - box_r0, span0 - box_c0:span1 - box_c0]
            for t in range(span1 - span0):
                px = (span0 + t + 0.5) - ax
                u = min(max((px * ex + py * ey) * inverse, 0.0), 1.0)
                dx, dy = px - u * ex, py - u * ey
                dist = np.sqrt(dx * dx + dy * dy)
                rho = radius[k] + u * d_radius
                opacity = alpha[k] + u * d_alpha
                local = min(max(rho + 0.5 - dist, 0.0), 1.0) * opacity  # analytic AA ramp × α(t)
                kept = mask_span[t]
                mask_span[t] = local if local > kept else kept
    return mask


def composite(region: np.ndarray, mask: np.ndarray, colour: Sequence[float]) -> np.ndarray:
    """out = m·colour + (1 − m)·canvas over one region (alpha blending, EASEL §3.4), as float32."""
    colour_arr = np.asarray(colour, dtype=np.float64)
    if region.ndim == 3 and region.shape[2] == 3 and colour_arr.shape == (3,) and mask.shape == region.shape[:2]:
        return _composite(region, mask, colour_arr)
    m = mask[..., None]
    return (m * colour_arr + (1.0 - m) * region.astype(np.float64)).astype(np.float32)


@compiled_kernel()
def _composite(region: np.ndarray, mask: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """composite's formula elementwise, compiled: the same float64 operations, then the float32 rounding."""
    out = np.empty(region.shape, np.float32)
    for i in range(region.shape[0]):
        for j in range(region.shape[1]):
            m = mask[i, j]
            for c in range(3):
                out[i, j, c] = np.float32(m * colour[c] + (1.0 - m) * np.float64(region[i, j, c]))
    return out


def render_stroke(canvas: np.ndarray, params: Sequence[float] | Stroke) -> np.ndarray:
    """A new canvas with one stroke composited once over ``canvas`` (float32 H×W×3 in [0, 1])."""
    stroke = Stroke.from_params(params)
    height, width = canvas.shape[:2]
    out = np.array(canvas, dtype=np.float32, copy=True)
    covered = stroke_coverage(stroke, height, width)
    if covered is None:
        return out
    mask, box = covered
    rows, cols = box.slices
    out[rows, cols] = composite(out[rows, cols], mask, (stroke.cr, stroke.cg, stroke.cb))
    return out


def semantic_stroke(path: Sequence[float]) -> Stroke:
    """The fixed semantic brush (opaque dark blue, medium width) along six path coordinates."""
    return Stroke(*path, SEMANTIC_BRUSH_RADIUS, SEMANTIC_BRUSH_ALPHA, SEMANTIC_BRUSH_RADIUS,
                  SEMANTIC_BRUSH_ALPHA, *SEMANTIC_BRUSH_COLOUR)


# --- strict action validation ------------------------------------------------------------------

def _is_number(value: object) -> bool:
    """A JSON number: an int (of any size: json reads 1e400 written out as one, which no float holds, so it is
    range-checked as an int, never converted) or a finite float; not a boolean."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


#: An agent's value or key is echoed in an invalid action's reason (stored per step, shown on the episode page,
#: and sent back to a semantic agent as feedback for three turns) cut to this many characters, and at most
#: this many unexpected keys are named: a reply's 100,000-character string was echoed whole, every time.
_SHOWN_CHARS = 60
_SHOWN_KEYS = 5


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS]}… ({len(text):,} characters)"


def _shown(value: object) -> str:
    """``repr(value)`` as an invalid action's reason shows it (:data:`_SHOWN_CHARS`)."""
    return _cut(repr(value))


def _path_values(action: Mapping[str, object]) -> list[float] | InvalidAction:
    """The six path coordinates, in [0, 1] or all six as integers in [0, 1000] (quantised form).

    Quantised form (EASEL-Data §4): when all six path coordinates are JSON integers, each is read as
    k/1000 and must lie in [0, 1000]; otherwise every coordinate must be a number in [0, 1]
    (integers 0 and 1 then mean 0.0 and 1.0). Out-of-range values are invalid, never clamped.
    """
    values = [action[key] for key in PATH_KEYS]
    for key, value in zip(PATH_KEYS, values, strict=True):
        if not _is_number(value):
            return InvalidAction(f"{key} must be a number, got {_shown(value)}")
    if all(isinstance(v, int) for v in values):
        for key, value in zip(PATH_KEYS, values, strict=True):
            if not 0 <= value <= QUANTISATION_LEVELS:
                return InvalidAction(f"{key}={_shown(value)} is outside the quantised range [0, {QUANTISATION_LEVELS}]")
        return [v / QUANTISATION_LEVELS for v in values]
    for key, value in zip(PATH_KEYS, values, strict=True):
        if not 0.0 <= value <= 1.0:
            return InvalidAction(f"{key}={_shown(value)} is outside [0, 1]")
    return [float(v) for v in values]


def _check_keys(action: Mapping[str, object], expected: Sequence[str]) -> InvalidAction | None:
    keys = set(action)
    wanted = set(expected) | {"action"}
    if keys != wanted:
        missing, extra = sorted(wanted - keys), sorted(keys - wanted)
        named = ", ".join(_cut(str(key)) for key in extra[:_SHOWN_KEYS])
        if len(extra) > _SHOWN_KEYS:
            named += f" and {len(extra) - _SHOWN_KEYS:,} more"
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + ([f"unexpected {named}"] if extra else [])
        return InvalidAction("; ".join(parts))
    return None


def parse_reconstruction_action(action: object) -> Stroke | InvalidAction:
    """A reconstruction action ``{"action": "brush_stroke", xs..cb}`` as a Stroke, or why it is invalid.

    Exactly the 13 parameter keys plus ``action``; numbers only (no strings, booleans, NaN);
    appearance values in [0, 1]; path coordinates per :func:`_path_values`.
    """
    if not isinstance(action, Mapping):
        return InvalidAction("an action is a JSON object")
    if action.get("action") != ACTION_BRUSH_STROKE:
        return InvalidAction(f"reconstruction accepts only action {ACTION_BRUSH_STROKE!r}, got {_shown(action.get('action'))}")
    problem = _check_keys(action, PARAM_KEYS)
    if problem:
        return problem
    path = _path_values(action)
    if isinstance(path, InvalidAction):
        return path
    appearance = []
    for key in APPEARANCE_KEYS:
        value = action[key]
        if not _is_number(value):
            return InvalidAction(f"{key} must be a number, got {_shown(value)}")
        if not 0.0 <= value <= 1.0:
            return InvalidAction(f"{key}={_shown(value)} is outside [0, 1]")
        appearance.append(float(value))
    return Stroke(*path, *appearance)


def parse_semantic_action(action: object) -> Stroke | str | InvalidAction:
    """A semantic action: a Stroke with the fixed brush, ``"undo"``, ``"submit"``, or why it is invalid."""
    if not isinstance(action, Mapping):
        return InvalidAction("an action is a JSON object")
    name = action.get("action")
    if name in (ACTION_UNDO, ACTION_SUBMIT):
        problem = _check_keys(action, ())
        return problem if problem else name
    if name != ACTION_BRUSH_STROKE:
        return InvalidAction(f"unknown action {_shown(name)}; expected brush_stroke, undo or submit")
    problem = _check_keys(action, PATH_KEYS)
    if problem:
        return problem
    path = _path_values(action)
    if isinstance(path, InvalidAction):
        return path
    return semantic_stroke(path)
