"""The site's PostgreSQL backend: django-prometheus's counted one (queries, errors and connections for
/metrics), whose per-request health check asks the socket before it asks the server (issue 30).

Django's health check (``CONN_HEALTH_CHECKS``) sends ``SELECT 1`` on a kept connection at the start of every
request: a round trip to PostgreSQL before the request's first statement, on every annotator request. A
connection the server ended — a restart, a terminated backend, a crash — has something waiting on its socket
while it is idle: PostgreSQL's FATAL message and the end of the stream (the kernel closes a dead backend's
socket). So the check here looks at the idle socket first, without waiting: nothing to read means the
connection is as the last request left it, and nothing is sent; anything to read (or a socket that cannot be
polled) goes on to Django's own ``SELECT 1``, which closes the connection if it fails, as before. Only the
health check changes: ``is_usable`` (asked after a request's database error) still sends ``SELECT 1``.
"""

from __future__ import annotations

import select

from django_prometheus.db.backends.postgresql.base import DatabaseWrapper as CountedDatabaseWrapper


def socket_quiet(fileno: int) -> bool:
    """Whether nothing is waiting to be read on an idle connection's socket (no message, no end of stream),
    asked without waiting. False where the socket cannot be polled."""
    try:
        poller = select.poll()
        poller.register(fileno, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except (OSError, ValueError):
        return False


class DatabaseWrapper(CountedDatabaseWrapper):
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
