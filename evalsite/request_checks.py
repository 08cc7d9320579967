"""Requests refused before any view runs, whatever view they were meant for:

* a NUL character in the path, the query string, a urlencoded form field or a cookie is a 400: PostgreSQL
  cannot store or compare text holding NUL (a query with one raises instead of matching nothing);
* an integer path parameter outside the 64-bit range of every id column is a 404: no row has that
  id, and SQLite raises OverflowError on the lookup instead of matching nothing.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, QueryDict

from evalsite.error_pages import bad_request, page_not_found

#: The range of a 64-bit signed id column (BigAutoField), the widest the site has.
ID_RANGE = (-(2**63), 2**63 - 1)


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


class RefuseUnstorableInput:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = _nul_in(request)
        if where is not None:
            return bad_request(request, ValueError(f"NUL characters are not accepted ({where})."))
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> HttpResponse | None:
        for value in [*view_args, *view_kwargs.values()]:
            if isinstance(value, int) and not ID_RANGE[0] <= value <= ID_RANGE[1]:
                return page_not_found(request, ValueError("No object has this id."))
        return None
