"""The contract every ``/api/v1/`` view shares: authentication, role permissions, the one error shape,
cursor pagination, the token-write throttle and the domain-error mapping (one exception handler).

Error shape (validation, 400/401/403/404/405/409/414/415/429): ``{"error": code, "message": text,
"details": {field: [message, ...]}}``. Import errors keep the import contract's ``file:line: field``
messages, grouped by field. Domain errors are mapped here once: the leaderboard's own by class, the
annotation app's by their ``status``/``code``/``message`` attributes (leaderboard must not import it).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import django_filters
from django import forms
from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header, parse_etags, quote_etag
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework import exceptions, serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.generics import ListAPIView
from rest_framework.pagination import CursorPagination
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.utils.mediatypes import media_type_matches
from rest_framework.views import APIView

from evalsite.request_checks import id_of
from leaderboard.api_tokens.authentication import ApiTokenAuthentication
from leaderboard.import_contract import INVISIBLE_CATEGORIES, FieldRule, ImportFailed, value_check
from leaderboard.roles import is_admin, is_researcher

__all__ = [
    "AdminOnly", "ApiListView", "ApiView", "ErrorSerializer", "ResearcherOnly", "StandardCursorPagination",
    "IdField", "IdFilter", "IdentifierField", "TokenWriteThrottle", "api_exception_handler", "client_holds", "download_disposition", "error_body", "error_responses", "not_modified_or",
    "text_download", "ERROR_RESPONSES",
]

#: Media types of the exports the API serves (the files the pages export).
EXPORT_MEDIA = {"csv": "text/csv", "jsonl": "application/x-ndjson", "json": "application/json", "tex": "application/x-tex"}

#: Default rate of writes authenticated by an API token, per user (override: ATELIER_API_TOKEN_WRITE_RATE).
DEFAULT_TOKEN_WRITE_RATE = "60/minute"
#: The largest seed a run takes (every protocol's create input and command).
MAX_SEED = 2**31 - 1


class ErrorSerializer(serializers.Serializer):
    """Every refusal of the API."""

    error = serializers.CharField(help_text="Machine-readable code, e.g. invalid, not_found, not_allowed.")
    message = serializers.CharField(help_text="What went wrong, fit to show a person.")
    details = serializers.DictField(child=serializers.ListField(child=serializers.CharField()),
                                    help_text="Field name -> messages (empty when no field is at fault).")


def error_body(code: str, message: str, details: dict[str, list[str]] | None = None) -> dict[str, Any]:
    return {"error": code, "message": message, "details": details or {}}


def _flatten(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested validation detail as {dotted field: [messages]}."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            for field, messages in _flatten(value, name).items():
                out.setdefault(field, []).extend(messages)
    elif isinstance(detail, list):
        for index, value in enumerate(detail):
            name = prefix if not isinstance(value, (dict, list)) else f"{prefix}[{index}]"
            for field, messages in _flatten(value, name).items():
                out.setdefault(field, []).extend(messages)
    else:
        out.setdefault(prefix or "non_field_errors", []).append(str(detail))
    return out


def _leaderboard_domain_errors() -> tuple[type[Exception], ...]:
    """The leaderboard's configuration errors: a request the domain refuses (400 ``run_invalid``)."""
    from leaderboard.easel.services import ImageImportError, SuiteConflict
    from leaderboard.providers import UnknownJudge
    from leaderboard.runs.errors import RunConfigurationError

    # a TIG configuration error is a RunConfigurationError
    return (RunConfigurationError, SuiteConflict, ImageImportError, UnknownJudge)


_DRF_CODES = {
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "not_authenticated",
    exceptions.PermissionDenied: "not_allowed",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "throttled",
    exceptions.ParseError: "malformed",
    exceptions.ValidationError: "invalid",
}


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """The one place a refusal becomes a response; anything not listed propagates (a bug: 500)."""
    if isinstance(exc, ImportFailed):
        details: dict[str, list[str]] = {}
        for error in exc.errors:
            details.setdefault(error.field or "file", []).append(str(error))
        return Response(error_body("import_invalid", str(exc), details), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, _leaderboard_domain_errors()):
        return Response(error_body("run_invalid" if "Run" in type(exc).__name__ else "invalid", str(exc)),
                        status=status.HTTP_400_BAD_REQUEST)
    if all(hasattr(exc, name) for name in ("status", "code", "message")) and isinstance(exc.status, int):
        return Response(error_body(exc.code, exc.message, _domain_details(exc)), status=exc.status)
    if isinstance(exc, Http404):
        return Response(error_body("not_found", str(exc) or "Not found."), status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, DjangoPermissionDenied):
        return Response(error_body("not_allowed", str(exc) or "Not allowed."), status=status.HTTP_403_FORBIDDEN)
    if isinstance(exc, exceptions.APIException):
        code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "error")
        if isinstance(exc, exceptions.ValidationError):
            body = error_body(code, "The request is invalid.", _flatten(exc.detail))
        else:
            body = error_body(code, str(exc.detail))
        headers = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None) is not None:
            headers["Retry-After"] = str(int(exc.wait))
        return Response(body, status=exc.status_code, headers=headers)
    return None


