"""A comparison's foreign keys on PostgreSQL (migration leaderboard 0018): five keys instead of Django's six, the
task's folded into the two shown responses' ``(task_id, shown_x_id) → leaderboard_response (task_id, id)``. Each
rule the six enforced still refuses a bad row, written by SQL past Django's own checks, on both sides of the
keys: a comparison naming a missing run, task, model or response, and a delete of a row a comparison names."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import Comparison
from leaderboard.models import Response
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'postgresql'")]

MISSING = 2_000_000_000  # no row has this id


@pytest.fixture
def judged():
    """A small judged run: a comparison to copy, and a response of another task."""
    task_set, models = population(n_models=3, n_tasks=2, name="fk")
    run = simulated_run(task_set, models, budget=2, dimensions="U")
    judge_runs.judge_run_execute_inline(run=run)
    comparison = Comparison.objects.filter(run=run).exclude(kind=Comparison.Kind.AUTOMATIC).first()
    elsewhere = Response.objects.exclude(task_id=comparison.task_id).filter(
        subject_model_id=comparison.shown_a.subject_model_id).first()
    return comparison, elsewhere


def _columns() -> list[str]:
    return [f.column for f in Comparison._meta.concrete_fields if not f.primary_key]


def _copy(comparison: Comparison, **changed) -> None:
    """INSERT a copy of ``comparison`` with ``changed`` columns (and its own identity), its deferred keys checked
    at once (``SET CONSTRAINTS ALL IMMEDIATE``), inside a savepoint."""
    changed.setdefault("repeat", 99)  # another identity than the copied row's
    columns = _columns()
    table = connection.ops.quote_name(Comparison._meta.db_table)
    select = ", ".join("%s" if column in changed else connection.ops.quote_name(column) for column in columns)
    params = [changed[column] for column in columns if column in changed]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"INSERT INTO {table} ({', '.join(map(connection.ops.quote_name, columns))}) "
                       f"SELECT {select} FROM {table} WHERE id = %s", [*params, comparison.pk])


def _delete(sql: str, params: list) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(sql, params)


def test_the_keys_are_four_single_ones_and_the_two_shown_responses_of_the_task():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'",
            [Comparison._meta.db_table])
        keys = dict(cursor.fetchall())
    response = Response._meta.db_table
    assert keys.pop("comparison_shown_a_of_its_task") == (
        f"FOREIGN KEY (task_id, shown_a_id) REFERENCES {response}(task_id, id) DEFERRABLE INITIALLY DEFERRED")
    assert keys.pop("comparison_shown_b_of_its_task") == (
        f"FOREIGN KEY (task_id, shown_b_id) REFERENCES {response}(task_id, id) DEFERRABLE INITIALLY DEFERRED")
    assert sorted(definition.split(")")[0] for definition in keys.values()) == [
        "FOREIGN KEY (model_x_id", "FOREIGN KEY (model_y_id", "FOREIGN KEY (run_id"]


def test_a_copy_with_the_same_keys_is_accepted(judged):
    comparison, _ = judged
    _copy(comparison)
    assert Comparison.objects.filter(run_id=comparison.run_id, repeat=99).count() == 1


@pytest.mark.parametrize("column", ["run_id", "task_id", "model_x_id", "model_y_id", "shown_a_id", "shown_b_id"])
def test_a_comparison_naming_a_missing_row_is_refused(judged, column):
    comparison, _ = judged
    missing = -1 if column == "model_x_id" else MISSING  # model_x_id < model_y_id holds either way
    with pytest.raises(IntegrityError, match="foreign key"):
        _copy(comparison, **{column: missing})


@pytest.mark.parametrize("column", ["shown_a_id", "shown_b_id"])
def test_a_shown_response_of_another_task_is_refused(judged, column):
    """Stricter than the six keys: the response exists, but is not one of the comparison's task's."""
    comparison, elsewhere = judged
    with pytest.raises(IntegrityError, match="comparison_shown_._of_its_task"):
        _copy(comparison, **{column: elsewhere.pk})


@pytest.mark.parametrize("column", ["shown_a_id", "shown_b_id"])
def test_a_shown_response_cannot_be_deleted(judged, column):
    comparison, _ = judged
    with pytest.raises(IntegrityError, match="comparison_shown_._of_its_task"):
        _delete(f"DELETE FROM {Response._meta.db_table} WHERE id = %s", [getattr(comparison, column)])


def test_a_named_task_cannot_be_deleted_even_with_its_responses(judged):
    """The six keys refused it by the task's key; the five by the shown responses', since the task's responses
    cannot go while comparisons show them, nor the task while it has responses. A task of its own, with one
    response, named by one comparison and by nothing else, and deleted with that response."""
    from leaderboard.models import Task
    from tests.factories import ResponseFactory, TaskFactory

    comparison, _ = judged
    task = TaskFactory(task_set=comparison.task.task_set, external_id="fk-alone")
    response = ResponseFactory(task=task, subject_model_id=comparison.shown_a.subject_model_id, sample=1)
    _copy(comparison, task_id=task.pk, shown_a_id=response.pk, shown_b_id=response.pk)
    with pytest.raises(IntegrityError, match="foreign key"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f"DELETE FROM {Response._meta.db_table} WHERE task_id = %s", [task.pk])
            cursor.execute(f"DELETE FROM {Task._meta.db_table} WHERE id = %s", [task.pk])
    assert Comparison.objects.filter(task_id=task.pk).exists()
