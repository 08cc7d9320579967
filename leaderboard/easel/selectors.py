"""Reads of the EASEL sub-app: run lists and live status, the episode viewer's data, and the leaderboard
of a suite (Tables 2–4, Figure 4) computed from the stored episodes."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Max, Q, QuerySet, Sum

# The board is computed in the engine (engine.easel.leaderboard); callers import its constants from there.
from engine.easel.leaderboard import CATEGORIES, EPISODE_FIELDS, BoardRun, easel_board
from evalsite.request_checks import id_of
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
    wanted = id_of(str(pk))
    return None if wanted is None else sets.filter(pk=wanted).first()


def run_list(*, task_set: TaskSet | None = None) -> QuerySet[EaselRun]:
    runs = EaselRun.objects.select_related("task_set", "subject_model")
    if task_set is not None:
        runs = runs.filter(task_set=task_set)
    return runs.order_by("-created_at", "-pk")


def run_progress(*, run: EaselRun) -> dict:
    """A run's live status (the API's ``progress``; the run page polls it with :func:`run_page_status`)."""
    return {
        **run_status(run),
        "episodes_done": run.episodes_done,
        "episodes_total": run.episodes_total,
        "steps_done": run.steps_done,
        "steps_planned": run.steps_planned,
        "steps_text": run_steps_text(run),
    }


def run_page_status(*, run: EaselRun) -> dict:
    """What the run page polls (``followStatus``): the live status and each episode's state and steps, so
    that the page's episode table follows the run as its status line does (one query for the episodes;
    the API lists episodes at their own endpoint)."""
    episodes = run.episodes.only("pk", "run", "status", "steps_done", "budget").order_by("position", "pk")
    return {**run_progress(run=run),
            "episodes": [{"id": e.pk, "status": e.status_shown, "steps": f"{e.steps_done}/{e.budget}"} for e in episodes]}


def run_steps_text(run: EaselRun) -> str:
    """Steps against the budget while a run works; once it is done, the steps it took (the budget is an
    upper bound: an agent may submit early), so a finished run never reads as 71 % done. A score anchor
    takes no steps at all (its steps_planned is 0), so it reads as such, not as an agent with a zero budget."""
    if run.agent_kind == EaselRun.AgentKind.ANCHOR:
        return "none (a score anchor fills the canvas at once, without strokes)"
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
    references (``INTERVAL_LEVEL``), and each semantic task's score (one episode: no interval). The interval
    is the board's for that run and category (:func:`final_s_intervals`; a run's row depends on its own
    episodes only), not a draw of its own that would print another interval for the page's number."""
    rows = run.episodes.filter(status=EaselEpisode.Status.DONE, kind="semantic").exclude(
        semantic_score=None).values_list("category", "semantic_score")
    out: dict[str, tuple[float, float | None, float | None]] = {f"{category} score": (score, None, None)
                                                               for category, score in rows}
    board = _single_board(run)
    for name, _ in CATEGORIES:
        value = final_s_intervals(board, category=name).get(run.pk)
        if value is not None:
            out[f"{name} Final S"] = value
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
    return latest_done_runs_of([task_set]).get(task_set.pk, [])


def latest_done_runs_of(task_sets) -> dict[int, list[EaselRun]]:
    """:func:`latest_done_runs` of several suites in one query: task set id → its board's runs."""
    seen, runs = set(), defaultdict(list)
    for run in (EaselRun.objects.filter(task_set__in=task_sets, status=EaselRun.Status.DONE)
                .select_related("subject_model").order_by("-created_at", "-pk")):
        key = (run.task_set_id, run.agent_kind, run.agent_name, run.budget_setting)
        if key not in seen:
            seen.add(key)
            runs[run.task_set_id].append(run)
    return dict(runs)


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


#: The episode columns the board reads (engine.easel.leaderboard.EPISODE_FIELDS) that are numbers: what
#: :func:`board_fingerprint` counts and sums. The task, kind and category do not change after an episode is
#: planned; the semantic summary, recogniser and progress curve are text and JSON, which a sum cannot name
#: (the episodes' ``updated_at`` stands for them).
BOARD_NUMBER_FIELDS = ("budget", "steps_done", "final_s", "final_edge_iou", "at_50", "auc", "best", "fb_gap",
                       "repeat_rate", "invalid_rate", "undo_count", "submit_step", "semantic_score")


