"""Calibrated columns of the EASEL human-preference table (issue 24): per agent, the rate at which
people prefer its canvas over another agent's canvas of the same reference, corrected by S's sign
— PPI++ for a mean (:func:`engine.calibration.ppi_means`).

The population: every pair of candidate canvases (¼, ½ and last stored canvas of each reconstruction
episode, the set the canvas-similarity items are drawn from, :mod:`annotation.validation_items`) of
the same reference painted by two different agents of the campaign's runs.

* people (Y): per complete item across agents, the share of its k labels that preferred the agent's
  canvas (a tie counts ½); the item gives one outcome to each of its two agents (y and 1 − y);
* S's sign (Ŷ): 1 when the agent's canvas has the larger S (EASEL Eq. 1), 0 when the smaller, ½ when
  equal — on the same items;
* S alone: Ŷ on every other cross-agent pair of the population (nobody labelled those).

The estimate targets the people's preference rate over the labelled pairs' population; λ says how far
S's sign was trusted (λ = 0: people only), the effective n how many labelled pairs alone would give
the same precision. PPI assumes the labelled pairs are a random draw of the population; the "mixed"
rule spreads them over |ΔS| instead, which the page states. Same-episode pairs (one agent's earlier
and later canvas) say nothing about which agent people prefer and stay out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from annotation.canvas_candidates import canvas_candidates
from engine.calibration import ppi_means

ALPHA = 0.1
CHOICE_VALUE = {"A": 1.0, "B": 0.0, "tie": 0.5}


def s_sign(s_a: float, s_b: float) -> float:
    """1[S_a > S_b], ½ when equal: S's prediction that canvas A is preferred (EASEL Eq. 1's ordering)."""
    return 1.0 if s_a > s_b else 0.0 if s_a < s_b else 0.5


def _cross_agent_population(run_ids: Sequence[int]) -> list[tuple[int, int, str, str, float]]:
    """(step a, step b, agent a, agent b, Ŷ) for every cross-agent candidate pair of one reference."""
    from leaderboard.easel.models import EaselEpisode, EaselRun

    runs = list(EaselRun.objects.filter(pk__in=run_ids))
    agent = {r.pk: r.agent_name for r in runs}
    run_of = dict(EaselEpisode.objects.filter(run__in=runs).values_list("pk", "run_id"))
    out = []
    for _task, steps in sorted(canvas_candidates(runs).items()):
        for n, a in enumerate(steps):
            for b in steps[n + 1:]:
                ra, rb = run_of[a.episode_id], run_of[b.episode_id]
                if agent[ra] == agent[rb]:
                    continue
                out.append((a.pk, b.pk, agent[ra], agent[rb], s_sign(a.s, b.s)))
    return out


def _num(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(float(x)) else None


def preference_calibrated_agents(*, items: Mapping[int, Mapping[str, Any]], choices: Mapping[int, Sequence[str]],
                                 k: int) -> dict[str, Any]:
    """Per agent: people's preference rate (classical interval), S's sign alone, and the calibrated
    rate (PPI++ mean) with λ and effective n. ``items`` is :func:`validation_dashboards.similarity_items`
    (each with its ``step_ids`` and ``run_ids``), ``choices`` its canonical choices per item."""
    population = _cross_agent_population(sorted({r for i in items.values() for r in i["run_ids"]}))
    labelled = {frozenset(i["step_ids"]) for i in items.values()}
    agents = sorted({a for row in population for a in row[2:4]}
                    | {a for i in items for a in items[i]["agents"] if items[i]["agents"][0] != items[i]["agents"][1]})
    index = {a: g for g, a in enumerate(agents)}
    hg, hy, hyhat = [], [], []
    n_cross = 0
    for i in sorted(items):
        agent_a, agent_b = items[i]["agents"]
        if agent_a == agent_b:
            continue
        n_cross += 1
        got = [CHOICE_VALUE[c] for c in choices.get(i, ()) if c in CHOICE_VALUE]
        if len(got) != k:
            continue
        y = float(np.mean(got))
        yhat = s_sign(items[i]["a"]["s"], items[i]["b"]["s"])
        hg += [index[agent_a], index[agent_b]]
        hy += [y, 1 - y]
        hyhat += [yhat, 1 - yhat]
    ug, uy = [], []
    for a, b, agent_a, agent_b, yhat in population:
        if frozenset((a, b)) in labelled:
            continue
        ug += [index[agent_a], index[agent_b]]
        uy += [yhat, 1 - yhat]
    out: dict[str, Any] = {"alpha": ALPHA, "n_pairs_labelled": len(hy) // 2, "n_pairs_cross_agent": n_cross,
                           "n_pairs_s_only": len(uy) // 2, "agents": [], "note": ""}
    if not hy:
        out["note"] = "no complete cross-agent pair yet"
        return out
    human = (np.array(hg, int), np.array(hy, float))
    people = ppi_means(len(agents), human, alpha=ALPHA)
    fit = ppi_means(len(agents), human, (human[0], np.array(hyhat, float)),
                    (np.array(ug, int), np.array(uy, float)), alpha=ALPHA)
    u_groups, u_values = np.array(ug, int), np.array(uy, float)
    for name, g in index.items():
        s_only = np.concatenate([np.array(hyhat, float)[human[0] == g], u_values[u_groups == g]])
        out["agents"].append({
            "agent": name, "n_human": int(people.n_human[g]), "n_s_only": int(fit.n_judge_unpaired[g]),
            "people": _num(people.estimates[g]), "people_lo": _num(people.intervals[g][0]),
            "people_hi": _num(people.intervals[g][1]),
            "s_sign": _num(s_only.mean()) if s_only.size else None,
            "calibrated": _num(fit.estimates[g]), "lo": _num(fit.intervals[g][0]), "hi": _num(fit.intervals[g][1]),
            "lam": float(fit.lam[g]), "effective_n": float(fit.effective_human_n[g]),
        })
    out["agents"].sort(key=lambda r: (r["calibrated"] is None, -(r["calibrated"] or 0), r["agent"]))
    return out
