"""A C² model for the fake OpenAI server: answers generation, confidence and rater requests.

Use as the server's handler so tests exercise the real protocol (templates from engine.c2.prompts,
the confidence follow-up in the same conversation, the rater's rubric and strict JSON)::

    model = C2FakeModel(qa_answers={"Beatles": ["The Beatles", "Beatles"]})
    with FakeOpenAIServer(handler=model) as server:
        ...

Recognition, by content only (never by model name):
* a rater request — the system message is :data:`engine.c2.rater.RUBRIC` → one JSON rating whose
  scores are a hash of the response text (``malformed_ratings`` first replies are prose, to exercise
  the repair turn);
* a confidence follow-up — the last user turn is :data:`engine.c2.prompts.CONFIDENCE_PROMPT` →
  ``"Probability: 0.xx"`` (hash of the conversation), or ``missing_confidence`` text for questions in
  ``no_confidence_for``;
* a generation — the user turn starts with one of :data:`engine.c2.prompts.TEMPLATES` → by task type:
  a short answer (``qa_answers`` / ``vqa_answers``: question substring → answers cycled over repeated
  identical requests, so n samples can differ), a fenced code block (``code``: problem substring →
  program; default echoes stdin), or a story/idea text that varies with the repeat count.

Everything is deterministic: equal requests in equal order get equal answers.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from engine.c2.prompts import CONFIDENCE_PROMPT, TEMPLATES
from engine.c2.rater import RUBRIC
from engine.c2.tasks import C2TaskType

__all__ = ["C2FakeModel", "DEFAULT_CODE"]

DEFAULT_CODE = "import sys\nprint(sys.stdin.read().strip())"
_PREFIXES = sorted(
    ((text.split("{prompt}")[0], task_type, template) for (task_type, template), text in TEMPLATES.items()),
    key=lambda entry: -len(entry[0]),
)


def _digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))


class C2FakeModel:
    """A deterministic fake C² subject and rater (see the module docstring)."""

    def __init__(
        self,
        *,
        qa_answers: Mapping[str, Sequence[str]] | None = None,
        vqa_answers: Mapping[str, Sequence[str]] | None = None,
        code: Mapping[str, str] | None = None,
        no_confidence_for: Sequence[str] = (),
        missing_confidence: str = "I cannot say.",
        malformed_ratings: int = 0,
    ) -> None:
        self.qa_answers = dict(qa_answers or {})
        self.vqa_answers = dict(vqa_answers or {})
        self.code = dict(code or {})
        self.no_confidence_for = tuple(no_confidence_for)
        self.missing_confidence = missing_confidence
        self._malformed_left = malformed_ratings
        self._repeats: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.kinds: Counter[str] = Counter()  # how many requests of each kind were answered

    def __call__(self, request: dict[str, Any]) -> str:
        messages = request.get("messages") or []
        if messages and messages[0].get("role") == "system" and messages[0].get("content") == RUBRIC:
            return self._rate(messages)
        last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
        if last_user is not None and last_user.get("content") == CONFIDENCE_PROMPT:
            return self._confidence(messages)
        return self._generate(messages)

    def _repeat(self, key: str) -> int:
        with self._lock:
            seen = self._repeats[key]
            self._repeats[key] += 1
        return seen

    def _count(self, kind: str) -> None:
        with self._lock:
            self.kinds[kind] += 1

    def _rate(self, messages: list[dict[str, Any]]) -> str:
        self._count("rating")
        with self._lock:
            malformed = self._malformed_left > 0
            if malformed:
                self._malformed_left -= 1
        if malformed:
            return "Usefulness is high, originality moderate."
        response = _text_of(messages[1].get("content")) if len(messages) > 1 else ""
        seed = _digest("rating", response)
        scores = [(seed >> (8 * k)) % 6 for k in range(3)]
        return json.dumps(
            {
                "usefulness": scores[0], "usefulness_rationale": "fake: coherent enough.",
                "originality": scores[1], "originality_rationale": "fake: some fresh ideas.",
                "surprise": scores[2], "surprise_rationale": "fake: one twist.",
            }
        )

    def _confidence(self, messages: list[dict[str, Any]]) -> str:
        self._count("confidence")
        question = _text_of(messages[0].get("content"))
        if any(marker in question for marker in self.no_confidence_for):
            return self.missing_confidence
        answer = _text_of(messages[-2].get("content")) if len(messages) >= 2 else ""
        value = 0.3 + (_digest("confidence", question, answer) % 70) / 100
        return f"Probability: {value:.2f}"

    def _generate(self, messages: list[dict[str, Any]]) -> str:
        self._count("generation")
        text = _text_of(messages[-1].get("content")) if messages else ""
        match = next(((task_type, body) for prefix, task_type, _ in _PREFIXES
                      for body in [text[len(prefix):]] if text.startswith(prefix)), None)
        if match is None:
            return "fake: an unrecognised request."
        task_type, body = match
        repeat = self._repeat(text)
        if task_type in (C2TaskType.QA, C2TaskType.VQA):
            table = self.qa_answers if task_type == C2TaskType.QA else self.vqa_answers
            for marker, answers in table.items():
                if marker in body:
                    return answers[repeat % len(answers)]
            return "unknown"
        if task_type == C2TaskType.CODE:
            program = next((code for marker, code in self.code.items() if marker in body), DEFAULT_CODE)
            return f"Here is a solution (attempt {repeat + 1}).\n```python\n{program}\n```"
        seed = _digest(task_type.value, body, str(repeat))
        words = ["lantern", "orchard", "glacier", "violin", "harbour", "comet", "mirror", "fox"]
        picked = [words[(seed >> (3 * k)) % len(words)] for k in range(6)]
        return f"Once the {picked[0]} met the {picked[1]}, the {picked[2]} changed. " \
               f"Then a {picked[3]} and a {picked[4]} found the {picked[5]}."
