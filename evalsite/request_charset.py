"""The charset a request's ``Content-Type`` names: the site reads query strings and forms as UTF-8 only.

Django adopts any charset Python knows as the request's ``encoding``, decodes the query string and the form
fields with it and encodes them back with it (``QueryDict.urlencode``): ``charset=hex`` or ``base64`` is no
text encoding, ``idna`` and ``undefined`` cannot decode with replacement, ``ascii`` or ``cp1252`` cannot encode
the U+FFFD it put for a byte it could not read. Each raised — for a query string while Django was still
building the request (its ``encoding`` setter decodes the query at once), before any middleware could answer:
a 500 on every URL. The site's pages and API send UTF-8 only (its JSON parser reads nothing else, and Django
already refuses a urlencoded form in another charset), so:

* :func:`charset_set_aside` (the WSGI entry, ``evalsite/wsgi.py``) takes such a charset off the
  ``Content-Type`` before Django sees it, and keeps it in the environ under :data:`SET_ASIDE`;
* :func:`charset_refused` names it when the request carries a query string or a form, which
  ``evalsite.request_checks.RefuseUnstorableInput`` then answers with a 400 saying to send UTF-8. A request
  with nothing to decode (a plain GET, a JSON body, read as UTF-8 whatever it says) goes on.

A charset Python does not know Django leaves aside itself, reading UTF-8; so does this.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterable
from typing import Any

from django.http import HttpRequest
from django.utils.http import parse_header_parameters

__all__ = ["SET_ASIDE", "charset_refused", "charset_set_aside"]

#: The environ key (so also ``request.META``) holding the charset the WSGI entry took off the Content-Type.
SET_ASIDE = "atelier.request_charset"
_CHARSET_PARAMETER = re.compile(r';\s*charset\s*=\s*(?:"[^"]*"|[^;]*)', re.IGNORECASE)
_FORM_TYPES = {"application/x-www-form-urlencoded", "multipart/form-data"}


def _not_utf8(charset: str | None) -> bool:
    """A charset Python knows that is not UTF-8 (under any of its names)."""
    if not charset:
        return False
    try:
        return codecs.lookup(charset).name != "utf-8"
    except LookupError:
        return False


def charset_set_aside(application: Callable) -> Callable:
    """WSGI middleware: a ``Content-Type`` charset other than UTF-8 is taken off the header (the rest of it,
    a multipart boundary included, stays) and kept under :data:`SET_ASIDE`, so Django reads UTF-8."""

    def entry(environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        content_type = environ.get("CONTENT_TYPE", "")
        if "charset" not in content_type.lower():  # most requests: no header to parse (the labelling hot path)
            return application(environ, start_response)
        charset = parse_header_parameters(content_type)[1].get("charset")
        if _not_utf8(charset):
            environ[SET_ASIDE] = charset
            environ["CONTENT_TYPE"] = _CHARSET_PARAMETER.sub("", content_type)
        return application(environ, start_response)

    return entry


def charset_refused(request: HttpRequest) -> str | None:
    """The charset other than UTF-8 that the request's query string or form was sent in: set aside by the WSGI
    entry, or (a request built without it, as the test client builds them) adopted by Django; None when it
    names none, or carries nothing decoded with one."""
    charset = request.META.get(SET_ASIDE) or request.encoding
    if not _not_utf8(charset):
        return None
    if not request.META.get("QUERY_STRING") and request.content_type not in _FORM_TYPES:
        return None
    return charset
