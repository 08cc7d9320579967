"""Pointing this test process's Celery app at the test broker for one test, and putting it back exactly.

``evalsite.celery.app.conf`` is a live view of Django's settings (``config_from_object``): a test that
changes ``settings.CELERY_*`` through pytest-django's ``settings`` fixture changes Celery too, and the
change ends with the test. ``app.conf.update(...)`` instead writes into Celery's own ``changes`` layer,
which sits above the settings and outlives the test. Restoring by writing the old values back (as two
fixtures once did) pins them there for every later test of the process, and the app's connection pool
and ``amqp`` (queues, routes) stay built for the last broker and queue; kombu's process-wide pools, which
the app looks its pool up in by broker address, hand a pool closed meanwhile back to the next test. So the
values are *removed* from ``changes`` again, kombu's pools reset and ``amqp`` dropped, and the next test
starts from the site's settings and fresh connections.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kombu import pools
from kombu.transport.redis import Channel

from evalsite.celery import app

__all__ = ["broker_emptied", "celery_app_on"]

#: kombu's Redis transport keeps every unacknowledged message of a database (all queues) under these keys.
UNACKED_KEYS = ("unacked", "unacked_index", "unacked_mutex")


def _drop_connections() -> None:
    # The app's connection and producer pools are kombu's process-wide pools, looked up by broker address:
    # dropping the app's reference is not enough, a pool closed meanwhile would be handed back by the lookup
    # ("Acquire on closed pool"). kombu.pools.reset() closes them and forgets them: the next send builds new.
    pools.reset()
    app._pool = None
    app.__dict__.pop("amqp", None)  # its queues, router and producer pool are made for one default queue


@contextmanager
def celery_app_on(broker_url: str, queue: str, **conf) -> Iterator[None]:
    """Within the block this process sends its tasks to ``broker_url`` / ``queue`` (not eagerly), as the
    web process does with ``CELERY_BROKER_URL`` set; afterwards the app reads the site's settings again."""
    values = {"task_always_eager": False, "broker_url": broker_url, "task_default_queue": queue, **conf}
    _drop_connections()
    app.conf.update(values)
    try:
        yield
    finally:
        for key in values:
            app.conf.changes.pop(key, None)
        _drop_connections()


def broker_emptied(client, queue: str) -> None:
    """Empty the test broker of ``queue`` (and its priority lists) and of kombu's unacknowledged hash.

    The hash is one per Redis database, shared by every queue: a worker killed in one test (or stopped
    while holding a prefetched message) leaves its entry there, and a later test reading the broker, as
    :func:`leaderboard.runs.lost_messages.runs_held_by_broker` does, would see another test's run. The
    broker tests run one after another in one pytest process (tests/conftest.py), so no other test's
    worker is using the hash meanwhile. Only this queue's own lists go: a prefix match would also take
    the queue of a test process whose pid begins with this one's (tests/leaderboard/runs/test_queue.py
    runs outside the broker group)."""
    lists = [queue, *(f"{queue}{Channel.sep}{step}" for step in Channel.priority_steps if step)]
    client.delete(*lists, *UNACKED_KEYS)
