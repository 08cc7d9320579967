"""Deterministic splitter of a raw answer into Core Idea and Visual Description.

Ekphrasis asks for two labelled blocks (App. A, "unified output format"):
a one-sentence *Core Idea* and a 100–140-word *Visual Description*. Models
decorate the labels in a handful of common ways — markdown bold or italics,
headings, numbering, a dash or colon after the label — and this parser
accepts those. Anything it cannot split cleanly is returned unsplit and
flagged, to be handed to the LLM splitter of App. C.3; the parser never
guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SplitPlan", "compose_two_field_text", "split_visual_plan", "word_count"]

# One label line: optional heading hashes / numbering / bullet, optional
# emphasis, the label, optional emphasis, then a separator (":", "-", "—")
# or the end of the line (a heading on its own line).
_DECOR = r"[#>*_\s]*(?:\(?\d+[.)]\s*|[-•]\s+)?[*_]*\s*"
_SEP = r"\s*[*_]*\s*(?:[:：\-–—]\s*[*_]*|$)"
_CORE = re.compile(rf"(?im)^{_DECOR}core[\s_-]*idea{_SEP}")
_VISUAL = re.compile(rf"(?im)^{_DECOR}visual[\s_-]*description{_SEP}")
_EDGE_DECOR = re.compile(r"^[\s*_#>]+|[\s*_#>]+$")


@dataclass(frozen=True)
class SplitPlan:
    """Result of the deterministic split; ``ok`` is False when the LLM splitter must take over."""

    core_idea: str
    visual_description: str
    ok: bool
    reason: str = ""


def _clean(block: str) -> str:
    block = _EDGE_DECOR.sub("", block.strip())
    # Collapse internal runs of whitespace but keep the wording intact.
    return re.sub(r"\s+", " ", block).strip()


def split_visual_plan(text: str) -> SplitPlan:
    """Split ``text`` into its two labelled blocks, or say why it cannot."""
    if not text or not text.strip():
        return SplitPlan("", "", ok=False, reason="empty answer")
    cores = list(_CORE.finditer(text))
    visuals = list(_VISUAL.finditer(text))
    if not cores:
        return SplitPlan("", "", ok=False, reason="no 'Core Idea' label")
    if not visuals:
        return SplitPlan("", "", ok=False, reason="no 'Visual Description' label")
    if len(cores) > 1 or len(visuals) > 1:
        return SplitPlan("", "", ok=False, reason="a label appears more than once")
    core, visual = cores[0], visuals[0]
    if core.start() < visual.start():
        core_text = text[core.end() : visual.start()]
        visual_text = text[visual.end() :]
    else:
        visual_text = text[visual.end() : core.start()]
        core_text = text[core.end() :]
    core_idea, visual_description = _clean(core_text), _clean(visual_text)
    if not core_idea or not visual_description:
        return SplitPlan("", "", ok=False, reason="a labelled block is empty")
    return SplitPlan(core_idea, visual_description, ok=True)


def word_count(text: str) -> int:
    """Whitespace-delimited words, the length unit of App. C.4."""
    return len(text.split())


def compose_two_field_text(core_idea: str, visual_description: str) -> str:
    """The canonical raw text of an answer given as two fields (App. A output format)."""
    return f"Core Idea: {core_idea}\nVisual Description: {visual_description}"
