"""Ekphrasis in the researcher's view (:mod:`leaderboard.overview`): its latest board for the home page and a
model's results on every task set's latest snapshot. Reads stored snapshots only (one query each)."""

from __future__ import annotations

from django.urls import reverse

from engine.leaderboard_exports import DIMENSION_NAMES, model_rows, overall_measure, z_available
from leaderboard.ekphrasis import selectors, uncertainty
from leaderboard.ekphrasis.results import family_cell
from leaderboard.overview import (
    OVERVIEW_TOP,
    BoardRow,
    BoardSummary,
    Breakdown,
    ModelResult,
    RunLink,
    rank_set_of,
)


def _n_text(snapshot) -> str:
    payload = snapshot.payload
    calls = sum(payload["per_dimension"][d].get("n_comparisons", 0) for d in payload["dimensions"])
    return f"{snapshot.run.tasks_total} tasks, {calls:,} primary judge calls, {len(payload['models'])} models"


def _measure(payload: dict) -> str:
    return "Overall VCI" if z_available(payload) else "Mean expected win rate"


def latest_board() -> BoardSummary | None:
    """The newest snapshot: its top models with Overall and 90% interval (one query)."""
    snapshot = selectors.snapshot_list().first()
    if snapshot is None:
        return None
    payload = snapshot.payload
    ids = payload.get("model_ids") or [None] * len(payload["models"])
    order = payload["order"]
    rows = [BoardRow(r.rank, r.name, r.overall, r.overall_low, r.overall_high, model_id=ids[order[r.rank - 1]])
            for r in model_rows(payload)[:OVERVIEW_TOP]]
    return BoardSummary(
        protocol="Ekphrasis", measure=_measure(payload), interval=payload.get("interval", "90% task bootstrap"),
        url=reverse("snapshot_detail", args=[snapshot.pk]), task_set=f"{snapshot.run.task_set.name} v{snapshot.task_set_version}",
        date=snapshot.created_at, n=_n_text(snapshot), simulated=snapshot.is_simulated, demo=snapshot.is_demo,
        rows=rows, digits=2, compare_url=reverse("leaderboard_list") + "#compare",
    )


def model_results(model) -> list[ModelResult]:
    """The model on the latest snapshot of every task set that ranks it (one query for all snapshots)."""
    out = []
    for snapshot in selectors.latest_snapshots_per_task_set():
        payload = snapshot.payload
        ids = payload.get("model_ids") or []
        if model.pk not in ids:
            continue
        m = ids.index(model.pk)
        low, high = payload["overall_ci90"]
        per = payload["per_dimension"]
        breakdown = [Breakdown(DIMENSION_NAMES[d], per[d]["winrate"][m], per[d]["winrate_ci90"][0][m],
                               per[d]["winrate_ci90"][1][m]) for d in payload["dimensions"]]
        # the family table's task averages with its intervals (cached per snapshot, computed when it was written)
        families = uncertainty.family_intervals(snapshot) if payload.get("families") else {}
        breakdown += [Breakdown(f"{family} (task avg. z)", *family_cell(table, families.get(family), "avg", m))
                      for family, table in sorted(payload.get("families", {}).items())]
        probabilities = payload.get("overall_rank_probabilities")
        out.append(ModelResult(
            protocol="Ekphrasis", task_set=f"{snapshot.run.task_set.name} v{snapshot.task_set_version}",
            board_url=reverse("snapshot_detail", args=[snapshot.pk]), measure=overall_measure(payload),
            value=payload["overall"][m], low=low[m], high=high[m], rank=payload["order"].index(m) + 1,
            of=len(payload["models"]), rank_set=rank_set_of(probabilities[m]) if probabilities else None,
            n=_n_text(snapshot), date=snapshot.created_at, simulated=snapshot.is_simulated, demo=snapshot.is_demo,
            interval=payload.get("interval", ""), breakdown=breakdown, digits=2,
            runs=[RunLink(f"judge run #{snapshot.run_id} ({snapshot.judge_name})",
                          reverse("judge_run_detail", args=[snapshot.run_id]), payload.get("usage") or {})],
            key=f"ekphrasis:{snapshot.run.task_set_id}",
        ))
    return out
