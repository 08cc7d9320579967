"""Celery tasks of the annotation app: thin, idempotent wrappers around services.

The assignment sweep runs on Celery beat (``evalsite.celery``, every ATELIER_ASSIGNMENT_SWEEP_SECONDS).
It is a convenience, not a correctness requirement: ``assignment_next`` expires overdue assignments
itself when it finds no free slot, so a stopped beat only delays when dashboards show slots as free.
"""

from __future__ import annotations

from celery import shared_task

from annotation import services


@shared_task(name="annotation.expire_assignments")
def expire_assignments() -> int:
    """Return every overdue active assignment to the pool; the number expired (0 when run again)."""
    return services.assignments_expire()
