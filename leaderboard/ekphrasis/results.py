"""From a stored leaderboard snapshot to what the results pages and exports show.

The snapshot payload is computed once by :func:`engine.leaderboard.build_leaderboard`;
this module only arranges it (rows, charts, CSV, JSON, LaTeX).
"""

from __future__ import annotations

import json
import math

from engine import leaderboard_exports
from engine.leaderboard_exports import DIMENSION_NAMES, model_rows, z_available
from leaderboard import charts
from leaderboard.comparisons import configuration_differences, side_by_side
from leaderboard.ekphrasis.models import LeaderboardSnapshot

RELIABILITY_ROWS = [
    ("json_repair_rate", "JSON repair rate", "pct"),
    ("tie_rate", "Tie rate", "pct"),
    # Table 11 (App. D.2): every decisive primary call; not gate (v), which reads only the swapped pairs (App. D.3)
    ("a_position_bias_pp", "A-position bias, all decisive primary calls (pp, App. D.2 Table 11)", "pp"),
    ("swap_decisive_consistency", "Swap decisive consistency", "num"),
    ("primary_swap_rank_corr", "Primary–swap BT rank corr.", "num"),
    ("winner_longer_rate", "Winner-longer rate", "num"),
    ("duplicate_consistency", "Duplicate consistency", "num"),
]


def table_rows(payload: dict, overall_tiers: list[list[int]] | None = None) -> list[dict]:
    """Model rows with the per-dimension cells as a list in the payload's dimension order (templates
    cannot index a dict by a loop variable); with ``overall_tiers`` (model indices per tier, best first)
    each row also has its Overall tier."""
    dims = payload["dimensions"]
    tier_of = {m: t + 1 for t, members in enumerate(overall_tiers or []) for m in members}
    return [
        {"row": r, "overall_tier": tier_of.get(payload["order"][r.rank - 1]),
         "cells": [{"dimension": d, "winrate": r.winrate[d], "low": r.winrate_low[d],
                    "high": r.winrate_high[d], "z": r.z[d], "tier": r.tier[d]} for d in dims]}
        for r in model_rows(payload)
    ]


def slice_rows(summary: dict) -> list[dict]:
    """A slice's board (:func:`leaderboard.ekphrasis.uncertainty.slice_board`) as ranked rows: Overall with its
    interval and tier, and per dimension the expected win rate with its interval."""
    tier_of = {m: t + 1 for t, members in enumerate(summary["overall_tiers"]) for m in members}
    low, high = summary["overall_ci90"]
    rows = []
    for rank, m in enumerate(summary["order"], start=1):
        per = summary["per_dimension"]
        rows.append({"rank": rank, "name": summary["models"][m], "overall": summary["overall"][m], "low": low[m],
                     "high": high[m], "tier": tier_of.get(m),
                     "cells": [{"dimension": DIMENSION_NAMES[d], "winrate": per[d]["winrate"][m],
                                "low": per[d]["winrate_ci90"][0][m], "high": per[d]["winrate_ci90"][1][m]}
                               for d in summary["dimensions"]]})
    return rows


def arena_rows(snapshots) -> list[dict]:
    """One row per model of each given snapshot, for the sortable first-screen table: rank, model,
    Overall (VCI, or mean win rate in a small pool) with interval, per-dimension win rates,
    comparisons per model, judge and the simulated/demo flags."""
    out = []
    for snapshot in snapshots:
        payload = snapshot.payload
        with_z = z_available(payload)
        for r in model_rows(payload):
            out.append({
                "snapshot": snapshot, "row": r, "z_available": with_z,
                "dims": [r.winrate.get(d) for d in ("U", "E", "N")],
            })
    return out


def overall_interval_chart(payload: dict) -> str:
    rows = [
        charts.Interval(r.name, r.overall, r.overall_low, r.overall_high)
        for r in model_rows(payload)
    ]
    if z_available(payload):
        return charts.interval_plot(rows, title="Overall VCI with 90% bootstrap intervals", reference=0.0,
                                    axis_label="Overall VCI (mean z over dimensions), 90% task bootstrap")
    return charts.interval_plot(rows, title="Mean expected win rate with 90% bootstrap intervals", reference=0.5,
                                domain=(0.0, 1.0), axis_label="Mean BT expected win rate over dimensions, 90% task bootstrap")


