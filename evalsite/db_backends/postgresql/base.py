"""The site's PostgreSQL backend: django-prometheus's counted one (queries, errors and connections for
/metrics), whose per-request health check asks the socket before it asks the server, and whose timestamps
are read by psycopg's compiled loader (issue 30).

Django's health check (``CONN_HEALTH_CHECKS``) sends ``SELECT 1`` on a kept connection at the start of every
request: a round trip to PostgreSQL before the request's first statement, on every annotator request. A
connection the server ended — a restart, a terminated backend, a crash — has something waiting on its socket
while it is idle: PostgreSQL's FATAL message and the end of the stream (the kernel closes a dead backend's
socket). So the check here looks at the idle socket first, without waiting: nothing to read means the
connection is as the last request left it, and nothing is sent; anything to read (or a socket that cannot be
polled) goes on to Django's own ``SELECT 1``, which closes the connection if it fails, as before. Only the
health check changes: ``is_usable`` (asked after a request's database error) still sends ``SELECT 1``.

Timestamps: Django reads every ``timestamptz`` with its own loader, a subclass of psycopg's pure-Python one
(a regular expression and a dozen Python operations a value, then ``replace(tzinfo=connection.timezone)``)
even where psycopg's compiled loader is installed; a combined label reads 13 of them. With ``USE_TZ`` and the
connection in UTC (Django's ``ensure_timezone`` sets the session's TimeZone to ``UTC`` when it connects),
psycopg's own loader returns the same value with the same ``datetime.timezone.utc``, so that loader reads
them (:func:`utc_adapters`); any other time zone keeps Django's.

Text choices: enum members sent as parameters find ``str``'s dumpers at once (choice_dumpers.py).
"""

from __future__ import annotations

import datetime
import functools
import select

from django_prometheus.db.backends.postgresql.base import DatabaseWrapper as CountedDatabaseWrapper

from evalsite.db_backends.postgresql.choice_dumpers import choice_adapters
from evalsite.loop_checks import loop_checked_methods


def socket_quiet(fileno: int) -> bool:
    """Whether nothing is waiting to be read on an idle connection's socket (no message, no end of stream),
    asked without waiting. False where the socket cannot be polled."""
    try:
        poller = select.poll()
        poller.register(fileno, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except (OSError, ValueError):
        return False


@functools.cache
def utc_timestamptz_loader() -> type:
    """A text loader of ``timestamptz`` that is psycopg's own (compiled where psycopg's binary package is
    installed; that class cannot be subclassed), marked with the time zone Django compares loaders by
    (``DatabaseWrapper.create_cursor``): each instance hands psycopg the ``load`` of psycopg's loader."""
    import psycopg
    from psycopg.adapt import Loader
    from psycopg.pq import Format

    default = psycopg.adapters.get_loader(psycopg.adapters.types["timestamptz"].oid, Format.TEXT)

    class UtcTimestamptzLoader(Loader):
        timezone = datetime.timezone.utc

        def __init__(self, oid, context=None):
            super().__init__(oid, context)
            self.load = default(oid, context).load  # psycopg calls the instance's load: this one, compiled

        def load(self, data):  # never called: every instance has its own (above)
            raise NotImplementedError

    return UtcTimestamptzLoader


@functools.cache
def utc_adapters(template):
    """Django's adapters template for a UTC connection, with :func:`utc_timestamptz_loader`."""
    from psycopg.adapt import AdaptersMap

    adapters = AdaptersMap(template)
    adapters.register_loader("timestamptz", utc_timestamptz_loader())
    return adapters


class DatabaseWrapper(CountedDatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        # Django's timezone is datetime.timezone.utc exactly when USE_TZ is on and DATABASES sets no TIME_ZONE,
        # and then it sets the connection's TimeZone to UTC (ensure_timezone) before any statement is read.
        context = params.get("context")
        if context is not None:
            if self.timezone is datetime.timezone.utc:
                context = utc_adapters(context)
            params["context"] = choice_adapters(context)
        return params

    def close_if_health_check_failed(self):
        """Django's check (close a kept connection that fails ``SELECT 1``), sent only when the idle
        connection's socket has something to read or cannot be polled (see the module docstring)."""
        if self.connection is None or not self.health_check_enabled or self.health_check_done:
            return
        if not self._idle_and_quiet() and not self.is_usable():
            self.close()
        self.health_check_done = True

    def _idle_and_quiet(self) -> bool:
        from psycopg import pq

        raw = self.connection
        try:
            idle = not raw.closed and raw.pgconn.transaction_status == pq.TransactionStatus.IDLE
            return idle and socket_quiet(raw.fileno())
        except Exception:  # noqa: BLE001 — any doubt about the connection: ask the server
            return False


# Django's @async_unsafe methods (ensure_connection, cursor, commit, …) ask for a running event loop without
# raising (evalsite/loop_checks.py): the same refusal in a thread that runs one, no exception in a sync worker.
for _name, _method in loop_checked_methods(CountedDatabaseWrapper).items():
    setattr(DatabaseWrapper, _name, _method)
