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
