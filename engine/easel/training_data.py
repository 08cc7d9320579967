"""Next-action training samples from painter trajectories (EASEL-Data, EASEL §4).

A trajectory (a reconstruction task and its stroke actions) becomes next-action samples: given the
reference and the canvas produced by replaying the prior actions, predict the next stroke. Spatial
coordinates are quantised to integers in [0, 1000] (§4); the whole trajectory is quantised first and
canvases are produced by replaying the quantised actions, so replaying a sample's prior actions
reproduces its canvas exactly. Appearance parameters (radius, opacity, colour) stay numbers in [0, 1].
α = 0 no-op strokes and invalid steps are never targets.

Curricula (§4, Fig. 3): C1 "early reconstruction" keeps every step 0–15 and samples steps 16–49 with
probability ``c1_rate``; C2 "light completion" spans the whole trajectory with a density that decreases
linearly from ``c2_start`` at step 0 to ``c2_end`` at the last step. Sampling is seeded.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.easel.episode import Environment
from engine.easel.render import PATH_KEYS, QUANTISATION_LEVELS, Stroke, parse_reconstruction_action
from engine.easel.task import EaselTask, png_bytes

__all__ = ["C1_DENSE_STEPS", "C1_LAST_STEP", "CURRICULA", "NextActionSample", "curriculum_steps",
           "next_action_samples", "quantise_action", "sample_record"]

C1_DENSE_STEPS = 16  # strokes 0–15 all kept (§4)
C1_LAST_STEP = 49  # strokes 16–49 sampled (§4)
CURRICULA = ("C1", "C2")


def quantise_action(action: Mapping[str, Any]) -> dict[str, Any]:
    """A stroke action with its six path coordinates as integers round(v·1000) in [0, 1000] (§4)."""
    stroke = parse_reconstruction_action(action)
    if not isinstance(stroke, Stroke):
        raise ValueError(f"not a valid stroke action: {stroke.reason}")
    out: dict[str, Any] = {"action": "brush_stroke"}
    for key, value in stroke.as_dict().items():
        out[key] = int(round(value * QUANTISATION_LEVELS)) if key in PATH_KEYS else value
    return out


@dataclass(frozen=True, eq=False)
class NextActionSample:
    """One supervision sample: the canvas after ``prior_actions`` and the ``target`` next action."""

    task_id: str
    curriculum: str
    step: int
    prior_actions: tuple[dict[str, Any], ...]
    canvas: np.ndarray
    target: dict[str, Any]


def curriculum_steps(length: int, curriculum: str, *, seed: int, key: str = "", c1_rate: float = 0.5,
                     c2_start: float = 0.6, c2_end: float = 0.1) -> list[int]:
    """The trajectory steps (0-based) a curriculum keeps, for a trajectory of ``length`` steps."""
    rng = np.random.default_rng([seed, zlib.crc32(f"{curriculum}:{key}".encode())])
    draws = rng.random(length)
    if curriculum == "C1":
        return [t for t in range(min(length, C1_LAST_STEP + 1)) if t < C1_DENSE_STEPS or draws[t] < c1_rate]
    if curriculum == "C2":
        last = max(1, length - 1)
        # density(t) = c2_start + (c2_end − c2_start)·t/(T − 1): decreasing along the trajectory.
        return [t for t in range(length) if draws[t] < c2_start + (c2_end - c2_start) * t / last]
    raise ValueError(f"unknown curriculum {curriculum!r}; expected C1 or C2")


def _is_no_op(action: Mapping[str, Any]) -> bool:
    return action.get("alpha_s") == 0 and action.get("alpha_e") == 0


def next_action_samples(task: EaselTask, actions: Sequence[Mapping[str, Any] | None], *, curriculum: str,
                        seed: int = 0, **density: float) -> list[NextActionSample]:
    """Samples of one trajectory under ``curriculum`` (module docstring). ``None`` marks an invalid step."""
    quantised = [None if a is None or not isinstance(parse_reconstruction_action(a), Stroke) else quantise_action(a)
                 for a in actions]
    kept = set(curriculum_steps(len(quantised), curriculum, seed=seed, key=task.id, **density))
    env = Environment(task, budget=max(1, len(quantised)))
    prior: list[dict[str, Any]] = []
    samples = []
    for t, action in enumerate(quantised):
        if action is None:
            continue
        if t in kept and not _is_no_op(action):
            samples.append(NextActionSample(task_id=task.id, curriculum=curriculum, step=t,
                                            prior_actions=tuple(prior), canvas=env.canvas.copy(), target=action))
        env.step(action)
        prior.append(action)
    return samples


def sample_record(sample: NextActionSample) -> tuple[dict[str, Any], bytes]:
    """(JSONL record, canvas PNG) of a sample; the record names the reference by task id."""
    record = {"task_id": sample.task_id, "curriculum": sample.curriculum, "step": sample.step,
              "prior_actions": list(sample.prior_actions), "target": sample.target}
    return record, png_bytes(sample.canvas)
