"""The rows of a judge chunk's ledger and the statements it writes them with (the resumability rule of
:mod:`leaderboard.ekphrasis.judge_runs`: a call is stored as a planned comparison before it is made, its
verdict after).

:mod:`leaderboard.ekphrasis.judge_chunk` keeps a task's comparisons of one dimension in a ledger and writes
each round in one transaction: the verdicts, the run's call counter and the next plan. This module builds
those statements, once per database vendor, and their parameters:

- on PostgreSQL a round is one statement (:func:`write_sql`): the verdicts' UPDATE fed one JSON document
  (:func:`verdict_sql`), the counter's UPDATE and the plan's INSERT ... ON CONFLICT DO NOTHING RETURNING
  (:func:`insert_sql`) as data-modifying ``WITH`` queries;
- otherwise the same three as statements inside one transaction: on SQLite always (the verdicts sent row
  by row), on PostgreSQL when the rows to insert are automatic records rather than plans;
- the chunk's finishing step (:func:`finish_sql`), one statement on PostgreSQL.

The ledger is any object with the attributes :class:`LedgerWrite` names.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from django.db import connection, models
from django.utils import timezone

from leaderboard.ekphrasis.models import Comparison, JudgeRun, JudgeRunTask
from leaderboard.json_recordset import DOCUMENT_ENCODER, recordset_insert_sql, recordset_json, row_keys

#: What a verdict writes on its planned comparison.
VERDICT_FIELDS = ("status", "winner", "confidence", "rationale", "per_item_outcomes", "repaired", "error", "attempts",
                  "judged_at", "checklist")


class Plan(NamedTuple):
    """A planned call before it is stored: what varies between the planned rows of a round (the other
    columns are the run's, the task's and the dimension's, or the model's defaults)."""

    model_x_id: int
    model_y_id: int
    kind: str
    repeat: int
    judge_name: str
    sequence: int
    shown_a_id: int
    shown_b_id: int


# A stored comparison of one task and dimension, as the planner reads it: its primary key, the columns
# of its plan, and the outcome of its call.
Stored = NamedTuple("Stored", [("pk", int), *Plan.__annotations__.items(),
                              ("status", str), ("winner", str), ("attempts", int)])

STORED_COLUMNS = ("id", *Stored._fields[1:])  # the tuple's fields, "pk" read as the column "id"


class LedgerWrite(Protocol):
    """What the statements read of a ledger (:class:`leaderboard.ekphrasis.judge_chunk._Ledger`)."""

    run: JudgeRun
    task: models.Model
    dimension: str
    unsaved: dict[int, list]  # verdict parameter rows (:data:`_VERDICT_ROW`), by pk
    unsaved_checklists: list  # on PostgreSQL the checklists the unsaved verdicts showed, each once
    encoded_checklists: dict[int, tuple[object, str]]
    unsaved_calls: int
    insert_defaults: list | None  # the planned rows' prepared defaults (:func:`insert_defaults`)


def write_sql(ledger: LedgerWrite, planned: list[Plan]) -> tuple[str, list]:
    """A round's write on PostgreSQL as one statement, atomic on its own: the verdicts' UPDATE and the
    call counter's as data-modifying ``WITH`` queries of the plan's INSERT (or of the counter's UPDATE when
    nothing is planned). They touch different rows (the judged comparisons, the run, the new plan), so
    running them in one snapshot changes nothing they write; one statement instead of three inside
    BEGIN ... COMMIT saves four round trips and the driver's and Django's work for each."""
    parts, params = [], []
    if ledger.unsaved:
        parts += [f"WITH verdict_rows AS ({verdict_sql()})", calls_done_sql()]
        params += [*verdict_params(ledger), ledger.unsaved_calls, ledger.run.pk]
    if planned:
        insert, insert_params = insert_sql(ledger, planned)
        if parts:
            parts[-1] = f", calls_done AS ({parts[-1]})"
        parts.append(insert)
        params += insert_params
    key = ("write", bool(ledger.unsaved), bool(planned))
    if key not in _SQL:
        _SQL[key] = " ".join(parts)
    return _SQL[key], params


#: Planned rows per INSERT statement (SQLite's limit on bound variables).
INSERT_BATCH = 500


def prepared_value(name: str, value):
    return _FIELDS[name].get_db_prep_save(value, connection)


_FIELDS = {f.name: f for f in Comparison._meta.concrete_fields}
_SQL: dict[tuple | str, str] = {}  # statement texts, built once per database vendor (and row count); "finish" once


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


def verdict_params(ledger: LedgerWrite) -> list[str]:
    """The parameters of the PostgreSQL :func:`verdict_sql`: the checklists shown, then the verdict rows.

    The checklists' document is the JSON array of each one's JSON, encoded the first time the ledger sends it
    (``ledger.encoded_checklists``): the same text as encoding the list whole, since the encoder puts a bare
    comma between the items of an array."""
    encoded = ledger.encoded_checklists
    texts = []
    for value in ledger.unsaved_checklists:
        found = encoded.get(id(value))
        if found is None or found[0] is not value:
            found = encoded[id(value)] = (value, DOCUMENT_ENCODER.encode(value))
        texts.append(found[1])
    return ["[" + ",".join(texts) + "]", recordset_json(_VERDICT_ROW, ledger.unsaved.values())]


def verdict_sql() -> str:
    """The verdicts' UPDATE by primary key. On PostgreSQL one statement for all the rows of a round, sent
    as one JSON document of the rows (``jsonb_to_recordset``): one parse and plan per round instead of one
    per row, and one parameter to quote instead of eleven per row (JSON is encoded in C; the driver's
    quoting of many parameters, or of arrays of them, cost more than the rest of the write). The document
    is read as ``jsonb``, parsed once: read as ``json``, each row's per-item outcomes and checklist were cut
    out of it as text and parsed again into their ``jsonb`` columns (a fifth of the server's CPU for the
    statement; the stored values are the same). The checklists shown go once each, in a document of their
    own, and a row names its checklist by its position there: the calls of a round mostly show one
    checklist, which each row carried in full (a third of the document, encoded and parsed again for every
    row). On SQLite one parameterised statement sent for every row (``executemany``)."""
    key = ("verdict", connection.vendor)
    if key not in _SQL:
        fields = [_FIELDS[name] for name in VERDICT_FIELDS]
        table, pk = _quote(Comparison._meta.db_table), _quote(Comparison._meta.pk.column)
        if connection.vendor == "postgresql":
            checklist = _FIELDS["checklist"]  # a row's is the position of its checklist in the first parameter
            # the document's rows are keyed by position (row_keys), the primary key last
            keys = dict(zip([*fields, Comparison._meta.pk], row_keys(_VERDICT_ROW), strict=True))
            columns = ", ".join(f"{k} {'integer' if f is checklist else f.db_type(connection)}" for f, k in keys.items())

            def assignment(f) -> str:
                column = _quote(f.column)
                return f"{column} = (%s::jsonb -> verdict.{keys[f]})" if f is checklist else f"{column} = verdict.{keys[f]}"

            assignments = ", ".join(assignment(f) for f in fields)
            _SQL[key] = (f"UPDATE {table} SET {assignments} FROM jsonb_to_recordset(%s::jsonb) AS verdict({columns}) "
                         f"WHERE {table}.{pk} = verdict.{keys[Comparison._meta.pk]}")
        else:
            _SQL[key] = (f"UPDATE {table} SET " + ", ".join(f"{_quote(f.column)} = %s" for f in fields)
                         + f" WHERE {pk} = %s")
    return _SQL[key]


#: The fields of a verdict parameter row, in order, the primary key last.
_VERDICT_ROW = (*VERDICT_FIELDS, "id")


def calls_done_sql() -> str:
    key = ("calls_done", connection.vendor)
    if key not in _SQL:
        column = _quote(JudgeRun._meta.get_field("calls_done").column)
        _SQL[key] = (f"UPDATE {_quote(JudgeRun._meta.db_table)} SET {column} = {column} + %s "
                     f"WHERE {_quote(JudgeRun._meta.pk.column)} = %s")
    return _SQL[key]


def insert_sql(ledger: LedgerWrite, rows: list[Plan | Comparison]) -> tuple[str, list]:
    """One INSERT of planned rows that keeps any row already stored under the same identity
    (``ON CONFLICT DO NOTHING``: on PostgreSQL on the identity constraint, :data:`PLAN_CONFLICT`) and returns the inserted rows as the ledger
    stores them (SQLite does not promise the order of RETURNING rows; the ledger keys them by pk).
    A column a row does not carry takes the ledger's run, task and dimension or the field's default,
    prepared once per statement.

    On PostgreSQL a round's plans are sent as one JSON document (``jsonb_to_recordset``) beside the shared
    values: fourteen parameters whatever the number of rows, so the driver parses the statement once and
    reuses it, where a VALUES row per plan made it re-parse ~200 placeholders each round."""
    default = insert_defaults(ledger)
    if connection.vendor == "postgresql" and all(type(row) is Plan for row in rows):
        if "insert-plans" not in _SQL:
            _SQL["insert-plans"] = recordset_insert_sql(
                Comparison, shared=[INSERT_PLAN[k][0].attname for k in _SHARED_POSITIONS], per_row=Plan._fields,
                on_conflict=PLAN_CONFLICT, returning=STORED_COLUMNS)
        return _SQL["insert-plans"], [*(default[k] for k in _SHARED_POSITIONS), recordset_json(Plan._fields, rows)]
    params = []
    for row in rows:
        for (f, prepared, created), fallback in zip(INSERT_PLAN, default, strict=True):
            value = _MISSING if created else getattr(row, f.attname, _MISSING)
            if value is _MISSING:
                params.append(fallback)
            else:
                params.append(f.get_db_prep_save(value, connection) if prepared else value)
    key = ("insert-values", connection.vendor, len(rows))
    if key not in _SQL:
        table, returning = _quote(Comparison._meta.db_table), ", ".join(_quote(c) for c in STORED_COLUMNS)
        placeholders = "(" + ", ".join(["%s"] * len(INSERT_PLAN)) + ")"
        _SQL[key] = (f"INSERT INTO {table} ({', '.join(_quote(f.column) for f, _, _ in INSERT_PLAN)}) "
                     f"VALUES {', '.join([placeholders] * len(rows))} ON CONFLICT DO NOTHING RETURNING {returning}")
    return _SQL[key], params


#: The PostgreSQL plan INSERT's conflict clause: a row is skipped when another worker stored its identity first.
#: Named, the identity's index is the one unique index probed before each row is inserted; ``ON CONFLICT DO
#: NOTHING`` alone probed every unique index, the primary key's too, whose values come from the sequence (a
#: clash there is no plan stored first, and now raises rather than being skipped).
PLAN_CONFLICT = "ON CONFLICT ON CONSTRAINT comparison_identity_unique DO NOTHING"


def insert_defaults(ledger: LedgerWrite) -> list:
    """Each inserted field's value for a row that does not carry it, prepared for the database: the
    ledger's run, task and dimension, the creation time (now) or the field's default. All but the creation
    time are the same for every round of the ledger, so they are prepared on its first plan only (each
    field's preparation, a JSON default's adapter among them, cost more than the rest of building a round's
    INSERT)."""
    if ledger.insert_defaults is None:
        # the fields' own defaults are the same for every ledger: prepared once per database vendor (a JSON
        # default's adapter wraps a fresh default value, which the statement only reads), then the ledger's own
        vendor = connection.vendor
        if vendor not in _PREPARED_DEFAULTS:
            _PREPARED_DEFAULTS[vendor] = [None if created or f.attname in _LEDGER_COLUMNS else
                                          f.get_db_prep_save(f.get_default(), connection)
                                          for f, _, created in INSERT_PLAN]
        values = list(_PREPARED_DEFAULTS[vendor])
        shared = {"run_id": ledger.run.pk, "task_id": ledger.task.pk, "dimension": ledger.dimension}
        for k, name in _LEDGER_POSITIONS:
            values[k] = INSERT_PLAN[k][0].get_db_prep_save(shared[name], connection)
        ledger.insert_defaults = values
    now = timezone.now()
    default = list(ledger.insert_defaults)
    for k in _CREATED_POSITIONS:
        default[k] = INSERT_PLAN[k][0].get_db_prep_save(now, connection)
    return default


_MISSING = object()
#: Each inserted field; whether its value needs the field's preparation (JSON and dates: the others are
#: integers, strings, booleans and floats the database driver takes as they are); whether it is the
#: creation time (``auto_now_add``).
INSERT_PLAN = [
    (f, isinstance(f, models.JSONField | models.DateField), bool(getattr(f, "auto_now_add", False)))
    for f in Comparison._meta.concrete_fields if not f.primary_key
]
#: Positions in ``INSERT_PLAN``: the columns a plan row does not carry (sent once for the statement's rows), the
#: creation time's, and the ledger's run, task and dimension (with their attribute names).
_SHARED_POSITIONS = [k for k, (f, _, _) in enumerate(INSERT_PLAN) if f.attname not in Plan._fields]
_CREATED_POSITIONS = [k for k, (_, _, created) in enumerate(INSERT_PLAN) if created]
_LEDGER_COLUMNS = ("run_id", "task_id", "dimension")
_LEDGER_POSITIONS = [(k, f.attname) for k, (f, _, _) in enumerate(INSERT_PLAN) if f.attname in _LEDGER_COLUMNS]
#: The fields' own defaults, prepared for the database, by vendor (:func:`insert_defaults`).
_PREPARED_DEFAULTS: dict[str, list] = {}
assert {f.get_internal_type() for f, prepared, _ in INSERT_PLAN if not prepared} <= {
    "ForeignKey", "CharField", "TextField", "PositiveSmallIntegerField", "PositiveIntegerField", "FloatField",
    "BooleanField", "IntegerField", "BigIntegerField", "SmallIntegerField",
}, "a Comparison field needs preparation before it can be inserted raw"


def finish_sql() -> str:
    """On PostgreSQL the finishing step after the run's lock as one statement, not four: mark the chunk done
    (if it is not), count the run's done chunks, store the count and claim the finalising (running →
    finalising) when every chunk is done; returns whether this statement claimed it, and no row when the chunk
    was done already. It runs after the lock's statement, so its snapshot, taken when it starts, sees every
    chunk another worker finished before that worker let the lock go (what the lock is for,
    :func:`leaderboard.runs.lifecycle.run_counting_finished_units`). The count reads that snapshot, where this
    chunk is not done yet (the UPDATE's rows are not visible to the rest of its statement), so it adds the
    chunk it marked. ``before`` reads the run's status as the snapshot has it: the row is locked by this
    transaction, so that is its status now."""
    if "finish" not in _SQL:
        chunk_table, run_table = _quote(JudgeRunTask._meta.db_table), _quote(JudgeRun._meta.db_table)
        chunk_pk, run_pk = _quote(JudgeRunTask._meta.pk.column), _quote(JudgeRun._meta.pk.column)
        done, calls_done = _quote("done"), _quote(JudgeRunTask._meta.get_field("calls_done").column)
        run_fk = _quote(JudgeRunTask._meta.get_field("run").column)
        status, tasks_done = _quote("status"), _quote(JudgeRun._meta.get_field("tasks_done").column)
        tasks_total = _quote(JudgeRun._meta.get_field("tasks_total").column)
        _SQL["finish"] = (
            f"WITH marked AS (UPDATE {chunk_table} SET {done} = true, {calls_done} = %s "
            f"WHERE {chunk_pk} = %s AND NOT {done} RETURNING 1), "
            f"counted AS (SELECT (SELECT count(*) FROM {chunk_table} WHERE {run_fk} = %s AND {done}) "
            f"+ (SELECT count(*) FROM marked) AS n) "
            f"UPDATE {run_table} SET {tasks_done} = counted.n, {status} = CASE WHEN counted.n >= {run_table}.{tasks_total} "
            f"AND {run_table}.{status} = %s THEN %s ELSE {run_table}.{status} END "
            f"FROM counted, (SELECT {status} AS old FROM {run_table} WHERE {run_pk} = %s) AS before "
            f"WHERE {run_table}.{run_pk} = %s AND EXISTS (SELECT 1 FROM marked) "
            f"RETURNING before.old = %s AND counted.n >= {run_table}.{tasks_total}"
        )
    return _SQL["finish"]
