"""Adaptation strategy labels: multi-label from the seven strategies of Ekphrasis App. J (Table 18),
each marked central (removing it would change the core visual idea) or incidental (surface
styling only) (App. J.3). A response may receive zero or more labels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotation.choices import CampaignKind, StrategyRole
from annotation.kinds.base import Kind, ShownContent, task_context
from annotation.label_models import STRATEGIES, StrategyLabel
from annotation.models import Assignment, Item

#: Definitions (App. J.1, Table 18).
STRATEGY_DEFINITIONS = {
    "constraint_literalization": ("Constraint literalization", "Directly turns a written constraint into a visible object, label, or layout device."),
    "audience_reframing": ("Audience reframing", "Changes subject, tone, or visual language to fit the intended audience."),
    "medium_adaptation": ("Medium adaptation", "Uses the affordances of the requested medium, such as poster, app screen, package, or public installation."),
    "metaphor_substitution": ("Metaphor substitution", "Replaces an obvious applied-design trope with a new metaphorical carrier."),
    "scenario_embedding": ("Scenario embedding", "Places the message inside a specific scene of use rather than a generic symbolic image."),
    "style_transfer": ("Style transfer", "Applies a recognizable art, branding, or cultural style to the solution."),
    "risk_avoidant_generic": ("Risk-avoidant generic design", "Produces a safe but low-specificity design that satisfies surface constraints without a distinctive idea."),
}
NONE = "none"


class Strategy(Kind):
    code = CampaignKind.STRATEGY
    title = "Adaptation strategy labels"
    paper_section = "Ekphrasis App. J"
    label_model = StrategyLabel
    content_relations = ("task", "response_a")
    categories = ()  # the outcome is a set of strategies; see category()
    keys = (("1–7", "cycle a strategy: absent → central → incidental"), ("0", "clear all"), ("F", "flag with a note"),
            ("Enter", "submit"), ("S", "skip"), ("I", "instructions"), ("C", "calibration examples"), ("?", "help"))

    def check_item(self, item: Item) -> list[tuple[str, str]]:
        problems = []
        if item.response_a is None or item.response_b_id:
            problems.append(("responses", "a strategy item shows exactly one response"))
        elif item.response_a.task_id != item.task_id:
            problems.append(("response_a", "belongs to another task"))
        if item.render_a_id or item.render_b_id:
            problems.append(("renders", "a strategy item shows no images"))
        return problems

    def shown_content(self, item: Item) -> ShownContent:
        return ShownContent(
            {
                "kind": self.code,
                **task_context(item),
                "core_idea": item.response_a.core_idea,
                "visual_description": item.response_a.visual_description,
            }
        )

    def present(self, item: Item, assignment: Assignment, *, media_url: Callable[[str], str]) -> dict[str, Any]:
        content = self.shown_content(item).content
        return {
            "brief": content["brief"],
            "constraints": content["constraints"],
            "core_idea": content["core_idea"],
            "visual_description": content["visual_description"],
            "strategies": [
                {"code": code, "label": STRATEGY_DEFINITIONS[code][0], "definition": STRATEGY_DEFINITIONS[code][1],
                 "key": str(i + 1)}
                for i, code in enumerate(STRATEGIES)
            ],
            "central_rule": "Central: removing it would change the core visual idea. Incidental: only surface styling.",
        }

    def validate_answer(self, data, *, item, assignment):
        strategies = data.get("strategies", {})
        if not isinstance(strategies, dict):
            return {}, {"strategies": "must be an object: strategy -> central or incidental"}
        errors: dict[str, str] = {}
        values = {code: StrategyRole.ABSENT.value for code in STRATEGIES}
        for code, role in strategies.items():
            if code not in STRATEGIES:
                errors[f"strategies.{code}"] = f"unknown strategy {code!r}; use one of: {', '.join(STRATEGIES)}"
            elif role not in StrategyRole.values:
                errors[f"strategies.{code}"] = f"mark it central or incidental (got {role!r})"
            else:
                values[code] = role
        return (values, {}) if not errors else ({}, errors)

    def answer_shown(self, label: StrategyLabel) -> dict[str, Any]:
        return {"strategies": label.strategies}

    def category(self, label: StrategyLabel) -> str:
        present = sorted(label.strategies)
        return "+".join(present) if present else NONE

    def parse_answer(self, answer: Any) -> str:
        """A gold answer / adjudication outcome: a list of strategy codes (or "none")."""
        if answer in (NONE, [], None):
            return NONE
        codes = answer.split("+") if isinstance(answer, str) else answer
        if not isinstance(codes, list) or any(c not in STRATEGIES for c in codes):
            raise ValueError(f"expected a list of strategy codes from: {', '.join(STRATEGIES)}")
        return "+".join(sorted(set(codes)))

    def summary(self, label: StrategyLabel) -> dict[str, Any]:
        return {"strategies": label.strategies}
