"""Row reads and inserts compiled once per process (issue 16), for what every request of the busiest
endpoints does (the logged-in user, the item shown, the assignment or label written), without the ORM
building and compiling the same SQL on every call — that was a third of such a request's CPU.

* :func:`row_by_pk` — ``Model.objects.select_related(*relations).get(pk=…)``: the SQL, the select list
  and the populators that attach related rows are what the ORM itself produces (its compiler, and the
  steps of Django's ``ModelIterable``); only the primary key changes per call.
* :func:`row_by_pk_sql` and :func:`row_from` — the same read as a subquery of a larger statement (a
  lateral join on a key the statement computes), and the instance built from its columns: one round trip
  where there were two.
* :func:`row_create` — ``Model.objects.create(**values)`` for a model with an automatic primary key and
  no save signals or ``save()`` override in play: each field's value is prepared as ``save()`` prepares
  it (``pre_save``, ``get_db_prep_save``) and sent with one ``INSERT … RETURNING`` of the new key;
  :func:`row_insert` hands that INSERT to a statement that sends it with others.
* :func:`instance_new` — ``Model(**values)`` for such a model, its steps found once per model and set of
  keywords (the four new instances of a combined label: its assignment, its label, the slot taken and the
  session read).
* :func:`read_rows` and :func:`read_instances` — any queryset's rows or instances, its statement compiled by
  the ORM once per process for each ``queryset_of`` (a judge run's per-task reads: its comparisons, stored
  Novelty contexts and pool of responses, each built and compiled anew for every task before, issue 30).
"""

from __future__ import annotations

import datetime
import functools
import inspect
from collections.abc import Callable, Hashable, Sequence

from django.db import DEFAULT_DB_ALIAS, connections, router
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.models import Model, QuerySet, fields, signals
from django.db.models.base import DEFERRED, ModelState
from django.db.models.fields import related, related_descriptors
from django.db.models.fields.reverse_related import ForeignObjectRel
from django.db.models.query import get_related_populators
from django.db.models.query_utils import DeferredAttribute
from django.dispatch.dispatcher import NO_RECEIVERS

from evalsite.prepared_statements import statement_cursor


@functools.cache
def _compiled(model: type[Model], relations: tuple[str, ...], alias: str, vendor: str, deferred: tuple[str, ...] = ()):
    """The SQL of one ``model`` row by primary key with ``relations``, the ``deferred`` columns left out: the
    SQL, the select list's columns that need converting, where the model's own columns are, its field names,
    the related populators."""
    # No ORDER BY, as ``get()`` clears it: a model's default ordering (Item's joins its campaign) costs a join
    # and a sort for the one row.
    compiler = (model._default_manager.select_related(*relations).defer(*deferred).filter(pk=0).order_by()
                .query.get_compiler(using=alias))
    sql, params = compiler.as_sql()
    if list(params) != [0]:  # the primary key must be the query's only parameter
        raise RuntimeError(f"unexpected parameters {params!r} in the {model.__name__} query")
    select, klass_info = compiler.select, compiler.klass_info
    converted = [(i, column) for i, (column, _, _) in enumerate(select) if compiler.get_converters([column])]
    start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
    init_list = [column.target.attname for column, _, _ in select[start:end]]
    return sql, converted, (start, end), init_list, get_related_populators(klass_info, select, alias), len(select)


def row_by_pk(model: type[Model], pk, *, relations: tuple[str, ...] = (), deferred: tuple[str, ...] = ()) -> Model:
    """``model._default_manager.select_related(*relations).defer(*deferred).get(pk=pk)``, compiled once per
    process; ``model.DoesNotExist`` when there is no such row."""
    connection = connections[router.db_for_read(model)]
    compiled = _compiled(model, relations, connection.alias, connection.vendor, deferred)
    with statement_cursor(connection) as cursor:
        cursor.execute(compiled[0], [pk])
        row = cursor.fetchone()
    if row is None:
        raise model.DoesNotExist(f"no {model.__name__} {pk!r}")
    return _instance(model, connection, compiled, row)


