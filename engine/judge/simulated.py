"""The simulated judge: a labelled stand-in for an LLM judge, for the demo and the tests.

Every judgement it returns has ``judge_name="simulated"``. It never calls a
provider. For each comparison it draws a verdict from a Bradley–Terry-style
model of the things App. D.2 diagnoses in real judges:

    logit P(A preferred | decisive) = θ[model_A, d] − θ[model_B, d]
                                      + q[task, model_A, d] − q[task, model_B, d]
                                      + position_bias
                                      + length_bias · (words_A − words_B) / 10

where θ is a latent skill per model and dimension (given in ``skills`` or drawn
once from N(0, ``skill_spread``²) by hashing ``skill_seed``, model and dimension), q is how much
better or worse this particular answer is than its model's skill (:func:`answer_quality`: drawn
from N(0, ``answer_spread``²) by hashing ``skill_seed``, task, model and dimension; 0 by default), words
are counted in the inspected field, and a tie is returned with probability
``tie_rate``. With probability ``malformed_rate`` the raw reply is broken JSON,
and so is a repair with the same probability: replies go through the same
validation and repair path as the LLM judge's (:mod:`engine.judge.repair`),
so ``repaired`` and failed judgements occur as they would for real. An unbroken
reply hands the validation the JSON object its text encodes
(:class:`~engine.judge.repair.EncodedReply`), so its text is not read back; one
whose text holds what the strict reader refuses or must unescape (a NUL, a lone
surrogate, a ``\\u`` escape) is read from its text like any other.

The latent skills are the judge's configuration (``skills``, ``skill_seed``,
``skill_spread``), not the run's: ``seed`` drives only the noise (verdicts,
ties, confidences, malformed replies), so two runs that differ only in seed
judge the same "true" models and should order them alike within their intervals. The answers'
own qualities q are a property of the answers, not of the judge, so anyone who reads them (the
demo's simulated annotators, :mod:`annotation.demo`) can see the same q: that shared per-answer
signal is what lets a judge's verdict on one comparison predict a person's (PPI's λ > 0).

Determinism: every random draw is seeded by SHA-256 of (seed, comparison
identity — run, task, dimension, pair, kind, repeat — and the draw's purpose),
never by call order, so a resumed or re-chunked run reproduces the same
judgements. The malformed-reply draws also include ``retry``, so a
re-submitted failure can succeed.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from _random import Random as _CoreRandom
from collections.abc import Mapping, Sequence

from engine.checklists import DIMENSION_FIELD, Checklist, Dimension, InspectedField
from engine.judge.comparison import WINNER_TEXT, Candidate, PairJudgement, PairJudgeRequest, Winner
from engine.judge.repair import EncodedReply, Reply, ReplyHook, judge_with_repair
from engine.providers.client import ChatResult
from engine.strict_json import storable_text

__all__ = ["SIMULATED_JUDGE_NAME", "DEFAULT_SKILL_SEED", "SimulatedJudge", "answer_quality"]

SIMULATED_JUDGE_NAME = "simulated"
#: Seed of the latent skills of models the configuration does not list: part of the judge's
#: configuration, independent of the run seed.
DEFAULT_SKILL_SEED = 0
_EVIDENCE_WORDS = 12
#: json.dumps(..., ensure_ascii=False) made once (dumps builds a new encoder for every call with an option).
_ENCODER = json.JSONEncoder(ensure_ascii=False)
#: The characters ``_ENCODER`` writes as a ``\\u`` escape: the controls without a short escape (\\b \\t \\n \\f \\r).
_U_ESCAPED = re.compile("[\x00-\x07\x0b\x0e-\x1f]")


def _storable_encoded(text: str) -> bool:
    """Whether ``_ENCODER``'s JSON string of ``text`` is :func:`~engine.strict_json.storable_text`: it writes
    every character as it is but a backslash (doubled: a ``\\u`` stays one), a quote and the controls, of which
    those in ``_U_ESCAPED`` as ``\\u`` escapes; so the string has a ``\\u``, a NUL or a lone surrogate exactly when
    ``text`` has a ``\\u``, a NUL, a lone surrogate or one of those controls (a NUL is one of them)."""
    return storable_text(text) and not _U_ESCAPED.search(text)


#: The other two winners of each, in the enumeration's order (what an item that disagrees is drawn from).
_OTHER_WINNERS = {winner: [other for other in Winner if other is not winner] for winner in Winner}


#: The upper minus the lower end of an item's confidence, as ``random.uniform(0.5, 0.95)`` computes it.
_ITEM_CONFIDENCE_SPAN = 0.95 - 0.5
#: Entries a judge memoises of its candidates' and checklists' reply pieces before it starts afresh (a run's
#: chunk shows ~100 candidates and a few checklists; the bound keeps a long-lived judge from holding every one).
_MEMO_LIMIT = 4096


def _seed_of(seed_text: str) -> int:
    """A generator's seed: the first 8 bytes of SHA-256 of ``seed_text`` (its parts joined by "\\x1f"), big-endian;
    the one rule :func:`_draws` and :func:`_reseeded` both seed by."""
    return int.from_bytes(hashlib.sha256(seed_text.encode("utf-8")).digest()[:8], "big")


def _draws(*parts: object) -> random.Random:
    return random.Random(_seed_of("\x1f".join(map(str, parts))))  # map: no generator frame


def _reseeded(rng: random.Random, seed_text: str) -> random.Random:
    """``rng`` in the state ``_draws`` gives a new generator whose parts joined are ``seed_text``: Random(n) for an
    int n is ``_random.Random.seed(n)`` (random.py's ``seed`` hands an int to it) and ``gauss_next = None``. A
    verdict draws from three generators (the reply's format, the verdict, and a break's): making each anew, through
    ``Random.__init__`` and ``Random.seed`` in Python, cost more than the Mersenne Twister's own seeding."""
    _CoreRandom.seed(rng, _seed_of(seed_text))
    rng.gauss_next = None
    return rng


def answer_quality(task_id: str, model: str, dimension: Dimension | str, *, spread: float,
                   skill_seed: int = DEFAULT_SKILL_SEED) -> float:
    """q: how much better (> 0) or worse this model's answer to this task is on ``dimension`` than
    the model's skill, an N(0, ``spread``²) draw seeded by ``skill_seed``, task, model and dimension
    (never by a run seed or call order: the same answer has the same q for every reader)."""
    if spread == 0:
        return 0.0
    return _draws(skill_seed, "answer", task_id, model, Dimension(dimension).value).gauss(0.0, spread)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


class SimulatedJudge:
    """A deterministic synthetic judge with latent skills and tunable biases; see the module docstring."""

    name = SIMULATED_JUDGE_NAME

    def __init__(
        self,
        *,
        seed: int = 42,
        skills: Mapping[str, Mapping[Dimension | str, float]] | None = None,
        skill_spread: float = 1.0,
        skill_seed: int = DEFAULT_SKILL_SEED,
        position_bias: float = 0.3,
        length_bias: float = 0.1,
        tie_rate: float = 0.1,
        malformed_rate: float = 0.01,
        item_agreement: float = 0.8,
        answer_spread: float = 0.0,
    ) -> None:
        for label, rate in (
            ("tie_rate", tie_rate),
            ("malformed_rate", malformed_rate),
            ("item_agreement", item_agreement),
        ):
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"{label} must be in [0, 1]")
        self.seed = seed
        self.skills = {
            model: {Dimension(dimension): float(value) for dimension, value in by_dimension.items()}
            for model, by_dimension in (skills or {}).items()
        }
        self.skill_spread = skill_spread
        self.skill_seed = skill_seed
        self.position_bias = position_bias
        self.length_bias = length_bias
        self.tie_rate = tie_rate
        self.malformed_rate = malformed_rate
        self.item_agreement = item_agreement
        if answer_spread < 0:
            raise ValueError("answer_spread must be at least 0")
        self.answer_spread = float(answer_spread)
        self._skill_memo: dict[tuple[str, Dimension], float] = {}  # θ never changes for one judge
        # a verdict's pieces of each shown candidate and checklist (_shown, _items), by the object's identity
        self._shown_memo: dict[tuple[int, InspectedField], tuple] = {}
        self._items_memo: dict[int, tuple] = {}

    def __repr__(self) -> str:
        return (
            f"SimulatedJudge(seed={self.seed}, position_bias={self.position_bias}, length_bias={self.length_bias}, "
            f"tie_rate={self.tie_rate}, malformed_rate={self.malformed_rate})"
        )

    # -- the latent model ------------------------------------------------------

    def skill(self, model: str, dimension: Dimension | str) -> float:
        """θ of ``model`` on ``dimension``: the configured value, else an N(0, spread²) draw seeded by
        ``skill_seed`` (never by the run seed: a new seed must not change who is better)."""
        found = self._skill_memo.get((model, dimension))  # a Dimension hashes and compares as its value
        if found is not None:
            return found
        dimension = Dimension(dimension)
        key = (model, dimension)
        if key not in self._skill_memo:  # two of the four seeded generators made for every verdict
            configured = self.skills.get(model, {}).get(dimension)
            self._skill_memo[key] = configured if configured is not None else _draws(
                self.skill_seed, "skill", model, dimension.value).gauss(0.0, self.skill_spread)
        return self._skill_memo[key]

    def answer_quality(self, task_id: str, model: str, dimension: Dimension | str) -> float:
        """q of ``model``'s answer to ``task_id`` on ``dimension`` (:func:`answer_quality` at this
        judge's ``answer_spread`` and ``skill_seed``)."""
        return answer_quality(task_id, model, dimension, spread=self.answer_spread, skill_seed=self.skill_seed)

    def preference_for_a(self, request: PairJudgeRequest) -> float:
        """P(Response A preferred | decisive) for this presentation."""
        inspected = request.inspected_field
        return self._preference(request, len(request.a.field_text(inspected).split()),
                                len(request.b.field_text(inspected).split()))

    def _preference(self, request: PairJudgeRequest, words_a: int, words_b: int) -> float:
        """:meth:`preference_for_a` given the inspected fields' word counts (the verdict counts them too):
        σ(θ_a − θ_b + q_a − q_b + position bias + length bias · (words_a − words_b) / 10), the terms added in
        that order."""
        dimension, model_a, model_b = request.dimension, request.a.model, request.b.model
        if self.answer_spread == 0:  # answer_quality's own 0.0, without its two calls a verdict
            quality_a = quality_b = 0.0
        else:
            task = request.task.task_id
            quality_a = self.answer_quality(task, model_a, dimension)
            quality_b = self.answer_quality(task, model_b, dimension)
        logit = (
            self.skill(model_a, dimension) - self.skill(model_b, dimension) + quality_a - quality_b
            + self.position_bias + self.length_bias * (words_a - words_b) / 10.0
        )
        return _sigmoid(logit)

    # -- the Judge protocol ------------------------------------------------------

    def judge_pairs(self, requests: Sequence[PairJudgeRequest]) -> list[PairJudgement]:
        """Judge every request; same order, one judgement each (failures included)."""
        return judge_with_repair(requests, judge_name=self.name, ask=self._ask, repair=self._repair)

    def _ask(self, requests: Sequence[PairJudgeRequest], on_reply: ReplyHook) -> list[Reply]:
        replies: list[Reply] = []
        # one generator re-seeded for each draw (_reseeded): a seed's text is str(seed), the request's key, the
        # purpose and the retry joined by "\x1f", as _draws joins them
        prefix = str(self.seed) + "\x1f"
        # made unseeded (Random's __init__ would seed each from its argument, as dear as a draw's seeding)
        verdict_rng, format_rng = random.Random.__new__(random.Random), random.Random.__new__(random.Random)
        malformed_rate = self.malformed_rate
        for request in requests:
            key = request.key
            payload, storable = self._verdict_payload(request, _reseeded(verdict_rng, prefix + key + "\x1fverdict"))
            retry = "\x1f" + str(request.retry)
            if _reseeded(format_rng, prefix + key + "\x1fformat" + retry).random() < malformed_rate:
                text = _ENCODER.encode(payload)
                replies.append(ChatResult(text=self._break(text, _reseeded(format_rng, prefix + key + "\x1fbreak" + retry)),
                                          model=self.name, attempts=1))
            else:
                replies.append(self._reply(payload, storable))
        return replies

    def _repair(self, batch: Sequence[tuple[PairJudgeRequest, str, list[str]]]) -> list[Reply]:
        replies: list[Reply] = []
        for request, _raw, _problems in batch:
            payload, storable = self._verdict_payload(request)
            if _draws(self.seed, request.key, "repair", request.retry).random() < self.malformed_rate:
                text = _ENCODER.encode(payload)
                replies.append(ChatResult(
                    text=self._break(text, _draws(self.seed, request.key, "repair-break", request.retry)),
                    model=self.name, attempts=1))
            else:
                replies.append(self._reply(payload, storable))
        return replies

    def _reply(self, payload: dict, storable: bool) -> ChatResult:
        """An unbroken reply: it hands over the object its text encodes (:class:`~engine.judge.repair.EncodedReply`,
        validated without reading the text back, and its text written only if read) unless the text holds what a
        strict read refuses (a NUL or a lone surrogate quoted from a response), which is then read, and refused,
        from the text as before."""
        if storable:
            return EncodedReply(text=None, model=self.name, attempts=1, payload=payload, encode=_ENCODER.encode)
        return ChatResult(text=_ENCODER.encode(payload), model=self.name, attempts=1)

    # -- reply text ------------------------------------------------------------------

    def _shown(self, candidate: Candidate, inspected: InspectedField) -> tuple[int, str | None, bool]:
        """What a verdict reads of one shown side: the words in its inspected field, its evidence (the first
        ``_EVIDENCE_WORDS`` of them, None if it has none) and whether that evidence is :func:`_storable_encoded`;
        worked out once per candidate and field (a chunk shows each response in dozens of calls, and candidates
        are frozen). Kept by identity with the candidate itself, so an id is never another object's."""
        found = self._shown_memo.get((id(candidate), inspected))
        if found is not None and found[0] is candidate:
            return found[1]
        words = candidate.field_text(inspected).split()
        evidence = " ".join(words[:_EVIDENCE_WORDS]) or None
        shown = (len(words), evidence, _storable_encoded(evidence or ""))
        if len(self._shown_memo) >= _MEMO_LIMIT:
            self._shown_memo.clear()
        self._shown_memo[(id(candidate), inspected)] = (candidate, shown)
        return shown

    def _items(self, checklist: Checklist, dimension: Dimension) -> tuple[tuple[tuple[int, str, str], ...], bool]:
        """Each checklist item's index, text and rationale as a verdict writes them, and whether the dimension's
        name, the items' texts and slots are all :func:`_storable_encoded`; once per checklist (frozen), kept by
        identity with it as :meth:`_shown`."""
        found = self._items_memo.get(id(checklist))
        if found is not None and found[0] is checklist and found[1] is dimension:
            return found[2]
        strings = [str(dimension)]
        rows = []
        for item in checklist.items:
            strings += (item.text, f"{item.slot}")
            rows.append((item.index, item.text, f"Simulated item outcome ({item.slot})."))
        made = (tuple(rows), all(map(_storable_encoded, strings)))
        if len(self._items_memo) >= _MEMO_LIMIT:
            self._items_memo.clear()
        self._items_memo[id(checklist)] = (checklist, dimension, made)
        return made

    def _verdict_payload(self, request: PairJudgeRequest, rng: random.Random | None = None) -> tuple[dict, bool]:
        """The JSON object the reply's text encodes (``_ENCODER``), and whether that text is
        :func:`~engine.strict_json.storable_text` (:func:`_storable_encoded` of its every string: the others are
        this method's own ASCII words and numbers), told without writing it. Whether the strings' text is storable
        is that of each string on its own (:meth:`_shown`, :meth:`_items`): every check of
        :func:`_storable_encoded` looks at one character, or at a backslash and the ``u`` after it, which a
        line break between two strings keeps apart (this judge once checked them joined by line breaks).
        ``rng`` is the verdict's generator, seeded as ``_draws(seed, key, "verdict")`` (made so when not given)."""
        if rng is None:
            rng = _draws(self.seed, request.key, "verdict")
        dimension = request.dimension
        inspected = DIMENSION_FIELD[dimension]
        a, b = request.a, request.b
        words_a, evidence_a, storable_a = self._shown(a, inspected)
        words_b, evidence_b, storable_b = self._shown(b, inspected)
        p_a = self._preference(request, words_a, words_b)
        draw = rng.random
        if draw() < self.tie_rate:
            winner = Winner.TIE
            confidence = round(0.5 + 0.4 * (1.0 - abs(2.0 * p_a - 1.0)) * draw(), 2)
        else:
            winner = Winner.A if draw() < p_a else Winner.B
            confidence = round(0.5 + abs(p_a - 0.5), 2)
        rows, storable_items = self._items(request.checklist, dimension)
        others = _OTHER_WINNERS[winner]
        winner_text, agreement, choice = WINNER_TEXT[winner], self.item_agreement, rng.choice
        # per item, as before: agreement's draw, a disagreeing item's choice, then its confidence's uniform draw
        outcomes = [
            {
                "item_index": index,
                "item": text,
                "winner": winner_text if draw() < agreement else WINNER_TEXT[choice(others)],
                "confidence": round(0.5 + _ITEM_CONFIDENCE_SPAN * draw(), 2),
                "evidence_a": evidence_a,
                "evidence_b": evidence_b,
                "rationale": rationale,
            }
            for index, text, rationale in rows
        ]
        payload = {
            "dimension": str(dimension),
            "winner": winner_text,
            "confidence": confidence,
            "overall_rationale": (
                f"Simulated judgment: P(A preferred | decisive) = {p_a:.2f} from latent skills, "
                "position bias and length bias."
            ),
            "per_item_outcomes": outcomes,
        }
        return payload, storable_a and storable_b and storable_items


    @staticmethod
    def _break(text: str, rng: random.Random) -> str:
        """A malformed variant of a valid reply, of the kinds real judges produce."""
        variant = rng.randrange(3)
        if variant == 0:
            return text[: max(1, int(len(text) * rng.uniform(0.3, 0.9)))]  # truncated
        if variant == 1:
            return "Here is my evaluation:\n" + text  # prose around the JSON
        return text.replace('"winner": ', '"winner": "Response ', 1).replace('"Response "', '"Response ', 1)
