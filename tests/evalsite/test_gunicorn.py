"""`make serve` runs gunicorn with evalsite/gunicorn.conf.py, which blanks gunicorn's Server banner."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Connection attempts while gunicorn starts (a readiness wait, not a timing assertion).
START_ATTEMPTS = 150


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_responses_carry_no_server_product_or_version():
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_ALLOW_ASYNC_UNSAFE"}}
    env.update(ATELIER_DEV="true", GUNICORN_BIND=f"127.0.0.1:{port}", GUNICORN_WORKERS="1")
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "evalsite/gunicorn.conf.py", "evalsite.wsgi"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        response = None
        for _ in range(START_ATTEMPTS):
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                connection.request("GET", "/healthz")
                response = connection.getresponse()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                time.sleep(0.1)
        assert response is not None, "gunicorn did not start"
        assert response.status == 200 and response.read() == b"ok"
        assert (response.getheader("Server") or "") == ""
        assert "gunicorn" not in str(response.headers).lower()
    finally:
        server.terminate()
        server.wait(timeout=30)
