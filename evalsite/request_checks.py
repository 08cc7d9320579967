"""Requests refused before any view runs, whatever view they were meant for:

* an address (path and query string, as the request carries them) over :data:`MAX_ADDRESS_CHARS` is a 414,
  for every visitor (:class:`RefuseLongAddresses`, the first middleware that answers): an anonymous visitor's
  login redirect carries the address as ``next``, percent-encoded, and Django refuses a redirect over
  16,000 characters with a 400, while a signed-in visitor got the page;

* a script name (``SCRIPT_NAME``) that is not UTF-8 is a 400: Django raised while it built the request
  (``evalsite/script_name.py``);

* a query string or a form sent in a charset other than UTF-8 (the ``Content-Type``'s ``charset``) is a 400:
  Django decodes them with any charset Python knows, and raised on those that cannot carry text
  (``evalsite/request_charset.py``);
* a NUL character in the path, the query string, a urlencoded form field or a cookie is a 400: PostgreSQL
  cannot store or compare text holding NUL (a query with one raises instead of matching nothing);
* an integer path parameter outside the 64-bit range of every id column is a 404: no row has that
  id, and SQLite raises OverflowError on the lookup instead of matching nothing;
* an admin change list, which filters by any field named in its query string (``?run=7``,
  ``?id__in=1,2``), given such an integer as a lookup's value answers as the admin answers any lookup
  it cannot apply: a redirect to ``?e=1`` ("incorrect lookup parameters"). Django 5.2 guards only plain
  integer fields against SQLite's OverflowError, not a foreign key or an ``__in`` list;
* an admin action posted to a change list whose model has integer ids, with a selected row that is not
  such an id (``_selected_action=abc``, or past 64 bits), is a 400: Django filters ``pk__in`` with it and
  raises (ValueError, or SQLite's OverflowError) instead of matching nothing.
"""

from __future__ import annotations

import re

from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.views.main import (
    ALL_VAR,
    ERROR_FLAG,
    IS_FACETS_VAR,
    IS_POPUP_VAR,
    ORDER_VAR,
    PAGE_VAR,
    SEARCH_VAR,
    TO_FIELD_VAR,
)
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict

from evalsite.error_pages import bad_request, error_response, page_not_found
from evalsite.request_charset import charset_refused
from evalsite.script_name import script_name_refused

#: The longest address (``request.get_full_path()``) the site answers. The login redirect's ``next`` is the address
#: percent-encoded (at most three characters for one: ``=`` is ``%3D``), so every address up to this length fits
#: Django's redirect limit (``MAX_URL_REDIRECT_LENGTH``, 16,000 characters) whoever asks; gunicorn takes request
#: lines up to 8,190 bytes (``limit_request_line`` in evalsite/gunicorn.conf.py), so the site answers this itself.
MAX_ADDRESS_CHARS = 5_000
#: What the 414 page says, the site's own refusal and gunicorn's past its request line alike (evalsite/server_refusals.py).
ADDRESS_TOO_LONG = (f"The address is over {MAX_ADDRESS_CHARS:,} characters, more than this site reads; "
                    "follow a link or submit the form again instead of a copied address.")
#: The range of a 64-bit signed id column (BigAutoField), the widest the site has.
ID_RANGE = (-(2**63), 2**63 - 1)
_INTEGER = re.compile(r"\s*([+-]?)(\d+)\s*")
#: The change list's own parameters (search, page, order, …), which the admin validates itself.
_CHANGELIST_CONTROLS = {ALL_VAR, ORDER_VAR, SEARCH_VAR, IS_POPUP_VAR, TO_FIELD_VAR, IS_FACETS_VAR, PAGE_VAR, ERROR_FLAG}


def _is_id(value: int) -> bool:
    return ID_RANGE[0] <= value <= ID_RANGE[1]


def out_of_id_range(text: str) -> bool:
    """``text``, or an item of it as a comma-separated ``__in`` list, is an integer no id column holds."""
    for part in text.split(","):
        integer = _INTEGER.fullmatch(part)
        if integer is None:
            continue
        digits = integer[2].lstrip("0") or "0"
        # 20 digits are past 2**63 already (and int() of thousands would refuse: Python's digit limit)
        if len(digits) > 19 or not _is_id(int(integer[1] + digits)):
            return True
    return False


