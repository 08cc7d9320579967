"""CSV, JSON and LaTeX exports of a finished C² run's leaderboard (like the Ekphrasis snapshot exports).
Every export says whether the run was simulated and whether its task set is demo data. The CSV and LaTeX
are :mod:`engine.c2.exports`, given the run's facts."""

from __future__ import annotations

import json

from engine.c2 import exports
from leaderboard.c2.models import C2Run


def run_facts(run: C2Run) -> dict:
    """What the run's CSV and LaTeX print beside its results (:data:`engine.c2.exports.RUN_FACTS`)."""
    return {"run": run.pk, "template": run.template, "n_samples": run.n_samples, "rater": run.rater_name,
            "seed": run.seed, "surprise_policy": run.surprise_policy, "tau": run.tau, "code_version": run.code_version}


def export_csv(run: C2Run) -> str:
    """One row per model × task type: U, O, S, creativity with their intervals, plus the run's markers."""
    return exports.export_csv(run.results, run_facts(run))


def export_json(run: C2Run) -> str:
    simulated, demo = bool(run.results.get("is_simulated")), bool(run.results.get("is_demo"))
    return json.dumps({
        "run": run.pk, "task_set": run.task_set.name, "task_set_version": run.task_set.version,
        "simulated": simulated, "demo": demo, "template": run.template, "n_samples": run.n_samples,
        "rater": run.rater_name, "seed": run.seed, "surprise_policy": run.surprise_policy, "tau": run.tau,
        "code_version": run.code_version, "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "results": {k: v for k, v in run.results.items() if k != "prompts"},
        "prompt_scores": run.results.get("prompts", {}),
    }, indent=2)


def export_latex(run: C2Run) -> str:
    """Tables 1 and 2 as LaTeX: best bold, second best underlined, each value over its interval as on the page."""
    return exports.export_latex(run.results, run_facts(run))
