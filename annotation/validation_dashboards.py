"""Dashboard panels of the EASEL and C² validation kinds (issue 13), recomputed from the current
(non-stale, non-gold) labels on every request. Researcher side: model names and instrument scores are
fine here; none of it reaches an annotator.

* U-O-S: ICC among annotators per component (Shrout & Fleiss ICC(2,1) = ICC(A,1) and ICC(2,k) = ICC(A,k),
  two-way random, absolute agreement), Krippendorff's α (ordinal), the human mean against the LLM rater
  per sample (ICC(A,1), Spearman ρ, mean |difference|, Bland–Altman), and per model the human and rater
  means with Kendall τ between the two model orderings.
* Canvas similarity: agreement of sign(ΔS) — and of each component alone — with the human majority
  (ties neutral, App. I.4's PairAgree), and the logistic choice fit's implied weights beside Eq. 1's.
* Handwriting: the human letter-position match rate per canvas beside the recogniser's, their agreement,
  and the canvases where they disagree most.

ICC needs the same number of ratings per target: the k labels of a complete item fill the k rater
columns in the order they were given (annotators are not fully crossed with items, so "rater j" is
"the j-th label"; the two-way model then treats label order as the rater factor).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from annotation.choices import CampaignKind
from annotation.counted_labels import counted_labels
from annotation.label_models import UOS_COMPONENTS, HandwritingLabel, PairwiseLabel, UOSLabel
from annotation.models import Campaign, Item
from engine import agreement
from engine.easel.semantic import letter_match_rate
from engine.method_comparison import bland_altman, instrument_agreement, ordering_agreement
from engine.perception_fit import COMPONENTS, EQ1_WEIGHTS, perception_weights
from leaderboard import charts
from leaderboard.c2.models import C2Rating

COMPONENT_NAMES = {"usefulness": "Usefulness (U)", "originality": "Originality (O)", "surprise": "Surprise (S)"}
SIMILARITY_TERMS = (("s", "S (Eq. 1)"), ("ssim", "SSIM alone"), ("one_minus_l1", "1 − L1 alone"), ("edge_iou", "Edge IoU alone"))
#: Canvases listed as "where they disagree most".
DISAGREEMENT_ROWS = 10


def _complete(rows_by_item: Mapping[int, list], k: int) -> dict[int, list]:
    return {item: rows for item, rows in rows_by_item.items() if len(rows) == k}


def _icc(table: list[list[float]]) -> tuple[Any, Any, str]:
    try:
        result = agreement.intraclass_correlation(table)
        return result["ICC2"], result["ICC2k"], ""
    except ValueError as exc:
        return None, None, str(exc)


def _alpha(rows_by_item: Mapping[int, list[dict]], field: str) -> tuple[float | None, str]:
    annotators = sorted({r["annotator"] for rows in rows_by_item.values() for r in rows})
    items = sorted(rows_by_item)
    if not annotators or not items:
        return None, "no labels yet"
    data = np.full((len(annotators), len(items)), np.nan)
    where = {a: i for i, a in enumerate(annotators)}
    for j, item in enumerate(items):
        for r in rows_by_item[item]:
            data[where[r["annotator"]], j] = r[field]
    try:
        return agreement.krippendorff_alpha(data, level="ordinal"), ""
    except ValueError as exc:
        return None, str(exc)


# ---------------------------------------------------------------------------------------------------
# U-O-S
# ---------------------------------------------------------------------------------------------------


def uos_labels_by_item(campaign: Campaign) -> dict[int, list[dict]]:
    """Current labels of the campaign's regular items, per item, in the order they were given."""
    rows = (counted_labels(UOSLabel, campaign_id=campaign.pk).filter(item__is_gold=False)
            .order_by("item_id", "created_at", "pk")
            .values("item_id", "annotator__username", *UOS_COMPONENTS))
    out: dict[int, list[dict]] = defaultdict(list)
    for r in rows:
        out[r["item_id"]].append({"annotator": r["annotator__username"], **{c: r[c] for c in UOS_COMPONENTS}})
    return out


