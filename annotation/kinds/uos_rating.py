"""U-O-S rating: one divergent C² sample — the prompt (and the image of a visual story) and the
response — rated by a person on Usefulness, Originality and Surprise, integers 0–5, with the rubric the
LLM rater received shown beside each scale (c2-eval §3.2.2; rubric text and version from
:mod:`engine.c2.rater`).

Blinding: the page gets the prompt, the response, the image by an opaque URL and the rubric — never
the model, the rater's scores or another annotator's rating.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from annotation.choices import CampaignKind
from annotation.kinds.base import Kind, ShownContent, bytes_sha256
from annotation.label_models import UOS_COMPONENTS, UOSLabel
from annotation.models import Assignment, Item
from engine.c2.rater import RUBRIC, RUBRIC_SCALES_VERSION
from leaderboard.c2.models import DIVERGENT_TYPES, VISUAL_TYPES

QUESTION = "Rate this response on its own, on each of the three components, with the rubric beside each scale."
COMPONENT_LABELS = {"usefulness": "Usefulness (U)", "originality": "Originality (O)", "surprise": "Surprise (S)"}
_HEADING = re.compile(r"^(Usefulness|Originality|Surprise) \([UOS]\) — (.+)$")
_LEVEL = re.compile(r"^\s+([0-5]): (.+)$")


def rubric_sections(rubric: str = RUBRIC) -> dict[str, dict[str, Any]]:
    """The rater's rubric split per component: its definition and the six level descriptions, exactly
    as the rater received them (engine.c2.rater.RUBRIC)."""
    sections: dict[str, dict[str, Any]] = {}
    current = None
    for line in rubric.splitlines():
        heading = _HEADING.match(line)
        if heading:
            current = heading.group(1).lower()
            sections[current] = {"definition": heading.group(2), "levels": []}
            continue
        level = _LEVEL.match(line)
        if level and current:
            sections[current]["levels"].append({"level": int(level.group(1)), "text": level.group(2)})
    if set(sections) != set(UOS_COMPONENTS) or any(len(s["levels"]) != 6 for s in sections.values()):
        raise ValueError(f"rubric {RUBRIC_SCALES_VERSION} does not have six levels for each of U, O and S")
    return sections


class UOSRating(Kind):
    code = CampaignKind.UOS_RATING
    title = "U-O-S rating"
    paper_section = "C²-Eval §3.2.2"
    label_model = UOSLabel
    content_relations = ("task", "c2_sample", "task__c2_image")
    uses_images = True
    adjudicated = False
    keys = (("0–5", "score the focused component; the focus then moves on to the next"), ("Tab / → / ↓", "next component"),
            ("Shift+Tab / ← / ↑", "previous component"), ("F", "flag with a note"), ("Enter", "submit"),
            ("S", "skip"), ("I", "instructions"), ("C", "calibration examples"), ("?", "help"))

    def check_item(self, item: Item) -> list[tuple[str, str]]:
        problems = []
        sample = item.c2_sample
        if sample is None:
            return [("c2_sample", "a U-O-S item shows one C² sample")]
        if sample.task_id != item.task_id:
            problems.append(("c2_sample", "the sample answers another task"))
        if item.task.family not in DIVERGENT_TYPES:
            problems.append(("task", f"U-O-S is rated on divergent tasks ({', '.join(DIVERGENT_TYPES)}), not {item.task.family!r}"))
        if not (sample.text or "").strip():
            problems.append(("c2_sample", "the sample has no response text"))
        if item.response_a_id or item.response_b_id or item.render_a_id or item.render_b_id or item.easel_step_a_id:
            problems.append(("references", "a U-O-S item references only its C² sample"))
        if item.task.family in VISUAL_TYPES and not hasattr(item.task, "c2_image"):
            problems.append(("task", "a visual story task needs its image"))
        return problems

    def _image(self, item: Item):
        return getattr(item.task, "c2_image", None) if item.task.family in VISUAL_TYPES else None

    def shown_content(self, item: Item) -> ShownContent:
        content = {"kind": self.code, "prompt": item.task.brief, "response": item.c2_sample.text,
                   "rubric_version": RUBRIC_SCALES_VERSION}
        image = self._image(item)
        return ShownContent(content, {"a": bytes_sha256(image.data)} if image is not None else {})

    def present(self, item: Item, assignment: Assignment, *, media_url: Callable[[str], str]) -> dict[str, Any]:
        sections = rubric_sections()
        return {
            "question": QUESTION,
            "prompt": item.task.brief,
            "response": item.c2_sample.text,
            "image": media_url("A") if self._image(item) is not None else None,
            "rubric_version": RUBRIC_SCALES_VERSION,
            "components": [{"code": c, "label": COMPONENT_LABELS[c], **sections[c]} for c in UOS_COMPONENTS],
        }

    def media_source(self, item: Item, assignment: Assignment, shown_slot: str) -> tuple[bytes, str]:
        image = self._image(item)
        if shown_slot != "A" or image is None or "a" not in assignment.media_sha256:
            raise KeyError(shown_slot)
        return bytes(image.data), assignment.media_sha256["a"]

    def validate_answer(self, data, *, item, assignment):
        errors: dict[str, str] = {}
        values: dict[str, Any] = {}
        for component in UOS_COMPONENTS:
            score = data.get(component)
            if isinstance(score, bool) or not isinstance(score, int):
                errors[component] = f"give {component} a whole-number score from 0 to 5"
            elif not 0 <= score <= 5:
                errors[component] = f"{component} {score} is out of range: use 0 to 5"
            else:
                values[component] = score
        if errors:
            return {}, errors
        values["rubric_version"] = RUBRIC_SCALES_VERSION
        return values, {}

    def answer_shown(self, label: UOSLabel) -> dict[str, Any]:
        return {c: getattr(label, c) for c in UOS_COMPONENTS}

    def category(self, label: UOSLabel) -> str:
        """The exact (U, O, S) triple, for the consensus table's exact-agreement row."""
        return f"{label.usefulness}/{label.originality}/{label.surprise}"

    def parse_answer(self, answer: Any) -> Any:
        raise ValueError("U-O-S campaigns have no gold items (their agreement is measured by ICC, not gold accuracy)")

    def summary(self, label: UOSLabel) -> dict[str, Any]:
        return {c: getattr(label, c) for c in UOS_COMPONENTS} | {"rubric_version": label.rubric_version}
