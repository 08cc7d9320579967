"""Strict validation of the judge's JSON (Ekphrasis App. E, "Judge output schema").

A valid reply is one JSON object (see :mod:`engine.providers.json_reply` for
the only wrapping allowed) with

* ``dimension`` — the requested dimension;
* ``winner`` — ``"A"``, ``"B"`` or ``"tie"``;
* ``confidence`` — a number in [0, 1];
* ``overall_rationale`` — a non-empty string;
* ``per_item_outcomes`` — exactly one object per checklist item, with
  ``item_index`` covering 1..n once each, ``item`` (string), ``winner``,
  ``confidence``, ``evidence_a`` and ``evidence_b`` (string or null) and
  ``rationale`` (string).

Case is forgiven in enumerations (``"a"``, ``"Tie"``); types are not (a
confidence of ``"0.8"`` or ``true`` is invalid). Extra keys are ignored. Every
problem found is reported, so the repair prompt can name them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.checklists import Dimension
from engine.judge.comparison import ItemOutcome, Winner
from engine.providers.json_reply import MalformedReply, parse_json_object

__all__ = ["JudgeReply", "JudgeSchemaError", "validate_judge_payload", "validate_judge_reply"]

_WINNERS = {"a": Winner.A, "b": Winner.B, "tie": Winner.TIE}


class JudgeSchemaError(ValueError):
    """The reply is not valid; ``problems`` lists every violation."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class JudgeReply:
    """A validated judge reply."""

    winner: Winner
    confidence: float
    overall_rationale: str
    per_item_outcomes: tuple[ItemOutcome, ...]


def _winner(value: Any, where: str, problems: list[str]) -> Winner | None:
    if isinstance(value, str) and value.strip().lower() in _WINNERS:
        return _WINNERS[value.strip().lower()]
    problems.append(f'{where} must be "A", "B" or "tie"')
    return None


def _confidence(value: Any, where: str, problems: list[str]) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        problems.append(f"{where} must be a number from 0 to 1")
        return None
    if not 0.0 <= float(value) <= 1.0:
        problems.append(f"{where} must be between 0 and 1, got {value}")
        return None
    # -0.0 read as 0.0 (x + 0.0 is x for every other float): PostgreSQL stores a verdict's confidence through a
    # jsonb document, whose numeric has no negative zero, and SQLite would keep the sign: the same reply would be
    # stored as different bits on the two databases
    return float(value) + 0.0


def _text(
    value: Any, where: str, problems: list[str], *, nullable: bool = False, required: bool = False
) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        problems.append(f"{where} must be a string{' or null' if nullable else ''}")
        return None
    if required and not value.strip():
        problems.append(f"{where} must not be empty")
        return None
    return value.strip()


def validate_judge_reply(text: str | None, *, dimension: Dimension, item_count: int) -> JudgeReply:
    """Validate a raw judge reply; raises :class:`JudgeSchemaError` listing every problem."""
    try:
        payload = parse_json_object(text)
    except MalformedReply as exc:
        raise JudgeSchemaError([str(exc)]) from None
    return validate_judge_payload(payload, dimension=dimension, item_count=item_count)


def validate_judge_payload(payload: dict[str, Any], *, dimension: Dimension, item_count: int) -> JudgeReply:
    """Validate a reply already read into its JSON object (what :func:`validate_judge_reply` does after reading
    the text); raises :class:`JudgeSchemaError` listing every problem."""
    plain = _plain_reply(payload, dimension, item_count)
    return plain if plain is not None else _checked_reply(payload, dimension, item_count)


_REPLY_KEYS = frozenset(("dimension", "winner", "confidence", "overall_rationale", "per_item_outcomes"))
_ITEM_KEYS = frozenset(("item_index", "item", "winner", "confidence", "evidence_a", "evidence_b", "rationale"))


