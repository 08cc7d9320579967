"""The judged comparisons a leaderboard snapshot was computed from, held with the snapshot object: read once
per object, and handed from the step that wrote the snapshot to its warm-up when both run in one process.

Its own module so that the writer (:mod:`leaderboard.ekphrasis.judge_runs`) and the reader
(:mod:`leaderboard.ekphrasis.uncertainty`) both depend on it and not on each other.
"""

from __future__ import annotations

import weakref

from leaderboard.ekphrasis.models import LeaderboardSnapshot

__all__ = ["handed_over_overall_tiers", "handed_over_snapshot", "snapshot_records", "snapshot_records_hand_over",
           "snapshot_records_keep"]

_ATTRIBUTE = "_judged_records"
_OVERALL_TIERS = "_handed_over_overall_tiers"

#: Snapshots just written in this process with the records they were computed from, by id, held weakly: the
#: warm-up that runs here once the writer commits (eager jobs) reads those records instead of reading every
#: comparison again (~3 s at the paper's scale); a warm-up in another process, or after the writer's object is
#: gone, finds nothing here and reads the database.
_HANDED_OVER: weakref.WeakValueDictionary[int, LeaderboardSnapshot] = weakref.WeakValueDictionary()


def snapshot_records(snapshot: LeaderboardSnapshot) -> tuple[list, list[str]] | None:
    """The (comparisons, model names) this snapshot object holds, or None if it holds none yet."""
    return getattr(snapshot, _ATTRIBUTE, None)


def snapshot_records_keep(snapshot: LeaderboardSnapshot, records: tuple[list, list[str]]) -> None:
    """Keep ``records`` (comparisons, model names) with this snapshot object."""
    setattr(snapshot, _ATTRIBUTE, records)


def snapshot_records_hand_over(snapshot: LeaderboardSnapshot, comparisons: list,
                               overall_tiers: list[list[int]] | None = None) -> None:
    """``snapshot`` (just stored) was computed from ``comparisons``, the run's judged comparisons as
    :func:`leaderboard.ekphrasis.judge_runs.judged_comparisons` reads them with the snapshot's model ids:
    its warm-up in this process uses them, and ``overall_tiers`` when given (the Overall tiers of the
    snapshot's own bootstrap, :func:`engine.leaderboard.board_uncertainty`, drawn when it was computed)."""
    snapshot_records_keep(snapshot, (comparisons, list(snapshot.payload["models"])))
    if overall_tiers is not None:
        setattr(snapshot, _OVERALL_TIERS, overall_tiers)
    _HANDED_OVER[snapshot.pk] = snapshot


def handed_over_overall_tiers(snapshot: LeaderboardSnapshot) -> list[list[int]] | None:
    """The Overall tiers handed over with this snapshot object, or None."""
    return getattr(snapshot, _OVERALL_TIERS, None)


def handed_over_snapshot(snapshot_id: int) -> LeaderboardSnapshot | None:
    """The snapshot object this process wrote with that id and still holds, else None."""
    return _HANDED_OVER.get(snapshot_id)
