"""The multimodal-model agent: prompt, observation and action parsing (EASEL §3.1 "Model interface").

Protocol, as in the paper: the default interface is minimal. Reconstruction: the model observes the
reference image, the current canvas and the brush tool schema, and answers one ``brush_stroke``
action as JSON. Semantic tasks: the task image (for handwriting the blank canvas), the instruction,
the current canvas, the reduced schema (six path coordinates; ``undo``, ``submit``) and a 3-turn
history window of its own previous answers with the environment's feedback, collisions included.

Images travel as PNG data URLs in OpenAI-style ``image_url`` content parts. The prompt never contains
a model's name (the ``model_label`` is only the policy's name). The model's answer is returned
verbatim; the environment extracts the JSON object and validates it strictly, so unparseable output
becomes an invalid action stored with its raw text.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.easel.episode import parse_raw_action
from engine.easel.policy import HISTORY_WINDOW, Observation
from engine.easel.render import (
    QUANTISATION_LEVELS,
    InvalidAction,
    parse_reconstruction_action,
    parse_semantic_action,
)
from engine.easel.task import KIND_RECONSTRUCTION, KIND_SEMANTIC, png_bytes

__all__ = ["AGENT_PROMPT_VERSION", "MLLMAgent", "RECONSTRUCTION_SCHEMA", "SEMANTIC_SCHEMA", "build_messages",
           "image_data_url", "parse_action"]

#: Names the wording of every text :func:`build_messages` sends (system prompt, schemas, task lines, the
#: history's answers): change it with any of them, so that a run made with one wording is not finished
#: with another (a run records it; leaderboard.runs.lifecycle refuses the resume).
AGENT_PROMPT_VERSION = "easel-agent-v1"

Chat = Callable[[list[dict[str, Any]]], str]

RECONSTRUCTION_SCHEMA = (
    'Tool brush_stroke — answer exactly one JSON object:\n'
    '{"action": "brush_stroke", "xs": n, "ys": n, "xc": n, "yc": n, "xe": n, "ye": n, '
    '"rs": n, "alpha_s": n, "re": n, "alpha_e": n, "cr": n, "cg": n, "cb": n}\n'
    "- (xs, ys) start, (xc, yc) control point, (xe, ye) end of a quadratic Bezier curve, in normalised canvas "
    "coordinates: x to the right, y down, 0 and 1 at the canvas edges "
    f"(or all six as integers 0..{QUANTISATION_LEVELS}).\n"
    "- rs, re: brush radius at the start and end (0..1; 1 makes the stroke half the canvas wide); "
    "alpha_s, alpha_e: opacity at the start and end (0..1), both linear along the stroke.\n"
    "- cr, cg, cb: the stroke's RGB colour (0..1).\n"
    "Every value must be a number in its range; anything else is an invalid action and wastes the step."
)

SEMANTIC_SCHEMA = (
    "Tools — answer exactly one JSON object, one of:\n"
    '{"action": "brush_stroke", "xs": n, "ys": n, "xc": n, "yc": n, "xe": n, "ye": n}\n'
    '{"action": "undo"}\n'
    '{"action": "submit"}\n'
    "- brush_stroke draws a quadratic Bezier curve from (xs, ys) through the control point (xc, yc) to (xe, ye), "
    "in normalised canvas coordinates (x to the right, y down, 0..1, or all six as integers "
    f"0..{QUANTISATION_LEVELS}); the brush is fixed: opaque dark blue, medium width.\n"
    "- undo removes your last stroke; submit ends the task."
)

SYSTEM_PROMPT = (
    "You paint on a canvas with a brush tool, one action per turn, and see the updated canvas after every "
    "action. Reply with the JSON action only."
)


#: A past answer in a semantic prompt's history is sent back whole up to this many characters, past it its
#: start and its end (where the action usually stands) around a note of the length: a 1 MB answer rode along
#: in the next three prompts, which a real endpoint refuses as too long (easel.txt §3.1 keeps the turns, not
#: the bytes). An ordinary answer (max_tokens 4,096) is far shorter and comes back exactly as it was.
HISTORY_ANSWER_CHARS = 4_000


def _history_answer(raw: str) -> str:
    if len(raw) <= HISTORY_ANSWER_CHARS:
        return raw
    half = HISTORY_ANSWER_CHARS // 2
    return f"{raw[:half]}\n[… your answer was {len(raw):,} characters; its middle is not repeated here …]\n{raw[-half:]}"


def image_data_url(image: np.ndarray) -> str:
    """A PNG data URL of a float image in [0, 1]."""
    return "data:image/png;base64," + base64.b64encode(png_bytes(image)).decode("ascii")


def _image_part(image: np.ndarray) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": image_data_url(image)}}


def build_messages(observation: Observation) -> list[dict[str, Any]]:
    """The chat messages for one step (module docstring); no model name appears anywhere in them."""
    task = observation.task
    step_line = f"Step {observation.step + 1} of {observation.budget}."
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    if task.kind == KIND_RECONSTRUCTION:
        text = (f"Task: reconstruction. Make the canvas as visually close to the reference image as possible "
                f"({task.size}x{task.size} pixels). {step_line}\n\n{RECONSTRUCTION_SCHEMA}")
        content = [{"type": "text", "text": text},
                   {"type": "text", "text": "Reference image:"}, _image_part(task.reference),
                   {"type": "text", "text": "Current canvas:"}, _image_part(observation.canvas)]
        messages.append({"role": "user", "content": content})
        return messages
    text = f"Task: semantic. {task.instruction} {step_line}\n\n{SEMANTIC_SCHEMA}"
    intro: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if task.spec.get("initial") == "reference":
        intro += [{"type": "text", "text": "Task image:"}, _image_part(task.reference)]
    messages.append({"role": "user", "content": intro})
    for turn in observation.history[-HISTORY_WINDOW:]:
        messages.append({"role": "assistant", "content": _history_answer(turn.raw)})
        result = turn.feedback or ("Accepted." if turn.valid else "Invalid action.")
        messages.append({"role": "user", "content": f"Step {turn.step + 1}: {result}"})
    latest: list[dict[str, Any]] = []
    if observation.feedback:
        latest.append({"type": "text", "text": f"Feedback on your last action: {observation.feedback}"})
    latest += [{"type": "text", "text": f"{step_line} Current canvas:"}, _image_part(observation.canvas)]
    messages.append({"role": "user", "content": latest})
    return messages


def parse_action(text: str, *, task_kind: str) -> dict[str, Any] | InvalidAction:
    """The validated action object in a model's answer, or an InvalidAction keeping the raw text."""
    action, raw, error = parse_raw_action(text)
    if action is None:
        return InvalidAction(error or "unparseable", raw=raw)
    if task_kind == KIND_RECONSTRUCTION:
        parsed = parse_reconstruction_action(action)
    elif task_kind == KIND_SEMANTIC:
        parsed = parse_semantic_action(action)
    else:
        raise ValueError(f"unknown task kind {task_kind!r}")
    if isinstance(parsed, InvalidAction):
        return InvalidAction(parsed.reason, raw=raw)
    return action


class MLLMAgent:
    """A multimodal model behind ``chat(messages) -> text`` (the site builds it on the provider client)."""

    is_simulated = False

    def __init__(self, chat: Chat, *, model_label: str) -> None:
        self.chat = chat
        self.name = model_label

    def act(self, observation: Observation) -> str:
        """The model's answer, verbatim: the environment parses and validates it."""
        return self.chat(build_messages(observation))
