"""A subject model's human-validation figures for its profile page (:mod:`leaderboard.overview`): from the
stored calibrated boards (:class:`~annotation.models.CalibrationRecord`, issue 24), per snapshot and campaign
the newest record (of the current calibration method version)'s people-only and calibrated score, interval, rank and rank set of the model per dimension,
with the number of human labels. Registered with the leaderboard app from ``AnnotationConfig.ready()`` (the
leaderboard app may not import this one). One query."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import CalibrationRecord
from engine.calibration_views import CALIBRATION_METHOD_VERSION
from leaderboard.overview import ValidationFigure

#: Newest calibrated boards read per profile (each is one snapshot × campaign × label version).
RECENT_RECORDS = 50
VIEWS = (("people_only", "people only"), ("calibrated", "calibrated by people"))


def _cell(row: dict) -> str:
    score = "–" if row.get("score") is None else f"{row['score']:.3f}"
    interval = "" if row.get("lo") is None else f" [{row['lo']:.3f}, {row['hi']:.3f}]"
    rank = "unranked" if row.get("rank") is None else f"rank {row['rank']}"
    rank_set = f" (rank set {row['rank_set'][0]}–{row['rank_set'][1]})" if row.get("rank_set") else ""
    return f"{score}{interval}, {rank}{rank_set}"


def model_validation_figures(model) -> list[ValidationFigure]:
    """Figures of ``model`` from the newest calibrated board of each (snapshot, campaign) that ranks it."""
    seen, out = set(), []
    # a board of older formulas (another method version) is not shown: its page computes it again when opened
    records = (CalibrationRecord.objects.filter(method_version=CALIBRATION_METHOD_VERSION).select_related("campaign")
               .order_by("-created_at", "-pk")[:RECENT_RECORDS])
    for record in records:
        if (record.snapshot_id, record.campaign_id) in seen:
            continue
        seen.add((record.snapshot_id, record.campaign_id))
        payload = record.payload
        if model.display_name not in payload.get("models", []):
            continue
        url = reverse("annotation:snapshot_calibration", args=[record.snapshot_id]) + f"?campaign={record.campaign_id}"
        out.append(ValidationFigure(f"Snapshot #{record.snapshot_id}, campaign {record.campaign.name}",
                                    f"{record.n_labels} human labels (label version {record.label_version})", url))
        for dimension, views in payload.get("dimensions", {}).items():
            for view, label in VIEWS:
                row = next((r for r in (views.get(view) or {}).get("rows", []) if r.get("model") == model.display_name), None)
                if row is not None:
                    out.append(ValidationFigure(f"{dimension}, {label}", _cell(row), url))
    return out
