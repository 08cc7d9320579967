"""SIMULATED subject and rater for offline demos and tests — never real measurements (c2-eval.txt §4).

Both are labelled simulated (:data:`SIMULATED_LABEL`, ``is_simulated = True``) and used only when named.
Every output is a pure function of (model, prompt, sample index, seed): a sha256-seeded generator.

* :class:`SimulatedSubject` — a profile per model: ``accuracy`` (probability a convergent sample is
  correct), ``diversity`` (probability a correct sample takes a different correct form — another alias,
  another program layout — which the embedder then sees as different), ``confidence`` (mean stated
  confidence) and ``quality`` (how rich its divergent texts are). Its replies go through the *real*
  graders: QA/VQA answers are a gold answer or a wrong one; code is a program that answers the
  problem's tests from a table (correct) or with a wrong value.
* :class:`SimulatedRater` — reads only the response text (never the model name), maps visible text
  features (length, distinct-word ratio, "twist" words) to 0–5 scores, blurred by ``1 − skill`` noise.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass

from engine.c2.grading import CodeTests
from engine.c2.rater import Rating
from engine.c2.tasks import C2Item, C2TaskType

__all__ = ["SIMULATED_LABEL", "SubjectProfile", "SimulatedSubject", "SimulatedRater", "SimulatedSample"]

SIMULATED_LABEL = "simulated"

_WRONG_ANSWERS = ("paris", "1066", "blue whale", "shakespeare", "mercury", "42", "none of these")
_OPENINGS = ("The", "At dawn the", "Nobody expected the", "Long after the", "Under a borrowed sky the")
_NOUNS = ("lighthouse", "archivist", "clockmaker", "river", "orchard", "satellite", "violinist", "glacier",
          "market", "letter", "fox", "engine", "garden", "mirror", "tram", "comet", "lantern", "harbour")
_VERBS = ("remembered", "refused", "carried", "unfolded", "whispered", "rebuilt", "traded", "forgot",
          "painted", "counted", "followed", "hid")
_TWISTS = ("but the map was upside down", "and then the silence answered", "until the ending rewrote itself",
           "yet the stranger was her own echo", "though the clock had been running backwards all along")


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True)
class SubjectProfile:
    """A simulated model's abilities, each in [0, 1]."""

    accuracy: float = 0.6
    diversity: float = 0.3
    confidence: float = 0.7
    quality: float = 0.5


@dataclass(frozen=True)
class SimulatedSample:
    """One simulated reply and, for convergent tasks, the stated confidence reply text."""

    text: str
    confidence_text: str | None


class SimulatedSubject:
    """A labelled simulated model; ``sample(item, index)`` is deterministic per (model, item, index, seed)."""

    is_simulated = True
    label = SIMULATED_LABEL

    def __init__(self, model: str, profile: SubjectProfile, *, seed: int = 0, template: str = "standard") -> None:
        self.model = model
        self.profile = profile
        self.seed = seed
        self.template = template

    def _boost(self) -> float:
        # the creative template nudges diversity and divergent quality up (Figure 5's direction)
        return 0.1 if self.template == "creative" else 0.0

    def sample(self, item: C2Item, index: int) -> SimulatedSample:
        rng = _rng("subject", self.model, item.task_type, item.external_id, index, self.seed, self.template)
        p = self.profile
        if item.task_type.is_convergent:
            correct = rng.random() < p.accuracy
            varied = rng.random() < min(1.0, p.diversity + self._boost())
            text = self._convergent_text(item, rng, correct=correct, varied=varied)
            stated = min(1.0, max(0.0, rng.gauss(p.confidence, 0.1)))
            return SimulatedSample(text=text, confidence_text=f"Probability: {stated:.2f}")
        return SimulatedSample(text=self._divergent_text(rng, min(1.0, p.quality + self._boost())), confidence_text=None)

    def _convergent_text(self, item: C2Item, rng: random.Random, *, correct: bool, varied: bool) -> str:
        if item.task_type in (C2TaskType.QA, C2TaskType.VQA):
            if not correct:
                return rng.choice(_WRONG_ANSWERS)
            answers = list(dict.fromkeys(item.answers))
            return rng.choice(answers) if varied else answers[0]
        if item.task_type == C2TaskType.CODE:
            return "```python\n" + _table_program(item.tests, correct=correct, style=rng.randrange(3) if varied else 0) + "\n```"
        raise ValueError(f"{item.task_type} is not convergent")

    @staticmethod
    def _divergent_text(rng: random.Random, quality: float) -> str:
        sentences = []
        vocabulary = max(3, int(len(_NOUNS) * quality))
        for _ in range(3 + int(6 * quality)):
            noun = _NOUNS[rng.randrange(vocabulary)]
            sentence = f"{rng.choice(_OPENINGS)} {noun} {rng.choice(_VERBS)} the {_NOUNS[rng.randrange(vocabulary)]}"
            if rng.random() < quality * 0.5:
                sentence += ", " + rng.choice(_TWISTS)
            sentences.append(sentence + ".")
        return " ".join(sentences)


def _table_program(tests: CodeTests, *, correct: bool, style: int) -> str:
    """A program that answers the known tests from a lookup table (correct) or with a wrong value."""
    if tests.call_based:
        table = {raw: json.loads(out) for raw, out in zip(tests.inputs, tests.outputs)}
        if not correct:
            table = {key: None for key in table}
        body = (
            "import json\n"
            f"TABLE = {json.dumps(table)!r}\n"
            "class Solution:\n"
            f"    def {tests.func_name}(self, *args):\n"
            "        table = json.loads(TABLE)\n"
            "        for raw, value in table.items():\n"
            "            if [json.loads(x) for x in raw.split('\\n')] == list(args):\n"
            "                return value\n"
            "        return None\n"
        )
    else:
        table = {raw.strip(): (out if correct else "wrong") for raw, out in zip(tests.inputs, tests.outputs)}
        body = (
            "import sys\n"
            f"TABLE = {table!r}\n"
            "data = sys.stdin.read().strip()\n"
            "print(TABLE.get(data, ''))\n"
        )
    variants = ("", "# a direct lookup\n", "# answers precomputed for speed\n")
    return variants[style] + body


class SimulatedRater:
    """A labelled simulated rubric rater: scores depend only on the response text and the seed."""

    is_simulated = True
    label = SIMULATED_LABEL

    def __init__(self, *, skill: float = 0.8, seed: int = 0) -> None:
        if not 0.0 <= skill <= 1.0:
            raise ValueError("skill must lie in [0, 1]")
        self.skill = skill
        self.seed = seed

    def rate(self, task_prompt: str, response: str, *, repeat: int = 0) -> Rating:
        rng = _rng("rater", task_prompt, response, self.seed, repeat)
        words = response.lower().split()
        distinct = len(set(words)) / max(1, len(words))
        twists = sum(response.count(t) for t in _TWISTS)
        sentences = max(1, response.count("."))
        features = (min(1.0, sentences / 9), min(1.0, distinct * 1.6), min(1.0, twists / 4))
        scores = []
        for feature in features:
            noisy = feature * 5 + rng.gauss(0, 1.5 * (1.0 - self.skill))
            scores.append(int(min(5, max(0, round(noisy)))))
        u, o, s = scores
        return Rating(
            u=u, o=o, s=s,
            rationale_u=f"simulated: {sentences} sentences",
            rationale_o=f"simulated: distinct-word ratio {distinct:.2f}",
            rationale_s=f"simulated: {twists} twist phrases",
        )
