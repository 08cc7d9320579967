"""Precompiled row reads and inserts give what the ORM gives: the same row with the same related rows,
the same DoesNotExist, the same stored row and the same IntegrityError."""

from __future__ import annotations

import datetime
import warnings
import zoneinfo

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, models, transaction

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


def test_a_row_by_pk_with_deferred_columns_equals_the_orms_defer_and_reads_them_on_use():
    task = TaskFactory()
    deferred = ("task_set__description", "brief")
    read = row_by_pk(Task, task.pk, relations=("task_set",), deferred=deferred)
    orm = Task.objects.select_related("task_set").defer(*deferred).get(pk=task.pk)
    assert read.get_deferred_fields() == orm.get_deferred_fields() == {"brief"}
    assert read.task_set.get_deferred_fields() == orm.task_set.get_deferred_fields() == {"description"}
    loaded = [f.attname for f in Task._meta.concrete_fields if f.attname != "brief"]
    assert [getattr(read, f) for f in loaded] == [getattr(orm, f) for f in loaded]
    sql, width = row_by_pk_sql(Task, "%s", relations=("task_set",), deferred=deferred)
    with connection.cursor() as cursor:
        cursor.execute(sql, [task.pk])
        row = cursor.fetchone()
    from_row = row_from(Task, row, relations=("task_set",), deferred=deferred)
    assert len(row) == width and from_row.get_deferred_fields() == {"brief"}
    assert (read.brief, read.task_set.description) == (task.brief, task.task_set.description)  # read on use


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


class _Choice(models.TextChoices):
    """A choices enum: its members are ``str`` instances of another type."""

    FIRST = "first", "First"


#: Values of the types an insert's fast preparation takes, with their neighbours it must leave to the field
#: (a bool for an integer, an int for a boolean, a str for a key, a subclass of str).
SAMPLE_VALUES = ("", "x", " é ", None, True, False, 0, 1, 7, -3, 2**40, "12", 1.5,
                 _Choice.FIRST, datetime.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=datetime.UTC),
                 datetime.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=zoneinfo.ZoneInfo("Europe/Paris")),
                 datetime.datetime(2026, 1, 2, 3, 4, 5), datetime.date(2026, 1, 2))


def test_the_fast_preparation_of_every_insertable_field_equals_get_db_prep_save():
    """Every concrete field of every model, on this database: a value the fast path prepares itself is
    prepared exactly (value and type) as ``field.get_db_prep_save`` prepares it, and the path takes the
    usual values of the label and assignment inserts (keys, flags, texts, counts)."""
    from django.apps import apps

    from evalsite.precompiled import _TEXT, _db_prep_save, _preparer

    fast = 0
    for model in apps.get_models():
        for field in model._meta.local_concrete_fields:
            types, adapt = _preparer(field, connection)
            for value in SAMPLE_VALUES:  # every value, so that a path taking too much is seen too
                with warnings.catch_warnings():  # a naive datetime's warning, from both paths
                    warnings.simplefilter("ignore", RuntimeWarning)
                    try:
                        expected = field.get_db_prep_save(value, connection)
                    except (TypeError, ValueError, ValidationError):  # a value the field refuses
                        continue
                    prepared = _db_prep_save(field, types, adapt, value, connection)
                taken = type(value) in types or (types is _TEXT and isinstance(value, str))
                if not taken and type(expected).__eq__ is object.__eq__:
                    continue  # the field's own adapter object (psycopg's Jsonb), equal only to itself
                assert (prepared, type(prepared)) == (expected, type(expected)), (model, field.name, value)
                fast += taken
    assert fast > 1000
    from annotation.label_models import PairwiseLabel
    from annotation.models import Assignment

    taken = {(model.__name__, field.name) for model in (Assignment, PairwiseLabel)
             for field in model._meta.local_concrete_fields if _preparer(field, connection)[0]}
    assert {("Assignment", "campaign"), ("Assignment", "token"), ("Assignment", "swapped"), ("Assignment", "created_at"),
            ("PairwiseLabel", "time_on_item_ms"), ("PairwiseLabel", "choice")} <= taken