def board_fingerprint(task_set: TaskSet) -> str:
    """What a board computed from the suite's finished runs depends on (one query): the key under which it
    may be cached and the API's ETag. It changes when a run of the suite finishes or a finished run goes
    away (their count, newest id and latest finish) and when a finished episode's score is changed in place
    (a hand edit, the admin, a rescoring: the same runs, no new finish), seen by the finished episodes' count
    and, per number the board reads (:data:`BOARD_NUMBER_FIELDS`), how many are set and their sum (rounded
    to 1e-9, so that a database summing in another order keeps the key). A checksum, not a proof, as the
    canvas-similarity calibrated columns' key is (:func:`annotation.calibrated_columns._episodes_state`):
    a rewrite that left every count and sum unchanged would go unseen. The text and JSON columns (semantic
    summary, recogniser, progress curve), which a sum cannot name, are seen by the finished episodes' newest
    save (:class:`leaderboard.edit_stamps.EditStamped`: a hand edit that saves the episode). Given as a digest
    of those numbers (an ETag is opaque; 13 counts and sums spelt out would make a header of some 400
    characters)."""
    done = Q(episodes__status=EaselEpisode.Status.DONE)
    agg = EaselRun.objects.filter(task_set=task_set, status=EaselRun.Status.DONE).aggregate(
        n=Count("pk", distinct=True), last=Max("pk"), finished=Max("finished_at"),
        n_episodes=Count("episodes", filter=done), edited=Max("episodes__updated_at", filter=done),
        **{f"set_{f}": Count(f"episodes__{f}", filter=done) for f in BOARD_NUMBER_FIELDS},
        **{f"sum_{f}": Sum(f"episodes__{f}", filter=done) for f in BOARD_NUMBER_FIELDS})
    runs = (f"{agg['n']}-{agg['last']}-{agg['finished'] and agg['finished'].timestamp()}-"
            f"{agg['edited'] and agg['edited'].timestamp()}")
    scores = ":".join(f"{agg[f'set_{f}']}={round(float(agg[f'sum_{f}'] or 0), 9)!r}" for f in BOARD_NUMBER_FIELDS)
    return hashlib.sha256(f"{runs}-{agg['n_episodes']}-{scores}".encode()).hexdigest()[:32]


def easel_boards(task_sets) -> dict[int, tuple[dict, list[EaselRun], dict[int, list[dict]]]]:
    """Task set id → (its board, the board's runs, their episodes) for several suites in three queries."""
    runs_of = latest_done_runs_of(task_sets)
    episodes = board_episodes([r for runs in runs_of.values() for r in runs]) if runs_of else {}
    out = {}
    for task_set in task_sets:
        runs = runs_of.get(task_set.pk, [])
        mine = {r.pk: episodes.get(r.pk, []) for r in runs}
        board = easel_board(task_set={"id": task_set.pk, "name": task_set.name, "version": task_set.version},
                            demo=task_set.is_demo, runs=[board_run_of(r) for r in runs], episodes=mine)
        out[task_set.pk] = (board, runs, mine)
    return out


def final_s_intervals(board: dict, *, category: str | None = None) -> dict[int, tuple[float, float, float]]:
    """Run id → its Final S over all references (or over one category's) with the 90% interval, as the
    suite's board computed it (:func:`engine.easel.leaderboard.easel_board`: a bootstrap over the run's own
    references, seeded from its id). The one interval every page shows for that number — the reconstruction
    table, the headline, the agents' comparison, the home page and the model profiles — because it is the
    figure a reproducibility bundle stores and verifies (``board/board.json``); the paired bootstrap's own
    per-agent interval is a second draw of the same quantity and is not shown."""
    out = {}
    for row in board["agents"] + board["references"]:
        value = row["final_s"] if category is None else row["categories"].get(category)
        if value is not None:
            out[row["run"]] = tuple(value)
    return out


def easel_uncertainty(*, board: dict, runs: list[EaselRun], episodes: dict[int, list[dict]],
                      category: str | None = None) -> dict:
    """The paired bootstrap over references of the board's agents (engine.easel.uncertainty), optionally
    sliced to one category, and each run's semantic mean with n and interval. ``board`` is the suite's
    board of the same runs and episodes: each agent's Final S and interval are its (:func:`final_s_intervals`),
    so the comparison and the headline read as the reconstruction table does; the differences, P(A > B)
    and the rank sets stay the paired bootstrap's."""
    from engine.easel.uncertainty import agent_comparison, semantic_means

    board_runs = [board_run_of(r) for r in runs]
    comparison = agent_comparison(board_runs, episodes, intervals=final_s_intervals(board, category=category),
                                  category=category)
    if comparison is not None:
        comparison["interval"] = board["interval"]
    return {"comparison": comparison, "semantic": semantic_means(board_runs, episodes), "category": category}


def easel_leaderboard(*, task_set: TaskSet) -> dict:
    """Table 3 (agents, with anchors and the painter as reference rows, Table 2), Table 4 and the
    Figure 4 curves of a suite, from the newest finished run of each agent and budget setting
    (computed by :func:`engine.easel.leaderboard.easel_board`)."""
    runs = latest_done_runs(task_set)
    return easel_board(
        task_set={"id": task_set.pk, "name": task_set.name, "version": task_set.version}, demo=task_set.is_demo,
        runs=[board_run_of(r) for r in runs], episodes=board_episodes(runs),
    )


