"""The researcher's labels export: every label of a campaign with its assignment metadata, the
models it compared and the history of an annotator's changes (:mod:`annotation.label_revision`).
Researcher-only: it names models."""

from __future__ import annotations

from typing import Any

from annotation.kinds import kind_for
from annotation.label_models import LabelRevision
from annotation.models import Campaign, Item
from annotation.panel_models import ItemActiveTime, Participant
from annotation.validation_dashboards import VALIDATION_KINDS
from leaderboard.services.catalogue import rows_serialise

__all__ = ["EXPORT_COLUMNS", "labels_export"]


EXPORT_COLUMNS = [
    "campaign", "kind", "item_key", "task_id", "family", "dimension", "is_gold", "annotator", "is_simulated",
    "answer", "category", "flag_reason", "flag_note", "swapped", "slot", "assigned_at", "expires_at", "submitted_at",
    "time_on_item_ms", "content_hash", "task_set_version", "is_stale", "version", "revised_at", "revisions",
    "model_a", "model_b", "response_a_id",
    "response_b_id", "render_a_id", "render_b_id", "sampling_stratum", "c2_sample_id", "easel_step_a_id", "easel_step_b_id",
    # crowd campaigns (issue 25): the participant's state, whether the label enters the statistics, active time
    "panel_id", "participant_state", "counted", "active_ms",
    # blinding (annotation.blinding_recheck): the item was withheld later, its text found to name a model
    "item_withheld",
]


def _validation_sides(item: Item) -> tuple[str | None, str | None]:
    """Who made what a validation item shows: the C² sample's model, the EASEL canvases' agents."""
    if item.c2_sample_id:
        return item.c2_sample.subject_model.display_name, None
    steps = (item.easel_step_a, item.easel_step_b)
    return tuple(s.episode.run.agent_name if s is not None else None for s in steps)  # type: ignore[return-value]


def _label_revisions_export(campaign: Campaign, kind) -> dict[int, dict[str, dict[str, Any]]]:
    """Assignment id -> {superseded version: its answer, category, flag and times}: the history the
    current values replaced (:mod:`annotation.label_revision`), in one query."""
    history: dict[int, dict[str, dict[str, Any]]] = {}
    for revision in LabelRevision.objects.filter(campaign=campaign).order_by("assignment_id", "version"):
        was = kind.label_model(**revision.values)  # unsaved: the kind reads its answer as from a label
        history.setdefault(revision.assignment_id, {})[str(revision.version)] = {
            "answer": kind.summary(was), "category": kind.category(was), "flag_reason": was.flag_reason,
            "flag_note": was.flag_note, "given_at": revision.given_at.isoformat(),
            "superseded_at": revision.superseded_at.isoformat(),
        }
    return history


def _participant_columns(participant: Participant | None, label, active_ms: int | None) -> dict[str, Any]:
    """A panel participant's label is kept whatever becomes of them, marked with their state; it is
    counted as :mod:`annotation.counted_labels` counts (not stale, no verdict on its annotator)."""
    return {"panel_id": participant.panel_id if participant else None,
            "participant_state": participant.monitoring_state if participant else None,
            "counted": not label.is_stale and not (participant and participant.verdict), "active_ms": active_ms}


def labels_export(*, campaign: Campaign, fmt: str = "jsonl") -> str:
    """Every label of the campaign (stale and simulated ones, and those of items withheld for blinding,
    included and marked) with its assignment metadata. Researcher-only: it names models. ``answer`` is
    the current version; ``version`` counts the annotator's changes (1 = as first given) and
    ``revisions`` keeps every superseded version, so that no history is lost."""
    kind = kind_for(campaign.kind)
    labels = kind.label_model.objects.filter(campaign=campaign).select_related(
        "annotator", "assignment__slot", "item__task", "item__response_a__subject_model", "item__response_b__subject_model",
        "item__render_a__response__subject_model", "item__render_b__response__subject_model",
        "item__c2_sample__subject_model", "item__easel_step_a__episode__run", "item__easel_step_b__episode__run",
    ).order_by("item__position", "created_at", "pk")
    revisions = _label_revisions_export(campaign, kind)
    people = {p.user_id: p for p in Participant.objects.filter(campaign=campaign)}
    active = dict(ItemActiveTime.objects.filter(assignment__campaign=campaign).values_list("assignment_id", "active_ms"))
    out = []
    for label in labels:
        item, assignment = label.item, label.assignment
        side_a = item.response_a or (item.render_a.response if item.render_a else None)
        side_b = item.response_b or (item.render_b.response if item.render_b else None)
        made_by = _validation_sides(item) if campaign.kind in VALIDATION_KINDS else (None, None)
        out.append({
            "campaign": campaign.name, "kind": campaign.kind, "item_key": item.key, "task_id": item.task.external_id,
            "family": item.task.family, "dimension": item.dimension, "is_gold": item.is_gold,
            "annotator": label.annotator.username, "is_simulated": label.is_simulated,
            "answer": kind.summary(label), "category": kind.category(label),
            "flag_reason": label.flag_reason, "flag_note": label.flag_note,
            "swapped": assignment.swapped, "slot": assignment.slot.index if assignment.slot else None,
            "assigned_at": assignment.created_at.isoformat(), "expires_at": assignment.expires_at.isoformat(),
            "submitted_at": label.created_at.isoformat(), "time_on_item_ms": label.time_on_item_ms,
            "content_hash": label.content_hash, "task_set_version": label.task_set_version, "is_stale": label.is_stale,
            "version": label.version, "revised_at": label.revised_at.isoformat() if label.revised_at else None,
            "revisions": revisions.get(label.assignment_id, {}),
            "model_a": side_a.subject_model.display_name if side_a else made_by[0],
            "model_b": side_b.subject_model.display_name if side_b else made_by[1],
            "response_a_id": side_a.pk if side_a else None, "response_b_id": side_b.pk if side_b else None,
            "render_a_id": item.render_a_id, "render_b_id": item.render_b_id, "sampling_stratum": item.sampling_stratum,
            "c2_sample_id": item.c2_sample_id, "easel_step_a_id": item.easel_step_a_id, "easel_step_b_id": item.easel_step_b_id,
            **_participant_columns(people.get(label.annotator_id), label, active.get(label.assignment_id)),
            "item_withheld": item.withheld_at is not None,
        })
    return rows_serialise(out, EXPORT_COLUMNS, fmt)