def dimension_interval_charts(payload: dict) -> list[tuple[str, str]]:
    """One interval plot per dimension, titled with the dimension's name; colour = tier, with a legend. The
    plots share one x range (the union of their intervals), so the 0.5 line stands in one place in all."""
    out = []
    lows = [v for d in payload["dimensions"] for v in payload["per_dimension"][d]["winrate_ci90"][0]]
    highs = [v for d in payload["dimensions"] for v in payload["per_dimension"][d]["winrate_ci90"][1]]
    span = (min(lows), max(highs)) if lows else None
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
            rows, title=f"{DIMENSION_NAMES[d]}: BT expected win rate with 90% bootstrap intervals", reference=0.5,
            domain=(0.0, 1.0), tier_legend=True, fmt="{:.3f}", span=span,
            axis_label=f"{DIMENSION_NAMES[d]} — expected win rate vs the other models (0.5 = even)")))
    return out


def rank_heat_map(payload: dict) -> str:
    order = payload["order"]
    matrix = [payload["overall_rank_probabilities"][m] for m in order]
    names = [payload["models"][m] for m in order]
    return charts.heat_map(matrix, names, [f"#{k + 1}" for k in range(len(names))],
                           title="P(model holds rank), Overall, from the task bootstrap",
                           x_label="Rank (1 = best)", y_label="Model", value_label="P(rank)")


def pairwise_matrices(payload: dict) -> list[tuple[str, str]]:
    """Per dimension: observed win rate of the row model over the column model (ties as half a win).
    Snapshots stored before the matrix was recorded show the BT-predicted σ(θ_row − θ_col) instead."""
    order = payload["order"]
    names = [payload["models"][m] for m in order]
    out = []
    for d in payload["dimensions"]:
        per = payload["per_dimension"][d]
        observed = per.get("pairwise_winrate")
        if observed is not None:
            matrix = [[observed[r][c] for c in order] for r in order]
            what = "observed win rate, ties as ½"
        else:
            theta = per["theta"]
            matrix = [[None if r == c else 1.0 / (1.0 + math.exp(-(theta[r] - theta[c]))) for c in order] for r in order]
            what = "BT-predicted win probability"
        out.append((DIMENSION_NAMES[d], charts.heat_map(
            matrix, names, names,
            title=f"{DIMENSION_NAMES[d]}: P(row beats column), {what}",
            x_label=f"{DIMENSION_NAMES[d]}: column = opponent, by Overall rank", y_label="Row model",
            value_label="win rate")))
    return out


def tradeoff_chart(payload: dict) -> str:
    trade = payload.get("tradeoff")
    if not trade:
        return ""
    points = [
        (name, trade["usefulness_pct"][m], trade["novelty_pct"][m], payload["overall"][m] or 0.0)
        for m, name in enumerate(payload["models"])
    ]
    return charts.scatter_plot(points, title="Usefulness–Novelty trade-off", x_label="Usefulness rank percentile (median-centred)",
                               y_label="Novelty rank percentile (median-centred)")


def family_cell(table: dict, bounds: dict | None, dimension: str, m: int) -> tuple[float, float | None, float | None]:
    """Model ``m``'s cell of one family's table (``table``: the snapshot's ``families[family]``) in one row
    (``dimension``: a dimension's letter for its z, ``"avg"`` for the task average) with its 90% interval
    from ``bounds`` (that family's entry of :func:`leaderboard.ekphrasis.uncertainty.family_intervals`;
    None, None without it). The family table and the model profile read their cells through this."""
    values = table["task_avg"] if dimension == "avg" else table["z"][dimension]
    bounds = bounds or {}
    ci = bounds.get("overall_ci90") if dimension == "avg" else (bounds.get("z_ci90") or {}).get(dimension)
    return values[m], (ci[0][m] if ci else None), (ci[1][m] if ci else None)


