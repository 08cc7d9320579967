"""Generation templates (standard and creative) and confidence elicitation (c2-eval.txt §3.2.1, §4.2.3).

The paper compares "Standard Prompts" with "Creative Prompts which explicitly ask for creative content"
(§4.2.3); its Appendix B wording is not in our copy, so the templates below are written here from that
description and versioned (:data:`TEMPLATE_VERSION`): a run records the version it used.

Surprise needs the model's own confidence (§3.2.1, Xiong et al. 2023 verbalised confidence): after each
convergent answer the *same conversation* continues with :data:`CONFIDENCE_PROMPT`, and
:func:`parse_confidence` reads the reply strictly. A missing or unparseable confidence is ``None`` — the
caller records and counts it, never invents one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from engine.c2.tasks import C2TaskType

__all__ = [
    "TEMPLATE_VERSION",
    "TEMPLATES",
    "CONFIDENCE_PROMPT",
    "CONFIDENCE_VERSION",
    "Template",
    "generation_messages",
    "confidence_messages",
    "parse_confidence",
]

TEMPLATE_VERSION = "c2-templates-v1"
CONFIDENCE_VERSION = "c2-confidence-v1"

Template = Literal["standard", "creative"]

_CREATIVE = (
    "Be creative: prefer a correct answer or approach that is original and non-obvious over the most common one."
)
_CREATIVE_DIVERGENT = (
    "Be as creative as you can: avoid clichés and predictable paths, and aim for fresh, surprising and "
    "memorable ideas while staying coherent and appropriate to the prompt."
)

#: (task type, template) → the instruction text placed before the item; ``{prompt}`` is the item's text.
TEMPLATES: Mapping[tuple[C2TaskType, Template], str] = {
    (C2TaskType.QA, "standard"): (
        "Answer the following trivia question. Reply with the answer only, as a short phrase.\n\nQuestion: {prompt}"
    ),
    (C2TaskType.QA, "creative"): (
        "Answer the following trivia question. " + _CREATIVE + " Reply with the answer only, as a short phrase."
        "\n\nQuestion: {prompt}"
    ),
    (C2TaskType.CODE, "standard"): (
        "Solve the following programming problem in Python 3. Return the complete program in one fenced "
        "```python code block at the end of your reply.\n\n{prompt}"
    ),
    (C2TaskType.CODE, "creative"): (
        "Solve the following programming problem in Python 3. "
        + _CREATIVE
        + " Return the complete program in one fenced ```python code block at the end of your reply.\n\n{prompt}"
    ),
    (C2TaskType.VQA, "standard"): (
        "Look at the image and answer the question. Reply with the answer only, in one to three words."
        "\n\nQuestion: {prompt}"
    ),
    (C2TaskType.VQA, "creative"): (
        "Look at the image and answer the question. " + _CREATIVE + " Reply with the answer only, in one to "
        "three words.\n\nQuestion: {prompt}"
    ),
    (C2TaskType.STORY, "standard"): "Write a short story (at most 500 words) for the following prompt.\n\n{prompt}",
    (C2TaskType.STORY, "creative"): (
        "Write a short story (at most 500 words) for the following prompt. " + _CREATIVE_DIVERGENT + "\n\n{prompt}"
    ),
    (C2TaskType.IDEA, "standard"): (
        "Solve the following practical problem using only the resources it describes. Give a feasible "
        "step-by-step solution.\n\n{prompt}"
    ),
    (C2TaskType.IDEA, "creative"): (
        "Solve the following practical problem using only the resources it describes. "
        + _CREATIVE_DIVERGENT
        + " Give a feasible step-by-step solution.\n\n{prompt}"
    ),
    (C2TaskType.VISUAL_STORY, "standard"): (
        "Look at the image and carry out the following writing task about it.\n\n{prompt}"
    ),
    (C2TaskType.VISUAL_STORY, "creative"): (
        "Look at the image and carry out the following writing task about it. " + _CREATIVE_DIVERGENT + "\n\n{prompt}"
    ),
}

#: Xiong et al. (2023) verbalised confidence, asked in the same conversation after the answer.
CONFIDENCE_PROMPT = (
    "What is the probability that your answer above is correct? Reply with the probability only, a number "
    "between 0.0 and 1.0, in the form\nProbability: <number>"
)

_STARTER = "\n\nUse this starter code:\n```python\n{starter}\n```"


def generation_messages(
    task_type: C2TaskType | str,
    template: Template,
    prompt: str,
    *,
    starter_code: str | None = None,
    image_data_url: str | None = None,
) -> list[dict[str, Any]]:
    """The chat messages asking for one sample: the versioned instruction, the item, and for visual task
    types the image as an ``image_url`` content part (a data URL)."""
    task_type = C2TaskType(task_type)
    if template not in ("standard", "creative"):
        raise ValueError(f"template must be 'standard' or 'creative', got {template!r}")
    text = TEMPLATES[(task_type, template)].format(prompt=prompt)
    if starter_code and starter_code.strip():
        text += _STARTER.format(starter=starter_code.rstrip())
    if task_type.is_visual:
        if not image_data_url:
            raise ValueError(f"task type {task_type.value} needs an image")
        content: Any = [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": image_data_url}},
        ]
    else:
        if image_data_url:
            raise ValueError(f"task type {task_type.value} takes no image")
        content = text
    return [{"role": "user", "content": content}]


def confidence_messages(messages: list[dict[str, Any]], answer: str) -> list[dict[str, Any]]:
    """The same conversation continued: the model's answer, then :data:`CONFIDENCE_PROMPT` (§3.2.1)."""
    return [*messages, {"role": "assistant", "content": answer}, {"role": "user", "content": CONFIDENCE_PROMPT}]


_NUMBER = r"(?P<number>\d+(?:\.\d+)?|\.\d+)(?P<percent>\s*%)?"
_CONFIDENCE = re.compile(
    r"^\s*(?:\**\s*(?:probability|confidence)\s*\**\s*[:=]?\s*\**\s*)?" + _NUMBER + r"\s*\**\s*\.?\s*$",
    re.IGNORECASE,
)


def parse_confidence(text: str | None) -> float | None:
    """The probability in a confidence reply, in [0, 1], or ``None`` when the reply is not exactly one.

    Accepted: ``0.8``, ``Probability: 0.8``, ``Confidence = .8``, ``80%`` (→ 0.8), optionally bold. Anything
    else — prose, two numbers, a value outside [0, 1] (or above 100 %) — is ``None``.
    """
    if text is None:
        return None
    match = _CONFIDENCE.match(text)
    if not match:
        return None
    value = float(match.group("number"))
    if match.group("percent"):
        value /= 100.0
    if not 0.0 <= value <= 1.0:
        return None
    return value
