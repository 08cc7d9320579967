"""The running-loop checks asked without raising (issue 30) answer as Django's and asgiref's: the same
connection from ``connections``, the same refusal of a database call in a thread running an event loop."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.local import _ThreadCriticalLocal
from django.core.exceptions import SynchronousOnlyOperation
from django.db import connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils.asyncio import async_unsafe
from django_prometheus.db.backends.postgresql.base import DatabaseWrapper as CountedDatabaseWrapper

from evalsite.db_backends.postgresql.base import DatabaseWrapper
from evalsite.loop_checks import UnraisedLoopLocal, _async_unsafe_parts, loop_checked, loop_checked_methods

pytestmark = pytest.mark.django_db


def test_the_connections_store_is_the_unraising_one_and_hands_the_same_connection():
    assert type(connections._connections) is UnraisedLoopLocal
    assert connections["default"] is connections._connections._storage.default
    assert connections.all(initialized_only=True)[0] is connections["default"]


def test_in_a_running_loop_the_store_is_asgirefs_per_context_one():
    """Inside a running loop the lookup is asgiref's own: a context variable store, not the thread's."""
    store = connections._connections

    async def inside():
        return store._get_storage(), _ThreadCriticalLocal._get_storage(store)

    mine, theirs = asyncio.run(inside())
    assert mine is theirs and mine is not store._storage


def test_every_async_unsafe_method_of_the_backend_is_remade():
    """Each of Django's @async_unsafe methods the backend has (its own and inherited) is re-made; nothing else."""
    remade = loop_checked_methods(CountedDatabaseWrapper)
    # (ensure_connection too, outside tests: a test case patches it on the base class while the test runs)
    assert {"cursor", "commit", "rollback", "connect", "close"} <= set(remade)
    for name, method in remade.items():
        if name != "ensure_connection":  # Django's test case patches that one on the class while a test runs
            mine = getattr(DatabaseWrapper, name)
            assert _async_unsafe_parts(mine) is None and mine.__wrapped__ is method.__wrapped__
        assert _async_unsafe_parts(getattr(CountedDatabaseWrapper, name))[0] is method.__wrapped__
    assert _async_unsafe_parts(BaseDatabaseWrapper.get_autocommit) is None
    assert loop_checked(BaseDatabaseWrapper.get_autocommit) is BaseDatabaseWrapper.get_autocommit


@async_unsafe("probe: not from a running event loop")
def _probe(value):
    return value + 1


def test_a_remade_method_refuses_in_a_running_loop_as_django_does(monkeypatch):
    """The same SynchronousOnlyOperation and message in a running loop, the same escape with
    DJANGO_ALLOW_ASYNC_UNSAFE, the same result outside a loop; for a real method of the backend too."""
    monkeypatch.delenv("DJANGO_ALLOW_ASYNC_UNSAFE", raising=False)
    remade = loop_checked(_probe)
    assert remade is not _probe and remade(1) == _probe(1) == 2

    async def refusal(method, *args):
        with pytest.raises(SynchronousOnlyOperation) as caught:
            method(*args)
        return str(caught.value)

    assert asyncio.run(refusal(remade, 1)) == asyncio.run(refusal(_probe, 1)) == "probe: not from a running event loop"
    commit = loop_checked(BaseDatabaseWrapper.commit)
    assert asyncio.run(refusal(commit, connection)) == asyncio.run(refusal(BaseDatabaseWrapper.commit, connection))
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    async def allowed():
        return remade(1), _probe(1)

    assert asyncio.run(allowed()) == (2, 2)


def test_outside_a_loop_a_remade_method_does_what_the_original_does():
    remade = loop_checked(BaseDatabaseWrapper.ensure_connection)
    remade(connection)
    assert connection.connection is not None
