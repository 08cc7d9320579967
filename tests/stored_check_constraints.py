"""Reading a check constraint as PostgreSQL stores it, and judging values by it: the helpers of the tests that
compare a compact stored form (migrations annotation 0022, leaderboard 0016) with the model's own rule."""

from __future__ import annotations

from django.db import connection


def _stored(model, name: str, column: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {column} FROM pg_constraint WHERE conrelid = %s::regclass AND conname = %s",
            [model._meta.db_table, name],
        )
        return cursor.fetchone()[0]


def stored_check(model, name: str) -> str:
    """The constraint's expression as PostgreSQL stores it (``pg_get_expr`` of its node tree)."""
    return _stored(model, name, "pg_get_expr(conbin, conrelid)")


def stored_check_nodes(model, name: str) -> str:
    """The constraint's stored node tree as text (what PostgreSQL reads back at every write of the table)."""
    return _stored(model, name, "conbin::text")


def djangos_check(model, name: str) -> str:
    """The rule as Django writes it from the model (what the database held before a compacting migration)."""
    constraint = next(c for c in model._meta.constraints if c.name == name)
    with connection.schema_editor(atomic=False, collect_sql=True) as editor:
        return constraint._get_check_sql(model, editor)


def check_verdicts(expression: str, columns, rows) -> list[bool]:
    """Whether a row with these values passes the check (a check passes unless it is false); ``columns``:
    (name, SQL type) pairs, ``rows``: tuples of values in that order."""
    names = ", ".join(name for name, _ in columns)
    values = ", ".join("(" + ", ".join(f"%s::{kind}" for _, kind in columns) + ")" for _ in rows)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT ({expression}) IS NOT FALSE FROM (VALUES {values}) AS t({names})",
            [value for row in rows for value in row],
        )
        return [passes for (passes,) in cursor.fetchall()]
