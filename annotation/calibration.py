"""The human-calibrated views of an Ekphrasis leaderboard snapshot (issue 24): "judge only", "people
only" and "calibrated by people" (prediction-powered BT, :mod:`engine.calibration`), each with
intervals and rank-sets, the style-controlled toggle (:mod:`engine.style_control`) and the label
budget planner.

Why here, in ``annotation``: the views join a text-pairwise campaign's labels to the snapshot's judge
comparisons, and the dependency rule is annotation -> leaderboard -> engine. The leaderboard app
knows nothing of this module; its snapshot page only links to the calibrated page by URL name.

The join (Ekphrasis App. H.6 and I.4's pairing): a human item and a judge comparison are the same
comparison when they show the same two responses of the same task for the same dimension.

* people: per complete non-gold item, y = the mean of its labels (A = 1, B = 0, tie = ½), A being
  the item's canonical model A: the share of annotators who preferred A, ties as half;
* judge on the same comparisons: ŷ = the mean of the run's primary verdicts on that pair, in the
  item's orientation (items the judge did not compare stay out of the calibrated fit, never out of
  "people only");
* judge alone: every other pair the snapshot's run compared (nobody labelled those), one unit per
  (task, pair) with the mean of its verdicts, as for the people.
* "judge only" is every primary verdict of the run in the same estimator (one row per call), so the
  three boards are comparable; the snapshot's own page keeps the official bootstrap board.

Each view is recorded once per (snapshot, campaign, label version, method version) in
:class:`annotation.models.CalibrationRecord`, so a board names the labels it was computed from; the
method version (:data:`engine.calibration_views.CALIBRATION_METHOD_VERSION`) makes a board computed by
older formulas be computed again, not shown until the next label arrives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F

from annotation.choices import CampaignKind, Dimension
from annotation.judge_join import LEADERBOARD_DIMENSION
from annotation.kinds.text_pairwise import PRIMARY_FIELD
from annotation.models import CalibrationRecord, Campaign, CampaignProgress
from engine.calibration_views import (
    ALPHA,
    CALIBRATION_METHOD_VERSION,
    LABEL_VALUE,
    RANK_SETS,
    VIEWS,
    CalibrationInputs,
    HumanItem,
    JudgeVerdict,
    joined_inputs,
    views_by_dimension,
)
from engine.csv_cells import csv_text
from engine.latex import tex_escape
from leaderboard.ekphrasis.models import Comparison, LeaderboardSnapshot
from leaderboard.models import Response

__all__ = ["calibration_inputs", "calibration_payload", "calibration_record_ensure"]

VIEW_NAMES = {"judge_only": "Judge only", "people_only": "People only", "calibrated": "Calibrated by people"}
#: The response field whose style the style-controlled fit of each dimension reads.
STYLE_FIELDS = {str(d): f for d, (f, _) in PRIMARY_FIELD.items()}


def text_campaigns_for(snapshot: LeaderboardSnapshot) -> list[Campaign]:
    """Text-pairwise campaigns on the snapshot's task set, the one with the most live labels first
    (the default board: e.g. the demo's validation campaign before its barely started crowd study),
    then the most recently changed."""
    return list(Campaign.objects.filter(task_set_id=snapshot.run.task_set_id, kind=CampaignKind.TEXT_PAIRWISE)
                .order_by(F("progress__labels").desc(nulls_last=True), "-progress__label_version", "-pk"))


def campaign_choice(campaigns: Sequence[Campaign], wanted: str | None) -> Campaign | None:
    """The campaign asked for by id (among ``campaigns``), else the first; None when there is none
    or the id is not one of them."""
    if wanted:
        return next((c for c in campaigns if str(c.pk) == str(wanted).strip()), None)
    return campaigns[0] if campaigns else None


def records_of(*, snapshot: LeaderboardSnapshot, campaign: Campaign) -> list[CalibrationRecord]:
    """Earlier calibrations of this snapshot by this campaign (one per label version), newest first."""
    return list(CalibrationRecord.objects.filter(snapshot=snapshot, campaign=campaign).defer("payload")[:20])


def page_dimensions(record: CalibrationRecord) -> list[dict[str, Any]]:
    """The record's dimensions, each with its three boards side by side as one table for the page:
    per model (in calibrated order) the judge-only, people-only and calibrated score, interval,
    rank and rank-set."""
    out = []
    for dimension, views in record.payload["dimensions"].items():
        by_view = {v: {r["model"]: r for r in views[v]["rows"]} for v in VIEWS if v in views}
        order = [r["model"] for r in views.get("calibrated", views.get("people_only", views.get("judge_only", {"rows": []})))["rows"]]
        moved = {c["model"]: c for c in views.get("rank_changes", [])}
        rows = [{"model": m, "cells": [by_view.get(v, {}).get(m) for v in VIEWS], "moved": moved.get(m)} for m in order]
        changes = views.get("rank_changes", [])
        calibrated = views.get("calibrated") or {}
        out.append({"name": dimension, "label": DIMENSION_LABELS.get(dimension, dimension), "views": views, "rows": rows,
                    "view_names": [VIEW_NAMES[v] for v in VIEWS],
                    # a rank move is evidence of the judge's bias only where the judge's rank lies outside the
                    # calibrated rank-set; inside it, the labels cannot tell the move from chance
                    "bias_outside": [c for c in changes if c["judge_rank_outside_calibrated_set"]],
                    "moves_inside": [c for c in changes if not c["judge_rank_outside_calibrated_set"]],
                    "n_calibrated_ranked": sum(1 for r in calibrated.get("rows", []) if r.get("ranked"))})
    return out


def label_version_of(campaign: Campaign) -> int:
    """The campaign's label version (:class:`~annotation.models.CampaignProgress`: grows on every
    change of its labels): what a calibration record is keyed by."""
    found = CampaignProgress.objects.filter(pk=campaign.pk).values_list("label_version", flat=True).first()
    return int(found or 0)


def human_items(campaign: Campaign, index: dict[int, int]) -> list[HumanItem]:
    """The campaign's items in the join's terms (models as indices of ``index``: model id -> position)."""
    from annotation import selectors

    return [HumanItem(item.id, item.task_external_id, str(item.dimension), bool(item.is_gold), item.response_a_id,
                      item.response_b_id, index.get(item.model_a_id), index.get(item.model_b_id))
            for item in selectors.item_rows(campaign=campaign).values()]


def calibration_inputs(*, snapshot: LeaderboardSnapshot, campaign: Campaign) -> CalibrationInputs:
    """Gather the human items, their labels and the snapshot run's judge verdicts, joined by pair
    (:func:`engine.calibration_views.joined_inputs`)."""
    from annotation import selectors

    payload = snapshot.payload
    model_ids = [int(m) for m in payload["model_ids"]]
    names = [payload["models"][i] for i in range(len(model_ids))] if isinstance(payload.get("models"), list) else [
        str(m) for m in model_ids]
    index = {m: k for k, m in enumerate(model_ids)}
    labels: dict[int, list[float]] = {}
    n_labels = 0
    for row in selectors._label_rows(campaign):
        n_labels += 1
        if row.category in LABEL_VALUE:
            labels.setdefault(row.item_id, []).append(LABEL_VALUE[row.category])
    verdicts: dict[str, list[JudgeVerdict]] = {}
    for dimension, code in LEADERBOARD_DIMENSION.items():
        if code not in payload.get("per_dimension", {}):
            continue
        verdicts[str(dimension)] = [JudgeVerdict(task, a, b, index.get(ma), index.get(mb), winner)
                                    for task, a, b, ma, mb, winner in Comparison.objects.filter(
            run_id=snapshot.run_id, dimension=code, kind=Comparison.Kind.PRIMARY, status=Comparison.Status.OK,
        ).values_list("task__external_id", "shown_a_id", "shown_b_id", "shown_a__subject_model_id",
                      "shown_b__subject_model_id", "winner")]
    responses = {x for rows in verdicts.values() for v in rows for x in (v.shown_a, v.shown_b)}
    items = human_items(campaign, index)
    responses |= {x for i in items for x in (i.response_a, i.response_b) if x is not None}
    texts = {pk: {"core_idea": core, "visual_description": visual} for pk, core, visual in
             Response.objects.filter(pk__in=responses).values_list("pk", "core_idea", "visual_description")}
    return joined_inputs(model_ids=model_ids, names=names, items=items, labels=labels, k=campaign.k,
                         verdicts=verdicts, texts=texts, n_labels=n_labels, style_fields=STYLE_FIELDS)


def calibration_payload(*, snapshot: LeaderboardSnapshot, campaign: Campaign, style: bool = True) -> dict[str, Any]:
    inputs = calibration_inputs(snapshot=snapshot, campaign=campaign)
    dims = views_by_dimension(inputs, style=style)
    return {"snapshot": snapshot.pk, "campaign": campaign.pk, "campaign_name": campaign.name,
            "label_version": label_version_of(campaign), "n_labels": inputs.n_labels, "alpha": ALPHA,
            "models": inputs.names, "dimensions": dims,
            "rank_sets": RANK_SETS}


def calibration_record_ensure(*, snapshot: LeaderboardSnapshot, campaign: Campaign) -> CalibrationRecord:
    """The record of the calibrated views for the campaign's current label version and the engine's
    current :data:`~engine.calibration_views.CALIBRATION_METHOD_VERSION`: computed and stored on first
    use, read back afterwards (idempotent; a concurrent first use keeps one row). A record of the same
    labels by older formulas is not read back: it stays in the history, the board is computed again."""
    if campaign.kind != CampaignKind.TEXT_PAIRWISE or campaign.task_set_id != snapshot.run.task_set_id:
        raise ValueError("a calibrated board needs a text-pairwise campaign on the snapshot's task set")
    current = CalibrationRecord.objects.filter(snapshot=snapshot, campaign=campaign,
                                               method_version=CALIBRATION_METHOD_VERSION)
    found = current.filter(label_version=label_version_of(campaign)).first()
    if found is not None:
        return found
    from leaderboard.providers import code_version

    payload = calibration_payload(snapshot=snapshot, campaign=campaign)
    try:
        with transaction.atomic():
            return CalibrationRecord.objects.create(
                snapshot=snapshot, campaign=campaign, label_version=payload["label_version"],
                method_version=CALIBRATION_METHOD_VERSION, n_labels=payload["n_labels"], code_version=code_version(),
                payload=payload)
    except IntegrityError:  # another request recorded the same label and method version first
        return current.get(label_version=payload["label_version"])


# --- exports -------------------------------------------------------------------------------------

EXPORT_COLUMNS = ["dimension", "view", "model", "score", "lo", "hi", "rank", "rank_set_best", "rank_set_worst",
                  "lam", "effective_human_n", "n_human", "campaign", "label_version"]


def calibration_export_csv(record: CalibrationRecord) -> str:
    """One row per (dimension, view, model): the three boards and the style-controlled ones."""
    p = record.payload
    rows = []
    for dimension, views in p["dimensions"].items():
        for view in (*VIEWS, "style_judge", "style_people"):
            board = views.get(view)
            if not board:
                continue
            for row in board["rows"]:
                rank_set = row.get("rank_set") or [None, None]
                rows.append([dimension, view, row["model"], row["score"], row["lo"], row["hi"], row["rank"],
                             rank_set[0], rank_set[1], board.get("lam", ""), board.get("effective_human_n", ""),
                             board.get("n_human", ""), p["campaign_name"], p["label_version"]])
    return csv_text(EXPORT_COLUMNS, rows)


def _tex_board_cell(cell: Mapping[str, Any] | None) -> str:
    if not cell or not cell.get("ranked"):
        return "-- & --"  # unranked: no score, rank-set [1, K]
    best, worst = cell["rank_set"]
    lo, hi = ("--" if x is None else f"{x:+.2f}" for x in (cell["lo"], cell["hi"]))
    return f"{cell['score']:+.2f} [{lo}, {hi}] & {cell['rank']} [{best}--{worst}]"


def calibration_export_latex(record: CalibrationRecord) -> str:
    """The three boards of each dimension side by side as LaTeX tables: θ with its 90 % interval and
    rank with its simultaneous rank-set; λ and effective human n of the calibrated fit in the caption
    (the project's escaping, :func:`engine.latex.tex_escape`)."""
    p = record.payload
    out = []
    for dim in page_dimensions(record):
        views = dim["views"]
        head = " & ".join(rf"\multicolumn{{2}}{{c}}{{{tex_escape(name)}}}" for name in dim["view_names"])
        out += [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{l" + "cc" * len(VIEWS) + "}",
                r"\toprule", rf"Model & {head} \\", " & " + " & ".join([r"$\theta$ [90\%] & rank [set]"] * len(VIEWS))
                + r" \\", r"\midrule"]
        for row in dim["rows"]:
            cells = [_tex_board_cell(c) for c in row["cells"]]
            out.append(" & ".join([tex_escape(row["model"])] + cells) + r" \\")
        cal = views.get("calibrated") or {}
        fit = (f" Calibrated: lambda = {cal['lam']:.2f}, effective human n = {cal['effective_human_n']:.1f} from "
               f"{cal['n_human']} labelled pairs and {cal['n_judge_unpaired']} judge-only pairs." if cal else "")
        out += [r"\bottomrule", r"\end{tabular}",
                r"\caption{" + tex_escape(f"{dim['label']}: judge only, people only and calibrated by people (PPI++ "
                                     f"Bradley-Terry); 90% intervals, simultaneous 90% rank-sets.{fit} Snapshot "
                                     f"{p['snapshot']}, campaign {p['campaign_name']}, label version "
                                     f"{p['label_version']}.") + "}",
                r"\end{table}", ""]
    return "\n".join(out)


def calibration_export_json(record: CalibrationRecord) -> str:
    return json.dumps({"record": record.pk, "created_at": record.created_at.isoformat(),
                       "code_version": record.code_version,
                       "method_version": record.method_version, **record.payload}, indent=1)


DIMENSION_LABELS = {d.value: d.label for d in Dimension}


#: The calibrated board's export formats (the page's links, the export view).
EXPORTS = {"csv": calibration_export_csv, "json": calibration_export_json, "tex": calibration_export_latex}
