"""Reads of the EASEL sub-app: run lists and live status, the episode viewer's data, and the leaderboard
of a suite (Tables 2–4, Figure 4) computed from the stored episodes."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Q, QuerySet

# The board is computed in the engine (engine.easel.leaderboard); callers import its constants from there.
from engine.easel.leaderboard import CATEGORIES, EPISODE_FIELDS, BoardRun, _bootstrap, easel_board
from leaderboard.easel.models import EaselEpisode, EaselRun, EaselStep
from leaderboard.models import Benchmark, TaskSet
from leaderboard.runs.selectors import run_status


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
        "steps_text": run_steps_text(run),
    }


def run_steps_text(run: EaselRun) -> str:
    """Steps against the budget while a run works; once it is done, the steps it took (the budget is an
    upper bound: an agent may submit early), so a finished run never reads as 71 % done."""
    if run.status == EaselRun.Status.DONE:
        return f"{run.steps_done} (done; budget {run.steps_planned}, agents may submit early)"
    return f"{run.steps_done}/{run.steps_planned}"


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


def run_summary_intervals(*, run: EaselRun) -> dict[str, tuple[float, float | None, float | None]]:
    """The CLI's closing lines: mean Final S per reconstruction category with its bootstrap interval over
    references (``INTERVAL_LEVEL``), and each semantic task's score (one episode: no interval)."""
    rows = run.episodes.filter(status=EaselEpisode.Status.DONE).values_list("kind", "category", "final_s", "semantic_score")
    out: dict[str, tuple[float, float | None, float | None]] = {}
    by_category = defaultdict(list)
    for kind, category, final_s, score in rows:
        if kind == "reconstruction" and final_s is not None:
            by_category[category].append(final_s)
        elif score is not None:
            out[f"{category} score"] = (score, None, None)
    for name, _ in CATEGORIES:
        if by_category.get(name):
            out[f"{name} Final S"] = _bootstrap({name: by_category[name]}, seed=run.seed)
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


def latest_done_runs(task_set: TaskSet) -> list[EaselRun]:
    """One run per (agent, budget setting): the newest finished one (the runs a suite's board shows)."""
    seen, runs = set(), []
    for run in EaselRun.objects.filter(task_set=task_set, status=EaselRun.Status.DONE).order_by("-created_at", "-pk"):
        key = (run.agent_kind, run.agent_name, run.budget_setting)
        if key not in seen:
            seen.add(key)
            runs.append(run)
    return runs


def board_run_of(run: EaselRun) -> BoardRun:
    return BoardRun(id=run.pk, agent_kind=run.agent_kind, agent_name=run.agent_name,
                    budget_setting=run.budget_setting, seed=run.seed, is_simulated=run.is_simulated)


def board_episodes(runs: list[EaselRun]) -> dict[int, list[dict]]:
    """Run id → its finished episodes as the board reads them (engine.easel.leaderboard.EPISODE_FIELDS)."""
    fields = ["run_id", "task__external_id", *(f for f in EPISODE_FIELDS if f != "task_id")]
    by_run: dict[int, list[dict]] = defaultdict(list)
    for e in EaselEpisode.objects.filter(run__in=runs, status=EaselEpisode.Status.DONE).values(*fields):
        e["task_id"] = e.pop("task__external_id")
        by_run[e.pop("run_id")].append(e)
    return by_run


def easel_leaderboard(*, task_set: TaskSet) -> dict:
    """Table 3 (agents, with anchors and the painter as reference rows, Table 2), Table 4 and the
    Figure 4 curves of a suite, from the newest finished run of each agent and budget setting
    (computed by :func:`engine.easel.leaderboard.easel_board`)."""
    runs = latest_done_runs(task_set)
    return easel_board(
        task_set={"id": task_set.pk, "name": task_set.name, "version": task_set.version}, demo=task_set.is_demo,
        runs=[board_run_of(r) for r in runs], episodes=board_episodes(runs),
    )
