"""EASEL in the researcher's view (:mod:`leaderboard.overview`): the newest suite's board for the home page,
and a model's rows on every suite where a run of it finished. Reads through :mod:`leaderboard.easel.selectors`
in a fixed number of queries (suites, runs, episodes)."""

from __future__ import annotations

from django.core.cache import cache
from django.urls import reverse

from engine.easel.uncertainty import agent_comparison
from leaderboard.easel import selectors
from leaderboard.easel.models import EaselRun
from leaderboard.overview import OVERVIEW_TOP, BoardRow, BoardSummary, Breakdown, ModelResult, RunLink

MEASURE = "Final S"


def _board_url(task_set) -> str:
    return reverse("easel:leaderboard") + f"?task_set={task_set.pk}"


def latest_board() -> BoardSummary | None:
    """The newest suite with a finished agent run: its agents by Final S with the 90% interval. The summary
    is cached until a run of the suite finishes or a finished episode's score changes
    (:func:`leaderboard.easel.selectors.board_fingerprint`; two queries on a hit, five on a miss)."""
    task_set = selectors.easel_task_sets().filter(easel_runs__status=EaselRun.Status.DONE).distinct().first()
    if task_set is None:
        return None
    key = f"easel-overview:{task_set.pk}:{selectors.board_fingerprint(task_set)}"
    summary = cache.get(key)
    if summary is None:
        summary = _summary(task_set)
        cache.set(key, summary, timeout=24 * 3600)
    return summary


def _summary(task_set) -> BoardSummary:
    board, runs, _ = selectors.easel_boards([task_set])[task_set.pk]
    model_of = {r.pk: r.subject_model_id for r in runs}
    finished = [r.finished_at for r in runs if r.finished_at]
    rows = [BoardRow(k, r["agent"], *r["final_s"], model_id=model_of.get(r["run"]))
            for k, r in enumerate(board["agents"][:OVERVIEW_TOP], start=1)]
    n_refs = max((r["n_references"] for r in board["agents"]), default=0)
    return BoardSummary(
        protocol="EASEL", measure=MEASURE, interval=board["interval"], url=_board_url(task_set),
        task_set=f"{task_set.name} v{task_set.version}", date=max(finished) if finished else None,
        n=f"{n_refs} references, {len(board['agents'])} agents, {len(board['references'])} reference rows",
        simulated=board["simulated"], demo=board["demo"], rows=rows, compare_url=reverse("easel:compare"),
    )


def model_results(model) -> list[ModelResult]:
    """The model's agent row on the board of every suite where one of its runs finished."""
    suites = list(selectors.easel_task_sets().filter(easel_runs__subject_model=model,
                                                     easel_runs__status=EaselRun.Status.DONE).distinct())
    out = []
    for task_set_id, (board, runs, episodes) in selectors.easel_boards(suites).items():
        task_set = next(t for t in suites if t.pk == task_set_id)
        mine = {r.pk: r for r in runs if r.subject_model_id == model.pk}
        comparison = None  # one paired bootstrap per suite, for the rank sets of all the model's rows
        for k, row in enumerate(board["agents"], start=1):
            run = mine.get(row["run"])
            if run is None:
                continue
            if comparison is None:
                comparison = agent_comparison([selectors.board_run_of(r) for r in runs], episodes,
                                              intervals=selectors.final_s_intervals(board)) or {}
            rank_set = None
            if comparison:
                agent = next((a for a in comparison["agents"] if a["run"] == run.pk), None)
                rank_set = tuple(agent["rank_set"]) if agent and None not in agent["rank_set"] else None
            out.append(ModelResult(
                protocol="EASEL", task_set=f"{task_set.name} v{task_set.version}", board_url=_board_url(task_set),
                measure=MEASURE, value=row["final_s"][0], low=row["final_s"][1], high=row["final_s"][2], rank=k,
                of=len(board["agents"]), rank_set=rank_set, n=f"{row['n_references']} references",
                date=run.finished_at, simulated=row["simulated"], demo=board["demo"], interval=board["interval"],
                breakdown=[Breakdown(head, *(row["categories"].get(name) or (None, None, None)))
                           for name, head in board["categories"]],
                runs=[RunLink(f"EASEL run #{run.pk} ({run.budget_setting}, seed {run.seed})",
                              reverse("easel:run_detail", args=[run.pk]), run.usage or {})],
                key=f"easel:{task_set.pk}:{run.budget_setting}",
            ))
    return out
