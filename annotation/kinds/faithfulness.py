"""Faithfulness gate: a rendered image beside the plan it came from; score 1–5 and hard-fail
reasons (Ekphrasis App. I.2).

Pass(I, y) = 1[Faith(I, y) ≥ 4 ∧ ¬HardFail(I, y)]; an image passes the gate by majority of its
annotators. Hard failures: major semantic drift, missing core object, concept splitting (fusion
tasks), object identity loss (transformation tasks), style/context mismatch (applied design tasks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotation.choices import CampaignKind
from annotation.kinds.base import Kind, ShownContent, file_sha256, task_context
from annotation.label_models import HARD_FAIL_REASONS, FaithfulnessLabel
from annotation.models import Assignment, Item

#: Pass threshold on the 1–5 faithfulness score (App. I.2: Faith ≥ 4/5).
PASS_SCORE = 4
HARD_FAIL_LABELS = {
    "major_semantic_drift": "Major semantic drift",
    "missing_core_object": "Missing core object",
    "concept_splitting": "Concept splitting",
    "object_identity_loss": "Object identity loss",
    "style_context_mismatch": "Style/context mismatch",
}
#: The family where each reason is typical (App. I.2); the page highlights it, any reason is allowed.
HARD_FAIL_FAMILY = {
    "concept_splitting": "combination",
    "object_identity_loss": "transformation",
    "style_context_mismatch": "adaptation",
}
HARD_FAIL_KEYS = {
    "major_semantic_drift": "D",
    "missing_core_object": "M",
    "concept_splitting": "P",
    "object_identity_loss": "O",
    "style_context_mismatch": "Y",
}
QUESTION = "Does the image preserve the plan's central carrier, objects, relation and context well enough to compare it?"


def faithfulness_passes(score: int, reasons: list[str]) -> bool:
    """Pass(I, y) = 1[Faith ≥ 4 ∧ ¬HardFail] (Ekphrasis App. I.2)."""
    return score >= PASS_SCORE and not reasons


class Faithfulness(Kind):
    code = CampaignKind.FAITHFULNESS
    title = "Faithfulness gate"
    paper_section = "Ekphrasis App. I.2"
    label_model = FaithfulnessLabel
    content_relations = ("task", "render_a__response")
    categories = ("pass", "fail")
    uses_images = True
    shows_renders = True
    keys = (("1–5", "faithfulness score"), ("H", "hard fail (then pick a reason)"),
            *((HARD_FAIL_KEYS[r], HARD_FAIL_LABELS[r]) for r in HARD_FAIL_REASONS),
            ("F", "flag with a note"), ("Enter", "submit"), ("S", "skip"), ("I", "instructions"),
            ("C", "calibration examples"), ("?", "help"))

    def check_item(self, item: Item) -> list[tuple[str, str]]:
        problems = []
        if item.render_a is None or item.render_b_id:
            problems.append(("renders", "a faithfulness item shows exactly one render"))
        elif item.render_a.response.task_id != item.task_id:
            problems.append(("render_a", "renders a response to another task"))
        if item.response_a_id or item.response_b_id:
            problems.append(("responses", "the plan is the render's own response; do not set responses"))
        if item.dimension:
            problems.append(("dimension", "a faithfulness item has no dimension"))
        return problems

    def shown_content(self, item: Item) -> ShownContent:
        response = item.render_a.response
        return ShownContent(
            {
                "kind": self.code,
                **task_context(item),
                "core_idea": response.core_idea,
                "visual_description": response.visual_description,
            },
            {"a": file_sha256(item.render_a)},
        )

    def present(self, item: Item, assignment: Assignment, *, media_url: Callable[[str], str]) -> dict[str, Any]:
        content = self.shown_content(item).content
        return {
            "question": QUESTION,
            "brief": content["brief"],
            "constraints": content["constraints"],
            "plan": {"core_idea": content["core_idea"], "visual_description": content["visual_description"]},
            "image": media_url("A"),
            "pass_rule": f"Pass = score ≥ {PASS_SCORE} and no hard fail.",
            "hard_fail_reasons": [
                {"code": r, "label": HARD_FAIL_LABELS[r], "key": HARD_FAIL_KEYS[r],
                 "typical": HARD_FAIL_FAMILY.get(r) in (None, content["family"])}
                for r in HARD_FAIL_REASONS
            ],
        }

    def validate_answer(self, data, *, item, assignment):
        errors: dict[str, str] = {}
        score = data.get("score")
        if isinstance(score, bool) or not isinstance(score, int):
            errors["score"] = "give a whole-number score from 1 to 5"
        elif not 1 <= score <= 5:
            errors["score"] = f"score {score} is out of range: use 1 to 5"
        reasons = data.get("hard_fail_reasons", [])
        if not isinstance(reasons, list):
            errors["hard_fail_reasons"] = "must be a list of reason codes"
            reasons = []
        unknown = [r for r in reasons if r not in HARD_FAIL_REASONS]
        if unknown:
            errors["hard_fail_reasons"] = (
                f"unknown hard-fail reason {unknown[0]!r}; use one of: {', '.join(HARD_FAIL_REASONS)}"
            )
        hard_fail = data.get("hard_fail")
        if hard_fail is not None and not isinstance(hard_fail, bool):
            errors["hard_fail"] = "must be true or false"
        elif hard_fail is True and not reasons:
            errors["hard_fail_reasons"] = "a hard fail needs at least one reason"
        elif hard_fail is False and reasons:
            # The reasons alone decide the gate; a "no hard fail" beside them would be stored as a fail.
            errors["hard_fail"] = "false, yet hard-fail reasons were given: mark the hard fail or drop the reasons"
        if errors:
            return {}, errors
        values = {reason: reason in reasons for reason in HARD_FAIL_REASONS}
        values.update(score=score, passed=faithfulness_passes(score, reasons))
        return values, {}

    def answer_shown(self, label: FaithfulnessLabel) -> dict[str, Any]:
        reasons = label.hard_fail_reasons
        return {"score": label.score, "hard_fail": bool(reasons), "hard_fail_reasons": reasons}

    def category(self, label: FaithfulnessLabel) -> str:
        return "pass" if label.passed else "fail"

    def summary(self, label: FaithfulnessLabel) -> dict[str, Any]:
        return {"score": label.score, "hard_fail_reasons": label.hard_fail_reasons, "passed": label.passed}
