"""The pairwise comparison contract shared by every judge backend (Ekphrasis §4.1, App. E, App. F.2).

A :class:`PairJudgeRequest` is one comparison: a run, a task, a dimension, its
checklist, Response A and Response B in the order they are shown, the kind of
comparison and a repeat number. Its :attr:`~PairJudgeRequest.key` is the
comparison identity (run, task, dimension, pair, kind, repeat) the site uses
for idempotency. Candidates carry model identities, used only for bookkeeping
and by the simulated judge; no judge prompt ever contains them.

A :class:`PairJudgement` is the outcome: winner A/B/tie with confidence,
rationale and per-item outcomes (the App. E schema), whether the JSON was
repaired, or a failure with its error — never silently dropped.

:class:`Judge` is the protocol every backend implements::

    judge.judge_pairs(requests: list[PairJudgeRequest]) -> list[PairJudgement]   # same order

Empty responses are not sent to any judge (App. F.2): a non-empty inspected
field beats an empty one with confidence 1.0, two empty fields tie
(:func:`automatic_judgement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Protocol, runtime_checkable

from engine.checklists import DIMENSION_FIELD, Checklist, Dimension, InspectedField
from engine.generation import TaskBrief

__all__ = [
    "Candidate",
    "ComparisonKind",
    "ItemOutcome",
    "Judge",
    "PairJudgeRequest",
    "PairJudgement",
    "Winner",
    "automatic_judgement",
    "comparison_key",
    "pair_key",
]


class ComparisonKind(StrEnum):
    """Why a comparison was made (App. D, Table 9)."""

    PRIMARY = "primary"
    SWAP = "swap"
    DUPLICATE = "duplicate"
    AUXILIARY = "auxiliary"


class Winner(StrEnum):
    A = "A"
    B = "B"
    TIE = "tie"


#: Each winner's stored text (its value), looked up once: a verdict writes one per checklist item, and the
#: enum member's ``value`` is a property lookup each time.
WINNER_TEXT = {winner: winner.value for winner in Winner}


def pair_key(first_model: str, second_model: str) -> tuple[str, str]:
    """The unordered model pair, as a sorted tuple."""
    if first_model == second_model:
        raise ValueError(f"a pair needs two different models, got {first_model!r} twice")
    low, high = sorted((first_model, second_model))
    return low, high


def comparison_key(
    run_id: str,
    task_id: str,
    dimension: Dimension | str,
    pair: tuple[str, str],
    kind: ComparisonKind | str,
    repeat: int,
) -> str:
    """The comparison identity of the issue: run, task, dimension, pair, kind, repeat."""
    low, high = pair_key(*pair)
    return "|".join(
        [
            str(run_id),
            str(task_id),
            Dimension(dimension).value,
            low,
            high,
            ComparisonKind(kind).value,
            str(repeat),
        ]
    )


@dataclass(frozen=True)
class Candidate:
    """One side of a comparison: a normalised response and the model that wrote it."""

    model: str
    response_id: str
    core_idea: str | None
    visual_description: str | None

    def field_text(self, inspected: InspectedField) -> str:
        value = self.core_idea if inspected is InspectedField.CORE_IDEA else self.visual_description
        return (value or "").strip()


@dataclass(frozen=True)
class PairJudgeRequest:
    """One comparison to judge. ``a`` is shown as Response A, ``b`` as Response B.

    ``repeat`` numbers comparisons of the same kind and pair (duplicates,
    several auxiliary judges, re-selected primaries). ``retry`` counts
    re-submissions after a failed judgement: a retry re-sends instead of
    reading the request cache.
    """

    run_id: str
    task: TaskBrief
    dimension: Dimension
    checklist: Checklist
    a: Candidate
    b: Candidate
    kind: ComparisonKind = ComparisonKind.PRIMARY
    repeat: int = 0
    retry: int = 0

    def __post_init__(self) -> None:
        if type(self.dimension) is not Dimension:  # the enum's call costs more than the rest of the request
            object.__setattr__(self, "dimension", Dimension(self.dimension))
        if type(self.kind) is not ComparisonKind:
            object.__setattr__(self, "kind", ComparisonKind(self.kind))
        if self.checklist.dimension is not self.dimension:
            raise ValueError(f"a {self.checklist.dimension} checklist cannot judge {self.dimension}")
        pair_key(self.a.model, self.b.model)

    @property
    def pair(self) -> tuple[str, str]:
        return pair_key(self.a.model, self.b.model)

    @cached_property
    def key(self) -> str:
        """The comparison identity (:func:`comparison_key`), built once: a judge reads it for each of its seeded
        draws and the site again for the judgement (the request is frozen, so it cannot change)."""
        return comparison_key(
            self.run_id, self.task.task_id, self.dimension, self.pair, self.kind, self.repeat
        )

    @property
    def inspected_field(self) -> InspectedField:
        return DIMENSION_FIELD[self.dimension]


@dataclass(frozen=True)
class ItemOutcome:
    """The judge's verdict on one checklist item."""

    item_index: int
    item: str
    winner: Winner
    confidence: float
    evidence_a: str | None
    evidence_b: str | None
    rationale: str


