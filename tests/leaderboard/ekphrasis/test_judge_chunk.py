"""One chunk of a judge run (leaderboard/ekphrasis/judge_chunk.py): what it keeps in memory, when it
writes, and that a chunk stopped or raced at any of its writes still ends with exactly the comparisons
of an uninterrupted run."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.ekphrasis import judge_chunk, judge_runs, judges
from leaderboard.ekphrasis.models import Comparison
from tests.leaderboard.ekphrasis.test_judge_runs import comparison_fingerprint
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db


class Killed(RuntimeError):
    pass


def _run(task_set, models):
    return simulated_run(task_set, models, budget=14, dimensions="UE", malformed_rate=0.2)


def test_a_chunk_reads_its_comparisons_once_for_all_its_dimensions_however_many_rounds_it_plans():
    task_set, models = population(n_models=6, n_tasks=1, name="reads")
    run = _run(task_set, models)
    judge_runs.judge_run_pending_chunks(run_id=run.pk)
    task = task_set.tasks.get()
    with CaptureQueriesContext(connection) as queries:
        judge_runs.judge_run_task_execute(run_id=run.pk, task_id=task.pk)
    table = f'"{Comparison._meta.db_table}"'
    statements = [q["sql"].lstrip() for q in queries]
    # a plan's INSERT, on PostgreSQL the main statement of the round's one write (after its WITH queries)
    plans = [sql for sql in statements if f"INSERT INTO {table.upper()}" in sql.upper()]
    reads = [sql for sql in statements if sql.upper().startswith("SELECT") and f"FROM {table}" in sql
             and "COUNT(" not in sql.upper()]
    assert len(plans) > 2 * len(run.dimensions)  # several rounds per dimension were planned and judged
    assert len(reads) == 1 and "dimension" not in reads[0].split("WHERE")[1]  # every dimension in one read


def _reads_of(queries, model) -> list[str]:
    table = f'FROM "{model._meta.db_table}"'
    return [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith("SELECT") and table in q["sql"]]


def _run_level_reads(n_tasks: int) -> dict[str, int]:
    """The reads of the run, its model pool, its tasks and its chunks in an inline run (not their counts, nor the
    lock each finished chunk takes on the run to count the done ones)."""
    from leaderboard.ekphrasis.models import JudgeRun, JudgeRunTask
    from leaderboard.models import SubjectModel, Task

    task_set, models = population(n_models=4, n_tasks=n_tasks, name=f"inline-reads-{n_tasks}")
    run = simulated_run(task_set, models, budget=6, dimensions="UE")
    with CaptureQueriesContext(connection) as queries:
        judge_runs.judge_run_execute_inline(run=run)
    assert run.chunks.filter(done=True).count() == n_tasks
    # the lock reads the run's id only (and on SQLite carries no FOR UPDATE)
    lock = f'SELECT "{JudgeRun._meta.db_table}"."id" AS "pk" FROM'
    return {model.__name__: len([sql for sql in _reads_of(queries, model)
                                 if "COUNT(" not in sql.upper() and not sql.startswith(lock)])
            for model in (JudgeRun, SubjectModel, Task, JudgeRunTask)}


def test_an_inline_run_reads_the_run_its_model_pool_and_its_chunks_once_not_once_a_chunk():
    one, four = _run_level_reads(1), _run_level_reads(4)
    assert one == four
    assert four["SubjectModel"] == 2  # the chunks' pool once, and the finalising step's for the snapshot


def test_a_chunk_of_an_inline_run_finished_by_another_worker_after_the_reads_is_skipped_or_stays_as_it_was():
    """The inline run's reads list a chunk as not done; another worker finishes it before this process gets
    to it: judged again from its stored comparisons it plans and calls nothing, and does not finish it again."""
    task_set, models = population(n_models=4, n_tasks=2, name="inline-stale")
    reference = simulated_run(task_set, models, budget=6, dimensions="UE")
    judge_runs.judge_run_execute_inline(run=reference)

    run = simulated_run(task_set, models, budget=6, dimensions="UE")
    pending = judge_runs.judge_run_pending_chunks(run_id=run.pk)
    reads = judge_runs.RunReads.read(run.pk)
    judge_runs.judge_run_task_execute(run_id=run.pk, task_id=pending[0])  # "another worker", reading for itself
    stored = sorted(Comparison.objects.filter(run=run).values_list("pk", "status", "attempts", "judged_at"))
    calls = []
    real = judges.judge_comparisons

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    judges.judge_comparisons = counted
    try:
        assert judge_runs.judge_run_task_execute(run_id=run.pk, task_id=pending[0], reads=reads) is False
    finally:
        judges.judge_comparisons = real
    assert calls == []
    assert sorted(Comparison.objects.filter(run=run).values_list("pk", "status", "attempts", "judged_at")) == stored
    assert judge_runs.judge_run_task_execute(run_id=run.pk, task_id=pending[1], reads=reads) is True
    judge_runs.judge_run_finalise(run_id=run.pk)
    assert comparison_fingerprint(run) == comparison_fingerprint(reference)


def _flush_wait_settings(statements) -> list[str]:
    return [sql for sql in statements if "synchronous_commit" in sql]


def test_an_inline_run_sets_its_commits_not_to_wait_for_the_wal_flush_once_not_once_a_chunk():
    if connection.vendor != "postgresql":
        pytest.skip("a PostgreSQL setting")
    task_set, models = population(n_models=4, n_tasks=3, name="flush")
    run = simulated_run(task_set, models, budget=6, dimensions="U")
    with CaptureQueriesContext(connection) as queries:
        judge_runs.judge_run_execute_inline(run=run)
    assert run.chunks.filter(done=True).count() == 3
    assert _flush_wait_settings(q["sql"] for q in queries) == ["SET synchronous_commit TO OFF",
                                                               "RESET synchronous_commit"]


def test_a_chunk_run_on_its_own_sets_its_commits_not_to_wait_for_the_wal_flush_and_resets_them():
    if connection.vendor != "postgresql":
        pytest.skip("a PostgreSQL setting")
    task_set, models = population(n_models=4, n_tasks=1, name="flush1")
    run = simulated_run(task_set, models, budget=6, dimensions="U")
    judge_runs.judge_run_pending_chunks(run_id=run.pk)
    with CaptureQueriesContext(connection) as queries:
        judge_runs.judge_run_task_execute(run_id=run.pk, task_id=task_set.tasks.get().pk)
    assert _flush_wait_settings(q["sql"] for q in queries) == ["SET synchronous_commit TO OFF",
                                                               "RESET synchronous_commit"]
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"


def test_a_chunk_killed_after_judging_a_round_but_before_storing_it_resumes_to_the_same_comparisons(monkeypatch):
    task_set, models = population(n_models=6, n_tasks=2, name="unsaved")
    reference = _run(task_set, models)
    judge_runs.judge_run_execute_inline(run=reference)

    run = _run(task_set, models)
    write = judge_chunk._Ledger.write
    writes, lost = [], set()

    def killed_on_the_fourth_write(self, planned=()):
        writes.append(1)
        if len(writes) == 4:
            lost.update(self.unsaved)  # a round's verdicts were waiting for this write
            raise Killed
        return write(self, planned)

    monkeypatch.setattr(judge_chunk._Ledger, "write", killed_on_the_fourth_write)
    with pytest.raises(Killed):
        judge_runs.judge_run_execute_inline(run=run)
    # the round whose verdicts were lost is still planned: it was stored before its calls were made
    assert lost and set(Comparison.objects.filter(run=run, status="planned").values_list("pk", flat=True)) == lost
    monkeypatch.setattr(judge_chunk._Ledger, "write", write)

    judge_runs.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.snapshots.count() == 1
    assert comparison_fingerprint(run) == comparison_fingerprint(reference)


def test_a_plan_another_worker_stored_first_is_kept_and_the_chunk_goes_on_from_it(monkeypatch):
    task_set, models = population(n_models=6, n_tasks=1, name="race")
    reference = _run(task_set, models)
    judge_runs.judge_run_execute_inline(run=reference)

    run = _run(task_set, models)
    real = judges.judge_comparisons
    calls = []

    def killed_on_the_third_batch(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise Killed
        return real(*args, **kwargs)

    monkeypatch.setattr(judges, "judge_comparisons", killed_on_the_third_batch)
    with pytest.raises(Killed):
        judge_runs.judge_run_execute_inline(run=run)
    monkeypatch.setattr(judges, "judge_comparisons", real)
    stored_before = Comparison.objects.filter(run=run).count()

    # The resumed chunk starts from a view that misses everything stored (as a worker that read just
    # before another one wrote): it plans the same calls again, finds them stored, and reads them back.
    stored = judge_chunk._stored
    views = []

    def stale_first_view(run_, task, dimensions):
        views.append(dimensions)
        return {d: [] for d in dimensions} if len(views) == 1 else stored(run_, task, dimensions)

    monkeypatch.setattr(judge_chunk, "_stored", stale_first_view)
    judge_runs.judge_run_execute_inline(run=run)
    # the chunk's one read saw nothing; the conflicting insert sent it back to the store for that dimension
    assert stored_before > 0 and views[0] == "UE" and "U" in views[1:]
    assert comparison_fingerprint(run) == comparison_fingerprint(reference)


def test_a_chunk_does_its_linear_algebra_on_one_blas_thread(monkeypatch):
    from threadpoolctl import threadpool_info

    task_set, models = population(n_models=4, n_tasks=1, name="blas")
    run = _run(task_set, models)
    real = judges.judge_comparisons
    seen = []

    def recording(*args, **kwargs):
        seen.extend(pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas")
        return real(*args, **kwargs)

    monkeypatch.setattr(judges, "judge_comparisons", recording)
    judge_runs.judge_run_execute_inline(run=run)
    assert seen and set(seen) == {1}


class PlannedWithoutEnd(RuntimeError):
    pass


def test_a_pair_whose_names_sort_against_their_ids_is_judged_again_at_its_next_repeat_and_the_chunk_ends(monkeypatch):
    # the pool is in name order and a comparison's model_x is the lower id: "zeta" made before "alpha" reads
    # as the pair (alpha, zeta) to the planner and as (zeta, alpha) from its rows. Counted by the second,
    # the pair's next call was planned at a repeat it already had, refused as a duplicate, and planned again:
    # the chunk never ended (a hostile-names world of three models hung this way)
    task_set, models = population(n_models=3, n_tasks=1, name="order")
    for model, name in zip(models, ("zeta", "mu", "alpha")):  # ids ascending, names descending
        type(model).objects.filter(pk=model.pk).update(display_name=name)
    budget = 9  # three pairs, nine calls: some pair is judged three times
    run = simulated_run(task_set, models, budget=budget, dimensions="U", skills={
        name: {"usefulness": 0.0} for name in ("zeta", "mu", "alpha")})
    # one call per round: a round of several pairs wrote its other rows and so moved on
    type(run).objects.filter(pk=run.pk).update(config={**run.config, "active_batch": 1})
    run.refresh_from_db()
    plan = judge_chunk._plan_next_round
    rounds = []

    def bounded(*args):
        rounds.append(1)
        if len(rounds) > 50:
            raise PlannedWithoutEnd
        return plan(*args)

    monkeypatch.setattr(judge_chunk, "_plan_next_round", bounded)
    judge_runs.judge_run_execute_inline(run=run)

    primaries = list(Comparison.objects.filter(run=run, kind=Comparison.Kind.PRIMARY).values_list(
        "model_x_id", "model_y_id", "repeat"))
    assert len(primaries) == budget
    by_pair: dict = {}
    for x, y, repeat in primaries:
        by_pair.setdefault((x, y), []).append(repeat)
    assert max(len(r) for r in by_pair.values()) > 1
    assert all(sorted(r) == list(range(len(r))) for r in by_pair.values())  # repeats 0, 1, … of each pair


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_last_two_chunks_finished_at_once_on_two_workers_finalise_the_run_once():
    # Two workers store the run's last two chunks at the same moment. Each marked its chunk done and counted
    # the run's done chunks in one transaction, before the other's had committed: both counted one short,
    # neither claimed the finalising, and the run stayed running with every chunk done.
    from leaderboard.ekphrasis.models import JudgeRun
    from tests.concurrency import run_while_row_held
    from tests.conftest import require_service

    require_service("postgres")
    task_set, models = population(n_models=4, n_tasks=2, name="last-two")
    run = simulated_run(task_set, models, budget=6)
    judge_runs.judge_run_execute_inline(run=run)
    # every comparison stored but neither chunk marked done yet: where two workers stand just before they finish
    run.chunks.update(done=False)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING, tasks_done=0)
    last_two = list(run.chunks.values_list("task_id", flat=True))

    outcomes = run_while_row_held(
        [lambda task_id=task_id: judge_runs.judge_run_task_execute(run_id=run.pk, task_id=task_id) for task_id in last_two],
        JudgeRun, run.pk)
    assert sorted(outcomes) == [False, True]  # exactly one of them finalises
    run.refresh_from_db()
    assert (run.status, run.tasks_done) == (JudgeRun.Status.FINALISING, 2)


def test_a_chunk_of_a_judge_that_writes_no_checklist_ensures_the_templates_of_all_its_dimensions_at_once():
    from leaderboard.ekphrasis.models import ChecklistItem

    task_set, models = population(n_models=4, n_tasks=1, name="templates-once")
    run = simulated_run(task_set, models, budget=6, dimensions="UEN")
    judge_runs.judge_run_pending_chunks(run_id=run.pk)
    with CaptureQueriesContext(connection) as queries:
        judge_runs.judge_run_task_execute(run_id=run.pk, task_id=task_set.tasks.get().pk)
    table = ChecklistItem._meta.db_table
    # the base items' inserts (a Novelty context's items carry a "tig:" context key)
    inserts = [q["sql"] for q in queries if q["sql"].startswith(f'INSERT INTO "{table}"') and "tig:" not in q["sql"]]
    assert len(inserts) == 1
    made = ChecklistItem.objects.filter(task__task_set=task_set, context_key="")
    assert sorted(made.values_list("dimension", "slot")) == [(d, s) for d in "ENU" for s in (1, 2, 3)]


def test_a_finished_chunk_counts_its_calls_from_its_ledgers_not_with_a_query():
    task_set, models = population(n_models=5, n_tasks=1, name="count")
    empty = models[0].responses.get()
    empty.core_idea = ""  # its pairs get automatic records, which are not calls
    empty.save()
    run = simulated_run(task_set, models, budget=8, dimensions="UE")
    judge_runs.judge_run_pending_chunks(run_id=run.pk)
    task = task_set.tasks.get()
    with CaptureQueriesContext(connection) as queries:
        judge_runs.judge_run_task_execute(run_id=run.pk, task_id=task.pk)
    table = f'"{Comparison._meta.db_table}"'
    assert [q["sql"] for q in queries if "COUNT(" in q["sql"].upper() and f"FROM {table}" in q["sql"]] == []
    stored = Comparison.objects.filter(run=run, task=task)
    assert stored.filter(kind=Comparison.Kind.AUTOMATIC).exists()
    chunk = run.chunks.get()
    assert chunk.done and chunk.calls_done == stored.exclude(kind=Comparison.Kind.AUTOMATIC).count() > 0


def test_a_chunk_builds_each_distinct_checklist_once_and_looks_up_novelty_contexts_once_a_batch(monkeypatch):
    """A Novelty call's checklist is named by the pair's population-cliché item (the base items are fixed for
    the chunk): each distinct checklist is built once, and the pairs' stored contexts are looked up once for
    each batch of calls, not again for every call."""
    task_set, models = population(n_models=5, n_tasks=1, name="built-once")
    run = simulated_run(task_set, models, budget=20, dimensions="UEN")
    built, prefetches, batches = [], [], []
    real_build, real_prefetch, real_judge = judges.checklist_for_judging, judges._novelty_prefetch, judges.judge_comparisons

    def counted_build(rows, **kwargs):
        built.append((kwargs["dimension"], tuple(row.pk for row in rows)))
        return real_build(rows, **kwargs)

    def counted_prefetch(*args):
        prefetches.append(1)
        return real_prefetch(*args)

    def counted_judge(*args, dimension, **kwargs):
        batches.append(dimension)
        return real_judge(*args, dimension=dimension, **kwargs)

    monkeypatch.setattr(judges, "checklist_for_judging", counted_build)
    monkeypatch.setattr(judges, "_novelty_prefetch", counted_prefetch)
    monkeypatch.setattr(judges, "judge_comparisons", counted_judge)
    judge_runs.judge_run_execute_inline(run=run)
    shown = {(c.dimension, json.dumps(c.checklist, sort_keys=True)) for c in Comparison.objects.filter(run=run)}
    assert len(built) == len(set(built)) == len(shown)
    assert {d for d, _ in shown} == set("UEN") and len([d for d, _ in shown if d == "N"]) > 1  # TIG anchors shown
    assert len(prefetches) == batches.count("N") > 0


def test_a_chunks_pool_reads_its_responses_without_their_raw_text_and_loads_no_deferred_field_later(monkeypatch):
    """The pool's responses hold only what a chunk reads (judge_chunk.POOL_FIELDS): raw_text stays in the
    database, and judging every dimension reads no deferred field back (a deferred field read is one query
    a response, made by refresh_from_db)."""
    from leaderboard.models import Response

    task_set, models = population(n_models=5, n_tasks=1, name="pool-fields")
    run = _run(task_set, models)
    task = task_set.tasks.get()
    pool = judge_chunk._pool(run, task)
    assert pool.responses and all("raw_text" in r.get_deferred_fields() for r in pool.responses.values())
    judge_runs.judge_run_pending_chunks(run_id=run.pk)
    refreshed = []
    original = Response.refresh_from_db

    def counting(self, *args, **kwargs):
        refreshed.append(kwargs.get("fields"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Response, "refresh_from_db", counting)
    judge_runs.judge_run_task_execute(run_id=run.pk, task_id=task.pk)
    assert Comparison.objects.filter(run=run, status=Comparison.Status.OK).exists()
    assert refreshed == []


def test_the_chunks_hot_loops_read_a_responses_id_attribute_not_the_pk_property(monkeypatch):
    """Response's primary key is ``id``, so reading ``.id`` is reading ``.pk``; a chunk reads it for every call it
    plans, shows and screens, and the Model.pk property's lookup was ~61,000 calls a 40-task run."""
    from django.db.models import Model

    from leaderboard.models import Response, Task

    assert Response._meta.pk.attname == Task._meta.pk.attname == "id"
    task_set, models = population(n_models=5, n_tasks=1, name="pk-reads")
    run = _run(task_set, models)
    judge_runs.judge_run_pending_chunks(run_id=run.pk)
    task = task_set.tasks.get()
    reads = []
    original = Model._get_pk_val

    def counting(self, meta=None):
        if isinstance(self, Response | Task):
            reads.append(1)
        return original(self, meta)

    monkeypatch.setattr(Model, "_get_pk_val", counting)
    monkeypatch.setattr(Model, "pk", property(counting, Model._set_pk_val))
    judge_runs.judge_run_task_execute(run_id=run.pk, task_id=task.pk)
    calls = Comparison.objects.filter(run=run).exclude(kind=Comparison.Kind.AUTOMATIC).count()
    assert calls > 20
    assert len(reads) < 50  # once per response per chunk at most (the pool's maps), not a few per call