def uos_panel(*, campaign: Campaign) -> dict[str, Any]:
    k = campaign.k
    by_item = uos_labels_by_item(campaign)
    complete = _complete(by_item, k)
    samples = {i["id"]: i for i in Item.objects.filter(campaign=campaign, is_gold=False).values(
        "id", "c2_sample_id", "c2_sample__subject_model__display_name", "c2_sample__run__rater_name",
        "c2_sample__run_id")}
    rater = {}
    for r in C2Rating.objects.filter(sample_id__in=[s["c2_sample_id"] for s in samples.values()], repeat=0,
                                     status=C2Rating.Status.OK).values("sample_id", "rater_name", "u", "o", "s"):
        rater[(r["sample_id"], r["rater_name"])] = {"usefulness": r["u"], "originality": r["o"], "surprise": r["s"]}
    rater_names = sorted({s["c2_sample__run__rater_name"] for s in samples.values()})
    # (item id -> the rater's scores of its sample), for complete items the run's rater scored
    rated = {item: rater[(samples[item]["c2_sample_id"], samples[item]["c2_sample__run__rater_name"])]
             for item in complete if (samples[item]["c2_sample_id"], samples[item]["c2_sample__run__rater_name"]) in rater}
    dimensions = []
    for c in UOS_COMPONENTS:
        table = [[r[c] for r in complete[i]] for i in sorted(complete)]
        if k < 2:
            single, average, icc_note = None, None, "needs k ≥ 2 annotators per item"
        elif len(table) < 2:  # said in the researcher's words, not as the engine's array-shape error
            single, average, icc_note = None, None, f"needs two samples with all k = {k} ratings; {len(table)} so far"
        else:
            single, average, icc_note = _icc(table)
        alpha, alpha_note = _alpha(by_item, c)
        human = [float(np.mean([r[c] for r in complete[i]])) for i in sorted(rated)]
        machine = [float(rated[i][c]) for i in sorted(rated)]
        vs = ba = None
        chart = ""
        if human:
            vs, ba = instrument_agreement(human, machine), bland_altman(human, machine)
            chart = charts.bland_altman_plot(
                ba.means, ba.differences, bias=ba.bias, lower=ba.lower, upper=ba.upper,
                title=f"Bland–Altman: {COMPONENT_NAMES[c]}, human mean vs LLM rater (n = {ba.n})",
                x_label="mean of human mean and rater score (0–5)", y_label="human mean − rater score")
        dimensions.append({"code": c, "label": COMPONENT_NAMES[c], "n_complete": len(table), "icc_single": single,
                           "icc_average": average, "icc_note": icc_note, "alpha": alpha, "alpha_note": alpha_note,
                           "vs_rater": vs, "bland_altman": ba, "chart": chart})
    # per model: human means beside the rater's, over the same complete, rated items
    per_model: dict[str, list[int]] = defaultdict(list)
    for item in rated:
        per_model[samples[item]["c2_sample__subject_model__display_name"]].append(item)
    models = []
    for name, items in sorted(per_model.items()):
        models.append({"name": name, "n": len(items),
                       "human": [float(np.mean([np.mean([r[c] for r in complete[i]]) for i in items])) for c in UOS_COMPONENTS],
                       "rater": [float(np.mean([rated[i][c] for i in items])) for c in UOS_COMPONENTS]})
    # issue 24: the people's means calibrated by the rater's scores of the samples nobody rated
    from annotation.calibrated_uos import uos_calibrated_models

    calibrated = uos_calibrated_models(samples=samples, complete=complete, rated=rated, components=UOS_COMPONENTS)
    for m in models:
        m["calibrated"] = calibrated.get(m["name"], [])
    taus = []
    for j, c in enumerate(UOS_COMPONENTS):
        taus.append({"label": COMPONENT_NAMES[c], **vars(ordering_agreement([m["human"][j] for m in models],
                                                                           [m["rater"][j] for m in models]))})
    taus.append({"label": "Mean of U, O, S", **vars(ordering_agreement([np.mean(m["human"]) for m in models],
                                                                     [np.mean(m["rater"]) for m in models]))})
    return {"dimensions": dimensions, "models": models, "taus": taus, "rater_names": rater_names,
            "n_rated": len(rated), "n_complete": len(complete), "n_items": len(samples)}


