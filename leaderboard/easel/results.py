"""From an EASEL leaderboard payload (:func:`leaderboard.easel.selectors.easel_leaderboard`) to what the
pages and exports show: the Figure 4 chart, the tables and the JSON export (the CSV and LaTeX exports are
:mod:`engine.easel.exports`; every export carries the simulated and demo markers)."""

from __future__ import annotations

import json

from engine.easel.leaderboard import TRAJECTORY_COLUMNS
from leaderboard import charts


def progress_chart(payload: dict) -> str:
    """Figure 4's shape: mean S over the step fraction, one line per agent."""
    series = [
        charts.Series(c["agent"] + (" [simulated]" if c["simulated"] else ""), c["fractions"], c["s"])
        for c in payload["curves"]
    ]
    return charts.line_plot(
        series, title="Average similarity over painting progress (reconstruction tasks)",
        x_label="Painting progress (step ÷ budget)", y_label="Similarity S", x_range=(0.0, 1.0),
    )


def episode_chart(viewer: dict) -> str:
    """One episode's S_t over its steps, Best and Final marked."""
    points = [(0, viewer["initial_s"])] if viewer["initial_s"] is not None else []
    points += [(row["index"], row["s"]) for row in viewer["steps"] if row["s"] is not None]
    if len(points) < 2:
        return ""
    marks = []
    by_index = dict(points)
    if viewer["best_index"] is not None:
        marks.append(("Best", viewer["best_index"], by_index[viewer["best_index"]]))
    if viewer["final_index"] is not None and viewer["final_index"] in by_index:
        marks.append(("Final", viewer["final_index"], by_index[viewer["final_index"]]))
    return charts.line_plot(
        [charts.Series("S_t", [p[0] for p in points], [p[1] for p in points], marks=marks)],
        title="Similarity S_t over the episode", x_label="Step t", y_label="Similarity S",
    )


# ---------------------------------------------------------------- tables for the page


def _interval_cell(value, best: float | None = None) -> dict:
    if value is None:
        return {"text": "–", "interval": "", "best": False}
    return {"text": f"{value[0]:.3f}", "interval": f"[{value[1]:.3f}, {value[2]:.3f}]",
            "best": best is not None and round(value[0], 3) == round(best, 3)}


def reconstruction_table(payload: dict) -> dict:
    """Table 3's rows (best agent value per column marked; for F-B Gap the smallest) and the reference
    rows of Table 2 (anchors and the painter) with their Edge IoU."""
    columns = [("category", name) for name, _ in payload["categories"]] + [("field", f) for f, _ in TRAJECTORY_COLUMNS]
    columns.append(("field", "edge_iou"))

    def value(row, column):
        kind, name = column
        return row["categories"].get(name) if kind == "category" else row[name]

    best = {}
    for column in columns:
        values = [value(r, column)[0] for r in payload["agents"] if value(r, column) is not None]
        if values:
            best[column] = min(values) if column == ("field", "fb_gap") else max(values)

    def cells(row, mark: bool):
        return [_interval_cell(value(row, c), best.get(c) if mark else None) for c in columns]

    heads = [head for _, head in payload["categories"]] + [head for _, head in TRAJECTORY_COLUMNS] + ["Edge IoU"]
    return {
        "heads": heads,
        "agents": [{"row": r, "cells": cells(r, True)} for r in payload["agents"]],
        "references": [{"row": r, "cells": cells(r, False)} for r in payload["references"]],
    }


def semantic_table(payload: dict, means: dict[int, dict] | None = None) -> list[dict]:
    """Table 4's rows; with ``means`` (run id → engine.easel.uncertainty.semantic_means) each row also has
    its mean over the scored tasks with n and interval."""
    rows = []
    for r in payload["semantic"]:
        scores = [("–" if r["scores"].get(name) is None else f"{r['scores'][name]:.3f}") for name, _ in payload["semantic_tasks"]]
        mean = (means or {}).get(r["run"])
        rows.append({"row": r, "scores": scores, "mean": mean,
                     "mean_text": "–" if mean is None else f"{mean['mean']:.3f}",
                     "mean_interval": "" if mean is None or mean["low"] is None else f"[{mean['low']:.3f}, {mean['high']:.3f}]",
                     "maze_invalid": "–" if r["maze_invalid_rate"] is None else f"{r['maze_invalid_rate']:.2f}",
                     "submit": f"{r['avg_submit_pct']:.1f}"})
    return rows


def pairwise_rows(comparison: dict | None) -> list[dict]:
    """The paired bootstrap's pairs as table rows (A above B on the board): Final S(A) − Final S(B) with its
    interval, P(A > B), and whether the interval excludes 0."""
    if not comparison:
        return []
    return [{**p, "text": f"{p['difference']:+.3f}", "interval": f"[{p['low']:+.3f}, {p['high']:+.3f}]",
             "p_text": f"{p['p_a_better']:.2f}", "separated": p["low"] > 0 or p["high"] < 0}
            for p in comparison["pairs"]]


# ---------------------------------------------------------------- exports

def export_json(payload: dict, *, code_version: str = "") -> str:
    return json.dumps({"benchmark": "easel", "simulated": payload["simulated"], "demo": payload["demo"],
                       "code_version": code_version, "leaderboard": payload}, indent=2)
