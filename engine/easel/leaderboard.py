"""The EASEL leaderboard of a suite from its finished episodes (easel.txt §5: Tables 2–4, Figure 4).

Plain records in, one JSON-ready dictionary out: the site's selector
(:func:`leaderboard.easel.selectors.easel_leaderboard`) feeds it the stored episodes, and a
reproducibility bundle's verifier (:mod:`engine.bundle.easel`) feeds it the same records read from the
bundle, so both compute the board with this one function.

* reconstruction row (Table 3): per category and overall, the mean over references of Final S with a
  percentile bootstrap over references, resampled within each category (``N_BOOT`` resamples, 90%);
  the same for @50%, AUC, Best, F-B gap and final Edge IoU; mean repeat and invalid rates;
* semantic row (Table 4): the score per semantic task and the engine's semantic diagnostics;
* curve (Figure 4): the mean over references of each episode's S on the common step-fraction grid.

Each bootstrap is seeded from the run's id (``derived_seed("easel-leaderboard", run id)``), so a board
computed twice from the same episodes is the same board.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.easel.semantic import semantic_diagnostics
from engine.seeding import derived_seed

__all__ = [
    "CATEGORIES",
    "EPISODE_FIELDS",
    "INTERVAL_NOTE",
    "N_BOOT",
    "SEMANTIC_TASKS",
    "TRAJECTORY_COLUMNS",
    "BoardRun",
    "easel_board",
]

#: Reconstruction categories in Table 1's order, with Table 3's column heads.
CATEGORIES = (
    ("programmatic", "Prog."),
    ("spatial_geometry", "Spatial"),
    ("abstract_cartoon", "Abs."),
    ("natural", "Nat."),
)
#: Semantic tasks in Table 4's order (our Horse Outline stands where the paper's Apple Outline is).
SEMANTIC_TASKS = (
    ("circle_outline", "Circle"),
    ("horse_outline", "Horse"),
    ("handwriting_hello", "Hello"),
    ("simple_maze", "S-Maze"),
    ("maze", "Maze"),
)
HANDWRITING = "handwriting_hello"
#: Trajectory columns of Table 3, in order (Final is the primary ranking metric, easel.txt §3.3).
TRAJECTORY_COLUMNS = (
    ("final_s", "Final"),
    ("at_50", "@50%"),
    ("auc", "AUC"),
    ("best", "Best"),
    ("fb_gap", "F-B Gap"),
)
N_BOOT = 1000
INTERVAL_LEVEL = 0.90
INTERVAL_NOTE = (f"{int(INTERVAL_LEVEL * 100)}% percentile bootstrap over references ({N_BOOT} resamples, "
                 "stratified by category)")
#: The fields of one finished episode the board reads (``task_id`` is the task's external id).
EPISODE_FIELDS = ("task_id", "kind", "category", "budget", "steps_done", "final_s", "final_edge_iou", "at_50", "auc",
                  "best", "fb_gap", "repeat_rate", "invalid_rate", "undo_count", "submit_step", "semantic_score",
                  "semantic_summary", "recogniser", "progress_curve")
#: Agent kinds whose rows are reference rows (Table 2), not ranked agents.
REFERENCE_KINDS = ("anchor", "painter")


@dataclass(frozen=True)
class BoardRun:
    """One run on the board: its id (which seeds its bootstraps), agent, budget setting and seed."""

    id: int
    agent_kind: str
    agent_name: str
    budget_setting: str
    seed: int
    is_simulated: bool


def _bootstrap(values_by_stratum: Mapping[str, Sequence[float]], seed: int) -> tuple[float, float, float] | None:
    """Mean over references with a percentile bootstrap interval: references are resampled with
    replacement within each stratum (category), so that every resample keeps the suite's design."""
    strata = [np.asarray(v, dtype=np.float64) for v in values_by_stratum.values() if len(v)]
    if not strata:
        return None
    total = sum(len(v) for v in strata)
    mean = float(sum(v.sum() for v in strata) / total)
    rng = np.random.default_rng(seed)
    sums = np.zeros(N_BOOT)
    for v in strata:
        draws = rng.integers(0, len(v), size=(N_BOOT, len(v)))
        sums += v[draws].sum(axis=1)
    # percentile interval: the (1 − level)/2 and (1 + level)/2 quantiles of the resampled means (Efron 1979)
    low, high = np.percentile(sums / total, [50 * (1 - INTERVAL_LEVEL), 50 * (1 + INTERVAL_LEVEL)])
    return mean, float(low), float(high)


