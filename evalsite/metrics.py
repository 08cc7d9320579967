"""Prometheus metrics at ``/metrics``: django-prometheus's request, database and cache metrics plus the
site's own, for operators only (loopback, or ``Authorization: Bearer $ATELIER_METRICS_TOKEN``).

The site's own metrics come from two places:

* **computed at scrape time** from the database by :class:`SiteCollector` (a handful of grouped counts,
  cheap by the indexes they use), so they are right whichever process wrote the rows:
  ``atelier_campaign_labels_last_minute{campaign}``, ``atelier_campaign_open_assignments{campaign}``,
  ``atelier_runs{protocol,status}``, ``atelier_sandbox_runs{verdict}`` (C² samples graded in the
  sandbox) and ``atelier_queue_depth{queue}`` (Redis ``LLEN`` of the Celery queue, when the broker is Redis);
* **counted as they happen** from the engine's provider-call observer (``engine.providers.observers``):
  ``atelier_provider_calls_total{model,outcome}``, ``atelier_provider_retries_total{model}``,
  ``atelier_provider_call_seconds{model}`` and ``atelier_provider_cost_usd_total{model}``.

Several processes: with gunicorn's N workers (and Celery workers on the same host) each process has
its own counters. Set ``PROMETHEUS_MULTIPROC_DIR`` to one empty folder for all of them (gunicorn.conf.py
clears it at start and marks dead workers) and the scrape sums them (prometheus_client's multiprocess
mode); without it, a scrape shows the counters of the process that answered.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
from datetime import timedelta

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily

from engine.providers.observers import CallOutcome, add_call_observer

__all__ = ["SiteCollector", "metrics_access_allowed", "metrics_view", "observe_provider_calls"]

logger = logging.getLogger(__name__)

PROVIDER_CALLS = Counter("atelier_provider_calls", "Provider chat calls by outcome (ok, cached, failed).",
                         ["model", "outcome"])
PROVIDER_RETRIES = Counter("atelier_provider_retries", "Extra HTTP attempts of provider calls.", ["model"])
PROVIDER_SECONDS = Histogram("atelier_provider_call_seconds", "Wall time of a provider call, retries included.",
                             ["model"], buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300))
PROVIDER_COST = Counter("atelier_provider_cost_usd", "Provider cost in US dollars from configured prices.",
                        ["model"])


def _count_provider_call(outcome: CallOutcome) -> None:
    label = "cached" if outcome.cached else ("ok" if outcome.ok else "failed")
    PROVIDER_CALLS.labels(outcome.model, label).inc()
    if outcome.cached:
        return
    if outcome.attempts > 1:
        PROVIDER_RETRIES.labels(outcome.model).inc(outcome.attempts - 1)
    PROVIDER_SECONDS.labels(outcome.model).observe(outcome.latency_s)
    if outcome.cost_usd:
        PROVIDER_COST.labels(outcome.model).inc(outcome.cost_usd)


def observe_provider_calls() -> None:
    """Count every provider call of this process (called once from the app's ``ready``)."""
    add_call_observer(_count_provider_call)


class SiteCollector:
    """The site's gauges, read from the database (and Redis) when Prometheus scrapes."""

    def collect(self):
        from django.db.models import Count
        from django.utils import timezone

        from annotation.models import Assignment
        from leaderboard.c2.models import C2Run, C2Sample
        from leaderboard.easel.models import EaselRun
        from leaderboard.ekphrasis.models import JudgeRun

        now = timezone.now()
        labels = GaugeMetricFamily("atelier_campaign_labels_last_minute",
                                   "Labels submitted in the last 60 seconds, per campaign.", labels=["campaign"])
        for row in (Assignment.objects.filter(status=Assignment.Status.SUBMITTED, finished_at__gte=now - timedelta(minutes=1))
                    .values("campaign_id").annotate(n=Count("pk")).order_by()):
            labels.add_metric([str(row["campaign_id"])], row["n"])
        yield labels
        open_ = GaugeMetricFamily("atelier_campaign_open_assignments",
                                  "Items handed out and not yet submitted, skipped or expired, per campaign.",
                                  labels=["campaign"])
        for row in (Assignment.objects.filter(status=Assignment.Status.ACTIVE, expires_at__gt=now)
                    .values("campaign_id").annotate(n=Count("pk")).order_by()):
            open_.add_metric([str(row["campaign_id"])], row["n"])
        yield open_
        runs = GaugeMetricFamily("atelier_runs", "Automatic runs by protocol and status.", labels=["protocol", "status"])
        for protocol, model in (("judge", JudgeRun), ("easel", EaselRun), ("c2", C2Run)):
            for row in model.objects.values("status").annotate(n=Count("pk")).order_by():
                runs.add_metric([protocol, row["status"]], row["n"])
        yield runs
        sandbox = GaugeMetricFamily("atelier_sandbox_runs", "C² samples graded in the sandbox, by verdict.",
                                    labels=["verdict"])
        for row in C2Sample.objects.exclude(verdict="").values("verdict").annotate(n=Count("pk")).order_by():
            sandbox.add_metric([row["verdict"]], row["n"])
        yield sandbox
        depth = _queue_depth()
        if depth is not None:
            queue = GaugeMetricFamily("atelier_queue_depth", "Tasks waiting in the Celery queue.", labels=["queue"])
            queue.add_metric([settings.CELERY_TASK_DEFAULT_QUEUE], depth)
            yield queue


def _queue_depth() -> int | None:
    """``LLEN`` of the Celery queue on a Redis broker; None without one, or -1 when Redis does not answer."""
    url = settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://")):
        return None
    import redis

    try:
        client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
        try:
            return int(client.llen(settings.CELERY_TASK_DEFAULT_QUEUE))
        finally:
            client.close()
    except redis.RedisError:
        return -1


def metrics_access_allowed(request: HttpRequest) -> bool:
    """The one gatekeeper of /metrics: the configured token, or a request from this machine."""
    token = settings.ATELIER_METRICS_TOKEN
    sent = request.headers.get("Authorization", "")
    if token and sent.startswith("Bearer ") and hmac.compare_digest(sent[len("Bearer "):].encode(), token.encode()):
        return True
    if settings.ATELIER_BEHIND_PROXY:  # the proxy's own address is loopback: judge the client's
        from evalsite.proxy import client_address

        address = client_address(request)
    else:
        address = request.META.get("REMOTE_ADDR")
    try:
        return ipaddress.ip_address(address or "").is_loopback
    except ValueError:
        return False


def metrics_view(request: HttpRequest) -> HttpResponse:
    # 404, not 403: to anyone else the page does not exist. Plain text: no template, no session read.
    if not metrics_access_allowed(request):
        return HttpResponse("Not found\n", status=404, content_type="text/plain")
    site = CollectorRegistry(auto_describe=True)
    site.register(SiteCollector())
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        shared = CollectorRegistry()
        multiprocess.MultiProcessCollector(shared)
    else:
        shared = REGISTRY
    try:
        site_text = generate_latest(site)
    except Exception:  # the database is away: the process metrics still answer, the gap shows in them
        logger.warning("site metrics could not be read", exc_info=True)
        site_text = b""
    return HttpResponse(generate_latest(shared) + site_text, content_type=CONTENT_TYPE_LATEST)
