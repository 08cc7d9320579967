"""The rendering prompt holds the Core Idea and Visual Description and nothing else (Ekphrasis App. I.1)."""

from __future__ import annotations

import inspect

from engine.render_prompt import rendering_prompt
from engine.schematic_render import schematic_prompt

CORE = "A lighthouse that keeps time by shedding its bricks."
VISUAL = "A brick lighthouse at dawn, a spiral of fallen bricks marking the hours around its base."


def test_it_labels_the_two_fields_in_order():
    assert rendering_prompt(CORE, VISUAL) == f"Core idea: {CORE}\nVisual description: {VISUAL}"


def test_surrounding_whitespace_is_dropped_but_the_text_is_kept_verbatim():
    prompt = rendering_prompt(f"  {CORE}\n", f"\t{VISUAL}  \n\n")
    assert prompt == f"Core idea: {CORE}\nVisual description: {VISUAL}"
    assert rendering_prompt("a  b", "c\nd") == "Core idea: a  b\nVisual description: c\nd"


def test_the_prompt_can_carry_nothing_but_the_two_fields():
    # No model, task, sample or score parameter exists to leak (App. I.1).
    assert list(inspect.signature(rendering_prompt).parameters) == ["core_idea", "visual_description"]
    prompt = rendering_prompt(CORE, VISUAL)
    assert prompt.replace(CORE, "").replace(VISUAL, "") == "Core idea: \nVisual description: "


def test_the_schematic_stand_in_asks_for_the_same_thing():
    assert schematic_prompt(core_idea=CORE, visual_description=VISUAL) == rendering_prompt(CORE, VISUAL)
