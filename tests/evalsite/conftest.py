"""Fixtures of the site-wide tests."""

from __future__ import annotations

import io

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections


@pytest.fixture
def wsgi_request(db):
    """``wsgi_request(method, path, query=, body=, content_type=, **environ)``: (status, body) from the site's WSGI
    entry as gunicorn and runserver load it (``evalsite.wsgi.application``), on the test database. As the test
    client does, the connection stays open across the request (the test's transaction holds the data); the
    client puts ``close_old_connections`` back after each of its own requests, so it is taken off for each call."""
    from evalsite.wsgi import application

    def call(method: str, path: str, *, query: str = "", body: bytes = b"", content_type: str = "",
             **environ: str) -> tuple[int, bytes]:
        environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query, "CONTENT_TYPE": content_type,
                   "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http",
                   "SERVER_NAME": "testserver", "SERVER_PORT": "80", "HTTP_HOST": "testserver", **environ}
        answer = {}
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            chunks = application(environ, lambda status, headers: answer.update(status=int(status.split()[0])))
            return answer["status"], b"".join(chunks)
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)

    return call
