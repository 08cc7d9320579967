"""Whether an event loop runs in this thread, asked without raising (issue 30). Django and asgiref ask it with
``asyncio.get_running_loop()``, which raises ``RuntimeError`` when no loop runs, so in a sync worker every ask
is an exception raised and swallowed: ``django.db.connections[alias]`` (asgiref's thread-critical ``Local``)
asks it on every lookup, and every ``@async_unsafe`` method of a database connection (``ensure_connection``,
``cursor``, ``commit``, …) on every call; a combined label asked it ~45 times. ``asyncio._get_running_loop()``
gives the same answer as a value (None when no loop runs: ``get_running_loop`` is that call and a raise).

* :func:`connection_lookups_unraised` gives ``django.db.connections``' store a subclass of its class whose
  storage lookup asks that way (the same object, every reference to it unchanged; a running loop still
  gets asgiref's per-context storage);
* :func:`loop_checked` is an ``@async_unsafe`` method re-made to ask that way, with Django's message and its
  ``DJANGO_ALLOW_ASYNC_UNSAFE`` escape; the site's PostgreSQL backend uses it for all of them.
"""

from __future__ import annotations

import functools
import os
from asyncio import _get_running_loop

from asgiref.local import _ThreadCriticalLocal
from django.core.exceptions import SynchronousOnlyOperation


class UnraisedLoopLocal(_ThreadCriticalLocal):
    """asgiref's thread-critical ``Local``: the plain thread-local store when no loop runs in this thread."""

    def _get_storage(self):
        if _get_running_loop() is None:
            return self._storage
        return super()._get_storage()

    def __getattr__(self, key):
        if _get_running_loop() is None:
            return getattr(self._storage, key)
        return super().__getattr__(key)


def connection_lookups_unraised() -> None:
    """Make ``django.db.connections``' store an :class:`UnraisedLoopLocal`; idempotent, and nothing for any
    other kind of store."""
    from django.db import connections

    store = connections._connections
    if type(store) is _ThreadCriticalLocal:
        object.__setattr__(store, "__class__", UnraisedLoopLocal)  # Local's own __setattr__ sets a stored value


def _async_unsafe_parts(method) -> tuple | None:
    """(the undecorated function, the message) of a function made by ``django.utils.asyncio.async_unsafe``;
    None for any other."""
    code = getattr(method, "__code__", None)
    wrapped = getattr(method, "__wrapped__", None)
    if code is None or wrapped is None or code.co_name != "inner":
        return None
    if not code.co_filename.replace("\\", "/").endswith("django/utils/asyncio.py"):
        return None
    cells = dict(zip(code.co_freevars, (cell.cell_contents for cell in method.__closure__ or ())))
    if set(cells) != {"func", "message"} or cells["func"] is not wrapped:
        return None
    return wrapped, cells["message"]


def loop_checked(method):
    """``method`` (an ``@async_unsafe`` function) with the same check, asked without raising: in a thread
    running an event loop it raises ``SynchronousOnlyOperation`` with Django's message unless
    ``DJANGO_ALLOW_ASYNC_UNSAFE`` is set, as ``async_unsafe`` does; any other function is returned as it is."""
    parts = _async_unsafe_parts(method)
    if parts is None:
        return method
    func, message = parts

    @functools.wraps(func)
    def inner(*args, **kwargs):
        if _get_running_loop() is not None and not os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE"):
            raise SynchronousOnlyOperation(message)
        return func(*args, **kwargs)

    return inner


def loop_checked_methods(cls: type) -> dict:
    """Every ``@async_unsafe`` method ``cls`` has (its own or inherited), re-made by :func:`loop_checked`, by
    name: to be set on a subclass of ``cls``."""
    return {name: loop_checked(getattr(cls, name)) for name in dir(cls)
            if _async_unsafe_parts(getattr(cls, name, None)) is not None}


__all__ = ["UnraisedLoopLocal", "connection_lookups_unraised", "loop_checked", "loop_checked_methods"]
