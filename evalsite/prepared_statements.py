"""Statements PostgreSQL plans once per connection (issue 30), for the few an annotator's every request
sends: the session, the request's facts, the slot take, the submit, the progress counters, the item and
the inserts.

Measured on this project's own labelling path (one combined ``submit?next=1``, PostgreSQL 15):
``EXPLAIN ANALYZE`` gives 0.5–2.5 ms of *planning* per statement against 0.03–0.3 ms of execution
(the request-facts statement is the costliest to plan, 2.5 ms); PostgreSQL's backend spent 9.6–13.2 ms
of CPU per label before, 4.2–6.1 ms with these statements prepared (README, "Benchmarks"). Django's
psycopg 3 cursors bind parameters on the client, which cannot prepare; so :func:`statement_cursor` is
Django's own cursor wrapper (its execute wrappers, the query log that tests count, django-prometheus's
counters, its error translation) around a server-binding psycopg cursor whose every ``execute`` is a
named prepared statement (``prepare=True``): PostgreSQL parses it once per connection
and, after five custom plans, keeps a generic plan when that costs no more (``plan_cache_mode=auto``).

Only statements written for it go through it: their parameters are typed by psycopg (server-side
binding) instead of inlined as literals, and the annotation tests on PostgreSQL run every one of them.
Anywhere else, and on SQLite, a cursor is Django's plain one. ``ATELIER_DB_PREPARED_STATEMENTS=0`` turns preparing off (a transaction-mode
connection pooler such as PgBouncer before 1.21 cannot keep a connection's prepared statements).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

from django.conf import settings
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.utils.connection import ConnectionProxy

#: psycopg's count after which it prepares a statement on its own: never, for this site (only
#: :func:`statement_cursor` asks, explicitly).
_NEVER_BY_COUNT = 2**62


@functools.cache
def _preparing_class(factory: type, alias: str, vendor: str) -> type:
    """A server-binding psycopg cursor class that prepares every statement, counted as the connection's
    own cursor class ``factory`` counts (django-prometheus wraps it; ours counts the same series)."""
    import psycopg

    class PreparingCursor(psycopg.Cursor):
        def execute(self, query, params=None, *, prepare=None, binary=None):
            return super().execute(query, params, prepare=True, binary=binary)

        def _convert_query(self, query, vars=None):
            # psycopg records the statement only when it sends its text, not when it runs a prepared one;
            # Django's query log (CaptureQueriesContext, DEBUG) reads that record, so it is kept for each.
            converted = super()._convert_query(query, vars)
            self._query = converted
            return converted

    if factory.__module__.startswith("django_prometheus"):
        # The same series as django-prometheus's wrapper, its labels looked up once (evalsite/counted_cursor.py).
        from evalsite.counted_cursor import counted_cursor_class

        return counted_cursor_class(PreparingCursor, alias, vendor)
    return PreparingCursor


def preparing_enabled(connection: BaseDatabaseWrapper) -> bool:
    """Whether :func:`statement_cursor` prepares on this connection: PostgreSQL through psycopg 3,
    unless ATELIER_DB_PREPARED_STATEMENTS is off."""
    return (connection.vendor == "postgresql" and settings.ATELIER_DB_PREPARED_STATEMENTS
            and _psycopg3())


@functools.cache
def _psycopg3() -> bool:
    from django.db.backends.postgresql.psycopg_any import is_psycopg3

    return is_psycopg3


def _new_prepared_cursor(connection: BaseDatabaseWrapper):
    """A preparing psycopg cursor on the connection, with Django's time zone for its timestamps."""
    from django.db.backends.postgresql.base import TIMESTAMPTZ_OID
    from django.db.backends.postgresql.psycopg_any import register_tzloader
    from psycopg.pq import Format

    raw = connection.connection
    if raw.prepare_threshold is None:
        # Django turns psycopg's preparing off per connection (None) for poolers' sake; a number lets an
        # explicit ``prepare=True`` through. Django's own cursors bind on the client and never prepare,
        # so no other statement is prepared by it.
        raw.prepare_threshold = _NEVER_BY_COUNT
    cursor = _preparing_class(raw.cursor_factory, connection.alias, connection.vendor)(raw)
    # The same time zone for timestamptz results as Django's own cursors (it registers one only when the
    # connection's differs, see DatabaseWrapper.create_cursor).
    if connection.timezone != raw.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT).timezone:
        register_tzloader(connection.timezone, cursor)
    return cursor


def _kept_cursor(connection: BaseDatabaseWrapper):
    """The connection's kept preparing cursor, made on its first use and kept with the psycopg connection
    it was made on (a reconnect makes a new one): a cursor a statement, as Django makes, costs more to
    set up than the statement to run."""
    kept = getattr(connection, "_atelier_prepared_cursor", None)
    if kept is not None and kept[0] is connection.connection and not kept[1].closed:
        return kept[1]
    cursor = _new_prepared_cursor(connection)
    connection._atelier_prepared_cursor = (connection.connection, cursor)
    return cursor


def _resolved(connection: BaseDatabaseWrapper) -> BaseDatabaseWrapper:
    """The connection itself where the caller passed ``django.db.connection``, a proxy whose every
    attribute is a lookup of the current connection in a thread-local store: this module reads a dozen
    attributes a statement, a fifth of a prepared statement's client CPU when each went through it."""
    if isinstance(connection, ConnectionProxy):
        return connection._connections[connection._alias]
    return connection


@contextlib.contextmanager
def statement_cursor(connection: BaseDatabaseWrapper) -> Iterator[CursorWrapper]:
    """``connection.cursor()``, whose statements are prepared on PostgreSQL (see the module docstring):
    Django's wrapper (its query log, error translation and execute wrappers) around the connection's
    kept preparing cursor. One opened inside another gets a cursor of its own (the kept one may still
    hold the outer statement's rows), closed on leaving as Django closes its cursors."""
    connection = _resolved(connection)
    if not preparing_enabled(connection):
        with connection.cursor() as cursor:
            yield cursor
        return
    # What connection.cursor() does before it makes a cursor: the health check, the connection.
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    nested = getattr(connection, "_atelier_prepared_in_use", False)
    prepared = _new_prepared_cursor(connection) if nested else _kept_cursor(connection)
    connection._atelier_prepared_in_use = True
    try:
        yield connection.make_debug_cursor(prepared) if connection.queries_logged else connection.make_cursor(prepared)
    finally:
        if nested:
            prepared.close()
        else:
            connection._atelier_prepared_in_use = False


__all__ = ["preparing_enabled", "statement_cursor"]
