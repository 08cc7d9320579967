"""Celery tasks of the annotation app: thin, idempotent wrappers around services.

The assignment sweep runs on Celery beat (``evalsite.celery``, every ATELIER_ASSIGNMENT_SWEEP_SECONDS).
It is a convenience, not a correctness requirement: ``assignment_next`` expires overdue assignments
itself when it finds no free slot, so a stopped beat only delays when dashboards show slots as free.

The blinding sweep (:mod:`annotation.blinding_recheck`) is sent once every transaction that moves the
catalogue revision commits (:func:`recheck_blinding_send`, registered with the catalogue in
``AnnotationConfig.ready``; without a broker it runs there, in-process), and runs on Celery beat for models
written around the services. It too is a convenience: next-item checks an item against the catalogue's
current names itself before handing it out.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from kombu.exceptions import OperationalError as BrokerUnreachable

from annotation import blinding_recheck, participants, services
from leaderboard.services.catalogue import catalogue_revision_sync

logger = logging.getLogger(__name__)


@shared_task(name="annotation.expire_assignments")
def expire_assignments() -> int:
    """Return every overdue active assignment to the pool, time out the crowd participants past their
    time limit (their held item goes back too) and end the path of those whose campaign closed; the number
    of assignments expired (0 when run again)."""
    participants.participants_time_out()
    participants.participants_study_closed()
    return services.assignments_expire()


@shared_task(name="annotation.recheck_blinding")
def recheck_blinding() -> int:
    """Move the catalogue revision if models were written around the services, then check again the
    items checked against older names; the number of items withheld (0 when run again)."""
    catalogue_revision_sync()
    return blinding_recheck.items_recheck().withheld


def recheck_blinding_send(revision: int) -> None:
    """The catalogue moved to ``revision`` (its transaction has committed): sweep the items now. A broker
    that cannot be reached leaves it to Celery beat and to next-item's own check."""
    try:
        recheck_blinding.delay()
    except BrokerUnreachable as exc:
        logger.warning(
            "catalogue revision %s: blinding sweep not queued (%s); items are checked when next "
            "shown and by the periodic sweep",
            revision,
            exc,
        )
    except Exception as exc:  # noqa: BLE001 - eager, it ran here: the catalogue write has committed already
        if not settings.CELERY_TASK_ALWAYS_EAGER:
            raise
        logger.warning("catalogue revision %s: blinding sweep failed: %r", revision, exc)
