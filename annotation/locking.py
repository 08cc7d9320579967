"""Whether the database takes row locks that skip locked rows (PostgreSQL does; SQLite serialises whole
transactions instead): the annotation services lock rows only where they can."""

from __future__ import annotations

from django.db import connection


def row_locks_available() -> bool:
    return connection.features.has_select_for_update_skip_locked
