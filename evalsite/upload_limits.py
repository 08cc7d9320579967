"""The upload size limit of every request: ``ATELIER_MAX_UPLOAD_BYTES`` (20 MiB by default).

Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` and ``FILE_UPLOAD_MAX_MEMORY_SIZE`` do not cap a file upload:
the first counts only the non-file fields, the second only decides when a file spills to a temporary
file. So the limit is enforced twice, for every path (admin import pages, the API's import operations,
the construction pool upload, any form a later page adds):

* :class:`RefuseOversizedUploads` (middleware, before any other middleware reads the body) answers 413
  when the request's ``Content-Length`` is over the limit, without reading a byte of it (and 400 when the
  header is not a number of bytes);
* :class:`CappedUploadHandler` (first of ``FILE_UPLOAD_HANDLERS``) counts the bytes of the files as
  Django streams them and stops the upload at the limit, whatever the header said, with
  :class:`UploadTooLarge`: a ``SuspiciousOperation`` as Django's own ``RequestDataTooBig``, so wherever
  it is raised (a view, the CSRF check reading the form) Django hands it to the site's 400 handler,
  which answers 413 for it (``evalsite.error_pages.bad_request``); on /api/v1/ the API's exception
  handler answers it in the API's shape.

The 413 is in the site's error shape: ``{error, message, details}`` on /api/v1/, JSON on other API
paths, the HTML error page otherwise.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest, HttpResponse

from evalsite.error_pages import error_response

__all__ = ["CappedUploadHandler", "RefuseOversizedUploads", "UploadTooLarge", "upload_limit"]


def upload_limit() -> int:
    return int(settings.ATELIER_MAX_UPLOAD_BYTES)


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


class UploadTooLarge(SuspiciousOperation):
    """A request body over the upload limit. Carries ``status``/``code``/``message`` as the domain errors
    do, so the API's one exception handler answers it in the API's shape."""

    status = 413
    code = "upload_too_large"

    def __init__(self, size: int | None = None):
        limit = upload_limit()
        got = f"{size:,} bytes ({_mib(size)})" if size is not None else f"more than {limit:,} bytes"
        self.message = (f"The upload is {got}; the limit is {limit:,} bytes ({_mib(limit)}, "
                        "ATELIER_MAX_UPLOAD_BYTES). Split the file, or import it from the command line "
                        "(manage.py import_tasks, import_responses, import_renders, import_c2 read files from disk).")
        super().__init__(self.message)


def _bytes_given(given: str) -> int | None:
    """A ``Content-Length`` value as a number of bytes (0 when empty); None when it is not one: HTTP's
    ``1*DIGIT``, where Python's ``int`` also takes "-5", "1_000" or "１２"."""
    if given == "":
        return 0
    text = given.strip(" \t")
    return int(text) if text.isascii() and text.isdigit() else None


def _content_length_refused(request: HttpRequest) -> str | None:
    """The ``Content-Length`` value that is not a number of bytes, else None. Two places can hold one: the
    environ's ``CONTENT_LENGTH`` (what Django reads the body by), and ``request.headers``, which also names a
    header *sent* as ``Content_Length`` (``HTTP_CONTENT_LENGTH``: a WSGI server or client that keeps headers with
    an underscore) "Content-Length" — the one django-prometheus reads with ``int()``."""
    for given in (request.META.get("CONTENT_LENGTH", ""), request.headers.get("Content-Length") or ""):
        if _bytes_given(given) is None:
            return given
    return None


def _content_length(request: HttpRequest) -> int:
    """The body's length the ``Content-Length`` header gives (0 when empty or absent), once
    :func:`_content_length_refused` has let it through."""
    return _bytes_given(request.META.get("CONTENT_LENGTH", "")) or 0


class RefuseOversizedUploads:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refused = _content_length_refused(request)
        if refused is not None:
            # django-prometheus's middleware reads the header with int(): 'abc' was a 500 on every URL under
            # runserver, which passes the header on as it came (gunicorn refuses it itself).
            return error_response(request, 400, f"The Content-Length header {refused!r} is not a number of bytes.")
        size = _content_length(request)
        if size > upload_limit():
            return error_response(request, 413, UploadTooLarge(size).message)
        return self.get_response(request)


class CappedUploadHandler(FileUploadHandler):
    """Counts every file byte of one request as it streams in; past the limit the upload stops with
    :class:`UploadTooLarge` (nothing more is read or kept)."""

    def __init__(self, request=None):
        super().__init__(request)
        self.received = 0

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        if content_length > upload_limit():
            raise UploadTooLarge(content_length)
        return None  # let the other handlers parse

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > upload_limit():
            raise UploadTooLarge()
        return raw_data

    def file_complete(self, file_size: int):
        return None  # the next handler (memory or temporary file) builds the uploaded file
