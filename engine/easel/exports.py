"""An EASEL leaderboard (the payload of :func:`engine.easel.leaderboard.easel_board`) as CSV and LaTeX:
Table 3's rows (agents, then the reference rows) with their intervals, and Table 4 when semantic episodes
exist. Every export carries the simulated and demo markers.

Pure functions of the payload, which carries everything they print (the suite's name and version and
the flags included): the site's downloads and a reproducibility bundle's ``board/board.csv`` and
``board/board.tex`` are written by them, and the bundle's verifier rebuilds both from
``board/board.json`` with them and compares the bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.csv_cells import csv_text
from engine.easel.leaderboard import TRAJECTORY_COLUMNS
from engine.latex import latex_row, latex_table, tex_escape

__all__ = ["export_csv", "export_latex"]


def _csv_columns(payload: Mapping[str, Any]) -> list[str]:
    columns = ["group", "agent", "kind", "budget", "seed", "simulated", "demo", "n_references"]
    for name, _ in payload["categories"]:
        columns += [f"{name}_final", f"{name}_low", f"{name}_high"]
    for field, _ in TRAJECTORY_COLUMNS:
        columns += [field, f"{field}_low", f"{field}_high"]
    return columns + ["edge_iou", "edge_iou_low", "edge_iou_high", "repeat_rate", "invalid_rate"]


def _triple(value) -> list:
    return list(value) if value is not None else ["", "", ""]


def export_csv(payload: Mapping[str, Any]) -> str:
    """Table 3 rows (agents, then the reference rows), then Table 4 rows in a second block after an empty
    line; every cell through the site's one CSV writer (formula cells neutralised)."""
    rows = []
    for group, agent_rows in (("agent", payload["agents"]), ("reference", payload["references"])):
        for r in agent_rows:
            cells = [group, r["agent"], r["kind"], r["budget"], r["seed"], r["simulated"], payload["demo"], r["n_references"]]
            for name, _ in payload["categories"]:
                cells += _triple(r["categories"].get(name))
            for field, _ in TRAJECTORY_COLUMNS:
                cells += _triple(r[field])
            cells += _triple(r["edge_iou"]) + [r["repeat_rate"], r["invalid_rate"]]
            rows.append(cells)
    text = csv_text(_csv_columns(payload), rows)
    if payload["semantic"]:
        header = (["semantic_agent", "simulated", "demo"] + [name for name, _ in payload["semantic_tasks"]]
                  + ["maze_invalid_rate", "maze_undo", "non_maze_undo", "avg_submit_pct", "recognisers"])
        semantic_rows = [
            [r["agent"], r["simulated"], payload["demo"]]
            + [r["scores"].get(name) for name, _ in payload["semantic_tasks"]]
            + [r["maze_invalid_rate"], r["maze_undo"], r["non_maze_undo"], r["avg_submit_pct"], ";".join(r["recognisers"])]
            for r in payload["semantic"]
        ]
        text += "\r\n" + csv_text(header, semantic_rows)
    return text


def _cell(value, *, interval: bool = True) -> str:
    if value is None:
        return "--"
    if interval:
        return f"{value[0]:.3f} [{value[1]:.3f}, {value[2]:.3f}]"
    return f"{value:.3f}"


def export_latex(payload: Mapping[str, Any]) -> str:
    """Table 3's shape (category breakdown, Final, trajectory diagnostics) with intervals; the reference
    rows below a rule; Table 4 as a second tabular when semantic episodes exist."""
    categories = payload["categories"]
    heads = [tex_escape(head) for head in ["Model"] + [head for _, head in categories]
             + [head for _, head in TRAJECTORY_COLUMNS] + ["Edge IoU"]]

    def row_line(r) -> str:
        name = r["agent"] + (" (simulated)" if r["simulated"] else "")
        cells = [tex_escape(name)] + [_cell(r["categories"].get(c)) for c, _ in categories]
        cells += [_cell(r[field]) for field, _ in TRAJECTORY_COLUMNS] + [_cell(r["edge_iou"])]
        return latex_row(cells)

    body = [row_line(r) for r in payload["agents"]]
    if payload["references"]:
        body.append(r"\midrule")
        body += [row_line(r) for r in payload["references"]]
    flag = " Simulated agents are not models." if payload["simulated"] else ""
    flag += " Demo data." if payload["demo"] else ""
    suite = payload["task_set"]
    lines = latex_table(columns="l" + "c" * (len(heads) - 1), head=[latex_row(heads)], body=body,
                        caption="EASEL reconstruction: mean S per category, trajectory diagnostics and Edge IoU, "
                        + tex_escape(f"{payload['interval']}; reference rows (anchors, painter) below the rule. "
                                     f"Suite {suite['name']} v{suite['version']}.{flag}"))
    if payload["semantic"]:
        tasks = payload["semantic_tasks"]
        heads = [tex_escape(head) for head in ["Model"] + [head for _, head in tasks]
                 + ["Maze Inv.", "Maze Undo", "Non-Maze Undo", "Avg. Submit (%)"]]
        body = []
        for r in payload["semantic"]:
            name = r["agent"] + (" (simulated)" if r["simulated"] else "")
            cells = [tex_escape(name)] + [_cell(r["scores"].get(t), interval=False) for t, _ in tasks]
            cells += [_cell(r["maze_invalid_rate"], interval=False), str(r["maze_undo"]), str(r["non_maze_undo"]),
                      f"{r['avg_submit_pct']:.1f}"]
            body.append(latex_row(cells))
        recognisers = sorted({name for r in payload["semantic"] for name in r["recognisers"]})
        lines += [""] + latex_table(
            columns="l" + "c" * (len(heads) - 1), head=[latex_row(heads)], body=body,
            caption="EASEL semantic tasks (Dice, letter match, route progress). "
            + tex_escape(f"Handwriting recogniser: {', '.join(recognisers) or 'n/a'}.{flag}"))
    return "\n".join(lines) + "\n"
