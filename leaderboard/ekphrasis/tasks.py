"""Ekphrasis's one Celery task: warm a new snapshot's cache (leaderboard.ekphrasis.uncertainty), sent once
the transaction that wrote the snapshot commits. Thin: it takes the snapshot's id and calls the service."""

from __future__ import annotations

import logging
from importlib import import_module

from celery import shared_task
from celery.signals import worker_init
from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnreachable

from leaderboard.ekphrasis.uncertainty import snapshot_uncertainty_warm

logger = logging.getLogger(__name__)


@shared_task(name="ekphrasis.snapshot_uncertainty_warm")
def snapshot_uncertainty_warm_task(snapshot_id: int) -> None:
    snapshot_uncertainty_warm(snapshot_id=snapshot_id)


#: The modules a judge run's chunk imports on its first use (its judges, the Novelty contexts' TIG population).
WORKER_PRELOAD = ("leaderboard.ekphrasis.judges", "engine.tig.population", "engine.tig.leaveout", "engine.tig.score",
                  "engine.tig.checklist", "engine.embed")


@worker_init.connect
def worker_preload(sender=None, **kwargs) -> None:
    """A Celery worker imports :data:`WORKER_PRELOAD` and igraph before it forks its pool's processes, which
    inherit them. Imported by each process on its first chunk they cost ~0.08 s of CPU there (igraph alone
    0.06 s), paid by every process at once at a run's start: a fixed serial part of a run on several workers.
    The compiled planner and a Novelty context's kernels are loaded too (numba's start-up and its disk cache,
    ~0.3 s and ~0.1 s of CPU a process). No connection is opened."""
    from engine.active_sampling import load_compiled_planner
    from engine.tig.clusters import leiden_available
    from engine.tig.population import load_compiled_kernels

    for name in WORKER_PRELOAD:
        import_module(name)
    leiden_available()  # imports igraph (without matplotlib: engine.tig.clusters._import_igraph)
    load_compiled_planner()
    load_compiled_kernels()


def snapshot_written(sender, instance, created: bool, raw: bool = False, **kwargs) -> None:
    """post_save of a LeaderboardSnapshot (connected in LeaderboardConfig.ready): a new one is warmed."""
    if created and not raw:
        snapshot_uncertainty_warm_on_commit(instance.pk)


def snapshot_uncertainty_warm_on_commit(snapshot_id: int) -> None:
    """Once the transaction that wrote the snapshot commits, a worker warms its cache
    (:func:`snapshot_uncertainty_warm`). Without a broker only where eager jobs run in the background (the
    finishing step is then off the request already; the tests turn that off, so finishing a run stays quick
    there); a broker that cannot be reached leaves the work to the first reader, as before."""
    if settings.CELERY_TASK_ALWAYS_EAGER and not settings.ATELIER_EAGER_JOBS_IN_BACKGROUND:
        return  # nothing registered: the first reader computes it

    def send() -> None:
        try:
            snapshot_uncertainty_warm_task.delay(snapshot_id)
        except BrokerUnreachable as exc:
            logger.warning("snapshot %s: cache warm-up not queued (%s); its first reader computes it", snapshot_id, exc)
        except Exception as exc:  # noqa: BLE001 - eager, it ran here: a cache warm-up must not fail the finished run
            if not settings.CELERY_TASK_ALWAYS_EAGER:
                raise
            logger.warning("snapshot %s: cache warm-up failed: %r", snapshot_id, exc)

    transaction.on_commit(send)