def test_finishing_chunks_marks_counts_and_claims_the_finalising_once_and_on_postgresql_in_one_statement_after_the_lock():
    """_chunk_finish: the first of two chunks is marked done with its calls and counted (not claimed), a chunk
    finished again changes nothing, the last one claims the finalising; on PostgreSQL each is the run's lock and
    one statement (it was the lock and four: mark, count, store the count, claim)."""
    from leaderboard.ekphrasis.models import JudgeRun

    task_set, models = population(n_models=4, n_tasks=2, name="finish")
    run = simulated_run(task_set, models, budget=6, dimensions="U")
    judge_runs.judge_run_pending_chunks(run_id=run.pk)
    first, last = run.chunks.order_by("pk")

    def finish(chunk, calls):
        with CaptureQueriesContext(connection) as queries:
            claimed = judge_chunk._chunk_finish(run, chunk, calls)
        statements = [q["sql"] for q in queries if "SAVEPOINT" not in q["sql"].upper()]
        if connection.vendor == "postgresql":
            assert len(statements) == 2, statements  # the lock, then the one statement
        return claimed

    assert finish(first, 7) is False
    run.refresh_from_db()
    first.refresh_from_db()
    assert (first.done, first.calls_done, run.tasks_done, run.status) == (True, 7, 1, JudgeRun.Status.RUNNING)
    assert finish(first, 9) is False  # done already: nothing changes
    first.refresh_from_db()
    run.refresh_from_db()
    assert (first.calls_done, run.tasks_done) == (7, 1)
    assert finish(last, 3) is True
    run.refresh_from_db()
    assert (run.tasks_done, run.status) == (2, JudgeRun.Status.FINALISING)
    assert finish(last, 3) is False


