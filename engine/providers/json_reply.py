"""Reading the one JSON object a model was asked to return (Ekphrasis App. C.3, App. E).

The splitter, the checklist generator and the pairwise judge all ask for
"strict JSON". The only latitude taken here is the transport wrapping models
commonly add: surrounding whitespace and a single Markdown code fence
(```` ```json ... ``` ````). Anything else — prose before or after the object, two
objects, a list, trailing commas, NaN — is a :class:`MalformedReply`, which the
caller answers with its repair step.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MalformedReply", "parse_json_object"]

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n?(?P<body>.*?)\n?[ \t]*```$", re.DOTALL)


class MalformedReply(ValueError):
    """The reply is not exactly one JSON object."""


def _reject_constant(name: str) -> Any:
    raise MalformedReply(f"non-standard JSON constant {name}")


def parse_json_object(text: str | None) -> dict[str, Any]:
    """Parse ``text`` as one JSON object, allowing only whitespace and one code fence around it."""
    if text is None or not text.strip():
        raise MalformedReply("empty reply")
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body").strip()
    try:
        value = json.loads(body, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise MalformedReply(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    if not isinstance(value, dict):
        raise MalformedReply(f"expected a JSON object, got {type(value).__name__}")
    return value


def repair_turn(messages: list[dict[str, str]], reply: str | None, problem: str, instruction: str) -> list[dict[str, str]]:
    """The conversation again, with the invalid reply and one user turn saying what was wrong and what
    to return instead: the repair turn every JSON-answering prompt in the engine uses."""
    return [
        *messages,
        {"role": "assistant", "content": reply or ""},
        {"role": "user", "content": f"That reply is invalid: {problem}. {instruction}"},
    ]
