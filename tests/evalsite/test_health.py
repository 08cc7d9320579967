"""evalsite/health.py: /healthz answers without the database, /readyz names each check with its latency."""

from __future__ import annotations

import json

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