def test_a_chunk_finished_on_a_cancelled_run_is_counted_but_claims_nothing():
    from leaderboard.ekphrasis.models import JudgeRun

    task_set, models = population(n_models=4, n_tasks=1, name="finish-cancelled")
    run = simulated_run(task_set, models, budget=6, dimensions="U")
    judge_runs.judge_run_pending_chunks(run_id=run.pk)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.FAILED, error="cancelled")
    assert judge_chunk._chunk_finish(run, run.chunks.get(), 4) is False
    run.refresh_from_db()
    assert (run.tasks_done, run.status) == (1, JudgeRun.Status.FAILED)


def test_a_novelty_chunk_reads_its_tasks_responses_once_for_its_pool_and_its_tig_population():
    """The TIG population of a chunk that judges Novelty takes its ideas from the pool's read of the task's
    responses (judge_chunk._pool), not from a second read of them (tig.task_ideas)."""
    from leaderboard.models import Response

    task_set, models = population(n_models=5, n_tasks=1, name="responses-once")
    run = simulated_run(task_set, models, budget=12, dimensions="UEN")
    assert run.novelty_anchor == "tig"
    judge_runs.judge_run_pending_chunks(run_id=run.pk)
    task = task_set.tasks.get()
    with CaptureQueriesContext(connection) as queries:
        judge_runs.judge_run_task_execute(run_id=run.pk, task_id=task.pk)
    assert Comparison.objects.filter(run=run, dimension="N", status=Comparison.Status.OK).exists()
    table = f'"{Response._meta.db_table}"'
    reads = [sql for sql in _reads_of(queries, Response) if sql.split(" FROM ", 1)[1].startswith(table)]
    assert len(reads) == 1  # (the run's model pool is read too, from the subject models)