def test_an_inserts_stored_attribute_is_its_fields_pre_save():
    """Equivalence: for every insertable field of every model the insert reads from the instance's
    ``__dict__``, that entry is what ``field.pre_save(instance, True)`` returns (the label's and the
    assignment's fields are all read so); an ``auto_now`` field is left to its ``pre_save``."""
    from django.apps import apps

    from annotation.label_models import PairwiseLabel
    from annotation.models import Assignment
    from evalsite.precompiled import _stored_attname

    read = set()
    for model in apps.get_models():
        for field in model._meta.local_concrete_fields:
            stored = _stored_attname(model, field)
            if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
                assert stored is None, (model, field.name)
            if stored is None:
                continue
            instance = model()
            marker = object()
            instance.__dict__[stored] = marker
            assert field.pre_save(instance, True) is marker, (model, field.name)
            read.add((model, field.name))
    assert {(model, field.name) for model in (Assignment, PairwiseLabel)
            for field in model._meta.local_concrete_fields} <= read


def _built(instance) -> tuple:
    """Everything an instance carries: its attributes in order, and its state's."""
    attributes = {name: value for name, value in vars(instance).items() if name != "_state"}
    return type(instance), list(vars(instance)), attributes, vars(instance._state)


def test_an_instance_from_db_is_djangos_from_db_for_every_model():
    """Equivalence (issue 30): for every model, with one value per concrete field (one of them DEFERRED, as
    a deferred column reads), ``instance_from_db`` builds what ``Model.from_db`` builds: the same class, the
    same attributes in the same order, the same state; with fewer values too."""
    from django.apps import apps
    from django.db.models.base import DEFERRED

    from evalsite.precompiled import _plain_attnames, instance_from_db

    plain = 0
    for model in apps.get_models():
        names = [field.attname for field in model._meta.concrete_fields]
        values = [object() for _ in names]
        values[-1] = DEFERRED
        assert _built(instance_from_db(model, "default", names, values)) == _built(model.from_db("default", names, values))
        fewer = instance_from_db(model, "other", names[:1], values[:1])
        assert _built(fewer) == _built(model.from_db("other", names[:1], values[:1]))
        plain += _plain_attnames(model) is not None
    assert plain > 0.8 * len(apps.get_models())  # the usual model takes the short way


def test_an_instance_from_db_of_fewer_columns_is_djangos_from_db_without_init():
    """Equivalence (issue 30): for every model, a read of only some columns (the rest deferred, the names in
    any order) builds what ``Model.from_db`` builds, and for a model the short way admits it is built
    without ``Model.__init__`` (a combined label reads its item, task and responses so)."""
    from unittest import mock

    from django.apps import apps
    from django.db.models.base import DEFERRED

    from evalsite.precompiled import _plain_attnames, instance_from_db

    for model in apps.get_models():
        names = [field.attname for field in model._meta.concrete_fields]
        subsets = [names[:1], names[::2], names[1:], list(reversed(names[:-1]))]
        for read in subsets:
            in_order = [name for name in names if name in read]
            values = [None if i % 3 == 0 else object() for i in range(len(in_order))]
            if len(values) > 1:
                values[-1] = DEFERRED
            expected = _built(model.from_db("other", read, values))
            if _plain_attnames(model) is None:
                assert _built(instance_from_db(model, "other", read, values)) == expected
                continue
            with mock.patch.object(model, "__init__", side_effect=AssertionError("Model.__init__ called")):
                assert _built(instance_from_db(model, "other", read, values)) == expected, (model, read)


