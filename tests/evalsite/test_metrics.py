"""evalsite/metrics.py: /metrics for operators only, with django-prometheus's and the site's own metrics."""

from __future__ import annotations

import pytest

from engine.providers.observers import CallOutcome, notify_call
from tests.factories import TaskSetFactory

pytestmark = pytest.mark.django_db


def test_metrics_answer_loopback_with_the_sites_own_metrics(client):
    from leaderboard.ekphrasis.models import JudgeRun

    JudgeRun.objects.create(task_set=TaskSetFactory(), judge_name="simulated", status=JudgeRun.Status.FAILED)
    client.get("/healthz")  # one request for django-prometheus to count
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1")
    text = response.content.decode()
    assert response.status_code == 200
    assert 'atelier_runs{protocol="judge",status="failed"} 1.0' in text
    assert "django_http_requests_total_by_method_total" in text
    assert "django_db_execute_total" in text or "django_db_new_connections_total" in text
    for name in ("atelier_campaign_labels_last_minute", "atelier_campaign_open_assignments", "atelier_sandbox_runs"):
        assert f"# TYPE {name} gauge" in text


def test_metrics_refuse_a_non_loopback_request_without_the_token(client, settings):
    settings.ATELIER_METRICS_TOKEN = "s3cret-token"
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.7").status_code == 404
    wrong = client.get("/metrics", REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION="Bearer nope")
    assert wrong.status_code == 404
    right = client.get("/metrics", REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION="Bearer s3cret-token")
    assert right.status_code == 200 and b"atelier_runs" in right.content


def test_metrics_refuse_everyone_but_loopback_when_no_token_is_configured(client, settings):
    settings.ATELIER_METRICS_TOKEN = ""
    assert client.get("/metrics", REMOTE_ADDR="10.0.0.5", HTTP_AUTHORIZATION="Bearer ").status_code == 404


def test_behind_a_proxy_the_clients_address_is_judged_not_the_proxys(client, settings):
    settings.ATELIER_BEHIND_PROXY = True
    forwarded = client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.4")
    assert forwarded.status_code == 404


def test_provider_calls_are_counted_per_model_with_retries_and_cost(client):
    notify_call(CallOutcome(model="metrics-test-model", ok=True, cached=False, attempts=3, latency_s=0.4, cost_usd=0.25))
    notify_call(CallOutcome(model="metrics-test-model", ok=False, cached=False, attempts=6, latency_s=2.0, status=503))
    text = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    assert 'atelier_provider_calls_total{model="metrics-test-model",outcome="ok"} 1.0' in text
    assert 'atelier_provider_calls_total{model="metrics-test-model",outcome="failed"} 1.0' in text
    assert 'atelier_provider_retries_total{model="metrics-test-model"} 7.0' in text
    assert 'atelier_provider_cost_usd_total{model="metrics-test-model"} 0.25' in text
    assert 'atelier_provider_call_seconds_count{model="metrics-test-model"} 2.0' in text
