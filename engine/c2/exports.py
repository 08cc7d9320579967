"""A C² run's results (:func:`engine.c2.results.c2_results`) as Tables 1 and 2 (c2-eval.txt §4: best bold,
second best underlined), and as CSV and LaTeX.

Pure functions of the stored results and of the run's *facts* — what the CSV and the LaTeX caption
print beside the numbers but the results do not hold (``RUN_FACTS``: the run's id, template, n, rater,
seed, Surprise policy, τ and code version). The simulated and demo markers are the results' own
(``is_simulated``, ``is_demo``). The site's downloads call these with the run's fields; a
reproducibility bundle records the facts in its manifest (``board_facts``), so its verifier rebuilds
``board/board.csv`` and ``board/board.tex`` from ``board/board.json`` with these same functions and
compares the bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.c2.results import METRICS
from engine.csv_cells import csv_text
from engine.latex import latex_row, latex_table, tex_escape

__all__ = ["METRIC_SHORT", "RUN_FACTS", "TABLE_TITLES", "TASK_TYPE_LABELS", "Cell", "Table", "TableRow", "export_csv",
           "export_latex", "leaderboard_tables"]

TASK_TYPE_LABELS = {
    "qa": "Question Answering", "code": "Code Generation", "vqa": "Vision Question Answering",
    "story": "Story Telling", "idea": "Idea Generation", "visual_story": "Visual Story Telling",
}
METRIC_SHORT = {"usefulness": "Use.", "originality": "Orig.", "surprise": "Surp.", "creativity": "Crea."}
TABLE_TITLES = {"text": "Table 1 shape: text-based tasks", "vision": "Table 2 shape: multimodal tasks"}
#: What a run's CSV and LaTeX print that its results do not hold.
RUN_FACTS = ("run", "template", "n_samples", "rater", "seed", "surprise_policy", "tau", "code_version")


@dataclass
class Cell:
    value: float
    low: float
    high: float
    mark: str = ""  # "best" | "second" | ""


@dataclass
class TableRow:
    model: str
    combined: Cell | None
    cells: list[Cell | None] = field(default_factory=list)
    rank_set: list[int] | None = None  # the central 95% of the model's bootstrap ranks on Combined


@dataclass
class Table:
    key: str
    title: str
    groups: list[tuple[str, str, int]]  # (task type, label, column count)
    columns: list[tuple[str, str]]  # (task type, metric)
    rows: list[TableRow]


def _mark(cells: list[Cell | None]) -> None:
    """Bold the best and underline the second best value of a column (Tables 1 and 2)."""
    values = sorted({round(c.value, 6) for c in cells if c is not None}, reverse=True)
    for c in cells:
        if c is None or not values:
            continue
        if round(c.value, 6) == values[0]:
            c.mark = "best"
        elif len(values) > 1 and round(c.value, 6) == values[1]:
            c.mark = "second"


def leaderboard_tables(results: Mapping[str, Any]) -> list[Table]:
    """Table 1 (text tasks) and Table 2 (multimodal tasks), each with a row per model, best Combined first."""
    tables = []
    for key, types in results["tables"].items():
        if not types:
            continue
        columns = [(t, m) for t in types for m in METRICS]
        rows = []
        for model in results["models"]:
            scores = results["scores"].get(model, {})
            combined = results["combined"].get(model, {}).get(key)
            rows.append(TableRow(
                model=model,
                combined=Cell(combined, combined, combined) if combined is not None else None,
                cells=[Cell(**scores[t][m]) if t in scores else None for t, m in columns],
            ))
        _mark([r.combined for r in rows])
        for k in range(len(columns)):
            _mark([r.cells[k] for r in rows])
        rows.sort(key=lambda r: -(r.combined.value if r.combined else -1))
        tables.append(Table(key=key, title=TABLE_TITLES[key],
                            groups=[(t, TASK_TYPE_LABELS[t], len(METRICS)) for t in types], columns=columns, rows=rows))
    return tables


def _flags(results: Mapping[str, Any]) -> tuple[bool, bool]:
    return bool(results.get("is_simulated")), bool(results.get("is_demo"))


def export_csv(results: Mapping[str, Any], facts: Mapping[str, Any]) -> str:
    """One row per model × task type (in the results' task-type order): U, O, S, creativity with their
    intervals, plus the run's markers."""
    simulated, demo = _flags(results)
    header = (["run", "template", "surprise_policy", "simulated", "demo", "model", "task_type", "n_prompts"]
              + [f"{m}{suffix}" for m in METRICS for suffix in ("", "_low", "_high")]
              + ["combined_text", "combined_vision"])
    rows = []
    for model in results["models"]:
        combined = results["combined"].get(model, {})
        by_type = results["scores"].get(model, {})
        # the results' order, not the mapping's: a JSON reader (PostgreSQL's jsonb, a bundle's sorted
        # board.json) need not keep the keys in the order the scorer wrote them
        for task_type in (t for t in results["task_types"] if t in by_type):
            scores = by_type[task_type]
            rows.append(
                [facts["run"], facts["template"], facts["surprise_policy"], simulated, demo, model, task_type,
                 scores["n_prompts"]]
                + [scores[m][k] for m in METRICS for k in ("value", "low", "high")]
                + [combined.get("text"), combined.get("vision")]
            )
    return csv_text(header, rows)


def _tex_cell(cell: Cell | None) -> str:
    if cell is None:
        return "--"
    text = f"{cell.value:.1f}"
    text = {"best": rf"\textbf{{{text}}}", "second": rf"\underline{{{text}}}"}.get(cell.mark, text)
    if cell.low == cell.high == cell.value:  # a value without an interval (Combined, until it has one)
        return text
    # the interval the page prints under the value, stacked in the cell (plain LaTeX, no package)
    return rf"\begin{{tabular}}[t]{{@{{}}c@{{}}}}{text}\\ \scriptsize[{cell.low:.1f}, {cell.high:.1f}]\end{{tabular}}"


def export_latex(results: Mapping[str, Any], facts: Mapping[str, Any]) -> str:
    """Tables 1 and 2 as LaTeX: best bold, second best underlined, each value over its interval as on the page."""
    simulated, demo = _flags(results)
    out = []
    for table in leaderboard_tables(results):
        n = len(table.columns)
        head_groups = " & ".join(rf"\multicolumn{{4}}{{c}}{{{tex_escape(label)}}}" for _, label, _ in table.groups)
        head_metrics = " & ".join(METRIC_SHORT[m] for _, m in table.columns)
        body = [latex_row([tex_escape(row.model), _tex_cell(row.combined)] + [_tex_cell(c) for c in row.cells])
                for row in table.rows]
        flag = (" SIMULATED components." if simulated else "") + (" Demo data." if demo else "")
        types = ", ".join(TASK_TYPE_LABELS[t] for t, _, _ in table.groups)
        caption = tex_escape(
            f"C²-Eval, {types}: usefulness, originality, surprise, creativity in [0, 100]; Combined is the mean "
            f"creativity of the task types; each value over its 95% bootstrap interval over prompts. Bold best, "
            f"underlined second best. Run {facts['run']}, {facts['template']} template, n = {facts['n_samples']}, "
            f"rater {facts['rater']}, seed {facts['seed']}, Surprise policy {facts['surprise_policy']}, "
            f"tau {facts['tau']}, code {facts['code_version']}.{flag}")
        out += latex_table(columns="lc" + "c" * n, head=[rf"Model & Combined & {head_groups} \\", rf" & & {head_metrics} \\"],
                           body=body, caption=caption) + [""]
    return "\n".join(out)