def _domain_details(exc: Exception) -> dict[str, list[str]]:
    """Field messages of a domain error: a {field: message} mapping (``fields``) or (line, field, message)
    rows (``errors``), whose formatted lines are the message's lines."""
    fields = getattr(exc, "errors", None)
    details: dict[str, list[str]] = {}
    if isinstance(fields, dict):
        for field, message in fields.items():
            details.setdefault(str(field), []).append(str(message))
    elif isinstance(fields, list):
        lines = str(exc.message).split("\n")
        for index, row in enumerate(fields):
            field = str(row[1]) if len(row) > 1 and row[1] else "file"
            details.setdefault(field, []).append(lines[index] if index < len(lines) else str(row))
    return details


class _RolePermission(BasePermission):
    check = staticmethod(lambda user: False)

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and self.check(request.user))


class ResearcherOnly(_RolePermission):
    message = "Researchers only."
    check = staticmethod(is_researcher)


class AdminOnly(_RolePermission):
    message = "Admins only."
    check = staticmethod(is_admin)


class StandardCursorPagination(CursorPagination):
    """Newest first, stable under inserts (a cursor, not a page number)."""

    ordering = "-pk"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def decode_cursor(self, request):
        # DRF answers a malformed cursor with 404; it is a bad query parameter (found by schemathesis).
        try:
            cursor = super().decode_cursor(request)
        except exceptions.NotFound as exc:
            raise exceptions.ValidationError({self.cursor_query_param: [str(exc.detail)]}) from exc
        # DRF takes the position from the (client-held, unsigned) cursor as it is: 'p=abc' or 'p=1.5' reached
        # the pk filter and was a 500. Every list is ordered by pk, so a position is a whole number an id holds.
        if cursor is not None and cursor.position is not None and not self._pk_position(cursor.position):
            raise exceptions.ValidationError({self.cursor_query_param: [self.invalid_cursor_message]})
        return cursor

    @staticmethod
    def _pk_position(position: str) -> bool:
        return bool(re.fullmatch(r"-?[0-9]{1,19}", position)) and -(2**63) <= int(position) <= 2**63 - 1


class TokenWriteThrottle(SimpleRateThrottle):
    """Writes (POST/PUT/PATCH/DELETE) authenticated by an API token, per user: 60 a minute by default
    (``ATELIER_API_TOKEN_WRITE_RATE``, e.g. ``120/minute``). Reads and the pages' own session requests
    are not throttled; logins are limited by django-axes."""

    scope = "token_write"

    def get_rate(self) -> str:
        return getattr(settings, "ATELIER_API_TOKEN_WRITE_RATE", DEFAULT_TOKEN_WRITE_RATE)

    def allow_request(self, request, view) -> bool:
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request, view) -> str | None:
        if request.method in ("GET", "HEAD", "OPTIONS") or not isinstance(request.successful_authenticator,
                                                                       ApiTokenAuthentication):
            return None
        if not hasattr(view, request.method.lower()):
            # a method the operation does not have is refused 405 with Allow; it writes nothing and
            # spends none of the budget (it was counted, and past the rate answered 429, not 405)
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class _ApiBase:
    authentication_classes = [ApiTokenAuthentication, SessionAuthentication]
    permission_classes = [ResearcherOnly]
    throttle_classes = [TokenWriteThrottle]
    #: The media types of the files an export or download view answers with (its schema's 200 types
    #: besides JSON): a client that accepts only these gets the file, and any refusal as JSON.
    download_media_types: tuple[str, ...] = ()

    def get_exception_handler(self):
        return api_exception_handler

    def perform_content_negotiation(self, request, force=False):
        # Negotiation knows only the JSON renderer: without this, 'Accept: text/csv' on a CSV export (the
        # type its schema documents) was refused 406.
        try:
            return super().perform_content_negotiation(request, force=force)
        except exceptions.NotAcceptable:
            if not self.download_media_types or not _accepts_any(request, self.download_media_types):
                raise
            return super().perform_content_negotiation(request, force=True)


def _accepts_any(request, media_types: tuple[str, ...]) -> bool:
    """Whether the request's ``Accept`` header takes one of ``media_types`` (ranges such as ``text/*``
    included; a range given ``q=0`` takes nothing)."""
    for accepted in request.META.get("HTTP_ACCEPT", "").split(","):
        params = dict(part.strip().partition("=")[::2] for part in accepted.split(";")[1:])
        try:
            refused = float(params.get("q", "1")) <= 0
        except ValueError:
            refused = False
        if not refused and any(media_type_matches(media_type, accepted.strip()) for media_type in media_types):
            return True
    return False


class ApiView(_ApiBase, APIView):
    """Base of every /api/v1/ operation: token or session authentication, researchers by default."""


