"""Reads of the EASEL sub-app: run lists and live status, the episode viewer's data, and the leaderboard
of a suite (Tables 2–4, Figure 4) computed from the stored episodes."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Q, QuerySet

from engine.seeding import derived_seed
from leaderboard.easel.models import EaselEpisode, EaselRun, EaselStep
from leaderboard.models import Benchmark, TaskSet
from leaderboard.runs.selectors import run_status

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
#: Trajectory columns of Table 3, in order (Final is the primary ranking metric, easel.txt §3.3).
HANDWRITING = "handwriting_hello"
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


def easel_task_sets() -> QuerySet[TaskSet]:
    return TaskSet.objects.filter(benchmark__kind=Benchmark.Kind.EASEL).annotate(
        n_tasks=Count("tasks", distinct=True)).order_by("-created_at", "-pk")


def easel_task_set_get(pk: int | str | None) -> TaskSet | None:
    """The EASEL task set ``pk`` (None for a missing or malformed id), or the newest one when ``pk`` is None."""
    sets = easel_task_sets()
    if pk is None:
        return sets.first()
    if not str(pk).isdigit():
        return None
    return sets.filter(pk=int(pk)).first()


def run_list(*, task_set: TaskSet | None = None) -> QuerySet[EaselRun]:
    runs = EaselRun.objects.select_related("task_set", "subject_model")
    if task_set is not None:
        runs = runs.filter(task_set=task_set)
    return runs.order_by("-created_at", "-pk")


def run_progress(*, run: EaselRun) -> dict:
    """The live status a run page polls (``followStatus``)."""
    return {
        **run_status(run),
        "episodes_done": run.episodes_done,
        "episodes_total": run.episodes_total,
        "steps_done": run.steps_done,
        "steps_planned": run.steps_planned,
    }


def run_summary(*, run: EaselRun) -> dict[str, float]:
    """Mean Final S per reconstruction category and each semantic task's score (the CLI's closing lines)."""
    out: dict[str, float] = {}
    rows = run.episodes.filter(status=EaselEpisode.Status.DONE).values_list("kind", "category", "final_s", "semantic_score")
    by_category = defaultdict(list)
    for kind, category, final_s, score in rows:
        if kind == "reconstruction" and final_s is not None:
            by_category[category].append(final_s)
        elif score is not None:
            out[f"{category} score"] = score
    for name, _ in CATEGORIES:
        if by_category.get(name):
            out[f"{name} Final S"] = float(np.mean(by_category[name]))
    return out


def run_episodes(*, run: EaselRun) -> QuerySet[EaselEpisode]:
    return run.episodes.select_related("task").order_by("position", "pk").defer("final_canvas_png")


# ---------------------------------------------------------------- the episode viewer


def episode_viewer_data(*, episode: EaselEpisode) -> dict:
    """What the viewer script needs: one entry per stored step (no image bytes: canvases are fetched by
    URL), where Best and Final are, and the initial S."""
    steps = list(
        episode.steps.order_by("index").values(
            "index", "action", "raw", "valid", "kind", "collision", "error", "s", "ssim", "l1", "edge_iou"
        ).annotate(has_canvas=Q(canvas_png__isnull=False))
    )
    for row in steps:
        row["action_json"] = json.dumps(row["action"]) if row["action"] is not None else ""
    s_values = [row["s"] for row in steps if row["s"] is not None]
    best_index = None
    if s_values:
        best_index = max((row for row in steps if row["s"] is not None), key=lambda row: row["s"])["index"]
    return {
        "episode": episode.pk,
        "kind": episode.kind,
        "budget": episode.budget,
        "initial_s": episode.initial_s,
        "final_s": episode.final_s,
        "best_index": best_index,
        "final_index": steps[-1]["index"] if steps else None,
        "steps": steps,
    }


def episode_step_canvas(*, episode: EaselEpisode, index: int) -> bytes | None:
    """The stored canvas after step ``index`` (0: the initial canvas is the task's own image for
    annotation and maze tasks, otherwise blank; it is not stored and the view draws it)."""
    row = EaselStep.objects.filter(episode=episode, index=index).exclude(canvas_png=None).values_list(
        "canvas_png", flat=True).first()
    return bytes(row) if row is not None else None


# ---------------------------------------------------------------- training data


@dataclass(frozen=True, eq=False)
class Trajectory:
    """A finished reconstruction episode as the training-data export needs it."""

    task: object  # the engine task
    reference_png: bytes
    actions: list  # parsed action per step, None for an invalid one


def sft_episodes(*, run: EaselRun) -> list[Trajectory]:
    """The run's finished reconstruction episodes with their stored actions, in plan order."""
    from engine.easel.task import task_from_record

    out = []
    episodes = run.episodes.filter(kind="reconstruction", status=EaselEpisode.Status.DONE).select_related(
        "task__easel_image").order_by("position", "pk")
    for episode in episodes:
        actions = [a if valid else None for a, valid in episode.steps.order_by("index").values_list("action", "valid")]
        if actions:
            png = bytes(episode.task.easel_image.png)
            out.append(Trajectory(task_from_record(episode.task.source, png), png, actions))
    return out


