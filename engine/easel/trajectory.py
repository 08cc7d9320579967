"""Trajectory diagnostics of one reconstruction episode (EASEL §3.3, Table 3).

``s_values`` are S_1..S_T, the similarity after each of the T steps; S_0 (the blank canvas) is not
counted. Final = S_T; Similarity@50 % = S_⌈T/2⌉; AUC = (1/T)·Σ_{t=1..T} S_t; Best = max_t S_t;
F-B gap = Best − Final; repeat rate = share of steps 2..T whose action repeats the previous step's
exactly (§5: "exact-repeat rates … near-total inaction"; invalid actions never repeat); invalid rate =
invalid steps / T.

An action repeats the previous one when it means the same stroke (:data:`REPEAT_RATE_METHOD_VERSION` 2): the
parsed, normalised stroke the renderer draws (:func:`engine.easel.render.parse_reconstruction_action`), so
``{"rs": 1}`` and ``{"rs": 1.0}``, or the quantised ``{"xs": 500, …}`` and ``{"xs": 0.5, …}``, are one action
and paint the same canvas. Version 1 compared the actions' JSON text (keys sorted), which took those for
different actions; a run records the version its episodes were computed with (``repeat_rate_method_version``
in its config; a run made before it was recorded used 1), and a bundle's verifier recomputes with it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from engine.easel.render import InvalidAction, parse_reconstruction_action

__all__ = ["PROGRESS_GRID_POINTS", "REPEAT_RATE_METHOD_VERSION", "REPEAT_RATE_METHODS", "TrajectoryDiagnostics",
           "known_repeat_method", "progress_curve", "recorded_repeat_method",
           "trajectory_diagnostics"]

#: Points of the common step-fraction grid an episode's S_t is resampled onto (Figure 4), 0 to 1.
PROGRESS_GRID_POINTS = 51


@dataclass(frozen=True)
class TrajectoryDiagnostics:
    final: float
    at_50: float
    auc: float
    best: float
    fb_gap: float
    repeat_rate: float
    invalid_rate: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


#: How repeated actions are told (module docstring): 2, by the stroke they mean; 1, by their JSON text.
REPEAT_RATE_METHOD_VERSION = 2


def _json_text(action: Any) -> str | None:
    """Version 1: the action's JSON text, keys sorted."""
    return None if action is None else json.dumps(action, sort_keys=True)


def _stroke_meant(action: Any) -> tuple[float, ...] | str | None:
    """Version 2: the stroke the renderer draws for ``action`` (its 13 normalised parameters); an action
    that is no valid stroke (never the case for a valid reconstruction step) falls back to its JSON text."""
    if action is None:
        return None
    stroke = parse_reconstruction_action(action)
    return _json_text(action) if isinstance(stroke, InvalidAction) else stroke.as_tuple()


#: Method version -> the key two actions are compared by.
REPEAT_RATE_METHODS: dict[int, Callable[[Any], Hashable]] = {1: _json_text, 2: _stroke_meant}


def recorded_repeat_method(config: Mapping[str, Any] | None) -> Any:
    """The repeat-rate method a run's ``config`` records (``repeat_rate_method_version``): 1 for a run made
    before runs recorded it, so that a resumed run, and its bundle's verifier, stay with the method its
    episodes were computed with."""
    return (config or {}).get("repeat_rate_method_version", 1)


def known_repeat_method(recorded: Any) -> int | None:
    """``recorded`` (what :func:`recorded_repeat_method` read) when it is a method version this code knows,
    else None. Only a whole number counts: a JSON string, float, boolean, list or object is no version (a
    membership test of the table alone took ``true`` for 1 and raised on a list)."""
    return recorded if type(recorded) is int and recorded in REPEAT_RATE_METHODS else None


def trajectory_diagnostics(s_values: Sequence[float], actions: Sequence[Any], valid: Sequence[bool], *,
                           repeat_method: int = REPEAT_RATE_METHOD_VERSION) -> TrajectoryDiagnostics:
    """The diagnostics of EASEL §3.3 from S_1..S_T, the parsed actions and their validity; repeats are
    told by ``repeat_method`` (:data:`REPEAT_RATE_METHODS`; a run's recorded version)."""
    steps = len(s_values)
    if steps == 0:
        raise ValueError("a trajectory needs at least one step")
    if len(actions) != steps or len(valid) != steps:
        raise ValueError("s_values, actions and valid must have one entry per step")
    if repeat_method not in REPEAT_RATE_METHODS:
        raise ValueError(f"unknown repeat-rate method version {repeat_method!r}; this code knows "
                         f"{', '.join(map(str, REPEAT_RATE_METHODS))}")
    final = float(s_values[-1])
    best = float(max(s_values))
    key = REPEAT_RATE_METHODS[repeat_method]
    keys = [key(a) if ok else None for a, ok in zip(actions, valid, strict=True)]
    repeats = sum(1 for prev, cur in zip(keys, keys[1:]) if cur is not None and cur == prev)
    return TrajectoryDiagnostics(
        final=final,
        at_50=float(s_values[math.ceil(steps / 2) - 1]),  # S at ⌈T/2⌉, 1-indexed
        auc=float(sum(s_values) / steps),  # (1/T) Σ_t S_t, S_0 excluded
        best=best,
        fb_gap=best - final,
        repeat_rate=repeats / (steps - 1) if steps > 1 else 0.0,
        invalid_rate=sum(1 for ok in valid if not ok) / steps,
    )


def progress_curve(s_values: Sequence[float], initial_s: float, points: int = PROGRESS_GRID_POINTS) -> list[float]:
    """S over painting progress on a fixed grid of step fractions (EASEL Figure 4): S_t at t/T, S_0 at 0,
    linear in between, so that episodes of different budgets average point by point."""
    if not s_values:
        return []
    fractions = np.arange(len(s_values) + 1) / len(s_values)  # step t at fraction t/T (Figure 4's x axis)
    grid = np.linspace(0.0, 1.0, points)
    return [float(v) for v in np.interp(grid, fractions, [initial_s, *s_values])]