def test_the_ideas_a_chunk_reads_with_its_pool_are_the_tasks_tig_ideas_and_its_pool_is_unchanged():
    """Every sample of every subject model, those outside the run's pool included, without the empty Core Ideas
    and without other roles' responses, in the order tig.task_ideas gives them; the pool keeps the primaries of
    its models, as when it reads nothing for the TIG."""
    from leaderboard.ekphrasis.tig import task_ideas
    from leaderboard.models import SubjectModel
    from tests.factories import ResponseFactory, SubjectModelFactory

    task_set, models = population(n_models=4, n_tasks=2, name="pool-ideas")
    run = simulated_run(task_set, models, budget=6, dimensions="UN")
    task = task_set.tasks.order_by("pk").first()
    for sample, core_idea in ((3, "A third sample: a kite of maps."), (2, "")):
        ResponseFactory(task=task, subject_model=models[1], sample=sample, is_primary=False, core_idea=core_idea)
    outside = SubjectModelFactory(display_name="pool-ideas-not-primary")  # a subject, but in no pool
    ResponseFactory(task=task, subject_model=outside, sample=2, is_primary=False, core_idea="An outsider's idea.")
    judge = SubjectModelFactory(display_name="pool-ideas-judge", role=SubjectModel.Role.JUDGE)
    ResponseFactory(task=task, subject_model=judge, sample=1, is_primary=True, core_idea="Not an idea of the pool.")
    ideas = {}
    pool = judge_chunk._pool(run, task, ideas=ideas)
    assert ideas[task.pk] == task_ideas(task) and len(ideas[task.pk]) == len(models) + 2
    alone = judge_chunk._pool(run, task)
    assert {p: r.pk for p, r in pool.responses.items()} == {p: r.pk for p, r in alone.responses.items()}
    assert [r.subject_model for r in pool.responses.values()] == [r.subject_model for r in alone.responses.values()]
    assert all("raw_text" in r.get_deferred_fields() for r in pool.responses.values())