def sft_samples(trajectory: Trajectory, *, curriculum: str, seed: int) -> list[tuple[dict, bytes]]:
    """(record, canvas PNG) per next-action sample of one trajectory (engine.easel.training_data)."""
    from engine.easel.training_data import next_action_samples, sample_record

    return [sample_record(s) for s in next_action_samples(trajectory.task, trajectory.actions, curriculum=curriculum,
                                                          seed=seed)]


# ---------------------------------------------------------------- the leaderboard


def _bootstrap(values_by_stratum: dict[str, list[float]], seed: int) -> tuple[float, float, float] | None:
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
    low, high = np.percentile(sums / total, [50 * (1 - INTERVAL_LEVEL), 50 * (1 + INTERVAL_LEVEL)])
    return mean, float(low), float(high)


def _latest_done_runs(task_set: TaskSet) -> list[EaselRun]:
    """One run per (agent, budget setting): the newest finished one."""
    seen, runs = set(), []
    for run in EaselRun.objects.filter(task_set=task_set, status=EaselRun.Status.DONE).order_by("-created_at", "-pk"):
        key = (run.agent_kind, run.agent_name, run.budget_setting)
        if key not in seen:
            seen.add(key)
            runs.append(run)
    return runs


def _run_label(run: EaselRun) -> str:
    if run.agent_kind == EaselRun.AgentKind.PAINTER:
        return f"{run.agent_name}, {'budget-aligned' if run.budget_setting == 'aligned' else 'native (250-step)'}"
    return run.agent_name


def _reconstruction_row(run: EaselRun, episodes: list[dict]) -> dict | None:
    recon = [e for e in episodes if e["kind"] == "reconstruction" and e["final_s"] is not None]
    if not recon:
        return None
    base_seed = derived_seed("easel-leaderboard", run.pk)

    def interval(field: str, only: str | None = None):
        by_category = defaultdict(list)
        for e in recon:
            if (only is None or e["category"] == only) and e[field] is not None:
                by_category[e["category"]].append(e[field])
        return _bootstrap(by_category, base_seed + len(field) + (0 if only is None else 7 * len(only)))

    categories = {name: interval("final_s", name) for name, _ in CATEGORIES}
    row = {
        "run": run.pk, "agent": _run_label(run), "kind": run.agent_kind, "budget": run.budget_setting,
        "seed": run.seed, "simulated": run.is_simulated, "n_references": len(recon),
        "categories": categories,
        "edge_iou": interval("final_edge_iou"),
        "repeat_rate": _mean([e["repeat_rate"] for e in recon]),
        "invalid_rate": _mean([e["invalid_rate"] for e in recon]),
    }
    for field, _ in TRAJECTORY_COLUMNS:
        row[field] = interval(field)
    return row


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def _semantic_row(run: EaselRun, episodes: list[dict]) -> dict | None:
    """Table 4's row: the score per task, then the engine's semantic diagnostics (maze invalid rate,
    undo counts on mazes vs the others, mean submit percentile; engine.easel.semantic)."""
    from engine.easel.semantic import semantic_diagnostics

    semantic = {e["task_id"]: e for e in episodes if e["kind"] == "semantic" and e["semantic_score"] is not None}
    if not semantic:
        return None
    diagnostics = semantic_diagnostics([e["semantic_summary"] for e in semantic.values() if e["semantic_summary"]])
    maze_invalid = diagnostics.get("maze_invalid_rate")
    return {
        "run": run.pk, "agent": _run_label(run), "kind": run.agent_kind, "simulated": run.is_simulated,
        "scores": {tid: (semantic[tid]["semantic_score"] if tid in semantic else None) for tid, _ in SEMANTIC_TASKS},
        # who read the handwriting (the other tasks are scored geometrically)
        "recognisers": sorted({e["recogniser"] for tid, e in semantic.items() if tid == HANDWRITING and e["recogniser"]}),
        "maze_invalid_rate": None if maze_invalid is None or np.isnan(maze_invalid) else float(maze_invalid),
        "maze_undo": int(diagnostics.get("maze_undo", 0)),
        "non_maze_undo": int(diagnostics.get("non_maze_undo", 0)),
        "avg_submit_pct": float(diagnostics.get("avg_submit_percentile", float("nan"))),
    }


