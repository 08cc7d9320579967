"""The 400, 403, 404 and 500 answers of the whole site: JSON for API paths, a styled HTML page with
the site's navigation otherwise (templates/403.html, 404.html, 500.html, all on error.html).

Django calls these for ``BadRequest``/``SuspiciousOperation`` and ``Http404`` raised anywhere
(``handler400``/``handler404`` in ``evalsite.urls``); middleware that refuses a request early uses
:func:`bad_request` too, so every refusal looks the same.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

__all__ = ["bad_request", "error_response", "is_api_request", "page_not_found", "permission_denied", "server_error"]

TITLES = {400: "Bad request", 403: "Not allowed", 404: "Not found", 413: "Upload too large", 500: "Server error"}
CODES = {400: "bad_request", 403: "forbidden", 404: "not_found", 413: "upload_too_large", 500: "server_error"}
TEMPLATES = {403: "403.html", 404: "404.html", 500: "500.html"}


def is_api_request(request: HttpRequest) -> bool:
    """API paths (``…/api/…``), status endpoints (``….json``) and clients that ask for JSON."""
    path = request.path
    return "/api/" in path or path.endswith(".json") or request.headers.get("Accept", "").startswith("application/json")


def error_response(request: HttpRequest, status: int, detail: str) -> HttpResponse:
    if request.path.startswith("/api/v1/"):  # the public API's one error shape (leaderboard/api_contract.py)
        return JsonResponse({"error": CODES[status], "message": detail, "details": {}}, status=status)
    if is_api_request(request):
        return JsonResponse({"error": CODES[status], "detail": detail}, status=status)
    if not hasattr(request, "user"):  # refused before the authentication middleware ran
        request.user = AnonymousUser()
    template = TEMPLATES.get(status, "error.html")
    body = render_to_string(template, {"status": status, "title": TITLES[status], "detail": detail}, request=request)
    return HttpResponse(body, status=status)


def _detail(exception: BaseException | None, default: str) -> str:
    # Only messages our own code wrote are shown; Django's resolver 404s carry internals in DEBUG only.
    message = exception.args[0] if exception is not None and exception.args else ""
    return message if isinstance(message, str) and message else default


def bad_request(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    if getattr(exception, "status", None) == 413:  # evalsite.upload_limits.UploadTooLarge, a SuspiciousOperation
        return error_response(request, 413, _detail(exception, "The upload is too large."))
    return error_response(request, 400, _detail(exception, "The request is malformed."))


def page_not_found(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return error_response(request, 404, _detail(exception, "There is nothing at this address."))


def permission_denied(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return error_response(request, 403, _detail(exception, "Your account may not open this page."))


def server_error(request: HttpRequest) -> HttpResponse:
    """The 500 page: rendered without the request context (the database may be what failed)."""
    detail = "Something went wrong on our side."
    if request.path.startswith("/api/v1/"):  # the public API's one error shape, as error_response
        return JsonResponse({"error": CODES[500], "message": detail, "details": {}}, status=500)
    if is_api_request(request):
        return JsonResponse({"error": CODES[500], "detail": detail}, status=500)
    body = render_to_string("500.html", {"status": 500, "title": TITLES[500]})
    return HttpResponse(body, status=500)
