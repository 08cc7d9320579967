"""The 400, 403, 404 and 500 answers of the whole site: JSON for API paths, a styled HTML page with
the site's navigation otherwise (templates/403.html, 404.html, 500.html, all on error.html).

Django calls these for ``BadRequest``/``SuspiciousOperation`` and ``Http404`` raised anywhere
(``handler400``/``handler404`` in ``evalsite.urls``); middleware that refuses a request early uses
:func:`bad_request` too, so every refusal looks the same.

The database away: Django hands an exception raised anywhere — a view, the session or authentication
middleware, the session save after the view — to ``handler500`` while it is being handled, so
:func:`server_error` sees a ``django.db`` ``OperationalError``/``InterfaceError`` there and answers
503 with ``Retry-After`` in the same three shapes instead of a 500 (:func:`service_unavailable`); a
full or read-only media folder (:class:`evalsite.storage.MediaUnwritable`) is a 507 (:func:`storage_full`).
"""

from __future__ import annotations

import errno
import re
import sys

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from evalsite.refusal_headers import with_site_headers
from evalsite.storage import MediaUnwritable

#: Errors of a full disk (or quota) that any write may meet: answered 507 like a full media folder.
DISK_FULL = {errno.ENOSPC, errno.EDQUOT}

__all__ = ["bad_request", "error_response", "is_api_request", "page_not_found", "permission_denied", "server_error",
           "service_unavailable", "storage_full"]

TITLES = {400: "Bad request", 403: "Not allowed", 404: "Not found", 405: "Not a page to visit", 413: "Upload too large",
          414: "Address too long", 500: "Server error", 503: "Temporarily unavailable", 507: "Storage full"}
CODES = {400: "bad_request", 403: "forbidden", 404: "not_found", 405: "method_not_allowed", 413: "upload_too_large",
         414: "uri_too_long", 500: "server_error", 503: "unavailable", 507: "insufficient_storage"}
#: Seconds a client is asked to wait before trying again while the database is away.
RETRY_AFTER_S = 5
DATABASE_AWAY = "The database cannot be reached just now; nothing was changed. Try again in a few seconds."
TEMPLATES = {403: "403.html", 404: "404.html", 500: "500.html"}


def is_api_request(request: HttpRequest) -> bool:
    """API paths (``…/api/…``), status endpoints (``….json``) and clients that ask for JSON."""
    path = request.path
    return "/api/" in path or path.endswith(".json") or request.headers.get("Accept", "").startswith("application/json")


def error_response(request: HttpRequest, status: int, detail: str, *, links: dict[str, str] | None = None) -> HttpResponse:
    """The error in the request's shape; ``links`` (``form``, ``came_from``) are the page's ways forward."""
    # Refused before the session and authentication middleware ran (the 414, 413 and the early 400s, and
    # gunicorn's 414): some of these answer above the middleware that writes the security headers too.
    account_unknown = not hasattr(request, "user")
    response = _error_answer(request, status, detail, links, account_unknown)
    return with_site_headers(request, response) if account_unknown else response


def _error_answer(request: HttpRequest, status: int, detail: str, links: dict[str, str] | None,
                  account_unknown: bool) -> HttpResponse:
    if request.path.startswith("/api/v1/"):  # the public API's one error shape (leaderboard/api_contract.py)
        return JsonResponse({"error": CODES[status], "message": detail, "details": {}}, status=status)
    if is_api_request(request):
        return JsonResponse({"error": CODES[status], "detail": detail}, status=status)
    # Who is asking is not known before authentication, so the page names no account -- no menu, and no
    # "Log in" for a visitor who may be signed in -- rather than read the session and the user's roles for a
    # request the site refuses.
    if account_unknown:
        request.user = AnonymousUser()
    template = TEMPLATES.get(status, "error.html")
    body = render_to_string(template, {"status": status, "title": TITLES[status], "detail": detail,
                                       "links": links or {}, "account_unknown": account_unknown}, request=request)
    return HttpResponse(body, status=status)


