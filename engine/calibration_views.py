"""The three human-calibrated boards of an Ekphrasis snapshot (issue 24) from plain records: "judge
only", "people only" and "calibrated by people" (prediction-powered BT, :mod:`engine.calibration`),
with the style-controlled fits (:mod:`engine.style_control`) and the label budget.

Plain Python so that the site (:mod:`annotation.calibration`, which reads the database) and a
reproducibility bundle's verifier (:mod:`engine.bundle.calibration`, which reads files) run the same
join and the same fits on the same rows, in the same order, and get the same floats.

The join (Ekphrasis App. H.6 and I.4's pairing): a human item and a judge comparison are the same
comparison when they show the same two responses of the same task for the same dimension.

* people: per complete non-gold item, y = the mean of its labels (A = 1, B = 0, tie = ½), A being
  the item's canonical model A;
* judge on the same comparisons: ŷ = the mean of the run's primary verdicts on that pair, in the
  item's orientation (items the judge did not compare stay out of the calibrated fit);
* judge alone: every other pair the run compared, one unit per (task, pair) with its verdicts' mean;
* "judge only" is every primary verdict of the run in the same estimator (one row per call).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.calibration import CalibratedBT, board_budget, ppi_bradley_terry
from engine.style_control import STYLE_FEATURES, style_controlled_bradley_terry, style_features

__all__ = ["ALPHA", "CALIBRATION_METHOD_VERSION", "FIT_ERRORS", "LABEL_VALUE", "RANK_SETS", "STYLE_BOOTSTRAP", "STYLE_MIN_COMPARISONS", "VIEWS",
           "CalibrationInputs", "DimensionData", "HumanItem", "JudgeVerdict", "dimension_views", "joined_inputs", "response_features",
           "views_by_dimension"]

#: The version of the formulas behind a calibrated board: this module's join and views, the PPI++ fit
#: and rank-sets of :mod:`engine.calibration` and the style-controlled fit of :mod:`engine.style_control`.
#: Bump it with any change to them that can move a number on the board: a stored board
#: (``annotation.models.CalibrationRecord``) records the version it was computed with and is computed
#: again when that differs, or an old board would be shown until the next label arrived.
#: 1: the first numbered version (boards stored before carry 0).
#: 2: a model that only a spreadless bridge links (e.g. its only items, against one model, all ties) is unranked
#: instead of given a width-0 interval (:func:`engine.calibration._without_spreadless_bridges`).
CALIBRATION_METHOD_VERSION = 2
#: The level of every interval and rank-set on the page (90 %, as Ekphrasis App. F.3 reports).
ALPHA = 0.1
#: Bootstrap resamples (over tasks) of the style-controlled fits: a page-time budget, stated on the page.
STYLE_BOOTSTRAP = 50
LABEL_VALUE = {"A": 1.0, "B": 0.0, "tie": 0.5}
#: What a fit on the data at hand may raise: its message becomes the view's note (never a 500).
FIT_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError)
VIEWS = ("judge_only", "people_only", "calibrated")
RANK_SETS = "simultaneous at 1 − α: max-statistic over all pairs (Chatzi et al. 2024 construction)"
#: The fewest comparisons a style-controlled fit is made from (fewer: no fit, and the page says so).
STYLE_MIN_COMPARISONS = 10
#: The response fields whose style features the style-controlled fits read.
STYLE_TEXT_FIELDS = ("core_idea", "visual_description")


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
    features: dict[int, dict[str, dict[str, float]]] = field(default_factory=dict)  # response -> field -> features
    n_labels: int = 0
    style_fields: dict[str, str] = field(default_factory=dict)  # dimension -> the response field styled


@dataclass(frozen=True)
class HumanItem:
    """One campaign item as the join reads it: models as indices into the pool (None: not in it)."""

    id: int
    task: str
    dimension: str
    is_gold: bool
    response_a: int | None
    response_b: int | None
    model_a: int | None
    model_b: int | None


@dataclass(frozen=True)
class JudgeVerdict:
    """One primary, successful judge comparison: shown responses, their models' pool indices, winner."""

    task: str
    shown_a: int
    shown_b: int
    model_a: int | None
    model_b: int | None
    winner: str


