"""evalsite/prepared_statements.py: statements sent through ``statement_cursor`` are prepared on
PostgreSQL and otherwise behave as Django's own cursor's (results, time zones, errors, the query log,
the metrics); elsewhere, and with ATELIER_DB_PREPARED_STATEMENTS off, nothing is prepared."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from evalsite.prepared_statements import preparing_enabled, statement_cursor
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.conftest import require_service
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

MARKED = "SELECT %s::bigint + 1 AS prepared_statement_probe"


def _prepared_texts() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_a_statement_through_it_is_prepared_on_postgresql_and_a_plain_cursors_is_not():
    require_service("postgres")
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::bigint + 2 AS plain_statement_probe", [1])
    with statement_cursor(connection) as cursor:
        cursor.execute(MARKED, [41])
        assert cursor.fetchone() == (42,)
    texts = _prepared_texts()
    assert any("prepared_statement_probe" in text for text in texts)
    assert not any("plain_statement_probe" in text for text in texts)


def test_it_prepares_nothing_when_the_setting_is_off(settings):
    require_service("postgres")
    settings.ATELIER_DB_PREPARED_STATEMENTS = False
    assert not preparing_enabled(connection)
    with statement_cursor(connection) as cursor:
        cursor.execute("SELECT %s::bigint + 3 AS switched_off_probe", [1])
        assert cursor.fetchone() == (4,)
    assert not any("switched_off_probe" in text for text in _prepared_texts())


def test_its_timestamps_come_back_aware_and_equal_to_django_cursors():
    moment = datetime(2026, 12, 3, 17, 5, 9, 123456, tzinfo=timezone.utc)
    sql = "SELECT CAST(%s AS timestamp with time zone)" if connection.vendor == "postgresql" else "SELECT %s"
    with connection.cursor() as cursor:
        cursor.execute(sql, [moment])
        plain = cursor.fetchone()[0]
    with statement_cursor(connection) as cursor:
        cursor.execute(sql, [moment])
        prepared = cursor.fetchone()[0]
    assert prepared == plain
    if connection.vendor == "postgresql":
        assert prepared == moment and prepared.utcoffset() is not None


def test_a_constraint_it_breaks_is_djangos_integrity_error_and_the_statement_runs_again_after():
    UserFactory(username="taken")
    insert = "INSERT INTO auth_user (username, password, is_superuser, first_name, last_name, email, is_staff, " \
             "is_active, date_joined) VALUES (%s, '!', false, '', '', '', false, true, %s)"
    now = datetime.now(timezone.utc)
    with pytest.raises(IntegrityError), transaction.atomic(), statement_cursor(connection) as cursor:
        cursor.execute(insert, ["taken", now])
    with transaction.atomic(), statement_cursor(connection) as cursor:
        cursor.execute(insert, ["free", now])
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM auth_user WHERE username IN ('taken', 'free')")
        assert cursor.fetchone() == (2,)


def test_djangos_query_log_records_its_statements():
    with CaptureQueriesContext(connection) as captured:
        with statement_cursor(connection) as cursor:
            cursor.execute("SELECT %s + 1 AS logged_probe", [1])
            cursor.fetchone()
            cursor.execute("SELECT %s + 1 AS logged_probe", [2])  # the second run is the prepared one
            cursor.fetchone()
    logged = [query["sql"] for query in captured.captured_queries]
    assert len(logged) == 2 and all(sql and "logged_probe" in sql for sql in logged)


def test_django_prometheus_counts_its_statements():
    require_service("postgres")
    from django_prometheus.db.metrics import execute_total

    counter = execute_total.labels(connection.alias, connection.vendor)
    before = counter._value.get()
    with statement_cursor(connection) as cursor:
        cursor.execute("SELECT 1 AS counted_probe")
    assert counter._value.get() == before + 1


def test_next_item_and_submit_prepare_their_statements_on_postgresql(client):
    require_service("postgres")
    alice, bob = annotators(2)
    campaign = pairwise_campaign(Catalogue(n_tasks=3), annotators=[alice, bob])
    assert client.login(username=alice.username, password=PASSWORD)
    response = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", {}, content_type="application/json")
    token = response.json()["assignment"]["token"]
    answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "time_on_item_ms": 900}
    response = client.post(f"/annotate/api/assignments/{token}/submit?next=1", answer, content_type="application/json")
    assert response.status_code == 201 and response.json()["assignment"]
    texts = " ".join(_prepared_texts())
    for table in ("django_session", "annotation_itemslot", "annotation_campaignprogress", "annotation_pairwiselabel",
                  "annotation_assignment", "annotation_item"):
        assert table in texts, table


def test_one_opened_inside_another_leaves_the_outer_statements_rows_alone():
    with statement_cursor(connection) as outer:
        outer.execute("SELECT 7 AS outer_probe UNION ALL SELECT 8")
        first = outer.fetchone()
        with statement_cursor(connection) as inner:
            inner.execute("SELECT %s + 100 AS inner_probe", [1])
            assert inner.fetchone() == (101,)
        assert (first, outer.fetchone()) == ((7,), (8,))


@pytest.mark.django_db(transaction=True)
def test_it_works_again_after_the_connection_is_closed_and_reopened():
    with statement_cursor(connection) as cursor:
        cursor.execute("SELECT %s + 1 AS reopened_probe", [1])
        assert cursor.fetchone() == (2,)
    connection.close()
    with statement_cursor(connection) as cursor:
        cursor.execute("SELECT %s + 1 AS reopened_probe", [2])
        assert cursor.fetchone() == (3,)


def _sample(metric, suffix: str, **labels) -> float:
    """The value of one of ``metric``'s samples (``suffix``: "_total", "_count", …) with these labels, 0 if none."""
    for family in metric.collect():
        for sample in family.samples:
            if sample.name.endswith(suffix) and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return 0.0


