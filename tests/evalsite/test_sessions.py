"""The session engine reads Django's session rows: a logged-in session is read back, an expired one or
an unknown key is an empty session whose key is dropped; the password backend loads the session's user."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.utils import timezone

from evalsite.auth_backends import ModelBackend
from evalsite.sessions import SessionStore
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_stored_session_is_read_back():
    store = SessionStore()
    store["who"] = "alice"
    store.create()
    assert SessionStore(store.session_key).load() == {"who": "alice"}


def test_an_expired_session_is_empty_and_its_key_dropped():
    store = SessionStore()
    store["who"] = "alice"
    store.create()
    Session.objects.filter(pk=store.session_key).update(expire_date=timezone.now() - timedelta(seconds=1))
    again = SessionStore(store.session_key)
    assert again.load() == {} and again.session_key is None


def test_the_backend_loads_an_active_user_and_refuses_an_inactive_one():
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob", is_active=False)
    assert ModelBackend().get_user(alice.pk) == alice
    assert ModelBackend().get_user(bob.pk) is None
    assert ModelBackend().get_user(10**9) is None


def test_a_logged_in_client_stays_logged_in(client):
    alice = UserFactory(username="alice", role="annotator")
    client.force_login(alice)
    assert client.get("/annotate/").status_code == 200


def _statements(client, path: str) -> tuple[int, list[str]]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        status = client.get(path).status_code
    return status, [" ".join(q["sql"].split()) for q in captured.captured_queries]


def _user_reads(sql: list[str]) -> list[str]:
    return [q for q in sql if q.startswith('SELECT "auth_user"')]


@pytest.mark.postgres
def test_a_known_sessions_user_is_read_with_the_session_in_one_statement(client):
    """PostgreSQL (issue 30): the first request of a session reads the session, then its user; from then on
    this process reads both in one statement, and the user is the same row with the same checks."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's lateral join")
    alice = UserFactory(username="alice", role="annotator")
    client.force_login(alice)
    status, first = _statements(client, "/annotate/")
    assert status == 200 and len(_user_reads(first)) == 1
    status, second = _statements(client, "/annotate/")
    assert status == 200 and _user_reads(second) == []
    assert any(q.startswith("SELECT s.session_data") and "auth_user" in q for q in second)
    response = client.get("/annotate/")
    assert response.wsgi_request.user == alice and response.wsgi_request.user.username == "alice"


@pytest.mark.postgres
def test_a_user_read_with_the_session_is_still_refused_when_inactive_or_its_password_changed(client):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's lateral join")
    alice = UserFactory(username="alice", role="annotator")
    client.force_login(alice)
    assert client.get("/annotate/").status_code == 200  # the process learns the session's user
    type(alice).objects.filter(pk=alice.pk).update(is_active=False)
    assert client.get("/annotate/").status_code == 302  # to the login page
    type(alice).objects.filter(pk=alice.pk).update(is_active=True)
    client.force_login(alice)
    assert client.get("/annotate/").status_code == 200
    alice.set_password("a new one")
    type(alice).objects.filter(pk=alice.pk).update(password=alice.password)
    assert client.get("/annotate/").status_code == 302  # the session's auth hash no longer matches


def test_a_user_read_with_one_requests_session_is_never_handed_to_another_request(client):
    """The handed user lives for the request whose session read it: a new request forgets it."""
    from evalsite import sessions

    alice = UserFactory(username="alice")
    sessions._handed.user = (alice.pk, alice)
    from django.core.signals import request_started

    request_started.send(sender=None)
    assert sessions.prefetched_user(alice.pk) is None
    sessions._handed.user = (alice.pk, alice)
    assert sessions.prefetched_user(alice.pk + 1) is None and sessions.prefetched_user(alice.pk) is None


def _stored(data: dict) -> SessionStore:
    store = SessionStore()
    store.update(data)
    store.create()
    return store


