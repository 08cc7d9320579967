"""Many rows in one PostgreSQL statement, sent as one JSON document (``jsonb_to_recordset``).

Django's ``bulk_create`` sends a VALUES row of parameters per model instance, and psycopg quotes every
parameter in Python: for thousands of small rows that quoting, and the server's parsing and planning of a
statement with thousands of placeholders, cost more than the rows' own work. Here the rows travel as one
JSON array (encoded in C by ``json``, parsed by the server), beside the values every row shares, so the
statement text has a fixed number of placeholders whatever the number of rows.

The document is read as ``jsonb``: parsed once, each row's values then found by key in its binary form. Read
as ``json`` it was parsed twice (``json_in`` validates the text, ``json_to_recordset`` parses it again and
builds a hash table of each row's keys) and a ``jsonb`` column's value was cut out as text and parsed a
third time: callgrind on the PostgreSQL backend over a 10-task inline judge run, 2.020 → 2.014 G
instructions, the run's digest unchanged. Numbers pass through ``numeric``, which has no negative zero, so
no float column is carried in a document (the statements carry integers, text, booleans and ``jsonb``).

PostgreSQL only: callers keep Django's own path for other databases. Users: the judge chunk's planned
comparisons (and, through :func:`recordset_json`, its verdicts' UPDATE), Novelty context items and TIG
extractions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from django.db import connection, models

_SQL: dict[tuple, str] = {}

#: The documents' encoder: no space after the separators (the server's JSON parser, and before it the SQL lexer
#: of the statement the document is quoted into, read every byte of it one at a time; ``jsonb`` keeps no
#: whitespace, so every stored value is the same). Non-ASCII characters stay ``\uXXXX`` escapes: written as
#: they are, the document was a wider string for the encoder to build and for the driver to encode to UTF-8,
#: which cost this process more than the escapes cost the server. The rows are plain lists and dicts built for
#: the statement, never circular, so the encoder does not track the containers it is inside
#: (``check_circular``: one dict entry made and removed for each).
DOCUMENT_ENCODER = json.JSONEncoder(separators=(",", ":"), check_circular=False)

#: A document row's keys: its values' positions as one letter each (``a`` the first), which the statement's
#: record definition names in the same order. Keyed by column name, the keys were half of a planned
#: comparison's row (``{"model_x_id":3,...}``, ~130 bytes against ~65), and the server reads every byte of the
#: document twice (the SQL lexer of the literal, then the JSON parser, which copies each key's characters one
#: at a time, then sorts and compares the keys of every row object): callgrind on the PostgreSQL backend over
#: a 10-task inline judge run, 2.014 → 1.975 G instructions (``jsonb_in`` −36 M), the run's digest unchanged.
ROW_KEYS = "abcdefghijklmnopqrstuvwxyz"


def row_keys(per_row: Sequence[str]) -> str:
    """The keys of a document row carrying ``per_row`` values, in order (one letter each)."""
    if len(per_row) > len(ROW_KEYS):
        raise ValueError(f"a document row carries at most {len(ROW_KEYS)} values, not {len(per_row)}")
    return ROW_KEYS[:len(per_row)]


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


def recordset_insert_sql(
    model: type[models.Model], *, shared: Sequence[str], per_row: Sequence[str], returning: Sequence[str] = (),
    on_conflict: str = "",
) -> str:
    """``INSERT INTO <model> (shared..., per_row...) SELECT %s..., r.<per_row>... FROM jsonb_to_recordset(%s::jsonb)``.

    ``shared`` and ``per_row`` are field names (``attname`` or name) of ``model``; the parameters are the
    shared fields' database values in order, then :func:`recordset_json` of the rows (the per-row values
    keyed by position, :func:`row_keys`). ``on_conflict`` is appended as written (e.g. ``ON CONFLICT DO NOTHING``);
    ``returning`` names the columns to return. Built once per (model, fields, clauses)."""
    key = (model._meta.label, tuple(shared), tuple(per_row), tuple(returning), on_conflict)
    if key not in _SQL:
        field = model._meta.get_field
        shared_fields = [field(name) for name in shared]
        row_fields = [field(name) for name in per_row]
        floats = [f.name for f in row_fields if isinstance(f, models.FloatField)]
        if floats:
            raise ValueError(f"a float column read from a jsonb document loses its sign at zero: {floats}")
        keys = row_keys(per_row)
        record = ", ".join(f"{key} {f.db_type(connection)}" for key, f in zip(keys, row_fields, strict=True))
        sql = (f"INSERT INTO {_quote(model._meta.db_table)} "
               f"({', '.join(_quote(f.column) for f in [*shared_fields, *row_fields])}) "
               f"SELECT {', '.join(['%s'] * len(shared_fields) + ['r.' + key for key in keys])} "
               f"FROM jsonb_to_recordset(%s::jsonb) AS r({record})")
        if on_conflict:
            sql += f" {on_conflict}"
        if returning:
            sql += f" RETURNING {', '.join(_quote(field(name).column) for name in returning)}"
        _SQL[key] = sql
    return _SQL[key]


def recordset_json(per_row: Sequence[str], rows: Iterable[Sequence]) -> str:
    """The rows (values in ``per_row`` order, already JSON-ready: a JSON field's value is its Python
    object) as one JSON array of objects keyed by position (:func:`row_keys`)."""
    keys = row_keys(per_row)
    return DOCUMENT_ENCODER.encode([dict(zip(keys, row, strict=True)) for row in rows])
