"""Canvas similarity: a reference image and two canvases painted towards it (by different agents, or
at different steps of one episode); the annotator picks the canvas that looks more like the reference,
or tie (issue 13, testing EASEL Eq. 1: S = 0.5·SSIM + 0.3·(1 − L1) + 0.2·EdgeIoU).

The two canvases are shown in a counterbalanced order (slot parity, as every two-sided kind); the
reference is shown above them. Nothing else reaches the page: no agent, no step, no S.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotation.choices import CampaignKind
from annotation.kinds.base import PairwiseKind, ShownContent, bytes_sha256, shown_pair
from annotation.models import Assignment, Item

QUESTION = "Which canvas looks more like the reference? Choose tie only when neither is closer."


class CanvasSimilarity(PairwiseKind):
    code = CampaignKind.CANVAS_SIMILARITY
    title = "Canvas similarity"
    paper_section = "EASEL Eq. 1"
    content_relations = ("task", "task__easel_image", "easel_step_a__episode", "easel_step_b__episode")
    uses_images = True

    def check_item(self, item: Item) -> list[tuple[str, str]]:
        problems = []
        steps = (("easel_step_a", item.easel_step_a), ("easel_step_b", item.easel_step_b))
        if any(step is None for _, step in steps):
            return [("canvases", "a canvas similarity item needs two canvases (EASEL steps)")]
        for name, step in steps:
            if step.episode.task_id != item.task_id:
                problems.append((name, "the canvas was painted towards another reference"))
            if step.episode.kind != "reconstruction":
                problems.append((name, "canvas similarity compares reconstruction canvases"))
            if step.canvas_png is None:
                problems.append((name, "this step stored no canvas"))
        if not hasattr(item.task, "easel_image"):
            problems.append(("task", "the task has no reference image"))
        if item.response_a_id or item.response_b_id or item.render_a_id or item.render_b_id or item.c2_sample_id:
            problems.append(("references", "a canvas similarity item references only its two EASEL steps"))
        return problems

    def shown_content(self, item: Item) -> ShownContent:
        return ShownContent(
            {"kind": self.code, "question": QUESTION},
            {"ref": bytes_sha256(item.task.easel_image.png), "a": bytes_sha256(item.easel_step_a.canvas_png),
             "b": bytes_sha256(item.easel_step_b.canvas_png)},
        )

    def present(self, item: Item, assignment: Assignment, *, media_url: Callable[[str], str]) -> dict[str, Any]:
        return {"question": QUESTION, "reference": media_url("R"), "images": {"A": media_url("A"), "B": media_url("B")}}

    def media_source(self, item: Item, assignment: Assignment, shown_slot: str) -> tuple[bytes, str]:
        if shown_slot == "R":
            canonical, data = "ref", item.task.easel_image.png
        elif shown_slot in ("A", "B"):
            canonical = dict(zip(("A", "B"), shown_pair(assignment, "a", "b")))[shown_slot]
            data = (item.easel_step_a if canonical == "a" else item.easel_step_b).canvas_png
        else:
            raise KeyError(shown_slot)
        if data is None or canonical not in assignment.media_sha256:
            raise KeyError(shown_slot)
        return bytes(data), assignment.media_sha256[canonical]
