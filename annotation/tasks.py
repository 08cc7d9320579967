"""Celery tasks of the annotation app: thin, idempotent wrappers around services.

The assignment sweep runs on Celery beat (``evalsite.celery``, every ATELIER_ASSIGNMENT_SWEEP_SECONDS).
It is a convenience, not a correctness requirement: ``assignment_next`` expires overdue assignments
itself when it finds no free slot, so a stopped beat only delays when dashboards show slots as free.
"""

from __future__ import annotations

from celery import shared_task

from annotation import participants, services


@shared_task(name="annotation.expire_assignments")
def expire_assignments() -> int:
    """Return every overdue active assignment to the pool, and time out the crowd participants past their
    time limit (their held item goes back too); the number of assignments expired (0 when run again)."""
    participants.participants_time_out()
    return services.assignments_expire()