# ---------------------------------------------------------------- two runs side by side


def compare_choices() -> QuerySet[EaselRun]:
    """Finished runs, newest first (the compare form's choices)."""
    return EaselRun.objects.select_related("task_set").filter(status=EaselRun.Status.DONE).order_by("-created_at", "-pk")


def _metric_cells(board: dict, run_id: int) -> dict[str, tuple]:
    """Metric label → (value, low, high, rank among the board's agents; None for a reference row)."""
    from engine.easel.leaderboard import TRAJECTORY_COLUMNS

    rows = {r["run"]: r for r in board["agents"] + board["references"]}
    row = rows.get(run_id)
    if row is None:
        return {}
    metrics = [("Final S", lambda r: r["final_s"], False)]
    metrics += [(f"Final S, {head}", (lambda name: lambda r: r["categories"].get(name))(name), False)
                for name, head in board["categories"]]
    metrics += [(head, (lambda f: lambda r: r[f])(f), f == "fb_gap") for f, head in TRAJECTORY_COLUMNS if f != "final_s"]
    metrics.append(("Edge IoU", lambda r: r["edge_iou"], False))
    out = {}
    for label, get, smaller_is_better in metrics:
        value = get(row)
        if value is None:
            continue
        rank = None
        if row in board["agents"]:
            others = sorted((get(a)[0] for a in board["agents"] if get(a) is not None), reverse=not smaller_is_better)
            rank = others.index(value[0]) + 1
        out[label] = (value[0], value[1], value[2], rank)
    return out


def run_comparison(left: EaselRun, right: EaselRun) -> dict:
    """Two runs side by side: every Table 3 metric with its 90% interval and the run's rank among its suite
    board's agents, the configuration differences, and — when both painted the same references — the paired
    bootstrap of Final S(A) − Final S(B) with P(A > B)."""
    from engine.easel.uncertainty import agent_comparison
    from leaderboard.comparisons import configuration_differences, side_by_side

    boards = easel_boards(list({left.task_set_id: left.task_set, right.task_set_id: right.task_set}.values()))

    def describe(run: EaselRun) -> dict:
        return {"Suite": str(run.task_set), "Agent": run.agent_name, "Agent kind": run.get_agent_kind_display(),
                "Budget setting": run.get_budget_setting_display(), "Seed": run.seed,
                "Episodes": f"{run.episodes_done}/{run.episodes_total}", "Code version": run.code_version or "unknown",
                "Simulated": "yes" if run.is_simulated else "no", "Demo data": "yes" if run.task_set.is_demo else "no",
                "On the suite's board": "yes" if any(r.pk == run.pk for r in boards[run.task_set_id][1]) else
                "no (a newer run of this agent and budget is shown)"}

    single: dict[int, dict] = {}

    def board_with(run: EaselRun) -> dict:
        """The suite's board when the run is on it, else a board of the run alone (its row is the same:
        a row depends on the run's own episodes only), computed once for the cells and the paired agents."""
        board = boards[run.task_set_id][0]
        if any(r["run"] == run.pk for r in board["agents"] + board["references"]):
            return board
        if run.pk not in single:
            single[run.pk] = _single_board(run)
        return single[run.pk]

    paired = None
    # the page says a run not finished is not compared: its episodes so far are not its Final S
    both_done = left.status == EaselRun.Status.DONE and right.status == EaselRun.Status.DONE
    if both_done and left.pk != right.pk and left.task_set_id == right.task_set_id and (
            left.agent_kind not in ("anchor", "painter") and right.agent_kind not in ("anchor", "painter")):
        episodes = board_episodes([left, right])
        paired = agent_comparison([board_run_of(left), board_run_of(right)], episodes,
                                  intervals={**final_s_intervals(board_with(left)), **final_s_intervals(board_with(right))})
        if paired is not None and left.agent_name == right.agent_name:
            for agent, run in zip(paired["agents"], (left, right)):
                agent["name"] = f"{agent['name']} (#{run.pk})"
    left_cells = _metric_cells(board_with(left), left.pk) if left.status == EaselRun.Status.DONE else {}
    right_cells = _metric_cells(board_with(right), right.pk) if right.status == EaselRun.Status.DONE else {}
    differences = configuration_differences(describe(left), describe(right))
    return {"rows": side_by_side(left_cells, right_cells, keep_order=True), "differences": differences,
            "n_differences": sum(d["differs"] for d in differences), "paired": paired}


def _single_board(run: EaselRun) -> dict:
    """A board of one finished run that a newer run of its agent has replaced on the suite's board."""
    return easel_board(task_set={"id": run.task_set_id, "name": run.task_set.name, "version": run.task_set.version},
                       demo=run.task_set.is_demo, runs=[board_run_of(run)], episodes=board_episodes([run]))
