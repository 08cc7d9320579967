"""One EASEL episode: the environment that applies actions and keeps score (EASEL §3.1).

Reconstruction: every step is a ``brush_stroke`` (13 parameters); S_t is kept by the incremental
scorer. Semantic: ``brush_stroke`` (six path coordinates, fixed brush), ``undo`` (restores the canvas
before the last accepted stroke exactly; with nothing to undo it is invalid) and ``submit`` (ends the
episode). In maze tasks a stroke that crosses a wall is rejected as a no-op that still costs a step,
and the collision is reported (§3.1); it counts as an invalid action (Table 4's maze invalid rate).
Invalid actions cost a step and change nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.easel.metrics import IncrementalSimilarity, Similarity
from engine.easel.policy import HISTORY_WINDOW, Observation, Policy, Turn
from engine.easel.render import (
    ACTION_SUBMIT,
    ACTION_UNDO,
    InvalidAction,
    Stroke,
    composite,
    parse_reconstruction_action,
    parse_semantic_action,
    stroke_coverage,
)
from engine.easel.semantic import Recogniser, SemanticScore, score_semantic, stroke_collides, wall_mask
from engine.easel.task import KIND_RECONSTRUCTION, EaselTask

__all__ = ["Environment", "StepOutcome", "extract_json_object", "parse_raw_action"]

KIND_STROKE, KIND_UNDO, KIND_SUBMIT, KIND_INVALID = "stroke", "undo", "submit", "invalid"
COLLISION_FEEDBACK = "Collision: that stroke crosses a maze wall and was rejected (no-op, one step used)."


@dataclass(frozen=True)
class StepOutcome:
    """What one step did. ``action`` is the parsed JSON object (None when unparseable)."""

    action: dict[str, Any] | None
    raw: str
    valid: bool
    error: str | None
    kind: str
    collision: bool
    similarity: Similarity | None
    done: bool

    @property
    def feedback(self) -> str | None:
        if self.collision:
            return COLLISION_FEEDBACK
        if self.error:
            return f"Invalid action: {self.error}"
        return None


def extract_json_object(text: str) -> object:
    """The JSON value of ``text``, or of the first balanced ``{...}`` in it (models wrap JSON in prose/fences).

    Raises ``ValueError`` when there is none.
    """
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    start = stripped.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for end in range(start, len(stripped)):
            ch = stripped[end]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    try:
                        return json.loads(stripped[start:end + 1])
                    except ValueError:
                        break
        start = stripped.find("{", start + 1)
    raise ValueError("no JSON object found")


def parse_raw_action(raw: str | Mapping[str, Any]) -> tuple[dict[str, Any] | None, str, str | None]:
    """(parsed JSON object or None, raw text, error): the JSON layer of parsing, before validation.

    The raw text is kept verbatim; the object is the text itself as JSON or the first JSON object in it.
    """
    if isinstance(raw, Mapping):
        return dict(raw), json.dumps(dict(raw), sort_keys=True), None
    text = str(raw)
    try:
        value = extract_json_object(text)
    except ValueError as exc:
        return None, text, f"not JSON: {exc}"
    if not isinstance(value, dict):
        return None, text, "an action is a JSON object"
    return value, text, None


class Environment:
    """Applies actions to a task's canvas step by step; ``replay`` rebuilds state from stored actions."""

    def __init__(self, task: EaselTask, *, budget: int | None = None, recogniser: Recogniser | None = None) -> None:
        self.task = task
        self.budget = task.budget if budget is None else int(budget)
        if self.budget < 1:
            raise ValueError(f"budget must be positive, got {self.budget}")
        self.recogniser = recogniser
        self.canvas = task.initial_canvas()
        self.step_index = 0
        self.done = False
        self.outcomes: list[StepOutcome] = []
        self._is_reconstruction = task.kind == KIND_RECONSTRUCTION
        size = task.size
        self._ink = np.zeros((size, size))  # max coverage of accepted semantic strokes
        self._undo_stack: list[tuple[np.ndarray, np.ndarray]] = []
        self._walls = None if self._is_reconstruction else wall_mask(task)
        self._scorer = IncrementalSimilarity(task.reference, self.canvas) if self._is_reconstruction else None
        self.submitted_at: int | None = None

    @property
    def similarity(self) -> Similarity | None:
        return self._scorer.score if self._scorer else None

    @property
    def ink(self) -> np.ndarray:
        """Semantic tasks: the drawn strokes' coverage (the task image excluded)."""
        return self._ink

    def step(self, raw_action: str | Mapping[str, Any]) -> StepOutcome:
        if self.done:
            raise RuntimeError(f"episode on {self.task.id} is over after {self.step_index} steps")
        action, raw, error = parse_raw_action(raw_action)
        collision = False
        kind = KIND_INVALID
        if action is not None:
            parsed = (parse_reconstruction_action(action) if self._is_reconstruction
                      else parse_semantic_action(action))
            if isinstance(parsed, InvalidAction):
                error = parsed.reason
            elif isinstance(parsed, Stroke):
                kind = KIND_STROKE
                collision = self._stroke(parsed)
            elif parsed == ACTION_UNDO:
                if self._undo_stack:
                    self.canvas, self._ink = self._undo_stack.pop()
                    kind = KIND_UNDO
                else:
                    error = "nothing to undo"
            elif parsed == ACTION_SUBMIT:
                kind = KIND_SUBMIT
        valid = kind != KIND_INVALID and not collision
        self.step_index += 1
        if kind == KIND_SUBMIT:
            self.submitted_at = self.step_index
        self.done = kind == KIND_SUBMIT or self.step_index >= self.budget
        outcome = StepOutcome(action=action, raw=raw, valid=valid, error=error, kind=kind, collision=collision,
                              similarity=self.similarity, done=self.done)
        self.outcomes.append(outcome)
        return outcome

    def _stroke(self, stroke: Stroke) -> bool:
        """Apply a valid stroke; True when it was rejected for crossing a wall."""
        size = self.task.size
        covered = stroke_coverage(stroke, size, size)
        if covered is None:
            if not self._is_reconstruction:
                self._undo_stack.append((self.canvas.copy(), self._ink.copy()))
            return False
        mask, box = covered
        if self._walls is not None and stroke_collides(mask, box, self._walls):
            return True
        rows, cols = box.slices
        patch = composite(self.canvas[rows, cols], mask, (stroke.cr, stroke.cg, stroke.cb))
        if self._is_reconstruction:
            self._scorer.apply(box, patch)
        else:
            self._undo_stack.append((self.canvas.copy(), self._ink.copy()))
            self._ink = self._ink.copy()
            np.maximum(self._ink[rows, cols], mask, out=self._ink[rows, cols])
        self.canvas = self.canvas.copy()
        self.canvas[rows, cols] = patch
        return False

    def observation(self, *, history_window: int = HISTORY_WINDOW) -> Observation:
        """What the agent sees now: the canvas, the step, the last turns (semantic tasks) and the last feedback."""
        history: tuple[Turn, ...] = ()
        if not self._is_reconstruction and history_window > 0:
            start = max(0, len(self.outcomes) - history_window)
            history = tuple(Turn(step=i, raw=o.raw, kind=o.kind, valid=o.valid, feedback=o.feedback)
                            for i, o in enumerate(self.outcomes[start:], start=start))
        feedback = self.outcomes[-1].feedback if self.outcomes and not self._is_reconstruction else None
        return Observation(task=self.task, canvas=self.canvas, step=self.step_index, budget=self.budget,
                           history=history, feedback=feedback,
                           extra={} if self._is_reconstruction else {"strokes_on_canvas": len(self._undo_stack)})

    def replay(self, actions: Iterable[str | Mapping[str, Any]]) -> list[StepOutcome]:
        """Apply stored actions in order (resuming an episode): the same state as the original run."""
        return [self.step(action) for action in actions]

    def run(self, policy: Policy, *, on_step: Callable[[int, StepOutcome], None] | None = None) -> list[StepOutcome]:
        """Drive ``policy`` until the episode ends; ``on_step(index, outcome)`` after every step."""
        while not self.done:
            outcome = self.step(policy.act(self.observation()))
            if on_step is not None:
                on_step(self.step_index - 1, outcome)
        return self.outcomes

    def s_values(self) -> list[float]:
        """S_1..S_t of a reconstruction episode so far."""
        return [o.similarity.s for o in self.outcomes if o.similarity is not None]

    def final_score(self) -> SemanticScore:
        """The semantic task's score of the current drawing (EASEL §3.3)."""
        if self._is_reconstruction:
            raise ValueError("final_score is for semantic tasks; reconstruction uses S_T")
        return score_semantic(self.task, self._ink, self.canvas, recogniser=self.recogniser)