@pytest.mark.parametrize("diagnostics", [True, False], ids=["with-diagnostics", "without-diagnostics"])
def test_a_chunk_writes_each_change_of_dimension_in_one_write_with_the_next_dimensions_first_plan(
        monkeypatch, diagnostics):
    """A dimension's last verdicts go with the next dimension's first plan (one statement on PostgreSQL, one
    transaction elsewhere), not in a write of their own followed by a plan's: of a chunk's writes only its first
    stores no verdicts and only its last plans nothing — also when a dimension's diagnostic layers plan
    nothing (then its last round's verdicts are the ones carried)."""
    task_set, models = population(n_models=5, n_tasks=1, name="one-write-a-change")
    run = simulated_run(task_set, models, budget=12, dimensions="UEN")
    run.config["swap_share"] = 1.0 if diagnostics else 0.0
    run.config["duplicate_share"] = run.config["duplicate_share"] if diagnostics else 0.0
    run.config["auxiliary_share"] = run.config["auxiliary_share"] if diagnostics else 0.0
    run.save(update_fields=["config"])
    writes = []
    real_write = judge_chunk._Ledger.write

    def recorded(self, planned=()):
        if self.unsaved or planned:
            writes.append((self.dimension, bool(self.unsaved), bool(planned)))
        return real_write(self, planned)

    monkeypatch.setattr(judge_chunk._Ledger, "write", recorded)
    judge_runs.judge_run_execute_inline(run=run)
    assert {d for d, _, _ in writes} == set("UEN")
    assert [k for k, (_, verdicts, _) in enumerate(writes) if not verdicts] == [0]
    assert [k for k, (_, _, plans) in enumerate(writes) if not plans] == [len(writes) - 1]


