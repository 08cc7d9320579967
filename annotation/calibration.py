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

Each view is recorded once per (snapshot, campaign, label version) in
:class:`annotation.models.CalibrationRecord`, so a board names the labels it was computed from.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import F

from annotation.judge_join import LEADERBOARD_DIMENSION
from annotation.kinds.text_pairwise import PRIMARY_FIELD
from annotation.models import CalibrationRecord, Campaign, CampaignKind, CampaignProgress, Dimension
from engine.calibration import CalibratedBT, board_budget, ppi_bradley_terry
from engine.style_control import STYLE_FEATURES, style_controlled_bradley_terry, style_features
from leaderboard.csv_cells import csv_text
from leaderboard.models import Comparison, LeaderboardSnapshot, Response
from leaderboard.results import _tex

#: The level of every interval and rank-set on the page (90 %, as Ekphrasis App. F.3 reports).
ALPHA = 0.1
#: Bootstrap resamples (over tasks) of the style-controlled fits: a page-time budget, stated on the page.
STYLE_BOOTSTRAP = 50
LABEL_VALUE = {"A": 1.0, "B": 0.0, "tie": 0.5}
#: What a fit on the data at hand may raise: its message becomes the view's note (never a 500).
FIT_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError)
VIEWS = ("judge_only", "people_only", "calibrated")
VIEW_NAMES = {"judge_only": "Judge only", "people_only": "People only", "calibrated": "Calibrated by people"}


@dataclass
class DimensionData:
    """The three data sets of one dimension, as model indices into ``model_ids``."""

    human: tuple[np.ndarray, np.ndarray, np.ndarray]
    human_tasks: list[str]
    human_responses: list[tuple[int, int]]
    judged: np.ndarray  # bool per human item: the judge compared the same pair
    judge_paired: np.ndarray  # ŷ per human item (NaN where not judged)
    judge_unpaired: tuple[np.ndarray, np.ndarray, np.ndarray]
    judge_all: tuple[np.ndarray, np.ndarray, np.ndarray]
    judge_tasks: list[str]
    judge_responses: list[tuple[int, int]]


@dataclass
class CalibrationInputs:
    model_ids: list[int]
    names: list[str]
    per_dimension: dict[str, DimensionData] = field(default_factory=dict)
    features: dict[int, dict[str, float]] = field(default_factory=dict)  # response id -> style features
    n_labels: int = 0


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
        out.append({"name": dimension, "label": DIMENSION_LABELS.get(dimension, dimension), "views": views, "rows": rows,
                    "view_names": [VIEW_NAMES[v] for v in VIEWS]})
    return out


def label_version_of(campaign: Campaign) -> int:
    """The campaign's label version (:class:`~annotation.models.CampaignProgress`: grows on every
    change of its labels): what a calibration record is keyed by."""
    found = CampaignProgress.objects.filter(pk=campaign.pk).values_list("label_version", flat=True).first()
    return int(found or 0)


