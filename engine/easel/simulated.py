"""A SIMULATED agent: a noisy painter with per-model skill, early saturation and post-peak drift.

It is labelled simulated everywhere (``is_simulated = True``, names start with "simulated") and exists
so the demo has an offline leaderboard with a plausible spread; it is never used unless named. It
imitates the two failure modes of EASEL §5.1: models rise within the first few percent of the budget
and then either plateau (they repeat an earlier action verbatim: exact repeats, no change) or keep
acting and degrade (random low-opacity strokes: post-peak drift).

Reconstruction. Active steps place a stroke around a random point, coloured like the reference there
plus noise; ``skill`` ∈ [0, 1] scales radius, colour and position accuracy. After ``saturation`` × budget
steps, each step repeats the last active action with probability ``repeat``, drifts with probability
``drift`` and otherwise paints another (noisier) active stroke. A small skill-dependent share of
answers is malformed JSON or out of range (invalid actions).

Semantic. Outline tasks trace a noisy polygon around the target, mazes follow the route with a
skill-dependent chance of a wrong turn (walls reject it; the agent undoes nothing and tries again),
handwriting writes a noisy stroke-font "hello" (:func:`hello_paths`); all submit when done. Everything is a pure function of (seed, task
id, step) and the task, so a resumed episode repeats itself exactly.
"""

from __future__ import annotations

import json
import math
import zlib

import numpy as np

from engine.easel.policy import Observation
from engine.easel.render import ACTION_BRUSH_STROKE, PATH_KEYS, Stroke
from engine.easel.semantic import CIRCLE_OUTLINE, HORSE_OUTLINE, MAZE_TASKS, target_mask
from engine.easel.task import KIND_RECONSTRUCTION

__all__ = ["SIMULATED_PROFILES", "SKILL_RANGE", "SimulatedAgent", "hello_paths", "simulated_agent", "skill_check"]

#: The simulated agent's skill scale: 0 paints noise, 1 paints as accurately as the agent can.
SKILL_RANGE = (0.0, 1.0)


def skill_check(skill: float) -> None:
    """Refuse a skill outside :data:`SKILL_RANGE` (or not a number) with the allowed range in the message."""
    low, high = SKILL_RANGE
    if not isinstance(skill, (int, float)) or not low <= skill <= high:
        raise ValueError(f"skill must lie in [{low:g}, {high:g}]; got {skill!r}")


def hello_paths(left: float = 0.08, top: float = 0.3, bottom: float = 0.62, width: float = 0.13,
                gap: float = 0.045) -> list[tuple[float, float, float, float, float, float]]:
    """Fourteen quadratic strokes (xs, ys, xc, yc, xe, ye) writing a lower-case "hello" (Tesseract reads it)."""

    def line(x0: float, y0: float, x1: float, y1: float) -> tuple[float, ...]:
        return (x0, y0, (x0 + x1) / 2, (y0 + y1) / 2, x1, y1)

    x, w = left, width
    xh = top + 0.12  # x-height
    cy = (xh + bottom) / 2
    paths = [line(x, top, x, bottom), (x, xh + 0.08, x + w / 2, xh - 0.04, x + w, xh + 0.08),
             line(x + w, xh + 0.08, x + w, bottom)]  # h
    x += w + gap
    paths += [line(x, cy, x + w, cy), (x + w, cy, x + w, xh, x + w / 2, xh), (x + w / 2, xh, x, xh, x, cy),
              (x, cy, x, bottom, x + w / 2, bottom), (x + w / 2, bottom, x + w * 0.9, bottom, x + w, bottom - 0.04)]  # e
    x += w + gap
    for _ in range(2):  # l, l
        paths.append(line(x + 0.02, top, x + 0.02, bottom))
        x += 0.04 + gap
    c = x + w / 2
    paths += [(c, xh, x + w, xh, x + w, cy), (x + w, cy, x + w, bottom, c, bottom), (c, bottom, x, bottom, x, cy),
              (x, cy, x, xh, c, xh)]  # o
    return paths


