"""How a judge run's comparisons are stored (migrations 0013, 0015): what the planned rows' INSERT and the
verdicts' UPDATE cost the server, the values read back unchanged, the integrity kept."""

from __future__ import annotations

import pytest
from django.db import connection

from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import Comparison
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db


def test_a_verdicts_large_values_are_compressed_with_lz4_on_postgresql():
    """A judged row is over PostgreSQL's TOAST threshold, so its verdict's UPDATE compresses the largest value;
    with LZ4 (migration 0013) rather than pglz, several times cheaper to write and to read back."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's column compression")
    with connection.cursor() as cursor:
        cursor.execute("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")
        if not cursor.fetchone()[0]:
            pytest.skip("this PostgreSQL was built without LZ4")
    task_set, models = population(n_models=4, n_tasks=1, name="lz4")
    # a long brief: the checklist items quote it, so a verdict's per-item outcomes and checklist are large
    task_set.tasks.update(brief="Express, in one static image, " + "a lantern folding time over a quiet harbour, " * 20)
    run = simulated_run(task_set, models, budget=6, dimensions="U")
    judge_runs.judge_run_execute_inline(run=run)
    table = Comparison._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT pg_column_compression(per_item_outcomes), pg_column_compression(checklist) '
                       f'FROM "{table}" WHERE run_id = %s AND status = %s', [run.pk, Comparison.Status.OK])
        methods = cursor.fetchall()
    assert methods and {method for row in methods for method in row} - {None} == {"lz4"}


def test_the_model_pair_has_no_index_of_its_own_and_a_subject_model_named_by_comparisons_stays_protected():
    """Migration 0015: ``model_x`` and ``model_y`` have no single-column index (two btree entries fewer for every
    planned comparison and every verdict); a pair is looked up inside a run through the identity constraint, and
    the integrity is kept: the foreign keys stay, and Django still refuses to delete a model comparisons name."""
    from django.db.models import ProtectedError

    from leaderboard.models import SubjectModel

    task_set, models = population(n_models=3, n_tasks=1, name="pair-fk")
    run = simulated_run(task_set, models, budget=2, dimensions="U")
    judge_runs.judge_run_execute_inline(run=run)
    table = Comparison._meta.db_table
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    indexed = [c["columns"] for c in constraints.values() if c["index"] or c["unique"]]
    assert ["model_x_id"] not in indexed and ["model_y_id"] not in indexed
    assert constraints["comparison_identity_unique"]["columns"][:5] == [
        "run_id", "task_id", "dimension", "model_x_id", "model_y_id"]
    keys = {tuple(c["columns"]): c["foreign_key"] for c in constraints.values() if c["foreign_key"]}
    assert keys[("model_x_id",)] == keys[("model_y_id",)] == (SubjectModel._meta.db_table, "id")
    named = Comparison.objects.filter(run=run).select_related("model_y").first().model_y
    with pytest.raises(ProtectedError):
        named.delete()


def test_most_verdicts_are_heap_only_updates_on_postgresql():
    """Migration 0017: the table's fill factor leaves room on a planned row's page for its verdict, so most
    verdicts are heap-only (HOT) updates, which write no index entry (at the default fill factor a page of
    planned rows had room for almost none: 61 of 6,932 at 40 tasks)."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's fill factor and HOT updates")
    table = Comparison._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE oid = %s::regclass", [table])
        assert "fillfactor=10" in (cursor.fetchone()[0] or [])
    task_set, models = population(n_models=8, n_tasks=2, name="hot")
    # a long brief: the checklist items quote it, so a judged row is several times its planned row
    task_set.tasks.update(brief="Express, in one static image, " + "a lantern folding time over a quiet harbour, " * 20)
    run = simulated_run(task_set, models, budget=24, dimensions="UE")
    judge_runs.judge_run_execute_inline(run=run)
    with connection.cursor() as cursor:  # this test's transaction's own counts
        cursor.execute("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relid = %s::regclass",
                       [table])
        updated, hot = cursor.fetchone()
    assert updated >= Comparison.objects.filter(run=run).exclude(kind=Comparison.Kind.AUTOMATIC).count() > 40
    assert hot >= 0.6 * updated


def test_a_task_or_response_delete_finds_its_comparisons_through_one_task_and_shown_index():
    """Migration 0019: one index, (task, shown_a, shown_b), instead of three single-column ones; every lookup of a
    delete can be served by it (sequential scans off, so that the small table's plan shows what the index can
    serve), its conditions all index conditions: Django's cascade of a task, its PROTECT lookups of a response,
    and PostgreSQL's checks of the shown responses' foreign keys (task, shown_a) and (task, shown_b) (migration
    0018)."""
    from django.db import transaction

    task_set, models = population(n_models=3, n_tasks=1, name="del-index")
    run = simulated_run(task_set, models, budget=2, dimensions="U")
    judge_runs.judge_run_execute_inline(run=run)
    table = Comparison._meta.db_table
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    plain = [c["columns"] for c in constraints.values() if c["index"] and not c["unique"] and not c["primary_key"]]
    assert plain == [["task_id", "shown_a_id", "shown_b_id"]]
    if connection.vendor != "postgresql":
        return
    row = Comparison.objects.filter(run=run).first()
    lookups = [Comparison.objects.filter(task_id__in=[row.task_id]).order_by(),
               Comparison.objects.filter(shown_a__in=[row.shown_a_id]).order_by(),
               Comparison.objects.filter(shown_b__in=[row.shown_b_id]).order_by()]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        for queryset in lookups:
            plan = queryset.explain()
            assert "comparison_task_shown " in plan and "Seq Scan" not in plan and "Filter" not in plan, plan
        for shown in ("a", "b"):  # the foreign keys' checks, as PostgreSQL's ri_triggers.c writes them
            cursor.execute(f'EXPLAIN SELECT 1 FROM ONLY "{table}" x WHERE task_id = %s AND shown_{shown}_id = %s '
                           f'FOR KEY SHARE OF x', [row.task_id, getattr(row, f"shown_{shown}_id")])
            plan = "\n".join(line for (line,) in cursor.fetchall())
            assert "comparison_task_shown " in plan and "Seq Scan" not in plan and "Filter" not in plan, plan
