"""A script name (the prefix the site is mounted under) that is not UTF-8: a 400, not a server error.

PEP 3333 hands the server's bytes to the application as latin-1 text. Django decodes ``SCRIPT_NAME`` (or
Apache's ``SCRIPT_URL``/``REDIRECT_URL``, which it prefers) with ``bytes.decode()`` in its WSGI handler,
before it builds the request and outside the code that turns exceptions into responses: invalid UTF-8
there was a UnicodeDecodeError out of the application, which the server answered with its own bare 500,
on every URL. gunicorn takes the name from its ``SCRIPT_NAME`` environment variable, or from a request's
``SCRIPT_NAME`` header when ``header_map`` lets a header with an underscore through; a proxy may set it.
(A path that is not UTF-8, ``GET /%ff%fe``, Django re-percent-encodes itself: a 404, or the login redirect.)

* :func:`script_name_set_aside` (the WSGI entry, ``evalsite/wsgi.py``) takes such a name out of the environ
  before Django reads it, and keeps it under :data:`SET_ASIDE`;
* :func:`script_name_refused` says so, which ``evalsite.request_checks.RefuseUnstorableInput`` then answers
  with the site's 400 page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.http import HttpRequest

__all__ = ["SET_ASIDE", "script_name_refused", "script_name_set_aside"]

#: The environ key (so also ``request.META``) holding the script name the WSGI entry took out, as sent.
SET_ASIDE = "atelier.script_name"
#: Where Django reads the script name from (``django.core.handlers.wsgi.get_script_name``).
_KEYS = ("SCRIPT_URL", "REDIRECT_URL", "SCRIPT_NAME")


def _not_utf8(text: str) -> bool:
    try:
        text.encode("latin-1").decode("utf-8")
    except UnicodeError:  # an encode error too: text that was no server's bytes
        return True
    return False


def script_name_set_aside(application: Callable) -> Callable:
    """WSGI middleware: a script name that is not UTF-8 is taken out of the environ (the site answers as
    mounted at its root) and kept under :data:`SET_ASIDE`."""

    def entry(environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        bad = [key for key in _KEYS if environ.get(key) and _not_utf8(environ[key])]
        if bad:
            environ[SET_ASIDE] = environ[bad[0]]
            for key in bad:
                environ[key] = ""
        return application(environ, start_response)

    return entry


def script_name_refused(request: HttpRequest) -> bool:
    return SET_ASIDE in request.META
