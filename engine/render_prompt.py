"""The rendering prompt of a visual plan, for the cross-modal grounding subset (Ekphrasis App. I.1).

App. I.1: "Each textual visual plan is converted into a rendering prompt and passed to a fixed
text-to-image system with one seed [...] The rendering prompt is constructed from the Core Idea and
Visual Description, with no model identity and no evaluation score exposed."

So the prompt is a function of those two fields and nothing else: no model name, task id, brief,
sample index or score can reach it, because none is a parameter. Every renderer (the offline
schematic stand-in included) uses this one wording, so that renders of the same plan by different
systems were asked for the same thing. Plain Python, no I/O.
"""

from __future__ import annotations

__all__ = ["rendering_prompt"]


def rendering_prompt(core_idea: str, visual_description: str) -> str:
    """The text-to-image prompt of a plan: its Core Idea and Visual Description, labelled, nothing else.

    Surrounding whitespace of each field is dropped; the text itself is passed on unchanged
    (a renderer should see the plan as the model wrote it). Deciding whether a plan is complete
    enough to render is the caller's business: this function only formats.
    """
    # Ekphrasis App. I.1: built from the Core Idea and Visual Description only (no identity, no score).
    return f"Core idea: {core_idea.strip()}\nVisual description: {visual_description.strip()}"
