"""The SQL that writes a judge chunk's ledger (leaderboard/ekphrasis/ledger_statements.py, issue 30): the planned
rows' insert and its conflict clause, their defaults prepared once a process, the verdicts' document (each
checklist shown sent once, every value stored as the judge gave it), and the verdict columns no index holds."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.ekphrasis import judge_chunk, judge_runs, judges, ledger_statements
from leaderboard.ekphrasis.models import Comparison
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db


def _insert_defaults_per_ledger(ledger) -> list:
    """The prepared defaults as they were: every field's prepared for each ledger, the creation time each round."""
    from django.utils import timezone

    shared = {"run_id": ledger.run.pk, "task_id": ledger.task.pk, "dimension": ledger.dimension}
    prepared = [None if created else f.get_db_prep_save(shared.get(f.attname, f.get_default()), connection)
                for f, _, created in ledger_statements.INSERT_PLAN]
    now = timezone.now()
    return [f.get_db_prep_save(now, connection) if created else value
            for (f, _, created), value in zip(ledger_statements.INSERT_PLAN, prepared, strict=True)]


def _dumped(values: list) -> list:
    """Values as the driver sends them (a JSON default's adapter is a new object each time it is made)."""
    return [getattr(v, "obj", v) if type(v).__name__ in ("Jsonb", "Json") else v for v in values]


def _status_preparations(monkeypatch) -> list:
    """The values the comparisons' status field prepares for the database from now on, with the planned rows'
    prepared defaults emptied (the fields' own defaults are prepared once a process)."""
    status = Comparison._meta.get_field("status")
    prepared: list = []
    real_prep = type(status).get_db_prep_save

    def counted_prep(field, value, connection):
        if field is status:
            prepared.append(value)
        return real_prep(field, value, connection)

    monkeypatch.setattr(ledger_statements, "_PREPARED_DEFAULTS", {})
    monkeypatch.setattr(type(status), "get_db_prep_save", counted_prep)
    return prepared


def test_a_verdict_is_stored_exactly_as_the_judge_gave_it_whatever_its_text_and_numbers(monkeypatch):
    """The round's verdicts travel as one JSON document (on PostgreSQL read as jsonb): text with quotes,
    backslashes, escapes and non-ASCII, nested outcomes and a float's every digit come back as given."""
    from dataclasses import replace

    task_set, models = population(n_models=4, n_tasks=1, name="exact")
    run = simulated_run(task_set, models, budget=4, dimensions="U", malformed_rate=0.0)
    awkward = 'a "quoted" \\ back\\slash, tab\t, newline\n, ünïcödé ✓ and \\u00e9 as written'
    outcomes = [{"item_index": 1, "item": awkward, "winner": "A", "confidence": 0.1 + 0.2,
                 "evidence_a": "", "evidence_b": None, "rationale": {"nested": [1, 2.5e-07, "x"]}}]
    real = judges.judge_comparisons
    given = {}

    def awkward_verdicts(*args, comparisons, **kwargs):
        verdicts = real(*args, comparisons=comparisons, **kwargs)
        out = []
        for call, verdict in zip(comparisons, verdicts, strict=True):
            if verdict.ok:
                verdict = replace(verdict, rationale=awkward, per_item_outcomes=outcomes, confidence=0.1 + 0.2)
                given[call.pk] = verdict
            out.append(verdict)
        return out

    monkeypatch.setattr(judges, "judge_comparisons", awkward_verdicts)
    judge_runs.judge_run_execute_inline(run=run)
    stored = {c.pk: c for c in Comparison.objects.filter(pk__in=given)}
    assert given and stored.keys() == given.keys()
    for pk, verdict in given.items():
        assert (stored[pk].rationale, stored[pk].per_item_outcomes, stored[pk].confidence) == (
            awkward, outcomes, 0.1 + 0.2)
        assert stored[pk].checklist == verdict.checklist


