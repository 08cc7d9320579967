"""The per-request health check of a kept PostgreSQL connection (evalsite/db_backends/postgresql/base.py):
a quiet idle socket sends nothing; a connection the server ended is still found and replaced before the
request's first statement, as Django's ``SELECT 1`` found it."""

from __future__ import annotations

import select

import psycopg
import pytest
from django.db import connection

from evalsite.db_backends.postgresql.base import socket_quiet
from tests.conftest import require_service

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _terminate(pid: int) -> None:
    db = connection.settings_dict
    dsn = (f"host={db['HOST'] or '127.0.0.1'} port={db['PORT'] or 5432} dbname={db['NAME']} "
           f"user={db['USER'] or 'postgres'} password={db['PASSWORD'] or ''}")
    with psycopg.connect(dsn, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _new_request() -> None:
    # what Django's handler does when a request starts (close_old_connections), less closing a connection
    # older than CONN_MAX_AGE, which a long test session's is: the check is due again
    connection.health_check_done = False


@pytest.fixture
def asked(monkeypatch):
    require_service("postgres")
    calls = []
    usable = connection.is_usable
    monkeypatch.setattr(connection, "is_usable", lambda: calls.append(1) or usable())
    return calls


def test_a_kept_connection_whose_socket_is_quiet_is_not_asked_select_1(asked):
    pid = _backend_pid()
    _new_request()
    connection.close_if_health_check_failed()
    assert asked == []
    assert _backend_pid() == pid  # the same connection, kept


def test_a_connection_the_server_ended_is_closed_by_the_check_and_the_request_reconnects(asked):
    pid = _backend_pid()
    _terminate(pid)
    # the ended backend's message and end of stream reach this side's socket
    select.select([connection.connection.fileno()], [], [], 5)
    _new_request()
    connection.close_if_health_check_failed()
    assert asked == [1]  # the socket had something to read: Django's own check was asked, and failed
    assert connection.connection is None
    assert _backend_pid() != pid


def test_a_connection_in_a_transaction_is_asked_as_django_asks(asked):
    _backend_pid()
    _new_request()
    connection.connection.execute("BEGIN")
    try:
        connection.close_if_health_check_failed()
    finally:
        connection.connection.execute("ROLLBACK")
    assert asked == [1]


def test_a_socket_that_cannot_be_polled_is_not_quiet():
    assert socket_quiet(-1) is False


# Timestamps read by psycopg's own loader on a UTC connection: the same values as Django's loader.

TIMESTAMPS = ["2020-01-01 00:00:00+00", "2020-01-01 00:00:00.5+03", "1999-12-31 23:59:59.999999-09:30",
              "2026-03-29 01:30:00.000001+01", "0001-01-01 00:00:00+00", "9999-12-31 23:59:59.999999+00",
              "2024-02-29 12:00:00.1-00:00:30", "1970-01-01 00:00:00+14"]


def _read(cursor) -> list:
    cursor.execute("SELECT " + ", ".join("%s::timestamptz" for _ in TIMESTAMPS) + ", now()", TIMESTAMPS)
    return list(cursor.fetchone())


def test_timestamps_are_read_by_psycopgs_own_loader_on_a_utc_connection():
    require_service("postgres")
    from psycopg.pq import Format

    from evalsite.db_backends.postgresql.base import utc_timestamptz_loader

    connection.ensure_connection()
    assert connection.connection.info.parameter_status("TimeZone") == "UTC"
    loader = connection.connection.adapters.get_loader(1184, Format.TEXT)
    assert loader is utc_timestamptz_loader()
    assert not loader.__module__.startswith("django")


def test_timestamps_read_equal_djangos_loader_value_and_time_zone():
    require_service("postgres")
    import datetime

    from django.db.backends.postgresql.psycopg_any import register_tzloader
    from psycopg.pq import Format

    with connection.cursor() as cursor:
        ours = _read(cursor)
    with connection.cursor() as cursor:
        register_tzloader(connection.timezone, cursor.cursor)  # Django's own loader, on this cursor only
        assert cursor.cursor.adapters.get_loader(1184, Format.TEXT).__module__.startswith("django")
        djangos = _read(cursor)
    assert ours[:-1] == djangos[:-1]
    for a, b in zip(ours, djangos):
        assert a.tzinfo is b.tzinfo is datetime.timezone.utc
    assert [a.isoformat() for a in ours[:-1]] == [b.isoformat() for b in djangos[:-1]]