def id_of(text: str | None) -> int | None:
    """The id a query parameter names: ASCII digits (``str.isdigit`` alone accepts "²", which ``int``
    refuses) of a value an id column can hold; None for anything else."""
    if not text or not (text.isascii() and text.isdigit()) or out_of_id_range(text):
        return None
    return int(text)


def _admin_changelist_lookup_out_of_range(request: HttpRequest) -> bool:
    match = request.resolver_match
    if match is None or "admin" not in match.namespaces or not (match.url_name or "").endswith("_changelist"):
        return False
    return any(out_of_id_range(value) for name, values in request.GET.lists() if name not in _CHANGELIST_CONTROLS
               for value in values)


def _admin_action_selection_invalid(request: HttpRequest) -> bool:
    """An admin action's selected rows that no integer id column can hold (only for models with integer
    ids; another model's ids are its own text)."""
    match = request.resolver_match
    if (request.method != "POST" or match is None or "admin" not in match.namespaces
            or not (match.url_name or "").endswith("_changelist")):
        return False
    model_admin = getattr(match.func, "model_admin", None)
    if model_admin is None or model_admin.model._meta.pk.get_internal_type() not in _INTEGER_PKS:
        return False
    return any(id_of(value) is None for value in request.POST.getlist(ACTION_CHECKBOX_NAME))


_INTEGER_PKS = {"AutoField", "BigAutoField", "SmallAutoField", "IntegerField", "BigIntegerField",
                "PositiveIntegerField", "PositiveBigIntegerField", "SmallIntegerField"}


def _nul_in(request: HttpRequest) -> str | None:
    if "\x00" in request.path:
        return "the path"
    for name, values in request.GET.lists():
        if "\x00" in name or any("\x00" in v for v in values):
            return "the query string"
    if any("\x00" in name or "\x00" in value for name, value in request.COOKIES.items()):
        return "a cookie"
    if request.method == "POST" and request.content_type == "application/x-www-form-urlencoded":
        # Parsed from the cached body, not through request.POST: once POST is read the stream is
        # spent, and DRF would take a form body sent to a JSON endpoint for an empty one.
        # (Multipart bodies are left to the forms, whose fields refuse NUL themselves.)
        form = QueryDict(request.body, encoding=request.encoding)
        for name, values in form.lists():
            if "\x00" in name or any("\x00" in v for v in values):
                return f"the form field {name.replace(chr(0), '')!r}"
    return None


class RefuseLongAddresses:
    """Above the middleware that redirects (HTTPS, the login), which would carry the address in ``Location``."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if len(request.get_full_path()) > MAX_ADDRESS_CHARS:
            return error_response(request, 414, ADDRESS_TOO_LONG)
        return self.get_response(request)


class RefuseUnstorableInput:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if script_name_refused(request):
            return bad_request(request, ValueError(
                "The address the site is mounted under (SCRIPT_NAME) is not UTF-8; this site reads addresses as "
                "UTF-8 only."))
        charset = charset_refused(request)
        if charset is not None:
            request.encoding = None  # nothing answering the refusal may decode with it
            return bad_request(request, ValueError(
                f"The request's Content-Type names the charset {charset!r}; this site reads query strings and "
                "forms as UTF-8 only: send UTF-8, or name no charset."))
        where = _nul_in(request)
        if where is not None:
            return bad_request(request, ValueError(f"NUL characters are not accepted ({where})."))
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> HttpResponse | None:
        for value in [*view_args, *view_kwargs.values()]:
            if isinstance(value, int) and not _is_id(value):
                return page_not_found(request, ValueError("No object has this id."))
        if _admin_changelist_lookup_out_of_range(request):
            return HttpResponseRedirect(f"{request.path}?{ERROR_FLAG}=1")
        if _admin_action_selection_invalid(request):
            return bad_request(request, ValueError("The selected rows are not ids of this list; reload the list "
                                                   "and select them again."))
        return None
