"""Requests refused before any view runs: a NUL character in the path, the query string, a form
field or a cookie. PostgreSQL cannot store or compare text holding NUL (a query with one raises
instead of matching nothing), so such input is a 400, never a 500, whatever view it was meant for."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from evalsite.error_pages import bad_request

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _nul_in(request: HttpRequest) -> str | None:
    if "\x00" in request.path:
        return "the path"
    for name, values in request.GET.lists():
        if "\x00" in name or any("\x00" in v for v in values):
            return "the query string"
    if any("\x00" in name or "\x00" in value for name, value in request.COOKIES.items()):
        return "a cookie"
    if request.method == "POST" and request.content_type in FORM_TYPES:
        for name, values in request.POST.lists():
            if "\x00" in name or any("\x00" in v for v in values):
                return f"the form field {name.replace(chr(0), '')!r}"
    return None


class RejectNulCharacters:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = _nul_in(request)
        if where is not None:
            return bad_request(request, ValueError(f"NUL characters are not accepted ({where})."))
        return self.get_response(request)
