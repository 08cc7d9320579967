"""Ekphrasis's one Celery task: warm a new snapshot's cache (leaderboard.ekphrasis.uncertainty). Thin: it
takes the snapshot's id and calls the service."""

from __future__ import annotations

from celery import shared_task

from leaderboard.ekphrasis.uncertainty import snapshot_uncertainty_warm


@shared_task(name="ekphrasis.snapshot_uncertainty_warm")
def snapshot_uncertainty_warm_task(snapshot_id: int) -> None:
    snapshot_uncertainty_warm(snapshot_id=snapshot_id)
