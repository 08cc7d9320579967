"""The security headers on refusals made above the middleware that writes them.

The 414 (:class:`evalsite.request_checks.RefuseLongAddresses`, first after the metrics so that no redirect
carries the address), the 413 and its 400 (:class:`evalsite.upload_limits.RefuseOversizedUploads`, before the
policy middleware) and gunicorn's 414 (:mod:`evalsite.server_refusals`, outside Django) answer before
``SecurityMiddleware`` and the Content-Security-Policy middleware see the response: those pages went out
without ``X-Content-Type-Options``, ``Referrer-Policy``, ``Cross-Origin-Opener-Policy`` or the policy itself,
the only HTML the site served without them. :func:`with_site_headers` runs those two middlewares' response
step on such an answer; both only add a header the response lacks, so an answer that later passes through
them is unchanged.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.middleware.security import SecurityMiddleware

from evalsite.content_security_policy import SitePolicyCSPMiddleware

__all__ = ["with_site_headers"]


def _no_view(request: HttpRequest) -> None:  # the middlewares' get_response: never called here
    raise AssertionError("with_site_headers runs only the response step")


def with_site_headers(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """``response`` with the headers ``SecurityMiddleware`` and the policy middleware add to every answer.
    Made per call: their settings are read when they are made, and refusals are rare."""
    for middleware in (SecurityMiddleware(_no_view), SitePolicyCSPMiddleware(_no_view)):
        response = middleware.process_response(request, response)
    return response