def calibration_inputs(*, snapshot: LeaderboardSnapshot, campaign: Campaign) -> CalibrationInputs:
    """Gather the human items, their labels and the snapshot run's judge verdicts, joined by pair."""
    from annotation import selectors

    payload = snapshot.payload
    model_ids = [int(m) for m in payload["model_ids"]]
    names = [payload["models"][i] for i in range(len(model_ids))] if isinstance(payload.get("models"), list) else [
        str(m) for m in model_ids]
    index = {m: k for k, m in enumerate(model_ids)}
    items = selectors.item_rows(campaign=campaign)
    labels = defaultdict(list)
    n_labels = 0
    for row in selectors._label_rows(campaign):
        n_labels += 1
        if row.category in LABEL_VALUE:
            labels[row.item_id].append(LABEL_VALUE[row.category])
    inputs = CalibrationInputs(model_ids, names, n_labels=n_labels)
    responses: set[int] = set()
    for dimension, code in LEADERBOARD_DIMENSION.items():
        if code not in payload.get("per_dimension", {}):
            continue
        # the judge's primary verdicts, oriented (shown A, shown B) with y = 1 when A won
        verdicts: dict[tuple[str, frozenset], list[tuple[int, float]]] = defaultdict(list)
        j_rows = []
        for task, a, b, ma, mb, winner in Comparison.objects.filter(
            run_id=snapshot.run_id, dimension=code, kind=Comparison.Kind.PRIMARY, status=Comparison.Status.OK,
        ).values_list("task__external_id", "shown_a_id", "shown_b_id", "shown_a__subject_model_id",
                      "shown_b__subject_model_id", "winner"):
            if winner not in LABEL_VALUE or ma not in index or mb not in index:
                continue
            verdicts[(task, frozenset((a, b)))].append((a, LABEL_VALUE[winner]))
            j_rows.append((task, a, b, index[ma], index[mb], LABEL_VALUE[winner]))
        h_i, h_j, h_y, h_tasks, h_resp, judged, yhat = [], [], [], [], [], [], []
        human_keys = set()
        for item in items.values():
            if (item.dimension != dimension or item.is_gold or item.response_a_id is None
                    or len(labels.get(item.id, ())) != campaign.k
                    or item.model_a_id not in index or item.model_b_id not in index):
                continue
            key = (item.task_external_id, frozenset((item.response_a_id, item.response_b_id)))
            human_keys.add(key)
            h_i.append(index[item.model_a_id])
            h_j.append(index[item.model_b_id])
            h_y.append(float(np.mean(labels[item.id])))
            h_tasks.append(item.task_external_id)
            h_resp.append((item.response_a_id, item.response_b_id))
            found = verdicts.get(key)
            judged.append(bool(found))
            # the judge's verdicts in the item's orientation: y for "A won" flips when A was shown second
            yhat.append(float(np.mean([y if shown_a == item.response_a_id else 1 - y for shown_a, y in found]))
                        if found else math.nan)
        # the judge's comparisons nobody labelled, one unit per (task, pair) as for the people: its
        # verdicts' mean in the orientation of the first (repeats of one pair are not independent)
        units: dict[tuple[str, frozenset], list[tuple]] = defaultdict(list)
        for r in j_rows:
            key = (r[0], frozenset((r[1], r[2])))
            if key not in human_keys:
                units[key].append(r)
        unpaired = []
        for rows in units.values():
            first = rows[0]
            y = float(np.mean([r[5] if r[1] == first[1] else 1 - r[5] for r in rows]))
            unpaired.append((*first[:5], y))

        def arrays(rows):
            return (np.array([r[3] for r in rows], int), np.array([r[4] for r in rows], int),
                    np.array([r[5] for r in rows], float))

        inputs.per_dimension[dimension] = DimensionData(
            human=(np.array(h_i, int), np.array(h_j, int), np.array(h_y, float)), human_tasks=h_tasks,
            human_responses=h_resp, judged=np.array(judged, bool), judge_paired=np.array(yhat, float),
            judge_unpaired=arrays(unpaired), judge_all=arrays(j_rows), judge_tasks=[r[0] for r in j_rows],
            judge_responses=[(r[1], r[2]) for r in j_rows],
        )
        responses.update(x for pair in h_resp for x in pair)
        responses.update(x for r in j_rows for x in (r[1], r[2]))
    fields = {"core_idea", "visual_description"}
    for pk, *texts in Response.objects.filter(pk__in=responses).values_list("pk", *sorted(fields)):
        by_field = dict(zip(sorted(fields), texts))
        inputs.features[pk] = {f: style_features(by_field[f] or "") for f in fields}
    return inputs


# --- the views ---------------------------------------------------------------------------------


