"""Refusals made above the security middleware (evalsite/refusal_headers.py) carry the same security headers
as every other answer of the site: the 414, the 413 and its 400, and gunicorn's 414 written outside Django."""

from __future__ import annotations

import pytest

from evalsite.request_checks import MAX_ADDRESS_CHARS
from evalsite.server_refusals import address_too_long_http

pytestmark = pytest.mark.django_db

#: What SecurityMiddleware and the policy middleware write on every answer of this site's settings.
SITE_HEADERS = ("Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy", "Cross-Origin-Opener-Policy")


def site_headers(response) -> dict[str, str]:
    return {name: response[name] for name in SITE_HEADERS if name in response}


@pytest.fixture
def usual(client) -> dict[str, str]:
    """The headers an ordinary answer (the login page) carries."""
    headers = site_headers(client.get("/accounts/login/"))
    assert set(headers) == set(SITE_HEADERS)
    return headers


@pytest.mark.parametrize("path", ["/leaderboards/", "/api/v1/leaderboards/"])
def test_the_414_for_an_address_over_the_limit_carries_the_sites_security_headers(client, usual, path):
    # It answered with Content-Type alone: RefuseLongAddresses sits above SecurityMiddleware and the policy.
    response = client.get(f"{path}?q=" + "=" * MAX_ADDRESS_CHARS)
    assert response.status_code == 414
    assert site_headers(response) == usual


def test_the_413_for_an_oversized_body_carries_the_sites_security_headers(client, usual, settings):
    # It had SecurityMiddleware's headers but not the policy: the upload check sits above the policy middleware.
    settings.ATELIER_MAX_UPLOAD_BYTES = 16
    response = client.post("/accounts/login/", data="x" * 64, content_type="text/plain")
    assert response.status_code == 413
    assert site_headers(response) == usual


def test_gunicorns_414_page_carries_the_sites_security_headers(usual):
    head = address_too_long_http().partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in head[1:])
    assert head[0] == "HTTP/1.1 414 URI Too Long"
    assert {name: headers[name] for name in SITE_HEADERS if name in headers} == usual


def test_a_refusal_below_the_security_middleware_carries_the_same_headers_as_any_answer(client, usual):
    # A NUL refused below both middlewares passes through them after with_site_headers wrote the headers, which
    # they then keep: those headers must be the ones they would have written.
    response = client.get("/leaderboards/%00")
    assert response.status_code == 400
    assert site_headers(response) == usual