def response_features(texts: Mapping[int, Mapping[str, str | None]]) -> dict[int, dict[str, dict[str, float]]]:
    """Style features of each response's styled fields (:func:`engine.style_control.style_features`)."""
    return {pk: {f: style_features(by_field.get(f) or "") for f in STYLE_TEXT_FIELDS} for pk, by_field in texts.items()}


def _arrays(rows):
    return (np.array([r[3] for r in rows], int), np.array([r[4] for r in rows], int),
            np.array([r[5] for r in rows], float))


def _dimension_data(items: Sequence[HumanItem], labels: Mapping[int, Sequence[float]], k: int,
                    verdicts_in: Sequence[JudgeVerdict]) -> DimensionData:
    # the judge's primary verdicts, oriented (shown A, shown B) with y = 1 when A won
    verdicts: dict[tuple[str, frozenset], list[tuple[int, float]]] = defaultdict(list)
    j_rows = []
    for v in verdicts_in:
        if v.winner not in LABEL_VALUE or v.model_a is None or v.model_b is None:
            continue
        verdicts[(v.task, frozenset((v.shown_a, v.shown_b)))].append((v.shown_a, LABEL_VALUE[v.winner]))
        j_rows.append((v.task, v.shown_a, v.shown_b, v.model_a, v.model_b, LABEL_VALUE[v.winner]))
    h_i, h_j, h_y, h_tasks, h_resp, judged, yhat = [], [], [], [], [], [], []
    human_keys = set()
    for item in items:
        if (item.is_gold or item.response_a is None or len(labels.get(item.id, ())) != k
                or item.model_a is None or item.model_b is None):
            continue
        key = (item.task, frozenset((item.response_a, item.response_b)))
        human_keys.add(key)
        h_i.append(item.model_a)
        h_j.append(item.model_b)
        h_y.append(float(np.mean(labels[item.id])))
        h_tasks.append(item.task)
        h_resp.append((item.response_a, item.response_b))
        found = verdicts.get(key)
        judged.append(bool(found))
        # the judge's verdicts in the item's orientation: y for "A won" flips when A was shown second
        yhat.append(float(np.mean([y if shown_a == item.response_a else 1 - y for shown_a, y in found]))
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
    return DimensionData(
        human=(np.array(h_i, int), np.array(h_j, int), np.array(h_y, float)), human_tasks=h_tasks,
        human_responses=h_resp, judged=np.array(judged, bool), judge_paired=np.array(yhat, float),
        judge_unpaired=_arrays(unpaired), judge_all=_arrays(j_rows), judge_tasks=[r[0] for r in j_rows],
        judge_responses=[(r[1], r[2]) for r in j_rows],
    )


def joined_inputs(*, model_ids: Sequence[int], names: Sequence[str], items: Sequence[HumanItem],
                  labels: Mapping[int, Sequence[float]], k: int, verdicts: Mapping[str, Sequence[JudgeVerdict]],
                  texts: Mapping[int, Mapping[str, str | None]], n_labels: int,
                  style_fields: Mapping[str, str]) -> CalibrationInputs:
    """The join of the module docstring, per dimension of ``verdicts`` (dimension -> its judge verdicts
    in the run's order). ``labels``: item id -> label values (A = 1, B = 0, tie = ½); an item counts
    when it has exactly ``k``. ``texts``: response id -> field -> text, for the style features."""
    inputs = CalibrationInputs(list(model_ids), list(names), n_labels=n_labels, style_fields=dict(style_fields))
    responses: set[int] = set()
    for dimension, rows in verdicts.items():
        data = _dimension_data([i for i in items if i.dimension == dimension], labels, k, rows)
        inputs.per_dimension[dimension] = data
        responses.update(x for pair in data.human_responses for x in pair)
        responses.update(x for pair in data.judge_responses for x in pair)
    inputs.features = response_features({pk: texts[pk] for pk in responses if pk in texts})
    return inputs


# --- the views ---------------------------------------------------------------------------------


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else round(float(x), 4)


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


def _style(n_models: int, i, j, y, responses, tasks, features, field_name: str, names) -> dict[str, Any] | None:
    if len(y) < STYLE_MIN_COMPARISONS:
        return None
    fi = {k: [features.get(a, {}).get(field_name, {}).get(k, 0.0) for a, _ in responses] for k in STYLE_FEATURES}
    fj = {k: [features.get(b, {}).get(field_name, {}).get(k, 0.0) for _, b in responses] for k in STYLE_FEATURES}
    fit = style_controlled_bradley_terry(n_models, i, j, y, fi, fj, alpha=ALPHA, n_bootstrap=STYLE_BOOTSTRAP,
                                         clusters=tasks)
    order = np.argsort(-np.nan_to_num(fit.scores, nan=-np.inf), kind="stable")  # unranked models (NaN) last
    return {
        "rows": [{"model": names[m], "score": _num(fit.scores[m]), "lo": _num(fit.score_intervals[m][0]),
                  "hi": _num(fit.score_intervals[m][1]), "unadjusted": _num(fit.unadjusted_scores[m]),
                  "rank": r + 1 if math.isfinite(fit.scores[m]) else None} for r, m in enumerate(order)],
        "coefficients": [{"feature": k, "gamma": _num(g), "lo": _num(lo), "hi": _num(hi),
                          "scale": _num(fit.feature_scale[k])} for k, (g, lo, hi) in fit.coefficients.items()],
        "n": fit.n, "n_bootstrap": fit.n_bootstrap,
    }


def _rank_changes(judge: CalibratedBT, calibrated: CalibratedBT, names) -> list[dict[str, Any]]:
    """Where the judge's board and the calibrated board disagree: rank moves, and whether the two
    rank-sets are disjoint (then the judge's rank is outside what people support). Only models both
    boards rank: an unranked model's rank() is a placeholder (last), not the board's opinion."""
    jr, cr = judge.rank(), calibrated.rank()
    out = []
    for m, name in enumerate(names):
        if not (calibrated.identified[m] and judge.identified[m]) or jr[m] == cr[m]:
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
    # a board that ranks nobody says why (no complete item yet, or none linking two models both ways)
    for name, fit, n in (("people only", people, out["n_human_items"]), ("calibrated", calibrated, out["n_human_judged"])):
        if fit is not None and fit.identified.sum() < 2:
            what = "complete human items" if name == "people only" else "complete human items the judge also compared"
            notes.append(f"{name}: nothing to rank yet — {n} {what}, and no two models compared by people with both "
                         "outcomes (an item counts once it has all its labels)")
    field_name = inputs.style_fields.get(dimension)
    if style and field_name:
        # each side on its own: the people's fit failing leaves the judge's, and each says why it is missing
        for key, (i, j, y), responses, tasks in (
                ("style_judge", data.judge_all, data.judge_responses, data.judge_tasks),
                ("style_people", data.human, data.human_responses, data.human_tasks)):
            try:
                out[key] = _style(K, i, j, y, responses, tasks, inputs.features, field_name, names)
                if out[key] is None:
                    out[f"{key}_note"] = (f"Too few comparisons for a style-controlled fit ({len(y)}; it needs at "
                                          f"least {STYLE_MIN_COMPARISONS})")
            except FIT_ERRORS as exc:
                out[key] = None
                out[f"{key}_note"] = f"No style-controlled fit: {exc}"
    out["notes"] = notes
    return out


def views_by_dimension(inputs: CalibrationInputs, *, style: bool = True) -> dict[str, Any]:
    """:func:`dimension_views` of every dimension of ``inputs``, in its order."""
    return {dimension: dimension_views(inputs, dimension, style=style) for dimension in inputs.per_dimension}