def test_a_resumed_chunk_stores_the_last_dimensions_verdicts_before_the_next_dimensions_first_call(monkeypatch):
    """A resumed chunk whose next dimension starts with calls to make (its stored plan) stores the verdicts the
    dimension before it judged first: no call is made while another call's verdict is unsaved but for its round."""
    from leaderboard.ekphrasis.models import JudgeRunTask

    task_set, models = population(n_models=5, n_tasks=1, name="carried-first")
    run = simulated_run(task_set, models, budget=12, dimensions="UE")
    run.config["swap_share"] = 1.0  # every primary pair of U swapped: U ends with diagnostic calls
    run.save(update_fields=["config"])
    task = task_set.tasks.get()
    judge_runs.judge_run_execute_inline(run=run)
    expected = comparison_fingerprint(run)
    # as if stopped after planning E's first round, before U's diagnostic layers were stored
    diagnostics = Comparison.objects.filter(run=run, dimension="U").exclude(kind=Comparison.Kind.PRIMARY)
    assert diagnostics.exists()
    diagnostics.delete()
    Comparison.objects.filter(run=run, dimension="E").update(status=Comparison.Status.PLANNED, attempts=0)
    JudgeRunTask.objects.filter(run=run).update(done=False)
    unsaved_u_at_first_e_call = []
    real_judge = judges.judge_comparisons

    def watching(*args, dimension, **kwargs):
        if dimension == "E" and not unsaved_u_at_first_e_call:
            stored_u = Comparison.objects.filter(run=run, dimension="U").exclude(kind=Comparison.Kind.PRIMARY)
            unsaved_u_at_first_e_call.append(stored_u.filter(status=Comparison.Status.PLANNED).count())
        return real_judge(*args, dimension=dimension, **kwargs)

    monkeypatch.setattr(judges, "judge_comparisons", watching)
    judge_runs.judge_run_task_execute(run_id=run.pk, task_id=task.pk)
    assert unsaved_u_at_first_e_call == [0]
    assert comparison_fingerprint(run) == expected


