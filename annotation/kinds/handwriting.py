"""Handwriting reading: one canvas of EASEL's "hello" task (easel §3.3); the annotator types the letters
they can read (free text, at most 20 characters) or marks the canvas unreadable (issue 13).

The recogniser's reading (Tesseract or an MLLM) never reaches the page; the dashboard compares the two
with the letter-position match rate of :func:`engine.easel.semantic.letter_match_rate`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotation.choices import CampaignKind
from annotation.kinds.base import Kind, ShownContent, bytes_sha256
from annotation.label_models import HANDWRITING_TEXT_MAX, HandwritingLabel
from annotation.models import Assignment, Item
from engine.easel.semantic import HANDWRITING_HELLO

QUESTION = "Type the letters you can read on the canvas, in order (leave out what you cannot read), or mark it unreadable."
UNREADABLE = "unreadable"


def is_handwriting_task(task) -> bool:
    return (task.source or {}).get("spec", {}).get("task") == HANDWRITING_HELLO


class Handwriting(Kind):
    code = CampaignKind.HANDWRITING
    title = "Handwriting reading"
    paper_section = "EASEL §3.3"
    label_model = HandwritingLabel
    content_relations = ("task", "easel_step_a__episode")
    uses_images = True
    adjudicated = False
    keys = (("letters", "type what you read (the box has the focus)"), ("Enter", "submit"),
            ("Esc", "leave the text box: the letter keys below work only outside it"), ("U", "unreadable"),
            ("W", "back to the text box"), ("F", "flag with a note"), ("S", "skip"), ("I", "instructions"),
            ("C", "calibration examples"), ("?", "help"))

    def check_item(self, item: Item) -> list[tuple[str, str]]:
        step = item.easel_step_a
        if step is None:
            return [("easel_step_a", "a handwriting item shows one canvas (an EASEL step)")]
        problems = []
        if step.episode.task_id != item.task_id:
            problems.append(("easel_step_a", "the canvas belongs to another task"))
        if not is_handwriting_task(item.task):
            problems.append(("task", "handwriting items come from EASEL's handwriting ('hello') task"))
        if step.canvas_png is None:
            problems.append(("easel_step_a", "this step stored no canvas"))
        if item.easel_step_b_id or item.response_a_id or item.render_a_id or item.c2_sample_id:
            problems.append(("references", "a handwriting item references only its one canvas"))
        return problems

    def shown_content(self, item: Item) -> ShownContent:
        return ShownContent({"kind": self.code, "question": QUESTION, "max_length": HANDWRITING_TEXT_MAX},
                            {"a": bytes_sha256(item.easel_step_a.canvas_png)})

    def present(self, item: Item, assignment: Assignment, *, media_url: Callable[[str], str]) -> dict[str, Any]:
        return {"question": QUESTION, "image": media_url("A"), "max_length": HANDWRITING_TEXT_MAX}

    def media_source(self, item: Item, assignment: Assignment, shown_slot: str) -> tuple[bytes, str]:
        if shown_slot != "A" or "a" not in assignment.media_sha256:
            raise KeyError(shown_slot)
        return bytes(item.easel_step_a.canvas_png), assignment.media_sha256["a"]

    def validate_answer(self, data, *, item, assignment):
        unreadable = data.get("unreadable", False)
        text = data.get("text", "")
        if not isinstance(unreadable, bool):
            return {}, {"unreadable": "must be true or false"}
        if not isinstance(text, str):
            return {}, {"text": "must be text"}
        text = " ".join(text.split())  # one line: runs of whitespace become one space
        if unreadable and text:
            return {}, {"text": "either type what you read or mark the canvas unreadable, not both"}
        if not unreadable and not text:
            return {}, {"text": "type the letters you read, or mark the canvas unreadable (U)"}
        if len(text) > HANDWRITING_TEXT_MAX:
            return {}, {"text": f"keep it to {HANDWRITING_TEXT_MAX} characters (got {len(text)})"}
        if any(not c.isprintable() for c in text):
            return {}, {"text": "only printable characters"}
        return {"text": text, "unreadable": unreadable}, {}

    def answer_shown(self, label: HandwritingLabel) -> dict[str, Any]:
        return {"text": label.text, "unreadable": label.unreadable}

    def category(self, label: HandwritingLabel) -> str:
        """The letters read, lower-cased (what the letter-position match reads), or 'unreadable'."""
        return UNREADABLE if label.unreadable else "".join(c for c in label.text.lower() if c.isalpha()) or "(no letters)"

    def parse_answer(self, answer: Any) -> Any:
        raise ValueError("handwriting campaigns have no gold items")

    def summary(self, label: HandwritingLabel) -> dict[str, Any]:
        return {"text": label.text, "unreadable": label.unreadable}
