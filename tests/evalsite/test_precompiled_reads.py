"""evalsite.precompiled.read_rows and read_instances: a queryset's statement compiled once a process gives the
rows and instances the queryset gives, and a statement that would bind its parameters otherwise than the caller
says is refused before anything is read."""

from __future__ import annotations

import pytest

from evalsite import precompiled
from evalsite.precompiled import read_instances, read_rows
from leaderboard.models import Task
from tests.factories import TaskFactory

pytestmark = pytest.mark.django_db


def _tasks_named(task_set_id, prefix):
    return Task.objects.filter(task_set=task_set_id, external_id__startswith=prefix).order_by("pk")


def _tasks_named_params(task_set_id, prefix):
    # Django sorts a filter's keywords: the LIKE pattern (its escapes the backend's), then the task set
    from django.db import connection

    return [connection.ops.prep_for_like_query(prefix) + "%", task_set_id]


def _task_rows(task_set_id, prefix):
    return _tasks_named(task_set_id, prefix).values_list("pk", "external_id", "source", "task_set__created_at")


_MARKS = (-1, "m_%\\x")


def test_read_rows_give_the_querysets_rows_through_its_converters():
    first = TaskFactory(external_id="a_%1", source={"from": ["x", 1.5, None]})
    TaskFactory(task_set=first.task_set, external_id="a_%2", source={})
    TaskFactory(task_set=first.task_set, external_id="aX%3")  # a wrong escape of "_" would match it
    for prefix in ("a_%", "a", "aX", "b", "%"):
        read = read_rows(_task_rows, _tasks_named_params, _MARKS, (first.task_set_id, prefix))
        assert [tuple(r) for r in read] == list(_task_rows(first.task_set_id, prefix))
        assert [[type(v) for v in r] for r in read] == [[type(v) for v in r] for r in _task_rows(first.task_set_id, prefix)]
    assert read_rows(_task_rows, _tasks_named_params, _MARKS, (first.task_set_id, "a_%"))[0][2] == {"from": ["x", 1.5, None]}
    from django.db import connection

    assert precompiled._compiled_read(_task_rows, _tasks_named_params, _MARKS, connection.alias, connection.vendor)[2]


def test_read_instances_are_the_instances_the_queryset_makes():
    first = TaskFactory(external_id="i1")
    TaskFactory(task_set=first.task_set, external_id="i2")

    def only_some(task_set_id, prefix):
        return _tasks_named(task_set_id, prefix).only("external_id", "task_set")

    read, orm = (read_instances(only_some, _tasks_named_params, _MARKS, (first.task_set_id, "i")),
                 list(only_some(first.task_set_id, "i")))
    assert [(r.__dict__.keys() - {"_state"}, r.get_deferred_fields(), r._state.db, r._state.adding) for r in read] == \
        [(r.__dict__.keys() - {"_state"}, r.get_deferred_fields(), r._state.db, r._state.adding) for r in orm]
    assert [(r.pk, r.external_id, r.task_set_id) for r in read] == [(r.pk, r.external_id, r.task_set_id) for r in orm]


def test_a_statement_binding_its_parameters_in_another_order_is_refused():
    def reversed_params(task_set_id, prefix):
        return list(reversed(_tasks_named_params(task_set_id, prefix)))

    with pytest.raises(RuntimeError, match="binds"):
        read_rows(_task_rows, reversed_params, _MARKS, (1, "x"))


def test_a_like_pattern_escaped_otherwise_than_the_caller_says_is_refused():
    def unescaped(task_set_id, prefix):
        return [prefix + "%", task_set_id]

    with pytest.raises(RuntimeError, match="binds"):
        read_rows(_task_rows, unescaped, _MARKS, (1, "x"))


def test_read_instances_refuses_a_read_with_related_rows():
    def with_task_set(task_set_id, prefix):
        return _tasks_named(task_set_id, prefix).select_related("task_set")

    with pytest.raises(RuntimeError, match="own columns"):
        read_instances(with_task_set, _tasks_named_params, _MARKS, (1, "x"))


def test_a_read_is_compiled_once_for_all_its_calls():
    made = []

    def counted(task_set_id, prefix):
        made.append((task_set_id, prefix))
        return _task_rows(task_set_id, prefix)

    precompiled._compiled_read.cache_clear()
    for prefix in ("a", "b", "c"):
        read_rows(counted, _tasks_named_params, _MARKS, (1, prefix))
    assert made == [_MARKS]
