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
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.easel.metrics import IncrementalSimilarity, Similarity
from engine.easel.policy import HISTORY_WINDOW, Observation, Policy, Turn
from engine.easel.render import (
    ACTION_SUBMIT,
    ACTION_UNDO,
    Box,
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


_OUTSIDE, _IN_STRING, _ESCAPED = 0, 1, 2  # where a scan stands: outside strings, inside one, after its backslash
_SCAN_EVENTS = re.compile(r'[{}"\\]')


def _scan_state(state: int, ch: str) -> int:
    """The brace scan's string state after ``ch`` (a backslash escapes the next character of a string)."""
    if state == _OUTSIDE:
        return _IN_STRING if ch == '"' else _OUTSIDE
    if state == _IN_STRING:
        return _ESCAPED if ch == "\\" else _OUTSIDE if ch == '"' else _IN_STRING
    return _IN_STRING


def _merged(a: list[list[int]], b: list[list[int]]) -> list[list[int]]:
    """Two stacks of pending openings that see the same characters from now on, as one: the openings at
    the same height from the top close together (the shorter stack into the longer, buckets likewise)."""
    if len(a) < len(b):
        a, b = b, a
    for height in range(1, len(b) + 1):
        mine, theirs = a[-height], b[-height]
        if len(mine) < len(theirs):
            mine, theirs = theirs, mine
            a[-height] = mine
        mine.extend(theirs)
    return a


def _object_ends(text: str) -> dict[int, int]:
    """For each ``{`` of ``text`` that a brace scan starting on it (outside a string, following strings
    and escapes) closes: the index of its closing ``}``.

    One pass for all openings at once, instead of one scan per opening (quadratic: 16,000 ``{`` took
    5.6 s). The scans started on different openings differ only by where they stand in strings; scans
    standing in the same string state see the same characters alike from there on, so they are followed
    together: one stack of pending openings per string state (at most three), merged when their states
    meet. An opening is pushed on the stack of the scans standing outside strings and closes when that
    stack pops it: the same index the scan from it alone finds.
    """
    stacks: dict[int, list[list[int]]] = {}
    ends: dict[int, int] = {}
    n = len(text)
    position = 0
    for match in _SCAN_EVENTS.finditer(text):
        p = match.start()
        if p > position and _ESCAPED in stacks:  # the character after a backslash ends the escape
            stacks = _advanced(stacks, text[position])
        ch = text[p]
        if ch == "{":
            stacks.setdefault(_OUTSIDE, []).append([p])
        elif ch == "}" and stacks.get(_OUTSIDE):
            for opening in stacks[_OUTSIDE].pop():
                ends[opening] = p
        stacks = _advanced(stacks, ch)
        position = p + 1
        if position >= n:
            break
    return ends


def _advanced(stacks: dict[int, list[list[int]]], ch: str) -> dict[int, list[list[int]]]:
    moved: dict[int, list[list[int]]] = {}
    for state, stack in stacks.items():
        after = _scan_state(state, ch)
        moved[after] = _merged(moved[after], stack) if after in moved else stack
    return moved


#: The deepest nesting (objects and arrays) of a JSON value read from a reply; deeper is no JSON here. json's
#: decoder gives up where the Python stack left to it runs out, which depends on the caller (a Celery worker
#: stands deeper than a resume or a bundle's replay): a reply whose first object nested 900 levels was read
#: one way by one caller and the other way by another. A fixed limit well inside any caller's stack reads it
#: the same everywhere; an action nests one level.
MAX_JSON_DEPTH = 256


#: The candidates :func:`extract_json_object` reads add up to at most this many times the reply's length (plus
#: the floor): each candidate is read from its ``{`` to its ``}``, so candidates nested in one another read the
#: text once per level — a reply of 900 nested objects around a 200 KB list took 9 s a step, a larger one
#: minutes. A reply nesting balanced braces around its action more than some 16 deep is searched no further.
SEARCH_READ_FACTOR = 16
SEARCH_READ_FLOOR = 4096


def _nesting(value: object) -> int:
    """How many levels of objects and arrays ``value`` nests (0 for a scalar), without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, level = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        pending.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def _json_value(text: str, start: int = 0) -> tuple[object, int]:
    """(value, end) of the JSON value at ``start`` (json's own decoder: what ``json.loads`` accepts), nesting
    at most :data:`MAX_JSON_DEPTH` levels. Nesting too deep for the decoder raises ``RecursionError``, not a
    ``ValueError``: here, like nesting past the limit, a ``ValueError`` like any other text that is not
    JSON."""
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if _nesting(value) > MAX_JSON_DEPTH:
        raise ValueError("JSON nested too deeply")
    return value, end


def extract_json_object(text: str) -> object:
    """The JSON value of ``text``, or of the first balanced ``{...}`` in it (models wrap JSON in prose/fences).

    The first balanced ``{...}``: for each ``{`` in turn, the text from it to the ``}`` that closes it (braces
    in strings do not count), if that text is JSON. The closing braces are found in one pass
    (:func:`_object_ends`), each candidate is read in place, and deep nesting is no JSON here, never a
    ``RecursionError``. The candidates read add up to at most :data:`SEARCH_READ_FACTOR` times the reply's length
    (a reply nesting balanced braces around its action deeper than that is searched no further). Raises
    ``ValueError`` when there is none.
    """
    stripped = text.strip()
    try:
        value, end = _json_value(stripped, 0)
        if end == len(stripped):
            return value
    except ValueError:
        pass
    ends = _object_ends(stripped)
    budget = SEARCH_READ_FACTOR * len(stripped) + SEARCH_READ_FLOOR
    for start in sorted(ends):
        budget -= ends[start] + 1 - start  # the candidate's length, read or not: the same on every call
        if budget < 0:
            raise ValueError(f"no JSON object found within {SEARCH_READ_FACTOR} readings of the reply")
        try:
            value, end = _json_value(stripped, start)
        except ValueError:
            continue
        if end == ends[start] + 1:  # exactly the balanced text, as json.loads of it would read it
            return value
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


@dataclass(frozen=True)
class _StrokeUndo:
    """What undoing one accepted semantic stroke needs: the pixels it may have changed (its box; None when it
    touched nothing) and the canvas and ink there before it. A stroke changes nothing outside its box, so
    writing these back gives the canvas and ink before it exactly, bit for bit. A full copy of both per
    stroke was 256²·(3·4 + 8) bytes = 1.3 MB on a maze's canvas, 168 MB over its 128 steps; a box is the
    stroke's extent plus its brush radius (a few KB for the short strokes a maze is walked with, a whole
    canvas only for a stroke that spans it)."""

    box: Box | None
    canvas: np.ndarray | None = None
    ink: np.ndarray | None = None


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
        self._undo_stack: list[_StrokeUndo] = []
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
                    self._undo(self._undo_stack.pop())
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
                self._undo_stack.append(_StrokeUndo(None))  # undone as a stroke, changing nothing
            return False
        mask, box = covered
        if self._walls is not None and stroke_collides(mask, box, self._walls):
            return True
        rows, cols = box.slices
        patch = composite(self.canvas[rows, cols], mask, (stroke.cr, stroke.cg, stroke.cb))
        if self._is_reconstruction:
            self._scorer.apply(box, patch)
        else:
            self._undo_stack.append(_StrokeUndo(box, self.canvas[rows, cols].copy(), self._ink[rows, cols].copy()))
            self._ink = self._ink.copy()
            np.maximum(self._ink[rows, cols], mask, out=self._ink[rows, cols])
        self.canvas = self.canvas.copy()
        self.canvas[rows, cols] = patch
        return False

    def _undo(self, undo: _StrokeUndo) -> None:
        """The canvas and ink before the stroke ``undo`` records (new arrays: an observation handed out keeps
        the canvas it showed)."""
        if undo.box is None:
            return
        rows, cols = undo.box.slices
        self.canvas = self.canvas.copy()
        self.canvas[rows, cols] = undo.canvas
        self._ink = self._ink.copy()
        self._ink[rows, cols] = undo.ink

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