def family_rows(payload: dict, intervals: dict[str, dict] | None = None) -> list[dict]:
    """Table 3 shape: one row per family × dimension (and task average), one column per model; row best marked.
    With ``intervals`` (:func:`leaderboard.ekphrasis.uncertainty.family_intervals`) each cell carries the 90%
    interval of its z (or of the task average) from the family's own task bootstrap."""
    rows = []
    order = payload["order"]
    for family, table in sorted(payload.get("families", {}).items()):
        bounds = (intervals or {}).get(family)
        for d in payload["dimensions"] + ["avg"]:
            cells = [family_cell(table, bounds, d, m) for m in order]
            best = max(value for value, _, _ in cells)
            rows.append({
                "family": family,
                "dimension": "Task avg." if d == "avg" else DIMENSION_NAMES[d],
                "cells": [{"value": value, "best": value == best, "low": low, "high": high} for value, low, high in cells],
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


def snapshot_facts(snapshot: LeaderboardSnapshot) -> dict:
    """What the snapshot's CSV and LaTeX print beside its payload (:data:`engine.leaderboard_exports.SNAPSHOT_FACTS`)."""
    return {"judge": snapshot.judge_name, "simulated": snapshot.is_simulated, "demo": snapshot.is_demo,
            "budget_per_task": snapshot.budget_per_task, "seed": snapshot.seed,
            "task_set_version": snapshot.task_set_version, "code_version": snapshot.code_version}


def export_csv(snapshot: LeaderboardSnapshot) -> str:
    return leaderboard_exports.export_csv(snapshot.payload, snapshot_facts(snapshot))


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


def export_latex(snapshot: LeaderboardSnapshot) -> str:
    return leaderboard_exports.export_latex(snapshot.payload, snapshot_facts(snapshot))


def comparison_rows(left: dict, right: dict) -> list[dict]:
    """Two snapshots side by side: Overall (with its 90% interval) and rank per model, with the change
    (:func:`leaderboard.comparisons.side_by_side`, the shape every protocol's compare page shares)."""
    def by_name(payload):
        ranks = {payload["models"][m]: k + 1 for k, m in enumerate(payload["order"])}
        low, high = payload["overall_ci90"]
        return {name: (payload["overall"][m], low[m], high[m], ranks[name]) for m, name in enumerate(payload["models"])}

    return side_by_side(by_name(left), by_name(right))


def snapshot_differences(left: LeaderboardSnapshot, right: LeaderboardSnapshot) -> list[dict]:
    """What differs between two snapshots' configurations (judge, seed, budget, task set and its
    version, code version, dimensions, resamples, simulated/demo), each with both values."""
    def describe(s: LeaderboardSnapshot) -> dict:
        return {
            "Task set": s.run.task_set.name, "Task-set version": s.task_set_version, "Judge": s.judge_name,
            "Seed": s.seed, "Budget per task and dimension": s.budget_per_task, "Code version": s.code_version or "unknown",
            "Dimensions": ", ".join(DIMENSION_NAMES.get(d, d) for d in s.payload["dimensions"]),
            "Bootstrap resamples": s.payload.get("n_boot"), "Models": len(s.payload["models"]),
            "Simulated judge": "yes" if s.is_simulated else "no", "Demo data": "yes" if s.is_demo else "no",
        }
    return configuration_differences(describe(left), describe(right))


def comparison_chart(left: LeaderboardSnapshot, right: LeaderboardSnapshot) -> str:
    """Both snapshots' Overall intervals, one pair of rows per model (A above B), when both measure the same thing."""
    if z_available(left.payload) != z_available(right.payload):
        return ""
    rows = []
    for r in comparison_rows(left.payload, right.payload):
        for side, tier in (("left", 0), ("right", 1)):
            if r[f"{side}_overall"] is not None:
                rows.append(charts.Interval(f"{r['name']} ({'A' if side == 'left' else 'B'})", r[f"{side}_overall"],
                                            r[f"{side}_low"], r[f"{side}_high"], tier=tier))
    with_z = z_available(left.payload)
    return charts.interval_plot(
        rows, title=f"Overall with 90% intervals: #{left.pk} (A) and #{right.pk} (B)",
        reference=0.0 if with_z else 0.5, domain=None if with_z else (0.0, 1.0),
        axis_label=("Overall VCI" if with_z else "Mean expected win rate") + "; blue = A, orange = B")
