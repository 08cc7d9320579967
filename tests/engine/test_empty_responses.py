"""Tests for engine.empty_responses — the automatic records of Ekphrasis App. F.2."""

from __future__ import annotations

import pytest

from engine.empty_responses import empty_response_outcome, is_empty_response


@pytest.mark.parametrize(
    ("a", "b", "winner"),
    [("", "a plan", "B"), ("a plan", "   ", "A"), (None, "", "tie"), ("", None, "tie")],
)
def test_empty_response_gets_an_automatic_record_with_confidence_one(a, b, winner):
    outcome = empty_response_outcome(a, b)
    assert outcome is not None and outcome.winner == winner and outcome.confidence == 1.0


def test_two_non_empty_responses_get_no_automatic_record():
    assert empty_response_outcome("plan a", "plan b") is None


@pytest.mark.parametrize(("text", "empty"), [(None, True), ("", True), (" \n\t ", True), ("\u3000", True), ("a", False)])
def test_a_response_is_empty_when_missing_or_only_whitespace(text, empty):
    assert is_empty_response(text) is empty
