"""The request metrics' middleware that keeps its labelled series counts what django-prometheus's own counts."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest
from django_prometheus.middleware import PrometheusAfterMiddleware
from prometheus_client import REGISTRY

from evalsite.request_metrics import SeriesKeptAfterMiddleware
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

OURS = "evalsite.request_metrics.SeriesKeptAfterMiddleware"
THEIRS = "django_prometheus.middleware.PrometheusAfterMiddleware"


def _samples() -> Counter:
    """Every request sample of django-prometheus's middleware but the latencies' buckets and sums (times)."""
    counted = Counter()
    for metric in REGISTRY.collect():
        if not metric.name.startswith("django_http_"):
            continue
        for sample in metric.samples:
            if "latency" in sample.name and not sample.name.endswith("_count"):
                continue
            if sample.name.endswith("_created"):
                continue
            counted[(sample.name, tuple(sorted(sample.labels.items())))] += sample.value
    return counted


def _requests(client, campaign) -> Counter:
    """An annotator's labels (next item, submit-and-next), a 404 from the API and a progress read."""
    before = _samples()
    token = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", {"progress": False},
                        content_type="application/json").json()["assignment"]["token"]
    for _ in range(2):  # the second time through the kept series
        answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "time_on_item_ms": 900}
        response = client.post(f"/annotate/api/assignments/{token}/submit?next=1", answer,
                               content_type="application/json")
        assert response.status_code == 201
        token = response.json()["assignment"]["token"]
        assert client.post("/annotate/api/assignments/no-such-token/submit", answer,
                           content_type="application/json").status_code == 404
        assert client.get(f"/annotate/api/campaigns/{campaign.pk}/progress",
                          HTTP_X_REQUESTED_WITH="XMLHttpRequest").status_code == 200
    after = _samples()
    return Counter({key: after[key] - before.get(key, 0) for key in after if after[key] != before.get(key, 0)})


def test_the_site_counts_requests_with_the_kept_series_middleware(settings):
    assert settings.MIDDLEWARE[-1] == OURS and issubclass(SeriesKeptAfterMiddleware, PrometheusAfterMiddleware)


def test_the_kept_series_count_what_django_prometheus_counts(client, settings):
    alice, bob = annotators(2)
    campaign = pairwise_campaign(Catalogue(n_tasks=4), annotators=[alice, bob])
    assert client.login(username=alice.username, password=PASSWORD)
    ours = _requests(client, campaign)
    settings.MIDDLEWARE = [THEIRS if m == OURS else m for m in settings.MIDDLEWARE]
    theirs = _requests(client, campaign)
    assert ours == theirs
    statuses = {dict(labels)["status"] for name, labels in ours
                if name == "django_http_responses_total_by_status_view_method_total"}
    assert statuses == {"200", "201", "404"}
    assert sum(v for (name, _), v in ours.items() if name == "django_http_requests_total_by_method_total") == 7
