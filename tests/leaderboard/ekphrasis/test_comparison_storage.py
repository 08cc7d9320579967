"""How a judge run's comparisons are stored on PostgreSQL (migration 0013): what the verdicts' UPDATE costs
the server, the values read back unchanged."""

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