class _ReplyText:
    """A judgement's ``raw_output`` or ``repair_output``: given as the text, or as the reply itself, whose text is
    read the first time the field is (an :class:`~engine.judge.repair.EncodedReply` writes its text only then: a
    judge run stores the verdict, not the text, and writing it was a second JSON encoding of every outcome)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, judgement, owner=None):
        if judgement is None:
            return None  # the field's default (a dataclass reads it from the class)
        value = judgement.__dict__[self.slot]
        if value is None or isinstance(value, str):
            return value
        text = judgement.__dict__[self.slot] = value.text
        return text

    def __set__(self, judgement, value) -> None:
        judgement.__dict__[self.slot] = value


@dataclass(frozen=True)
class PairJudgement:
    """The outcome of one comparison. ``ok`` is False for a failed call; ``winner`` is then None."""

    request: PairJudgeRequest
    judge_name: str
    ok: bool
    winner: Winner | None = None
    confidence: float | None = None
    overall_rationale: str | None = None
    per_item_outcomes: tuple[ItemOutcome, ...] = ()
    repaired: bool = False
    automatic: bool = False
    calls: int = 0
    cached: bool = False
    raw_output: str | None = _ReplyText()  # type: ignore[assignment]
    repair_output: str | None = _ReplyText()  # type: ignore[assignment]
    error: str | None = None
    # The provider did not answer after its retries (5xx, timeouts, refused connections): an outage,
    # not a judgement of this pair; the run stops resumable rather than recording the call as failed.
    provider_unreachable: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def key(self) -> str:
        return self.request.key

    @property
    def winner_model(self) -> str | None:
        """The preferred model's id; None for a tie or a failure."""
        if self.winner is Winner.A:
            return self.request.a.model
        if self.winner is Winner.B:
            return self.request.b.model
        return None

    @property
    def score_a(self) -> float | None:
        """y of §4.1 from A's side: 1 (A preferred), 0.5 (tie), 0 (B preferred); None for a failure."""
        return {Winner.A: 1.0, Winner.TIE: 0.5, Winner.B: 0.0}.get(self.winner) if self.winner else None


@runtime_checkable
class Judge(Protocol):
    """A judge backend: the LLM judge, the simulated judge, or any other."""

    name: str

    def judge_pairs(self, requests: Sequence[PairJudgeRequest]) -> list[PairJudgement]: ...


def automatic_judgement(request: PairJudgeRequest, judge_name: str) -> PairJudgement | None:
    """The App. F.2 record for an empty inspected field, or None when both sides have text."""
    inspected = request.inspected_field
    empty_a = not request.a.field_text(inspected)
    empty_b = not request.b.field_text(inspected)
    if not (empty_a or empty_b):
        return None
    if empty_a and empty_b:
        winner, confidence, why = Winner.TIE, 1.0, f"Both responses have an empty {inspected.label}."
    elif empty_b:
        winner, confidence, why = Winner.A, 1.0, f"Response B has an empty {inspected.label}."
    else:
        winner, confidence, why = Winner.B, 1.0, f"Response A has an empty {inspected.label}."
    return PairJudgement(
        request=request,
        judge_name=judge_name,
        ok=True,
        winner=winner,
        confidence=confidence,
        overall_rationale=why,
        automatic=True,
    )
