"""What a stored Ekphrasis snapshot leaves out, recomputed from its run's comparisons with the snapshot's own
bootstrap (same records, resamples and seed: :func:`engine.leaderboard.board_uncertainty`): tiers on Overall,
intervals on the family table (each family's board refitted on its tasks alone) and slices of the board by
family or subtype, each with its intervals and tiers.

A snapshot never changes, so every answer is cached per snapshot and slice; what the snapshot page's first view
reads (Overall tiers, family intervals) is computed into the cache once the snapshot is written
(:func:`leaderboard.ekphrasis.tasks.snapshot_uncertainty_warm_on_commit`, on every new snapshot), so its
first reader does not wait for it."""

from __future__ import annotations

import hashlib
import logging

from django.core.cache import cache

from engine.leaderboard import board_uncertainty
from leaderboard.ekphrasis.judge_runs import judged_comparisons
from leaderboard.ekphrasis.models import LeaderboardSnapshot
from leaderboard.ekphrasis.snapshot_records import (
    handed_over_overall_tiers,
    handed_over_snapshot,
    snapshot_records,
    snapshot_records_keep,
)
from leaderboard.models import Task

__all__ = [
    "SLICE_KINDS",
    "family_intervals",
    "overall_tiers",
    "slice_board",
    "slice_choices",
    "snapshot_uncertainty_warm",
]

logger = logging.getLogger(__name__)

SLICE_KINDS = ("family", "subtype")
_TIMEOUT = 7 * 24 * 3600


def _records(snapshot: LeaderboardSnapshot) -> tuple[list, list[str]]:
    """The run's judged comparisons, read once per snapshot object (a page's first view computes the tiers
    and the family intervals from the same records: ~3 s a read at the paper's scale)."""
    found = snapshot_records(snapshot)
    if found is None:
        payload = snapshot.payload
        ids = payload.get("model_ids") or []
        found = judged_comparisons(snapshot.run, {pk: k for k, pk in enumerate(ids)}), list(payload["models"])
        snapshot_records_keep(snapshot, found)
    return found


def _uncertainty(snapshot: LeaderboardSnapshot, comparisons, models) -> dict | None:
    payload = snapshot.payload
    try:
        return board_uncertainty(comparisons, models, dimensions=tuple(payload["dimensions"]),
                                 n_boot=int(payload.get("n_boot", 1000)), seed=int(payload.get("seed", 42)),
                                 summary_only=True)
    except ValueError:  # a slice with no decisive comparison, or fewer than two models
        return None


def _cached(snapshot: LeaderboardSnapshot, what: str, compute):
    # its last save, not its creation: a hand edit of the payload (models, dimensions, seed) is computed afresh
    key = f"ekphrasis-uncertainty:{snapshot.pk}:{snapshot.updated_at.timestamp()}:{what}"
    found = cache.get(key)
    if found is None:
        found = {"value": compute()}
        cache.set(key, found, timeout=_TIMEOUT)
    return found["value"]


def overall_tiers(snapshot: LeaderboardSnapshot) -> list[list[int]]:
    """Tiers of Overall (model indices, best tier first); [] for a snapshot without its model ids."""
    def compute():
        if not snapshot.payload.get("model_ids"):
            return []
        handed_over = handed_over_overall_tiers(snapshot)
        if handed_over is not None:  # drawn with the snapshot's board, in this process
            return handed_over
        comparisons, models = _records(snapshot)
        result = _uncertainty(snapshot, comparisons, models)
        return result["overall_tiers"] if result else []
    return _cached(snapshot, "overall-tiers", compute)


def _slice_summary(result: dict | None) -> dict | None:
    if result is None:
        return None
    payload = result["payload"]
    return {"overall": payload["overall"], "overall_ci90": payload["overall_ci90"], "order": payload["order"],
            "z_available": payload["z_available"], "overall_measure": payload["overall_measure"],
            "overall_tiers": result["overall_tiers"], "z_ci90": result["z_ci90"],
            "dimensions": payload["dimensions"],
            "per_dimension": {d: {k: payload["per_dimension"][d][k] for k in ("winrate", "winrate_ci90", "z", "n_comparisons")}
                              for d in payload["dimensions"]}}


def family_intervals(snapshot: LeaderboardSnapshot) -> dict[str, dict]:
    """Family → its board refitted on its tasks alone: z per dimension with ``z_ci90`` and the task average
    (Overall of the slice) with ``overall_ci90`` — the family table's numbers with their intervals."""
    def compute():
        if not snapshot.payload.get("model_ids"):
            return {}
        comparisons, models = _records(snapshot)
        out = {}
        for family in sorted({c.family for c in comparisons}):
            summary = _slice_summary(_uncertainty(snapshot, [c for c in comparisons if c.family == family], models))
            if summary is not None:
                out[family] = summary
        return out
    return _cached(snapshot, "families", compute)


def slice_choices(snapshot: LeaderboardSnapshot) -> dict[str, list[str]]:
    """The families and subtypes of the snapshot's task set (one query)."""
    rows = Task.objects.filter(task_set_id=snapshot.run.task_set_id).values_list("family", "subtype").distinct()
    return {"family": sorted({f for f, _ in rows if f}), "subtype": sorted({s for _, s in rows if s})}


def slice_board(snapshot: LeaderboardSnapshot, kind: str, value: str) -> dict | None:
    """The board of the tasks whose ``kind`` (family or subtype) is ``value``, with intervals and Overall
    tiers; None when the slice has too few comparisons. Raises ValueError for an unknown kind."""
    if kind not in SLICE_KINDS:
        raise ValueError(f"slice kind must be one of {SLICE_KINDS}")

    def compute():
        if not snapshot.payload.get("model_ids"):
            return None
        tasks = set(Task.objects.filter(task_set_id=snapshot.run.task_set_id, **{kind: value})
                    .values_list("external_id", flat=True))
        if not tasks:
            return None
        comparisons, models = _records(snapshot)
        summary = _slice_summary(_uncertainty(snapshot, [c for c in comparisons if c.record.task in tasks], models))
        if summary is not None:
            summary.update(kind=kind, value=value, n_tasks=len(tasks), models=models)
        return summary
    return _cached(snapshot, f"slice:{kind}:{hashlib.sha256(value.encode()).hexdigest()[:16]}", compute)


def snapshot_uncertainty_warm(*, snapshot_id: int) -> None:
    """Compute the snapshot page's Overall tiers, family intervals and its run's launch gates into the cache
    (no-op for a gone snapshot)."""
    from leaderboard.ekphrasis.selectors import judge_run_launch_gates

    snapshot = handed_over_snapshot(snapshot_id)
    if snapshot is None:
        snapshot = LeaderboardSnapshot.objects.select_related("run").filter(pk=snapshot_id).first()
    if snapshot is not None:
        overall_tiers(snapshot)
        family_intervals(snapshot)
        judge_run_launch_gates(run=snapshot.run)
