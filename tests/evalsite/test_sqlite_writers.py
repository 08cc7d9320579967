"""SQLite (the embedded default): two writers at once — a page starting a run while a run started in
this process writes its work — wait for each other instead of failing with "database is locked"."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction

from leaderboard.models import Benchmark

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_transaction_that_reads_before_it_writes_waits_for_another_writer_instead_of_failing():
    if connection.vendor != "sqlite":
        pytest.skip("a SQLite lock rule: PostgreSQL's row locks wait anyway")
    writing, finish, outcome = threading.Event(), threading.Event(), {}

    def other_writer() -> None:
        try:
            with transaction.atomic():
                Benchmark.objects.create(kind="easel", name="written by the other thread")
                writing.set()
                finish.wait(5)
            outcome["other"] = "committed"
        except Exception as exc:  # noqa: BLE001 — the outcome is what the test reads
            outcome["other"] = repr(exc)
        finally:
            writing.set()
            connections.close_all()

    thread = threading.Thread(target=other_writer)
    thread.start()
    writing.wait(5)
    threading.Timer(0.3, finish.set).start()
    try:
        with transaction.atomic():
            Benchmark.objects.count()  # a read first, as a service reads before it writes
            Benchmark.objects.create(kind="c2", name="written here")
        outcome["here"] = "committed"
    except Exception as exc:  # noqa: BLE001
        outcome["here"] = repr(exc)
    finally:
        finish.set()
        thread.join(10)
    assert outcome == {"other": "committed", "here": "committed"}
    assert Benchmark.objects.filter(name__startswith="written").count() == 2
