"""Pointing this test process's Celery app at the test broker for one test, and putting it back exactly.

``evalsite.celery.app.conf`` is a live view of Django's settings (``config_from_object``): a test that
changes ``settings.CELERY_*`` through pytest-django's ``settings`` fixture changes Celery too, and the
change ends with the test. ``app.conf.update(...)`` instead writes into Celery's own ``changes`` layer,
which sits above the settings and outlives the test. Restoring by writing the old values back (as two
fixtures once did) pins them there for every later test of the process, and the app's connection pool
and ``amqp`` (queues, routes) stay built for the last broker and queue. So the values are *removed* from
``changes`` again and the pool and ``amqp`` dropped, and the next test sees the site's settings.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from evalsite.celery import app

__all__ = ["celery_app_on"]


def _drop_connections() -> None:
    if app._pool is not None:
        app._pool.force_close_all()
    app._pool = None  # the connection and producer pools are made for one broker address
    app.__dict__.pop("amqp", None)  # its queues and router are made for one default queue


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