def test_its_statements_durations_and_errors_are_counted_as_django_prometheus_counts_them():
    require_service("postgres")
    from django_prometheus.db.metrics import errors_total, execute_total, query_duration_seconds

    series = {"alias": connection.alias, "vendor": connection.vendor}
    executed, timed = _sample(execute_total, "_total", **series), _sample(query_duration_seconds, "_count", **series)
    failed = _sample(errors_total, "_total", type="UndefinedTable", **series)
    with statement_cursor(connection) as cursor:
        cursor.execute("SELECT %s::int AS counted_twice_probe", [1])
        cursor.execute("SELECT %s::int AS counted_twice_probe", [2])
    assert _sample(execute_total, "_total", **series) == executed + 2
    assert _sample(query_duration_seconds, "_count", **series) == timed + 2
    # (in a savepoint of its own: the test's transaction goes on; the savepoint's statements are counted too)
    with pytest.raises(Exception), transaction.atomic(), statement_cursor(connection) as cursor:  # noqa: B017, PT011
        cursor.execute("SELECT * FROM no_such_table_probe WHERE id = %s", [1])
    assert _sample(errors_total, "_total", type="UndefinedTable", **series) == failed + 1


def test_counting_its_statements_looks_no_metric_labels_up_per_statement(monkeypatch):
    """Issue 30: django-prometheus's wrapper resolved ``labels(alias, vendor)`` of two metrics on every
    statement, a third of a prepared statement's client CPU; the labelled series are resolved once."""
    require_service("postgres")
    from django_prometheus.db.metrics import execute_total, query_duration_seconds

    with statement_cursor(connection) as cursor:  # the cursor class is made (and its series resolved) here
        cursor.execute("SELECT 1 AS resolved_once_probe")
    looked_up = []
    for metric in (execute_total, query_duration_seconds):
        resolve = metric.labels
        monkeypatch.setattr(metric, "labels", lambda *a, _resolve=resolve, **k: looked_up.append(a) or _resolve(*a, **k))
    with statement_cursor(connection) as cursor:
        for n in range(3):
            cursor.execute("SELECT %s::int AS resolved_once_probe", [n])
    assert looked_up == []
