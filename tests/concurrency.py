"""Calls made at the same instant from threads, each with its own database connection (the race tests of
imports and creations on PostgreSQL)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connection


def run_at_once(calls: Sequence[Callable[[], Any]], *, timeout: float = 120.0) -> list[Any]:
    """Run each call in its own thread, all released together by a barrier; returns, in the order they
    finished, what each returned or the exception it raised. Fails the test if a call hangs."""
    barrier = threading.Barrier(len(calls))
    outcomes: list[Any] = []

    def work(call: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=30)
            outcomes.append(call())
        except BaseException as exc:  # noqa: BLE001 — reported by the test
            outcomes.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(t.is_alive() for t in threads), "a call made at the same instant hung"
    return outcomes


def raised(outcomes: Sequence[Any]) -> list[BaseException]:
    """The exceptions among :func:`run_at_once`'s outcomes."""
    return [o for o in outcomes if isinstance(o, BaseException)]
