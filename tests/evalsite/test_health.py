"""evalsite/health.py: /healthz answers without the database, /readyz names each check with its latency."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from evalsite import health

pytestmark = pytest.mark.django_db(transaction=True)


def test_readyz_names_each_check_with_its_latency(client):
    response = client.get("/readyz")
    body = json.loads(response.content)
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert {"database", "media", "var"} <= set(body["checks"])
    for entry in body["checks"].values():
        assert entry["ok"] is True and entry["latency_ms"] >= 0


def test_readyz_is_503_when_the_database_cannot_be_reached(client, monkeypatch, tmp_path):
    unreachable = {**health.connections.settings["default"]}
    if unreachable["ENGINE"].endswith("sqlite3"):
        unreachable["NAME"] = str(tmp_path / "no-such-folder" / "db.sqlite3")
    else:
        unreachable.update(HOST="127.0.0.1", PORT="1")  # nothing listens on port 1
    monkeypatch.setitem(health.connections.settings, "default", unreachable)
    response = client.get("/readyz")
    body = json.loads(response.content)
    assert response.status_code == 503 and response["Retry-After"]
    assert body["status"] == "unavailable"
    assert body["checks"]["database"]["ok"] is False and "unreachable" in body["checks"]["database"]["error"]
    assert body["checks"]["media"]["ok"] is True


def test_readyz_is_503_when_media_is_not_writable(client, settings, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    settings.MEDIA_ROOT = blocker / "media"
    response = client.get("/readyz")
    body = json.loads(response.content)
    assert response.status_code == 503
    assert body["checks"]["media"]["ok"] is False and "not writable" in body["checks"]["media"]["error"]


def test_readyz_names_an_unwritable_folder_by_its_check_never_by_its_path(client, settings, tmp_path, caplog):
    # /readyz answers anyone: the server's folder layout belongs in its log, not in the public answer
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    settings.MEDIA_ROOT = blocker / "media"
    response = client.get("/readyz")
    assert response.status_code == 503
    assert str(tmp_path) not in response.content.decode()
    assert any(str(blocker) in record.getMessage() for record in caplog.records)


def test_readyz_checks_broker_and_workers_only_when_a_broker_is_configured(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    response = client.get("/readyz")
    body = json.loads(response.content)
    assert response.status_code == 503
    assert body["checks"]["broker"]["ok"] is False
    assert body["checks"]["workers"]["ok"] is False


def test_healthz_answers_without_touching_the_database(client, django_assert_num_queries):
    client.cookies["sessionid"] = "a-session-that-would-need-a-lookup"
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200 and response.content == b"ok"


#: /readyz's bound when a service hangs: the library waits a check's timeout (1 s) plus one second; the
#: rest is margin for a loaded machine.
HUNG_SERVICE_ANSWER_S = 3.5


@pytest.fixture
def silent_service():
    """A port that accepts connections and never answers (a stopped process behind a live port)."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
    listener.settimeout(0.1)
    held, done = [], threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    done.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


def _timed_readyz(client) -> tuple[float, int, dict]:
    started = time.monotonic()
    response = client.get("/readyz")
    return time.monotonic() - started, response.status_code, json.loads(response.content)


def test_readyz_answers_503_fast_when_the_broker_accepts_and_never_answers(client, settings, monkeypatch,
                                                                           silent_service):
    # before: the answer waited for the broker probe's thread, stuck in a read with no timeout, for as
    # long as the broker stayed silent
    from evalsite.celery import app

    settings.CELERY_BROKER_URL = f"redis://{silent_service}/0"
    monkeypatch.setitem(app.conf, "broker_url", settings.CELERY_BROKER_URL)
    monkeypatch.setitem(health._worker_answer, "at", 0.0)
    elapsed, status, body = _timed_readyz(client)
    assert status == 503 and body["checks"]["broker"]["ok"] is False, body
    assert body["checks"]["workers"]["ok"] is False and body["checks"]["database"]["ok"] is True
    assert elapsed < HUNG_SERVICE_ANSWER_S


def test_readyz_answers_503_fast_when_the_cache_accepts_and_never_answers(client, settings, silent_service):
    settings.ATELIER_CACHE_URL = f"redis://{silent_service}/0"  # as the settings make CACHES from it
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": settings.ATELIER_CACHE_URL}}
    elapsed, status, body = _timed_readyz(client)
    # before: 5 s, Django's cache client waiting with no socket timeout until the view stopped waiting for it
    assert elapsed < HUNG_SERVICE_ANSWER_S, body
    assert status == 503 and body["checks"]["cache"]["ok"] is False, body
    assert "cache unreachable" in body["checks"]["cache"]["error"]


def test_readyz_answers_503_fast_when_the_database_accepts_and_never_answers(client, monkeypatch, silent_service):
    silent = {**health.connections.settings["default"]}
    if silent["ENGINE"].endswith("sqlite3"):
        pytest.skip("SQLite is a file: no server to fall silent")
    host, port = silent_service.split(":")
    silent.update(HOST=host, PORT=port)
    monkeypatch.setitem(health.connections.settings, "default", silent)
    elapsed, status, body = _timed_readyz(client)
    assert status == 503 and body["checks"]["database"]["ok"] is False, body
    assert elapsed < HUNG_SERVICE_ANSWER_S
