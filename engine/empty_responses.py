"""Pairs with an empty response are decided without the judge (Ekphrasis App. F.2).

A missing or whitespace-only response loses to any non-empty one with confidence 1.0, and two empty
responses tie; such records enter the Bradley–Terry fit (:mod:`engine.bt`) like the judge's, so a model
that answers nothing is ranked last rather than left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["AutomaticOutcome", "EMPTY_RESPONSE_CONFIDENCE", "is_empty_response", "empty_response_outcome"]

#: Confidence of the automatic record for a non-empty vs empty response (Ekphrasis App. F.2).
EMPTY_RESPONSE_CONFIDENCE = 1.0


@dataclass(frozen=True)
class AutomaticOutcome:
    """An automatically generated comparison outcome (Ekphrasis App. F.2)."""

    winner: Literal["A", "B", "tie"]
    confidence: float
    reason: str = field(default="empty response")


def is_empty_response(text: str | None) -> bool:
    """True when a response is missing or only whitespace."""
    return text is None or not str(text).strip()


def empty_response_outcome(response_a: str | None, response_b: str | None) -> AutomaticOutcome | None:
    """The automatic record for a pair involving an empty response (Ekphrasis App. F.2).

    A non-empty response beats an empty one with confidence 1.0; two empty responses tie. Returns
    None when both responses are non-empty (the pair must go to the judge).
    """
    a_empty, b_empty = is_empty_response(response_a), is_empty_response(response_b)
    if a_empty and b_empty:
        return AutomaticOutcome(winner="tie", confidence=EMPTY_RESPONSE_CONFIDENCE, reason="both responses empty")
    if a_empty:
        return AutomaticOutcome(winner="B", confidence=EMPTY_RESPONSE_CONFIDENCE, reason="response A empty")
    if b_empty:
        return AutomaticOutcome(winner="A", confidence=EMPTY_RESPONSE_CONFIDENCE, reason="response B empty")
    return None