def _task_state_by_cells(pool, stored, dimension):
    """:func:`judge_chunk._task_state` as it was written before it counted cells with ``np.bincount``: the
    matrices filled one ``+= 1`` at a time (the reference its every output must equal, bit for bit)."""
    from collections import Counter

    import numpy as np

    n = len(pool.models)
    wins, counts, repeats, calls = np.zeros((n, n)), np.zeros((n, n)), Counter(), 0
    for c in stored:
        if c.kind != Comparison.Kind.PRIMARY:
            continue
        i, j = pool.index[c.model_x_id], pool.index[c.model_y_id]
        calls += 1
        repeats[(min(i, j), max(i, j))] += 1
        if c.status != Comparison.Status.OK:
            continue
        counts[i, j] += 1
        counts[j, i] += 1
        if c.winner in ("A", "B"):
            winner_pos = pool.position_of[c.shown_a_id if c.winner == "A" else c.shown_b_id]
            wins[winner_pos, j if winner_pos == i else i] += 1
    return wins, counts, calls, repeats, pool.eligible(dimension)


def test_the_active_state_of_every_round_is_bit_for_bit_the_one_the_cell_by_cell_loop_built():
    """The state a round plans from (wins, judged counts, calls, repeats) equals the reference's for every prefix
    of a run's stored comparisons, with failed, planned, tied, swapped and duplicated calls among them."""
    import random

    import numpy as np

    task_set, models = population(n_models=7, n_tasks=2, name="state")
    run = simulated_run(task_set, models, budget=30, dimensions="UE", malformed_rate=0.3, tie_rate=0.3)
    run.config.update({"swap_share": 0.5, "duplicate_share": 0.5})
    run.save(update_fields=["config"])
    judge_runs.judge_run_execute_inline(run=run)
    rng = random.Random(5)
    checked = 0
    for task in task_set.tasks.all():
        pool = judge_chunk._pool(run, task)
        for dimension, stored in judge_chunk._stored(run, task, run.dimensions).items():
            stored = sorted(stored, key=lambda r: r.sequence)
            assert {r.kind for r in stored} >= {Comparison.Kind.PRIMARY, Comparison.Kind.SWAP}
            # the states of other histories too: some calls still planned or failed, some verdicts other winners
            varied = [r._replace(status=rng.choice([r.status, Comparison.Status.PLANNED, Comparison.Status.FAILED]),
                                 winner=rng.choice([r.winner, "A", "B", "tie"])) for r in stored]
            for rows in (stored, varied, varied[::-1]):
                for k in range(len(rows) + 1):
                    state, repeats = judge_chunk._task_state(pool, rows[:k], dimension)
                    wins, counts, calls, want_repeats, eligible = _task_state_by_cells(pool, rows[:k], dimension)
                    for got, want in ((state.wins, wins), (state.pair_counts, counts)):
                        assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
                        assert got.tobytes() == want.tobytes()
                    assert state.calls_made == calls and state.n_models == len(models)
                    assert dict(repeats) == dict(want_repeats) and state.models == eligible
                    checked += 1
            assert np.any(state.wins)
    assert checked > 200
