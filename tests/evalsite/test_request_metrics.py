"""The request metrics' middlewares (evalsite/request_metrics.py) count what django-prometheus's own count."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest
from django_prometheus.middleware import PrometheusAfterMiddleware, PrometheusBeforeMiddleware
from django_prometheus.utils import PowersOf
from prometheus_client import REGISTRY, CollectorRegistry, Histogram
from prometheus_client import Counter as PromCounter

from evalsite.request_metrics import CountedBeforeMiddleware, SeriesKeptAfterMiddleware, Tally
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

OURS = "evalsite.request_metrics.SeriesKeptAfterMiddleware"
THEIRS = "django_prometheus.middleware.PrometheusAfterMiddleware"
OURS_BEFORE = "evalsite.request_metrics.CountedBeforeMiddleware"
THEIRS_BEFORE = "django_prometheus.middleware.PrometheusBeforeMiddleware"


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
    assert settings.MIDDLEWARE[0] == OURS_BEFORE and issubclass(CountedBeforeMiddleware, PrometheusBeforeMiddleware)


def test_the_kept_series_count_what_django_prometheus_counts(client, settings):
    alice, bob = annotators(2)
    campaign = pairwise_campaign(Catalogue(n_tasks=4), annotators=[alice, bob])
    assert client.login(username=alice.username, password=PASSWORD)
    ours = _requests(client, campaign)
    assert type(client.handler._middleware_chain.__wrapped__) is CountedBeforeMiddleware
    settings.MIDDLEWARE = [{OURS: THEIRS, OURS_BEFORE: THEIRS_BEFORE}.get(m, m) for m in settings.MIDDLEWARE]
    client.handler.load_middleware()  # the client built its chain at its first request: built again, theirs
    assert type(client.handler._middleware_chain.__wrapped__) is PrometheusBeforeMiddleware
    theirs = _requests(client, campaign)
    assert ours == theirs
    statuses = {dict(labels)["status"] for name, labels in ours
                if name == "django_http_responses_total_by_status_view_method_total"}
    assert statuses == {"200", "201", "404"}
    assert sum(v for (name, _), v in ours.items() if name == "django_http_requests_total_by_method_total") == 7


@pytest.mark.parametrize("buckets", [PowersOf(2, 30), Histogram.DEFAULT_BUCKETS, (0.01, 0.025, 0.05, 0.1, 1.0)])
def test_a_tally_fills_the_buckets_histogram_observe_fills(buckets):
    """Every amount, on a bound, between two, below the first, past the last, zero, negative, NaN and
    infinite: the same buckets and sum as ``Histogram.observe``'s own walk (the oracle)."""
    registry = CollectorRegistry()
    theirs = Histogram("theirs", "oracle", buckets=buckets, registry=registry)
    ours = Histogram("ours", "tallied", buckets=buckets, registry=registry)
    tally = Tally(ours)
    bounds = [float(b) for b in buckets]
    amounts = [*bounds, *(b + 0.5 for b in bounds), *(b - 1e-9 for b in bounds), 0, 0.0, -3, 7, 123456789,
               2 ** 40, float("inf"), float("nan"), 1e-12]
    for amount in amounts:
        theirs.observe(amount)
        tally.observe(amount)
    def counts(h):
        return [(s.name.removeprefix(h._name), s.labels, s.value) for s in h.collect()[0].samples
                if not s.name.endswith("_created") and not s.name.endswith("_sum")]
    assert counts(ours) == counts(theirs)
    assert repr(ours._sum.get()) == repr(theirs._sum.get())


def test_a_tally_counts_what_counter_inc_counts():
    registry = CollectorRegistry()
    theirs = PromCounter("theirs", "oracle", ["view"], registry=registry)
    ours = PromCounter("ours", "tallied", ["view"], registry=registry)
    tally = Tally(ours.labels(view="a"))
    for amount in (1, 1, 2.5, 0):
        theirs.labels(view="a").inc(amount)
        tally.inc(amount)
    assert ours.labels(view="a")._value.get() == theirs.labels(view="a")._value.get() == 4.5
    with pytest.raises(ValueError):
        tally.inc(-1)
    with pytest.raises(ValueError):  # a labelled metric's parent has no value of its own, as inc() says
        Tally(ours)
