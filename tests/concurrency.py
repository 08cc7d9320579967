"""Calls made at the same instant from threads, each with its own database connection (the race tests of
imports and creations on PostgreSQL)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connection


def run_at_once(calls: Sequence[Callable[[], Any]], *, timeout: float = 120.0) -> list[Any]:
    """Run each call in its own thread, all released together by a barrier; returns, in the order they
    finished, what each returned or the exception it raised. Fails the test if a call hangs."""
    barrier = threading.Barrier(len(calls))
    outcomes: list[Any] = []
    threads = _threads(calls, outcomes, before=lambda: barrier.wait(timeout=30))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(t.is_alive() for t in threads), "a call made at the same instant hung"
    return outcomes


def _threads(calls: Sequence[Callable[[], Any]], outcomes: list[Any], *,
             before: Callable[[], Any] = lambda: None) -> list[threading.Thread]:
    """A thread per call (not started) that appends what the call returned or raised to ``outcomes`` and
    closes its own database connection."""

    def work(call: Callable[[], Any]) -> None:
        try:
            before()
            outcomes.append(call())
        except BaseException as exc:  # noqa: BLE001 — reported by the test
            outcomes.append(exc)
        finally:
            connection.close()

    return [threading.Thread(target=work, args=(call,)) for call in calls]


def raised(outcomes: Sequence[Any]) -> list[BaseException]:
    """The exceptions among :func:`run_at_once`'s outcomes."""
    return [o for o in outcomes if isinstance(o, BaseException)]


def run_while_row_held(calls: Sequence[Callable[[], Any]], model, pk: int, *, timeout: float = 120.0) -> list[Any]:
    """Run each call in its own thread (its own connection) while this thread holds ``model`` row ``pk``
    locked, and release the row only once every call waits for it: each call has then done all it does
    before it touches the row, and none has committed. What they do afterwards is serialised by the row
    lock, in an order the test does not choose. PostgreSQL only (it reads ``pg_stat_activity``)."""
    from django.db import transaction

    outcomes: list[Any] = []
    threads = _threads(calls, outcomes)
    with transaction.atomic():
        list(model.objects.select_for_update().filter(pk=pk).values_list("pk", flat=True))
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + timeout
        while _lock_waiters() < len(calls):
            assert not outcomes, f"a call finished without touching the row: {outcomes}"
            assert time.monotonic() < deadline, "the calls never all waited for the row"
            time.sleep(0.05)
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(t.is_alive() for t in threads), "a call hung after the row was released"
    return outcomes


def _lock_waiters() -> int:
    """How many other sessions of this test database wait for a lock."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # else a transaction reads its first snapshot again
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'")
        return cursor.fetchone()[0]
