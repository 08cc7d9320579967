"""The message storage made on first use answers as Django's MessageMiddleware does (evalsite/messages_on_use.py):
messages added in one request are shown in the next, the same cookies are set, and a request that never
uses the storage does not build it."""

from __future__ import annotations

import pytest
from django.contrib import messages
from django.http import HttpResponse
from django.test import Client, override_settings
from django.urls import path

import evalsite.messages_on_use
from tests.annotation.helpers import annotators
from tests.factories import PASSWORD

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]

OURS = "evalsite.messages_on_use.MessagesOnUse"
THEIRS = "django.contrib.messages.middleware.MessageMiddleware"


def add(request):
    messages.success(request, "saved")
    messages.warning(request, "x" * 3000)  # more than the cookie holds: the rest goes to the session
    return HttpResponse("added")


def show(request):
    return HttpResponse("|".join(f"{m.level}:{m.message[:10]}" for m in messages.get_messages(request)))


def untouched(request):
    return HttpResponse("nothing")


urlpatterns = [path("m/add", add), path("m/show", show), path("m/untouched", untouched)]


def _middleware(which: str) -> list[str]:
    from django.conf import settings

    return [which if name in (OURS, THEIRS) else name for name in settings.MIDDLEWARE]


def _visits(which: str, username: str) -> list[tuple]:
    """Each response's status, body and the message cookie's value as set (signatures differ by time: its length)."""
    with override_settings(MIDDLEWARE=_middleware(which)):
        client = Client()
        assert client.login(username=username, password=PASSWORD)
        seen = []
        for address in ("/m/untouched", "/m/add", "/m/untouched", "/m/show", "/m/show", "/m/untouched"):
            response = client.get(address)
            cookie = response.cookies.get("messages")
            seen.append((address, response.status_code, response.content,
                         None if cookie is None else (bool(cookie.value), cookie["max-age"])))
        return seen


def test_messages_are_kept_shown_and_cleared_as_by_djangos_middleware():
    ours_user, theirs_user = annotators(2, prefix="messages")
    assert _visits(OURS, ours_user.username) == _visits(THEIRS, theirs_user.username)
    assert _visits(OURS, ours_user.username)[3][2] == b"25:saved|30:xxxxxxxxxx"


def test_a_request_that_uses_no_message_builds_no_storage(monkeypatch):
    built = []
    real = evalsite.messages_on_use.default_storage
    monkeypatch.setattr(evalsite.messages_on_use, "default_storage", lambda request: built.append(1) or real(request))
    (user,) = annotators(1, prefix="messages-untouched")
    with override_settings(MIDDLEWARE=_middleware(OURS)):
        client = Client()
        assert client.login(username=user.username, password=PASSWORD)
        assert client.get("/m/untouched").content == b"nothing"
        assert built == []
        assert client.get("/m/add").status_code == 200
        assert built == [1]
