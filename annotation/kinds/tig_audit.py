"""TIG checklist audit: a materialised Novelty checklist item with its cluster summary and
provenance counts, audited on five criteria (pass / partial / fail / not_enough_evidence) with an
overall action accept / revise / exclude and a revision note (Ekphrasis App. G.7, Table 15).

Provenance is counts only ("shared by 5 of 12 models"), never candidate identities.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotation.choices import AuditAction, AuditCode, CampaignKind
from annotation.kinds.base import Kind, ShownContent, task_context
from annotation.label_models import TIG_CRITERIA, TigAuditLabel
from annotation.models import Assignment, Item

#: The audit questions (App. G.7, Table 15).
CRITERIA = {
    "cluster_validity": ("Cluster validity", ("Does the item represent a visual pattern that recurs across multiple models, "
                          "rather than a one-off phrasing from a single response?")),
    "visual_specificity": ("Visual specificity", ("Is the item a visual cliché rather than a language-expression cliché, "
                            "abstract rhetorical move, or evaluative phrase?")),
    "faithfulness": ("Faithfulness", ("Does the item faithfully summarize the original idea cluster without adding objects, "
                      "mechanisms, or intents not supported by the cluster?")),
    "non_leakage": ("Non-leakage", ("Does the item avoid leaking content from either A/B candidate response in the "
                     "leave-two-models-out comparison?")),
    "usefulness_for_judging": ("Usefulness for judging", ("Does the item help a judge decide whether a candidate repeats, "
                                "transforms, or avoids the population pattern?")),
}
#: A fail on any of these means the item is excluded (App. G.7).
EXCLUDING_CRITERIA = ("cluster_validity", "visual_specificity", "faithfulness", "non_leakage")
#: Provenance fields: counts only.
PROVENANCE_FIELDS = {
    "models_sharing": "models share the pattern",
    "models_in_population": "models in the reference population",
    "responses_sharing": "responses share the pattern",
    "responses_in_population": "responses in the reference population",
}
ACTION_RULE = (
    "Accept items that pass all criteria or have only minor partial issues; revise items whose cluster is valid but "
    "whose wording is underspecified or not sufficiently visual; exclude items that fail cluster validity, visual "
    "specificity, faithfulness, or non-leakage."
)


def candidate_texts(item: Item) -> list[dict[str, str]]:
    """The two candidate responses whose leave-two-models-out population the item was built from
    (``meta.comparison_key`` = "model_a|model_b"), as texts only, never with a model name, in the canonical
    order of the models' names (what the content hash pins); :func:`shown_candidates` orders them for the page.
    Empty when the key is a hash or a model has no response."""
    from leaderboard.models import Response

    key = str((item.payload.get("meta") or {}).get("comparison_key") or "")
    names = key.split("|")
    if len(names) != 2 or key.startswith("pair-"):
        return []
    found = {r.subject_model.display_name: r for r in Response.objects.filter(
        task=item.task, is_primary=True, subject_model__display_name__in=names).select_related("subject_model")}
    if len(found) != 2:
        return []
    return [{"label": f"Candidate {side}", "core_idea": found[name].core_idea,
             "visual_description": found[name].visual_description}
            for side, name in zip("AB", sorted(names), strict=True)]


def shown_candidates(candidates: list[dict[str, str]], *, flipped: bool) -> list[dict[str, str]]:
    """The candidates as the page shows them: the item's own random bit (``Item.orientation``, drawn when the
    item was created) decides which one is Candidate A. Shown in the canonical order, the model whose name
    sorts first was always Candidate A: the side told the models apart."""
    ordered = candidates[::-1] if flipped else candidates
    return [{**candidate, "label": f"Candidate {side}"} for side, candidate in zip("AB", ordered, strict=False)]


class TigAudit(Kind):
    code = CampaignKind.TIG_AUDIT
    title = "TIG checklist audit"
    paper_section = "Ekphrasis App. G.7"
    label_model = TigAuditLabel
    content_relations = ("task",)
    categories = tuple(AuditAction.values)
    keys = (("↑ ↓", "move between criteria (marking one, 1–4, moves on to the next by itself)"), ("1", "pass"),
            ("2", "partial"), ("3", "fail"), ("4", "not enough evidence"),
            ("1 2 3", "in the action row: accept / revise / exclude"), ("N", "revision note"), ("F", "flag with a note"),
            ("Enter", "submit"), ("S", "skip"), ("I", "instructions"), ("C", "calibration examples"), ("?", "help"))

    def check_item(self, item: Item) -> list[tuple[str, str]]:
        problems = []
        payload = item.payload
        for name in ("checklist_text", "cluster_summary"):
            if not isinstance(payload.get(name), str) or not payload[name].strip():
                problems.append((name, "required text"))
        provenance = payload.get("provenance", {})
        if not isinstance(provenance, dict):
            problems.append(("provenance", "must be an object of counts"))
        else:
            for key, value in provenance.items():
                if key not in PROVENANCE_FIELDS:
                    problems.append(("provenance", f"unknown field {key!r}; provenance holds counts only: {', '.join(PROVENANCE_FIELDS)}"))
                elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    problems.append(("provenance", f"{key} must be a non-negative count, never an identity"))
        if item.response_a_id or item.response_b_id or item.render_a_id or item.render_b_id:
            problems.append(("item", "a TIG audit item references no response or render"))
        return problems

    def shown_content(self, item: Item) -> ShownContent:
        return ShownContent(
            {
                "kind": self.code,
                **task_context(item),
                "checklist_text": item.payload["checklist_text"],
                "cluster_summary": item.payload["cluster_summary"],
                "provenance": {k: item.payload.get("provenance", {}).get(k) for k in PROVENANCE_FIELDS
                               if k in item.payload.get("provenance", {})},
                "candidates": candidate_texts(item),
            }
        )

    def present(self, item: Item, assignment: Assignment, *, media_url: Callable[[str], str]) -> dict[str, Any]:
        content = self.shown_content(item).content
        provenance = content["provenance"]
        lines = []
        if "models_sharing" in provenance:
            total = provenance.get("models_in_population")
            lines.append(f"{provenance['models_sharing']}" + (f" of {total}" if total is not None else "") + " models share the pattern")
        if "responses_sharing" in provenance:
            total = provenance.get("responses_in_population")
            lines.append(f"{provenance['responses_sharing']}" + (f" of {total}" if total is not None else "") + " responses")
        return {
            "brief": content["brief"],
            "constraints": content["constraints"],
            # The A/B candidates of the leave-two-models-out comparison, so non-leakage can be judged.
            "candidates": shown_candidates(content["candidates"], flipped=item.orientation),
            "checklist_text": content["checklist_text"],
            "cluster_summary": content["cluster_summary"],
            "provenance": lines,
            "criteria": [{"code": c, "label": CRITERIA[c][0], "question": CRITERIA[c][1]} for c in TIG_CRITERIA],
            "codes": [{"code": c.value, "label": c.label} for c in AuditCode],
            "actions": [{"code": a.value, "label": a.label} for a in AuditAction],
            "action_rule": ACTION_RULE,
        }

    def validate_answer(self, data, *, item, assignment):
        errors: dict[str, str] = {}
        criteria = data.get("criteria")
        values: dict[str, Any] = {}
        if not isinstance(criteria, dict):
            errors["criteria"] = "must be an object: criterion -> code"
            criteria = {}
        for name in criteria:
            if name not in TIG_CRITERIA:
                errors[f"criteria.{name}"] = f"unknown criterion {name!r}; the criteria are: {', '.join(TIG_CRITERIA)}"
        for name in TIG_CRITERIA:
            code = criteria.get(name)
            if code is None:
                errors[f"criteria.{name}"] = f"mark {CRITERIA[name][0].lower()}"
            elif code not in AuditCode.values:
                errors[f"criteria.{name}"] = f"unknown code {code!r}; use one of: {', '.join(AuditCode.values)}"
            else:
                values[name] = code
        action = data.get("overall_action")
        note = data.get("revision_note", "")
        if not isinstance(note, str):
            errors["revision_note"] = "must be text"
            note = ""
        note = note.strip()
        if action not in AuditAction.values:
            errors["overall_action"] = f"choose one of: {', '.join(AuditAction.values)}"
        elif action == AuditAction.REVISE and not note:
            errors["revision_note"] = "say what to revise"
        failing = [CRITERIA[c][0].lower() for c in EXCLUDING_CRITERIA if values.get(c) == AuditCode.FAIL]
        if failing and action in (AuditAction.ACCEPT, AuditAction.REVISE):
            errors["overall_action"] = f"an item that fails {' and '.join(failing)} must be excluded"
        if errors:
            return {}, errors
        return {**values, "overall_action": action, "revision_note": note}, {}

    def answer_shown(self, label: TigAuditLabel) -> dict[str, Any]:
        return {"criteria": {c: getattr(label, c) for c in TIG_CRITERIA}, "overall_action": label.overall_action,
                "revision_note": label.revision_note}

    def category(self, label: TigAuditLabel) -> str:
        return label.overall_action

    def summary(self, label: TigAuditLabel) -> dict[str, Any]:
        return {**{c: getattr(label, c) for c in TIG_CRITERIA}, "overall_action": label.overall_action,
                "revision_note": label.revision_note}
