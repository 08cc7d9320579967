"""Query counts of the two busiest requests (next item, submit): they must not grow with the labels a
campaign already has (no N+1). Counts, not times: speed belongs in tests/benchmarks."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.factories import PASSWORD

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
