"""A Content-Type charset other than UTF-8 (evalsite/request_charset.py): a query string or a form sent in it is
a 400 saying to send UTF-8, through the site's WSGI entry as gunicorn and runserver load it; a request with
nothing to decode goes on. Before, Django decoded with it: ``charset=hex`` on ``GET /leaderboards/?page=1``
raised while Django built the request (a 500 before any middleware), and on a form from the first middleware
that read it."""

from __future__ import annotations

import json
from html import unescape

import pytest
from django.conf import settings
from django.test import Client

from evalsite.request_charset import SET_ASIDE, charset_set_aside
from leaderboard.api_tokens.models import ApiToken

pytestmark = pytest.mark.django_db

#: No text encoding; no decoding with replacement; no U+FFFD to encode back; and two that carry any text.
NOT_UTF8 = ["hex", "base64", "rot13", "zlib", "idna", "punycode", "undefined", "ascii", "cp1252", "shift_jis",
            "latin-1", "utf-16"]
MULTIPART = (b'--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nlaptop\r\n--x--\r\n', "multipart/form-data; boundary=x")
URLENCODED = (b"name=laptop", "application/x-www-form-urlencoded")
CSRF = "a" * 32


@pytest.fixture
def site(rita, wsgi_request):
    """``site(method, path, ...)``: (status, page) from the site's WSGI entry, as rita."""
    client = Client()
    client.force_login(rita)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}; csrftoken={CSRF}"

    def call(method: str, path: str, **request) -> tuple[int, str]:
        status, body = wsgi_request(method, path, HTTP_COOKIE=cookie, HTTP_X_CSRFTOKEN=CSRF, **request)
        return status, body.decode()

    return call


@pytest.mark.parametrize("charset", NOT_UTF8)
def test_a_query_string_in_a_charset_other_than_utf8_is_a_400_naming_it(site, charset):
    status, page = site("GET", "/leaderboards/", query="page=%ff", content_type=f"text/plain; charset={charset}")
    assert status == 400
    assert f"names the charset {charset!r}; this site reads query strings and forms as UTF-8 only" in unescape(page)


@pytest.mark.parametrize("charset", NOT_UTF8)
@pytest.mark.parametrize("body, content_type", [MULTIPART, URLENCODED])
def test_a_form_in_a_charset_other_than_utf8_is_a_400_and_writes_nothing(site, charset, body, content_type):
    status, page = site("POST", "/account/api-tokens/", body=body, content_type=f"{content_type}; charset={charset}")
    assert status == 400 and "as UTF-8 only" in page
    assert not ApiToken.objects.exists()


def test_on_the_api_the_refusal_is_in_the_apis_error_shape(site):
    status, body = site("GET", "/api/v1/leaderboards/", query="judge_name=%ff", content_type="text/plain; charset=ascii")
    assert status == 400
    assert json.loads(body)["error"] == "bad_request" and "'ascii'" in json.loads(body)["message"]


@pytest.mark.parametrize("charset", ["utf-8", "UTF-8", '"utf-8"', "utf8", "no-such-charset"])
def test_utf8_under_any_name_or_a_charset_python_does_not_know_is_read_as_utf8(site, charset):
    body, content_type = MULTIPART
    status, _ = site("POST", "/account/api-tokens/", body=body, content_type=f"{content_type}; charset={charset}")
    assert status == 200 and ApiToken.objects.get().name == "laptop"


@pytest.mark.parametrize("path, content_type", [("/leaderboards/", "text/plain; charset=hex"),
                                                ("/api/v1/leaderboards/", "application/json; charset=ascii")])
def test_a_request_with_nothing_to_decode_goes_on_whatever_charset_it_names(site, path, content_type):
    assert site("GET", path, content_type=content_type)[0] == 200


def test_the_charset_is_taken_off_the_content_type_and_the_boundary_kept():
    seen = {}
    entry = charset_set_aside(lambda environ, start_response: seen.update(environ) or [])
    entry({"CONTENT_TYPE": 'multipart/form-data; charset="hex"; boundary="a;b"'}, None)
    assert seen["CONTENT_TYPE"] == 'multipart/form-data; boundary="a;b"' and seen[SET_ASIDE] == "hex"


@pytest.mark.parametrize("charset", ["hex", "ascii"])
def test_a_form_built_without_the_wsgi_entry_is_refused_as_well(client, rita, charset):
    # The test client builds requests itself: Django adopted the charset, and the middleware refuses it.
    client.force_login(rita)
    body, content_type = MULTIPART
    response = client.generic("POST", "/account/api-tokens/", body, CONTENT_TYPE=f"{content_type}; charset={charset}")
    assert response.status_code == 400 and not ApiToken.objects.exists()
