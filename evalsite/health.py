"""Liveness (``/healthz``) and readiness (``/readyz``) of the site, on django-health-check.

``/healthz`` says only that the process answers: no database, no cache, nothing that can hang.
``/readyz`` runs the checks below concurrently (the library's view, one thread per blocking check) and
answers JSON naming each check with its latency; HTTP 503 when any fails::

    {"status": "ok", "checks": {"database": {"ok": true, "latency_ms": 1.2}, ...}}

The checks are cheap by construction, because a load balancer asks every few seconds:

* database: ``SELECT 1`` on a connection of its own opened with a one-second connect timeout and a
  one-second statement timeout (PostgreSQL), so the page turns 503 within about a second of the
  database going away (refused connections) or about two of it falling silent (libpq waits at least
  2 s to connect), instead of waiting for TCP; and the migration plan is empty (the applied set is
  one query; the graph on disk is read once per process);
* cache: Redis answers ``PING``, only when a shared cache (``ATELIER_CACHE_URL``) is configured;
* broker: open and close a connection, only when ``CELERY_BROKER_URL`` is set;
* workers: at least one Celery worker answers ``ping`` within half a second; a success is remembered
  for :data:`WORKER_ANSWER_TTL_S` seconds, so a page asked often does not broadcast every time;
* media and var: a file can be created and removed in ``MEDIA_ROOT`` and ``VAR_DIR``.

A service that accepts connections and then says nothing (a stopped process behind a live port, a
network partition) is the case that must stay fast: the cache, broker and worker probes use clients
with one-second socket timeouts of their own, and the view does not wait for a check's thread once
the library has given up on it, so the answer comes within the library's bound (timeout + 1 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import logging
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpResponse, JsonResponse
from health_check.base import HealthCheck
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView

__all__ = ["ReadinessView", "healthz", "readiness_checks"]

logger = logging.getLogger(__name__)

#: How long one check may take before it counts as failed (seconds).
CHECK_TIMEOUT = datetime.timedelta(seconds=1)
#: The socket timeouts of the cache, broker and worker probes' own clients (seconds).
PROBE_SOCKET_TIMEOUT_S = 1.0
#: How long a worker's answer to ``ping`` is believed (seconds).
WORKER_ANSWER_TTL_S = 5.0


def healthz(request) -> HttpResponse:
    """Liveness: the process answers. Touches nothing else (a dead database is /readyz's business)."""
    return HttpResponse("ok", content_type="text/plain")


def _probe_settings(settings_dict: dict) -> dict:
    """The database settings with short timeouts, for the probe's own connection only."""
    options = dict(settings_dict.get("OPTIONS") or {})
    if settings_dict["ENGINE"].endswith("postgresql"):
        options["connect_timeout"] = 1  # libpq's minimum is 2 s in effect for some versions; 1 asks for it
        options["options"] = "-c statement_timeout=1000"
    elif settings_dict["ENGINE"].endswith("sqlite3"):
        options["timeout"] = 1
    return {**settings_dict, "OPTIONS": options, "CONN_MAX_AGE": 0}


@dataclasses.dataclass
class DatabaseReady(HealthCheck):
    """The database answers ``SELECT 1`` and every migration on disk is applied."""

    alias: str = "default"
    timeout: datetime.timedelta = dataclasses.field(default=CHECK_TIMEOUT, repr=False)

    def run(self) -> None:
        connection = connections.create_connection(self.alias)  # this probe's own, never the request's
        connection.settings_dict = _probe_settings(connection.settings_dict)
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                if cursor.fetchone() != (1,):
                    raise ServiceUnavailable("SELECT 1 did not answer 1")
            plan = MigrationExecutor(connection).migration_plan(_leaf_nodes())
        except DatabaseError as exc:
            raise ServiceUnavailable(f"database unreachable ({type(exc).__name__})") from exc
        finally:
            connection.close()
        if plan:
            raise ServiceUnavailable(f"{len(plan)} migration(s) not applied, first {plan[0][0].app_label}."
                                     f"{plan[0][0].name}")


_LEAVES: list = []


def _leaf_nodes() -> list:
    """The migration graph's leaves, read from disk once per process (the code does not change under it)."""
    if not _LEAVES:
        from django.db.migrations.loader import MigrationLoader

        _LEAVES.extend(MigrationLoader(None, ignore_no_migrations=True).graph.leaf_nodes())
    return _LEAVES


@dataclasses.dataclass
class CacheReady(HealthCheck):
    """The shared cache's Redis answers ``PING``, asked by a client of the probe's own with socket timeouts
    (Django's cache client has none: against a Redis that accepts and never answers it waits forever)."""

    timeout: datetime.timedelta = dataclasses.field(default=CHECK_TIMEOUT, repr=False)

    def run(self) -> None:
        import redis

        try:
            client = redis.Redis.from_url(settings.ATELIER_CACHE_URL, socket_timeout=PROBE_SOCKET_TIMEOUT_S,
                                          socket_connect_timeout=PROBE_SOCKET_TIMEOUT_S)
            try:
                client.ping()
            finally:
                client.close()
        except redis.RedisError as exc:
            raise ServiceUnavailable(f"cache unreachable ({type(exc).__name__})") from exc


def _probe_connection():
    """A broker connection with socket timeouts (the site's own has none, so that a worker's blocking read
    is not cut short)."""
    from evalsite.celery import app

    return app.connection_for_write(transport_options={"socket_timeout": PROBE_SOCKET_TIMEOUT_S,
                                                       "socket_connect_timeout": PROBE_SOCKET_TIMEOUT_S})


@dataclasses.dataclass
class BrokerReady(HealthCheck):
    """A connection to the Celery broker opens."""

    timeout: datetime.timedelta = dataclasses.field(default=CHECK_TIMEOUT, repr=False)

    def run(self) -> None:
        try:
            with _probe_connection() as conn:
                conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=1)
        except Exception as exc:  # kombu raises the transport's own errors (redis, socket, OperationalError)
            raise ServiceUnavailable(f"broker unreachable ({type(exc).__name__})") from exc


