"""Image-level preference: two rendered images of the same task and nothing else — no text, no
model, no score — plus the brief when the campaign says so; A, B or tie (Ekphrasis App. I.3).

Only renders that pass the faithfulness gate are eligible (App. I.2); the service creating items
enforces it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotation.choices import CampaignKind, Dimension
from annotation.kinds.base import PairwiseKind, ShownContent, file_sha256
from annotation.models import Assignment, Item

QUESTION = (
    "Which image better realizes a useful, expressive, and non-clichéd visual plan as a whole?"
)


class ImagePreference(PairwiseKind):
    code = CampaignKind.IMAGE_PREFERENCE
    title = "Image preference"
    paper_section = "Ekphrasis App. I.3"
    content_relations = ("task", "render_a__response", "render_b__response")
    uses_images = True
    shows_renders = True

    def check_item(self, item: Item) -> list[tuple[str, str]]:
        problems = []
        if item.dimension != Dimension.OVERALL:
            problems.append(("dimension", "an image preference item asks one overall judgment"))
        if item.render_a is None or item.render_b is None:
            problems.append(("renders", "an image preference item needs two renders"))
        else:
            problems += self.pair_problems(
                item, (("render_a", item.render_a.response), ("render_b", item.render_b.response)),
                other_task="renders a response to another task", same_model=("renders", "both renders come from the same model"),
            )
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