class SimulatedAgent:
    """A labelled simulated policy (module docstring)."""

    is_simulated = True

    def __init__(self, skill: float, seed: int = 0, *, name: str | None = None, saturation: float = 0.08,
                 repeat: float = 0.6, drift: float = 0.0, invalid: float | None = None) -> None:
        skill_check(skill)
        self.skill = skill
        self.seed = seed
        self.saturation = saturation
        self.repeat = repeat
        self.drift = drift
        self.invalid = (0.06 * (1.0 - skill)) if invalid is None else invalid
        self.name = name or f"simulated-skill-{skill:.2f}"
        if not self.name.startswith("simulated"):
            self.name = f"simulated-{self.name}"

    def _rng(self, task_id: str, step: int, stream: int = 0) -> np.random.Generator:
        return np.random.default_rng([self.seed, zlib.crc32(task_id.encode()), step, stream])

    # -- reconstruction

    def _active_stroke(self, observation: Observation, step: int, noise_boost: float = 1.0) -> dict:
        rng = self._rng(observation.task.id, step, 1)
        ref = observation.task.reference
        size = ref.shape[0]
        noise = (1.0 - self.skill) * noise_boost
        early = step < 3
        x0, y0 = rng.random(2)
        angle = rng.uniform(0, 2 * math.pi)
        length = rng.uniform(0.3, 0.8) if early else rng.uniform(0.04, 0.2) * (0.5 + self.skill)
        x1, y1 = x0 + length * math.cos(angle), y0 + length * math.sin(angle)
        xc, yc = (x0 + x1) / 2 + rng.normal(0, 0.02), (y0 + y1) / 2 + rng.normal(0, 0.02)
        # Colour: the reference's mean along the chord (early: over the whole image), plus skill noise.
        ts = np.linspace(0.0, 1.0, 5)
        rows = np.clip(((y0 + (y1 - y0) * ts) * size).astype(int), 0, size - 1)
        cols = np.clip(((x0 + (x1 - x0) * ts) * size).astype(int), 0, size - 1)
        base = ref.reshape(-1, 3).mean(axis=0) if early else ref[rows, cols].mean(axis=0)
        colour = base.astype(float) + rng.normal(0.0, 0.3 * noise, 3)
        radius = float(rng.uniform(0.8, 1.0)) if early else float(rng.uniform(0.1, 0.35))
        values = [x0, y0, xc, yc, x1, y1, radius, 1.0, radius, 1.0, *colour]
        values = [float(min(1.0, max(0.0, v))) for v in values]
        return {"action": ACTION_BRUSH_STROKE, **Stroke(*values).as_dict()}

    def _drift_stroke(self, observation: Observation, step: int) -> dict:
        rng = self._rng(observation.task.id, step, 2)
        values = [*rng.random(6), 0.4, 0.5, 0.4, 0.5, *rng.random(3)]
        return {"action": ACTION_BRUSH_STROKE, **Stroke(*(float(v) for v in values)).as_dict()}

    def _malformed(self, observation: Observation, step: int) -> str:
        rng = self._rng(observation.task.id, step, 3)
        good = self._active_stroke(observation, step)
        if rng.random() < 0.5:
            return json.dumps(good)[:-7]  # truncated JSON
        return json.dumps({**good, "xs": 1.0 + float(rng.random())})  # out of range

    def _reconstruction(self, observation: Observation) -> str:
        step, budget = observation.step, observation.budget
        rng = self._rng(observation.task.id, step)
        if rng.random() < self.invalid:
            return self._malformed(observation, step)
        peak = max(1, int(math.ceil(self.saturation * budget)))
        if step < peak:
            return json.dumps(self._active_stroke(observation, step))
        roll = rng.random()
        if roll < self.repeat:
            return json.dumps(self._active_stroke(observation, peak - 1))  # verbatim repeat
        if roll < self.repeat + self.drift:
            return json.dumps(self._drift_stroke(observation, step))
        return json.dumps(self._active_stroke(observation, step, noise_boost=1.6))

    # -- semantic

    def _path(self, rng: np.random.Generator, points: list[tuple[float, float]], jitter: float) -> str:
        (x0, y0), (x1, y1) = points
        values = [x0, y0, (x0 + x1) / 2, (y0 + y1) / 2, x1, y1]
        values = [float(min(1.0, max(0.0, v + rng.normal(0.0, jitter)))) for v in values]
        return json.dumps({"action": ACTION_BRUSH_STROKE, **dict(zip(PATH_KEYS, values, strict=True))})

    def _outline_points(self, observation: Observation) -> list[tuple[float, float]]:
        mask = target_mask(observation.task)
        rows, cols = np.nonzero(mask)
        size = observation.task.size
        cy, cx = rows.mean() / size, cols.mean() / size
        ry, rx = (rows.max() - rows.min()) / size / 2 + 0.01, (cols.max() - cols.min()) / size / 2 + 0.01
        return [(cx + rx * math.cos(2 * math.pi * k / 12), cy + ry * math.sin(2 * math.pi * k / 12)) for k in range(13)]

    def _semantic(self, observation: Observation) -> str:
        task, step = observation.task, observation.step
        rng = self._rng(task.id, step)
        jitter = 0.03 * (1.0 - self.skill)
        if rng.random() < self.invalid:
            return '{"action": "brush_stroke", "xs": 0.5'  # truncated
        name = task.spec.get("task")
        if name in (CIRCLE_OUTLINE, HORSE_OUTLINE):
            points = self._outline_points(observation)
            index = int(observation.extra.get("strokes_on_canvas", step))
            if index >= len(points) - 1:
                return json.dumps({"action": "submit"})
            return self._path(rng, [points[index], points[index + 1]], jitter)
        if name in MAZE_TASKS:
            route = task.spec["route"]
            pitch = 1.0 / task.spec["cells"]
            accepted = int(observation.extra.get("strokes_on_canvas", step))
            if accepted >= len(route) - 1:
                return json.dumps({"action": "submit"})
            a, b = route[accepted], route[accepted + 1]
            if rng.random() > 0.5 + 0.5 * self.skill:  # a wrong turn
                b = [a[0] + int(rng.integers(-1, 2)), a[1] + int(rng.integers(-1, 2))]
            centre = [((c[1] + 0.5) * pitch, (c[0] + 0.5) * pitch) for c in (a, b)]
            return self._path(rng, centre, jitter / 3)
        paths = hello_paths()
        if step >= len(paths):
            return json.dumps({"action": "submit"})
        values = [float(min(1.0, max(0.0, v + rng.normal(0.0, 2 * jitter)))) for v in paths[step]]
        return json.dumps({"action": ACTION_BRUSH_STROKE, **dict(zip(PATH_KEYS, values, strict=True))})

    def act(self, observation: Observation) -> str:
        if observation.task.kind == KIND_RECONSTRUCTION:
            return self._reconstruction(observation)
        return self._semantic(observation)


# Demo profiles (all simulated): a strong plateau model, a degrading one, a near-inactive one, a weak one.
SIMULATED_PROFILES = {
    "simulated-plateau": {"skill": 0.9, "repeat": 0.7, "drift": 0.0},
    "simulated-degrading": {"skill": 0.7, "repeat": 0.2, "drift": 0.35},
    "simulated-near-inaction": {"skill": 0.4, "repeat": 0.9, "drift": 0.0},
    "simulated-weak": {"skill": 0.2, "repeat": 0.4, "drift": 0.2},
}


def simulated_agent(profile: str, seed: int = 0) -> SimulatedAgent:
    """The SimulatedAgent of a named demo profile."""
    if profile not in SIMULATED_PROFILES:
        raise ValueError(f"unknown simulated profile {profile!r}; expected one of {sorted(SIMULATED_PROFILES)}")
    return SimulatedAgent(seed=seed, name=profile, **SIMULATED_PROFILES[profile])
