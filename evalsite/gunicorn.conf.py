"""gunicorn configuration (`make serve`; in production `gunicorn -c evalsite/gunicorn.conf.py evalsite.wsgi`).

The Server banner: gunicorn has no setting to drop or change its ``Server`` response header. It
writes ``Server: <gunicorn.http.wsgi.SERVER>`` on every response, reading that module constant when
each response is built, so this file empties it: responses carry an empty ``Server`` header, with
no product name or version. (gunicorn 27; tests/evalsite/test_gunicorn.py checks it on a live
server.) The WSGI ``SERVER_SOFTWARE`` variable is internal and never sent.
"""

import os

import gunicorn.http.wsgi

gunicorn.http.wsgi.SERVER = ""

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "4"))
# X-Forwarded-* headers are trusted by Django only with ATELIER_BEHIND_PROXY (evalsite/settings.py);
# gunicorn's own forwarded-allow-ips default (127.0.0.1) is left as it is.