class ApiListView(_ApiBase, ListAPIView):
    """Base of every /api/v1/ list: cursor pagination and a django-filter ``filterset_class``."""

    pagination_class = StandardCursorPagination
    filter_backends = [DjangoFilterBackend]


#: Refusals every operation documents (schemathesis sends bodies of unknown media types and odd Accept headers,
#: and addresses past the site's limit: evalsite.request_checks.RefuseLongAddresses answers 414 before any view).
ERROR_RESPONSES = {code: ErrorSerializer for code in (400, 401, 403, 406, 414, 415, 429)}


def schema_endpoints_v1(endpoints: list) -> list:
    """drf-spectacular preprocessing hook: the schema documents /api/v1/ only (the labelling page's own
    routes under /annotate/api/ are aliases it keeps for its JS)."""
    return [endpoint for endpoint in endpoints if endpoint[0].startswith("/api/v1/")]


class _IdFormField(forms.IntegerField):
    """Django's IntegerField reads its text with ``int()`` as DRF's does: the site's id rule first (:class:`IdField`)."""

    def to_python(self, value):
        if value not in self.empty_values and id_of(str(value)) is None:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return super().to_python(value)


class IdFilter(django_filters.NumberFilter):
    """An id in a list filter: a whole number a database id column can hold (schemathesis sent 1e308 and
    2**70 to django-filter's decimal NumberFilter, which overflowed SQLite's INTEGER: a 500), in ASCII
    digits (``?task_set=١`` named task set 1)."""

    field_class = _IdFormField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", 2**63 - 1)
        super().__init__(*args, **kwargs)


class IdField(serializers.IntegerField):
    """An id in a query or a body: the site's id rule (:func:`evalsite.request_checks.id_of`: ASCII digits of
    a value an id column holds). DRF's IntegerField reads its text with ``int()``, which takes any script's
    digits: ``?campaign=١٢`` (Arabic-Indic) or ``１２`` (fullwidth) named campaign 12."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or id_of(str(data)) is None:
            self.fail("invalid")
        return super().to_internal_value(data)


class IdentifierField(serializers.CharField):
    """A name that identifies a row, as a model's display name: the import contract's identifier rule (no
    character a reader cannot see, no surrounding whitespace). Without it the API made "demo-atlas\u200b" a
    second model shown exactly as "demo-atlas", which every import refuses."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if problems := value_check(value, FieldRule(str, identifier=True, trimmed=True)):
            raise serializers.ValidationError(problems)
        return value


def error_responses(*codes: int) -> dict:
    """The documented refusals of an operation: those of every operation (bad input, no or a bad token, a
    role that may not, an unacceptable ``Accept``, an address too long, an unsupported body type, the write
    throttle) and ``codes``."""
    return {code: ErrorSerializer for code in sorted({*ERROR_RESPONSES, *codes})}


def download_disposition(filename: str) -> str:
    """The Content-Disposition of a download named ``filename``, which often holds a task set's name (any
    text an admin typed). Written as f'filename="{name}"', a line break in the name made every export of
    the task set a 500 (BadHeaderError), a '"' ended the value early (``x"; filename=evil.html``), and a
    non-ASCII name reached browsers MIME-encoded (``=?utf-8?b?…?=``) as the file's name. Control and
    invisible characters become "_"; Django's header writer escapes quotes and gives a non-ASCII name as
    RFC 6266's ``filename*``."""
    safe = "".join("_" if unicodedata.category(char) in INVISIBLE_CATEGORIES else char for char in filename)
    return content_disposition_header(as_attachment=True, filename=safe)


def text_download(body: str, fmt: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=f"{EXPORT_MEDIA[fmt]}; charset=utf-8")
    response["Content-Disposition"] = download_disposition(filename)
    return response


def not_modified_or(request, etag: str, body: dict) -> Response:
    """A 304 when the client already holds this version (``If-None-Match``), else the body with its ETag."""
    quoted = quote_etag(etag)
    if client_holds(request, quoted):
        return Response(status=status.HTTP_304_NOT_MODIFIED, headers={"ETag": quoted})
    return Response(body, headers={"ETag": quoted})


def client_holds(request, quoted_etag: str) -> bool:
    """Whether ``If-None-Match`` names this version: RFC 9110's weak comparison (``W/"x"`` matches ``"x"``,
    as a client echoes an ETag a compressing proxy made weak) or ``*``. An exact string match answered
    those 200 with the whole body."""
    header = request.headers.get("If-None-Match", "")
    if not header:
        return False
    held = parse_etags(header)
    return held == ["*"] or quoted_etag.removeprefix("W/") in [tag.removeprefix("W/") for tag in held]


class ImportSummaryOutput(serializers.Serializer):
    task_set = serializers.IntegerField()
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    flagged_for_llm_split = serializers.IntegerField()
    summary = serializers.CharField()


def import_summary(task_set, summary) -> dict:
    return {"task_set": task_set.pk, "created": summary.created, "updated": summary.updated,
            "unchanged": summary.unchanged, "flagged_for_llm_split": summary.flagged_for_llm_split,
            "summary": str(summary)}
