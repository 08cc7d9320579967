"""An Ekphrasis leaderboard snapshot (the payload of :func:`engine.leaderboard.build_leaderboard`) as the
model rows its pages show, and as CSV and LaTeX.

These are pure functions of the stored payload and of the snapshot's *facts* — what the CSV and the
LaTeX caption print beside the numbers but the payload does not hold (``SNAPSHOT_FACTS``: the judge, the
simulated and demo flags, the budget, the seed, the task-set and code versions). The site's downloads
call them with the snapshot's fields; a reproducibility bundle records the facts in its manifest
(``board_facts``), so its verifier rebuilds ``board/board.csv`` and ``board/board.tex`` from
``board/board.json`` with these same functions and compares the bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.csv_cells import csv_text
from engine.latex import latex_row, latex_table, tex_escape

__all__ = ["DIMENSION_NAMES", "SNAPSHOT_FACTS", "ModelRow", "export_csv", "export_latex", "model_rows",
           "overall_measure", "z_available"]

DIMENSION_NAMES = {"U": "Usefulness", "E": "Expressiveness", "N": "Novelty"}
#: What a snapshot's CSV and LaTeX print that its payload does not hold.
SNAPSHOT_FACTS = ("judge", "simulated", "demo", "budget_per_task", "seed", "task_set_version", "code_version")


@dataclass(frozen=True)
class ModelRow:
    rank: int
    name: str
    overall: float
    overall_low: float
    overall_high: float
    z: dict
    winrate: dict
    winrate_low: dict
    winrate_high: dict
    tier: dict
    comparisons: int = 0


def z_available(payload: Mapping[str, Any]) -> bool:
    """Snapshots before the small-pool rule carry no flag: z was printed from two models up."""
    return payload.get("z_available", len(payload["models"]) >= 3)


def overall_measure(payload: Mapping[str, Any]) -> str:
    return payload.get("overall_measure") or "Overall VCI (mean z over dimensions)"


def model_rows(payload: Mapping[str, Any]) -> list[ModelRow]:
    """One row per model, best Overall first (the payload's ``order``)."""
    dims = payload["dimensions"]
    per = payload["per_dimension"]
    tiers = {d: {m: t + 1 for t, members in enumerate(per[d]["tiers"]) for m in members} for d in dims}
    rows = []
    for rank, m in enumerate(payload["order"], start=1):
        rows.append(
            ModelRow(
                rank=rank,
                name=payload["models"][m],
                overall=payload["overall"][m],
                overall_low=payload["overall_ci90"][0][m],
                overall_high=payload["overall_ci90"][1][m],
                z={d: per[d]["z"][m] for d in dims},
                winrate={d: per[d]["winrate"][m] for d in dims},
                winrate_low={d: per[d]["winrate_ci90"][0][m] for d in dims},
                winrate_high={d: per[d]["winrate_ci90"][1][m] for d in dims},
                tier={d: tiers[d].get(m) for d in dims},
                # Each comparison counts once per model in it: wins + losses + ties over dimensions.
                comparisons=int(sum((per[d]["wins"][m] or 0) + (per[d]["losses"][m] or 0) + (per[d]["ties"][m] or 0)
                                    for d in dims)),
            )
        )
    return rows


def export_csv(payload: Mapping[str, Any], facts: Mapping[str, Any]) -> str:
    """One row per model: Overall and per dimension win rate, interval, z and tier; the judge and the
    simulated/demo markers on every row, so a copied row keeps them (README: every export)."""
    dims = payload["dimensions"]
    overall = "overall_vci" if z_available(payload) else "overall_mean_winrate"
    header = (["rank", "model", overall, f"{overall}_ci90_low", f"{overall}_ci90_high"]
              + [f"{d}_{k}" for d in dims for k in ("winrate", "winrate_ci90_low", "winrate_ci90_high", "z", "tier")]
              + ["comparisons", "judge", "simulated_judge", "demo_data"])
    return csv_text(header, (
        [r.rank, r.name, r.overall, r.overall_low, r.overall_high]
        + [v for d in dims for v in (r.winrate[d], r.winrate_low[d], r.winrate_high[d], r.z[d], r.tier[d])]
        + [r.comparisons, facts["judge"], facts["simulated"], facts["demo"]]
        for r in model_rows(payload)
    ))


def export_latex(payload: Mapping[str, Any], facts: Mapping[str, Any]) -> str:
    """The board as a booktabs table: Overall and each dimension's win rate with its 90% interval (and z);
    the caption names the judge, budget, seed, task-set and code versions and the simulated/demo flags."""
    dims = payload["dimensions"]
    head = " & ".join(tex_escape(h) for h in ["Model", "Overall" if z_available(payload) else "Mean win rate"]
                      + [DIMENSION_NAMES[d] for d in dims])
    body = []
    for r in model_rows(payload):
        cells = [tex_escape(r.name), f"{r.overall:+.2f} [{r.overall_low:+.2f}, {r.overall_high:+.2f}]"]
        cells += [f"{r.winrate[d]:.3f} [{r.winrate_low[d]:.3f}, {r.winrate_high[d]:.3f}]"
                  + ("" if r.z[d] is None else f" ({r.z[d]:+.2f})") for d in dims]
        body.append(latex_row(cells))
    flag = " Simulated judge (not a real evaluation)." if facts["simulated"] else ""
    flag += " Demo data." if facts["demo"] else ""
    without_z = payload.get("overall_measure") or "mean expected win rate (z needs at least 3 models)"
    caption = (("Overall VCI" if z_available(payload) else tex_escape(without_z[0].upper() + without_z[1:]))
               + r" with 90\% task-bootstrap interval; per dimension BT expected win rate [90\% interval] (z). "
               + tex_escape(f"Judge {facts['judge']}, budget {facts['budget_per_task']}/task, seed {facts['seed']}, "
                            f"task set v{facts['task_set_version']}, code {facts['code_version']}.{flag}"))
    lines = latex_table(columns="l" + "c" * (len(dims) + 1), head=[head + r" \\"], body=body, caption=caption)
    return "\n".join(lines) + "\n"
