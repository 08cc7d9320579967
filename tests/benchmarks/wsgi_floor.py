"""The HTTP server's own cost of a request, for ``bench_potato_side_by_side``: a WSGI application without
Django that reads the request body and answers ``{}``. Served by gunicorn with the same sync workers and
driven by the same clients (a new connection per request, the annotator's cookies and headers) as the
site, its worker CPU per request is what gunicorn, the sockets and the kernel cost a label before any
of Django runs (:mod:`tests.benchmarks.framework_floor` is the next layer: Django's own)."""

from __future__ import annotations

import threading
import time

__all__ = ["application", "closed_loop"]

_BODY = b"{}"


def application(environ, start_response):
    length = int(environ.get("CONTENT_LENGTH") or 0)
    if length:
        environ["wsgi.input"].read(length)
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(_BODY)))])
    return [_BODY]


def closed_loop(client_for, clients: int, seconds: float) -> tuple[int, float, int]:
    """``clients`` threads each POSTing a label-sized JSON body without think time for ``seconds``, each
    through its own ``client_for(k)`` (``bench_annotation_load.Client``); (requests, wall s, errors)."""
    done, errors, lock = [0], [0], threading.Lock()
    deadline = time.perf_counter() + seconds

    def loop(k: int) -> None:
        client, n, bad = client_for(k), 0, 0
        while time.perf_counter() < deadline:
            status, _, _ = client.request("POST", "/annotate/api/nothing", {"answer": {"choice": "A"}})
            n, bad = n + 1, bad + (status != 200)
        with lock:
            done[0] += n
            errors[0] += bad

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return done[0], time.perf_counter() - started, errors[0]