def _curve(run: EaselRun, episodes: list[dict]) -> dict | None:
    curves = [e["progress_curve"] for e in episodes if e["kind"] == "reconstruction" and e["progress_curve"]]
    if not curves:
        return None
    mean = np.mean(np.asarray(curves, dtype=np.float64), axis=0)
    return {"run": run.pk, "agent": _run_label(run), "kind": run.agent_kind, "simulated": run.is_simulated,
            "fractions": [float(x) for x in np.linspace(0.0, 1.0, len(mean))], "s": [float(v) for v in mean]}


def easel_leaderboard(*, task_set: TaskSet) -> dict:
    """Table 3 (agents, with anchors and the painter as reference rows, Table 2), Table 4 and the
    Figure 4 curves of a suite, from the newest finished run of each agent and budget setting."""
    runs = _latest_done_runs(task_set)
    fields = ("run_id", "task__external_id", "kind", "category", "budget", "steps_done", "final_s", "final_edge_iou",
              "at_50", "auc", "best", "fb_gap", "repeat_rate", "invalid_rate", "undo_count", "submit_step",
              "semantic_score", "semantic_summary", "recogniser", "progress_curve")
    by_run: dict[int, list[dict]] = defaultdict(list)
    for e in EaselEpisode.objects.filter(run__in=runs, status=EaselEpisode.Status.DONE).values(*fields):
        e["task_id"] = e.pop("task__external_id")
        by_run[e["run_id"]].append(e)
    agents_rows, reference_rows, semantic_rows, curves = [], [], [], []
    for run in runs:
        episodes = by_run.get(run.pk, [])
        row = _reconstruction_row(run, episodes)
        if row is not None:
            reference = run.agent_kind in (EaselRun.AgentKind.ANCHOR, EaselRun.AgentKind.PAINTER)
            (reference_rows if reference else agents_rows).append(row)
        semantic = _semantic_row(run, episodes)
        if semantic is not None:
            semantic_rows.append(semantic)
        curve = _curve(run, episodes)
        if curve is not None and run.agent_kind != EaselRun.AgentKind.ANCHOR:
            curves.append(curve)
    agents_rows.sort(key=lambda r: -r["final_s"][0])
    reference_rows.sort(key=lambda r: r["final_s"][0])
    semantic_rows.sort(key=lambda r: r["agent"])
    present = {e["category"] for rows in by_run.values() for e in rows if e["kind"] == "reconstruction"}
    return {
        "task_set": {"id": task_set.pk, "name": task_set.name, "version": task_set.version},
        "demo": task_set.is_demo,
        "simulated": any(r.is_simulated for r in runs),
        "interval": INTERVAL_NOTE,
        "categories": [[name, head] for name, head in CATEGORIES if name in present],
        "semantic_tasks": [[name, head] for name, head in SEMANTIC_TASKS],
        "agents": agents_rows,
        "references": reference_rows,
        "semantic": semantic_rows,
        "curves": curves,
    }
