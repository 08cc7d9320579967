"""Image-level preference: two rendered images of the same task and nothing else — no text, no
model, no score — plus the brief when the campaign says so; A, B or tie (Ekphrasis App. I.3).

Only renders that pass the faithfulness gate are eligible (App. I.2); the service creating items
enforces it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotation.kinds.base import Kind, ShownContent, file_sha256
from annotation.kinds.text_pairwise import validate_pair_choice
from annotation.models import Assignment, CampaignKind, Dimension, Item, PairwiseLabel

QUESTION = (
    "Which image better realizes a useful, expressive, and non-clichéd visual plan as a whole?"
)


class ImagePreference(Kind):
    code = CampaignKind.IMAGE_PREFERENCE
    title = "Image preference"
    paper_section = "Ekphrasis App. I.3"
    label_model = PairwiseLabel
    categories = ("A", "B", "tie")
    two_sided = True
    uses_images = True
    keys = (("A", "prefer A"), ("B", "prefer B"), ("T", "tie"), ("F", "flag with a note"),
            ("Enter", "submit"), ("S", "skip"), ("I", "instructions"), ("C", "calibration examples"), ("?", "help"))

    def check_item(self, item: Item) -> list[tuple[str, str]]:
        problems = []
        if item.dimension != Dimension.OVERALL:
            problems.append(("dimension", "an image preference item asks one overall judgment"))
        if item.render_a is None or item.render_b is None:
            problems.append(("renders", "an image preference item needs two renders"))
        else:
            for side, render in (("render_a", item.render_a), ("render_b", item.render_b)):
                if render.response.task_id != item.task_id:
                    problems.append((side, "renders a response to another task"))
            if item.render_a.response.subject_model_id == item.render_b.response.subject_model_id:
                problems.append(("renders", "both renders come from the same model"))
        return problems

    def shown_content(self, item: Item) -> ShownContent:
        content = {"kind": self.code, "dimension": item.dimension}
        if item.campaign.show_brief:
            content["brief"] = item.task.brief
        return ShownContent(content, {"a": file_sha256(item.render_a), "b": file_sha256(item.render_b)})

    def present(self, item: Item, assignment: Assignment, *, media_url: Callable[[str], str]) -> dict[str, Any]:
        out = {"question": QUESTION, "images": {"A": media_url("A"), "B": media_url("B")}}
        if item.campaign.show_brief:
            out["brief"] = item.task.brief
        return out

    def validate_answer(self, data, *, item, assignment):
        return validate_pair_choice(data, assignment)

    def category(self, label: PairwiseLabel) -> str:
        return label.choice

    def summary(self, label: PairwiseLabel) -> dict[str, Any]:
        return {"choice": label.choice, "shown_choice": label.shown_choice, "swapped": label.swapped}
