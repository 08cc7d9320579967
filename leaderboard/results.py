"""From a stored leaderboard snapshot to what the results pages and exports show.

The snapshot payload is computed once by :func:`engine.leaderboard.build_leaderboard`;
this module only arranges it (rows, charts, CSV, JSON, LaTeX).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from leaderboard import charts
from leaderboard.csv_cells import csv_text
from leaderboard.models import LeaderboardSnapshot

DIMENSION_NAMES = {"U": "Usefulness", "E": "Expressiveness", "N": "Novelty"}
RELIABILITY_ROWS = [
    ("json_repair_rate", "JSON repair rate", "pct"),
    ("tie_rate", "Tie rate", "pct"),
    ("a_position_bias_pp", "A-position bias, decisive (pp)", "pp"),
    ("swap_decisive_consistency", "Swap decisive consistency", "num"),
    ("primary_swap_rank_corr", "Primary–swap BT rank corr.", "num"),
    ("winner_longer_rate", "Winner-longer rate", "num"),
    ("duplicate_consistency", "Duplicate consistency", "num"),
]


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


def model_rows(payload: dict) -> list[ModelRow]:
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
            )
        )
    return rows


def overall_interval_chart(payload: dict) -> str:
    rows = [
        charts.Interval(r.name, r.overall, r.overall_low, r.overall_high)
        for r in model_rows(payload)
    ]
    return charts.interval_plot(rows, title="Overall VCI with 90% bootstrap intervals", reference=0.0,
                                axis_label="Overall VCI (mean z over dimensions), 90% task bootstrap")


def dimension_interval_charts(payload: dict) -> list[tuple[str, str]]:
    out = []
    for d in payload["dimensions"]:
        per = payload["per_dimension"][d]
        tiers = {m: t for t, members in enumerate(per["tiers"]) for m in members}
        order = sorted(range(len(payload["models"])), key=lambda m: -per["winrate"][m])
        rows = [
            charts.Interval(payload["models"][m], per["winrate"][m], per["winrate_ci90"][0][m],
                            per["winrate_ci90"][1][m], tier=tiers.get(m))
            for m in order
        ]
        out.append((DIMENSION_NAMES[d], charts.interval_plot(
            rows, title=f"{DIMENSION_NAMES[d]}: expected win rate", reference=0.5,
            axis_label="BT expected win rate, 90% task bootstrap; colour = tier")))
    return out


def rank_heat_map(payload: dict) -> str:
    order = payload["order"]
    matrix = [payload["overall_rank_probabilities"][m] for m in order]
    names = [payload["models"][m] for m in order]
    return charts.heat_map(matrix, names, [f"#{k + 1}" for k in range(len(names))],
                           title="P(model holds rank), Overall VCI, from the task bootstrap")


def tradeoff_chart(payload: dict) -> str:
    trade = payload.get("tradeoff")
    if not trade:
        return ""
    points = [
        (name, trade["usefulness_pct"][m], trade["novelty_pct"][m], payload["overall"][m])
        for m, name in enumerate(payload["models"])
    ]
    return charts.scatter_plot(points, title="Usefulness–Novelty trade-off", x_label="Usefulness rank percentile (median-centred)",
                               y_label="Novelty rank percentile (median-centred)")


def family_rows(payload: dict) -> list[dict]:
    """Table 3 shape: one row per family × dimension (and task average), one column per model; row best marked."""
    rows = []
    order = payload["order"]
    for family, table in sorted(payload.get("families", {}).items()):
        for d in payload["dimensions"] + ["avg"]:
            values = table["task_avg"] if d == "avg" else table["z"][d]
            best = max(values[m] for m in order)
            rows.append({
                "family": family,
                "dimension": "Task avg." if d == "avg" else DIMENSION_NAMES[d],
                "cells": [{"value": values[m], "best": values[m] == best} for m in order],
                "residual": None if d == "avg" else table["residual"][d],
            })
    return rows


def reliability_rows(payload: dict) -> list[dict]:
    rel = payload.get("reliability", {})
    dims = [d for d in payload["dimensions"] if d in rel]
    rows = []
    for key, label, kind in RELIABILITY_ROWS:
        cells = []
        for d in dims:
            v = rel[d].get(key)
            if v is None:
                cells.append("n/a")
            elif kind == "pct":
                cells.append(f"{100 * v:.2f}%")
            elif kind == "pp":
                cells.append(f"{v:+.1f} pp")
            else:
                cells.append(f"{v:.3f}")
        rows.append({"label": label, "cells": cells})
    aux = {judge for d in dims for judge in rel[d].get("aux_rank_corr", {})}
    for judge in sorted(aux):
        rows.append({"label": f"Aux rank corr. ({judge})", "cells": [
            "n/a" if rel[d]["aux_rank_corr"].get(judge) is None else f"{rel[d]['aux_rank_corr'][judge]:.3f}" for d in dims
        ]})
    counts = [f"{rel[d].get('n_primary', 0)}" for d in dims]
    rows.append({"label": "Primary calls (n)", "cells": counts})
    return rows


def budget_rows(payload: dict) -> list[dict]:
    calls = payload.get("budget", {}).get("calls", {})
    dims = payload["dimensions"]
    rows = []
    for layer in ["primary", "swap", "duplicate", "auxiliary", "automatic"]:
        if layer in calls:
            per = calls[layer]
            rows.append({"layer": layer, "cells": [per.get(d, 0) for d in dims], "total": sum(per.values())})
    return rows


# ---------------------------------------------------------------- exports


def export_csv(snapshot: LeaderboardSnapshot) -> str:
    payload = snapshot.payload
    dims = payload["dimensions"]
    header = (["rank", "model", "overall_vci", "overall_ci90_low", "overall_ci90_high"]
              + [f"{d}_{k}" for d in dims for k in ("winrate", "winrate_ci90_low", "winrate_ci90_high", "z", "tier")])
    return csv_text(header, (
        [r.rank, r.name, r.overall, r.overall_low, r.overall_high]
        + [v for d in dims for v in (r.winrate[d], r.winrate_low[d], r.winrate_high[d], r.z[d], r.tier[d])]
        for r in model_rows(payload)
    ))


def export_json(snapshot: LeaderboardSnapshot) -> str:
    return json.dumps(
        {
            "snapshot": snapshot.pk,
            "run": snapshot.run_id,
            "task_set_version": snapshot.task_set_version,
            "judge": snapshot.judge_name,
            "simulated": snapshot.is_simulated,
            "demo": snapshot.is_demo,
            "budget_per_task": snapshot.budget_per_task,
            "seed": snapshot.seed,
            "code_version": snapshot.code_version,
            "created_at": snapshot.created_at.isoformat(),
            "leaderboard": snapshot.payload,
        },
        indent=2,
    )


def _tex(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#")):
        text = text.replace(a, b)
    return text


def export_latex(snapshot: LeaderboardSnapshot) -> str:
    payload = snapshot.payload
    dims = payload["dimensions"]
    head = " & ".join(["Model", "Overall"] + [DIMENSION_NAMES[d] for d in dims])
    lines = [
        r"\begin{table}[t]", r"\centering", r"\small",
        r"\begin{tabular}{l" + "c" * (len(dims) + 1) + "}", r"\toprule", head + r" \\", r"\midrule",
    ]
    for r in model_rows(payload):
        cells = [_tex(r.name), f"{r.overall:+.2f} [{r.overall_low:+.2f}, {r.overall_high:+.2f}]"]
        cells += [f"{r.winrate[d]:.3f} ({r.z[d]:+.2f})" for d in dims]
        lines.append(" & ".join(cells) + r" \\")
    flag = " Simulated judge." if snapshot.is_simulated else ""
    flag += " Demo data." if snapshot.is_demo else ""
    lines += [
        r"\bottomrule", r"\end{tabular}",
        r"\caption{Overall VCI with 90\% task-bootstrap interval; per dimension BT expected win rate (z). "
        + _tex(f"Judge {snapshot.judge_name}, budget {snapshot.budget_per_task}/task, seed {snapshot.seed}, "
               f"task set v{snapshot.task_set_version}, code {snapshot.code_version}.{flag}") + "}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def comparison_rows(left: dict, right: dict) -> list[dict]:
    """Two snapshots side by side: Overall VCI and rank per model, with the change."""
    def ranks(payload):
        return {payload["models"][m]: k + 1 for k, m in enumerate(payload["order"])}

    left_rank, right_rank = ranks(left), ranks(right)
    left_overall = dict(zip(left["models"], left["overall"], strict=True))
    right_overall = dict(zip(right["models"], right["overall"], strict=True))
    names = sorted(set(left_rank) | set(right_rank), key=lambda n: (left_rank.get(n, 99), n))
    return [
        {
            "name": n,
            "left_rank": left_rank.get(n), "right_rank": right_rank.get(n),
            "left_overall": left_overall.get(n), "right_overall": right_overall.get(n),
            "rank_change": (left_rank[n] - right_rank[n]) if n in left_rank and n in right_rank else None,
        }
        for n in names
    ]
