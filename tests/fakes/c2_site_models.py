"""A fake-server chat handler playing C² subjects and the rubric rater (for the site's run tests and
the C² run benchmark).

It reads each request the way a model would: a request whose first message is the rubric gets a rating
JSON; a conversation that ends with the confidence question gets ``Probability: 0.7``; anything else is a
generation request, answered by task type from the instruction text (a trivia answer, a fenced program,
a VQA word, a short story). ``malformed_first_rating=True`` makes the first rating reply invalid JSON, to
exercise the repair turn.
"""

from __future__ import annotations

import threading
from typing import Any

from engine.c2.prompts import CONFIDENCE_PROMPT
from engine.c2.rater import RUBRIC

RATING = (
    '{"usefulness": 4, "usefulness_rationale": "Coherent and on prompt.", "originality": 3, '
    '"originality_rationale": "Some fresh turns.", "surprise": 2, "surprise_rationale": "Mostly predictable."}'
)
CODE_ANSWER = "Here is my solution.\n```python\na, b = map(int, input().split())\nprint(a + b)\n```"


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if part.get("type") == "text")
    return content or ""


class C2SiteModels:
    """Callable handler; ``answers`` maps a substring of the item text to the answer a subject gives."""

    def __init__(self, *, answers: dict[str, str] | None = None, malformed_first_rating: bool = False) -> None:
        self.answers = answers or {}
        self.malformed_first_rating = malformed_first_rating
        self._lock = threading.Lock()
        self.ratings_served = 0

    def __call__(self, request: dict[str, Any]) -> str:
        messages = request["messages"]
        if messages and messages[0].get("role") == "system" and _text_of(messages[0]) == RUBRIC:
            with self._lock:
                self.ratings_served += 1
                first = self.ratings_served == 1
            return "not json at all" if first and self.malformed_first_rating else RATING
        last = _text_of(messages[-1])
        if last == CONFIDENCE_PROMPT:
            return "Probability: 0.7"
        for needle, answer in self.answers.items():
            if needle in last:
                return answer
        if "programming problem" in last:
            return CODE_ANSWER
        if "Look at the image and answer" in last:
            return "red"
        if "trivia question" in last:
            return "Mars"
        return "Once, a lighthouse keeper found a door in the sea; behind it was the sound of her own name."