def row_by_pk_sql(model: type[Model], key_sql: str, *, relations: tuple[str, ...] = (),
                  deferred: tuple[str, ...] = ()) -> tuple[str, int]:
    """The SQL of :func:`row_by_pk` with the primary key given by the SQL expression ``key_sql`` instead of
    a parameter (a column of the statement it is part of, in a ``LATERAL`` subquery), and the number of
    columns it selects; :func:`row_from` builds the instance from them."""
    connection = connections[router.db_for_read(model)]
    sql, *_, width = _compiled(model, relations, connection.alias, connection.vendor, deferred)
    if sql.count("%s") != 1:  # the primary key is the query's only parameter (checked by _compiled)
        raise RuntimeError(f"cannot place a key expression in the {model.__name__} query")
    return sql.replace("%s", f"({key_sql})"), width


def row_from(model: type[Model], row, *, relations: tuple[str, ...] = (), deferred: tuple[str, ...] = ()) -> Model | None:
    """The instance :func:`row_by_pk` would return, from the columns of :func:`row_by_pk_sql` (``row``, as
    the database returned them); None when the subquery found no row (its key column is NULL)."""
    connection = connections[router.db_for_read(model)]
    compiled = _compiled(model, relations, connection.alias, connection.vendor, deferred)
    _, _, (start, _), init_list, _, _ = compiled
    if row[start + init_list.index(model._meta.pk.attname)] is None:
        return None
    return _instance(model, connection, compiled, row)


def _converters(connection, compiled) -> list[tuple[int, object, list]]:
    """(position, column, its converters) of a :func:`_compiled` query's converted columns on ``connection``:
    the lists the ORM's compiler asks each column for (the backend's, then the field's), asked once per
    connection and query (issue 30: they were asked again for every row)."""
    kept = connection.__dict__.setdefault("_atelier_row_converters", {})
    found = kept.get(id(compiled))
    if found is None or found[0] is not compiled:  # keyed by identity: the compiled query itself is kept too
        found = kept[id(compiled)] = (compiled, [
            (i, column, connection.ops.get_db_converters(column) + column.get_db_converters(connection))
            for i, column in compiled[1]])
    return found[1]


def _instance(model: type[Model], connection, compiled, row) -> Model:
    """The instance, its related rows attached, from one row of a :func:`_compiled` query."""
    _, _, (start, end), init_list, populators, _ = compiled
    row = list(row)
    for i, column, converters in _converters(connection, compiled):
        for convert in converters:
            row[i] = convert(row[i], column, connection)
    instance = instance_from_db(model, connection.alias, init_list, row[start:end])
    for populator in populators:
        _populate(populator, row, instance)
    return instance


def _populate(populator, row, from_obj) -> None:
    """``RelatedPopulator.populate(row, from_obj)`` (Django 5.2, ``django/db/models/query.py``), step for step,
    with the related instance built by :func:`instance_from_db`."""
    obj_data = populator.reorder_for_init(row) if populator.reorder_for_init else row[populator.cols_start:populator.cols_end]
    if obj_data[populator.pk_idx] is None:
        obj = None
    else:
        obj = instance_from_db(populator.model_cls, populator.db, populator.init_list, obj_data)
        for related_populator in populator.related_populators:
            _populate(related_populator, row, obj)
    populator.local_setter(from_obj, obj)
    if obj is not None:
        populator.remote_setter(obj, from_obj)


@functools.cache
def _plain_attnames(model: type[Model]) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """The concrete fields' attribute names, and the positions of the foreign keys among them, when ``model.from_db`` with one value per concrete field does
    nothing but what :func:`instance_from_db` does: Django's own ``from_db`` and ``Model.__init__`` (no class
    in the model's bases defines another ``__init__``), and every field's class attribute either stores the
    value as it is (``DeferredAttribute``, no ``__set__``) or is a ``ForeignKeyDeferredAttribute``, whose
    ``__set__`` on a new instance (nothing cached yet) only stores it. None for any other model."""
    if getattr(model.from_db, "__func__", None) is not Model.from_db.__func__:
        return None
    if any("__init__" in vars(base) for base in model.__mro__ if base not in (Model, object)):
        return None
    attnames = tuple(field.attname for field in model._meta.concrete_fields)
    keys = []
    for i, attname in enumerate(attnames):
        descriptor = type(inspect.getattr_static(model, attname, None))
        if descriptor is related.ForeignKeyDeferredAttribute:
            keys.append(i)
        elif descriptor is not DeferredAttribute:
            return None
    return attnames, tuple(keys)