def test_an_instance_from_db_of_too_few_values_fails_as_djangos():
    """Fewer values than the columns named: Django's own error, not a short instance."""
    from evalsite.precompiled import instance_from_db

    names = [field.attname for field in Task._meta.concrete_fields]
    with pytest.raises(Exception) as djangos:
        Task.from_db("default", names[:3], [1, 2])
    with pytest.raises(type(djangos.value)):
        instance_from_db(Task, "default", names[:3], [1, 2])


def test_a_model_with_an_init_listener_is_built_by_django():
    """A ``post_init`` receiver for the model is called as ``from_db`` calls it."""
    from django.db.models.signals import post_init

    from evalsite.precompiled import instance_from_db

    heard = []

    def receiver(sender, instance, **kwargs):
        heard.append(instance)

    post_init.connect(receiver, sender=Task)
    try:
        names = [field.attname for field in Task._meta.concrete_fields]
        built = instance_from_db(Task, "default", names, [None] * len(names))
    finally:
        post_init.disconnect(receiver, sender=Task)
    assert heard == [built]


def test_a_row_by_pk_attaches_its_related_rows_as_the_orm_does():
    """The related instances (``select_related`` populators, one level and two) are attached and cached both
    ways as Django's ``RelatedPopulator`` attaches them."""
    from leaderboard.models import Response
    from tests.factories import ResponseFactory

    response = ResponseFactory()
    relations = ("subject_model", "task__task_set")
    read = row_by_pk(Response, response.pk, relations=relations)
    orm = Response.objects.select_related(*relations).order_by().get(pk=response.pk)
    for mine, theirs in ((read, orm), (read.subject_model, orm.subject_model), (read.task, orm.task),
                         (read.task.task_set, orm.task.task_set)):
        assert _built(mine)[:3] == _built(theirs)[:3]
        assert sorted(mine._state.fields_cache) == sorted(theirs._state.fields_cache)
        assert (mine._state.db, mine._state.adding) == (theirs._state.db, theirs._state.adding) == ("default", False)


def test_an_instance_new_is_djangos_init_for_every_model():
    """Equivalence (issue 30): for every model, with every concrete field given by its attribute name (one
    DEFERRED, one left to its default) and ``pk`` given too, ``instance_new`` builds what ``model(**values)``
    builds: the same class, the same attributes in the same order, the same state."""
    from django.apps import apps
    from django.db.models.base import DEFERRED

    from evalsite.precompiled import _new_plan, instance_new

    planned = 0
    for model in apps.get_models():
        names = [field.attname for field in model._meta.concrete_fields if not field.generated]
        values = {name: object() for name in names[1:]}  # the first (usually the key) by its default
        values[names[-1]] = DEFERRED
        assert _built(instance_new(model, **values)) == _built(model(**values))
        with_pk = {**values, "pk": 7}
        assert _built(instance_new(model, **with_pk)) == _built(model(**with_pk))
        planned += _new_plan(model, tuple(values)) is not None
    assert planned > 0.8 * len(apps.get_models())  # the usual model takes the short way


def _related_pair():
    """The same unsaved assignment's related rows twice over (each build caches itself on them)."""
    import datetime

    from annotation.models import Campaign, Item, ItemSlot

    joined = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)  # not the default's now(), which differs per row

    def rows():
        campaign, item = Campaign(pk=3), Item(pk=5)
        item._state.db = "default"  # as read from the database; the others are new (their db is set by the build)
        return campaign, item, ItemSlot(pk=9), get_user_model()(pk=11, date_joined=joined)

    return rows(), rows()


def _built_related(instance) -> tuple:
    """:func:`_built` with each cached related row as its model and key (the two builds cache distinct rows,
    and an unsaved row equals only itself)."""
    kind, names, attributes, state = _built(instance)
    cache = {name: (type(row), row.pk) for name, row in state.get("fields_cache", {}).items()}
    return kind, names, attributes, {**state, "fields_cache": cache}, list(state)


