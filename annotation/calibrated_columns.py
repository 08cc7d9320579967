"""The calibrated columns of the C² divergent table and the EASEL human-preference table (issue 24)
as a C² run's calibrated view and as exports (CSV, JSON; LaTeX for the C² run's table).

Why here, in ``annotation``: the columns need the campaigns' labels, and the dependency rule is
annotation -> leaderboard -> engine; the C² leaderboard page only links to the run's calibrated view
by URL name. The numbers are the validation panels' (:mod:`annotation.validation_dashboards`, whose
C² part is :mod:`annotation.calibrated_uos`, EASEL part :mod:`annotation.calibrated_preference`).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.cache import cache
from django.db.models import Count, F, Max, Q, Sum

from annotation import calibrated_preference
from annotation.calibration import label_version_of
from annotation.choices import CampaignKind
from annotation.dashboard_cache import DASHBOARD_TTL_S, campaign_state
from annotation.label_models import UOS_COMPONENTS
from annotation.models import Campaign, Item
from annotation.validation_dashboards import similarity_choices, similarity_items, uos_panel
from engine.calibration_views import CALIBRATION_METHOD_VERSION
from engine.csv_cells import csv_text
from engine.latex import tex_escape
from leaderboard.c2.models import C2Rating, C2Run
from leaderboard.easel.models import EaselEpisode

#: The C² board's divergent U/O/S are the rater's 0–5 scores × 20 (c2-eval §3.2.2): the page's scale.
BOARD_SCALE = 20.0
COMPONENT_SHORT = {"usefulness": "U", "originality": "O", "surprise": "S"}


def uos_campaigns_for_run(run: C2Run) -> list[Campaign]:
    """U-O-S rating campaigns whose items are samples of ``run``, the most labelled first (as
    :func:`annotation.calibration.text_campaigns_for`)."""
    return list(Campaign.objects.filter(kind=CampaignKind.UOS_RATING, items__c2_sample__run=run).distinct()
                .order_by(F("progress__labels").desc(nulls_last=True), "-progress__label_version", "-pk"))


def _scaled(x: float | None) -> float | None:
    return None if x is None else round(x * BOARD_SCALE, 2)


def c2_run_calibrated(*, run: C2Run, campaign: Campaign) -> dict[str, Any]:
    """Per model and component (U, O, S, on the board's 0–100 scale): the rater alone over every
    divergent sample of the run, the people's mean over the rated samples, and the calibrated mean
    with its 90 % interval, λ and effective n (the campaign's validation panel, rescaled)."""
    panel = uos_panel(campaign=campaign)
    rater_all: dict[str, dict[str, list[float]]] = {}
    for name, u, o, s in (C2Rating.objects.filter(sample__run=run, rater_name=run.rater_name, repeat=0,
                                                  status=C2Rating.Status.OK)
                          .values_list("sample__subject_model__display_name", "u", "o", "s")):
        per = rater_all.setdefault(name, {c: [] for c in UOS_COMPONENTS})
        for c, v in zip(UOS_COMPONENTS, (u, o, s)):
            per[c].append(float(v))
    models = []
    for m in panel["models"]:
        cells = []
        for k, c in enumerate(UOS_COMPONENTS):
            cal = m["calibrated"][k] if k < len(m["calibrated"]) else {}
            scores = rater_all.get(m["name"], {}).get(c, [])
            cells.append({
                "component": c, "short": COMPONENT_SHORT[c],
                "rater_only": _scaled(sum(scores) / len(scores)) if scores else None, "n_rater": len(scores),
                "people": _scaled(m["human"][k]), "calibrated": _scaled(cal.get("estimate")),
                "lo": _scaled(cal.get("lo")), "hi": _scaled(cal.get("hi")), "lam": cal.get("lam"),
                "effective_n": cal.get("effective_n"), "n_human": cal.get("n_human"),
                "n_rater_only": cal.get("n_rater_only"),
            })
        models.append({"model": m["name"], "n_rated": m["n"], "cells": cells})
    # models of the run nobody rated (e.g. added after the labels): the rater's column, nothing calibrated
    for name in sorted(set(rater_all) - {m["name"] for m in panel["models"]}):
        cells = []
        for c in UOS_COMPONENTS:
            scores = rater_all[name][c]
            cells.append({"component": c, "short": COMPONENT_SHORT[c],
                          "rater_only": _scaled(sum(scores) / len(scores)) if scores else None, "n_rater": len(scores),
                          "people": None, "calibrated": None, "lo": None, "hi": None, "lam": None, "effective_n": None,
                          "n_human": 0, "n_rater_only": len(scores)})
        models.append({"model": name, "n_rated": 0, "cells": cells})
    return {"run": run.pk, "rater": run.rater_name, "campaign": campaign.pk, "campaign_name": campaign.name,
            "label_version": label_version_of(campaign), "alpha": 0.1, "scale": "0–100 (rater 0–5 × 20)",
            "n_rated": panel["n_rated"], "models": models}


# --- exports ---------------------------------------------------------------------------------------

C2_COLUMNS = ["run", "campaign", "label_version", "model", "component", "rater_only", "people", "calibrated", "lo",
              "hi", "lam", "effective_n", "n_human", "n_rater_only"]


def c2_calibrated_csv(view: dict[str, Any]) -> str:
    rows = [[view["run"], view["campaign_name"], view["label_version"], m["model"], c["component"]]
            + [c[k] for k in C2_COLUMNS[5:]] for m in view["models"] for c in m["cells"]]
    return csv_text(C2_COLUMNS, rows)


def c2_calibrated_latex(view: dict[str, Any]) -> str:
    """The calibrated U/O/S columns as a LaTeX table (the project's escaping, leaderboard.ekphrasis.results)."""
    def cell(c):
        if c["calibrated"] is None:
            return "--"
        return f"{c['calibrated']:.1f} [{c['lo']:.1f}, {c['hi']:.1f}]" if c["lo"] is not None else f"{c['calibrated']:.1f}"

    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{l" + "cc" * len(UOS_COMPONENTS) + "}",
             r"\toprule",
             "Model & " + " & ".join(rf"{COMPONENT_SHORT[c]} rater & {COMPONENT_SHORT[c]} calibrated"
                                     for c in UOS_COMPONENTS) + r" \\", r"\midrule"]
    for m in view["models"]:
        lines.append(" & ".join([tex_escape(m["model"])] + [x for c in m["cells"] for x in (
            "--" if c["rater_only"] is None else f"{c['rater_only']:.1f}", cell(c))]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              r"\caption{" + tex_escape(f"C²-Eval divergent U, O, S on 0–100: the rater alone ({view['rater']}) and calibrated "
                                  f"by people (PPI++ mean, 90% interval) from campaign {view['campaign_name']}, label "
                                  f"version {view['label_version']}, run {view['run']}.") + "}",
              r"\end{table}"]
    return "\n".join(lines) + "\n"


def campaign_calibrated(campaign: Campaign) -> dict[str, Any] | None:
    """The calibrated columns of a U-O-S or canvas-similarity campaign's panel; None for other kinds."""
    base = {"campaign": campaign.pk, "campaign_name": campaign.name, "kind": campaign.kind,
            "label_version": label_version_of(campaign), "alpha": 0.1}
    if campaign.kind == CampaignKind.UOS_RATING:
        return {**base, "models": [{"model": m["name"], "human": m["human"], "rater": m["rater"],
                                    "calibrated": dict(zip(UOS_COMPONENTS, m["calibrated"]))}
                                   for m in uos_panel(campaign=campaign)["models"]]}
    if campaign.kind == CampaignKind.CANVAS_SIMILARITY:
        return {**base, **canvas_calibrated_cached(campaign=campaign)}
    return None


def canvas_calibrated_cached(*, campaign: Campaign) -> dict[str, Any]:
    """The agents' calibrated preference rates of a canvas-similarity campaign (the panel's ``calibrated``,
    :func:`annotation.validation_dashboards.similarity_panel`), read from the cache while its inputs are
    unchanged, as the dashboard is (:mod:`annotation.dashboard_cache`): the key names the campaign's labels
    and items (their versions), the finished reconstruction episodes its S-only pairs come from (a run
    still painting adds some) with their canvases' scores (S rescored in place), and the formulas' version. Computing it took ~0.15 s a request."""
    labels_state, items_state = campaign_state(campaign)
    key = (f"atelier:canvas-calibrated:v{CALIBRATION_METHOD_VERSION}:{labels_state}:{items_state}:"
           f"{_episodes_state(campaign)}")
    found = cache.get(key)
    if found is None:
        found = calibrated_preference.preference_calibrated_agents(
            items=similarity_items(campaign), choices=similarity_choices(campaign), k=campaign.k)
        cache.set(key, found, DASHBOARD_TTL_S)
    return found


#: The step scores the columns read: S (S's sign, Ŷ) and its terms (the items' canonical A and B terms).
SCORE_FIELDS = ("s", "ssim", "l1", "edge_iou")


def _episodes_state(campaign: Campaign) -> str:
    """How many reconstruction episodes of the campaign's runs are done, the latest finish, and their
    stored canvases' scores: the population of cross-agent pairs
    (:func:`annotation.calibrated_preference._cross_agent_population`) and the S it signs them with.

    EASEL scores carry no version or timestamp of their own (``EaselStep.s`` and its terms are plain
    columns), so S rescored in place — the same episodes, no new finish — is seen by the count of scored
    canvases and the sums of S, SSIM, L1 and Edge IoU over them (rounded to 1e-9 so that a database
    summing in another order keeps the key). A checksum, not a proof: a rewrite that left all four sums
    and the count unchanged would go unseen, which a new scoring of whole episodes does not do. One
    query, the episodes' and the steps' aggregates together."""
    items = Item.objects.filter(campaign=campaign, is_gold=False)
    canvas = Q(steps__canvas_png__isnull=False)  # only stored canvases are candidates (annotation.canvas_candidates)
    state = EaselEpisode.objects.filter(
        Q(run__in=items.values("easel_step_a__episode__run")) | Q(run__in=items.values("easel_step_b__episode__run")),
        kind="reconstruction", status=EaselEpisode.Status.DONE,
    ).aggregate(n=Count("pk", distinct=True), last=Max("finished_at"),
                scored=Count("steps", filter=canvas & Q(steps__s__isnull=False)),
                **{f: Sum(f"steps__{f}", filter=canvas) for f in SCORE_FIELDS})
    sums = ":".join(repr(round(state[f] or 0.0, 9)) for f in SCORE_FIELDS)
    return f"{state['n']}:{state['last'].timestamp() if state['last'] else 0}:{state['scored']}:{sums}"


CAMPAIGN_COLUMNS = ["campaign", "label_version", "group", "component", "people", "automatic", "calibrated", "lo", "hi",
                    "lam", "effective_n", "n_human", "n_automatic_only"]


def campaign_calibrated_csv(view: dict[str, Any]) -> str:
    """One row per (model, component) of a U-O-S campaign or per agent of a canvas-similarity one;
    "automatic" is the rater's mean (C²) or S's sign (EASEL)."""
    head = [view["campaign_name"], view["label_version"]]
    rows = []
    for m in view.get("models", []):
        for k, (c, cal) in enumerate(m["calibrated"].items()):
            rows.append(head + [m["model"], c, m["human"][k], m["rater"][k], cal["estimate"], cal["lo"], cal["hi"],
                                cal["lam"], cal["effective_n"], cal["n_human"], cal["n_rater_only"]])
    for a in view.get("agents", []):
        rows.append(head + [a["agent"], "preference_rate", a["people"], a["s_sign"], a["calibrated"], a["lo"], a["hi"],
                            a["lam"], a["effective_n"], a["n_human"], a["n_s_only"]])
    return csv_text(CAMPAIGN_COLUMNS, rows)


def as_json(view: dict[str, Any]) -> str:
    return json.dumps(view, indent=1)


#: A C² run's calibrated-columns export formats.
C2_EXPORTS = {"csv": c2_calibrated_csv, "json": as_json, "tex": c2_calibrated_latex}
