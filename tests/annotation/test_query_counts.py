"""Query counts of the two busiest requests (next item, submit): they must not grow with the labels a
campaign already has (no N+1); nor do the researcher's campaign list and the annotator's campaign cards
grow with the number of campaigns. Counts, not times: speed belongs in tests/benchmarks."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import annotator_reads, selectors
from annotation.models import Assignment, ItemSlot
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators, fill
from tests.conftest import require_service
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def _cycle(client, campaign, body: dict) -> tuple[int, int]:
    """One item fetched and submitted the way the page does it; (queries of next, of submit)."""
    with CaptureQueriesContext(connection) as fetched:
        response = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", body, content_type="application/json")
    token = response.json()["assignment"]["token"]
    answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "time_on_item_ms": 2000}
    with CaptureQueriesContext(connection) as submitted:
        response = client.post(f"/annotate/api/assignments/{token}/submit", answer, content_type="application/json")
    assert response.status_code == 201
    return len(fetched), len(submitted)


def test_next_and_submit_cost_the_same_queries_however_many_labels_exist(client):
    alice, bob = annotators(2)
    campaign = pairwise_campaign(Catalogue(n_tasks=4), annotators=[alice, bob])
    assert client.login(username=alice.username, password=PASSWORD)
    _cycle(client, campaign, {})  # the page's first request (with the progress bar)
    early = _cycle(client, campaign, {"progress": False})  # after a save the page asks without it
    for _ in range(6):
        _cycle(client, campaign, {"progress": False})
    late = _cycle(client, campaign, {"progress": False})
    assert late == early


def test_the_campaign_list_reads_the_counters_in_one_query():
    users = annotators(3)
    for _ in range(3):
        campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=users)
        fill(campaign, users[:1], lambda u, a: {"choice": "A"})
    with CaptureQueriesContext(connection) as queries:
        rows = selectors.campaign_list_rows()
    assert len(queries) == 1
    for row in rows:
        labels = Assignment.objects.filter(campaign=row["campaign"], status="submitted", slot__isnull=False).count()
        assert (row["labels"], row["total"]) == (labels, ItemSlot.objects.filter(campaign=row["campaign"]).count())


def test_an_annotators_campaign_cards_cost_the_same_queries_for_one_or_many_campaigns():
    users = annotators(1)
    pairwise_campaign(Catalogue(n_tasks=2), annotators=users)
    with CaptureQueriesContext(connection) as one:
        annotator_reads.campaigns_for_annotator(annotator=users[0])
    for _ in range(3):
        pairwise_campaign(Catalogue(n_tasks=2), annotators=users)
    with CaptureQueriesContext(connection) as four:
        cards = annotator_reads.campaigns_for_annotator(annotator=users[0])
    assert len(cards) == 4 and len(four) == len(one)


def test_the_campaign_list_page_costs_the_same_queries_for_one_or_four_campaigns(client):
    users = annotators(2)
    UserFactory(username="rhea", role="researcher")
    assert client.login(username="rhea", password=PASSWORD)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users)
    fill(campaign, users[:1], lambda u, a: {"choice": "A"})
    # The session's first request reads its user apart; the process then reads both in one (PostgreSQL).
    assert client.get("/annotate/campaigns/").status_code == 200
    with CaptureQueriesContext(connection) as one:
        assert client.get("/annotate/campaigns/").status_code == 200
    for _ in range(3):
        campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users)
        fill(campaign, users, lambda u, a: {"choice": "B"})
    with CaptureQueriesContext(connection) as four:
        response = client.get("/annotate/campaigns/")
    assert response.content.count(b"/annotate/campaigns/") >= 4 and len(four) == len(one)
#: Issue 16: one next-item or submit sends at most this many SQL statements on PostgreSQL, in one
#: transaction: transaction control (BEGIN, COMMIT) is counted apart, and there is no savepoint. Next
#: item: the session with its user (issue 30: one statement once the process has seen the session), the
#: request's facts under its row lock, the slot take with the item (issue 30), the assignment's INSERT;
#: submit: the session with its user, the assignment's update, the item, the counters with the label's
#: INSERT (issue 30).
POSTGRES_STATEMENTS = 4
#: SQLite has no data-modifying WITH: the held-item check, the slot's SELECT and UPDATE, the item, the two
#: counters and the label's INSERT are separate statements there.
SQLITE_STATEMENTS = 8
CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT")


def _statements(client, path: str, body: dict):
    """(response, the data statements the request sent, its transaction-control statements)."""
    with CaptureQueriesContext(connection) as captured:
        response = client.post(path, body, content_type="application/json")
    sql = [" ".join(q["sql"].split()) for q in captured.captured_queries]
    return response, [q for q in sql if not q.upper().startswith(CONTROL)], [q for q in sql if q.upper().startswith(CONTROL)]


def _pinned_cycle(client, limit: int) -> None:
    alice, bob = annotators(2)
    campaign = pairwise_campaign(Catalogue(n_tasks=4), annotators=[alice, bob])
    assert client.login(username=alice.username, password=PASSWORD)
    _cycle(client, campaign, {"progress": False})  # the first label makes the annotator's counter row
    response, fetched, fetched_control = _statements(client, f"/annotate/api/campaigns/{campaign.pk}/next",
                                                     {"progress": False})
    token = response.json()["assignment"]["token"]
    answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "B"}, "time_on_item_ms": 1500}
    response, submitted, submitted_control = _statements(client, f"/annotate/api/assignments/{token}/submit", answer)
    assert response.status_code == 201
    assert response.json()["progress"] == annotator_reads.campaign_progress(campaign=campaign, annotator=alice).as_dict()
    assert len(fetched) <= limit, "\n".join(fetched)
    assert len(submitted) <= limit, "\n".join(submitted)
    for control in (fetched_control, submitted_control):  # one transaction each, no savepoint
        assert [c.split()[0].upper() for c in control] in ([], ["BEGIN"], ["BEGIN", "COMMIT"]), control


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)  # one real transaction per request, as in production
def test_next_item_and_submit_send_at_most_four_statements_on_postgresql(client):
    require_service("postgres")
    _pinned_cycle(client, POSTGRES_STATEMENTS)


@pytest.mark.django_db(transaction=True)
def test_next_item_and_submit_statements_stay_pinned_on_sqlite(client):
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite figures")
    _pinned_cycle(client, SQLITE_STATEMENTS)


#: Issue 30: submit-and-next (…/submit?next=1) is a submit and a next-item in one request, so it reads the
#: session and the user once: one statement fewer than the two requests on PostgreSQL (where they are one
#: statement), two on SQLite, in two transactions (the submit's, committed first, then the take's), still
#: no savepoint.
COMBINED_POSTGRES_STATEMENTS = 2 * POSTGRES_STATEMENTS - 1
COMBINED_SQLITE_STATEMENTS = 2 * SQLITE_STATEMENTS - 2


def _pinned_combined(client, limit: int) -> None:
    alice, bob = annotators(2)
    campaign = pairwise_campaign(Catalogue(n_tasks=4), annotators=[alice, bob])
    assert client.login(username=alice.username, password=PASSWORD)
    _cycle(client, campaign, {"progress": False})  # the first label makes the annotator's counter row
    token = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", {"progress": False},
                        content_type="application/json").json()["assignment"]["token"]
    counts = []
    for _ in range(3):  # the same count every label, however many the campaign holds
        answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "time_on_item_ms": 900}
        response, sent, control = _statements(client, f"/annotate/api/assignments/{token}/submit?next=1", answer)
        assert response.status_code == 201
        body = response.json()
        assert body["progress"] == annotator_reads.campaign_progress(campaign=campaign, annotator=alice).as_dict()
        assert len(sent) <= limit, "\n".join(sent)
        assert [c.split()[0].upper() for c in control] in ([], ["BEGIN", "BEGIN"], ["BEGIN", "COMMIT", "BEGIN", "COMMIT"]), control
        counts.append(len(sent))
        token = body["assignment"]["token"]
    assert len(set(counts)) == 1, counts


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_submit_next_sends_one_statement_fewer_than_submit_and_next_on_postgresql(client):
    require_service("postgres")
    _pinned_combined(client, COMBINED_POSTGRES_STATEMENTS)


@pytest.mark.django_db(transaction=True)
def test_submit_next_statements_stay_pinned_on_sqlite(client):
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite figures")
    _pinned_combined(client, COMBINED_SQLITE_STATEMENTS)
