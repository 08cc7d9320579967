"""Generation templates and the strict confidence parser (c2-eval.txt §3.2.1, §4.2.3)."""

from __future__ import annotations

import pytest

from engine.c2.prompts import (
    CONFIDENCE_PROMPT,
    TEMPLATES,
    confidence_messages,
    generation_messages,
    parse_confidence,
)
from engine.c2.tasks import C2TaskType


def test_every_task_type_has_a_standard_and_a_creative_template() -> None:
    for task_type in C2TaskType:
        standard, creative = TEMPLATES[(task_type, "standard")], TEMPLATES[(task_type, "creative")]
        assert "{prompt}" in standard and "{prompt}" in creative
        assert standard != creative and "creative" in creative.lower()


def test_text_task_sends_one_user_turn_with_the_item() -> None:
    messages = generation_messages("qa", "standard", "Who wrote Hamlet?")
    assert messages == [{"role": "user", "content": TEMPLATES[(C2TaskType.QA, "standard")].format(prompt="Who wrote Hamlet?")}]


def test_code_task_appends_the_starter_code() -> None:
    content = generation_messages("code", "creative", "Add two numbers.", starter_code="class Solution:\n    pass")[0]["content"]
    assert "class Solution:" in content and content.index("Add two numbers.") < content.index("class Solution:")


def test_visual_task_sends_the_image_as_a_data_url_part() -> None:
    content = generation_messages("vqa", "standard", "What animal?", image_data_url="data:image/png;base64,AAAA")[0]["content"]
    assert content[1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


def test_visual_task_without_image_is_refused() -> None:
    with pytest.raises(ValueError, match="image"):
        generation_messages("visual_story", "standard", "Tell a story.")


def test_confidence_is_asked_in_the_same_conversation() -> None:
    first = generation_messages("qa", "standard", "Q?")
    follow = confidence_messages(first, "Shakespeare")
    assert follow[:1] == first
    assert follow[1] == {"role": "assistant", "content": "Shakespeare"}
    assert follow[2] == {"role": "user", "content": CONFIDENCE_PROMPT}


@pytest.mark.parametrize(
    ("reply", "value"),
    [("0.85", 0.85), ("Probability: 0.9", 0.9), ("**Confidence:** .7", 0.7), ("80%", 0.8), ("Probability: 1", 1.0), ("0", 0.0)],
)
def test_confidence_parser_reads_one_probability(reply: str, value: float) -> None:
    assert parse_confidence(reply) == pytest.approx(value)


@pytest.mark.parametrize(
    "reply", [None, "", "I am fairly sure.", "0.8 or 0.9", "Probability: 1.5", "150%", "about 0.8, I think", "-0.2"]
)
def test_confidence_parser_never_invents_a_value(reply: str | None) -> None:
    assert parse_confidence(reply) is None
