"""CSV, JSON and LaTeX exports of a finished C² run's leaderboard (like the Ekphrasis snapshot exports).
Every export says whether the run was simulated and whether its task set is demo data."""

from __future__ import annotations

import json

from engine.c2.results import METRICS
from engine.csv_cells import csv_text
from engine.latex import latex_row, latex_table, tex_escape
from leaderboard.c2.models import C2Run
from leaderboard.c2.selectors import METRIC_SHORT, leaderboard_tables
from leaderboard.c2.services.scoring import TASK_TYPE_LABELS


def _flags(run: C2Run) -> tuple[bool, bool]:
    return bool(run.results.get("is_simulated")), bool(run.results.get("is_demo"))


def export_csv(run: C2Run) -> str:
    """One row per model × task type: U, O, S, creativity with their intervals, plus the run's markers."""
    simulated, demo = _flags(run)
    header = (["run", "template", "surprise_policy", "simulated", "demo", "model", "task_type", "n_prompts"]
              + [f"{m}{suffix}" for m in METRICS for suffix in ("", "_low", "_high")]
              + ["combined_text", "combined_vision"])
    rows = []
    results = run.results
    for model in results["models"]:
        combined = results["combined"].get(model, {})
        for task_type, scores in results["scores"].get(model, {}).items():
            rows.append(
                [run.pk, run.template, run.surprise_policy, simulated, demo, model, task_type,
                 scores["n_prompts"]]
                + [scores[m][k] for m in METRICS for k in ("value", "low", "high")]
                + [combined.get("text"), combined.get("vision")]
            )
    return csv_text(header, rows)


def export_json(run: C2Run) -> str:
    simulated, demo = _flags(run)
    return json.dumps({
        "run": run.pk, "task_set": run.task_set.name, "task_set_version": run.task_set.version,
        "simulated": simulated, "demo": demo, "template": run.template, "n_samples": run.n_samples,
        "rater": run.rater_name, "seed": run.seed, "surprise_policy": run.surprise_policy, "tau": run.tau,
        "code_version": run.code_version, "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "results": {k: v for k, v in run.results.items() if k != "prompts"},
        "prompt_scores": run.results.get("prompts", {}),
    }, indent=2)


def _tex_cell(cell) -> str:
    if cell is None:
        return "--"
    text = f"{cell.value:.1f}"
    text = {"best": rf"\textbf{{{text}}}", "second": rf"\underline{{{text}}}"}.get(cell.mark, text)
    if cell.low == cell.high == cell.value:  # a value without an interval (Combined, until it has one)
        return text
    # the interval the page prints under the value, stacked in the cell (plain LaTeX, no package)
    return rf"\begin{{tabular}}[t]{{@{{}}c@{{}}}}{text}\\ \scriptsize[{cell.low:.1f}, {cell.high:.1f}]\end{{tabular}}"


def export_latex(run: C2Run) -> str:
    """Tables 1 and 2 as LaTeX: best bold, second best underlined, each value over its interval as on the page."""
    simulated, demo = _flags(run)
    out = []
    for table in leaderboard_tables(run.results):
        n = len(table.columns)
        head_groups = " & ".join(rf"\multicolumn{{4}}{{c}}{{{tex_escape(label)}}}" for _, label, _ in table.groups)
        head_metrics = " & ".join(METRIC_SHORT[m] for _, m in table.columns)
        body = [latex_row([tex_escape(row.model), _tex_cell(row.combined)] + [_tex_cell(c) for c in row.cells])
                for row in table.rows]
        flag = (" SIMULATED components." if simulated else "") + (" Demo data." if demo else "")
        types = ", ".join(TASK_TYPE_LABELS[t] for t, _, _ in table.groups)
        caption = tex_escape(
            f"C²-Eval, {types}: usefulness, originality, surprise, creativity in [0, 100]; Combined is the mean "
            f"creativity of the task types; each value over its 95% bootstrap interval over prompts. Bold best, underlined second best. Run {run.pk}, {run.template} "
            f"template, n = {run.n_samples}, rater {run.rater_name}, seed {run.seed}, Surprise policy "
            f"{run.surprise_policy}, tau {run.tau}, code {run.code_version}.{flag}")
        out += latex_table(columns="lc" + "c" * n, head=[rf"Model & Combined & {head_groups} \\", rf" & & {head_metrics} \\"],
                           body=body, caption=caption) + [""]
    return "\n".join(out)