# ---------------------------------------------------------------------------------------------------
# Canvas similarity
# ---------------------------------------------------------------------------------------------------


def _terms(step: Mapping[str, float]) -> dict[str, float]:
    return {"s": step["s"], "ssim": step["ssim"], "one_minus_l1": 1.0 - step["l1"], "edge_iou": step["edge_iou"]}


def similarity_items(campaign: Campaign) -> dict[int, dict[str, Any]]:
    """Item id -> canonical A and B terms (S, SSIM, 1 − L1, Edge IoU) and their agents."""
    fields = ["s", "ssim", "l1", "edge_iou"]
    out = {}
    for r in Item.objects.filter(campaign=campaign, is_gold=False).values(
            "id", "key", *(f"easel_step_{side}__{f}" for side in "ab" for f in fields),
            "easel_step_a__episode__run__agent_name", "easel_step_b__episode__run__agent_name",
            "easel_step_a__index", "easel_step_b__index", "sampling_stratum", "easel_step_a_id", "easel_step_b_id",
            "easel_step_a__episode__run_id", "easel_step_b__episode__run_id"):
        a = _terms({f: r[f"easel_step_a__{f}"] for f in fields})
        b = _terms({f: r[f"easel_step_b__{f}"] for f in fields})
        out[r["id"]] = {"key": r["key"], "a": a, "b": b, "stratum": r["sampling_stratum"],
                        "agents": (r["easel_step_a__episode__run__agent_name"], r["easel_step_b__episode__run__agent_name"]),
                        "steps": (r["easel_step_a__index"], r["easel_step_b__index"]),
                        "step_ids": (r["easel_step_a_id"], r["easel_step_b_id"]),
                        "run_ids": (r["easel_step_a__episode__run_id"], r["easel_step_b__episode__run_id"])}
    return out


def similarity_choices(campaign: Campaign) -> dict[int, list[str]]:
    """Item id -> canonical choices (A, B, tie) of its current labels."""
    out: dict[int, list[str]] = defaultdict(list)
    for item, choice in (counted_labels(PairwiseLabel, campaign_id=campaign.pk).filter(item__is_gold=False)
                         .order_by("item_id", "created_at", "pk").values_list("item_id", "choice")):
        out[item].append(choice)
    return out


def majority_share(choices: Sequence[str]) -> float:
    """p = 1 for a strict A majority, 0 for B, ½ for a tie majority or no majority (ties neutral)."""
    top = agreement.majority_label(list(choices))
    return 1.0 if top == "A" else 0.0 if top == "B" else 0.5


def similarity_panel(*, campaign: Campaign, seed: int | None = None) -> dict[str, Any]:
    items = similarity_items(campaign)
    choices = similarity_choices(campaign)
    complete = [i for i in sorted(items) if len(choices.get(i, [])) == campaign.k]
    rows = []
    if complete:
        p = [majority_share(choices[i]) for i in complete]
        for term, label in SIMILARITY_TERMS:
            delta = [items[i]["a"][term] - items[i]["b"][term] for i in complete]
            rows.append({"term": term, "label": label, "result": agreement.pair_sign_agreement(delta, p)})
    fit, fit_note = None, ""
    labelled = [(i, c) for i in sorted(items) for c in choices.get(i, [])]
    if labelled:
        deltas = [[items[i]["a"][t] - items[i]["b"][t] for t in COMPONENTS] for i, _ in labelled]
        try:
            fit = perception_weights(deltas, [c for _, c in labelled], [i for i, _ in labelled],
                                     seed=campaign.pk if seed is None else seed)
        except (ValueError, np.linalg.LinAlgError) as exc:
            fit_note = str(exc)
    else:
        fit_note = "no labels yet"
    weights = []
    if fit is not None:
        for j, (name, paper) in enumerate(zip(("SSIM", "1 − L1", "Edge IoU"), EQ1_WEIGHTS)):
            lo, hi = fit.intervals[j]
            weights.append({"name": name, "paper": paper, "implied": fit.weights[j], "low": lo, "high": hi,
                            "coef": fit.fit.coef[j], "se": fit.fit.se[j],
                            "paper_inside": bool(np.isfinite(lo) and lo <= paper <= hi)})
    # issue 24: the agents' human preference rate calibrated by S's sign on every cross-agent pair
    from annotation.calibrated_preference import preference_calibrated_agents

    return {"rows": rows, "n_complete": len(complete), "n_items": len(items), "fit": fit, "fit_note": fit_note,
            "weights": weights, "calibrated": preference_calibrated_agents(items=items, choices=choices, k=campaign.k)}


