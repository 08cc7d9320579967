"""The judge prompt: definition, scope, context, checklist, anonymous A/B (App. E)."""

from __future__ import annotations

from engine.checklists import Dimension
from engine.judge.prompt import judge_messages, repair_messages
from tests.engine.judge.conftest import ALICE, BOB


def user_text(request) -> str:
    return judge_messages(request)[1]["content"]


def test_prompt_carries_definition_scope_checklist_and_both_responses(comparison):
    request = comparison(dimension=Dimension.USEFULNESS)
    text = user_text(request)
    assert "Usefulness measures whether the Core Idea" in text
    assert "Do not score novelty" in text
    for item in request.checklist.items:
        assert item.prompt_line() in text
    assert f"Response A — Core Idea:\n{ALICE.core_idea}" in text
    assert f"Response B — Core Idea:\n{BOB.core_idea}" in text


def test_prompt_never_names_a_model(comparison):
    for dimension in Dimension:
        messages = judge_messages(comparison(dimension=dimension))
        flat = " ".join(message["content"] for message in messages)
        assert "alice-model" not in flat and "bob-model" not in flat


def test_expressiveness_shows_only_the_visual_description(comparison):
    text = user_text(comparison(dimension=Dimension.EXPRESSIVENESS))
    assert ALICE.visual_description.strip() in text
    assert ALICE.core_idea not in text


def test_usefulness_and_novelty_show_only_the_core_idea(comparison):
    for dimension in (Dimension.USEFULNESS, Dimension.NOVELTY):
        text = user_text(comparison(dimension=dimension))
        assert ALICE.core_idea in text
        assert "varnished-spruce" not in text


def test_usefulness_gets_the_brief_and_constraints(comparison):
    text = user_text(comparison(dimension=Dimension.USEFULNESS))
    assert "Brief: Fuse a lighthouse and a violin" in text
    assert "- Medium: concert poster" in text


def test_novelty_gets_the_brief_only_as_context(comparison):
    text = user_text(comparison(dimension=Dimension.NOVELTY))
    assert "Brief (context for what would be obvious): Fuse a lighthouse" in text
    assert "concert poster" not in text


def test_expressiveness_gets_the_family_focus_not_the_brief(comparison):
    text = user_text(comparison(dimension=Dimension.EXPRESSIVENESS))
    assert "the fused entity" in text
    assert "Fuse a lighthouse" not in text


def test_prompt_states_the_tie_rule_and_the_schema(comparison):
    text = user_text(comparison(dimension=Dimension.NOVELTY))
    assert "Do not use tie as a substitute for uncertainty" in text
    assert '"per_item_outcomes"' in text
    assert 'dimension "novelty"' in text


def test_swapping_a_and_b_swaps_the_texts_only(comparison):
    forward = user_text(comparison(a=ALICE, b=BOB))
    backward = user_text(comparison(a=BOB, b=ALICE))
    assert (
        forward.replace(ALICE.core_idea, "@")
        .replace(BOB.core_idea, ALICE.core_idea)
        .replace("@", BOB.core_idea)
        == backward
    )


def test_repair_prompt_names_the_problems_and_keeps_the_output(comparison):
    messages = repair_messages(comparison(), '{"winner": "left"', ["not valid JSON"])
    content = messages[1]["content"]
    assert "- not valid JSON" in content
    assert '{"winner": "left"' in content
    assert "do not re-judge" in content