def test_a_ledger_prepares_its_planned_rows_shared_values_once_however_many_rounds_it_plans(monkeypatch):
    """The run, task, dimension and the fields' defaults of a planned row are the same in every round of a
    ledger: they are prepared for the database on its first plan; only the creation time is prepared anew."""
    task_set, models = population(n_models=6, n_tasks=1, name="prepared-once")
    run = simulated_run(task_set, models, budget=30, dimensions="U", malformed_rate=0.0)
    prepared, plans = _status_preparations(monkeypatch), []
    real_write = judge_chunk._Ledger.write

    def counted_write(self, planned=()):
        plans.append(len(planned))
        return real_write(self, planned)

    monkeypatch.setattr(judge_chunk._Ledger, "write", counted_write)
    judge_runs.judge_run_execute_inline(run=run)
    assert sum(1 for n in plans if n) >= 3  # several rounds were planned in the one ledger
    assert prepared == [Comparison.Status.PLANNED]


def test_a_rounds_verdicts_send_each_checklist_they_showed_once_and_store_it_on_every_row():
    """On PostgreSQL the verdicts of a round name their checklist by its position in a document of the
    checklists shown, rather than each carrying it in full; every row still stores its checklist."""
    if connection.vendor != "postgresql":
        pytest.skip("the PostgreSQL statement; SQLite sends one statement a row")
    task_set, models = population(n_models=6, n_tasks=1, name="checklist-once")
    run = simulated_run(task_set, models, budget=12, dimensions="U", malformed_rate=0.0)
    with CaptureQueriesContext(connection) as queries:
        judge_runs.judge_run_execute_inline(run=run)
    # the verdicts' UPDATE reads its rows as "verdict" (every document statement is a jsonb_to_recordset)
    verdict_writes = [q["sql"] for q in queries if "AS verdict(" in q["sql"]]
    assert verdict_writes
    comparisons = list(Comparison.objects.filter(run=run))
    shown = {json.dumps(c.checklist, sort_keys=True) for c in comparisons}
    assert len(shown) == 1 and len(comparisons) > 3  # one checklist shown by every call of the task
    slots = len(comparisons[0].checklist)
    # a checklist entry is the only object with a "slot" key: the round's one checklist, sent once
    assert all(sql.count('"slot":') == slots for sql in verdict_writes)
    assert all(c.checklist == comparisons[0].checklist and c.status == Comparison.Status.OK for c in comparisons)


def test_a_ledger_encodes_each_checklist_it_shows_once_and_sends_the_document_encoding_the_list_whole_gives(
        monkeypatch):
    """The checklists' document of a round is made of each checklist's JSON, encoded the first time the ledger
    sends it (every round of U shows the same one): the same text as encoding the round's list of checklists."""
    if connection.vendor != "postgresql":
        pytest.skip("the PostgreSQL statement's checklists document")
    task_set, models = population(n_models=6, n_tasks=1, name="checklist-encoded-once")
    run = simulated_run(task_set, models, budget=30, dimensions="U", malformed_rate=0.0)
    real = ledger_statements.DOCUMENT_ENCODER
    encoded, sent = [], []

    class Counted:
        def encode(self, value):
            encoded.append(value)
            return real.encode(value)

    real_params = ledger_statements.verdict_params

    def params(ledger):
        shown = list(ledger.unsaved_checklists)
        out = real_params(ledger)
        sent.append((out[0], real.encode(shown)))
        return out

    monkeypatch.setattr(ledger_statements, "DOCUMENT_ENCODER", Counted())
    monkeypatch.setattr(ledger_statements, "verdict_params", params)  # the one statement's (write_sql)
    monkeypatch.setattr(judge_chunk, "verdict_params", params)  # the transaction's, rows that are not plans
    judge_runs.judge_run_execute_inline(run=run)
    assert len(sent) >= 3  # several rounds' verdicts were written by the one ledger
    assert all(document == whole for document, whole in sent)
    assert len(encoded) == len({id(value) for value in encoded}) == 1


