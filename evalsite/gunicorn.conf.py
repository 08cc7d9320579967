"""gunicorn configuration (`make serve`; in production `gunicorn -c evalsite/gunicorn.conf.py evalsite.wsgi`).

The Server banner: gunicorn has no setting to drop or change its ``Server`` response header. It
writes ``Server: <gunicorn.http.wsgi.SERVER>`` on every response, reading that module constant when
each response is built, so this file empties it: responses carry an empty ``Server`` header, with
no product name or version. (gunicorn 27; tests/evalsite/test_gunicorn.py checks it on a live
server.) The WSGI ``SERVER_SOFTWARE`` variable is internal and never sent.
"""

import os

import gunicorn.http.wsgi
import gunicorn.util

gunicorn.http.wsgi.SERVER = ""


# A request line past limit_request_line never reaches the site: gunicorn answers it, with its bare page unless
# its error writer is the site's (evalsite/server_refusals.py: the site's 414 page). Django is set up by then (the
# worker loaded the application), so the site's module is imported on that first refusal, not here.
def _write_error(sock, status_int, reason, mesg, _gunicorns=gunicorn.util.write_error):
    from evalsite.server_refusals import write_error_with_site_pages

    write_error_with_site_pages(_gunicorns, gunicorn.util.write_nonblock)(sock, status_int, reason, mesg)


gunicorn.util.write_error = _write_error

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "4"))
# The longest request line gunicorn takes (its default is 4,094 bytes): an address up to the site's own limit
# (5,000 characters, evalsite/request_checks.py) reaches the site, and one over it gets the site's 414 page rather
# than gunicorn's bare 400 — up to this length; past it gunicorn refuses the line itself, with the site's 414 page
# (_write_error above).
limit_request_line = 8190
# X-Forwarded-* headers are trusted by Django only with ATELIER_BEHIND_PROXY (evalsite/settings.py);
# gunicorn's own forwarded-allow-ips default (127.0.0.1) is left as it is.
# A request's SCRIPT_NAME and PATH_INFO headers are not taken, from any peer (gunicorn takes them by default from
# forwarded-allow-ips, the proxy in front, which may pass a client's header on): a script name the path does not
# start with was gunicorn's own 500 page. The site is served at the root; SCRIPT_NAME in gunicorn's environment
# still mounts it elsewhere.
forwarder_headers = ""


# Prometheus multiprocess mode (evalsite/metrics.py): with PROMETHEUS_MULTIPROC_DIR set, every worker
# writes its counters there and /metrics sums them. The folder starts empty (counters of a previous
# server would be added in) and a dead worker's live gauges are dropped.
def on_starting(server):
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:
        import pathlib

        path = pathlib.Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):
            stale.unlink()


def child_exit(server, worker):
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
