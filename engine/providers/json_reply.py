"""Reading the one JSON object a model was asked to return (Ekphrasis App. C.3, App. E).

The splitter, the checklist generator and the pairwise judge all ask for
"strict JSON". The only latitude taken here is the transport wrapping models
commonly add: surrounding whitespace and a single Markdown code fence
(```` ```json ... ``` ````). Anything else — prose before or after the object, two
objects, a list, trailing commas, NaN — is a :class:`MalformedReply`, which the
caller answers with its repair step.

The object itself is read by the project's strict reader (:func:`engine.strict_json.json_decode`), so
a reply is refused for what an import file is refused for — ``NaN``/``Infinity`` and ``1e400``, a
duplicate key (which value did the model mean?), a NUL or a lone surrogate (which no database column
stores), nesting past :data:`~engine.strict_json.MAX_JSON_DEPTH` (``json`` raised ``RecursionError``
on a few thousand levels) — each naming its field for the repair turn.
"""

from __future__ import annotations

import re
from typing import Any

from engine.strict_json import json_decode

__all__ = ["MalformedReply", "parse_json_object"]

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n?(?P<body>.*?)\n?[ \t]*```$", re.DOTALL)


class MalformedReply(ValueError):
    """The reply is not exactly one JSON object."""


#: Problems of one reply named in its MalformedReply (the rest are counted): the repair turn stays short.
PROBLEMS_NAMED = 5


def parse_json_object(text: str | None) -> dict[str, Any]:
    """Parse ``text`` as one JSON object, allowing only whitespace and one code fence around it."""
    if text is None or not text.strip():
        raise MalformedReply("empty reply")
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body").strip()
    value, problems = json_decode(body)
    if problems:
        named = [(f"{p.field}: " if p.field else "") + p.message + (f" on line {p.line}" if p.line else "")
                 for p in problems[:PROBLEMS_NAMED]]
        more = len(problems) - len(named)
        raise MalformedReply("; ".join(named) + (f" (and {more} more)" if more else ""))
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