def _detail(exception: BaseException | None, default: str) -> str:
    # Only messages our own code wrote are shown; Django's resolver 404s carry internals in DEBUG only.
    message = exception.args[0] if exception is not None and exception.args else ""
    return message if isinstance(message, str) and message else default


def bad_request(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    if getattr(exception, "status", None) == 413:  # evalsite.upload_limits.UploadTooLarge, a SuspiciousOperation
        return error_response(request, 413, _detail(exception, "The upload is too large."))
    if isinstance(exception, RequestDataTooBig):  # form fields (not files) over DATA_UPLOAD_MAX_MEMORY_SIZE
        return error_response(request, 413, (
            f"The request's form fields are over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes "
            "(DATA_UPLOAD_MAX_MEMORY_SIZE); send a large import as a file, which may be up to "
            f"{settings.ATELIER_MAX_UPLOAD_BYTES:,} bytes (ATELIER_MAX_UPLOAD_BYTES)."))
    return error_response(request, 400, _detail(exception, "The request is malformed."))


#: get_object_or_404's own message, which names the model's class ("No LeaderboardSnapshot matches the
#: given query."): a reader is told the model's verbose name instead ("No leaderboard snapshot has that id.").
_LOOKUP_MISSED = re.compile(r"No (\w+) matches the given query\.")


def _not_found_detail(exception: BaseException | None) -> str:
    detail = _detail(exception, "There is nothing at this address.")
    missed = _LOOKUP_MISSED.fullmatch(detail)
    if missed is None:
        return detail
    from django.apps import apps

    names = {model.__name__: str(model._meta.verbose_name) for model in apps.get_models()}
    name = names.get(missed.group(1))
    return f"No {name} has that id." if name else "There is nothing at this address."


def page_not_found(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return error_response(request, 404, _not_found_detail(exception))


def permission_denied(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return error_response(request, 403, _detail(exception, "Your account may not open this page."))


def service_unavailable(request: HttpRequest, detail: str = DATABASE_AWAY) -> HttpResponse:
    """503 with ``Retry-After``, rendered without the request context (no session, no user, no query)."""
    if request.path.startswith("/api/v1/"):
        response = JsonResponse({"error": CODES[503], "message": detail, "details": {}}, status=503)
    elif is_api_request(request):
        response = JsonResponse({"error": CODES[503], "detail": detail}, status=503)
    else:
        response = HttpResponse(render_to_string("503.html", {"detail": detail}), status=503)
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


def storage_full(request: HttpRequest, detail: str) -> HttpResponse:
    """507: the upload or import was refused because the media folder cannot take it (nothing kept)."""
    if request.path.startswith("/api/v1/"):
        return JsonResponse({"error": CODES[507], "message": detail, "details": {}}, status=507)
    if is_api_request(request):
        return JsonResponse({"error": CODES[507], "detail": detail}, status=507)
    return HttpResponse(render_to_string("503.html", {"detail": detail, "title": TITLES[507], "status": 507}), status=507)


def server_error(request: HttpRequest) -> HttpResponse:
    """The 500 page: rendered without the request context (the database may be what failed). A
    database that cannot be reached is a 503 (module docstring)."""
    failure = sys.exc_info()[1]
    if isinstance(failure, (OperationalError, InterfaceError)):
        return service_unavailable(request)
    if isinstance(failure, MediaUnwritable):
        return storage_full(request, failure.strerror)
    if isinstance(failure, OSError) and failure.errno in DISK_FULL:
        # the disk filled under something other than the media storage: an upload spooled to
        # FILE_UPLOAD_TEMP_DIR while the request was parsed (the temporary file is removed on close)
        return storage_full(request, failure.strerror)
    detail = "Something went wrong on our side."
    if request.path.startswith("/api/v1/"):  # the public API's one error shape, as error_response
        return JsonResponse({"error": CODES[500], "message": detail, "details": {}}, status=500)
    if is_api_request(request):
        return JsonResponse({"error": CODES[500], "detail": detail}, status=500)
    body = render_to_string("500.html", {"status": 500, "title": TITLES[500]})
    return HttpResponse(body, status=500)
