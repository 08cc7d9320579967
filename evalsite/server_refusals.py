"""gunicorn's own refusals, answered with the site's page: a request line over gunicorn's limit
(``limit_request_line`` in evalsite/gunicorn.conf.py, at most 8,190 bytes) never reaches Django, and gunicorn
answered it with its bare "Request Line is too large" page. gunicorn has no setting for its error pages; its
workers write them with ``gunicorn.util.write_error``, which evalsite/gunicorn.conf.py replaces with
:func:`write_error`: a 414 gets the site's "Address too long" page (:func:`evalsite.error_pages.error_response`,
the page an address over the site's own limit gets), every other refusal gunicorn's own.
"""

from __future__ import annotations

from collections.abc import Callable
from socket import socket

from django.http import HttpRequest

from evalsite.error_pages import error_response
from evalsite.request_checks import ADDRESS_TOO_LONG

__all__ = ["address_too_long_http", "write_error_with_site_pages"]


def address_too_long_http() -> bytes:
    """The whole HTTP answer, status line to body, of the site's 414 page for a request it never saw: its
    address is unread, so the page is the one a visitor nobody knows gets (no account named, the start page)."""
    request = HttpRequest()
    request.method, request.path, request.path_info = "GET", "/", "/"
    request.META = {"SERVER_NAME": "localhost", "SERVER_PORT": "80"}
    response = error_response(request, 414, ADDRESS_TOO_LONG)
    head = ["HTTP/1.1 414 URI Too Long", "Connection: close", f"Content-Length: {len(response.content)}",
            *(f"{name}: {value}" for name, value in response.items() if name.lower() != "content-length")]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.content


def write_error_with_site_pages(gunicorns: Callable[[socket, int, str, str], None],
                                write: Callable[[socket, bytes], None]) -> Callable[[socket, int, str, str], None]:
    """``gunicorn.util.write_error`` answering a 414 with the site's page (``write``: gunicorn's
    ``util.write_nonblock``); gunicorn's own page if the site's cannot be made (Django not loaded, a template
    error), since a refusal must still be answered."""

    def write_error(sock: socket, status_int: int, reason: str, mesg: str) -> None:
        if status_int == 414:
            try:
                answer = address_too_long_http()
            except Exception:  # noqa: BLE001 - gunicorn's page below still answers
                answer = None
            if answer is not None:
                write(sock, answer)
                return
        gunicorns(sock, status_int, reason, mesg)

    return write_error
