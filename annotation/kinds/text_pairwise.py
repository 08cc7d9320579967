"""Text pairwise validation: one task, two anonymous responses, one dimension (Ekphrasis App. H).

Usefulness and Novelty inspect the Core Idea, Expressiveness the Visual Description (§3.2,
Table 16); Novelty items also show the task's cliché checklist items. Checklist items are reference
cues, not a score sheet (App. H.2). Label: A, B or tie, plus an optional flag with a note (H.3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotation.choices import CampaignKind, Dimension
from annotation.kinds.base import PairwiseKind, ShownContent, shown_pair, task_context
from annotation.models import Assignment, Item

#: The field each dimension inspects (Ekphrasis §3.2; App. H.2, Table 16 "Primary field").
PRIMARY_FIELD = {
    Dimension.USEFULNESS: ("core_idea", "Core Idea"),
    Dimension.EXPRESSIVENESS: ("visual_description", "Visual Description"),
    Dimension.NOVELTY: ("core_idea", "Core Idea"),
}
#: The question per dimension (App. H.1).
QUESTION = {
    Dimension.USEFULNESS: "Which Core Idea better satisfies the brief, constraints, audience, medium, and required source concepts?",
    Dimension.EXPRESSIVENESS: "Which Visual Description gives a more concrete and stable mental image?",
    Dimension.NOVELTY: "Which response better avoids task-specific population clichés while remaining meaningful for the brief?",
}
#: The decision rule per dimension (App. H.2, Table 16).
RULE = {
    Dimension.USEFULNESS: "Prefer the idea that more specifically satisfies the brief, constraints, audience, medium, and "
    "required visual operation. Do not reward verbal polish or visual density by itself.",
    Dimension.EXPRESSIVENESS: "Prefer the description that supports a more concrete, stable, and drawable mental image. Do "
    "not reward task fit, novelty, length, or atmospheric language by itself.",
    Dimension.NOVELTY: "Prefer the idea that better avoids or transforms population-common visual patterns while remaining "
    "meaningful for the brief. Do not reward randomness, obscurity, or off-brief weirdness.",
}
TIE_RULE = (
    "Tie only when this dimension has no stable, explainable winner — not as a substitute for uncertainty."
)


class TextPairwise(PairwiseKind):
    code = CampaignKind.TEXT_PAIRWISE
    title = "Text pairwise"
    paper_section = "Ekphrasis App. H"
    content_relations = ("task", "response_a", "response_b")
    #: A response shows one field (PRIMARY_FIELD); its whole text and its normalisation record are not shown:
    #: left unread, 58 K instructions of PostgreSQL's backend an item read less (callgrind, issue 30). Nor
    #: are the item's columns of the other kinds' content (renders, EASEL steps, C² sample), its sampling
    #: stratum, gold answer and creation time, nor the task's source record and place in its set.
    content_unread = tuple(f"{side}__{name}" for side in ("response_a", "response_b") for name in (
        "sample", "is_primary", "raw_text", "raw_sha256", "normalisation_method", "normalisation_attempts",
        "normalised_at", "normalisation_model", "created_at")) + (
        "render_a", "render_b", "c2_sample", "easel_step_a", "easel_step_b", "sampling_stratum", "gold_answer",
        "created_at", "task__source", "task__subtype", "task__position")

    def check_item(self, item: Item) -> list[tuple[str, str]]:
        problems = []
        if item.dimension not in PRIMARY_FIELD:
            problems.append(("dimension", "must be usefulness, expressiveness or novelty"))
        if item.response_a is None or item.response_b is None:
            problems.append(("responses", "a text pairwise item needs two responses"))
        else:
            problems += self.pair_problems(
                item, (("response_a", item.response_a), ("response_b", item.response_b)),
                other_task="belongs to another task", same_model=("responses", "both responses come from the same model"),
            )
        checklist = item.payload.get("checklist", [])
        if not isinstance(checklist, list) or not all(isinstance(c, str) and c.strip() for c in checklist):
            problems.append(("checklist", "must be a list of non-empty strings"))
        if item.render_a_id or item.render_b_id:
            problems.append(("renders", "a text pairwise item shows no images"))
        return problems

    def shown_content(self, item: Item) -> ShownContent:
        field, _ = PRIMARY_FIELD[item.dimension]
        return ShownContent(
            {
                "kind": self.code,
                "dimension": item.dimension,
                **task_context(item),
                "a": getattr(item.response_a, field),
                "b": getattr(item.response_b, field),
                "checklist": list(item.payload.get("checklist", [])),
            }
        )

    def present(self, item: Item, assignment: Assignment, *, media_url: Callable[[str], str]) -> dict[str, Any]:
        content = self.shown_content(item).content
        _, field_label = PRIMARY_FIELD[item.dimension]
        shown_a, shown_b = shown_pair(assignment, content["a"], content["b"])
        return {
            "dimension": item.dimension,
            "dimension_label": Dimension(item.dimension).label,
            "question": QUESTION[item.dimension],
            "rule": RULE[item.dimension],
            "tie_rule": TIE_RULE,
            "field_label": field_label,
            "brief": content["brief"],
            "constraints": content["constraints"],
            "sides": {"A": shown_a, "B": shown_b},
            "checklist": content["checklist"],
        }
