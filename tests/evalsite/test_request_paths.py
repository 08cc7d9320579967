"""A path or script name that is not UTF-8, sent through the site's WSGI entry as gunicorn and runserver load it.

PEP 3333 hands the server's bytes to the application as latin-1 text: gunicorn puts ``GET /%ff%fe`` in
``PATH_INFO`` as ``"/\\xff\\xfe"``, and a ``SCRIPT_NAME`` (gunicorn's environment variable, or a proxy's header
when ``header_map`` lets it through) the same way. Django re-percent-encodes a path that is not UTF-8, but
decodes the script name with ``bytes.decode()`` before it builds the request: a UnicodeDecodeError out of
the WSGI handler, a 500 from the server with no page, on every URL."""

from __future__ import annotations

from html import unescape

import pytest
from django.conf import settings
from django.test import Client
from django.urls import clear_script_prefix

pytestmark = pytest.mark.django_db

NOT_UTF8 = ["/\xff\xfe", "/\xc3", "/\xed\xa0\x80", "/%ff/\xc0\xaf"]  # bytes as latin-1, per PEP 3333


@pytest.fixture
def as_rita(rita):
    client = Client()
    client.force_login(rita)
    return {"HTTP_COOKIE": f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"}


@pytest.mark.parametrize("signed_in", [False, True])
@pytest.mark.parametrize("path", NOT_UTF8)
def test_a_path_that_is_not_utf8_is_no_server_error(wsgi_request, as_rita, path, signed_in):
    status, _ = wsgi_request("GET", path, **(as_rita if signed_in else {}))
    assert status in ({404} if signed_in else {302})


@pytest.mark.parametrize("signed_in", [False, True])
@pytest.mark.parametrize("script_name", NOT_UTF8)
def test_a_script_name_that_is_not_utf8_is_a_400_saying_so(wsgi_request, as_rita, script_name, signed_in):
    status, page = wsgi_request("GET", "/leaderboards/", SCRIPT_NAME=script_name, **(as_rita if signed_in else {}))
    assert status == 400
    assert "not UTF-8" in unescape(page.decode())


@pytest.mark.parametrize("key", ["SCRIPT_URL", "REDIRECT_URL"])
def test_apaches_script_url_that_is_not_utf8_is_a_400_as_well(wsgi_request, key):
    status, _ = wsgi_request("GET", "/leaderboards/", **{key: "/\xff/leaderboards/"})
    assert status == 400


def test_a_script_name_in_utf8_is_not_refused(wsgi_request):
    try:
        status, _ = wsgi_request("GET", "/leaderboards/", SCRIPT_NAME="/atelier-\xc3\xa9")
        assert status == 302
    finally:
        clear_script_prefix()  # Django keeps the request's prefix in its thread: later tests would build links with it