def _plain_number(value: Any) -> float | None:
    """``value`` as :func:`_confidence` accepts it, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        return None
    return float(value) + 0.0  # -0.0 as 0.0, as _confidence reads it


def _plain_reply(payload: dict[str, Any], dimension: Dimension, item_count: int) -> JudgeReply | None:
    """The reply of a payload that passes every check of :func:`_checked_reply`, read with the same rules;
    None as soon as any check would fail, and :func:`_checked_reply` then names every problem.

    Why: almost every reply is valid, and the full checks build each field's name for a message
    (``per_item_outcomes[2].evidence_a``) before knowing there is a problem, six strings and five calls an
    item, more than the rest of reading a reply. This accepts nothing :func:`_checked_reply` refuses and
    returns the same reply (``tests/engine/judge/test_schema.py`` compares the two on mutated replies)."""
    if not payload.keys() >= _REPLY_KEYS:
        return None
    if str(payload["dimension"]).strip().lower() != dimension.value:
        return None
    winner = payload["winner"]
    winner = _WINNERS.get(winner.strip().lower()) if isinstance(winner, str) else None
    confidence = _plain_number(payload["confidence"])
    rationale = payload["overall_rationale"]
    rationale = rationale.strip() if isinstance(rationale, str) else ""
    raw_items = payload["per_item_outcomes"]
    if winner is None or confidence is None or not rationale or not isinstance(raw_items, list) \
            or len(raw_items) != item_count:
        return None
    outcomes: list[ItemOutcome] = []
    seen: set[int] = set()
    for entry in raw_items:
        if not isinstance(entry, dict) or not entry.keys() >= _ITEM_KEYS:
            return None
        index, item, item_winner = entry["item_index"], entry["item"], entry["winner"]
        evidence_a, evidence_b, item_rationale = entry["evidence_a"], entry["evidence_b"], entry["rationale"]
        if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= item_count or index in seen:
            return None
        seen.add(index)
        item_winner = _WINNERS.get(item_winner.strip().lower()) if isinstance(item_winner, str) else None
        item_confidence = entry["confidence"]
        # a float in range is its own float(): the judges' usual value, told without the call (a zero, which may
        # be -0.0, goes through _plain_number, which drops its sign)
        if type(item_confidence) is not float or not 0.0 < item_confidence <= 1.0:
            item_confidence = _plain_number(item_confidence)
        if (item_winner is None or item_confidence is None or not isinstance(item, str)
                or not isinstance(item_rationale, str) or not (evidence_a is None or isinstance(evidence_a, str))
                or not (evidence_b is None or isinstance(evidence_b, str))):
            return None
        outcome = _new_outcome(ItemOutcome)
        fields = outcome.__dict__
        fields["item_index"] = index
        fields["item"] = item.strip()
        fields["winner"] = item_winner
        fields["confidence"] = item_confidence
        fields["evidence_a"] = (evidence_a and evidence_a.strip()) or None
        fields["evidence_b"] = (evidence_b and evidence_b.strip()) or None
        fields["rationale"] = item_rationale.strip()
        outcomes.append(outcome)
    outcomes.sort(key=_item_index)
    return JudgeReply(winner=winner, confidence=confidence, overall_rationale=rationale, per_item_outcomes=tuple(outcomes))


#: An :class:`ItemOutcome` made with its fields written into its ``__dict__`` (:func:`_plain_reply`), as the frozen
#: dataclass's ``__init__`` writes them, one ``object.__setattr__`` call each: that ``__init__`` was half of reading a
#: valid reply (seven outcomes a reply). The class has no ``__post_init__``, no default and no slots, so the object is
#: the one its constructor makes (``tests/engine/judge/test_schema.py`` compares the two, field by field).
_new_outcome = object.__new__


def _item_index(outcome: ItemOutcome) -> int:
    return outcome.item_index


def _checked_reply(payload: dict[str, Any], dimension: Dimension, item_count: int) -> JudgeReply:
    """Every check of the schema on a parsed reply; raises :class:`JudgeSchemaError` listing every problem."""
    problems: list[str] = []

    for required in ("dimension", "winner", "confidence", "overall_rationale", "per_item_outcomes"):
        if required not in payload:
            problems.append(f"missing key {required!r}")
    if "dimension" in payload and str(payload["dimension"]).strip().lower() != dimension.value:
        problems.append(f'dimension must be "{dimension.value}"')
    winner = _winner(payload.get("winner"), "winner", problems) if "winner" in payload else None
    confidence = (
        _confidence(payload.get("confidence"), "confidence", problems) if "confidence" in payload else None
    )
    rationale = (
        _text(payload.get("overall_rationale"), "overall_rationale", problems, required=True)
        if "overall_rationale" in payload
        else None
    )

    outcomes: list[ItemOutcome] = []
    raw_items = payload.get("per_item_outcomes")
    if "per_item_outcomes" in payload:
        if not isinstance(raw_items, list):
            problems.append("per_item_outcomes must be a list")
        else:
            if len(raw_items) != item_count:
                problems.append(
                    f"per_item_outcomes must have exactly {item_count} entries, got {len(raw_items)}"
                )
            seen: set[int] = set()
            for position, entry in enumerate(raw_items, start=1):
                where = f"per_item_outcomes[{position}]"
                if not isinstance(entry, dict):
                    problems.append(f"{where} must be an object")
                    continue
                missing = [
                    key
                    for key in (
                        "item_index",
                        "item",
                        "winner",
                        "confidence",
                        "evidence_a",
                        "evidence_b",
                        "rationale",
                    )
                    if key not in entry
                ]
                if missing:
                    problems.append(f"{where} is missing {', '.join(missing)}")
                    continue
                index = entry["item_index"]
                if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= item_count:
                    problems.append(f"{where}.item_index must be an integer from 1 to {item_count}")
                    continue
                if index in seen:
                    problems.append(f"{where}.item_index {index} appears twice")
                    continue
                seen.add(index)
                item = _text(entry["item"], f"{where}.item", problems)
                item_winner = _winner(entry["winner"], f"{where}.winner", problems)
                item_confidence = _confidence(entry["confidence"], f"{where}.confidence", problems)
                evidence_a = _text(entry["evidence_a"], f"{where}.evidence_a", problems, nullable=True)
                evidence_b = _text(entry["evidence_b"], f"{where}.evidence_b", problems, nullable=True)
                item_rationale = _text(entry["rationale"], f"{where}.rationale", problems)
                if item is None or item_winner is None or item_confidence is None or item_rationale is None:
                    continue
                outcomes.append(
                    ItemOutcome(
                        item_index=index,
                        item=item,
                        winner=item_winner,
                        confidence=item_confidence,
                        evidence_a=evidence_a or None,
                        evidence_b=evidence_b or None,
                        rationale=item_rationale,
                    )
                )

    if problems:
        raise JudgeSchemaError(problems)
    assert winner is not None and confidence is not None and rationale is not None
    return JudgeReply(
        winner=winner,
        confidence=confidence,
        overall_rationale=rationale,
        per_item_outcomes=tuple(sorted(outcomes, key=lambda outcome: outcome.item_index)),
    )