@functools.cache
def _read_attnames(model: type[Model], field_names: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """:func:`_plain_attnames` for a read of only the columns ``field_names`` (the others deferred): the
    attribute names of the concrete fields read, in the model's field order (the order Django's ``from_db``
    takes the values in, whatever the order of ``field_names``), and the positions of the foreign keys
    among them. None for a model :func:`_plain_attnames` does not admit."""
    plain = _plain_attnames(model)
    if plain is None:
        return None
    attnames, keys = plain
    read = [i for i, attname in enumerate(attnames) if attname in field_names]
    return tuple(attnames[i] for i in read), tuple(j for j, i in enumerate(read) if i in keys)


def _unheard(signal, sender) -> bool:
    """``signal.send(sender=sender, ...)`` would call no receiver (the test ``Signal.send`` makes first)."""
    return not signal.receivers or signal.sender_receivers_cache.get(sender) is NO_RECEIVERS


def instance_from_db(model: type[Model], db: str, field_names, values) -> Model:
    """``model.from_db(db, field_names, values)``: the same instance (the same ``__dict__``, in the same
    order, and ``_state``), built without ``Model.__init__``'s two signal sends and one descriptor call per
    field when nobody listens to ``pre_init``/``post_init`` for the model (issue 30: ~16 instances a
    combined label). A read of fewer columns (deferred ones: two thirds of a combined label's instances, its
    item, task and responses) is built the same way: Django's ``from_db`` fills the columns not read with
    ``DEFERRED``, which ``Model.__init__`` skips. Any other case is Django's ``from_db`` itself."""
    plain = _plain_attnames(model)
    if plain is not None and len(values) != len(plain[0]):
        plain = _read_attnames(model, tuple(field_names))
        if plain is not None and len(values) != len(plain[0]):  # not one value per column read: Django's error
            plain = None
    if plain is None or not _unheard(signals.pre_init, model) or not _unheard(signals.post_init, model):
        return model.from_db(db, field_names, values)
    # With one value per concrete field Django's from_db ignores field_names and calls model(*values); with
    # fewer it calls it with DEFERRED in place of each column not read, and __init__ skips those.
    attnames, keys = plain
    instance = object.__new__(model)
    state = instance._state = ModelState()
    attributes = instance.__dict__
    for attname, value in zip(attnames, values):
        if value is not DEFERRED:
            attributes[attname] = value
    # A foreign key's __set__ asks the (lazily made) related-object cache whenever the value differs from
    # the None a new instance has: the cache then exists, empty, first in the state's attributes.
    for i in keys:
        if values[i] is not None and values[i] is not DEFERRED:
            state.fields_cache = {}
            break
    state.adding, state.db = False, db
    return instance


@functools.cache
def _compiled_read(queryset_of: Callable[..., QuerySet], params_of: Callable[..., list], marks: tuple[Hashable, ...],
                   alias: str, vendor: str):
    """(the compiler, the SQL, the select list's converters) of ``queryset_of(*marks)``, checked
    to bind exactly ``params_of(*marks)``: ``marks`` are values no real call passes, distinct from each other, so
    that a statement binding its parameters in another order, or transforming one otherwise than ``params_of``
    says (a LIKE pattern's escapes), is refused here rather than read with the wrong values."""
    compiler = queryset_of(*marks).query.get_compiler(using=alias)
    sql, params = compiler.as_sql()
    expected = list(params_of(*marks))
    if list(params) != expected:
        raise RuntimeError(f"{queryset_of.__qualname__} binds {list(params)!r}, not {expected!r}")
    return compiler, sql, compiler.get_converters([column for column, _, _ in compiler.select])


def read_rows(queryset_of: Callable[..., QuerySet], params_of: Callable[..., list], marks: tuple[Hashable, ...],
              args: Sequence, *, using: str = DEFAULT_DB_ALIAS) -> list:
    """The rows ``queryset_of(*args).values_list(...)`` gives (each a list, its columns through the converters
    the ORM applies), read with the statement of ``queryset_of(*marks)`` compiled once per process and
    database, bound to ``params_of(*args)`` (see :func:`_compiled_read` for the check)."""
    connection = connections[using]
    compiler, sql, converters = _compiled_read(queryset_of, params_of, marks, connection.alias, connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, list(params_of(*args)))
        rows = cursor.fetchall()
    return list(compiler.apply_converters(rows, converters)) if converters else rows


def read_instances(queryset_of: Callable[..., QuerySet], params_of: Callable[..., list], marks: tuple[Hashable, ...],
                   args: Sequence, *, using: str = DEFAULT_DB_ALIAS) -> list[Model]:
    """The instances ``queryset_of(*args)`` gives (a read of one model's own columns, ``only()`` allowed, no
    ``select_related``), as :func:`read_rows` reads them, each built by :func:`instance_from_db`."""
    connection = connections[using]
    model, names = _instance_columns(_compiled_read(queryset_of, params_of, marks, connection.alias,
                                                    connection.vendor)[0])
    alias = connection.alias
    return [instance_from_db(model, alias, names, row)
            for row in read_rows(queryset_of, params_of, marks, args, using=using)]


@functools.cache
def _instance_columns(compiler) -> tuple[type[Model], list[str]]:
    """The model and the attribute names of a compiled read of one model's own columns (what ``ModelIterable``
    gives ``from_db``); anything else, a join's related rows or a computed column, refused."""
    info = compiler.klass_info
    columns = [column for column, _, _ in compiler.select]
    if (not info or info.get("related_klass_infos") or compiler.annotation_col_map
            or any(getattr(getattr(c, "target", None), "model", None) is None for c in columns)):
        raise RuntimeError("not a read of one model's own columns")
    return info["model"], [column.target.attname for column in columns]


_VALUE, _DEFAULT, _OBJECT = range(3)


def _is_key(model: type[Model], field) -> bool:
    """Setting the field's attribute runs ``ForeignKeyDeferredAttribute.__set__`` (else the plain store of a
    ``DeferredAttribute``, the only other kind :func:`_plain_attnames` admits)."""
    return type(inspect.getattr_static(model, field.attname, None)) is related.ForeignKeyDeferredAttribute


@functools.cache
def _new_plan(model: type[Model], keys: tuple[str, ...]):
    """The steps of ``Model.__init__(**values)`` (Django 5.2, ``django/db/models/base.py``) for ``model`` and
    keywords ``keys``: (the field steps in ``opts.fields`` order, the properties set after them). None when the
    model is not one :func:`_plain_attnames` admits, a keyword names a relation both ways, a related object's field is not a
    plain foreign key or one-to-one, or a keyword is neither a field nor a property (Django's error)."""
    if _plain_attnames(model) is None:
        return None
    opts = model._meta
    given = dict.fromkeys(keys)
    steps = []
    for field in opts.fields:
        if field.column is None or field.generated:
            continue
        if isinstance(field.remote_field, ForeignObjectRel) and field.name in given:
            if field.attname in given or field.primary_key:
                return None
            descriptor = type(inspect.getattr_static(model, field.name, None))
            if descriptor not in (related_descriptors.ForwardManyToOneDescriptor,
                                  related_descriptors.ForwardOneToOneDescriptor):
                return None
            links = [(lh.attname, rh.attname) for lh, rh in field.related_fields]
            concrete = field.remote_field.model._meta.concrete_model
            remote = None if field.remote_field.multiple else field.remote_field
            steps.append((_OBJECT, field.name, (concrete, links, field.cache_name, remote), True))
            del given[field.name]
        elif field.attname in given:
            steps.append((_VALUE, field.attname, field, _is_key(model, field)))
            del given[field.attname]
        else:
            steps.append((_DEFAULT, field.attname, field, _is_key(model, field)))
    if any(key not in opts._property_names for key in given):
        return None
    return steps, tuple(given)


def instance_new(model: type[Model], /, **values) -> Model:
    """``model(**values)``: the same instance (the same ``__dict__`` in the same order, the same ``_state``,
    the same related-object caches on both sides), built without ``Model.__init__``'s generic loop and its
    two signal sends when nobody listens to ``pre_init``/``post_init`` for the model (issue 30: four new
    instances a combined label cost ~0.3 M instructions). Any other case is ``model(**values)`` itself."""
    plan = _new_plan(model, tuple(values))
    # asked at every call, not kept in the plan: the relation checks below are the router-less ones, and the
    # routers may change after a plan was made (override_settings(DATABASE_ROUTERS=...) in tests)
    if (plan is None or router.routers or not _unheard(signals.pre_init, model)
            or not _unheard(signals.post_init, model)):
        return model(**values)
    steps, properties = plan
    instance = object.__new__(model)
    state = instance._state = ModelState()
    attributes = instance.__dict__
    for step, key, how, related_key in steps:
        if step == _OBJECT:
            value = values[key]
            if value is DEFERRED:
                continue
            concrete, links, cache_name, remote = how
            if value is None or not isinstance(value, concrete):
                setattr(instance, key, value)  # Django's descriptor: clears, or refuses the value
                continue
            # ForwardManyToOneDescriptor.__set__ with no router: each side takes the other's database.
            if state.db is None:
                state.db = value._state.db or DEFAULT_DB_ALIAS
            if value._state.db is None:
                value._state.db = state.db
            if value._state.db != state.db:
                setattr(instance, key, value)  # Django's refusal ("the current database router prevents …")
            cache = state.fields_cache  # made on first use, as the key's own __set__ (is_cached) makes it
            for attname, remote_attname in links:
                attributes[attname] = getattr(value, remote_attname)
            cache[cache_name] = value
            if remote is not None:
                remote.set_cached_value(value, instance)
            continue
        if step == _VALUE:
            value = values[key]
            if value is DEFERRED:
                continue
        else:
            value = how.get_default()
        if related_key:
            # ForeignKeyDeferredAttribute.__set__ on a new instance: asking whether the related object is
            # cached makes the (empty) cache whenever the value differs from the None it had.
            if attributes.get(key) != value:
                state.fields_cache  # noqa: B018 — made, as Django's is_cached makes it
        attributes[key] = value
    for key in properties:
        if values[key] is not DEFERRED:
            setattr(instance, key, values[key])
    return instance


#: Field classes (exactly these, not subclasses) whose ``get_db_prep_save`` returns a ``str`` or ``None`` value
#: itself: ``Field.get_db_prep_save`` → ``get_db_prep_value`` → ``get_prep_value`` → ``to_python``, each passing
#: it on unchanged (a ``bool`` or ``None`` for BooleanField).
_TEXT = (str, type(None))
_UNCHANGED = {fields.CharField: _TEXT, fields.TextField: _TEXT, fields.BooleanField: (bool, type(None))}
#: Integer field classes: an ``int`` (exactly: ``int(True)`` is not ``True``) or ``None`` value is what the
#: backend's ``adapt_integerfield_value`` makes of it (``get_prep_value``'s ``int()`` returns the same int).
_INTEGERS = (fields.IntegerField, fields.BigIntegerField, fields.SmallIntegerField, fields.PositiveIntegerField,
             fields.PositiveBigIntegerField, fields.PositiveSmallIntegerField)


def _preparer(field, connection):
    """(the value types for which ``field.get_db_prep_save(value, connection)`` is ``adapt(value)``, adapt or None
    for the value itself), found once per field: the usual values of an insert (keys, flags, texts, counts) skip
    the field's five calls, each with a ``hasattr`` probe (issue 30). Any other value or field: ()."""
    cls = type(field)
    if cls in _UNCHANGED:
        return _UNCHANGED[cls], None
    if cls is fields.DateTimeField:
        return (datetime.datetime, type(None)), _datetime_adapter(field, connection)
    if cls in _INTEGERS:
        internal = field.get_internal_type()
        return (int, type(None)), lambda value: connection.ops.adapt_integerfield_value(value, internal)
    if (cls in (related.ForeignKey, related.OneToOneField)
            and type(field.target_field) in (fields.AutoField, fields.BigAutoField)
            and type(connection.ops).validate_autopk_value is BaseDatabaseOperations.validate_autopk_value):
        # ForeignKey.get_db_prep_save: None stays None; an int goes to the key's AutoFieldMixin.get_db_prep_value
        # (int() of it, then validate_autopk_value, the identity here).
        return (int, type(None)), None
    return (), None


def _datetime_adapter(field, connection):
    """``DateTimeField.get_db_prep_save`` of an aware ``datetime`` or None: ``get_prep_value`` passes it on
    unchanged (``to_python`` of a datetime is itself; only a naive one is warned about and converted), then
    the backend's ``adapt_datetimefield_value``. A naive one goes to the field."""
    adapt = connection.ops.adapt_datetimefield_value

    def adapted(value):
        if value is not None and value.utcoffset() is None:
            return field.get_db_prep_save(value, connection)
        return adapt(value)

    return adapted


#: ``pre_save`` methods that, with neither ``auto_now`` nor ``auto_now_add``, are ``Field.pre_save``:
#: ``getattr(instance, attname)``.
_PLAIN_PRE_SAVE = (fields.Field.pre_save, fields.DateField.pre_save, fields.DateTimeField.pre_save,
                   fields.TimeField.pre_save)


def _stored_attname(model: type[Model], field) -> str | None:
    """The attribute whose value in the instance's ``__dict__`` is ``field.pre_save(instance, True)``: the
    field's ``pre_save`` is :data:`_PLAIN_PRE_SAVE`'s ``getattr`` and its class attribute a
    ``DeferredAttribute`` (or the foreign key's), whose ``__get__`` returns the ``__dict__`` entry when there
    is one. None for any other field (its own ``pre_save`` is called)."""
    if type(field).pre_save not in _PLAIN_PRE_SAVE or getattr(field, "auto_now", False) or getattr(
            field, "auto_now_add", False):
        return None
    descriptor = type(inspect.getattr_static(model, field.attname, None))
    return field.attname if descriptor in (DeferredAttribute, related.ForeignKeyDeferredAttribute) else None


@functools.cache
def _insert_sql(model: type[Model], alias: str, vendor: str):
    connection = connections[alias]
    quote = connection.ops.quote_name
    fields = [field for field in model._meta.local_concrete_fields if field is not model._meta.pk]
    table, pk = quote(model._meta.db_table), quote(model._meta.pk.column)
    sql = (f"INSERT INTO {table} ({', '.join(quote(f.column) for f in fields)}) "
           f"VALUES ({', '.join(['%s'] * len(fields))}) RETURNING {table}.{pk}")
    return sql, [(field, *_preparer(field, connection), _stored_attname(model, field)) for field in fields]


def _db_prep_save(field, types, adapt, value, connection):
    """``field.get_db_prep_save(value, connection)``, without its calls for a value of ``types`` (for a text
    field any ``str``, such as a choices enum's member, which ``CharField.to_python`` passes on unchanged)."""
    if type(value) in types or (types is _TEXT and isinstance(value, str)):
        return value if adapt is None else adapt(value)
    return field.get_db_prep_save(value, connection)


def row_create(model: type[Model], **values) -> Model:
    """``model.objects.create(**values)``, its INSERT written once per process (see the module docstring
    for the models it suits); the database's errors (IntegrityError) as the ORM raises them."""
    instance, sql, params = row_insert(model, **values)
    with statement_cursor(connections[instance._state.db]) as cursor:
        cursor.execute(sql, params)
        row_inserted(instance, cursor.fetchone()[0])
    return instance


def row_insert(model: type[Model], **values) -> tuple[Model, str, list]:
    """What :func:`row_create` sends, unsent: the new instance (its ``_state.db`` the database to write to),
    the ``INSERT … RETURNING`` of its key and the parameters, for a statement that carries the INSERT with
    others (a data-modifying ``WITH``); the caller then gives the key to :func:`row_inserted`."""
    connection = connections[router.db_for_write(model)]
    sql, fields = _insert_sql(model, connection.alias, connection.vendor)
    instance = instance_new(model, **values)
    # A field's pre_save value is read from the instance's __dict__ where that is what pre_save returns
    # (stored is None otherwise, never a key of __dict__).
    attributes = instance.__dict__
    params = [_db_prep_save(field, types, adapt,
                            attributes[stored] if stored in attributes else field.pre_save(instance, True), connection)
              for field, types, adapt, stored in fields]
    instance._state.db = connection.alias
    return instance, sql, params


def row_inserted(instance: Model, pk) -> None:
    """The instance of :func:`row_insert` is stored with the key ``pk``."""
    instance.pk, instance._state.adding = pk, False


__all__ = ["instance_from_db", "instance_new", "read_instances", "read_rows", "row_by_pk", "row_by_pk_sql", "row_create",
           "row_from", "row_insert", "row_inserted"]
