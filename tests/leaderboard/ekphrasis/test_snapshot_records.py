"""leaderboard/ekphrasis/snapshot_records.py: records held with a snapshot object, handed over weakly."""

import gc

from leaderboard.ekphrasis.models import LeaderboardSnapshot
from leaderboard.ekphrasis.snapshot_records import (
    handed_over_snapshot,
    snapshot_records,
    snapshot_records_hand_over,
)


def _snapshot(pk: int) -> LeaderboardSnapshot:
    return LeaderboardSnapshot(pk=pk, payload={"models": ["a", "b"]})


def test_a_handed_over_snapshot_is_found_by_id_with_its_records():
    snapshot = _snapshot(10_001)
    comparisons = [object()]
    snapshot_records_hand_over(snapshot, comparisons)
    assert handed_over_snapshot(10_001) is snapshot
    assert snapshot_records(snapshot) == (comparisons, ["a", "b"])


def test_a_handed_over_snapshot_is_gone_once_its_writer_no_longer_holds_it():
    snapshot_records_hand_over(_snapshot(10_002), [])
    gc.collect()
    assert handed_over_snapshot(10_002) is None


def test_a_snapshot_never_handed_over_holds_no_records():
    assert snapshot_records(_snapshot(10_003)) is None
    assert handed_over_snapshot(10_003) is None