def test_a_stored_string_is_verified_once_per_process_and_each_read_gets_its_own_dictionary(monkeypatch):
    from django.core import signing

    store = _stored({"who": "alice", "seen": [1, 2]})
    calls = []
    real = signing.loads
    monkeypatch.setattr(signing, "loads", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    first = SessionStore(store.session_key).load()
    second = SessionStore(store.session_key).load()
    assert first == second == {"who": "alice", "seen": [1, 2]}
    assert len(calls) == 1  # failed without the cache: two
    first["seen"].append(3)
    first["who"] = "mallory"
    assert SessionStore(store.session_key).load() == {"who": "alice", "seen": [1, 2]}
    flat = _stored({"who": "bob"})
    a, b = SessionStore(flat.session_key).load(), SessionStore(flat.session_key).load()
    a["who"] = "mallory"
    assert b == {"who": "bob"} and SessionStore(flat.session_key).load() == {"who": "bob"}


def test_a_tampered_session_is_refused_after_the_genuine_one_was_decoded(caplog):
    store = _stored({"_auth_user_id": "1", "who": "alice"})
    genuine = Session.objects.get(pk=store.session_key).session_data
    assert SessionStore(store.session_key).load()["who"] == "alice"
    payload, signature = genuine.rsplit(":", 1)
    forged = SessionStore().encode({"_auth_user_id": "2", "who": "mallory"}).rsplit(":", 1)[0]
    for tampered in (
        payload + ":" + signature[:-1] + ("A" if signature[-1] != "A" else "B"),  # signature altered
        forged + ":" + signature,  # other data under the genuine signature
        "x" + genuine,
    ):
        Session.objects.filter(pk=store.session_key).update(session_data=tampered)
        caplog.clear()
        assert SessionStore(store.session_key).load() == {}
        assert "Session data corrupted" in caplog.text
    Session.objects.filter(pk=store.session_key).update(session_data=genuine)
    assert SessionStore(store.session_key).load()["who"] == "alice"


def test_a_decoded_session_is_refused_once_expired_or_once_its_key_is_no_longer_trusted(settings):
    store = _stored({"who": "alice"})
    assert SessionStore(store.session_key).load() == {"who": "alice"}
    old = settings.SECRET_KEY
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "another-" + old, []
    assert SessionStore(store.session_key).load() == {}  # the old key is no longer trusted
    settings.SECRET_KEY_FALLBACKS = [old]
    assert SessionStore(store.session_key).load() == {"who": "alice"}  # rotated: the old key is a fallback
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = old, []
    Session.objects.filter(pk=store.session_key).update(expire_date=timezone.now() - timedelta(seconds=1))
    again = SessionStore(store.session_key)
    assert again.load() == {} and again.session_key is None


def test_the_session_and_user_statement_is_written_once_and_is_the_one_written_anew(monkeypatch):
    """evalsite/sessions.py: the statement is kept per table, user model and database, and equals the one
    composed from row_by_pk_sql at each request before (issue 30)."""
    from django.contrib.auth import get_user_model

    from evalsite import sessions
    from evalsite.precompiled import row_by_pk_sql

    sessions._session_and_user_sql_of.cache_clear()
    user_sql, _ = row_by_pk_sql(get_user_model(), "%s")
    composed = (f"SELECT s.session_data, s.expire_date, u.* FROM django_session s LEFT JOIN LATERAL ({user_sql}) u "
                f"ON true WHERE s.session_key = %s AND s.expire_date > %s")
    first = sessions._session_and_user_sql("django_session")
    assert first == composed
    written = []
    monkeypatch.setattr(sessions, "row_by_pk_sql", lambda *a, **k: written.append(a) or row_by_pk_sql(*a, **k))
    assert sessions._session_and_user_sql("django_session") is first and written == []
    assert sessions._session_and_user_sql("other_session_table") == composed.replace("django_session", "other_session_table")
    assert len(written) == 1