def test_the_plans_insert_on_postgresql_skips_a_row_on_the_comparisons_identity_constraint_only():
    """The conflict clause names the identity's unique constraint: the one unique index probed before each
    planned row is inserted (the primary key's values come from the sequence)."""
    from django.db.models import UniqueConstraint

    identity = next(c for c in Comparison._meta.constraints if c.name == "comparison_identity_unique")
    assert isinstance(identity, UniqueConstraint) and identity.condition is None
    assert list(identity.fields) == ["run", "task", "dimension", "model_x", "model_y", "kind", "repeat", "judge_name"]
    assert ledger_statements.PLAN_CONFLICT == f"ON CONFLICT ON CONSTRAINT {identity.name} DO NOTHING"
    if connection.vendor != "postgresql":
        return
    task_set, models = population(n_models=4, n_tasks=1, name="plan-conflict-named")
    run = simulated_run(task_set, models, budget=6, dimensions="U")
    with CaptureQueriesContext(connection) as queries:
        judge_runs.judge_run_execute_inline(run=run)
    plans = [q["sql"] for q in queries if f'INSERT INTO "{Comparison._meta.db_table}"' in q["sql"]
             and "jsonb_to_recordset" in q["sql"]]
    assert plans and all(ledger_statements.PLAN_CONFLICT in sql for sql in plans)


def test_no_index_of_the_comparisons_holds_a_column_a_verdict_writes():
    """A verdict's UPDATE can be heap-only (HOT, on PostgreSQL: no index written) only if no index of the table
    holds a column it changes; an index on (run, task, dimension, status) made every verdict write all of them."""
    table = Comparison._meta.db_table
    written = {Comparison._meta.get_field(name).column for name in ledger_statements.VERDICT_FIELDS}
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    indexed = {name: set(c["columns"]) for name, c in constraints.items() if c["index"] or c["unique"]}
    assert indexed  # the introspection found the table's indexes
    assert {name: columns & written for name, columns in indexed.items() if columns & written} == {}
    # and the run is looked up through the identity constraint, which begins with it, not an index of its own
    assert [name for name, columns in indexed.items() if columns == {"run_id"}] == []
    assert constraints["comparison_identity_unique"]["columns"][:3] == ["run_id", "task_id", "dimension"]


def test_a_ledgers_planned_rows_get_the_defaults_and_statement_the_per_ledger_preparation_gave(monkeypatch):
    from django.utils import timezone

    task_set, models = population(n_models=4, n_tasks=2, name="kept-defaults")
    run = simulated_run(task_set, models, budget=6, dimensions="UE")
    fixed = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: fixed)
    monkeypatch.setattr(ledger_statements, "_PREPARED_DEFAULTS", {})
    plans = [ledger_statements.Plan(1, 2, "primary", 0, "simulated", 1, 10, 20)]
    for task in task_set.tasks.all():
        for dimension in "UE":
            ledger = judge_chunk._Ledger(run, task, dimension, [])
            for _ in range(2):  # a ledger's first plan and a later one
                assert _dumped(ledger_statements.insert_defaults(ledger)) == _dumped(_insert_defaults_per_ledger(ledger))
            sql, params = ledger_statements.insert_sql(ledger, plans)
            if connection.vendor == "postgresql":
                shared = [(f.attname, v) for (f, _, _), v in zip(ledger_statements.INSERT_PLAN, _insert_defaults_per_ledger(ledger), strict=True)
                          if f.attname not in ledger_statements.Plan._fields]
                from leaderboard.json_recordset import recordset_insert_sql, recordset_json

                assert sql == recordset_insert_sql(Comparison, shared=[n for n, _ in shared], per_row=ledger_statements.Plan._fields,
                                                   on_conflict=ledger_statements.PLAN_CONFLICT, returning=ledger_statements.STORED_COLUMNS)
                assert _dumped(params) == _dumped([*(v for _, v in shared), recordset_json(ledger_statements.Plan._fields, plans)])


def test_a_process_prepares_the_planned_rows_field_defaults_once_for_all_its_ledgers(monkeypatch):
    """The fields' defaults of a planned row are the same for every ledger: prepared for the database once
    a process (here from an empty store), where each ledger prepared them on its first plan."""
    task_set, models = population(n_models=5, n_tasks=2, name="prepared-once-a-process")
    run = simulated_run(task_set, models, budget=12, dimensions="UE")
    prepared, ledgers = _status_preparations(monkeypatch), set()
    real_write = judge_chunk._Ledger.write

    def counted_write(self, planned=()):
        if planned:
            ledgers.add(id(self))
        return real_write(self, planned)

    monkeypatch.setattr(judge_chunk._Ledger, "write", counted_write)
    judge_runs.judge_run_execute_inline(run=run)
    assert len(ledgers) >= 4  # two tasks, two dimensions: a ledger each planned
    assert prepared == [Comparison.Status.PLANNED]
