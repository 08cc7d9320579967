import pytest

from engine.visual_plan import split_visual_plan

CORE = "A subway map whose stations collapse into missed deadlines."
VISUAL = "A pale transit map fills the frame; red lines fray into loose threads near the bottom edge."


@pytest.mark.parametrize(
    "text",
    [
        f"Core Idea: {CORE}\nVisual Description: {VISUAL}",
        f"**Core Idea:** {CORE}\n\n**Visual Description:** {VISUAL}",
        f"## Core Idea\n{CORE}\n\n## Visual Description\n{VISUAL}",
        f"1. Core Idea: {CORE}\n2. Visual Description: {VISUAL}",
        f"Core idea - {CORE}\nVisual description - {VISUAL}",
        f"**Core Idea**: {CORE}\n**Visual Description**: {VISUAL}",
        f"### **Core Idea**\n{CORE}\n### **Visual Description**\n{VISUAL}",
        f"- Core Idea: {CORE}\n- Visual Description: {VISUAL}",
    ],
)
def test_split_accepts_common_label_variants(text):
    plan = split_visual_plan(text)
    assert plan.ok, plan.reason
    assert plan.core_idea == CORE
    assert plan.visual_description == VISUAL


def test_split_handles_blocks_in_reverse_order():
    plan = split_visual_plan(f"Visual Description: {VISUAL}\nCore Idea: {CORE}")
    assert (plan.core_idea, plan.visual_description) == (CORE, VISUAL)


def test_split_flags_an_answer_without_labels():
    plan = split_visual_plan(f"{CORE} {VISUAL}")
    assert not plan.ok and "Core Idea" in plan.reason


def test_split_flags_an_answer_with_only_one_label():
    plan = split_visual_plan(f"Core Idea: {CORE}\n{VISUAL}")
    assert not plan.ok and "Visual Description" in plan.reason


def test_split_flags_repeated_labels_instead_of_guessing():
    plan = split_visual_plan(f"Core Idea: {CORE}\nCore Idea: again\nVisual Description: {VISUAL}")
    assert not plan.ok


def test_split_does_not_treat_label_words_inside_a_sentence_as_a_label():
    text = f"Core Idea: The core idea: {CORE}\nVisual Description: {VISUAL}"
    plan = split_visual_plan(text)
    assert plan.ok and plan.core_idea.startswith("The core idea:")


def test_split_flags_empty_answer():
    assert not split_visual_plan("   ").ok