def run_label(run: BoardRun) -> str:
    if run.agent_kind == "painter":
        return f"{run.agent_name}, {'budget-aligned' if run.budget_setting == 'aligned' else 'native (250-step)'}"
    return run.agent_name


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def _reconstruction_row(run: BoardRun, episodes: Sequence[Mapping]) -> dict | None:
    recon = [e for e in episodes if e["kind"] == "reconstruction" and e["final_s"] is not None]
    if not recon:
        return None
    base_seed = derived_seed("easel-leaderboard", run.id)

    def interval(field: str, only: str | None = None):
        by_category = defaultdict(list)
        for e in recon:
            if (only is None or e["category"] == only) and e[field] is not None:
                by_category[e["category"]].append(e[field])
        return _bootstrap(by_category, base_seed + len(field) + (0 if only is None else 7 * len(only)))

    categories = {name: interval("final_s", name) for name, _ in CATEGORIES}
    row = {
        "run": run.id, "agent": run_label(run), "kind": run.agent_kind, "budget": run.budget_setting,
        "seed": run.seed, "simulated": run.is_simulated, "n_references": len(recon),
        "categories": categories,
        "edge_iou": interval("final_edge_iou"),
        "repeat_rate": _mean([e["repeat_rate"] for e in recon]),
        "invalid_rate": _mean([e["invalid_rate"] for e in recon]),
    }
    for field, _ in TRAJECTORY_COLUMNS:
        row[field] = interval(field)
    return row


def _semantic_row(run: BoardRun, episodes: Sequence[Mapping]) -> dict | None:
    """Table 4's row: the score per task, then the engine's semantic diagnostics (maze invalid rate,
    undo counts on mazes vs the others, mean submit percentile; engine.easel.semantic)."""
    semantic = {e["task_id"]: e for e in episodes if e["kind"] == "semantic" and e["semantic_score"] is not None}
    if not semantic:
        return None
    diagnostics = semantic_diagnostics([{**e["semantic_summary"], "steps": e["steps_done"]} for e in semantic.values()
                                        if e["semantic_summary"]])
    maze_invalid = diagnostics.get("maze_invalid_rate")
    return {
        "run": run.id, "agent": run_label(run), "kind": run.agent_kind, "simulated": run.is_simulated,
        "scores": {tid: (semantic[tid]["semantic_score"] if tid in semantic else None) for tid, _ in SEMANTIC_TASKS},
        # who read the handwriting (the other tasks are scored geometrically)
        "recognisers": sorted({e["recogniser"] for tid, e in semantic.items() if tid == HANDWRITING and e["recogniser"]}),
        "maze_invalid_rate": None if maze_invalid is None or np.isnan(maze_invalid) else float(maze_invalid),
        "maze_undo": int(diagnostics.get("maze_undo", 0)),
        "non_maze_undo": int(diagnostics.get("non_maze_undo", 0)),
        "avg_submit_pct": float(diagnostics.get("avg_submit_percentile", float("nan"))),
    }


def _curve(run: BoardRun, episodes: Sequence[Mapping]) -> dict | None:
    curves = [e["progress_curve"] for e in episodes if e["kind"] == "reconstruction" and e["progress_curve"]]
    if not curves:
        return None
    mean = np.mean(np.asarray(curves, dtype=np.float64), axis=0)  # mean S over references at each grid point
    return {"run": run.id, "agent": run_label(run), "kind": run.agent_kind, "simulated": run.is_simulated,
            "fractions": [float(x) for x in np.linspace(0.0, 1.0, len(mean))], "s": [float(v) for v in mean]}


def easel_board(*, task_set: Mapping, demo: bool, runs: Sequence[BoardRun],
                episodes: Mapping[int, Sequence[Mapping]]) -> dict:
    """Table 3 (agents, with anchors and the painter as reference rows, Table 2), Table 4 and the
    Figure 4 curves of a suite. ``runs``: the newest finished run of each agent and budget setting;
    ``episodes``: run id → its finished episodes (dicts with :data:`EPISODE_FIELDS`)."""
    agents_rows, reference_rows, semantic_rows, curves = [], [], [], []
    for run in runs:
        run_episodes = episodes.get(run.id, [])
        row = _reconstruction_row(run, run_episodes)
        if row is not None:
            (reference_rows if run.agent_kind in REFERENCE_KINDS else agents_rows).append(row)
        semantic = _semantic_row(run, run_episodes)
        if semantic is not None:
            semantic_rows.append(semantic)
        curve = _curve(run, run_episodes)
        if curve is not None and run.agent_kind != "anchor":
            curves.append(curve)
    agents_rows.sort(key=lambda r: -r["final_s"][0])
    reference_rows.sort(key=lambda r: r["final_s"][0])
    semantic_rows.sort(key=lambda r: r["agent"])
    present = {e["category"] for rows in episodes.values() for e in rows if e["kind"] == "reconstruction"}
    return {
        "task_set": dict(task_set),
        "demo": demo,
        "simulated": any(r.is_simulated for r in runs),
        "interval": INTERVAL_NOTE,
        "categories": [[name, head] for name, head in CATEGORIES if name in present],
        "semantic_tasks": [[name, head] for name, head in SEMANTIC_TASKS],
        "agents": agents_rows,
        "references": reference_rows,
        "semantic": semantic_rows,
        "curves": curves,
    }