_worker_answer = {"at": 0.0}
_worker_lock = threading.Lock()


@dataclasses.dataclass
class WorkersAnswer(HealthCheck):
    """At least one Celery worker answers ``ping`` (a success is remembered for a few seconds)."""

    timeout: datetime.timedelta = dataclasses.field(default=CHECK_TIMEOUT, repr=False)

    def run(self) -> None:
        if time.monotonic() - _worker_answer["at"] < WORKER_ANSWER_TTL_S:
            return
        from evalsite.celery import app

        with _worker_lock, _probe_connection() as conn:
            try:
                answers = app.control.ping(timeout=0.5, connection=conn)
            except Exception as exc:  # the broker's own errors; BrokerReady names the cause
                raise ServiceUnavailable(f"workers not reachable ({type(exc).__name__})") from exc
            if not answers:
                raise ServiceUnavailable("no Celery worker answered ping within 0.5 s")
            _worker_answer["at"] = time.monotonic()


@dataclasses.dataclass
class FolderWritable(HealthCheck):
    """A file can be created and removed in the folder (media uploads, the SQLite file, caches)."""

    path: str = ""
    timeout: datetime.timedelta = dataclasses.field(default=CHECK_TIMEOUT, repr=False)

    def run(self) -> None:
        folder = Path(self.path)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".readyz-") as probe:
                probe.write(b"ok")
                probe.flush()
                os.fsync(probe.fileno())
        except OSError as exc:
            # /readyz is public: the answer names the check (media, var), the log names the folder
            logger.warning("readiness: %s is not writable: %s", folder, exc)
            raise ServiceUnavailable(f"not writable ({exc.strerror or type(exc).__name__})") from exc


def readiness_checks() -> list[tuple[str, HealthCheck]]:
    """The checks of /readyz for this deployment's configuration, each with the name it is shown under."""
    checks: list[tuple[str, HealthCheck]] = [("database", DatabaseReady())]
    if settings.ATELIER_CACHE_URL:
        checks.append(("cache", CacheReady()))
    if settings.CELERY_BROKER_URL:
        checks.append(("broker", BrokerReady()))
        checks.append(("workers", WorkersAnswer()))
    checks.append(("media", FolderWritable(path=str(settings.MEDIA_ROOT))))
    checks.append(("var", FolderWritable(path=str(settings.VAR_DIR))))
    return checks


class ReadinessView(HealthCheckView):
    """The library's view (checks run concurrently, each bounded by its timeout), answered as our JSON."""

    def get_checks(self):
        self._names = readiness_checks()
        return [check for _, check in self._names]

    @contextlib.contextmanager
    def get_executor(self) -> Iterator[ThreadPoolExecutor]:
        # The library's default is the event loop's executor, whose shutdown at the end of the request
        # joins every thread: one check hung on a silent service held the answer as long as it hung.
        # A timed-out check's thread cannot be stopped; it is left to end on its own socket timeout.
        executor = ThreadPoolExecutor(max_workers=8, thread_name_prefix="readyz")
        try:
            yield executor
        finally:
            executor.shutdown(wait=False, cancel_futures=True)

    async def get(self, request, *args, **kwargs):
        with self.get_executor() as executor:
            self.results = await asyncio.gather(*(check.get_result(executor) for check in self.get_checks()))
        checks = {}
        for (name, _), result in zip(self._names, self.results, strict=True):
            entry = {"ok": result.error is None, "latency_ms": round(result.time_taken * 1000, 1)}
            if result.error is not None:
                entry["error"] = result.error.message
            checks[name] = entry
        ok = all(entry["ok"] for entry in checks.values())
        response = JsonResponse({"status": "ok" if ok else "unavailable", "checks": checks}, status=200 if ok else 503)
        if not ok:
            response["Retry-After"] = "5"
        return response
