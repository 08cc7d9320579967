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