# ---------------------------------------------------------------------------------------------------
# Handwriting
# ---------------------------------------------------------------------------------------------------


def handwriting_panel(*, campaign: Campaign) -> dict[str, Any]:
    canvases = {r["id"]: r for r in Item.objects.filter(campaign=campaign, is_gold=False).values(
        "id", "key", "payload", "easel_step_a__episode__semantic_detail", "easel_step_a__episode__recogniser",
        "easel_step_a__episode__run__agent_name", "easel_step_a__index")}
    labels: dict[int, list[dict]] = defaultdict(list)
    for r in (counted_labels(HandwritingLabel, campaign_id=campaign.pk).filter(item__is_gold=False)
              .order_by("item_id", "created_at", "pk").values("item_id", "text", "unreadable")):
        labels[r["item_id"]].append(r)
    rows = []
    for item_id in sorted(canvases):
        got = labels.get(item_id, [])
        if len(got) != campaign.k:
            continue
        c = canvases[item_id]
        # an earlier canvas carries the reading Tesseract made of it at item creation; the final canvas the episode's
        meta = (c["payload"] or {}).get("meta") or {}
        detail = meta if "recognised" in meta else (c["easel_step_a__episode__semantic_detail"] or {})
        recognised = detail.get("recognised", "")
        recogniser = meta.get("recogniser") or c["easel_step_a__episode__recogniser"] or "unknown"
        # an unreadable canvas matches no letter position
        human_rates = [0.0 if r["unreadable"] else letter_match_rate(r["text"]) for r in got]
        readings = ["(unreadable)" if r["unreadable"] else r["text"] for r in got]
        letters = Counter("" if r["unreadable"] else "".join(ch for ch in r["text"].lower() if ch.isalpha()) for r in got)
        top, count = letters.most_common(1)[0]
        rows.append({"item_id": item_id, "key": c["key"], "agent": c["easel_step_a__episode__run__agent_name"],
                     "step": c["easel_step_a__index"], "recogniser": recogniser, "recognised": recognised,
                     "recogniser_rate": letter_match_rate(recognised), "human_rate": float(np.mean(human_rates)),
                     "readings": readings,
                     "reading_agrees": count * 2 > len(got) and top == "".join(ch for ch in recognised.lower() if ch.isalpha())})
    agreement_view = None
    if rows:
        agreement_view = instrument_agreement([r["human_rate"] for r in rows], [r["recogniser_rate"] for r in rows])
    for r in rows:
        r["difference"] = r["human_rate"] - r["recogniser_rate"]
    by_disagreement = sorted(rows, key=lambda r: (-abs(r["difference"]), r["item_id"]))
    for rank, r in enumerate(by_disagreement):
        r["among_worst"] = rank < DISAGREEMENT_ROWS and r["difference"] != 0
    return {"rows": rows, "agreement": agreement_view, "by_disagreement": by_disagreement,
            "worst": by_disagreement[:DISAGREEMENT_ROWS], "n_items": len(canvases), "worst_n": DISAGREEMENT_ROWS,
            "recognisers": sorted({r["recogniser"] for r in rows}),
            "reading_agreement": (sum(r["reading_agrees"] for r in rows) / len(rows)) if rows else None}


PANELS = {
    CampaignKind.UOS_RATING: uos_panel,
    CampaignKind.CANVAS_SIMILARITY: similarity_panel,
    CampaignKind.HANDWRITING: handwriting_panel,
}


VALIDATION_KINDS = tuple(PANELS)


def validation_panel(*, campaign: Campaign) -> dict[str, Any] | None:
    """The kind's panel, or None for the Ekphrasis kinds."""
    panel = PANELS.get(campaign.kind)
    return panel(campaign=campaign) if panel else None
