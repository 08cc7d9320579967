"""Precompiled row reads and inserts give what the ORM gives: the same row with the same related rows,
the same DoesNotExist, the same stored row and the same IntegrityError."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction

from evalsite.precompiled import row_by_pk, row_by_pk_sql, row_create, row_from
from leaderboard.models import Task
from tests.factories import TaskFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_a_row_by_pk_equals_the_orms_with_its_related_row():
    task = TaskFactory()
    read, orm = row_by_pk(Task, task.pk, relations=("task_set",)), Task.objects.select_related("task_set").get(pk=task.pk)
    fields = [f.attname for f in Task._meta.concrete_fields]
    assert [getattr(read, f) for f in fields] == [getattr(orm, f) for f in fields]
    assert read.task_set.name == orm.task_set.name and not read._state.adding


def test_the_read_keyed_by_an_expression_builds_the_row_by_pks_instance():
    """``row_by_pk_sql`` with the key as an SQL expression (here a parameter of the statement it is put
    in), ``row_from`` on its columns: what ``row_by_pk`` returns, its related row attached; None for the
    NULL columns of a subquery that found nothing."""
    task = TaskFactory()
    sql, width = row_by_pk_sql(Task, "%s", relations=("task_set",))
    with connection.cursor() as cursor:
        cursor.execute(sql, [task.pk])
        row = cursor.fetchone()
    assert len(row) == width
    read, orm = row_from(Task, row, relations=("task_set",)), row_by_pk(Task, task.pk, relations=("task_set",))
    fields = [f.attname for f in Task._meta.concrete_fields]
    assert [getattr(read, f) for f in fields] == [getattr(orm, f) for f in fields]
    assert read.task_set.name == orm.task_set.name and not read._state.adding
    assert row_from(Task, [None] * width, relations=("task_set",)) is None


def test_a_missing_row_is_does_not_exist():
    with pytest.raises(get_user_model().DoesNotExist):
        row_by_pk(get_user_model(), 10**9)


def test_a_created_row_is_stored_as_the_orm_stores_it():
    User = get_user_model()
    user = row_create(User, username="precompiled", password="!", email="p@example.org")
    stored = User.objects.get(pk=user.pk)
    assert (stored.username, stored.email, stored.is_active) == ("precompiled", "p@example.org", True)
    assert not user._state.adding


def test_a_created_row_breaking_a_unique_constraint_is_an_integrity_error():
    UserFactory(username="taken")
    with pytest.raises(IntegrityError), transaction.atomic():
        row_create(get_user_model(), username="taken", password="!")


#: Values of the types an insert's fast preparation takes, with their neighbours it must leave to the field
#: (a bool for an integer, an int for a boolean, a str for a key, a subclass of str).
SAMPLE_VALUES = ("", "x", " é ", None, True, False, 0, 1, 7, -3, 2**40, "12", 1.5)


def test_the_fast_preparation_of_every_insertable_field_equals_get_db_prep_save():
    """Every concrete field of every model, on this database: a value the fast path prepares itself is
    prepared exactly (value and type) as ``field.get_db_prep_save`` prepares it, and the path takes the
    usual values of the label and assignment inserts (keys, flags, texts, counts)."""
    from django.apps import apps

    from evalsite.precompiled import _db_prep_save, _preparer

    fast = 0
    for model in apps.get_models():
        for field in model._meta.local_concrete_fields:
            types, adapt = _preparer(field, connection)
            for value in SAMPLE_VALUES:
                if type(value) not in types:
                    continue
                try:
                    expected = field.get_db_prep_save(value, connection)
                except (TypeError, ValueError):
                    continue
                prepared = _db_prep_save(field, types, adapt, value, connection)
                assert (prepared, type(prepared)) == (expected, type(expected)), (model, field.name, value)
                fast += 1
    assert fast > 1000
    from annotation.models import Assignment, PairwiseLabel

    taken = {(model.__name__, field.name) for model in (Assignment, PairwiseLabel)
             for field in model._meta.local_concrete_fields if _preparer(field, connection)[0]}
    assert {("Assignment", "campaign"), ("Assignment", "token"), ("Assignment", "swapped"),
            ("PairwiseLabel", "time_on_item_ms"), ("PairwiseLabel", "choice")} <= taken