def test_an_instance_new_with_related_rows_caches_them_as_djangos_init():
    """Equivalence: an assignment built with its campaign, item, slot and annotator instances, then its label
    with that assignment (a one-to-one, cached on the assignment's side too), equal Django's builds — the
    instances, their states, and the related rows' states and caches."""
    import datetime
    import uuid

    from annotation.label_models import PairwiseLabel
    from annotation.models import Assignment
    from evalsite.precompiled import instance_new

    now = datetime.datetime(2026, 1, 2, tzinfo=datetime.UTC)
    built = []
    for new, (campaign, item, slot, annotator) in zip((instance_new, lambda model, **v: model(**v)), _related_pair()):
        assignment = new(Assignment, campaign=campaign, item=item, slot=slot, annotator=annotator, token="t",
                         swapped=False, status="active", content_hash="h", task_set_version="v", media_sha256={},
                         created_at=now, expires_at=now)
        assignment.pk = 13
        label = new(PairwiseLabel, assignment=assignment, campaign=campaign, item=item, annotator=annotator,
                    idempotency_key=uuid.UUID(int=1), content_hash="h", task_set_version="v", time_on_item_ms=1,
                    created_at=now, is_simulated=False, shown_choice="A", choice="A", swapped=False)
        built.append([_built_related(row) for row in (assignment, label, campaign, item, slot, annotator)])
    assert built[0] == built[1]


def test_an_instance_new_refuses_what_djangos_init_refuses():
    """A related row of the wrong model, or a keyword that is no field, fails as ``model(**values)`` fails; a
    None relation is Django's own assignment."""
    from annotation.models import Assignment, Campaign
    from evalsite.precompiled import instance_new

    with pytest.raises(ValueError, match="must be a \"Item\" instance"):
        instance_new(Assignment, item=Campaign(pk=1))
    with pytest.raises(TypeError, match="unexpected keyword arguments: 'colour'"):
        instance_new(Assignment, token="t", colour="red")
    assert _built(instance_new(Assignment, slot=None)) == _built(Assignment(slot=None))


class _RefusingRouter:
    """A router that allows no relation (Django then refuses a related row in ``__init__``)."""

    def allow_relation(self, obj1, obj2, **hints):
        return False


def test_an_instance_new_asks_a_router_installed_after_its_plan_was_made():
    """The router-less short way is taken only while no router is installed, also for a model and keyword set
    whose plan was made before one was: then the relation goes through Django's router checks."""
    from django.test import override_settings

    from annotation.models import Assignment, Campaign
    from evalsite.precompiled import instance_new

    assert instance_new(Assignment, campaign=Campaign(pk=1), token="t").campaign_id == 1  # the plan is made
    with override_settings(DATABASE_ROUTERS=[f"{__name__}._RefusingRouter"]):
        with pytest.raises(ValueError, match="router prevents this relation"):
            instance_new(Assignment, campaign=Campaign(pk=1), token="t")


def test_a_reads_converters_are_asked_once_per_connection_and_query():
    """Issue 30: the columns' converters (a task's JSON columns, on every database) are found once for a
    query on a connection, not again for every row read; the rows are the ORM's all the same."""
    from unittest import mock

    from django.db import connections

    first, second = TaskFactory(), TaskFactory()
    connection = connections["default"]
    row_by_pk(Task, first.pk)  # the query compiled (the compiler asks every column then), before counting
    connection.__dict__.pop("_atelier_row_converters", None)
    asked = mock.Mock(wraps=connection.ops.get_db_converters)
    with mock.patch.object(connection.ops, "get_db_converters", asked):
        read = [row_by_pk(Task, task.pk) for task in (first, second, first)]
    columns = len({id(column) for call in asked.call_args_list for column in call.args})
    assert 2 <= asked.call_count == columns  # each converted column (its two JSON ones at least) asked once
    for got, task in zip(read, (first, second, first)):
        assert _built(got) == _built(Task.objects.select_related().get(pk=task.pk))  # row_by_pk's relations: all