def _board(fit: CalibratedBT, names: Sequence[str], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    ranks = fit.rank()
    rows = []
    for m, name in enumerate(names):
        lo, hi = fit.score_interval(m)
        rows.append({
            "model": name, "score": _num(fit.scores[m]), "lo": _num(lo), "hi": _num(hi),
            "rank": ranks[m] if fit.identified[m] else None, "rank_set": list(fit.rank_sets[m]),
            "ranked": bool(fit.identified[m]),
        })
    rows.sort(key=lambda r: (r["rank"] is None, r["rank"] or 0, r["model"]))
    return {"rows": rows, "lam": fit.lam, "effective_human_n": round(fit.effective_human_n, 1), "n_human": fit.n_human,
            "n_judge_unpaired": fit.n_judge_unpaired, "method": fit.method, "alpha": fit.alpha,
            "critical_value": _num(fit.critical_value), **(extra or {})}


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else round(float(x), 4)


def _style(n_models: int, i, j, y, responses, tasks, features, field_name: str, names) -> dict[str, Any] | None:
    if len(y) < 10:
        return None
    fi = {k: [features.get(a, {}).get(field_name, {}).get(k, 0.0) for a, _ in responses] for k in STYLE_FEATURES}
    fj = {k: [features.get(b, {}).get(field_name, {}).get(k, 0.0) for _, b in responses] for k in STYLE_FEATURES}
    fit = style_controlled_bradley_terry(n_models, i, j, y, fi, fj, alpha=ALPHA, n_bootstrap=STYLE_BOOTSTRAP,
                                         clusters=tasks)
    order = np.argsort(-fit.scores)
    return {
        "rows": [{"model": names[m], "score": _num(fit.scores[m]), "lo": _num(fit.score_intervals[m][0]),
                  "hi": _num(fit.score_intervals[m][1]), "unadjusted": _num(fit.unadjusted_scores[m]),
                  "rank": r + 1} for r, m in enumerate(order)],
        "coefficients": [{"feature": k, "gamma": _num(g), "lo": _num(lo), "hi": _num(hi),
                          "scale": _num(fit.feature_scale[k])} for k, (g, lo, hi) in fit.coefficients.items()],
        "n": fit.n, "n_bootstrap": fit.n_bootstrap,
    }


def _rank_changes(judge: CalibratedBT, calibrated: CalibratedBT, names) -> list[dict[str, Any]]:
    """Where the judge's board and the calibrated board disagree: rank moves, and whether the two
    rank-sets are disjoint (then the judge's rank is outside what people support)."""
    jr, cr = judge.rank(), calibrated.rank()
    out = []
    for m, name in enumerate(names):
        if not calibrated.identified[m] or jr[m] == cr[m]:
            continue
        (jb, jw), (cb, cw) = judge.rank_sets[m], calibrated.rank_sets[m]
        out.append({"model": name, "judge_rank": jr[m], "calibrated_rank": cr[m],
                    "judge_rank_set": [jb, jw], "calibrated_rank_set": [cb, cw],
                    "judge_rank_outside_calibrated_set": not (cb <= jr[m] <= cw)})
    return out


def dimension_views(inputs: CalibrationInputs, dimension: str, *, style: bool = True) -> dict[str, Any]:
    """The three boards (and style control, budget) of one dimension as JSON-ready dicts."""
    data = inputs.per_dimension[dimension]
    K = len(inputs.model_ids)
    names = inputs.names
    out: dict[str, Any] = {"dimension": dimension, "n_human_items": int(data.human[2].size),
                           "n_human_judged": int(data.judged.sum()), "n_judge": int(data.judge_all[2].size)}
    notes = []
    judge = people = calibrated = None
    try:
        judge = ppi_bradley_terry(K, data.judge_all, alpha=ALPHA)
        out["judge_only"] = _board(judge, names)
    except FIT_ERRORS as exc:
        notes.append(f"judge only: {exc}")
    try:
        people = ppi_bradley_terry(K, data.human, alpha=ALPHA)
        out["people_only"] = _board(people, names)
    except FIT_ERRORS as exc:
        notes.append(f"people only: {exc}")
    m = data.judged
    try:
        h = tuple(a[m] for a in data.human)
        calibrated = ppi_bradley_terry(K, h, (h[0], h[1], data.judge_paired[m]), data.judge_unpaired, alpha=ALPHA)
        out["calibrated"] = _board(calibrated, names, {"n_human_not_judged": int((~m).sum())})
        out["budget"] = [{"better": names[b.i], "worse": names[b.j], "difference": _num(b.difference),
                          "labels_needed": b.labels_needed, "more_labels": b.more_labels, "note": b.note}
                         for b in board_budget(calibrated)]
    except FIT_ERRORS as exc:
        notes.append(f"calibrated: {exc}")
    if judge is not None and calibrated is not None:
        out["rank_changes"] = _rank_changes(judge, calibrated, names)
    if style:
        field_name = PRIMARY_FIELD[dimension][0]
        try:
            out["style_judge"] = _style(K, *data.judge_all, data.judge_responses, data.judge_tasks, inputs.features,
                                        field_name, names)
            out["style_people"] = _style(K, *data.human, data.human_responses, data.human_tasks, inputs.features,
                                         field_name, names)
        except FIT_ERRORS as exc:
            notes.append(f"style control: {exc}")
    out["notes"] = notes
    return out


def calibration_payload(*, snapshot: LeaderboardSnapshot, campaign: Campaign, style: bool = True) -> dict[str, Any]:
    inputs = calibration_inputs(snapshot=snapshot, campaign=campaign)
    dims = {}
    for dimension in inputs.per_dimension:
        dims[dimension] = dimension_views(inputs, dimension, style=style)
    return {"snapshot": snapshot.pk, "campaign": campaign.pk, "campaign_name": campaign.name,
            "label_version": label_version_of(campaign), "n_labels": inputs.n_labels, "alpha": ALPHA,
            "models": inputs.names, "dimensions": dims,
            "rank_sets": "simultaneous at 1 − α: max-statistic over all pairs (Chatzi et al. 2024 construction)"}


def calibration_record_ensure(*, snapshot: LeaderboardSnapshot, campaign: Campaign) -> CalibrationRecord:
    """The record of the calibrated views for the campaign's current label version: computed and
    stored on first use, read back afterwards (idempotent; a concurrent first use keeps one row)."""
    if campaign.kind != CampaignKind.TEXT_PAIRWISE or campaign.task_set_id != snapshot.run.task_set_id:
        raise ValueError("a calibrated board needs a text-pairwise campaign on the snapshot's task set")
    version = label_version_of(campaign)
    found = CalibrationRecord.objects.filter(snapshot=snapshot, campaign=campaign, label_version=version).first()
    if found is not None:
        return found
    from leaderboard.services.judge_runs import code_version

    payload = calibration_payload(snapshot=snapshot, campaign=campaign)
    try:
        with transaction.atomic():
            return CalibrationRecord.objects.create(
                snapshot=snapshot, campaign=campaign, label_version=payload["label_version"],
                n_labels=payload["n_labels"], code_version=code_version(), payload=payload)
    except IntegrityError:  # another request recorded the same label version first
        return CalibrationRecord.objects.get(snapshot=snapshot, campaign=campaign, label_version=payload["label_version"])


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
    (the project's escaping, :func:`leaderboard.results._tex`)."""
    p = record.payload
    out = []
    for dim in page_dimensions(record):
        views = dim["views"]
        head = " & ".join(rf"\multicolumn{{2}}{{c}}{{{_tex(name)}}}" for name in dim["view_names"])
        out += [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{l" + "cc" * len(VIEWS) + "}",
                r"\toprule", rf"Model & {head} \\", " & " + " & ".join([r"$\theta$ [90\%] & rank [set]"] * len(VIEWS))
                + r" \\", r"\midrule"]
        for row in dim["rows"]:
            cells = [_tex_board_cell(c) for c in row["cells"]]
            out.append(" & ".join([_tex(row["model"])] + cells) + r" \\")
        cal = views.get("calibrated") or {}
        fit = (f" Calibrated: lambda = {cal['lam']:.2f}, effective human n = {cal['effective_human_n']:.1f} from "
               f"{cal['n_human']} labelled pairs and {cal['n_judge_unpaired']} judge-only pairs." if cal else "")
        out += [r"\bottomrule", r"\end{tabular}",
                r"\caption{" + _tex(f"{dim['label']}: judge only, people only and calibrated by people (PPI++ "
                                     f"Bradley-Terry); 90% intervals, simultaneous 90% rank-sets.{fit} Snapshot "
                                     f"{p['snapshot']}, campaign {p['campaign_name']}, label version "
                                     f"{p['label_version']}.") + "}",
                r"\end{table}", ""]
    return "\n".join(out)


def calibration_export_json(record: CalibrationRecord) -> str:
    return json.dumps({"record": record.pk, "created_at": record.created_at.isoformat(),
                       "code_version": record.code_version, **record.payload}, indent=1)


DIMENSION_LABELS = {d.value: d.label for d in Dimension}


#: The calibrated board's export formats (the page's links, the export view).
EXPORTS = {"csv": calibration_export_csv, "json": calibration_export_json, "tex": calibration_export_latex}
