"""One delivery of a unit at a time: a job's unit is queued again by a second Resume (two dispatches) and
by the broker's redelivery of a message it thinks lost, so two workers can hold the same unit at once.
Each unit stores what it finished idempotently, but until it stores it both would make the same provider
calls (a C² prompt's answers and ratings asked twice, counted twice in ``calls_done``).

The claim is a PostgreSQL session advisory lock on (kind, job, unit): taken without waiting, it names no
table (no migration, nothing to clean up), and the server drops it when the holder's connection ends, so
a worker killed mid-unit leaves no stale claim behind. SQLite has no second writer process to race (its
jobs run in the web process), so there the claim always succeeds. A connection pooler in transaction
mode (PgBouncer) would break session locks: the site connects to PostgreSQL directly."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

from leaderboard.runs.errors import UnitTakenOver

__all__ = ["unit_claimed"]


def _lock_key(kind_name: str, run_id: int, unit_id: int) -> int:
    # advisory locks take one signed 64-bit key: a digest of the unit's identity, as one number
    digest = hashlib.blake2b(f"{kind_name}:{run_id}:{unit_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@contextmanager
def unit_claimed(kind_name: str, run_id: int, unit_id: int) -> Iterator[None]:
    """Hold the unit for the ``with`` block, or raise :class:`UnitTakenOver` when another delivery holds it
    (that one finishes the unit, and claims the finalising if it was the last)."""
    if connection.vendor != "postgresql":
        yield
        return
    key = _lock_key(kind_name, run_id, unit_id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
        (held,) = cursor.fetchone()
    if not held:
        raise UnitTakenOver(f"{kind_name} {run_id}: unit {unit_id} is being worked by another delivery")
    try:
        yield
    finally:
        if connection.is_usable():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
