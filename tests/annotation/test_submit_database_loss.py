"""The database connection dying in the middle of a label submit (issue 28's audit, on real PostgreSQL):
the annotator gets a clear, retryable 503, no half-written label survives, and a retry with the same
idempotency key stores exactly one label — for the plain submit and for the combined submit-and-next.

The connection is killed the way a PostgreSQL restart or a failover kills it: another connection calls
``pg_terminate_backend`` on the request's backend right after the request's statement ran."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import psycopg
import pytest
from django.db import close_old_connections, connection
from django.test import Client

from annotation.label_models import PairwiseLabel
from annotation.models import Assignment
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.conftest import require_service
from tests.factories import PASSWORD

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

LABELS = PairwiseLabel._meta.db_table
ASSIGNMENTS = Assignment._meta.db_table


def _dsn() -> str:
    db = connection.settings_dict
    return (f"host={db['HOST'] or '127.0.0.1'} port={db['PORT'] or 5432} dbname={db['NAME']} "
            f"user={db['USER'] or 'postgres'} password={db['PASSWORD'] or ''}")


def _terminate(pid: int) -> None:
    with psycopg.connect(_dsn(), autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])


class KillAfter:
    """Terminates this connection's backend once, right after the first statement ``matches`` accepts."""

    def __init__(self, matches: Callable[[str], bool]):
        self.matches, self.fired = matches, False

    def __call__(self, execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not self.fired and self.matches(sql):
            self.fired = True
            _terminate(context["connection"].connection.info.backend_pid)
        return result


def _inserts_the_label(sql: str) -> bool:
    # its own INSERT, or a part of the statement that moves the progress counters with it (PostgreSQL)
    return f'INSERT INTO "{LABELS}"' in sql


def _takes_the_next_item(sql: str) -> bool:
    # the next item is taken after the label's own transaction committed: the assignment handed out next
    return sql.startswith(f'INSERT INTO "{ASSIGNMENTS}"') or (sql.startswith(f'UPDATE "{ASSIGNMENTS}"')
                                                               and "annotator_id" in sql)


@pytest.fixture
def annotator_at_work():
    require_service("postgres")
    (ann,) = annotators(1, prefix="lost")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[ann], n_items=2)
    client = Client(raise_request_exception=False)  # the site's own answer, as a browser gets it
    assert client.login(username=ann.username, password=PASSWORD)
    token = client.post(f"/annotate/api/campaigns/{campaign.pk}/next",
                        content_type="application/json").json()["assignment"]["token"]
    return client, token


def _submit(client: Client, token: str, key: uuid.UUID, *, and_next: bool, kill: KillAfter | None = None):
    # Each request starts as Django's handler starts one (the test client skips it): a connection that
    # broke is closed and the next query reconnects.
    close_old_connections()
    url = f"/annotate/api/assignments/{token}/submit" + ("?next=1" if and_next else "")
    body = {"idempotency_key": str(key), "answer": {"choice": "A"}, "time_on_item_ms": 900}
    if kill is None:
        return client.post(url, body, content_type="application/json")
    with connection.execute_wrapper(kill):
        response = client.post(url, body, content_type="application/json")
    assert kill.fired, "the connection was never killed: the statement to kill after did not run"
    return response


def _labels(token: str) -> int:
    close_old_connections()
    return PairwiseLabel.objects.filter(assignment__token=token).count()


def _assert_retryable(response) -> None:
    assert response.status_code == 503, response.content[:300]
    assert response["Retry-After"] and response["Content-Type"] == "application/json"
    assert "Try again" in response.json()["detail"]


@pytest.mark.parametrize("and_next", [False, True], ids=["submit", "submit_and_next"])
def test_a_connection_killed_while_the_label_is_written_is_a_retryable_503_and_the_retry_stores_one_label(
        annotator_at_work, and_next):
    client, token = annotator_at_work
    key = uuid.uuid4()
    _assert_retryable(_submit(client, token, key, and_next=and_next, kill=KillAfter(_inserts_the_label)))
    assert _labels(token) == 0  # the half-written label went with its transaction
    assert Assignment.objects.get(token=token).status == Assignment.Status.ACTIVE
    retried = _submit(client, token, key, and_next=and_next)
    assert (retried.status_code, retried.json()["replayed"]) == (201, False)
    assert _submit(client, token, key, and_next=and_next).json()["replayed"] is True
    assert _labels(token) == 1
    if and_next:
        assert retried.json()["assignment"]["token"] != token


def test_a_connection_killed_while_the_next_item_is_taken_keeps_the_label_and_the_retry_replays_it(
        annotator_at_work):
    client, token = annotator_at_work
    key = uuid.uuid4()
    _assert_retryable(_submit(client, token, key, and_next=True, kill=KillAfter(_takes_the_next_item)))
    assert _labels(token) == 1  # committed before the take began
    retried = _submit(client, token, key, and_next=True)
    assert (retried.status_code, retried.json()["replayed"]) == (200, True)
    assert retried.json()["assignment"]["token"] != token
    assert _labels(token) == 1
    held = Assignment.objects.filter(annotator__username__startswith="lost", status=Assignment.Status.ACTIVE)
    assert held.count() == 1  # the retry handed out one next item, not a second
